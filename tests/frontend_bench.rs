//! Every benchmark C file either lowers to a CFA or is refused with an `Unsupported`
//! diagnostic (never a parse error, never a panic). The gdsl/ and seeds/ tasks must all lower.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use shapemc::cfa::LocKind;
use shapemc::diag::FrontendError;
use shapemc::frontend::{parse_file, FrontendOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn bench_files(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/bench")
        .join(dir);
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
    let mut refused = Vec::new();
    let mut total = 0;
    let mut slowest = (Duration::ZERO, PathBuf::new());
    for dir in ["gdsl", "seeds", "svcomp"] {
        let files = bench_files(dir);
        if files.is_empty() {
            eprintln!("note: no benchmark files under ../shared/bench/{dir}");
        }
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
    assert!(
        slowest.0 < Duration::from_secs(5),
        "front end too slow: {slowest:?}"
    );
}
