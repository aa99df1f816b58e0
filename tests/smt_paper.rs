//! The paper's running example (Fig. 1, `dll_concat` in `../shared/bench/seeds/`): the
//! first spurious error path, found by walking the CFA shortest first, is infeasible and
//! its interpolants' atoms mention the pointers `l1`, `l2`, `p` and the fields `succ`,
//! `pred`, as the paper's overview describes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use shapemc::cfa::{EdgeId, Node, Program, Step};
use shapemc::frontend::{parse_file, FrontendOptions};
use shapemc::smt::*;
use std::collections::{BTreeSet, VecDeque};
mod bench_util;

use bench_util::shared_bench_path;

/// A seed task, or None when the shared benchmarks are absent (`test` is skipped).
fn load(test: &str, name: &str) -> Option<Program> {
    let f = shared_bench_path(test, &format!("seeds/{name}"))?;
    Some(parse_file(&f, &FrontendOptions::default()).expect("parses"))
}

/// Error paths of `prog` from `main`'s entry, shortest first (BFS over
/// `Program::next_steps` with the call stack), at most `max_len` steps, at most
/// `max_states` expansions.
fn error_paths(prog: &Program, max_len: usize, max_states: usize) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    let mut q: VecDeque<(Node, Vec<EdgeId>, Vec<Step>)> = VecDeque::new();
    q.push_back((prog.entry, Vec::new(), Vec::new()));
    let mut expanded = 0;
    while let Some((n, stack, path)) = q.pop_front() {
        if prog.is_error(n) {
            out.push(path);
            continue;
        }
        if path.len() >= max_len || expanded >= max_states {
            continue;
        }
        expanded += 1;
        for (s, m) in prog.next_steps(n, &stack) {
            let mut st = stack.clone();
            match s {
                Step::Enter(e) => st.push(e),
                Step::Leave(_) => {
                    st.pop();
                }
                Step::Edge(_) => {}
            }
            let mut p = path.clone();
            p.push(s);
            q.push_back((m, st, p));
        }
    }
    out
}

/// The source line of the first line of `file` containing `needle` (1-based).
fn line_of(file: &str, needle: &str) -> u32 {
    let f = bench_util::shared_bench_dir().join("seeds").join(file);
    let text = std::fs::read_to_string(f).expect("readable");
    let i = text
        .lines()
        .position(|l| l.contains(needle))
        .expect("needle in source");
    i as u32 + 1
}

/// The paper's first spurious path: the shortest error path that ends in the
/// `cancel[succ,pred]` check of `assert_dll` after the concatenation, found by walking the
/// CFA (the error location is identified by the source line of the check, not by ids).
fn paper_path(prog: &Program) -> Vec<Step> {
    let check_line = line_of("dll_concat.c", "if (!(p->succ->pred == p))");
    let paths = error_paths(prog, 80, 200_000);
    assert!(!paths.is_empty(), "no error path found");
    paths
        .into_iter()
        .filter(|p| {
            p.last()
                .is_some_and(|s| prog.step_edge(*s).src.line == check_line)
        })
        .find(|p| matches!(check_path(prog, p), Ok(Feasibility::Infeasible(_))))
        .expect("an infeasible error path through the cancel check")
}

