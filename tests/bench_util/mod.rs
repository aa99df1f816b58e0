//! The shared benchmarks (`../shared/bench` beside the checkout, or
//! `$SHAPEMC_SHARED_BENCH`) for the test crates that include this with
//! `mod bench_util;`: one place that finds them, reads their task files with the
//! scoreboard's loader ([`shapemc::bench::task`]) and skips visibly when they are absent.
#![allow(dead_code)] // each test crate uses its own subset

use shapemc::bench::task::{load_task, Plan};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The shared benchmark folder: `$SHAPEMC_SHARED_BENCH` if set, else
/// `../shared/bench` beside the checkout.
pub fn shared_bench_dir() -> PathBuf {
    match std::env::var_os("SHAPEMC_SHARED_BENCH") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/bench"),
    }
}

/// The shared benchmark folder, or None after recording that `test` is skipped
/// because it is absent ([`skip`]).
pub fn shared_bench(test: &str) -> Option<PathBuf> {
    let d = shared_bench_dir();
    if d.is_dir() {
        Some(d)
    } else {
        skip(test, &format!("{} absent", d.display()));
        None
    }
}

/// `sub` of the shared benchmark folder (a file or folder), or None after recording the
/// skip of `test` when it is absent.
pub fn shared_bench_path(test: &str, sub: &str) -> Option<PathBuf> {
    let p = shared_bench(test)?.join(sub);
    if p.exists() {
        Some(p)
    } else {
        skip(test, &format!("{} absent", p.display()));
        None
    }
}

/// Records that `test` did not run, and why: a `SKIPPED:` line on stderr (shown with
/// `--nocapture`) and a line in the file `$SHAPEMC_TEST_SKIPS` names, if set
/// (`scripts/test` counts and names them in its summary).
pub fn skip(test: &str, why: &str) {
    let line = format!("SKIPPED: {test}: {why}");
    eprintln!("{line}");
    if let Some(f) = std::env::var_os("SHAPEMC_TEST_SKIPS") {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&f);
        if let Ok(mut file) = file {
            // one write of the whole line: tests running at once append whole lines
            let _ = file.write_all(format!("{line}\n").as_bytes());
        }
    }
}

/// The expected unreach-call verdict of the task file `yml` (true: safe), as the
/// scoreboard reads it; None when the scoreboard would not run it.
pub fn expected_unreach(yml: &Path) -> Option<bool> {
    match load_task(String::new(), yml).plan {
        Plan::Run { expected, .. } => Some(expected),
        Plan::Skip(_) | Plan::Unsupported(_) | Plan::Broken(_) => None,
    }
}

/// The unreach-call tasks of the folder `dir` (not recursive), sorted: the input file
/// and whether it is safe.
pub fn unreach_tasks(dir: &Path) -> Vec<(PathBuf, bool)> {
    let mut ymls: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    ymls.retain(|p| p.extension().is_some_and(|e| e == "yml"));
    ymls.sort();
    ymls.into_iter()
        .filter_map(|y| match load_task(String::new(), &y).plan {
            Plan::Run {
                input, expected, ..
            } => Some((input, expected)),
            Plan::Skip(_) | Plan::Unsupported(_) | Plan::Broken(_) => None,
        })
        .collect()
}
