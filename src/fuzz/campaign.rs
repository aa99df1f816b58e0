//! A fuzz campaign: seed collection, the JSON seeds made by `verify`, deterministic
//! mutants, running `shapemc` on them in parallel (own process group, killed after the
//! time limit plus a grace period) and the checks: no panic or crash, an exit code the
//! command may return, the deadline kept.

use super::mutate;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Options of a campaign (the flags of `shapemc-fuzz`).
#[derive(Clone, Debug)]
pub struct Config {
    /// The `shapemc` binary under test.
    pub shapemc: PathBuf,
    /// Folders whose `*.c` files (recursively) are the seeds; missing ones are skipped.
    pub seed_dirs: Vec<PathBuf>,
    /// Folder of the `*.scg` seeds for `scg check` mutants (skipped when missing).
    pub scg_dir: PathBuf,
    /// Seed of the mutants: mutant `i` depends only on this, `i` and the seed files.
    pub seed: u64,
    /// Number of mutants.
    pub mutants: usize,
    /// `verify --timeout`, and the reference of the deadline.
    pub timeout: Duration,
    /// A run may take `timeout + slack` (the deadline check).
    pub slack: Duration,
    /// A run is killed after `timeout + grace`.
    pub grace: Duration,
    /// Runs in parallel.
    pub jobs: usize,
    /// Where the failing mutants and `summary.txt` are written.
    pub out: PathBuf,
    /// How many counterexamples and how many certificates to make as JSON seeds (0: no
    /// `simulate --replay` and `check-certificate` mutants).
    pub json_seeds: usize,
    /// `verify --timeout` when making the JSON seeds.
    pub prep_timeout: Duration,
    /// Address-space limit of each run in MiB (`RLIMIT_AS`).
    pub memory_limit_mb: u64,
    /// Print progress lines to stderr.
    pub progress: bool,
}

impl Config {
    /// The defaults of `shapemc-fuzz` for the binary `shapemc`.
    pub fn new(shapemc: PathBuf) -> Config {
        Config {
            shapemc,
            seed_dirs: vec![
                PathBuf::from("benchmarks"),
                PathBuf::from("../shared/bench"),
            ],
            scg_dir: PathBuf::from("scg-library"),
            seed: 1,
            mutants: 200,
            timeout: Duration::from_secs(3),
            slack: Duration::from_secs(5),
            grace: Duration::from_secs(20),
            jobs: 2,
            out: PathBuf::from("results/fuzz"),
            json_seeds: 2,
            prep_timeout: Duration::from_secs(20),
            memory_limit_mb: 8192,
            progress: true,
        }
    }
}

/// The `shapemc` command a mutant is fed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// `verify FILE.c --timeout T` on a mutated C file.
    Verify,
    /// `simulate FILE.c --replay CEX.json`, the counterexample or the program mutated.
    Replay,
    /// `check-certificate FILE.c CERT.json`, the certificate or the program mutated.
    CheckCertificate,
    /// `scg check FILE.scg` on a mutated SCG library file.
    ScgCheck,
}

impl Kind {
    /// The command's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Verify => "verify",
            Kind::Replay => "simulate --replay",
            Kind::CheckCertificate => "check-certificate",
            Kind::ScgCheck => "scg check",
        }
    }

    /// The exit codes the command may return on any input: verify 0/10/20, replay 10
    /// (reaches the error) / 20 (does not), check-certificate 0 (VALID) / 1 (INVALID) /
    /// 20 (a limit),
    /// scg check 0; all of them 2 (usage or parse error), all but `scg check` 3
    /// (unsupported construct).
    pub fn allowed_exit_codes(self) -> &'static [i32] {
        match self {
            Kind::Verify => &[0, 10, 20, 2, 3],
            Kind::Replay => &[10, 20, 2, 3],
            Kind::CheckCertificate => &[0, 1, 2, 3, 20],
            Kind::ScgCheck => &[0, 2],
        }
    }
}

/// A C seed with a JSON input `verify` wrote for it (a counterexample or a certificate).
#[derive(Clone, Debug)]
pub struct JsonSeed {
    /// The C file.
    pub c_file: PathBuf,
    /// Its text.
    pub c_text: Vec<u8>,
    /// The counterexample or certificate.
    pub json: Vec<u8>,
}

/// Everything mutants are made from.
#[derive(Clone, Debug, Default)]
pub struct Seeds {
    /// C files (sorted) with their text.
    pub c: Vec<(PathBuf, Vec<u8>)>,
    /// SCG files (sorted) with their text.
    pub scg: Vec<(PathBuf, Vec<u8>)>,
    /// Counterexamples written by `verify --cex`.
    pub cex: Vec<JsonSeed>,
    /// Certificates written by `verify --certificate` (under `--malloc-never-fails`).
    pub certificates: Vec<JsonSeed>,
}