/// Program variable name without the function prefix (`main::l1` -> `l1`).
fn short(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

#[test]
fn dll_concat_first_spurious_path_yields_paper_atoms() {
    let Some(prog) = load(
        "dll_concat_first_spurious_path_yields_paper_atoms",
        "dll_concat.c",
    ) else {
        return;
    };
    let path = paper_path(&prog);
    let opts = InterpolationOptions {
        validate: true,
        ..Default::default()
    };
    let itps = match refine_path(&prog, &path, &opts).expect("analysis succeeds") {
        PathAnalysis::Infeasible(i) => i,
        PathAnalysis::Feasible(m) => panic!("the paper's path is spurious, got a model {m:?}"),
    };
    assert!(itps.validated, "the interpolant sequence was checked by Z3");
    assert_eq!(itps.items.len(), path.len() + 1);
    assert!(!itps.proof.core.is_empty());
    // Union of what the atoms mention, mapped back to program variables and fields.
    let mut main_ptrs = BTreeSet::new();
    let mut ptr_names = BTreeSet::new();
    let mut deref = BTreeSet::new();
    let mut fields = BTreeSet::new();
    let mut field_assertions = BTreeSet::new();
    let mut texts = BTreeSet::new();
    for it in &itps.items {
        for a in &it.atoms {
            texts.insert(a.text.clone());
            for v in &a.pointers {
                let name = &prog.vars[*v].name;
                ptr_names.insert(short(name).to_string());
                if name.starts_with("main::") {
                    main_ptrs.insert(short(name).to_string());
                }
            }
            for v in &a.dereferenced {
                deref.insert(short(&prog.vars[*v].name).to_string());
            }
            for f in &a.fields {
                fields.insert(prog.field(*f).name.clone());
            }
            if let Some(fa) = &a.field_assertion {
                field_assertions.insert((prog.vars[fa.ptr].name.clone(), fa.field_text(&prog)));
            }
        }
    }
    let msg = format!("atoms: {texts:#?}");
    // The paper: "pointer equalities among l1, l2, and p; l1->succ = p; and l2->pred = p".
    for x in ["l1", "l2", "p"] {
        assert!(main_ptrs.contains(x), "main's `{x}` not mentioned; {msg}");
    }
    for f in ["succ", "pred"] {
        assert!(fields.contains(f), "field `{f}` not mentioned; {msg}");
    }
    assert!(
        deref.contains("l1") && deref.contains("l2"),
        "{deref:?}; {msg}"
    );
    // a pointer equality among main's l1, l2, p
    let among = |a: &Atom| {
        a.fields.is_empty()
            && a.pointers.len() == 2
            && a.pointers
                .iter()
                .all(|v| prog.vars[*v].name.starts_with("main::"))
    };
    assert!(
        itps.items.iter().flat_map(|i| &i.atoms).any(among),
        "no pointer equality among l1, l2, p; {msg}"
    );
    // the field assertions relating the two lists through succ and pred
    assert!(
        field_assertions
            .iter()
            .any(|(p, t)| p == "main::l1" && t.starts_with("succ ")),
        "{field_assertions:?}"
    );
    assert!(
        field_assertions
            .iter()
            .any(|(p, t)| p == "main::l2" && t.starts_with("pred ")),
        "{field_assertions:?}"
    );
    // At the concatenation, between `p->succ = l2` and `l2->pred = p`, the interpolant
    // speaks about l2's pred link (before the store it is `l2->pred == p`-like).
    let concat_line = line_of("dll_concat.c", "l2->pred = p");
    let positions: Vec<usize> = path
        .iter()
        .enumerate()
        .filter(|(_, s)| prog.step_edge(**s).src.line == concat_line)
        .map(|(k, _)| k)
        .collect();
    assert!(
        !positions.is_empty(),
        "the path runs through the concatenation"
    );
    assert!(
        positions
            .iter()
            .any(|k| itps.items[*k].atoms.iter().any(|a| a
                .fields
                .iter()
                .any(|f| prog.field(*f).name == "pred")
                && a.pointers.iter().any(|v| prog.vars[*v].name == "main::l2"))),
        "{msg}"
    );
}

#[test]
#[ignore = "exploration: prints the first error paths of dll_concat, checks nothing"]
fn explore_dll_concat() {
    let Some(prog) = load("explore_dll_concat", "dll_concat.c") else {
        return;
    };
    let paths = error_paths(&prog, 120, 200_000);
    println!("{} error paths", paths.len());
    for p in paths.iter().take(12) {
        let f = check_path(&prog, p);
        let last = prog.step_edge(*p.last().unwrap()).src;
        println!(
            "len {} error at {last}: {:?}",
            p.len(),
            f.as_ref().map(|f| matches!(f, Feasibility::Feasible(_)))
        );
        if let Ok(Feasibility::Infeasible(_)) = f {
            let i = interpolate(
                &prog,
                p,
                &InterpolationOptions {
                    validate: true,
                    ..Default::default()
                },
            )
            .unwrap();
            let mut all = BTreeSet::new();
            for it in &i.items {
                for a in &it.atoms {
                    all.insert(a.text.clone());
                }
            }
            println!("   atoms {all:?}");
        }
    }
}
