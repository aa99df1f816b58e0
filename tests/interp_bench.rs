//! The interpreter as a test oracle for the front end on the shared benchmarks:
//! safe tasks (`expected_verdict: true`) must never reach the error location in 200
//! random runs (a hit there is a front-end or interpreter bug), and most `_bug` tasks
//! of gdsl/ and seeds/ must reach it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use shapemc::frontend::{parse_file, FrontendOptions};
use shapemc::interp::{run_random, Limits, Outcome};
mod bench_util;

use bench_util::{shared_bench, unreach_tasks};
use std::path::Path;

const RUNS: u64 = 200;

fn hits(file: &Path) -> Option<u64> {
    let prog = match parse_file(file, &FrontendOptions::default()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return None;
        }
    };
    let limits = Limits {
        max_steps: 200_000,
        ..Limits::default()
    };
    Some(
        (0..RUNS)
            .filter(|&s| matches!(run_random(&prog, s, &limits).outcome, Outcome::Error { .. }))
            .count() as u64,
    )
}

#[test]
fn safe_tasks_never_reach_the_error_and_bugs_mostly_do() {
    let Some(root) = shared_bench("safe_tasks_never_reach_the_error_and_bugs_mostly_do") else {
        return;
    };
    let mut failures = Vec::new();
    let (mut bug_total, mut bug_found) = (0, 0);
    for sub in ["gdsl", "seeds", "svcomp"] {
        for (file, safe) in unreach_tasks(&root.join(sub)) {
            let Some(h) = hits(&file) else { continue };
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            if safe && h > 0 {
                failures.push(format!(
                    "{sub}/{name}: safe task reached the error in {h}/{RUNS} runs"
                ));
            }
            if !safe && sub != "svcomp" {
                bug_total += 1;
                if h > 0 {
                    bug_found += 1;
                }
            }
            eprintln!(
                "{sub}/{name}: expected {}, error reached in {h}/{RUNS} runs",
                if safe { "true" } else { "false" }
            );
        }
    }
    eprintln!("gdsl+seeds bug tasks whose error the interpreter reaches: {bug_found}/{bug_total}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        bug_found * 2 > bug_total,
        "only {bug_found}/{bug_total} bug tasks reached the error"
    );
}

/// Our own tasks (issue 8): every safe task never reaches the error in 200 random
/// runs, every `_bug` task reaches it at least once.
#[test]
fn own_benchmarks_are_validated_by_the_interpreter() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks");
    let all = unreach_tasks(&dir);
    assert!(all.len() >= 40, "only {} tasks in benchmarks/", all.len());
    let mut failures = Vec::new();
    for (file, safe) in all {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        match hits(&file) {
            None => failures.push(format!("{name}: refused by the front end")),
            Some(h) if safe && h > 0 => failures.push(format!(
                "{name}: safe task reached the error in {h}/{RUNS} runs"
            )),
            Some(0) if !safe => failures.push(format!(
                "{name}: bug task never reached the error in {RUNS} runs"
            )),
            Some(h) => eprintln!("{name}: error reached in {h}/{RUNS} runs"),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
