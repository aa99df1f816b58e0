//! Certificates trust nothing: a heap certificate written by `verify` is mutated in
//! its header and in every part of its shape body (class recipes, structures, counts,
//! shape and explicit states, node links and coverings, precision), and
//! `check-certificate` must answer INVALID with a reason for each mutation, never
//! VALID and never a panic. Also: the certificate needs no flags to check, and names
//! its input by content.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

mod bench_util;
mod cli_util;

use cli_util::*;
use serde_json::{json, Value};
use shapemc::cegar::cli::{
    check_certificate, verify_file, CheckArgs, CheckOutcome, ShapeDomain, VerifyArgs,
};
use shapemc::cegar::Verdict;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cegar")
        .join(name)
}

/// The header and body of a certificate `verify` writes for `file` (as JSON values).
fn certificate_of(file: &Path, malloc_never_fails: bool) -> (Value, Value) {
    let d = tempfile::tempdir().expect("temporary directory");
    let path = d.path().join("c.json");
    let args = VerifyArgs {
        timeout: Some(120.0),
        malloc_never_fails,
        certificate: Some(path.clone()),
        // the heap certificate's body is what is mutated
        shape_domain: ShapeDomain::Tvla,
        ..Default::default()
    };
    let rep = verify_file(file, &args).expect("the file parses");
    assert_eq!(rep.verdict, Verdict::Safe, "{}", file.display());
    rep.certificate_file
        .expect("SAFE comes with a certificate")
        .write(&path)
        .expect("written");
    let text = std::fs::read_to_string(&path).expect("read back");
    let mut values = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    let header = values.next().expect("a header").expect("JSON");
    let body = values.next().expect("a body").expect("JSON");
    assert!(values.next().is_none());
    (header, body)
}

/// `check-certificate FILE` (library entry point, no flags) on the two values.
fn check(file: &Path, header: &Value, body: &Value) -> CheckOutcome {
    let d = tempfile::tempdir().expect("temporary directory");
    let path = d.path().join("m.json");
    std::fs::write(&path, format!("{header}\n{body}\n")).expect("written");
    check_certificate(file, &path, &CheckArgs::default()).expect("the file parses")
}

/// A mutation: its name, the change, and a part of the reason it must be rejected
/// with ("" for any reason).
type Mutation = (
    &'static str,
    Box<dyn Fn(&mut Value, &mut Value)>,
    &'static str,
);

