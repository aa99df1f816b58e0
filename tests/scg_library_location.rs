//! A moved or installed binary finds its SCG library (`scg::location`): copied to a
//! folder outside the source tree with nothing beside it, it proves a shape task SAFE
//! with the copy built into it; a library named by `$SHAPEMC_SCG_LIBRARY` or
//! `--scg-library` that is not there is an error; one next to the binary or installed
//! under `../share/shapemc/` is found. The library in use is named in `--stats-json`
//! and in certificates, which check with the source tree's library (same hash).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `shapemc` binary copied to `dir/bin/shapemc`.
fn moved_binary(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let exe = bin.join("shapemc");
    std::fs::copy(env!("CARGO_BIN_EXE_shapemc"), &exe).expect("copy the binary");
    exe
}

/// Runs `exe ARGS` in `cwd` without `$SHAPEMC_SCG_LIBRARY` (or with it set to `lib`):
/// exit code, stdout, stderr.
fn run(exe: &Path, cwd: &Path, args: &[&str], lib: Option<&str>) -> (i32, String, String) {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("SHAPEMC_SCG_LIBRARY");
    if let Some(l) = lib {
        cmd.env("SHAPEMC_SCG_LIBRARY", l);
    }
    // a freshly copied executable can be "busy" for a moment: another test thread that
    // forks meanwhile holds the copy's write descriptor until its child `exec`s (Linux
    // ETXTBSY; it failed a `scripts/test` run once)
    let mut tries = 0;
    let out = loop {
        match cmd.output() {
            Err(e) if e.raw_os_error() == Some(26) && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            r => break r.expect("runs"),
        }
    };
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn copy_library(to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scg-library");
    for e in std::fs::read_dir(src).expect("the library").flatten() {
        if e.path().extension().is_some_and(|x| x == "scg") {
            std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
        }
    }
}

#[test]
fn a_moved_binary_proves_a_shape_task_with_its_built_in_library() {
    let d = tempfile::tempdir().expect("temp dir");
    let exe = moved_binary(d.path());
    let task = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/sll_create.c");
    let task = task.to_str().expect("utf8");
    let stats = d.path().join("stats.json");
    let cert = d.path().join("c.json");
    let (code, out, err) = run(
        &exe,
        d.path(),
        &[
            "verify",
            task,
            "--malloc-never-fails",
            "--shape-domain",
            "tvla",
            "--timeout",
            "120",
            "--stats-json",
            stats.to_str().expect("utf8"),
            "--certificate",
            cert.to_str().expect("utf8"),
        ],
        None,
    );
    // without the library the list would end UNKNOWN (explicit heaps only)
    assert_eq!(out.lines().next(), Some("SAFE"), "{out}{err}");
    assert_eq!(code, 0);
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).expect("stats")).expect("json");
    assert_eq!(
        s["domain"]["scg_library"], "embedded (built into the binary)",
        "{s}"
    );
    // the certificate names it, and checks with the source tree's library
    let text = std::fs::read_to_string(&cert).expect("certificate");
    assert!(
        text.contains("\"scg_library\":\"embedded (built into the binary)\""),
        "{}",
        &text[..text.len().min(600)]
    );
    let check = Command::new(env!("CARGO_BIN_EXE_shapemc"))
        .args(["check-certificate", task, cert.to_str().expect("utf8")])
        .env_remove("SHAPEMC_SCG_LIBRARY")
        .output()
        .expect("runs");
    let checked = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{checked}");
}

#[test]
fn a_named_library_that_is_not_there_is_an_error() {
    let d = tempfile::tempdir().expect("temp dir");
    let exe = moved_binary(d.path());
    let nope = d.path().join("nope");
    let nope = nope.to_str().expect("utf8");
    let task = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/sll_create.c");
    let task = task.to_str().expect("utf8");
    let (code, out, err) = run(&exe, d.path(), &["verify", task], Some(nope));
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(
        err.trim(),
        format!(
            "error: cannot read the SCG library directory {nope} ($SHAPEMC_SCG_LIBRARY): not a directory"
        )
    );
    let (code, _, err) = run(
        &exe,
        d.path(),
        &["scg", "list", "--scg-library", nope],
        None,
    );
    assert_eq!(code, 2);
    assert!(err.contains("(--scg-library): not a directory"), "{err}");
}

#[test]
fn a_library_beside_the_binary_or_installed_is_found() {
    let d = tempfile::tempdir().expect("temp dir");
    let exe = moved_binary(d.path());
    let library_line = |cwd: &Path| {
        let (code, out, err) = run(&exe, cwd, &["scg", "list"], None);
        assert_eq!(code, 0, "{err}");
        out.lines()
            .find_map(|l| l.strip_prefix("library: "))
            .map(str::to_string)
            .unwrap_or_default()
    };
    assert_eq!(library_line(d.path()), "embedded (built into the binary)");
    let share = d.path().join("share/shapemc/scg-library");
    copy_library(&share);
    assert_eq!(
        library_line(d.path()),
        format!("{} (installed)", share.display())
    );
    let beside = d.path().join("bin/scg-library");
    copy_library(&beside);
    assert_eq!(
        library_line(d.path()),
        format!("{} (next to the binary)", beside.display())
    );
    // the option wins over everything
    let (code, out, _) = run(
        &exe,
        d.path(),
        &[
            "scg",
            "list",
            "--scg-library",
            share.to_str().expect("utf8"),
        ],
        None,
    );
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("library: {} (--scg-library)", share.display())),
        "{out}"
    );
}
