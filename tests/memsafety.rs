//! The memory properties (`verify --property valid-memsafety|valid-memcleanup`, issue
//! 32): our own `benchmarks/mem_*` tasks are answered as their task files say (or
//! UNKNOWN), the violated subproperty is named, and a certificate records the property
//! it proves: `check-certificate` refuses it for another one.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

mod bench_util;
mod cli_util;

use cli_util::shapemc;
use shapemc::bench::task::{discover_for, Plan};
use shapemc::cegar::memsafety::hunt_memory_violation;
use shapemc::cegar::CegarOptions;
use shapemc::spec::Property;
use std::path::Path;

/// `verify FILE --malloc-never-fails --property PROPERTY --timeout 60 EXTRA...`.
fn verify_mem(f: &Path, property: &str, extra: &[&str]) -> (i32, String) {
    let f = f.to_str().unwrap();
    let mut args = vec![
        "verify",
        f,
        "--malloc-never-fails",
        "--property",
        property,
        "--timeout",
        "60",
    ];
    args.extend_from_slice(extra);
    shapemc(&args)
}

/// Asserts that `verify` proves `file` under `property` (SAFE) and that
/// `check-certificate` re-checks the certificate it writes into `dir` (VALID).
fn assert_proved_with_checked_certificate(file: &Path, property: &str, dir: &Path) -> String {
    let f = file.to_str().unwrap();
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let cert = dir.join(format!("{stem}-{property}.cert"));
    let c = cert.to_str().unwrap();
    let (code, out) = verify_mem(file, property, &["--certificate", c]);
    assert_eq!(
        (code, out.lines().next()),
        (0, Some("SAFE")),
        "{f} {property}: {out}"
    );
    let (code, check) = shapemc(&["check-certificate", f, c, "--property", property]);
    assert_eq!((code, check.trim()), (0, "VALID"), "{f} {property}");
    out
}

/// The `mem_*` tasks of `benchmarks/` that carry `property`: (input, expected,
/// expected subproperty).
fn mem_tasks(property: Property) -> Vec<(std::path::PathBuf, bool, Option<String>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/memsafety");
    discover_for(&[dir], property)
        .unwrap()
        .into_iter()
        .filter(|t| t.name.starts_with("memsafety/mem_"))
        .filter_map(|t| match t.plan {
            Plan::Run {
                input,
                expected,
                subproperty,
                ..
            } => Some((input, expected, subproperty)),
            _ => None,
        })
        .collect()
}

/// Random runs confirmed by Z3 and the replay find the expected violation in every bug
/// task and none in the safe twins.
#[test]
fn the_hunt_finds_each_bug_and_nothing_in_the_twins() {
    for property in [Property::ValidMemsafety, Property::ValidMemcleanup] {
        let tasks = mem_tasks(property);
        let bugs = tasks.iter().filter(|t| !t.1).count();
        match property {
            Property::ValidMemsafety => assert!(bugs >= 12, "{bugs} memsafety bug tasks"),
            _ => assert!(bugs >= 6, "{bugs} memcleanup bug tasks"),
        }
        for (input, expected, sub) in tasks {
            let prog =
                shapemc::cegar::cli::load_for_property(&input, true, property).expect("parses");
            let found = hunt_memory_violation(&prog, property, &CegarOptions::default(), None);
            let name = input.display();
            match (expected, found) {
                (true, None) => {}
                (true, Some(f)) => panic!("{name}: safe, but a run violates {}", f.violated),
                (false, None) => panic!("{name}: no run violates {property}"),
                (false, Some(f)) => {
                    let want = sub.unwrap_or_else(|| property.name().to_string());
                    assert_eq!(f.violated.name(), want, "{name}");
                }
            }
        }
    }
}