/// The files with extension `ext` under `dir`, recursively, sorted.
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn read_all(paths: Vec<PathBuf>) -> Vec<(PathBuf, Vec<u8>)> {
    paths
        .into_iter()
        .filter_map(|p| fs::read(&p).ok().map(|t| (p, t)))
        .collect()
}

/// One mutant: the files to write into an empty folder and the `shapemc` arguments
/// (file names relative to that folder).
#[derive(Clone, Debug)]
pub struct Mutant {
    /// Its number in the campaign.
    pub index: usize,
    /// The command.
    pub kind: Kind,
    /// File name → content.
    pub files: Vec<(String, Vec<u8>)>,
    /// Arguments of `shapemc`.
    pub args: Vec<String>,
    /// The seed and the mutations applied.
    pub what: String,
}

/// The generator of mutant `index`: a function of the campaign seed and the index only,
/// so that mutants do not depend on the order in which parallel jobs take them.
pub fn mutant_rng(seed: u64, index: usize) -> SmallRng {
    // splitmix64 of the pair
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(index as u64)
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    SmallRng::seed_from_u64(z ^ (z >> 31))
}

fn file_name(p: &Path, fallback: &str) -> String {
    p.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| fallback.to_string())
}

/// Makes mutant `index` of a campaign with seed `seed` (`None` when there are no C and
/// no SCG seeds). Mostly `verify` on a mutated C file (60 %), then replays and
/// certificate checks (15 % each, when JSON seeds exist; a quarter of them with the
/// program mutated instead of the JSON) and `scg check` (10 %).
pub fn make_mutant(seeds: &Seeds, seed: u64, index: usize, timeout: Duration) -> Option<Mutant> {
    let mut rng = mutant_rng(seed, index);
    let mut kinds: Vec<(Kind, u32)> = Vec::new();
    if !seeds.c.is_empty() {
        kinds.push((Kind::Verify, 60));
    }
    if !seeds.cex.is_empty() {
        kinds.push((Kind::Replay, 15));
    }
    if !seeds.certificates.is_empty() {
        kinds.push((Kind::CheckCertificate, 15));
    }
    if !seeds.scg.is_empty() {
        kinds.push((Kind::ScgCheck, 10));
    }
    let kind = kinds.choose_weighted(&mut rng, |(_, w)| *w).ok()?.0;
    let never_fails = rng.gen_bool(0.5);
    let mut args: Vec<String> = Vec::new();
    let mut files = Vec::new();
    let what = match kind {
        Kind::Verify => {
            let (path, text) = seeds.c.choose(&mut rng)?;
            let (m, desc) = mutate::mutate_text(&mut rng, text, &mutate::C);
            let name = file_name(path, "mutant.c");
            args.extend(["verify".into(), name.clone()]);
            args.extend(["--timeout".into(), format!("{}", timeout.as_secs_f64())]);
            if never_fails {
                args.push("--malloc-never-fails".into());
            }
            // now and then an option that takes another path through the analysis
            let extra: &[&[&str]] = &[
                &["--order", "dfs"],
                &["--scg", "maximal"],
                &["--domains", "pred"],
                &["--promote", "first"],
                &["--promote", "never"],
                &["--shape-joined"],
            ];
            if rng.gen_bool(0.2) {
                if let Some(e) = extra.choose(&mut rng) {
                    args.extend(e.iter().map(|s| s.to_string()));
                }
            }
            files.push((name, m));
            format!("{}: {desc}", path.display())
        }
        Kind::Replay | Kind::CheckCertificate => {
            let pool = if kind == Kind::Replay {
                &seeds.cex
            } else {
                &seeds.certificates
            };
            let s = pool.choose(&mut rng)?;
            let name = file_name(&s.c_file, "mutant.c");
            let (c, json, desc) = if rng.gen_bool(0.25) {
                let (m, d) = mutate::mutate_text(&mut rng, &s.c_text, &mutate::C);
                (m, s.json.clone(), format!("program: {d}"))
            } else {
                let (m, d) = mutate::mutate_json(&mut rng, &s.json);
                (s.c_text.clone(), m, d)
            };
            let json_name = if kind == Kind::Replay {
                "cex.json"
            } else {
                "certificate.json"
            };
            if kind == Kind::Replay {
                args.extend(["simulate".into(), name.clone(), "--replay".into()]);
                args.push(json_name.into());
            } else {
                args.extend(["check-certificate".into(), name.clone()]);
                args.push(json_name.into());
            }
            // the certificates were made under --malloc-never-fails: mostly keep it
            if (kind == Kind::CheckCertificate && rng.gen_bool(0.8))
                || (kind == Kind::Replay && never_fails)
            {
                args.push("--malloc-never-fails".into());
            }
            // the same deadline as verify's: the watchdog must keep it whatever the input
            args.extend(["--timeout".into(), format!("{}", timeout.as_secs_f64())]);
            files.push((name, c));
            files.push((json_name.to_string(), json));
            format!("{} of {}: {desc}", json_name, s.c_file.display())
        }
        Kind::ScgCheck => {
            let (path, text) = seeds.scg.choose(&mut rng)?;
            let (m, desc) = if rng.gen_bool(0.85) {
                mutate::mutate_text(&mut rng, text, &mutate::SCG)
            } else {
                mutate::mutate_bytes(&mut rng, text)
            };
            let name = file_name(path, "mutant.scg");
            args.extend(["scg".into(), "check".into(), name.clone()]);
            files.push((name, m));
            format!("{}: {desc}", path.display())
        }
    };
    Some(Mutant {
        index,
        kind,
        files,
        args,
        what,
    })
}

