//! End-to-end test of `shapemc bench` on a tiny task folder: one safe task, one unsafe
//! task, and one whose only property (valid-memsafety) is not supported. Written so that it
//! stays correct when `verify` starts answering: the two unreach-call tasks may be
//! `correct` or `unknown`, never `wrong`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const HEADER: &str = "extern void abort(void);\n\
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));\n\
void reach_error() { __assert_fail(\"0\", \"t.c\", __LINE__, \"reach_error\"); }\n\
extern int __VERIFIER_nondet_int(void);\n\
#include <stdlib.h>\n";

const BODY: &str = "struct node { int data; struct node *next; };\n\
int main(void) {\n\
  struct node *n = (struct node *) malloc(sizeof(struct node));\n\
  if (!n) abort();\n\
  n->data = 0;\n\
  n->next = NULL;\n\
  if (__VERIFIER_nondet_int()) n->data = CHANGE;\n\
  if (!(n->data == 0)) reach_error();\n\
  free(n);\n\
  return 0;\n\
}\n";

fn yml(input: &str, props: &[(&str, bool)]) -> String {
    let mut s = format!("format_version: '2.0'\n\ninput_files: '{input}'\n\nproperties:\n");
    for (p, v) in props {
        s.push_str(&format!(
            "  - property_file: ../properties/{p}.prp\n    expected_verdict: {v}\n"
        ));
    }
    s.push_str("\noptions:\n  language: C\n  data_model: ILP32\n");
    s
}

/// A fresh temporary folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("shapemc-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// root/properties/*.prp and root/tasks/{safe,unsafe,memsafety_only}.{c,yml}
fn make_tasks(root: &Path) -> PathBuf {
    let props = root.join("properties");
    fs::create_dir_all(&props).unwrap();
    fs::write(
        props.join("unreach-call.prp"),
        "CHECK( init(main()), LTL(G ! call(reach_error())) )\n",
    )
    .unwrap();
    fs::write(
        props.join("valid-memsafety.prp"),
        "CHECK( init(main()), LTL(G valid-free) )\nCHECK( init(main()), LTL(G valid-deref) )\nCHECK( init(main()), LTL(G valid-memtrack) )\n",
    )
    .unwrap();
    let tasks = root.join("tasks");
    fs::create_dir_all(&tasks).unwrap();
    let c = |change: &str| format!("{HEADER}\n{}", BODY.replace("CHANGE", change));
    fs::write(tasks.join("safe.c"), c("0")).unwrap();
    fs::write(
        tasks.join("safe.yml"),
        yml("safe.c", &[("unreach-call", true)]),
    )
    .unwrap();
    fs::write(tasks.join("unsafe.c"), c("1")).unwrap();
    fs::write(
        tasks.join("unsafe.yml"),
        yml("unsafe.c", &[("unreach-call", false)]),
    )
    .unwrap();
    fs::write(tasks.join("memsafety_only.c"), c("0")).unwrap();
    fs::write(
        tasks.join("memsafety_only.yml"),
        yml("memsafety_only.c", &[("valid-memsafety", true)]),
    )
    .unwrap();
    tasks
}

fn shapemc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shapemc"))
}

#[test]
fn scoreboard_table_summary_and_json() {
    let tmp = TempDir::new("bench-scoreboard");
    let tasks = make_tasks(&tmp.0);
    let results = tmp.0.join("results");
    let out = shapemc()
        .arg("bench")
        .arg(&tasks)
        .args(["--jobs", "2", "--timeout", "60", "--memory-limit", "4096"])
        .arg("--results")
        .arg(&results)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The table: a header, 3 rows (sorted by name), the summary line.
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    let cols: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        cols,
        [
            "task",
            "expected",
            "got",
            "result",
            "seconds",
            "refinements",
            "reason"
        ]
    );
    let row = |i: usize| lines[i].split_whitespace().collect::<Vec<_>>();
    let (skipped, safe, unsafe_) = (row(1), row(2), row(3));
    assert_eq!(&skipped[..4], ["tasks/memsafety_only", "-", "-", "skipped"]);
    assert!(
        lines[1].contains("unsupported property: valid-memsafety"),
        "{}",
        lines[1]
    );
    assert_eq!(&safe[..2], ["tasks/safe", "true"]);
    assert!(["correct", "unknown"].contains(&safe[3]), "{}", lines[2]);
    assert_eq!(&unsafe_[..2], ["tasks/unsafe", "false"]);
    assert!(["correct", "unknown"].contains(&unsafe_[3]), "{}", lines[3]);

    // The summary line.
    let summary = lines[4];
    assert!(summary.starts_with("summary: 3 tasks, "), "{summary}");
    assert!(summary.contains(" 0 wrong, "), "{summary}");
    assert!(
        summary.contains(" 0 errors, 1 skipped, score "),
        "{summary}"
    );
    assert!(summary.ends_with(" s"), "{summary}");

    // The JSON.
    let text = fs::read_to_string(results.join("latest.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["kind"], "scoreboard");
    assert_eq!(v["run"]["jobs"], 2);
    assert_eq!(v["run"]["timeout_s"], 60.0);
    assert_eq!(v["run"]["memory_limit_mb"], 4096);
    let rows = v["tasks"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let names: Vec<&str> = rows.iter().map(|r| r["task"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["tasks/memsafety_only", "tasks/safe", "tasks/unsafe"]
    );
    let skip = &rows[0];
    assert_eq!(skip["result"], "skipped");
    assert_eq!(skip["got"], serde_json::Value::Null);
    assert_eq!(skip["expected"], serde_json::Value::Null);
    assert_eq!(skip["properties"], serde_json::json!(["valid-memsafety"]));
    assert!(skip["reason"].as_str().unwrap().contains("valid-memsafety"));
    let mut score = 0;
    for (r, expected, points) in [(&rows[1], true, 2), (&rows[2], false, 1)] {
        assert_eq!(r["expected"], expected);
        assert_eq!(r["properties"], serde_json::json!(["unreach-call"]));
        assert!(r["seconds"].as_f64().unwrap() >= 0.0);
        match r["result"].as_str().unwrap() {
            "correct" => {
                assert_eq!(r["got"], expected.to_string());
                assert_eq!(r["score"], points);
                score += points;
            }
            "unknown" => {
                assert!(["unknown", "timeout"].contains(&r["got"].as_str().unwrap()));
                assert_eq!(r["score"], 0);
            }
            other => panic!("unexpected result {other} in {r}"),
        }
        assert!(r.get("refinements_td").is_some() && r.get("refinements_scg").is_some());
    }
    let s = &v["summary"];
    assert_eq!(s["tasks"], 3);
    assert_eq!(s["skipped"], 1);
    assert_eq!(s["wrong"], 0);
    assert_eq!(s["errors"], 0);
    assert_eq!(s["score"], score);
    assert_eq!(
        s["correct"].as_u64().unwrap() + s["unknown"].as_u64().unwrap(),
        2
    );

    // The CSV and the timestamped copies.
    let files: Vec<String> = fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(files
        .iter()
        .any(|f| f.starts_with("scoreboard-") && f.ends_with(".json")));
    let csv = files
        .iter()
        .find(|f| f.starts_with("scoreboard-") && f.ends_with(".csv"))
        .unwrap();
    let csv = fs::read_to_string(results.join(csv)).unwrap();
    assert_eq!(csv.lines().count(), 4);
    assert!(csv.starts_with("task,expected,got,result,seconds,refinements,reason,score\n"));

    // --compare of a results file with itself: nothing changed.
    let latest = results.join("latest.json");
    let out = shapemc()
        .args(["bench", "--compare"])
        .arg(&latest)
        .arg(&latest)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("compare: 0 better, 0 worse, 3 unchanged, 0 new, 0 gone"),
        "{text}"
    );
}

#[test]
fn compare_reports_better_and_worse() {
    let tmp = TempDir::new("bench-compare");
    let row = |task: &str, got: &str, result: &str, score: i64| {
        serde_json::json!({
            "task": task, "file": format!("{task}.yml"), "properties": ["unreach-call"],
            "expected": true, "got": got, "result": result, "score": score, "seconds": 1.0,
            "exit_code": null, "refinements_td": null, "refinements_scg": null, "reason": ""
        })
    };
    let report = |rows: Vec<serde_json::Value>| {
        serde_json::json!({
            "kind": "scoreboard",
            "run": {"version": "0", "started": "", "folders": [], "jobs": 1,
                    "timeout_s": 60.0, "memory_limit_mb": 4096},
            "tasks": rows,
            "summary": {"tasks": 0, "correct": 0, "correct_true": 0, "correct_false": 0,
                        "wrong": 0, "wrong_true": 0, "wrong_false": 0, "unknown": 0,
                        "timeouts": 0, "errors": 0, "skipped": 0, "score": 0,
                        "seconds": 0.0, "task_seconds": 0.0}
        })
        .to_string()
    };
    let old = tmp.0.join("old.json");
    let new = tmp.0.join("new.json");
    fs::write(
        &old,
        report(vec![
            row("a", "unknown", "unknown", 0),
            row("b", "true", "correct", 2),
        ]),
    )
    .unwrap();
    fs::write(
        &new,
        report(vec![
            row("a", "true", "correct", 2),
            row("b", "timeout", "unknown", 0),
        ]),
    )
    .unwrap();
    let out = shapemc()
        .args(["bench", "--compare"])
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("better  a: unknown (unknown) -> correct (true), score 0 -> 2"),
        "{text}"
    );
    assert!(
        text.contains("worse   b: correct (true) -> unknown (timeout), score 2 -> 0"),
        "{text}"
    );
    assert!(
        text.contains("compare: 1 better, 1 worse, 0 unchanged, 0 new, 0 gone; score 2 -> 2"),
        "{text}"
    );
}

#[test]
fn verify_accepts_the_scoreboard_contract() {
    let tmp = TempDir::new("bench-verify");
    let tasks = make_tasks(&tmp.0);
    let stats = tmp.0.join("stats.json");
    let out = shapemc()
        .arg("verify")
        .arg(tasks.join("safe.c"))
        .args([
            "--timeout",
            "30",
            "--memory-limit",
            "2048",
            "--scg",
            "maximal",
        ])
        .arg("--stats-json")
        .arg(&stats)
        .output()
        .unwrap();
    assert!([0, 20].contains(&out.status.code().unwrap()), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&stats).unwrap()).unwrap();
    assert!(v.is_object());
}