#[test]
fn verify_names_the_violated_subproperty() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/memsafety");
    for (task, property, line) in [
        (
            "mem_use_after_free_bug.c",
            "valid-memsafety",
            "UNSAFE (valid-deref)",
        ),
        (
            "mem_double_free_bug.c",
            "valid-memsafety",
            "UNSAFE (valid-free)",
        ),
        (
            "mem_leak_loop_bug.c",
            "valid-memsafety",
            "UNSAFE (valid-memtrack)",
        ),
    ] {
        let f = dir.join(task);
        let d = tempfile::tempdir().unwrap();
        let cex = d.path().join("c.json");
        let (code, out) = verify_mem(&f, property, &["--cex", cex.to_str().unwrap()]);
        assert_eq!(out.lines().next(), Some(line), "{task}: {out}");
        assert_eq!(code, 10);
        // the counterexample replays to the violation (and is no unreach-call one)
        let replay = |p: &str| {
            shapemc(&[
                "simulate",
                f.to_str().unwrap(),
                "--malloc-never-fails",
                "--replay",
                cex.to_str().unwrap(),
                "--property",
                p,
            ])
        };
        let (code, out) = replay(property);
        assert_eq!(code, 10, "{task}: {out}");
        let sub = line.trim_start_matches("UNSAFE (").trim_end_matches(')');
        assert!(out.contains(&format!("({sub} violated)")), "{task}: {out}");
        let (code, out) = replay("valid-memcleanup");
        if sub != "valid-memtrack" {
            assert_eq!(code, 20, "{task}: {out}");
        }
    }
    // a property file is read by its text
    let prp = dir.join("../properties/valid-memcleanup.prp");
    let f = dir.join("mem_global_list_bug.c");
    let (code, out) = verify_mem(&f, prp.to_str().unwrap(), &[]);
    assert_eq!(
        out.lines().next(),
        Some("UNSAFE (valid-memcleanup)"),
        "{out}"
    );
    assert_eq!(code, 10);
    // ... and it is memory-safe (the global still reaches the list: no memtrack leak)
    let (code, out) = verify_mem(&f, "valid-memsafety", &[]);
    assert_eq!((code, out.lines().next()), (0, Some("SAFE")), "{out}");
    // an unknown property is a usage error
    let (code, _) = shapemc(&["verify", f.to_str().unwrap(), "--property", "no-overflow"]);
    assert_eq!(code, 2);
}

/// A program without heap allocation is proved memory-safe; its certificate records
/// the property and is refused for unreach-call (and an unreach-call certificate for
/// valid-memsafety).
#[test]
fn certificates_are_checked_against_their_property() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("noheap.c");
    std::fs::write(
        &file,
        "extern int __VERIFIER_nondet_int(void);\nstruct s { int a; };\nint main(void) { struct s v; struct s *p = &v; p->a = __VERIFIER_nondet_int(); if (p->a > 0) p->a = p->a - 1; return 0; }\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    for (property, other) in [
        ("valid-memsafety", "unreach-call"),
        ("unreach-call", "valid-memsafety"),
        ("valid-memcleanup", "valid-memsafety"),
    ] {
        let cert = d.path().join(format!("{property}.cert"));
        let c = cert.to_str().unwrap();
        let (code, out) = shapemc(&[
            "verify",
            f,
            "--property",
            property,
            "--certificate",
            c,
            "--timeout",
            "60",
        ]);
        assert_eq!((code, out.lines().next()), (0, Some("SAFE")), "{out}");
        let (code, out) = shapemc(&["check-certificate", f, c, "--property", property]);
        assert_eq!((code, out.trim()), (0, "VALID"), "{property}");
        let (code, out) = shapemc(&["check-certificate", f, c, "--property", other]);
        assert_eq!(code, 1, "{property} checked as {other}: {out}");
        assert!(
            out.contains(&format!("proves {property}, not {other}")),
            "{out}"
        );
    }
}

/// Leak proofs (the leak checks of `Program::add_leak_checks`): a safe twin that
/// allocates is SAFE under both memory properties with a certificate that
/// `check-certificate` re-checks; its leaking twin is never SAFE.
#[test]
fn leak_free_twins_are_proved_with_checked_certificates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/memsafety");
    let d = tempfile::tempdir().unwrap();
    for (task, property) in [
        ("mem_leak_loop", "valid-memsafety"),
        ("mem_leak_loop", "valid-memcleanup"),
        ("mem_leak_overwrite", "valid-memsafety"),
        ("mem_tree_leak", "valid-memcleanup"),
        ("mem_free_stack", "valid-memsafety"),
        // the list's root is a local that callees change through `&list`
        ("mem_cell_root", "valid-memsafety"),
        ("mem_cell_root", "valid-memcleanup"),
        // FineTune's path replay starts with leak tracking (it did not: time-outs)
        ("mem_leak_last_node", "valid-memcleanup"),
    ] {
        assert_proved_with_checked_certificate(&dir.join(format!("{task}.c")), property, d.path());
        let bug = dir.join(format!("{task}_bug.c"));
        let (code, out) = verify_mem(&bug, property, &[]);
        assert_ne!(code, 0, "{task}_bug: {out}");
    }
}

