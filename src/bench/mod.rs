//! `shapemc bench`: the scoreboard. Runs `shapemc verify` (this binary, as a child process)
//! on every SV-COMP task (`*.yml`) under the given folders, in parallel, with a time and a
//! memory limit per task; scores the answers the SV-COMP way; prints a table and a summary
//! line; writes JSON and CSV to a results folder. `--compare OLD NEW` diffs two result
//! files; `--table1` runs every task with `--scg maximal` and with the default refinement
//! and prints the ratio of the times (the paper's Table 1, generated).
//!
//! Exit status: 0, or 1 when some answer was wrong (or, with `--compare`, some task got
//! worse); 2 for usage errors (no folder, unreadable results file, ...).

pub mod exec;
pub mod report;
pub mod task;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use exec::{run_verify, RunConfig};
use report::{Judgement, Report, Row, RunInfo, Summary};
use task::{Plan, Task};

/// Options of `shapemc bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Folders searched recursively for SV-COMP task files (`*.yml`); a `.yml` file may be
    /// given directly.
    #[arg(value_name = "FOLDER", required_unless_present = "compare")]
    pub folders: Vec<PathBuf>,
    /// Parallel verifier runs [default: available parallelism].
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Per-task wall-clock limit in seconds; the child is killed and the task counts as unknown.
    #[arg(long, value_name = "SECONDS", default_value_t = 20.0)]
    pub timeout: f64,
    /// Per-task address-space limit in MiB (RLIMIT_AS on the child, also passed to verify).
    #[arg(long, value_name = "MB", default_value_t = 4096)]
    pub memory_limit: u64,
    /// Folder for the results (`scoreboard-<UTC time>.json/.csv` and `latest.json`).
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results: PathBuf,
    /// Only print, write no results files.
    #[arg(long)]
    pub no_save: bool,
    /// Compare two results files per task (better / worse / new / gone) instead of running.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], conflicts_with = "table1")]
    pub compare: Option<Vec<PathBuf>>,
    /// Run every task twice, with `--scg maximal` and with the default refinement, and print
    /// the time ratio per task (the paper's Table 1).
    #[arg(long)]
    pub table1: bool,
    /// One more argument for every `verify` run, after the SV-COMP conventions
    /// (`--malloc-never-fails`); repeat
    /// it for several, e.g. `--verify-arg=--per-variable-uninit`.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub verify_arg: Vec<String>,
    /// The property scored: `unreach-call` (default), `valid-memsafety` or
    /// `valid-memcleanup` (a name or a `.prp` file); tasks whose file does not carry it
    /// are skipped, every `verify` run gets `--property`, and a `false` answer must
    /// name the expected subproperty (`UNSAFE (valid-deref)`) to be correct.
    #[arg(long, value_name = "PROPERTY", default_value = "unreach-call", value_parser = crate::spec::Property::parse_arg)]
    pub property: crate::spec::Property,
}

/// The `verify` options every task runs with: SV-COMP's conventions. Its rules assume
/// that `malloc` never returns NULL (the expected verdicts rely on it: forester-heap
/// sll-01-1 is memory-safe with unchecked allocations), while `verify` by default lets
/// an allocation fail.
pub const SVCOMP_VERIFY_ARGS: &[&str] = &["--malloc-never-fails"];

/// `--jobs N` for each `verify` run: the machine's cores shared among the `jobs`
/// parallel runs (at least 1), so that the scoreboard never runs more analysis
/// threads than cores; nothing when a `--verify-arg` sets the threads itself.
fn verify_threads(jobs: usize, verify_args: &[String]) -> Vec<String> {
    if verify_args
        .iter()
        .any(|a| a == "-j" || a.starts_with("--jobs") || a.starts_with("-j"))
    {
        return Vec::new();
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    vec!["--jobs".into(), (cores / jobs.max(1)).max(1).to_string()]
}

/// `--property NAME` for a memory property; nothing for unreach-call, so that the
/// unreach-call runs are exactly those of before the option existed.
fn property_args(p: crate::spec::Property) -> Vec<String> {
    if p == crate::spec::Property::UnreachCall {
        return Vec::new();
    }
    vec!["--property".into(), p.name().into()]
}

/// One line of `--table1`: the same task with maximal SCGs and with refinement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableOneRow {
    /// Task name.
    pub task: String,
    /// The run with `--scg maximal`.
    pub maximal: Row,
    /// The run with the default refinement.
    pub refine: Row,
    /// refine seconds / maximal seconds, when both were run and both answered correctly.
    pub ratio: Option<f64>,
}