/// Index of the first node satisfying `p`.
fn node_where(body: &Value, p: impl Fn(&Value) -> bool) -> usize {
    body["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .position(p)
        .expect("such a node")
}

/// The first (shape state, component key, structure entry) whose entry has counts.
fn counted_entry(body: &Value) -> (usize, String, usize) {
    for (i, sh) in body["shapes"]
        .as_array()
        .expect("shapes")
        .iter()
        .enumerate()
    {
        for (k, c) in sh["comps"].as_object().expect("comps") {
            for (j, e) in c["structs"].as_array().expect("structs").iter().enumerate() {
                if !e[1].is_null() && e[1]["rows"].as_array().is_some_and(|r| !r.is_empty()) {
                    return (i, k.clone(), j);
                }
            }
        }
    }
    panic!("no structure with counts");
}

/// Applies `f` to the counts of every structure entry of every shape state that has
/// counts.
fn for_each_counted(body: &mut Value, mut f: impl FnMut(&mut Value)) {
    for sh in body["shapes"].as_array_mut().expect("shapes") {
        for c in sh["comps"].as_object_mut().expect("comps").values_mut() {
            for e in c["structs"].as_array_mut().expect("structs") {
                if e[1].is_object() {
                    f(&mut e[1]);
                }
            }
        }
    }
}

fn mutations() -> Vec<Mutation> {
    fn m(
        name: &'static str,
        f: impl Fn(&mut Value, &mut Value) + 'static,
        why: &'static str,
    ) -> Mutation {
        (name, Box::new(f), why)
    }
    vec![
        // the forged certificate of the issue: two nodes left, nothing to cover
        m(
            "keep only the first two nodes",
            |h, b| {
                h["nodes"] = json!(2);
                b["nodes"].as_array_mut().expect("nodes").truncate(2);
            },
            "missing from the tree",
        ),
        m(
            "a node count the body does not have",
            |h, _| h["nodes"] = json!(3),
            "announces",
        ),
        m(
            "a class with an integrity constraint",
            |_, b| b["classes"][0]["constraints"] = json!([{"Const": "False"}]),
            "unknown field",
        ),
        m(
            "a class of an unknown structure",
            |_, b| b["classes"][0]["scg"]["Gen"]["structure"] = json!("nope"),
            "unknown structure",
        ),
        m(
            "a class with an unknown family",
            |_, b| b["classes"][0]["scg"]["Gen"]["families"] = json!(["cyclic", "no-such-family"]),
            "has no family",
        ),
        m(
            "a class with one more family (another vocabulary)",
            |_, b| {
                let f = b["classes"][0]["scg"]["Gen"]["families"]
                    .as_array_mut()
                    .expect("families");
                f.retain(|x| x != "seg");
                f.push(json!("seg"));
            },
            "values",
        ),
        m(
            "a class without its families",
            |_, b| b["classes"][0]["scg"]["Gen"]["families"] = json!([]),
            "values",
        ),
        m(
            "a class binding a role to an integer field",
            |_, b| b["classes"][0]["scg"]["Gen"]["binding"]["next"] = json!("data"),
            "no pointer field",
        ),
        m(
            "a class of a struct type that does not exist",
            |_, b| b["classes"][0]["strukt"] = json!(99),
            "does not exist",
        ),
        m(
            "a counter that is no variable",
            |_, b| b["classes"][0]["counters"] = json!(["main::len", "nobody"]),
            "counter",
        ),
        m(
            "counts in a class without counters",
            |_, b| b["classes"][0]["counters"] = json!([]),
            "without counters",
        ),
        m(
            "a malformed field assertion",
            |_, b| {
                b["classes"][0]["d"]["assertions"] = json!(["data === 1"]);
            },
            "malformed field assertion",
        ),
        m(
            "a tracked pointer dropped from the class",
            |_, b| {
                let t = b["classes"][0]["d"]["tracked"].as_array_mut().expect("T");
                t.pop();
                let s = b["classes"][0]["d"]["separating"]
                    .as_array_mut()
                    .expect("Ts");
                s.pop();
            },
            "values",
        ),
        m(
            "a bad structure value",
            |_, b| {
                let v = b["structures"][1]["values"].as_str().expect("values");
                b["structures"][1]["values"] = json!(format!("7{}", &v[1..]));
            },
            "bad structure value",
        ),
        m(
            "a structure with a node more than its values",
            |_, b| {
                let n = b["structures"][1]["nodes"].as_u64().expect("nodes");
                b["structures"][1]["nodes"] = json!(n + 1);
            },
            "values",
        ),
        m(
            "a structure of a class that does not exist",
            |_, b| b["structures"][0]["class"] = json!(5),
            "does not exist",
        ),
        m(
            "every structure without facts",
            |_, b| {
                for s in b["structures"].as_array_mut().expect("structures") {
                    let n = s["values"].as_str().expect("values").len();
                    s["values"] = json!("0".repeat(n));
                }
            },
            "",
        ),
        m(
            "counts of the wrong width",
            |_, b| {
                let (i, k, j) = counted_entry(b);
                b["shapes"][i]["comps"][&k]["structs"][j][1]["rows"][0]
                    .as_array_mut()
                    .expect("row")
                    .push(json!(0));
            },
            "coefficients",
        ),
        m(
            "stricter counts (a counter fixed to 12345)",
            |_, b| {
                for_each_counted(b, |counts| {
                    let Some(rows) = counts["rows"].as_array() else {
                        return;
                    };
                    let width = rows.first().and_then(|r| r.as_array()).map(|r| r.len());
                    if let Some(w) = width {
                        let mut row = vec![json!(0); w];
                        row[0] = json!(1);
                        row[w - 1] = json!(12345);
                        counts["rows"]
                            .as_array_mut()
                            .expect("rows")
                            .push(json!(row));
                    }
                })
            },
            "",
        ),
        m(
            "counts that say no heap",
            |_, b| for_each_counted(b, |counts| counts["bottom"] = json!(true)),
            "",
        ),
        m(
            "a component of a class that does not exist",
            |_, b| {
                for c in b["shapes"][0]["comps"]
                    .as_object_mut()
                    .expect("comps")
                    .values_mut()
                {
                    c["class"] = json!(9);
                }
            },
            "does not exist",
        ),
        m(
            "a component naming a structure that does not exist",
            |_, b| {
                for c in b["shapes"][0]["comps"]
                    .as_object_mut()
                    .expect("comps")
                    .values_mut()
                {
                    c["structs"] = json!([[100000, null]]);
                }
            },
            "does not exist",
        ),
        m(
            "a component of a struct type that does not exist",
            |_, b| {
                let c = b["shapes"][0]["comps"]["0"].clone();
                b["shapes"][0]["comps"]["7"] = c;
            },
            "no struct type",
        ),
        m(
            "malformed load provenance",
            |_, b| b["shapes"][0]["loaded"] = json!({"0": [100000, {"strukt": 0, "field": 0}]}),
            "provenance",
        ),
        m(
            "the root's shape state taken from a node deep in the tree",
            |_, b| {
                let root = b["nodes"][0]["shape"].clone();
                let deep = b["nodes"]
                    .as_array()
                    .expect("nodes")
                    .iter()
                    .rev()
                    .map(|n| n["shape"].clone())
                    .find(|s| *s != root)
                    .expect("another shape state");
                b["nodes"][0]["shape"] = deep;
            },
            "",
        ),
        m(
            "an inner node's shape state emptied",
            |_, b| {
                let i = node_where(b, |n| n["parent"] == json!(0) && n["covered_by"].is_null());
                let k = b["shapes"].as_array().expect("shapes").len();
                let mut empty =
                    b["shapes"][b["nodes"][i]["shape"].as_u64().expect("id") as usize].clone();
                for c in empty["comps"].as_object_mut().expect("comps").values_mut() {
                    c["structs"] = json!([]);
                }
                b["shapes"].as_array_mut().expect("shapes").push(empty);
                b["nodes"][i]["shape"] = json!(k);
            },
            "",
        ),
        m(
            "a node naming a shape state that does not exist",
            |_, b| b["nodes"][1]["shape"] = json!(100000),
            "does not exist",
        ),
        m(
            "a node naming an explicit state that does not exist",
            |_, b| b["nodes"][1]["explicit"] = json!(100000),
            "does not exist",
        ),
        m(
            "a covering by a node at another location",
            |_, b| {
                let i = node_where(b, |n| !n["covered_by"].is_null());
                b["nodes"][i]["covered_by"] = json!(0);
            },
            "another location",
        ),
        m(
            "further covering nodes without a first one",
            |_, b| {
                let i = node_where(b, |n| n["covered_by"].is_null() && !n["parent"].is_null());
                b["nodes"][i]["covered_also"] = json!([0]);
            },
            "without a first one",
        ),
        m(
            "a parent younger than its child",
            |_, b| {
                let last = b["nodes"].as_array().expect("nodes").len() - 1;
                b["nodes"][1]["parent"] = json!(last);
            },
            "older",
        ),
        m(
            "a step that does not lead to the node",
            |_, b| b["nodes"][1]["step"] = json!({"Edge": 0}),
            "does not lead",
        ),
        m(
            "the precision without its shape classes",
            |_, b| b["precision"]["shape_global"] = json!({}),
            "",
        ),
        m(
            "a merge location that does not exist",
            |_, b| b["precision"]["merge_at"] = json!([1000000]),
            "no location",
        ),
        m(
            "an older format",
            |h, _| h["format"] = json!("shapemc-certificate-1"),
            "unknown certificate format",
        ),
        m(
            "another input file",
            |h, _| h["input_sha256"] = json!("0".repeat(64)),
            "another file",
        ),
        m(
            "another SCG library",
            |h, _| h["scg_library_sha256"] = json!("1".repeat(64)),
            "another SCG library",
        ),
        m(
            "the promoted program of a file with nothing to promote",
            |h, _| h["program"] = json!("promoted"),
            "nothing to promote",
        ),
    ]
}

#[test]
fn every_mutation_of_a_heap_certificate_is_invalid_with_a_reason() {
    let f = data("sll_count_safe.c");
    let (header, body) = certificate_of(&f, false);
    assert_eq!(check(&f, &header, &body), CheckOutcome::Valid);
    let ms = mutations();
    assert!(ms.len() >= 20);
    let mut failures = Vec::new();
    for (name, mutate, why) in &ms {
        let (mut h, mut b) = (header.clone(), body.clone());
        mutate(&mut h, &mut b);
        assert!(
            h != header || b != body,
            "{name}: the mutation changed nothing"
        );
        match check(&f, &h, &b) {
            CheckOutcome::Invalid(reason) if reason.contains(why) && !reason.is_empty() => {}
            other => failures.push(format!("{name}: {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_certificate_needs_no_flags_and_names_what_it_proves() {
    // written with --malloc-never-fails: VALID as written, without any flag
    let f = data("sll_count_safe.c");
    let (header, body) = certificate_of(&f, true);
    assert_eq!(header["malloc_never_fails"], json!(true));
    assert_eq!(check(&f, &header, &body), CheckOutcome::Valid);
    // the same states claimed for the program where allocation may fail: rejected
    let mut h = header.clone();
    h["malloc_never_fails"] = json!(false);
    assert!(matches!(check(&f, &h, &body), CheckOutcome::Invalid(_)));
    // a flag that contradicts the header is refused, naming it
    let d = tempfile::tempdir().expect("temporary directory");
    let path = d.path().join("c.json.zst");
    let (h0, b0) = certificate_of(&f, false);
    std::fs::write(d.path().join("p.json"), format!("{h0}\n{b0}\n")).expect("written");
    let (code, out) = shapemc(&[
        "check-certificate",
        f.to_str().expect("utf8"),
        d.path().join("p.json").to_str().expect("utf8"),
        "--malloc-never-fails",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("--malloc-never-fails"), "{out}");
    // compressed certificates (`.zst`) check too
    let (code, out) = shapemc(&[
        "verify",
        f.to_str().expect("utf8"),
        "--certificate",
        path.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 0, "{out}");
    let bytes = std::fs::read(&path).expect("written");
    assert_eq!(&bytes[..4], &[0x28, 0xb5, 0x2f, 0xfd], "zstd frame");
    let (code, out) = shapemc(&[
        "check-certificate",
        f.to_str().expect("utf8"),
        path.to_str().expect("utf8"),
    ]);
    assert_eq!((code, out.trim()), (0, "VALID"));
    // checked against another file: says so
    let other = data("toggle_safe.c");
    let (code, out) = shapemc(&[
        "check-certificate",
        other.to_str().expect("utf8"),
        path.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("another file"), "{out}");
    // garbage and a cut file: INVALID, no panic
    for junk in [
        &b"\x28\xb5\x2f\xfd\x00\x01"[..],
        b"{\"format\":",
        &bytes[..bytes.len() / 2],
    ] {
        std::fs::write(d.path().join("j"), junk).expect("written");
        let (code, out) = shapemc(&[
            "check-certificate",
            f.to_str().expect("utf8"),
            d.path().join("j").to_str().expect("utf8"),
        ]);
        assert_eq!(code, 1, "{out}");
        assert!(out.starts_with("INVALID: "), "{out}");
    }
}

#[test]
fn the_forged_two_node_certificate_of_the_svcomp_list_is_invalid() {
    // issue #28: the shape classes' constraints forged to false and all but two nodes
    // dropped was VALID; classes are recipes now, and two nodes do not close the tree
    let Some(f) = bench_util::shared_bench_path(
        "the_forged_two_node_certificate_of_the_svcomp_list_is_invalid",
        "svcomp/list-properties__simple-2.c",
    ) else {
        return;
    };
    let (mut h, mut b) = certificate_of(&f, true);
    assert_eq!(check(&f, &h, &b), CheckOutcome::Valid);
    h["nodes"] = json!(2);
    b["nodes"].as_array_mut().expect("nodes").truncate(2);
    match check(&f, &h, &b) {
        CheckOutcome::Invalid(r) => assert!(r.contains("missing from the tree"), "{r}"),
        other => panic!("{other:?}"),
    }
    b["classes"][0]["constraints"] = json!([{"Const": "False"}]);
    assert!(matches!(check(&f, &h, &b), CheckOutcome::Invalid(_)));
}