/// How one run of `shapemc` ended.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    /// Exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did (also after our kill).
    pub signal: Option<i32>,
    /// Killed by us after `timeout + grace`.
    pub killed: bool,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Its standard output.
    pub stdout: Vec<u8>,
    /// Its standard error.
    pub stderr: Vec<u8>,
    /// Why it could not be started, if it could not.
    pub spawn_error: Option<String>,
}

impl RunResult {
    /// A Rust panic (`panicked` on stderr or exit code 101) or death by a signal we did
    /// not send.
    pub fn crashed(&self) -> bool {
        self.exit_code == Some(101)
            || (self.signal.is_some() && !self.killed)
            || contains(&self.stderr, b"panicked")
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Runs `shapemc ARGS` in `dir` (stdin empty, stdout and stderr to files there) in its own
/// process group under an address-space limit; the group is killed after `limit`.
pub fn run_shapemc(
    exe: &Path,
    args: &[String],
    dir: &Path,
    limit: Duration,
    memory_limit_mb: u64,
) -> RunResult {
    let mut r = RunResult::default();
    let (out, err) = match (
        fs::File::create(dir.join(".stdout")),
        fs::File::create(dir.join(".stderr")),
    ) {
        (Ok(o), Ok(e)) => (o, e),
        _ => {
            r.spawn_error = Some(format!("cannot create output files in {}", dir.display()));
            return r;
        }
    };
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    crate::bench::exec::limit_address_space(&mut cmd, memory_limit_mb);
    let start = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            r.spawn_error = Some(format!("cannot start {}: {e}", exe.display()));
            return r;
        }
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() >= limit => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break None,
        }
    };
    let status = match status {
        Some(s) => s,
        None => {
            r.killed = true;
            if let Ok(pid) = i32::try_from(child.id()) {
                // SAFETY: plain syscall; the child leads its own process group.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
            let _ = child.kill();
            match child.wait() {
                Ok(s) => s,
                Err(e) => {
                    r.spawn_error = Some(format!("wait failed: {e}"));
                    return r;
                }
            }
        }
    };
    r.seconds = start.elapsed().as_secs_f64();
    r.exit_code = status.code();
    r.signal = status.signal();
    r.stdout = fs::read(dir.join(".stdout")).unwrap_or_default();
    r.stderr = fs::read(dir.join(".stderr")).unwrap_or_default();
    let _ = fs::remove_file(dir.join(".stdout"));
    let _ = fs::remove_file(dir.join(".stderr"));
    r
}

/// A failed check.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// A panic, an abort or another signal (the text says which).
    Panic(String),
    /// An exit code outside [`Kind::allowed_exit_codes`].
    BadExitCode(i32),
    /// Ran longer than `timeout + slack` (seconds over `timeout`).
    OverDeadline(f64),
    /// Could not be run at all.
    NotRun(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Panic(s) => write!(f, "panic: {s}"),
            Failure::BadExitCode(c) => write!(f, "bad exit code {c}"),
            Failure::OverDeadline(s) => write!(f, "over deadline: {s:.1} s over the timeout"),
            Failure::NotRun(s) => write!(f, "not run: {s}"),
        }
    }
}