/// A leak in a loop that never ends is found at the loop head (no run ends, so the
/// random hunt and the checks where runs end cannot see it); without the leak it is
/// proved.
#[test]
fn a_leak_in_a_loop_without_end_is_found_at_the_loop_head() {
    let d = tempfile::tempdir().unwrap();
    let leak = d.path().join("spin.c");
    let body = |free: &str| {
        format!(
            "#include <stdlib.h>\nstruct n {{ struct n *next; }};\nint main(void) {{\n  while (1) {{\n    struct n *p = malloc(sizeof(struct n));\n    p->next = 0;\n    {free}\n  }}\n  return 0;\n}}\n"
        )
    };
    std::fs::write(&leak, body("p = 0;")).unwrap();
    let run = |f: &Path, property: &str| verify_mem(f, property, &[]);
    let (code, out) = run(&leak, "valid-memsafety");
    assert_eq!(
        (code, out.lines().next()),
        (10, Some("UNSAFE (valid-memtrack)")),
        "{out}"
    );
    // no run ends: nothing is left allocated at an end
    let (code, out) = run(&leak, "valid-memcleanup");
    assert_eq!((code, out.lines().next()), (0, Some("SAFE")), "{out}");
    let ok = d.path().join("spin_ok.c");
    std::fs::write(&ok, body("free(p);")).unwrap();
    let (code, out) = run(&ok, "valid-memsafety");
    assert_eq!((code, out.lines().next()), (0, Some("SAFE")), "{out}");
}

/// Issue #32: a struct on the stack that heads a heap list (`struct node sentinel;`)
/// is no heap object: it is neither lost when its variable is dead nor left allocated
/// at the end, and `free` of a list node is no free of it. Proved under both memory
/// properties, with certificates that `check-certificate` re-checks.
#[test]
fn a_stack_sentinel_is_no_leak() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/memsafety/mem_free_stack.c");
    let d = tempfile::tempdir().unwrap();
    for property in ["valid-memsafety", "valid-memcleanup"] {
        assert_proved_with_checked_certificate(&file, property, d.path());
    }
}

/// Proves each of the shared svcomp `tasks` under valid-memsafety with a certificate
/// that `check-certificate` re-checks (`test`: the name a skip is recorded under);
/// returns `verify`'s output per task, or None when the shared benchmarks are missing.
fn prove_shared_memsafety(test: &str, tasks: &[&str]) -> Option<Vec<String>> {
    let dir = bench_util::shared_bench_path(test, "svcomp")?;
    let d = tempfile::tempdir().unwrap();
    Some(
        tasks
            .iter()
            .map(|task| {
                assert_proved_with_checked_certificate(
                    &dir.join(format!("{task}.c")),
                    "valid-memsafety",
                    d.path(),
                )
            })
            .collect(),
    )
}

/// Issue #32, shared SV-COMP tasks proved under valid-memsafety: lists whose root is a
/// local passed as `&s` (`cfa::cells`) and a circular DLL whose leak checks need a
/// FineTune along the feasible path (`refine_leak`).
#[test]
fn shared_memsafety_tasks_with_cells_and_leak_finetune() {
    prove_shared_memsafety(
        "shared_memsafety_tasks_with_cells_and_leak_finetune",
        &[
            "list-simple__sll2n_insert_equal",
            "list-simple__dll2n_remove_all",
            "list-simple__dll2c_prepend_equal",
        ],
    );
}

/// Issue #32, session 24: lists whose nodes hang inner nodes off a second field
/// (forester sll-01-1, dll-01-2: the tree classes' `r[x, inner, next]` counts in the
/// leak check, and survives freeing the inner leaf and `end = list->next` in the
/// destroy loop) and a cyclic list destroyed from its sentinel (sll-circular-1).
#[test]
fn shared_memsafety_tasks_with_reachability_along_two_fields() {
    let Some(outs) = prove_shared_memsafety(
        "shared_memsafety_tasks_with_reachability_along_two_fields",
        &[
            "forester-heap__sll-01-1",
            "forester-heap__dll-01-2",
            "forester-heap__sll-circular-1",
        ],
    ) else {
        return;
    };
    // the log names what a leak refinement changed (it used to say "every
    // heap-allocated type tracked on explicit heaps" whatever it did)
    assert!(
        outs[0].contains("that does not replay: struct TSLL: SCG tree"),
        "{}",
        outs[0]
    );
    for out in &outs {
        assert!(!out.contains("every heap-allocated type tracked"), "{out}");
    }
}
