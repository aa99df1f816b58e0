//! Helpers of the library's unit tests: the shared benchmarks, found and skipped the
//! way the integration tests do (`tests/bench_util`): `$SHAPEMC_SHARED_BENCH`, else
//! `../shared/bench` beside the checkout; a test that needs them and finds them absent
//! records a `SKIPPED:` line (stderr, and the file `$SHAPEMC_TEST_SKIPS` names, which
//! `scripts/test` counts) and returns. The tests of `promote` and `fieldptr` load their
//! seed tasks through it (`promote::tests::load`).

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The shared benchmark folder (it may not exist).
pub(crate) fn shared_bench_dir() -> PathBuf {
    match std::env::var_os("SHAPEMC_SHARED_BENCH") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/bench"),
    }
}

/// `sub` of the shared benchmarks, or None after recording that `test` is skipped
/// because it is absent.
pub(crate) fn shared_bench_path(test: &str, sub: &str) -> Option<PathBuf> {
    let p = shared_bench_dir().join(sub);
    if p.exists() {
        return Some(p);
    }
    let line = format!("SKIPPED: {test}: {} absent", p.display());
    eprintln!("{line}");
    if let Some(f) = std::env::var_os("SHAPEMC_TEST_SKIPS") {
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(f)
        {
            // one write of the whole line: tests running at once append whole lines
            let _ = file.write_all(format!("{line}\n").as_bytes());
        }
    }
    None
}

/// The program of the C source `src` (written to a fresh temporary file, parsed with the
/// default front-end options, the undefined-behaviour checks added as `verify` does).
pub(crate) fn parse_c(src: &str) -> crate::cfa::Program {
    // a directory of its own, removed on return (per-process directories piled up in
    // the system's temporary directory)
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let f = dir.path().join("t.c");
    std::fs::write(&f, src).unwrap_or_else(|e| panic!("{e}"));
    let mut p =
        crate::frontend::parse_file(&f, &Default::default()).unwrap_or_else(|e| panic!("{e}"));
    p.add_undefined_behaviour_checks();
    p
}