/// The checks of one run of a mutant of `kind`.
pub fn check(kind: Kind, r: &RunResult, timeout: Duration, slack: Duration) -> Vec<Failure> {
    let mut out = Vec::new();
    if let Some(e) = &r.spawn_error {
        out.push(Failure::NotRun(e.clone()));
        return out;
    }
    if r.crashed() {
        let line = String::from_utf8_lossy(&r.stderr)
            .lines()
            .find(|l| l.contains("panicked") || l.contains("memory allocation"))
            .map(str::to_string);
        let why = match (line, r.signal, r.exit_code) {
            (Some(l), _, _) => l,
            (None, Some(s), _) => format!("killed by signal {s}"),
            (None, None, c) => format!("exit code {}", c.unwrap_or(-1)),
        };
        out.push(Failure::Panic(why));
    } else if let Some(c) = r.exit_code {
        if !kind.allowed_exit_codes().contains(&c) {
            out.push(Failure::BadExitCode(c));
        }
    }
    let over = r.seconds - timeout.as_secs_f64();
    if r.killed || over > slack.as_secs_f64() {
        out.push(Failure::OverDeadline(over));
    }
    out
}

/// The outcome of a campaign.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Mutants run.
    pub mutants: usize,
    /// Mutants that panicked or crashed.
    pub panics: usize,
    /// Mutants with an exit code the command may not return.
    pub bad_exit_codes: usize,
    /// Mutants over the deadline (or killed).
    pub over_deadline: usize,
    /// Of those, the ones killed after `timeout + grace` (a hang, e.g. Z3's).
    pub killed: usize,
    /// Mutants that could not be run.
    pub not_run: usize,
    /// The largest `seconds - timeout` (at least 0).
    pub max_overrun: f64,
    /// Per command: exit code (or `signal N`/`killed`) → count.
    pub exit_codes: BTreeMap<Kind, BTreeMap<String, usize>>,
    /// Failing mutants: index, what, failures.
    pub failures: Vec<(usize, String, Vec<Failure>)>,
    /// Notes on the seeds (skipped folders, the JSON seeds made).
    pub notes: Vec<String>,
    /// One line per mutant: index, command, exit code, seconds, what (for `runs.tsv`).
    pub runs: Vec<(usize, String)>,
}

impl Summary {
    /// No check failed.
    pub fn ok(&self) -> bool {
        self.panics == 0 && self.bad_exit_codes == 0 && self.over_deadline == 0 && self.not_run == 0
    }

    /// `fuzz: N mutants, P panics, B bad exit codes, D over deadline (max overrun X s)`
    /// (`, K killed` in the parentheses when runs were killed).
    pub fn line(&self) -> String {
        let killed = if self.killed > 0 {
            format!(", {} killed", self.killed)
        } else {
            String::new()
        };
        let mut s = format!(
            "fuzz: {} mutants, {} panics, {} bad exit codes, {} over deadline (max overrun {:.1} s{killed})",
            self.mutants, self.panics, self.bad_exit_codes, self.over_deadline, self.max_overrun
        );
        if self.not_run > 0 {
            let _ = write!(s, ", {} not run", self.not_run);
        }
        s
    }

    /// The exit codes seen, one line per command.
    pub fn exit_code_lines(&self) -> Vec<String> {
        self.exit_codes
            .iter()
            .map(|(k, m)| {
                let parts: Vec<String> = m.iter().map(|(c, n)| format!("{c}: {n}")).collect();
                format!("  {}: {}", k.name(), parts.join(", "))
            })
            .collect()
    }

    fn add(&mut self, m: &Mutant, r: &RunResult, failures: Vec<Failure>, timeout: Duration) {
        self.mutants += 1;
        self.max_overrun = self.max_overrun.max(r.seconds - timeout.as_secs_f64());
        let code = match (r.exit_code, r.signal) {
            _ if r.killed => "killed".to_string(),
            (Some(c), _) => c.to_string(),
            (None, Some(s)) => format!("signal {s}"),
            (None, None) => "not run".to_string(),
        };
        self.runs.push((
            m.index,
            format!(
                "{}\t{}\t{code}\t{:.2}\t{}",
                m.index,
                m.kind.name(),
                r.seconds,
                m.what.replace(['\t', '\n'], " ")
            ),
        ));
        *self
            .exit_codes
            .entry(m.kind)
            .or_default()
            .entry(code)
            .or_default() += 1;
        for f in &failures {
            match f {
                Failure::Panic(_) => self.panics += 1,
                Failure::BadExitCode(_) => self.bad_exit_codes += 1,
                Failure::OverDeadline(_) => {
                    self.over_deadline += 1;
                    self.killed += usize::from(r.killed);
                }
                Failure::NotRun(_) => self.not_run += 1,
            }
        }
        if !failures.is_empty() {
            self.failures.push((m.index, m.what.clone(), failures));
        }
    }
}

