//! `verify TASK.yml`, SV-COMP witnesses 2.0 (`verify --witness`) and
//! `validate-witness`, on bundled tasks: the witnesses are parsed back with a YAML
//! crate and checked field by field.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

mod cli_util;

use cli_util::shapemc;
use serde_yaml_ng::Value;
use std::path::{Path, PathBuf};

fn bench(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benchmarks")
        .join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn sha256(p: &Path) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(std::fs::read(p).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn read_yaml(p: &Path) -> Value {
    serde_yaml_ng::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for k in path {
        cur = cur
            .get(*k)
            .unwrap_or_else(|| panic!("no {k} in {path:?}: {v:?}"));
    }
    cur.as_str()
        .unwrap_or_else(|| panic!("{path:?} is not a string: {cur:?}"))
}

/// The metadata every witness carries, for the C file `c` (named as given).
fn check_metadata(entry: &Value, c: &Path) {
    let m = &entry["metadata"];
    assert_eq!(str_at(m, &["format_version"]), "2.0");
    let uuid = str_at(m, &["uuid"]);
    assert_eq!(uuid.len(), 36, "{uuid}");
    assert_eq!(uuid.matches('-').count(), 4, "{uuid}");
    let t = str_at(m, &["creation_time"]);
    assert!(humantime::parse_rfc3339(t).is_ok(), "{t}");
    assert_eq!(str_at(m, &["producer", "name"]), "shapemc");
    assert_eq!(
        str_at(m, &["producer", "version"]),
        env!("CARGO_PKG_VERSION")
    );
    let task = &m["task"];
    let files = task["input_files"].as_sequence().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].as_str(), Some(s(c)));
    let hashes = task["input_file_hashes"].as_mapping().unwrap();
    assert_eq!(hashes.len(), 1);
    assert_eq!(
        hashes.get(s(c)).and_then(|h| h.as_str()),
        Some(sha256(c).as_str())
    );
    assert_eq!(str_at(task, &["specification"]), "G ! call(reach_error())");
    assert_eq!(str_at(task, &["data_model"]), "ILP32");
    assert_eq!(str_at(task, &["language"]), "C");
}

fn check_location(loc: &Value, c: &Path) {
    assert_eq!(str_at(loc, &["file_name"]), s(c));
    assert!(loc["line"].as_u64().unwrap() > 0);
    assert!(loc["column"].as_u64().unwrap() > 0);
    assert!(!str_at(loc, &["function"]).is_empty());
}

#[test]
fn violation_witness_is_written_validated_and_bound_to_its_file() {
    let d = tempfile::tempdir().unwrap();
    let c = bench("sll_create_bug.c");
    let w = d.path().join("w.yml");
    let (code, out) = shapemc(&[
        "verify",
        s(&bench("sll_create_bug.yml")),
        "--timeout",
        "60",
        "--witness",
        s(&w),
    ]);
    assert_eq!(code, 10, "{out}");
    assert!(out.contains("\nunreach-call: UNSAFE\n"), "{out}");
    assert!(out.contains("violation witness written to"), "{out}");
    let doc = read_yaml(&w);
    let entries = doc.as_sequence().unwrap();
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert_eq!(str_at(e, &["entry_type"]), "violation_sequence");
    // the task's input file, relative to the task file's folder
    let named = PathBuf::from(e["metadata"]["task"]["input_files"][0].as_str().unwrap());
    assert_eq!(named, c);
    check_metadata(e, &named);
    let content = e["content"].as_sequence().unwrap();
    assert!(!content.is_empty());
    for (i, seg) in content.iter().enumerate() {
        let wps = seg["segment"].as_sequence().unwrap();
        assert_eq!(wps.len(), 1, "one waypoint per segment");
        let wp = &wps[0]["waypoint"];
        assert_eq!(str_at(wp, &["action"]), "follow");
        check_location(&wp["location"], &named);
        let ty = str_at(wp, &["type"]);
        if i + 1 == content.len() {
            assert_eq!(ty, "target");
            assert!(wp.get("constraint").is_none());
        } else {
            assert_eq!(ty, "function_return");
            let v = str_at(wp, &["constraint", "value"]);
            let n = v.strip_prefix("\\result == ").unwrap();
            assert!(n.parse::<i64>().is_ok(), "{v}");
            assert_eq!(str_at(wp, &["constraint", "format"]), "acsl_expression");
        }
    }
    // confirmed for the file ...
    let (code, out) = shapemc(&["validate-witness", s(&c), s(&w)]);
    assert_eq!(code, 10, "{out}");
    assert!(out.starts_with("UNSAFE: witness confirmed"), "{out}");
    // ... rejected for a mutated copy (another SHA-256)
    let m = d.path().join("sll_create_bug.c");
    let mut text = std::fs::read_to_string(&c).unwrap();
    text.push_str("/* mutated */\n");
    std::fs::write(&m, text).unwrap();
    let (code, out) = shapemc(&["validate-witness", s(&m), s(&w)]);
    assert_eq!(code, 20, "{out}");
    assert!(
        out.contains("witness rejected") && out.contains("another file"),
        "{out}"
    );
    // a witness whose target is elsewhere is not confirmed
    let text = std::fs::read_to_string(&w).unwrap();
    let last_line = content.last().unwrap()["segment"][0]["waypoint"]["location"]["line"]
        .as_u64()
        .unwrap();
    let moved = text.replace(
        &format!("line: {last_line}\n"),
        &format!("line: {}\n", last_line + 1000),
    );
    let w2 = d.path().join("w2.yml");
    std::fs::write(&w2, moved).unwrap();
    let (code, out) = shapemc(&["validate-witness", s(&c), s(&w2)]);
    assert_eq!(code, 20, "{out}");
}

