//! `verify` (predicate abstraction) on the shared benchmarks: never a wrong verdict.
//! The full run (every task, 10 s each, a few minutes) is `#[ignore]`d; run it with
//! `cargo test --test cegar_bench -- --ignored --nocapture` (or `scripts/scoreboard ../shared/bench`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use shapemc::cegar::cli::{verify_file, VerifyArgs};
use shapemc::cegar::Verdict;
mod bench_util;

use bench_util::{shared_bench, unreach_tasks};
use std::path::Path;
use std::time::Instant;

/// Runs verify on `file`; returns (verdict or None for a front-end error, wrong?).
fn run(file: &Path, expected_safe: bool, timeout: f64) -> (Option<Verdict>, bool) {
    let args = VerifyArgs {
        timeout: Some(timeout),
        ..Default::default()
    };
    match verify_file(file, &args) {
        Err(_) => (None, false),
        Ok(rep) => {
            let wrong = match rep.verdict {
                Verdict::Safe => !expected_safe,
                Verdict::Unsafe => expected_safe,
                Verdict::Unknown(_) => false,
            };
            (Some(rep.verdict), wrong)
        }
    }
}

#[test]
fn known_bugs_are_found_with_replayed_counterexamples() {
    let Some(root) = shared_bench("known_bugs_are_found_with_replayed_counterexamples") else {
        return;
    };
    for name in [
        "forester-heap__dll-optional-2",
        "forester-heap__sll-simple-white-blue-2",
    ] {
        let file = root.join("svcomp").join(format!("{name}.c"));
        assert!(file.is_file(), "{} is missing", file.display());
        let (v, wrong) = run(&file, false, 60.0);
        assert!(!wrong);
        assert_eq!(v, Some(Verdict::Unsafe), "{name}");
    }
}

#[test]
#[ignore = "runs every benchmark task (several minutes); see scripts/scoreboard"]
fn no_wrong_verdict_on_the_shared_benchmarks() {
    let Some(root) = shared_bench("no_wrong_verdict_on_the_shared_benchmarks") else {
        return;
    };
    let (mut correct, mut unknown, mut errors) = (0, 0, 0);
    let mut wrong = Vec::new();
    let start = Instant::now();
    for sub in ["gdsl", "seeds", "svcomp"] {
        for (file, safe) in unreach_tasks(&root.join(sub)) {
            let t = Instant::now();
            let (v, w) = run(&file, safe, 10.0);
            let line = match &v {
                Some(v) => v.line(),
                None => "front-end error".into(),
            };
            eprintln!(
                "{:>6.1}s {}/{}: {}",
                t.elapsed().as_secs_f64(),
                sub,
                file.file_name().unwrap_or_default().to_string_lossy(),
                line
            );
            match v {
                None => errors += 1,
                Some(Verdict::Unknown(_)) => unknown += 1,
                Some(_) if w => wrong.push(file.display().to_string()),
                Some(_) => correct += 1,
            }
        }
    }
    eprintln!(
        "correct {correct}, unknown {unknown}, front-end errors {errors}, wrong {}, {:.0} s",
        wrong.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(wrong.is_empty(), "wrong verdicts: {wrong:?}");
}