/// What one `verify` run made: a counterexample, a certificate.
type Made = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Collects the seeds: C files under `cfg.seed_dirs`, SCG files in `cfg.scg_dir`, and up
/// to `cfg.json_seeds` counterexamples and certificates, made by `verify` (under
/// `--malloc-never-fails`, `cfg.prep_timeout`) on the C seeds from the smallest up,
/// `cfg.jobs` at a time, until both are found. Notes say what was skipped or made.
pub fn collect_seeds(cfg: &Config, work: &Path) -> (Seeds, Vec<String>) {
    let mut notes = Vec::new();
    let mut seeds = Seeds::default();
    for d in &cfg.seed_dirs {
        if !d.is_dir() {
            notes.push(format!("skipping {} (missing)", d.display()));
            continue;
        }
        let files = files_with_ext(d, "c");
        notes.push(format!("{} C seeds in {}", files.len(), d.display()));
        seeds.c.extend(read_all(files));
    }
    if cfg.scg_dir.is_dir() {
        seeds.scg = read_all(files_with_ext(&cfg.scg_dir, "scg"));
    } else {
        notes.push(format!("skipping {} (missing)", cfg.scg_dir.display()));
    }
    if cfg.json_seeds == 0 || seeds.c.is_empty() {
        return (seeds, notes);
    }
    let start = Instant::now();
    let mut order: Vec<&(PathBuf, Vec<u8>)> = seeds.c.iter().collect();
    order.sort_by_key(|(p, t)| (t.len(), p.clone()));
    let mut cex = Vec::new();
    let mut certs = Vec::new();
    let limit = cfg.prep_timeout + cfg.grace;
    for (b, batch) in order.chunks(cfg.jobs.max(1)).enumerate() {
        if cex.len() >= cfg.json_seeds && certs.len() >= cfg.json_seeds {
            break;
        }
        let results: Vec<Option<Made>> = std::thread::scope(|s| {
            let handles: Vec<_> = batch
                .iter()
                .enumerate()
                .map(|(i, (path, text))| {
                    let dir = work.join(format!("prep-{b}-{i}"));
                    s.spawn(move || {
                        fs::create_dir_all(&dir).ok()?;
                        let name = file_name(path, "seed.c");
                        fs::write(dir.join(&name), text).ok()?;
                        let args: Vec<String> = [
                            "verify",
                            &name,
                            "--timeout",
                            &cfg.prep_timeout.as_secs_f64().to_string(),
                            "--malloc-never-fails",
                            "--cex",
                            "cex.json",
                            "--certificate",
                            "certificate.json",
                        ]
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                        let r = run_shapemc(&cfg.shapemc, &args, &dir, limit, cfg.memory_limit_mb);
                        let got = match r.exit_code {
                            Some(0) => (None, fs::read(dir.join("certificate.json")).ok()),
                            Some(10) => (fs::read(dir.join("cex.json")).ok(), None),
                            _ => (None, None),
                        };
                        let _ = fs::remove_dir_all(&dir);
                        Some(got)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().ok().flatten())
                .collect()
        });
        for ((path, text), got) in batch.iter().zip(results) {
            let Some((x, c)) = got else { continue };
            let mk = |json| JsonSeed {
                c_file: path.clone(),
                c_text: text.clone(),
                json,
            };
            if let Some(x) = x.filter(|_| cex.len() < cfg.json_seeds) {
                cex.push(mk(x));
            }
            if let Some(c) = c.filter(|_| certs.len() < cfg.json_seeds) {
                certs.push(mk(c));
            }
        }
    }
    let names = |v: &[JsonSeed]| -> String {
        v.iter()
            .map(|s| file_name(&s.c_file, "?"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    notes.push(format!(
        "JSON seeds in {:.1} s: {} counterexample(s) ({}), {} certificate(s) ({})",
        start.elapsed().as_secs_f64(),
        cex.len(),
        names(&cex),
        certs.len(),
        names(&certs)
    ));
    seeds.cex = cex;
    seeds.certificates = certs;
    (seeds, notes)
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Writes a failing mutant to `out/mutant-INDEX/`: its files, `command.sh` (run it in
/// that folder), `stdout.txt`, `stderr.txt` and `result.txt`.
fn save_failure(
    cfg: &Config,
    m: &Mutant,
    r: &RunResult,
    failures: &[Failure],
) -> std::io::Result<()> {
    let dir = cfg.out.join(format!("mutant-{:05}", m.index));
    fs::create_dir_all(&dir)?;
    for (name, content) in &m.files {
        fs::write(dir.join(name), content)?;
    }
    let args: Vec<String> = m.args.iter().map(|a| shell_quote(a)).collect();
    fs::write(
        dir.join("command.sh"),
        format!(
            "#!/bin/sh\n# run in this folder\ncd \"$(dirname \"$0\")\" && exec \"${{SHAPEMC:-shapemc}}\" {}\n",
            args.join(" ")
        ),
    )?;
    fs::write(dir.join("stdout.txt"), &r.stdout)?;
    fs::write(dir.join("stderr.txt"), &r.stderr)?;
    let mut res = String::new();
    let _ = writeln!(res, "mutant {} (seed {}): {}", m.index, cfg.seed, m.what);
    let _ = writeln!(res, "command: shapemc {}", args.join(" "));
    let _ = writeln!(
        res,
        "exit code: {:?}, signal: {:?}, killed: {}, {:.2} s",
        r.exit_code, r.signal, r.killed, r.seconds
    );
    for f in failures {
        let _ = writeln!(res, "{f}");
    }
    fs::write(dir.join("result.txt"), res)
}

/// Clears what an earlier campaign wrote into `out` (`mutant-*` folders, `summary.txt`,
/// `runs.tsv`).
fn clear_out(out: &Path) -> std::io::Result<()> {
    fs::create_dir_all(out)?;
    for e in fs::read_dir(out)?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("mutant-") && e.path().is_dir() {
            fs::remove_dir_all(e.path())?;
        } else if name == "summary.txt" || name == "runs.tsv" {
            fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

/// Runs a campaign: seeds, `cfg.mutants` mutants on `cfg.jobs` threads, checks; writes the
/// failing mutants, `summary.txt` and `runs.tsv` (one line per mutant) to `cfg.out`. Errors only when nothing can be run
/// (no seeds, no binary, no output folder).
pub fn run_campaign(cfg: &Config) -> Result<Summary, String> {
    if !cfg.shapemc.is_file() {
        return Err(format!(
            "{} not found (build it with `cargo build --release`)",
            cfg.shapemc.display()
        ));
    }
    // the runs start in their own folders: a relative path would name nothing there
    let cfg = &Config {
        shapemc: fs::canonicalize(&cfg.shapemc)
            .map_err(|e| format!("{}: {e}", cfg.shapemc.display()))?,
        ..cfg.clone()
    };
    clear_out(&cfg.out).map_err(|e| format!("cannot prepare {}: {e}", cfg.out.display()))?;
    let work = std::env::temp_dir().join(format!("shapemc-fuzz-{}", std::process::id()));
    fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let (seeds, notes) = collect_seeds(cfg, &work);
    if cfg.progress {
        for n in &notes {
            eprintln!("fuzz: {n}");
        }
    }
    if seeds.c.is_empty() && seeds.scg.is_empty() {
        return Err(format!(
            "no seed files (*.c under {}; *.scg in {})",
            cfg.seed_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            cfg.scg_dir.display()
        ));
    }
    let summary = Mutex::new(Summary {
        notes,
        ..Summary::default()
    });
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let start = Instant::now();
    let step = (cfg.mutants / 10).max(1);
    std::thread::scope(|s| {
        for _ in 0..cfg.jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= cfg.mutants {
                    break;
                }
                let Some(m) = make_mutant(&seeds, cfg.seed, i, cfg.timeout) else {
                    break;
                };
                let dir = work.join(format!("m{i}"));
                let r = match fs::create_dir_all(&dir).and_then(|_| {
                    m.files
                        .iter()
                        .try_for_each(|(n, c)| fs::write(dir.join(n), c))
                }) {
                    Ok(()) => run_shapemc(
                        &cfg.shapemc,
                        &m.args,
                        &dir,
                        cfg.timeout + cfg.grace,
                        cfg.memory_limit_mb,
                    ),
                    Err(e) => RunResult {
                        spawn_error: Some(format!("cannot write the mutant: {e}")),
                        ..RunResult::default()
                    },
                };
                let _ = fs::remove_dir_all(&dir);
                let failures = check(m.kind, &r, cfg.timeout, cfg.slack);
                if !failures.is_empty() {
                    if let Err(e) = save_failure(cfg, &m, &r, &failures) {
                        eprintln!("fuzz: cannot save mutant {i}: {e}");
                    }
                    if cfg.progress {
                        let fs: Vec<String> = failures.iter().map(|f| f.to_string()).collect();
                        eprintln!(
                            "fuzz: mutant {i} ({}): {}: {}",
                            m.kind.name(),
                            fs.join("; "),
                            m.what
                        );
                    }
                }
                let mut sum = summary.lock().unwrap_or_else(|e| e.into_inner());
                sum.add(&m, &r, failures, cfg.timeout);
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if cfg.progress && (n.is_multiple_of(step) || n == cfg.mutants) {
                    eprintln!(
                        "fuzz: {n}/{} mutants, {} failing, {:.0} s",
                        cfg.mutants,
                        sum.failures.len(),
                        start.elapsed().as_secs_f64()
                    );
                }
            });
        }
    });
    let _ = fs::remove_dir_all(&work);
    let mut summary = summary.into_inner().unwrap_or_else(|e| e.into_inner());
    summary.max_overrun = summary.max_overrun.max(0.0);
    summary.failures.sort_by_key(|f| f.0);
    let mut text = String::new();
    let _ = writeln!(text, "{}", summary.line());
    let _ = writeln!(
        text,
        "seed {}, timeout {} s, shapemc {}",
        cfg.seed,
        cfg.timeout.as_secs_f64(),
        cfg.shapemc.display()
    );
    for n in &summary.notes {
        let _ = writeln!(text, "{n}");
    }
    let _ = writeln!(text, "exit codes:");
    for l in summary.exit_code_lines() {
        let _ = writeln!(text, "{l}");
    }
    for (i, what, fs) in &summary.failures {
        let fs: Vec<String> = fs.iter().map(|f| f.to_string()).collect();
        let _ = writeln!(text, "mutant-{i:05}: {}: {what}", fs.join("; "));
    }
    let write = |name: &str, text: String| {
        let p = cfg.out.join(name);
        fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
    };
    write("summary.txt", text)?;
    summary.runs.sort_by_key(|r| r.0);
    let mut tsv = String::from("mutant\tcommand\texit\tseconds\twhat\n");
    for (_, l) in &summary.runs {
        let _ = writeln!(tsv, "{l}");
    }
    write("runs.tsv", tsv)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeds() -> Seeds {
        Seeds {
            c: vec![(
                PathBuf::from("a/x.c"),
                b"int main(void) {\n  int x = 0;\n  return x;\n}\n".to_vec(),
            )],
            scg: vec![(
                PathBuf::from("s.scg"),
                b"structure s {\n roles next;\n}\n".to_vec(),
            )],
            cex: vec![JsonSeed {
                c_file: PathBuf::from("a/x.c"),
                c_text: b"int main(void) { return 0; }\n".to_vec(),
                json: br#"{"path":[{"Edge":0}],"inputs":{"nondet":[1]}}"#.to_vec(),
            }],
            certificates: Vec::new(),
        }
    }

    #[test]
    fn mutants_depend_only_on_seed_and_index() {
        let s = seeds();
        let t = Duration::from_secs(3);
        for i in 0..40 {
            let a = make_mutant(&s, 1, i, t).unwrap();
            let b = make_mutant(&s, 1, i, t).unwrap();
            assert_eq!((a.kind, &a.files, &a.args), (b.kind, &b.files, &b.args));
            assert_ne!(a.kind, Kind::CheckCertificate, "no certificate seeds");
        }
        let differ = (0..40)
            .filter(|&i| {
                make_mutant(&s, 1, i, t).unwrap().files != make_mutant(&s, 2, i, t).unwrap().files
            })
            .count();
        assert!(differ > 30, "{differ}");
    }

    #[test]
    fn arguments_name_the_written_files() {
        let s = seeds();
        for i in 0..40 {
            let m = make_mutant(&s, 7, i, Duration::from_secs(3)).unwrap();
            let names: Vec<&str> = m.files.iter().map(|(n, _)| n.as_str()).collect();
            match m.kind {
                Kind::Verify => {
                    assert_eq!(&m.args[..4], ["verify", "x.c", "--timeout", "3"]);
                    assert_eq!(names, ["x.c"]);
                }
                Kind::Replay => {
                    assert_eq!(&m.args[..4], ["simulate", "x.c", "--replay", "cex.json"]);
                    assert_eq!(names, ["x.c", "cex.json"]);
                }
                Kind::ScgCheck => assert_eq!(m.args, ["scg", "check", "s.scg"]),
                Kind::CheckCertificate => unreachable!(),
            }
        }
    }

    #[test]
    fn checks_tell_panics_bad_codes_and_overruns_apart() {
        let t = Duration::from_secs(3);
        let slack = Duration::from_secs(5);
        let ok = RunResult {
            exit_code: Some(20),
            seconds: 3.4,
            ..Default::default()
        };
        assert!(check(Kind::Verify, &ok, t, slack).is_empty());
        let bad = RunResult {
            exit_code: Some(1),
            ..ok.clone()
        };
        assert_eq!(
            check(Kind::Verify, &bad, t, slack),
            [Failure::BadExitCode(1)]
        );
        assert!(check(Kind::CheckCertificate, &bad, t, slack).is_empty());
        let panic = RunResult {
            exit_code: Some(101),
            stderr: b"thread 'main' panicked at src/x.rs:1:1:\nboom\n".to_vec(),
            ..ok.clone()
        };
        assert!(
            matches!(&check(Kind::Verify, &panic, t, slack)[..], [Failure::Panic(l)] if l.contains("src/x.rs"))
        );
        let abort = RunResult {
            exit_code: None,
            signal: Some(6),
            ..ok.clone()
        };
        assert_eq!(
            check(Kind::Replay, &abort, t, slack),
            [Failure::Panic("killed by signal 6".into())]
        );
        let slow = RunResult {
            seconds: 8.5,
            ..ok.clone()
        };
        assert!(
            matches!(&check(Kind::Verify, &slow, t, slack)[..], [Failure::OverDeadline(s)] if (*s - 5.5).abs() < 1e-9)
        );
        let killed = RunResult {
            exit_code: None,
            signal: Some(9),
            killed: true,
            seconds: 23.0,
            ..ok
        };
        assert!(matches!(
            &check(Kind::Verify, &killed, t, slack)[..],
            [Failure::OverDeadline(_)]
        ));
    }

    #[test]
    fn a_run_is_killed_after_its_limit_and_its_output_kept() {
        let dir = tempfile::tempdir().unwrap();
        let sh = Path::new("/bin/sh");
        let args = |s: &str| vec!["-c".to_string(), s.to_string()];
        let r = run_shapemc(
            sh,
            &args("echo out; echo err >&2; exit 3"),
            dir.path(),
            Duration::from_secs(10),
            1024,
        );
        assert_eq!((r.exit_code, r.killed), (Some(3), false));
        assert_eq!(
            (&r.stdout[..], &r.stderr[..]),
            (&b"out\n"[..], &b"err\n"[..])
        );
        let r = run_shapemc(
            sh,
            &args("sleep 30"),
            dir.path(),
            Duration::from_millis(200),
            1024,
        );
        assert!(r.killed && r.seconds < 10.0, "{r:?}");
        assert!(!r.crashed());
        let r = run_shapemc(
            sh,
            &args("kill -SEGV $$"),
            dir.path(),
            Duration::from_secs(10),
            1024,
        );
        assert_eq!(r.signal, Some(11));
        assert!(r.crashed());
    }

    #[test]
    fn a_relative_binary_path_works_in_the_runs_folders() {
        // regression: `--shapemc target/debug/shapemc` was looked up in each run's folder
        let dir = tempfile::tempdir().unwrap();
        let seeds = dir.path().join("seeds");
        fs::create_dir_all(&seeds).unwrap();
        fs::write(seeds.join("a.c"), "int main(void) { return 0; }\n").unwrap();
        let here = std::env::current_dir().unwrap();
        let rel: PathBuf = std::iter::repeat_n("..", here.components().count())
            .collect::<PathBuf>()
            .join("bin/true");
        assert!(rel.is_relative() && rel.is_file(), "{}", rel.display());
        let mut cfg = Config::new(rel);
        cfg.seed_dirs = vec![seeds];
        cfg.scg_dir = dir.path().join("none");
        cfg.mutants = 3;
        cfg.json_seeds = 0;
        cfg.out = dir.path().join("out");
        cfg.progress = false;
        let s = run_campaign(&cfg).unwrap();
        // `true` exits 0, which verify may return
        assert_eq!((s.mutants, s.not_run, s.bad_exit_codes), (3, 0, 0), "{s:?}");
        assert!(s.ok());
    }

    #[test]
    fn seed_files_are_found_recursively_and_sorted() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("b/c")).unwrap();
        for f in ["z.c", "b/a.c", "b/c/m.c", "b/x.h"] {
            fs::write(dir.path().join(f), "").unwrap();
        }
        let got: Vec<String> = files_with_ext(dir.path(), "c")
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(got, ["b/a.c", "b/c/m.c", "z.c"]);
    }
}