/// The JSON results file of a `--table1` run (`results/latest-table1.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableOneReport {
    /// Always `"table1"`.
    pub kind: String,
    /// Settings.
    pub run: RunInfo,
    /// One entry per task.
    pub tasks: Vec<TableOneRow>,
    /// Totals of the maximal-SCG runs.
    pub maximal: Summary,
    /// Totals of the refinement runs.
    pub refine: Summary,
    /// Geometric mean of the ratios.
    pub geomean_ratio: Option<f64>,
}

/// Runs `shapemc bench` and returns the process exit code.
pub fn run(args: BenchArgs) -> i32 {
    match run_inner(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("shapemc bench: {e}");
            crate::diag::exit::USAGE_OR_PARSE
        }
    }
}

fn run_inner(args: &BenchArgs) -> Result<i32, String> {
    if let Some(files) = &args.compare {
        let (old, new) = match files.as_slice() {
            [o, n] => (load_rows(o)?, load_rows(n)?),
            _ => return Err("--compare needs OLD and NEW".to_string()),
        };
        let c = report::compare(&old, &new);
        println!("{c}");
        return Ok(i32::from(c.worse > 0));
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err("--timeout must be a positive number of seconds".to_string());
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot locate the shapemc binary: {e}"))?;
    let tasks = task::discover_for(&args.folders, args.property)?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (started, stamp) = report::utc_stamp(now);
    let info = RunInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        started,
        folders: args
            .folders
            .iter()
            .map(|f| f.display().to_string())
            .collect(),
        jobs,
        timeout_s: args.timeout,
        memory_limit_mb: args.memory_limit,
    };
    let cfg = RunConfig {
        exe,
        timeout: Duration::from_secs_f64(args.timeout),
        memory_limit_mb: args.memory_limit,
        extra_args: SVCOMP_VERIFY_ARGS
            .iter()
            .map(|a| a.to_string())
            .chain(property_args(args.property))
            .chain(verify_threads(jobs, &args.verify_arg))
            .chain(args.verify_arg.iter().cloned())
            .collect(),
    };
    tracing::info!(tasks = tasks.len(), jobs, "running scoreboard");
    if args.table1 {
        table_one(args, &tasks, &cfg, info, &stamp)
    } else {
        scoreboard(args, &tasks, &cfg, info, &stamp)
    }
}

fn scoreboard(
    args: &BenchArgs,
    tasks: &[Task],
    cfg: &RunConfig,
    info: RunInfo,
    stamp: &str,
) -> Result<i32, String> {
    let start = Instant::now();
    let rows = run_parallel(tasks, info.jobs, |t| run_task(t, cfg));
    let summary = Summary::of(&rows, start.elapsed().as_secs_f64());
    print!("{}", report::table(&rows));
    println!("{summary}");
    let wrong = summary.wrong > 0;
    let rep = Report {
        kind: "scoreboard".to_string(),
        run: info,
        tasks: rows,
        summary,
    };
    if !args.no_save {
        let json = serde_json::to_string_pretty(&rep).map_err(|e| e.to_string())?;
        let csv = report::csv(&rep.tasks);
        let path = report::save(
            &args.results,
            "scoreboard",
            stamp,
            &json,
            &csv,
            "latest.json",
        )
        .map_err(|e| format!("cannot write results to {}: {e}", args.results.display()))?;
        eprintln!("results: {}", path.display());
    }
    Ok(i32::from(wrong))
}

