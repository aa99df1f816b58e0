//! Running the `shapemc` binary from integration tests (shared by the test crates
//! that include it with `mod cli_util;`).
#![allow(dead_code)] // each test crate uses its own subset

use std::path::Path;
use std::process::Command;

/// `shapemc ARGS`: the exit code (-1 if killed by a signal) and stdout.
pub fn shapemc(args: &[&str]) -> (i32, String) {
    shapemc_with(args, None)
}

/// `shapemc ARGS` with the SCG library directory `lib` (`SHAPEMC_SCG_LIBRARY`) if given.
pub fn shapemc_with(args: &[&str], lib: Option<&Path>) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_shapemc"));
    cmd.args(args);
    if let Some(l) = lib {
        cmd.env("SHAPEMC_SCG_LIBRARY", l);
    }
    let out = cmd.output().expect("run shapemc");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `verify FILE EXTRA... --cex C` (with the SCG library `lib`, if given) answers
/// UNSAFE with exit 10, and `simulate FILE --replay C` reaches the error (exit 10).
/// Returns the output of `verify`.
pub fn assert_unsafe_with_replay_using(file: &Path, extra: &[&str], lib: Option<&Path>) -> String {
    let d = tempfile::tempdir().expect("temporary directory");
    let cex = d.path().join("c.cex");
    let mut argv = vec![
        "verify",
        file.to_str().expect("utf8 path"),
        "--timeout",
        "60",
        "--cex",
        cex.to_str().expect("utf8 path"),
    ];
    argv.extend_from_slice(extra);
    let (code, out) = shapemc_with(&argv, lib);
    assert_eq!(
        out.lines().next(),
        Some("UNSAFE"),
        "{}: {out}",
        file.display()
    );
    assert_eq!(code, 10);
    let replay = [
        "simulate",
        file.to_str().expect("utf8 path"),
        "--replay",
        cex.to_str().expect("utf8 path"),
    ];
    let (code, replayed) = shapemc_with(&replay, lib);
    assert_eq!(code, 10, "{}: {replayed}", file.display());
    out
}

/// `verify FILE EXTRA... --certificate C` answers SAFE with exit 0 and
/// `check-certificate FILE C` answers VALID. Returns the output of `verify`.
pub fn assert_safe_with_checked_certificate(file: &Path, extra: &[&str]) -> String {
    let d = tempfile::tempdir().expect("temporary directory");
    let cert = d.path().join("c.cert");
    let f = file.to_str().expect("utf8 path");
    let c = cert.to_str().expect("utf8 path");
    let mut argv = vec!["verify", f, "--timeout", "60", "--certificate", c];
    argv.extend_from_slice(extra);
    let (code, out) = shapemc(&argv);
    assert_eq!(
        out.lines().next(),
        Some("SAFE"),
        "{}: {out}",
        file.display()
    );
    assert_eq!(code, 0);
    let (code, checked) = shapemc(&["check-certificate", f, c]);
    assert_eq!((code, checked.trim()), (0, "VALID"), "{}", file.display());
    out
}
