//! Running `shapemc verify` on one task as a child process, with a wall-clock time limit
//! (the child's process group is killed when it is exceeded) and an address-space limit
//! (`RLIMIT_AS`, set in the child before `exec`).

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::diag::exit;

/// Limits and options for one `verify` run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The `shapemc` binary to run (normally `std::env::current_exe()`).
    pub exe: PathBuf,
    /// Wall-clock limit; the child is killed when it is exceeded.
    pub timeout: Duration,
    /// Address-space limit of the child in MiB (also passed as `--memory-limit`).
    pub memory_limit_mb: u64,
    /// Extra arguments for `verify` (e.g. `--scg maximal`).
    pub extra_args: Vec<String>,
}

/// What the child answered, from its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Exit 0: SAFE, verdict `true`.
    True,
    /// Exit 10: UNSAFE, verdict `false`.
    False,
    /// Exit 20, or 3 (unsupported construct).
    Unknown,
    /// Killed after the time limit (counted as unknown).
    Timeout,
    /// Died of an allocation failure under the memory limit (counted as unknown).
    MemOut,
    /// Exit 2, any other exit code, a signal, or failure to start.
    Error,
}

impl Answer {
    /// The `got` column: `true`, `false`, `unknown`, `timeout`, `memout` or `error`.
    pub fn label(self) -> &'static str {
        match self {
            Answer::True => "true",
            Answer::False => "false",
            Answer::Unknown => "unknown",
            Answer::Timeout => "timeout",
            Answer::MemOut => "memout",
            Answer::Error => "error",
        }
    }
}

/// The outcome of one `verify` run.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The answer.
    pub answer: Answer,
    /// Exit code, if the child exited normally.
    pub exit_code: Option<i32>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// `refinements_td` from `--stats-json`, if written.
    pub refinements_td: Option<u64>,
    /// `refinements_scg` from `--stats-json`, if written.
    pub refinements_scg: Option<u64>,
    /// `final_scg` from `--stats-json` (struct type → final SCG), empty if not written.
    pub final_scg: BTreeMap<String, String>,
    /// A one-line explanation (`unsupported`, the child's first output line, ...).
    pub reason: String,
}

/// Maps a `verify` exit code to an answer and a default reason.
pub fn classify_exit(code: i32) -> (Answer, &'static str) {
    match code {
        exit::SAFE => (Answer::True, ""),
        exit::UNSAFE => (Answer::False, ""),
        exit::UNKNOWN => (Answer::Unknown, ""),
        exit::UNSUPPORTED => (Answer::Unknown, "unsupported"),
        exit::USAGE_OR_PARSE => (Answer::Error, "usage or parse error"),
        _ => (Answer::Error, "unexpected exit code"),
    }
}

static RUN_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Runs `exe verify FILE --timeout T --memory-limit M --stats-json S [extra]` and waits at
/// most `timeout` (+ a short grace) for it. Never panics; failures become [`Answer::Error`].
pub fn run_verify(cfg: &RunConfig, input: &Path) -> Outcome {
    let n = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
    let work = std::env::temp_dir().join(format!("shapemc-bench-{}-{n}", std::process::id()));
    let outcome = run_in(cfg, input, &work);
    let _ = fs::remove_dir_all(&work);
    outcome
}

fn error(seconds: f64, reason: String) -> Outcome {
    Outcome {
        answer: Answer::Error,
        exit_code: None,
        seconds,
        refinements_td: None,
        refinements_scg: None,
        final_scg: BTreeMap::new(),
        reason,
    }
}

