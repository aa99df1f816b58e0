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