fn table_one(
    args: &BenchArgs,
    tasks: &[Task],
    cfg: &RunConfig,
    info: RunInfo,
    stamp: &str,
) -> Result<i32, String> {
    let start = Instant::now();
    let mut maximal_cfg = cfg.clone();
    maximal_cfg
        .extra_args
        .extend(["--scg".to_string(), "maximal".to_string()]);
    let rows: Vec<TableOneRow> = run_parallel(tasks, info.jobs, |t| {
        let maximal = run_task(t, &maximal_cfg);
        let refine = run_task(t, cfg);
        let ratio = match (
            maximal.result,
            refine.result,
            maximal.seconds,
            refine.seconds,
        ) {
            (Judgement::Correct, Judgement::Correct, Some(m), Some(r)) if m > 0.0 => Some(r / m),
            _ => None,
        };
        TableOneRow {
            task: t.name.clone(),
            maximal,
            refine,
            ratio,
        }
    });
    let wall = start.elapsed().as_secs_f64();
    let maximal: Vec<Row> = rows.iter().map(|r| r.maximal.clone()).collect();
    let refine: Vec<Row> = rows.iter().map(|r| r.refine.clone()).collect();
    let ratios: Vec<f64> = rows.iter().filter_map(|r| r.ratio).collect();
    let geomean_ratio = (!ratios.is_empty())
        .then(|| (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp());
    let header = [
        "task",
        "expected",
        "maximal",
        "max s",
        "refine",
        "refine s",
        "refinements",
        "ratio",
        "final SCG (refine)",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let secs = |s: Option<f64>| s.map_or(String::new(), |s| format!("{s:.2}"));
            vec![
                r.task.clone(),
                r.refine.expected.map_or("-".to_string(), |b| b.to_string()),
                r.maximal.result.label().to_string(),
                secs(r.maximal.seconds),
                r.refine.result.label().to_string(),
                secs(r.refine.seconds),
                r.refine.refinements(),
                r.ratio.map_or(String::new(), |x| format!("{x:.2}")),
                r.refine.final_scgs(),
            ]
        })
        .collect();
    print!("{}", report::format_table(&header, &cells));
    let (sm, sr) = (Summary::of(&maximal, wall), Summary::of(&refine, wall));
    println!("maximal {sm}");
    println!("refine  {sr}");
    match geomean_ratio {
        Some(g) => println!(
            "table1: refine/maximal time ratio, geometric mean {g:.2} over {} tasks correct in both",
            ratios.len()
        ),
        None => println!("table1: no task was answered correctly in both configurations"),
    }
    let wrong = sm.wrong + sr.wrong > 0;
    let rep = TableOneReport {
        kind: "table1".to_string(),
        run: info,
        tasks: rows,
        maximal: sm,
        refine: sr,
        geomean_ratio,
    };
    if !args.no_save {
        let json = serde_json::to_string_pretty(&rep).map_err(|e| e.to_string())?;
        let csv = report::to_csv(&header, &cells);
        let path = report::save(
            &args.results,
            "table1",
            stamp,
            &json,
            &csv,
            "latest-table1.json",
        )
        .map_err(|e| format!("cannot write results to {}: {e}", args.results.display()))?;
        eprintln!("results: {}", path.display());
    }
    Ok(i32::from(wrong))
}

/// Runs (or skips) one task with the given configuration.
pub fn run_task(t: &Task, cfg: &RunConfig) -> Row {
    let file = t.yml.display().to_string();
    match &t.plan {
        Plan::Skip(why) => Row::not_run(
            &t.name,
            &file,
            t.properties.clone(),
            Judgement::Skipped,
            why.clone(),
        ),
        Plan::Unsupported(why) => Row::not_run(
            &t.name,
            &file,
            t.properties.clone(),
            Judgement::Unknown,
            why.clone(),
        ),
        Plan::Broken(why) => Row::not_run(
            &t.name,
            &file,
            t.properties.clone(),
            Judgement::Error,
            why.clone(),
        ),
        Plan::Run {
            input,
            expected,
            subproperty,
            ..
        } => {
            let o = run_verify(cfg, input);
            tracing::debug!(task = %t.name, answer = o.answer.label(), seconds = o.seconds, "task done");
            let mut row = Row::from_outcome(&t.name, &file, t.properties.clone(), *expected, &o);
            report::judge_subproperty(&mut row, subproperty.as_deref());
            row
        }
    }
}

/// Applies `f` to every task on `jobs` worker threads; results keep the order of `tasks`.
/// Shows a progress bar on stderr when stderr is a terminal.
fn run_parallel<T: Send>(tasks: &[Task], jobs: usize, f: impl Fn(&Task) -> T + Sync) -> Vec<T> {
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(tasks.len() as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} {msg}",
        ) {
            b.set_style(style.progress_chars("=> "));
        }
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..tasks.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.min(tasks.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(t) = tasks.get(i) else { break };
                let r = f(t);
                if let Ok(mut v) = results.lock() {
                    v[i] = Some(r);
                }
                bar.set_message(t.name.clone());
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

/// Reads the rows of a results file: a scoreboard report, or a `--table1` report (its
/// refinement runs).
pub fn load_rows(path: &Path) -> Result<Vec<Row>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if let Ok(r) = serde_json::from_str::<Report>(&text) {
        return Ok(r.tasks);
    }
    serde_json::from_str::<TableOneReport>(&text)
        .map(|r| r.tasks.into_iter().map(|t| t.refine).collect())
        .map_err(|e| format!("{}: not a scoreboard results file: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::verify_threads;

    #[test]
    fn each_verify_gets_its_share_of_the_cores() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let args = verify_threads(2, &[]);
        assert_eq!(args[0], "--jobs");
        assert_eq!(args[1], (cores / 2).max(1).to_string());
        assert_eq!(verify_threads(1, &[])[1], cores.to_string());
        assert_eq!(verify_threads(cores * 4, &[])[1], "1");
        // a `--verify-arg` that sets the threads wins
        assert!(verify_threads(2, &["--jobs=3".to_string()]).is_empty());
        assert!(verify_threads(2, &["-j".to_string(), "3".to_string()]).is_empty());
    }
}