fn run_in(cfg: &RunConfig, input: &Path, work: &Path) -> Outcome {
    if let Err(e) = fs::create_dir_all(work) {
        return error(0.0, format!("cannot create {}: {e}", work.display()));
    }
    let stats = work.join("stats.json");
    let (out, err) = match (
        fs::File::create(work.join("stdout")),
        fs::File::create(work.join("stderr")),
    ) {
        (Ok(o), Ok(e)) => (o, e),
        _ => return error(0.0, "cannot create output files".to_string()),
    };
    let mut cmd = Command::new(&cfg.exe);
    cmd.arg("verify")
        .arg(input)
        .arg("--timeout")
        .arg(cfg.timeout.as_secs_f64().to_string())
        .arg("--memory-limit")
        .arg(cfg.memory_limit_mb.to_string())
        .arg("--stats-json")
        .arg(&stats)
        .args(&cfg.extra_args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    limit_address_space(&mut cmd, cfg.memory_limit_mb);
    let start = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return error(0.0, format!("cannot start {}: {e}", cfg.exe.display())),
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= cfg.timeout => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                kill_group(&mut child);
                return error(start.elapsed().as_secs_f64(), format!("wait failed: {e}"));
            }
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let VerifyStats {
        refinements_td,
        refinements_scg,
        final_scg,
    } = read_stats(&stats);
    let first_line = |name: &str| {
        fs::read_to_string(work.join(name))
            .ok()
            .and_then(|s| s.lines().find(|l| !l.trim().is_empty()).map(str::to_string))
            .unwrap_or_default()
    };
    let Some(status) = status else {
        kill_group(&mut child);
        return Outcome {
            answer: Answer::Timeout,
            exit_code: None,
            seconds,
            refinements_td,
            refinements_scg,
            final_scg,
            reason: format!("killed after {:.1} s", cfg.timeout.as_secs_f64()),
        };
    };
    let (answer, exit_code, reason) = match status.code() {
        Some(code) => {
            let (answer, why) = classify_exit(code);
            let detail = match answer {
                Answer::Error => first_line("stderr"),
                _ => first_line("stdout"),
            };
            let reason = match (why.is_empty(), detail.is_empty()) {
                (true, _) => detail,
                (false, true) => why.to_string(),
                (false, false) => format!("{why}: {detail}"),
            };
            let reason = if answer == Answer::Error && code != exit::USAGE_OR_PARSE {
                format!("exit code {code}: {reason}")
            } else {
                reason
            };
            (answer, Some(code), reason)
        }
        None => {
            use std::os::unix::process::ExitStatusExt;
            let sig = status.signal().unwrap_or(0);
            (Answer::Error, None, format!("killed by signal {sig}"))
        }
    };
    // Rust aborts with "memory allocation of N bytes failed" when RLIMIT_AS is hit.
    let out_of_memory = answer == Answer::Error
        && fs::read_to_string(work.join("stderr"))
            .is_ok_and(|e| e.contains("memory allocation of") && e.contains("failed"));
    let (answer, reason) = if out_of_memory {
        (
            Answer::MemOut,
            format!("out of memory ({} MiB)", cfg.memory_limit_mb),
        )
    } else {
        (answer, reason)
    };
    Outcome {
        answer,
        exit_code,
        seconds,
        refinements_td,
        refinements_scg,
        final_scg,
        reason: one_line(&reason),
    }
}

