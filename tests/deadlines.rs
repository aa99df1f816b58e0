//! Every run ends within its `--timeout` (plus the watchdog's grace and a margin for
//! starting the process), also under load: short-deadline verifications run in
//! parallel beside a long one (issue #28: `verify --timeout 3` hung inside Z3 when the
//! machine was loaded by a second verify). The margin is the guarantee itself
//! (`diag::WATCHDOG_GRACE_S` + 2 s), not a performance expectation.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The longest a run with `--timeout t` may take.
fn allowed(t: f64) -> Duration {
    Duration::from_secs_f64(t + shapemc::diag::WATCHDOG_GRACE_S + 2.0)
}

/// Runs `shapemc ARGS` and returns (exit code, wall time, stdout).
fn run(args: &[String]) -> (i32, Duration, String) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_shapemc"))
        .args(args)
        .output()
        .expect("run shapemc");
    (
        out.status.code().unwrap_or(-1),
        start.elapsed(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn short_deadlines_are_kept_beside_a_long_run() {
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks");
    let hard = [
        "dll_remove.c",
        "tree_rotate.c",
        "cyclic_list_delete.c",
        "tree_delete.c",
    ];
    let verify = |file: &str, t: f64| -> Vec<String> {
        vec![
            "verify".into(),
            bench.join(file).display().to_string(),
            "--timeout".into(),
            t.to_string(),
        ]
    };
    let long_t = 20.0;
    let long = {
        let args = verify("cyclic_list_delete.c", long_t);
        std::thread::spawn(move || run(&args))
    };
    let mut failures = Vec::new();
    for round in 0..2 {
        let short: Vec<_> = hard
            .iter()
            .map(|f| {
                let t = 1.0 + round as f64;
                let args = verify(f, t);
                (f, t, std::thread::spawn(move || run(&args)))
            })
            .collect();
        for (f, t, h) in short {
            let (code, took, out) = h.join().expect("runner");
            if took > allowed(t) || ![0, 10, 20].contains(&code) {
                failures.push(format!(
                    "{f} --timeout {t}: exit {code} after {took:?}: {out}"
                ));
            }
        }
    }
    let (code, took, out) = long.join().expect("runner");
    if took > allowed(long_t) || ![0, 10, 20].contains(&code) {
        failures.push(format!("long run: exit {code} after {took:?}: {out}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_watchdog_ends_a_stuck_simulation() {
    // `simulate` with a step limit it cannot reach within the deadline: the watchdog
    // ends it with UNKNOWN (exit 20) instead of letting it run on
    let d = tempfile::tempdir().expect("temporary directory");
    let f = d.path().join("spin.c");
    std::fs::write(
        &f,
        "int main(void) { unsigned x = 0; while (1) { x = x + 1; } return 0; }\n",
    )
    .expect("written");
    let args: Vec<String> = [
        "simulate",
        f.to_str().expect("utf8"),
        "--runs",
        "1000000",
        "--max-steps",
        "100000000",
        "--timeout",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (code, took, out) = run(&args);
    assert_eq!(code, 20, "{out}");
    assert!(out.contains("UNKNOWN: time limit"), "{out}");
    assert!(took <= allowed(1.0), "{took:?}");
}
