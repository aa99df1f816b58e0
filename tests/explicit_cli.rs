//! `shapemc samples`: output formats and exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use std::process::Command;

mod bench_util;

fn samples(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_shapemc"))
        .arg("samples")
        .args(args)
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn text_dot_json_on_a_dll_task() {
    let Some(f) =
        bench_util::shared_bench_path("text_dot_json_on_a_dll_task", "seeds/dll_concat.c")
    else {
        return;
    };
    let f = f.to_string_lossy().into_owned();
    let (rc, out, err) = samples(&[&f]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("5 sample(s)"), "{out}");
    assert!(out.contains("{data: 0, succ: "), "{out}");
    assert!(out.contains("struct node: dll"), "{out}");
    assert!(
        out.contains("holds: doubly_linked(next=succ, prev=pred)"),
        "{out}"
    );

    let (rc, out, _) = samples(&[&f, "--format", "dot", "--samples", "2"]);
    assert_eq!(rc, 0);
    assert!(
        out.starts_with("digraph samples {") && out.contains("cluster_1"),
        "{out}"
    );

    let (rc, out, _) = samples(&[&f, "--format", "json", "--samples", "3", "--min-nodes", "5"]);
    assert_eq!(rc, 0);
    let j: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(j["samples"], 3);
    let node = &j["structs"][0];
    assert_eq!(node["struct"], "node");
    assert_eq!(node["data_structure"]["kind"], "dll");
    assert_eq!(
        node["data_structure"]["fields"],
        serde_json::json!(["succ", "pred"])
    );
    assert!(node["sample_sizes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|n| n.as_u64().unwrap() >= 5));
    let names: Vec<&str> = node["invariants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"doubly_linked") && !names.contains(&"binary_tree"),
        "{names:?}"
    );
}

#[test]
fn exit_codes() {
    let (rc, _, err) = samples(&["/nonexistent/x.c"]);
    assert_eq!(rc, 2, "{err}");
    // an unsupported construct: exit 3 (was the shared bubble_sort_linux-1, which #29
    // made supported)
    let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/real_c/two_links_void_cast.c");
    let (rc, _, err) = samples(&[&f.to_string_lossy()]);
    assert_eq!(rc, 3, "{err}");
    assert!(err.contains("unsupported"), "{err}");
}

#[test]
fn no_single_site_in_the_middle_of_an_update_decides_the_data_structure() {
    // a regression: the first five deep heaps all came from the return of a check
    // called between CDL_REPLACE_ELEM and the free of the replaced cell, whose stale
    // links break every invariant; the type was `unknown` and stayed explicit, so the
    // refinement failed on its data facts
    let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/real/ut_cdl_elem.c");
    let (rc, out, err) = samples(&[&f.to_string_lossy()]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("struct el: cyclic_dll"), "{out}");
    let sites: std::collections::BTreeSet<&str> = out
        .lines()
        .filter(|l| l.starts_with("sample "))
        .filter_map(|l| l.split(" at ").nth(1)?.split(',').next())
        .collect();
    assert!(sites.len() >= 3, "{sites:?}\n{out}");
}
