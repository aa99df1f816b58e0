//! `verify --shape-domain symheap|auto` end to end: list programs are SAFE with a
//! certificate that `check-certificate` re-checks, bugs are UNSAFE with a replayed
//! counterexample, memory properties are refused, and a certificate of the
//! symbolic-heap CPA trusts nothing: every mutation below is INVALID (never VALID,
//! never a panic).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

mod cli_util;

use cli_util::*;
use serde_json::{json, Value};
use shapemc::cegar::cli::{check_certificate, CheckArgs, CheckOutcome};
use std::path::{Path, PathBuf};

fn bench(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benchmarks")
        .join(name)
}

/// The shared SV-COMP task `name`, if this checkout has `../shared`.
fn shared_svcomp(name: &str) -> Option<PathBuf> {
    let f = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/bench/svcomp")
        .join(name);
    f.exists().then_some(f)
}

/// The indices of the nodes whose symbolic heap's counts satisfy `pred`.
fn nodes_whose_counts(body: &Value, pred: impl Fn(&Value) -> bool) -> Vec<usize> {
    body["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, n)| pred(&n["state"][0]["counts"]))
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn lists_are_safe_with_checked_certificates_and_bugs_replay() {
    for t in [
        "dll_concat.c",
        "dll_remove.c",
        "sll_split.c",
        "cdll_insert.c",
    ] {
        let out = assert_safe_with_checked_certificate(&bench(t), &["--shape-domain", "symheap"]);
        assert!(
            out.contains("refinements: 0 (predicates)") || out.contains("refinements:"),
            "{out}"
        );
    }
    for t in ["dll_concat_bug.c", "sll_split_bug.c"] {
        assert_unsafe_with_replay_using(&bench(t), &["--shape-domain", "symheap"], None);
    }
    // a singly-linked list linked back one object at a time, then walked both ways:
    // an object's link back into the doubly-linked prefix is not folded away
    if let Some(f) = shared_svcomp("heap-manipulation__sll_to_dll_rev-2.c") {
        assert_safe_with_checked_certificate(&f, &["--shape-domain", "symheap"]);
    }
}

#[test]
fn integer_fields_are_tracked_then_split_as_the_refinement_needs() {
    // utlist's LL macros with data stored as `nondet() != 0`: tracked, pooled {0,1}
    let out = assert_safe_with_checked_certificate(
        &bench("real/ut_ll_ops.c"),
        &["--shape-domain", "symheap"],
    );
    assert!(out.contains("track el.data"), "{out}");
    // the first node keeps 1 and ends last after the reversal: its value must stay
    // apart from the 0s of the rest; tracking keeps an object with a value no other
    // object has apart when folding, so no split is needed (before session 45 the
    // failed refinement split every tracked field)
    let out = assert_safe_with_checked_certificate(
        &bench("sll_reverse.c"),
        &["--shape-domain", "symheap"],
    );
    assert!(out.contains("track node.data"), "{out}");
    assert!(!out.contains("fold apart"), "{out}");
    assert_unsafe_with_replay_using(
        &bench("sll_reverse_bug.c"),
        &["--shape-domain", "symheap"],
        None,
    );
}

#[test]
fn a_glibc_stailq_is_proved_through_field_addresses() {
    // `stqh_last` holds `&elm->link.stqe_next` (or `&head->stqh_first`): a field
    // address; inserting at the tail stores through it
    let out = assert_safe_with_checked_certificate(
        &bench("real/q_stailq_queue.c"),
        &["--shape-domain", "symheap"],
    );
    assert!(out.contains("track job.data"), "{out}");
    // LIST and TAILQ link back by field address (`le_prev`, `tqe_prev`): segments
    // whose links back are `&prev->next`
    for t in ["real/q_list_remove.c", "real/q_tailq_insert.c"] {
        assert_safe_with_checked_certificate(&bench(t), &["--shape-domain", "symheap"]);
    }
    for t in ["real/q_list_remove_bug.c", "real/q_tailq_insert_bug.c"] {
        assert_unsafe_with_replay_using(&bench(t), &["--shape-domain", "symheap"], None);
    }
}

#[test]
fn auto_proves_with_symbolic_heaps_first_and_falls_back_to_three_valued_structures() {
    // benchmarks/dll_concat: the three-valued domain does not prove it in 20 s
    let out = assert_safe_with_checked_certificate(&bench("dll_concat.c"), &[]);
    assert!(out.contains("shape domain: symbolic heaps"), "{out}");
    // `p->data == key` relates a field to an integer variable, which symbolic heaps
    // do not (sll_length was this test's task until they counted)
    let out = assert_safe_with_checked_certificate(&bench("sll_remove_all.c"), &[]);
    assert!(
        out.contains("symbolic heaps first") && out.contains("then three-valued structures"),
        "{out}"
    );
}

#[test]
fn memory_properties_are_refused_by_symheap() {
    let f = bench("dll_concat.c");
    let (code, _) = shapemc(&[
        "verify",
        f.to_str().unwrap(),
        "--shape-domain",
        "symheap",
        "--property",
        "valid-memsafety",
    ]);
    assert_eq!(code, 2);
}

/// The header and body of the symbolic-heap certificate of `file`.
fn certificate_of(file: &Path) -> (Value, Value) {
    let d = tempfile::tempdir().unwrap();
    let c = d.path().join("c.json");
    let (code, out) = shapemc(&[
        "verify",
        file.to_str().unwrap(),
        "--shape-domain",
        "symheap",
        "--certificate",
        c.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    let text = std::fs::read_to_string(&c).unwrap();
    let mut values = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    let header = values.next().unwrap().unwrap();
    let body = values.next().unwrap().unwrap();
    assert_eq!(header["cpa"], json!("pred+symheap"));
    (header, body)
}

fn check(file: &Path, header: &Value, body: &Value) -> CheckOutcome {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("m.json");
    std::fs::write(&path, format!("{header}\n{body}\n")).unwrap();
    check_certificate(file, &path, &CheckArgs::default()).expect("the file parses")
}

/// A named change to a certificate's body.
type Mutation = (&'static str, Box<dyn Fn(&mut Value)>);

/// Every mutation of `body` makes the certificate INVALID (never VALID, never a panic).
fn assert_all_invalid(file: &Path, header: &Value, body: &Value, muts: &[Mutation]) {
    for (name, f) in muts {
        let mut b = body.clone();
        f(&mut b);
        match check(file, header, &b) {
            CheckOutcome::Invalid(_) => {}
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// The first node whose symbolic heap has an atom of kind `kind` (`Pt`, `Dls`, ...).
fn node_with(body: &Value, kind: &str) -> usize {
    body["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| {
            n["state"][0]["atoms"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x.get(kind).is_some()))
        })
        .unwrap_or_else(|| panic!("no node with a {kind}"))
}

#[test]
fn a_symbolic_heap_certificate_trusts_nothing() {
    let file = bench("dll_concat.c");
    let (header, body) = certificate_of(&file);
    assert!(matches!(check(&file, &header, &body), CheckOutcome::Valid));
    let dls = node_with(&body, "Dls");
    let pt = node_with(&body, "Pt");
    let muts: Vec<Mutation> = vec![
        (
            "drop a node's atoms",
            Box::new(move |b| b["nodes"][pt]["state"][0]["atoms"] = json!([])),
        ),
        (
            "a segment linked by an integer field",
            Box::new(move |b| {
                let a = b["nodes"][dls]["state"][0]["atoms"].as_array_mut().unwrap();
                let d = a.iter_mut().find(|x| x.get("Dls").is_some()).unwrap();
                d["Dls"]["next"] = json!(0);
            }),
        ),
        (
            "a segment with equal links",
            Box::new(move |b| {
                let a = b["nodes"][dls]["state"][0]["atoms"].as_array_mut().unwrap();
                let d = a.iter_mut().find(|x| x.get("Dls").is_some()).unwrap();
                d["Dls"]["prev"] = d["Dls"]["next"].clone();
            }),
        ),
        (
            "an id out of range",
            Box::new(move |b| {
                let a = b["nodes"][pt]["state"][0]["atoms"].as_array_mut().unwrap();
                let p = a.iter_mut().find(|x| x.get("Pt").is_some()).unwrap();
                p["Pt"]["at"] = json!(4_000_000_000u64);
            }),
        ),
        (
            "an object with a field missing",
            Box::new(move |b| {
                let a = b["nodes"][pt]["state"][0]["atoms"].as_array_mut().unwrap();
                let p = a.iter_mut().find(|x| x.get("Pt").is_some()).unwrap();
                p["Pt"]["fields"].as_array_mut().unwrap().pop();
            }),
        ),
        (
            "an object allocated twice",
            Box::new(move |b| {
                let a = b["nodes"][pt]["state"][0]["atoms"].as_array_mut().unwrap();
                let p = a.iter().find(|x| x.get("Pt").is_some()).unwrap().clone();
                a.push(p);
            }),
        ),
        (
            "a variable that does not exist",
            Box::new(move |b| {
                b["nodes"][pt]["state"][0]["vars"] = json!([[999_999, "Null"]]);
            }),
        ),
        (
            "the root's successors dropped",
            Box::new(|b| {
                let n = b["nodes"].as_array_mut().unwrap();
                n.truncate(1);
            }),
        ),
        (
            "a segment's facts on a pointer field",
            Box::new(move |b| {
                let a = b["nodes"][dls]["state"][0]["atoms"].as_array_mut().unwrap();
                let d = a.iter_mut().find(|x| x.get("Dls").is_some()).unwrap();
                d["Dls"]["data"] = json!([[1, [0]]]);
            }),
        ),
        (
            "a segment's objects claimed to hold 7",
            Box::new(move |b| {
                let a = b["nodes"][dls]["state"][0]["atoms"].as_array_mut().unwrap();
                let d = a.iter_mut().find(|x| x.get("Dls").is_some()).unwrap();
                d["Dls"]["data"] = json!([[0, [7]]]);
            }),
        ),
        (
            "a segment whose links back claim to be field addresses",
            Box::new(move |b| {
                let a = b["nodes"][dls]["state"][0]["atoms"].as_array_mut().unwrap();
                let d = a.iter_mut().find(|x| x.get("Dls").is_some()).unwrap();
                d["Dls"]["by_field"] = json!(true);
            }),
        ),
        (
            "a precision naming a pointer field",
            Box::new(move |b| {
                let a = b["nodes"][dls]["state"][0]["atoms"].as_array().unwrap();
                let d = a.iter().find(|x| x.get("Dls").is_some()).unwrap();
                let next = d["Dls"]["next"].clone();
                let strukt = d["Dls"]["strukt"].clone();
                b["precision"][0]["split"] = json!([{ "strukt": strukt, "field": next }]);
            }),
        ),
        (
            "an object's value set on a pointer field",
            Box::new(move |b| {
                let a = b["nodes"][dls]["state"][0]["atoms"].as_array().unwrap();
                let next =
                    a.iter().find(|x| x.get("Dls").is_some()).unwrap()["Dls"]["next"].clone();
                let a = b["nodes"][pt]["state"][0]["atoms"].as_array_mut().unwrap();
                let p = a.iter_mut().find(|x| x.get("Pt").is_some()).unwrap();
                p["Pt"]["data"] = json!([[next, [0, 1]]]);
            }),
        ),
        (
            "an object's value set of one value (not in normal form)",
            Box::new(move |b| {
                let a = b["nodes"][pt]["state"][0]["atoms"].as_array_mut().unwrap();
                let p = a.iter_mut().find(|x| x.get("Pt").is_some()).unwrap();
                p["Pt"]["fields"][0] = json!("Unknown");
                p["Pt"]["data"] = json!([[0, [7]]]);
            }),
        ),
        (
            "another CPA's name",
            Box::new(|b| b["cpa"] = json!("predabs")),
        ),
    ];
    assert_all_invalid(&file, &header, &body, &muts);
}

#[test]
fn a_first_phase_past_the_whole_time_limit_leaves_the_second_a_deadline() {
    // a regression: the time left after the symbolic heaps was passed on even when
    // negative, which the second phase read as no limit at all (sll_length is SAFE
    // with the three-valued domain in about 0.3 s, so without a deadline it answered)
    use shapemc::cegar::cli::{verify_file, VerifyArgs};
    let args = VerifyArgs {
        timeout: Some(0.0001),
        ..Default::default()
    };
    let rep = verify_file(&bench("sll_length.c"), &args).unwrap();
    assert!(rep.verdict.out_of_time(), "{:?}", rep.verdict);
}

#[test]
fn counters_equal_to_lengths_are_proved_and_their_certificates_trust_nothing() {
    // `len` counts the nodes built and removed, `count` those walked: the interpolants
    // compare them, the predicates alone cannot, so both are counted next to the
    // segments' lengths
    let file = bench("sll_length.c");
    let out = assert_safe_with_checked_certificate(&file, &["--shape-domain", "symheap"]);
    assert!(out.contains("count main::len"), "{out}");
    assert_unsafe_with_replay_using(
        &bench("sll_length_bug.c"),
        &["--shape-domain", "symheap"],
        None,
    );
    // through a function's counter and result: the path's comparison `got != len`
    // and what flows into it are counted when the interpolants speak of the heap only
    let out = assert_safe_with_checked_certificate(
        &bench("sll_length_fn.c"),
        &["--shape-domain", "symheap"],
    );
    assert!(out.contains("count length::k"), "{out}");
    assert_unsafe_with_replay_using(
        &bench("sll_length_fn_bug.c"),
        &["--shape-domain", "symheap"],
        None,
    );
    let (header, body) = certificate_of(&file);
    assert!(matches!(check(&file, &header, &body), CheckOutcome::Valid));
    // the nodes whose counts have an equality
    let counted = nodes_whose_counts(&body, |c| {
        c["eqs"]["rows"].as_array().is_some_and(|r| !r.is_empty())
    });
    assert!(!counted.is_empty());
    let muts: Vec<Mutation> = vec![
        (
            "every equality's constant off by one",
            Box::new(move |b| {
                for &i in &counted {
                    for r in b["nodes"][i]["state"][0]["counts"]["eqs"]["rows"]
                        .as_array_mut()
                        .unwrap()
                    {
                        let r = r.as_array_mut().unwrap();
                        let k = r.last().unwrap().as_i64().unwrap();
                        *r.last_mut().unwrap() = json!(k + 1);
                    }
                }
            }),
        ),
        (
            "a pointer counted",
            Box::new(|b| {
                let n = b["nodes"].as_array().unwrap().len();
                for i in 0..n {
                    let s = &mut b["nodes"][i]["state"][0];
                    let pointer = |v: &&Value| v[1] == json!("Null") || v[1].get("Id").is_some();
                    if let Some(v) = s["vars"]
                        .as_array()
                        .and_then(|v| v.iter().find(pointer))
                        .cloned()
                    {
                        b["precision"][0]["count"] = json!([v[0]]);
                        return;
                    }
                }
            }),
        ),
        (
            "a segment's length in a variable's column",
            Box::new(|b| {
                for n in b["nodes"].as_array_mut().unwrap() {
                    for a in n["state"][0]["atoms"].as_array_mut().unwrap() {
                        if let Some(l) = a.get_mut("Ls") {
                            l["len"] = json!(0);
                        }
                    }
                }
            }),
        ),
        (
            "counts without their variables",
            Box::new(|b| {
                for n in b["nodes"].as_array_mut().unwrap() {
                    n["state"][0]["counts"] = json!(null);
                }
            }),
        ),
    ];
    assert_all_invalid(&file, &header, &body, &muts);
}

#[test]
fn composite_segments_prove_lists_of_lists_and_their_certificates_trust_nothing() {
    // every element of a sub-list points back to its outer node: the outer segment's
    // objects own a segment whose common `owner` is the object itself
    let file = bench("lol_create.c");
    assert_safe_with_checked_certificate(&file, &["--shape-domain", "symheap"]);
    assert_unsafe_with_replay_using(
        &bench("lol_create_bug.c"),
        &["--shape-domain", "symheap"],
        None,
    );
    let (header, body) = certificate_of(&file);
    assert!(matches!(check(&file, &header, &body), CheckOutcome::Valid));
    let has_shapes = |n: &Value| {
        n["state"][0]["atoms"].as_array().is_some_and(|a| {
            a.iter().any(|x| {
                x["Ls"]["cells"]["shapes"]
                    .as_array()
                    .is_some_and(|s| !s.is_empty())
            })
        })
    };
    assert!(body["nodes"].as_array().unwrap().iter().any(has_shapes));
    let each_cells = |f: fn(&mut Value)| {
        move |b: &mut Value| {
            for n in b["nodes"].as_array_mut().unwrap() {
                for a in n["state"][0]["atoms"].as_array_mut().unwrap() {
                    if let Some(c) = a.get_mut("Ls").and_then(|l| l.get_mut("cells")) {
                        f(c);
                    }
                }
            }
        }
    };
    let muts: Vec<Mutation> = vec![
        (
            "shapes dropped",
            Box::new(each_cells(|c| c["shapes"] = json!([]))),
        ),
        (
            "common values NULL",
            Box::new(each_cells(|c| {
                for p in c["common"].as_array_mut().unwrap() {
                    p[1] = json!("Null");
                }
            })),
        ),
        (
            "a shape's object with its link known",
            Box::new(each_cells(|c| {
                for s in c["shapes"].as_array_mut().unwrap() {
                    s["atoms"][0]["Pt"]["fields"][0] = json!("Null");
                }
            })),
        ),
        (
            "shapes nested past the depth",
            Box::new(each_cells(|c| {
                let inner = c.clone();
                for s in c["shapes"].as_array_mut().unwrap() {
                    for a in s["atoms"].as_array_mut().unwrap() {
                        if let Some(l) = a.get_mut("Ls") {
                            l["cells"] = json!({"common": [], "shapes": inner["shapes"].clone()});
                        }
                    }
                }
            })),
        ),
    ];
    for (name, f) in &muts {
        let mut b = body.clone();
        f(&mut b);
        assert_ne!(b, body, "{name}: nothing mutated");
    }
    assert_all_invalid(&file, &header, &body, &muts);
    // forester's lists whose nodes own an optional inner node
    for t in ["forester-heap__sll-01-1.c", "forester-heap__dll-01-2.c"] {
        if let Some(f) = shared_svcomp(t) {
            assert_safe_with_checked_certificate(
                &f,
                &["--shape-domain", "symheap", "--malloc-never-fails"],
            );
        }
    }
}

#[test]
fn loops_bounded_by_a_constant_are_unrolled_and_their_certificates_trust_nothing() {
    // node i gets i + N in loops `i < N`: the values written are no constants of the
    // program, so the precision keeps them across loop heads; a path through merged
    // loop states is no path of the program, so loops are unrolled before they merge
    let file = bench("sll_update_bounded.c");
    let out = assert_safe_with_checked_certificate(&file, &["--shape-domain", "symheap"]);
    // (the values 3, 4, 5 of the three nodes: each must keep its node)
    assert!(out.contains("fold apart on node.data"), "{out}");
    assert!(out.contains("keep node.data = "), "{out}");
    assert!(out.contains("merge after 4 states"), "{out}");
    assert_unsafe_with_replay_using(
        &bench("sll_update_bounded_bug.c"),
        &["--shape-domain", "symheap"],
        None,
    );
    let (header, body) = certificate_of(&file);
    let muts: Vec<Mutation> = vec![
        (
            "the kept values dropped",
            Box::new(|b| b["precision"][0]["keep"] = json!([])),
        ),
        (
            "65 kept values",
            Box::new(|b| {
                let f = b["precision"][0]["keep"][0][0].clone();
                b["precision"][0]["keep"] = (0..65).map(|k| json!([f, k])).collect();
            }),
        ),
    ];
    assert_all_invalid(&file, &header, &body, &muts);
    // SV-COMP's circular lists updated by loops `i < 2`: the counters' merged states
    // keep their bounds (`i + 2` cannot overflow)
    let Some(f) = shared_svcomp("list-simple__sll2c_update_all.c") else {
        return;
    };
    let (header, body) = certificate_of(&f);
    assert!(matches!(check(&f, &header, &body), CheckOutcome::Valid));
    let bounded = nodes_whose_counts(&body, |c| {
        c["bounds"].as_array().is_some_and(|b| !b.is_empty())
    });
    assert!(!bounded.is_empty());
    let first = bounded[0];
    let muts: Vec<Mutation> = vec![
        (
            "every bound narrowed to its least value",
            Box::new(move |b| {
                for &i in &bounded {
                    for r in b["nodes"][i]["state"][0]["counts"]["bounds"]
                        .as_array_mut()
                        .unwrap()
                    {
                        r[2] = r[1].clone();
                    }
                }
            }),
        ),
        (
            "a bound on no counted variable",
            Box::new(move |b| {
                b["nodes"][first]["state"][0]["counts"]["bounds"] = json!([[99, 0, 1]]);
            }),
        ),
        (
            "an empty bound",
            Box::new(move |b| {
                b["nodes"][first]["state"][0]["counts"]["bounds"] = json!([[0, 1, 0]]);
            }),
        ),
    ];
    assert_all_invalid(&f, &header, &body, &muts);
}

/// The segments (`Ls`/`Dls` bodies) of every node's symbolic heap, as (node, atom)
/// indices, whose `order` is not empty.
fn ordered_segments(body: &Value) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, n) in body["nodes"].as_array().unwrap().iter().enumerate() {
        let Some(atoms) = n["state"][0]["atoms"].as_array() else {
            continue;
        };
        for (k, a) in atoms.iter().enumerate() {
            let seg = a.get("Ls").or_else(|| a.get("Dls"));
            if seg.is_some_and(|s| s["order"].as_array().is_some_and(|o| !o.is_empty())) {
                out.push((i, k));
            }
        }
    }
    out
}

/// The body of atom `k` of node `i` (an `Ls` or `Dls`).
fn segment_mut(b: &mut Value, (i, k): (usize, usize)) -> &mut Value {
    let a = &mut b["nodes"][i]["state"][0]["atoms"][k];
    if a.get("Ls").is_some() {
        &mut a["Ls"]
    } else {
        &mut a["Dls"]
    }
}

#[test]
fn segments_keep_which_value_follows_which_and_their_certificates_trust_nothing() {
    // (ACK | HEADER PAYLOAD)*: every HEADER is followed by a PAYLOAD, which the set of
    // values a segment holds cannot say; the segment keeps the pairs of adjacent
    // values, and unfolding a HEADER leaves a rest that starts with a PAYLOAD
    let file = bench("sll_framed.c");
    let out = assert_safe_with_checked_certificate(&file, &["--shape-domain", "symheap"]);
    assert!(out.contains("order packet.kind"), "{out}");
    assert_unsafe_with_replay_using(
        &bench("sll_framed_bug.c"),
        &["--shape-domain", "symheap"],
        None,
    );
    let (header, body) = certificate_of(&file);
    let ordered = ordered_segments(&body);
    assert!(!ordered.is_empty());
    // a segment whose order has more than one pair (one can be dropped)
    let wide = *ordered
        .iter()
        .find(|&&at| {
            let mut b = body.clone();
            segment_mut(&mut b, at)["order"][0]["pairs"]
                .as_array()
                .is_some_and(|p| p.len() > 1)
        })
        .expect("a segment with two pairs");
    let all = ordered.clone();
    let muts: Vec<Mutation> = vec![
        (
            "every segment's order dropped",
            Box::new(move |b| {
                for &at in &all {
                    segment_mut(b, at)["order"] = json!([]);
                }
            }),
        ),
        (
            "the precision orders nothing",
            Box::new(|b| b["precision"][0]["order"] = json!([])),
        ),
        (
            "a pair of adjacent values dropped",
            Box::new(move |b| {
                segment_mut(b, wide)["order"][0]["pairs"]
                    .as_array_mut()
                    .unwrap()
                    .remove(0);
            }),
        ),
        (
            "an order of a value the segment does not hold",
            Box::new(move |b| {
                segment_mut(b, wide)["order"][0]["first"] = json!([99]);
            }),
        ),
        (
            "an order of a pointer field",
            Box::new(move |b| {
                segment_mut(b, wide)["order"][0]["field"] = json!(0);
            }),
        ),
        (
            "an order that says no more than the values",
            Box::new(move |b| {
                let seg = segment_mut(b, wide);
                let vals = seg["data"][0][1].clone();
                let pairs: Vec<Value> = vals
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|x| vals.as_array().unwrap().iter().map(move |y| json!([x, y])))
                    .collect();
                seg["order"][0]["first"] = vals.clone();
                seg["order"][0]["last"] = vals.clone();
                seg["order"][0]["pairs"] = json!(pairs);
            }),
        ),
    ];
    assert_all_invalid(&file, &header, &body, &muts);
}

#[test]
fn a_counter_in_a_field_is_not_unrolled_one_kept_value_at_a_time() {
    // `q->len++` beside a list the loop checks: each spurious path is one object
    // longer, and keeping one more value of `len` per refinement only unrolled the
    // counter (64 refinements before; under `auto` that cost two_queues its time for
    // the three-valued domain). At most MAX_KEEP_PER_FIELD values per field.
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("counter_field.c");
    std::fs::write(&file, COUNTER_FIELD).unwrap();
    let (code, out) = shapemc(&[
        "verify",
        file.to_str().unwrap(),
        "--shape-domain",
        "symheap",
        "--timeout",
        "60",
    ]);
    assert_eq!(code, 20, "{out}");
    let keeps = out
        .lines()
        .filter(|l| l.contains("keep queue.len = "))
        .count();
    assert_eq!(keeps, shapemc::symheap::fold::MAX_KEEP_PER_FIELD, "{out}");
}

/// A queue whose `len` field counts its nodes, checked by a walk after every push.
const COUNTER_FIELD: &str = r#"extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "counter_field.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
struct node { struct node *next; };
struct queue { struct node *head; int len; };
int main(void) {
  struct queue *q = malloc(sizeof(struct queue));
  if (!q) abort();
  q->head = NULL;
  q->len = 0;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof(struct node));
    if (!n) abort();
    n->next = q->head;
    q->head = n;
    q->len++;
    int c = 0;
    for (struct node *p = q->head; p; p = p->next) {
      if (c >= q->len) reach_error();
      c++;
    }
    if (c != q->len) reach_error();
  }
  while (q->head) { struct node *n = q->head->next; free(q->head); q->head = n; }
  free(q);
  return 0;
}
"#;