fn one_line(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() > 200 {
        format!("{}...", s.chars().take(200).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Makes the child of `cmd` start with an address-space limit of `mb` MiB
/// (`RLIMIT_AS`), so that a run out of memory fails instead of taking the machine.
pub fn limit_address_space(cmd: &mut std::process::Command, mb: u64) {
    use std::os::unix::process::CommandExt;
    let limit_bytes = mb.saturating_mul(1024 * 1024) as libc::rlim_t;
    // SAFETY: the closure runs in the forked child before exec and only calls
    // setrlimit, which is async-signal-safe; it touches no locks or allocations.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit_bytes,
                rlim_max: limit_bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn kill_group(child: &mut std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: plain syscall; the child leads its own process group (process_group(0)).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// What the scoreboard keeps of a `--stats-json` file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VerifyStats {
    /// `refinements_td`
    pub refinements_td: Option<u64>,
    /// `refinements_scg`
    pub refinements_scg: Option<u64>,
    /// `final_scg`: struct type → final SCG (`explicit` when it stayed explicit)
    pub final_scg: BTreeMap<String, String>,
}

/// Reads [`VerifyStats`] from a stats file (a JSON object); an absent file, bad JSON or
/// absent fields give `None` / an empty map.
pub fn read_stats(path: &Path) -> VerifyStats {
    let Ok(text) = fs::read_to_string(path) else {
        return VerifyStats::default();
    };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(&text)
    else {
        return VerifyStats::default();
    };
    let get = |k: &str| map.get(k).and_then(serde_json::Value::as_u64);
    let final_scg = map
        .get("final_scg")
        .and_then(serde_json::Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(t, v)| v.as_str().map(|v| (t.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default();
    VerifyStats {
        refinements_td: get("refinements_td"),
        refinements_scg: get("refinements_scg"),
        final_scg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_map_to_answers() {
        assert_eq!(classify_exit(0).0, Answer::True);
        assert_eq!(classify_exit(10).0, Answer::False);
        assert_eq!(classify_exit(20).0, Answer::Unknown);
        assert_eq!(classify_exit(3), (Answer::Unknown, "unsupported"));
        assert_eq!(classify_exit(2).0, Answer::Error);
        assert_eq!(classify_exit(101).0, Answer::Error);
    }

    #[test]
    fn stats_are_optional() {
        let dir = std::env::temp_dir().join(format!("shapemc-stats-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let f = dir.join("s.json");
        let none = VerifyStats::default();
        assert_eq!(read_stats(&f), none);
        fs::write(&f, "{}").unwrap();
        assert_eq!(read_stats(&f), none);
        fs::write(
            &f,
            r#"{"refinements_td": 3, "refinements_scg": 1, "x": "y", "final_scg": {"struct node": "dll{cancel}(next=succ, prev=pred)"}}"#,
        )
        .unwrap();
        let got = read_stats(&f);
        assert_eq!(
            (got.refinements_td, got.refinements_scg),
            (Some(3), Some(1))
        );
        assert_eq!(
            got.final_scg.get("struct node").map(String::as_str),
            Some("dll{cancel}(next=succ, prev=pred)")
        );
        fs::write(&f, "not json").unwrap();
        assert_eq!(read_stats(&f), none);
        fs::remove_dir_all(&dir).unwrap();
    }

    fn script(name: &str, body: &str) -> (PathBuf, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("shapemc-exec-{name}-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("fake-shapemc");
        fs::write(&exe, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        (dir, exe)
    }

    fn config(exe: PathBuf, timeout_ms: u64) -> RunConfig {
        RunConfig {
            exe,
            timeout: Duration::from_millis(timeout_ms),
            memory_limit_mb: 4096,
            extra_args: Vec::new(),
        }
    }

    #[test]
    fn timeout_kills_the_child() {
        let (dir, exe) = script("sleep", "sleep 30");
        let o = run_verify(&config(exe, 300), Path::new("x.c"));
        assert_eq!(o.answer, Answer::Timeout);
        assert!(o.seconds < 5.0, "{o:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn answers_and_stats_come_from_the_child() {
        // $8 is the stats file: verify FILE --timeout T --memory-limit M --stats-json S
        let (dir, exe) = script(
            "safe",
            "echo SAFE; echo '{\"refinements_td\": 2}' > \"$8\"; exit 0",
        );
        let o = run_verify(&config(exe, 10_000), Path::new("x.c"));
        assert_eq!(o.answer, Answer::True);
        assert_eq!(o.exit_code, Some(0));
        assert_eq!((o.refinements_td, o.refinements_scg), (Some(2), None));
        fs::remove_dir_all(&dir).unwrap();
        let (dir, exe) = script("unsup", "echo 'x.c:1:2: unsupported: arrays'; exit 3");
        let o = run_verify(&config(exe, 10_000), Path::new("x.c"));
        assert_eq!(o.answer, Answer::Unknown);
        assert_eq!(o.reason, "unsupported: x.c:1:2: unsupported: arrays");
        fs::remove_dir_all(&dir).unwrap();
        let (dir, exe) = script("crash", "kill -SEGV $$");
        let o = run_verify(&config(exe, 10_000), Path::new("x.c"));
        assert_eq!(o.answer, Answer::Error);
        assert_eq!(o.reason, "killed by signal 11");
        fs::remove_dir_all(&dir).unwrap();
        let (dir, exe) = script(
            "oom",
            "echo 'memory allocation of 4096 bytes failed' >&2; kill -ABRT $$",
        );
        let o = run_verify(&config(exe, 10_000), Path::new("x.c"));
        assert_eq!(o.answer, Answer::MemOut);
        fs::remove_dir_all(&dir).unwrap();
    }
}