#[test]
fn correctness_witness_states_loop_invariants_that_validate() {
    let d = tempfile::tempdir().unwrap();
    let c = bench("sll_length.c");
    let w = d.path().join("w.yml");
    // the three-valued domain's proof (the symbolic heaps', which `auto` finds first,
    // keeps `count + |rest| = len` with the length of a segment, which no C expression
    // over the program's variables states)
    let (code, out) = shapemc(&[
        "verify",
        s(&c),
        "--malloc-never-fails",
        "--timeout",
        "60",
        "--shape-domain",
        "tvla",
        "--witness",
        s(&w),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("correctness witness written to"), "{out}");
    let doc = read_yaml(&w);
    let e = &doc.as_sequence().unwrap()[0];
    assert_eq!(str_at(e, &["entry_type"]), "invariant_set");
    check_metadata(e, &c);
    let content = e["content"].as_sequence().unwrap();
    assert!(!content.is_empty(), "no invariant: {doc:?}");
    let src = std::fs::read_to_string(&c).unwrap();
    for item in content {
        let inv = &item["invariant"];
        assert_eq!(str_at(inv, &["type"]), "loop_invariant");
        assert_eq!(str_at(inv, &["format"]), "c_expression");
        assert!(!str_at(inv, &["value"]).is_empty());
        let loc = &inv["location"];
        check_location(loc, &c);
        // at a loop keyword
        let line = src
            .lines()
            .nth(loc["line"].as_u64().unwrap() as usize - 1)
            .unwrap();
        let col = loc["column"].as_u64().unwrap() as usize - 1;
        assert!(
            line[col..].starts_with("while") || line[col..].starts_with("for"),
            "{line}"
        );
    }
    let (code, out) = shapemc(&["validate-witness", s(&c), s(&w), "--timeout", "60"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("SAFE: witness confirmed"), "{out}");
    // a false invariant is refuted
    let text = std::fs::read_to_string(&w).unwrap();
    let v = str_at(&content[0]["invariant"], &["value"]);
    let wrong = text.replacen(&format!("value: {v}"), "value: '0'", 1);
    assert_ne!(wrong, text, "value not found as written: {v}");
    let w2 = d.path().join("w2.yml");
    std::fs::write(&w2, wrong).unwrap();
    let (code, out) = shapemc(&["validate-witness", s(&c), s(&w2), "--timeout", "60"]);
    assert_eq!(code, 20, "{out}");
    assert!(out.contains("refuted"), "{out}");
}

#[test]
fn task_files_answer_like_their_c_files_under_svcomp_options() {
    for name in ["sll_create", "sll_create_bug", "dll_reverse_bug"] {
        let (c_code, c_out) = shapemc(&[
            "verify",
            s(&bench(&format!("{name}.c"))),
            "--malloc-never-fails",
            "--timeout",
            "60",
        ]);
        let (y_code, y_out) = shapemc(&[
            "verify",
            s(&bench(&format!("{name}.yml"))),
            "--timeout",
            "60",
        ]);
        assert_eq!(c_code, y_code, "{name}: {c_out}\n---\n{y_out}");
        let verdict = c_out.lines().next().unwrap();
        assert!(
            y_out.contains(&format!("\nunreach-call: {verdict}\n")),
            "{name}: {y_out}"
        );
    }
}

#[test]
fn task_files_outside_the_front_end_are_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(bench("sll_create.c"), d.path().join("a.c")).unwrap();
    std::fs::create_dir(d.path().join("properties")).unwrap();
    std::fs::copy(
        bench("properties/unreach-call.prp"),
        d.path().join("properties/unreach-call.prp"),
    )
    .unwrap();
    let task = |opts: &str| {
        let y = d.path().join("t.yml");
        std::fs::write(
            &y,
            format!("format_version: '2.0'\ninput_files: 'a.c'\nproperties:\n  - property_file: properties/unreach-call.prp\n    expected_verdict: true\noptions:\n{opts}"),
        )
        .unwrap();
        shapemc(&["verify", s(&y), "--timeout", "30"])
    };
    let (code, _) = task("  language: C\n  data_model: LP64\n");
    assert_eq!(code, 3, "LP64 is refused, not read as ILP32");
    let (code, _) = task("  language: C\n  data_model: ILP64\n");
    assert_eq!(code, 2);
    let (code, out) = task("  language: C\n  data_model: ILP32\n");
    assert_eq!(code, 0, "{out}");
}

/// Bug fixed: the instrumented copy was read from a temporary folder, so a program
/// including a header beside it (`#include "list.h"`, as benchmarks/real does with
/// utlist.h) could not be read and its correctness witness was never confirmed.
#[test]
fn a_correctness_witness_of_a_program_with_a_local_header_validates() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("limit.h"),
        "#define LIMIT 3\nextern void reach_error(void);\n",
    )
    .unwrap();
    let c = d.path().join("count.c");
    std::fs::write(
        &c,
        "#include \"limit.h\"\nint main(void) {\n  int i = 0;\n  while (i < LIMIT) {\n    i++;\n  }\n  if (i != LIMIT) reach_error();\n  return 0;\n}\n",
    )
    .unwrap();
    let w = d.path().join("w.yml");
    let (code, out) = shapemc(&["verify", s(&c), "--timeout", "60", "--witness", s(&w)]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = shapemc(&["validate-witness", s(&c), s(&w), "--timeout", "60"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("SAFE: witness confirmed"), "{out}");
}

/// Bugs fixed: under a memory property `--witness` turned a replayed UNSAFE into exit
/// 2 ("the counterexample does not end with a reach_error() call"), and a task's
/// answer line dropped the violated subproperty (`valid-memsafety: UNSAFE`).
#[test]
fn a_memory_property_keeps_its_verdict_and_subproperty_with_witness() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().join("w.yml");
    let c = bench("memsafety/mem_double_free_bug.c");
    let (code, out) = shapemc(&[
        "verify",
        s(&c),
        "--property",
        "valid-memsafety",
        "--malloc-never-fails",
        "--witness",
        s(&w),
    ]);
    assert_eq!(code, 10, "{out}");
    assert!(out.starts_with("UNSAFE (valid-free)"), "{out}");
    assert!(!w.exists(), "a witness of a memory property was written");
    let yml = bench("memsafety/mem_double_free_bug.yml");
    let (code, out) = shapemc(&["verify", s(&yml), "--witness", s(&w)]);
    assert_eq!(code, 10, "{out}");
    assert!(
        out.lines()
            .any(|l| l == "valid-memsafety: UNSAFE (valid-free)"),
        "{out}"
    );
}
