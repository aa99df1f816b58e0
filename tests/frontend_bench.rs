//! Every benchmark C file either lowers to a CFA or is refused with an `Unsupported`
//! diagnostic (never a parse error, never a panic). The gdsl/ and seeds/ tasks must all lower.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use shapemc::cfa::LocKind;
use shapemc::diag::FrontendError;
use shapemc::frontend::{parse_file, FrontendOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod bench_util;

fn bench_files(root: &Path, dir: &str) -> Vec<PathBuf> {
    let root = root.join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "c"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn all_bench_files_lower_or_are_refused() {
    lower_all("all_bench_files_lower_or_are_refused");
}

/// The wall-clock bound of the front end (5 s for the slowest file, debug build), kept
/// out of the default run: it fails under load, not on a bug.
#[test]
#[ignore = "wall-clock bound; scripts/timing runs it on an idle machine"]
fn timing_front_end_per_file() {
    if let Some(slowest) = lower_all("timing_front_end_per_file") {
        assert!(
            slowest.0 < Duration::from_secs(5),
            "front end too slow: {slowest:?}"
        );
    }
}

/// Lowers every shared benchmark (see the module docs); returns the slowest file with
/// its time, or None when the benchmarks are absent (`test` is skipped).
fn lower_all(test: &str) -> Option<(Duration, PathBuf)> {
    let root = bench_util::shared_bench(test)?;
    let mut refused = Vec::new();
    let mut total = 0;
    let mut slowest = (Duration::ZERO, PathBuf::new());
    for dir in ["gdsl", "seeds", "svcomp"] {
        let files = bench_files(&root, dir);
        assert!(
            !files.is_empty(),
            "no C files under {}/{dir}",
            root.display()
        );
        for f in files {
            total += 1;
            let t = Instant::now();
            let r = parse_file(&f, &FrontendOptions::default());
            let dt = t.elapsed();
            if dt > slowest.0 {
                slowest = (dt, f.clone());
            }
            match r {
                Ok(p) => {
                    // structural sanity: entry is the start function, error/sink nodes are leaves
                    assert_eq!(p.functions[p.graph[p.entry].func].name, "__shapemc_start");
                    for n in p.graph.node_indices() {
                        if matches!(p.graph[n].kind, LocKind::Error | LocKind::Sink) {
                            assert_eq!(p.successors(n).count(), 0, "{}", f.display());
                        }
                    }
                }
                Err(e @ FrontendError::Unsupported { .. }) => {
                    assert_ne!(dir, "gdsl", "gdsl task refused: {e}");
                    assert_ne!(dir, "seeds", "seed task refused: {e}");
                    refused.push(e.to_string());
                }
                Err(e) => panic!("{}: not a clean refusal: {e}", f.display()),
            }
        }
    }
    eprintln!("refused {} of {total} benchmark files:", refused.len());
    for r in &refused {
        eprintln!("  {r}");
    }
    eprintln!(
        "slowest front-end run: {:?} ({})",
        slowest.0,
        slowest.1.display()
    );
    Some(slowest)
}
