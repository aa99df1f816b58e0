//! The shipped SCG library: every file loads, DSL files round-trip through the
//! printer, a user-written structure loads from a temp dir and changes the shape
//! classes, and the `shapemc scg` CLI.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use shapemc::scg::dsl::StructureDef;
use shapemc::scg::location::{locate, Found, LibraryLocation};
use shapemc::scg::parse::parse_dsl;
use shapemc::scg::{HoldingInvariant, Lattice, Library, Scg, TrackingDef};
use std::path::{Path, PathBuf};
use std::process::Command;

fn lib_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scg-library")
}

fn default_lattice() -> Lattice {
    Lattice::new(Library::load_dir(&lib_dir()).expect("library loads"))
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("shapemc-scg-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn every_library_file_loads_and_round_trips() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(lib_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "scg"))
        .collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for needed in [
        "sll",
        "cyclic-sll",
        "dll",
        "tree",
        "tree-parent",
        "list-of-lists",
    ] {
        assert!(names.iter().any(|n| n == needed), "missing {needed}.scg");
    }
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let parsed: Vec<StructureDef> = parse_dsl(&src).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.len(), 1, "{}: one structure per file", f.display());
        assert_eq!(parsed[0].name, *f.file_stem().unwrap().to_string_lossy());
        let printed = parsed[0].to_string();
        let back = parse_dsl(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
        assert_eq!(back, parsed, "round trip of {}", f.display());
        assert_eq!(back[0].to_string(), printed, "printing is a fixpoint");
        // the printed text is itself a valid library
        Library::from_sources(
            [(f.clone(), printed)].into_iter().chain(
                files
                    .iter()
                    .filter(|g| *g != f)
                    .map(|g| (g.clone(), std::fs::read_to_string(g).unwrap())),
            ),
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
    }
    let lat = default_lattice();
    let fam_count = |s: &str| {
        let s = lat.library().structure(s).unwrap();
        assert!(s.family("nonnull").is_some_and(|f| f.always), "{}", s.name);
        s.optional_families().count()
    };
    // family counts of the paper's Table 1 (sll/2, dll/3, tree/4, tree+p/5), each
    // with TVLA's sharing family on top, trees also with per-child reachability and the
    // two-step nonnull2; every structure has the `always` family nonnull besides
    assert_eq!(fam_count("sll"), 3);
    assert_eq!(fam_count("dll"), 4);
    assert_eq!(fam_count("tree"), 7);
    assert_eq!(fam_count("tree-parent"), 8);
}

#[test]
fn declared_refinements_hold() {
    let lat = default_lattice();
    let lib = lat.library();
    assert_eq!(lib.role_maps("dll", "sll").len(), 1);
    assert_eq!(lib.role_maps("tree-parent", "tree").len(), 1);
    assert_eq!(lib.role_maps("cyclic-sll", "sll").len(), 1);
    assert_eq!(lib.role_maps("list-of-lists", "sll").len(), 1);
    assert!(lib.role_maps("sll", "dll").is_empty());
    assert!(lib.role_maps("tree", "dll").is_empty());
    let b = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    let dll = Scg::new(
        "dll",
        ["reach", "cyclic"],
        b(&[("next", "succ"), ("prev", "pred")]),
    );
    let sll = Scg::new("sll", ["reach"], b(&[("next", "succ")]));
    let sll_wrong = Scg::new("sll", ["reach"], b(&[("next", "pred")]));
    assert!(lat.leq(&dll, &sll));
    assert!(!lat.leq(&sll, &dll));
    assert!(!lat.leq(&dll, &sll_wrong));
    let d = TrackingDef::new(["l1", "l2", "p"], ["l1"], ["data == 0"]);
    assert!(lat.generate(&dll, &d).refines(&lat.generate(&sll, &d)));
}

#[test]
fn dll_shape_class_matches_the_paper() {
    let lat = default_lattice();
    let holding = [
        HoldingInvariant::new("acyclic_list", &["succ"]),
        HoldingInvariant::new("acyclic_list", &["pred"]),
        HoldingInvariant::new("doubly_linked", &["succ", "pred"]),
    ];
    let enabled = lat.enabled(&holding);
    // sll twice (succ, pred) with 8 subsets each, dll once with 16
    assert_eq!(enabled.len(), 32);
    let d = TrackingDef::new(["l1", "l2", "p"], ["l1", "l2", "p"], Vec::<&str>::new());
    let dll_cancel = enabled
        .iter()
        .find(|m| m.structure() == Some("dll") && m.families().map(|s| s.as_str()).eq(["cancel"]))
        .unwrap();
    let c = lat.generate(dll_cancel, &d);
    let names: Vec<String> = c
        .core
        .iter()
        .chain(&c.instr)
        .map(|p| p.sym.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "sm",
            "pt[l1]",
            "pt[l2]",
            "pt[p]",
            "succ",
            "pred",
            "cancel[succ, pred]",
            "cancel[pred, succ]",
            "nn[succ]",
            "nn[pred]",
        ]
    );
    let def = c.instr[0].def.as_ref().unwrap().to_string();
    assert_eq!(def, "(A w. (succ(v, w) -> pred(w, v)))");
    assert!(c.abs.iter().any(|p| p.to_string() == "cancel[succ, pred]"));
}

const COMMON_HEAD: &str = r#"
# A list whose nodes all point to a common head node (composite data structures,
# Berdine et al.): role `head`, invariant common_head(next, head).
structure common-head {
  roles next, head;
  requires common_head(next, head);
  refines sll (next = next);

  family reach for x {
    pred r[x, next](v) := E u. pt[x](u) & (u == v | TC(a, b: next(a, b))(u, v));
  }
  family cyclic {
    pred c[next](v) := TC(a, b: next(a, b))(v, v);
  }
  family share {
    pred is[next](v) := E a. E b. next(a, v) & next(b, v) & !(a == b);
  }
  always family nonnull {
    nonabs pred nn[next](v) := E w. next(v, w);
  }
  # sh(v): v and its successor point to the same head.
  family same_head {
    pred sh[next, head](v) := E h. head(v, h) & (A w. next(v, w) -> head(w, h));
    constraint A v. A h. A k. head(v, h) & head(v, k) -> h == k;
  }
  # hd(v): v is the head of some node.
  family is_head {
    pred hd[head](v) := E u. head(u, v);
  }
}
"#;

#[test]
fn user_structure_from_a_temp_dir_changes_shape_classes() {
    let dir = temp_dir("user");
    for f in std::fs::read_dir(lib_dir()).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|x| x == "scg") {
            std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
        }
    }
    std::fs::write(dir.join("common-head.scg"), COMMON_HEAD).unwrap();
    let base = default_lattice();
    let user = Lattice::new(Library::load_dir(&dir).unwrap_or_else(|e| panic!("{e:?}")));
    assert_eq!(user.size(), base.size() + 32);
    let holding = [
        HoldingInvariant::new("acyclic_list", &["nxt"]),
        HoldingInvariant::new("common_head", &["nxt", "hdp"]),
    ];
    let d = TrackingDef::new(["x", "y"], ["x"], Vec::<&str>::new());
    let classes = |lat: &Lattice| {
        lat.enabled(&holding)
            .iter()
            .map(|m| lat.generate(m, &d))
            .collect::<Vec<_>>()
    };
    let before = classes(&base);
    let after = classes(&user);
    assert_eq!(before.len(), 8, "only sll along nxt");
    assert_eq!(after.len(), 8 + 32);
    let mentions = |cs: &[shapemc::tvla::class::ShapeClass], name: &str| {
        cs.iter()
            .any(|c| c.instr.iter().chain(&c.core).any(|p| p.sym.name == name))
    };
    assert!(!mentions(&before, "sh") && !mentions(&before, "hdp"));
    assert!(mentions(&after, "sh") && mentions(&after, "hdp") && mentions(&after, "hd"));
    // the finest common-head SCG refines the finest sll SCG
    let all = user.enabled(&holding);
    let ch_top = all
        .iter()
        .filter(|m| m.structure() == Some("common-head"))
        .max_by_key(|m| m.families().count())
        .unwrap();
    let sll_top = all
        .iter()
        .filter(|m| m.structure() == Some("sll"))
        .max_by_key(|m| m.families().count())
        .unwrap();
    assert!(user.leq(ch_top, sll_top));
    let c = user.generate(ch_top, &d);
    assert_eq!(c.constraints.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

fn shapemc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_shapemc"))
        .args(args)
        .env_remove("SHAPEMC_SCG_LIBRARY")
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_list_and_check() {
    let (rc, out, err) = shapemc(&["scg", "list"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("dll (dll.scg)"));
    assert!(out.contains("requires: doubly_linked(next, prev)"));
    assert!(out.contains("cancel[next, prev](v) := (A w. (next(v, w) -> prev(w, v)))"));
    assert!(out.contains("lattice: 633 SCGs"), "{out}");

    let dir = temp_dir("cli");
    let good = dir.join("common-head.scg");
    std::fs::write(&good, COMMON_HEAD).unwrap();
    let (rc, out, err) = shapemc(&["scg", "check", good.to_str().unwrap()]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("ok: structure common-head"), "{out}");

    let bad = dir.join("bad.scg");
    std::fs::write(
        &bad,
        "structure bad {\n  roles next;\n  requires acyclic_list(next);\n  family f {\n    pred p[next](v) := nxt(v, v);\n  }\n}\n",
    )
    .unwrap();
    let (rc, _, err) = shapemc(&["scg", "check", bad.to_str().unwrap()]);
    assert_eq!(rc, 2);
    assert!(
        err.starts_with(&format!("{}:5:5: unknown predicate `nxt`", bad.display())),
        "{err}"
    );

    // a constraint that some heap falsifies is rejected at its position
    let unsound = dir.join("unsound.scg");
    std::fs::write(
        &unsound,
        "structure unsound {\n  roles next;\n  requires acyclic_list(next);\n  family f {\n    pred c[next](v) := TC(a, b: next(a, b))(v, v);\n    constraint A v. !c[next](v);\n  }\n}\n",
    )
    .unwrap();
    let (rc, _, err) = shapemc(&["scg", "check", unsound.to_str().unwrap()]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.starts_with(&format!(
            "{}:6:5: constraint does not hold on every heap: heap {{c0.next = c0}}",
            unsound.display()
        )),
        "{err}"
    );

    let syntax = dir.join("syntax.scg");
    std::fs::write(&syntax, "structure s {\n  roles next\n}\n").unwrap();
    let (rc, _, err) = shapemc(&["scg", "check", syntax.to_str().unwrap()]);
    assert_eq!(rc, 2);
    assert!(
        err.starts_with(&format!("{}:3:1: expected `;`", syntax.display())),
        "{err}"
    );

    let (rc, _, err) = shapemc(&[
        "scg",
        "list",
        "--scg-library",
        dir.join("nope").to_str().unwrap(),
    ]);
    assert_eq!(rc, 2);
    assert!(
        err.contains("cannot read the SCG library directory"),
        "{err}"
    );

    // the test binaries live in the source tree: its scg-library/
    assert_eq!(
        locate(None),
        LibraryLocation::Dir(lib_dir(), Found::SourceTree)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The worked example of scg-library/README.md loads and generates what it says.
#[test]
fn readme_worked_example_is_accurate() {
    let readme = std::fs::read_to_string(lib_dir().join("README.md")).unwrap();
    let start = readme
        .find("# A list whose nodes all point")
        .expect("example present");
    let end = start + readme[start..].find("\n}\n").expect("example ends") + 3;
    let example = &readme[start..end];
    let dir = temp_dir("readme");
    let file = dir.join("common-head.scg");
    std::fs::write(&file, example).unwrap();
    let base = Library::load_dir(&lib_dir()).unwrap();
    let lat = Lattice::new(
        base.with_file(&file, example)
            .unwrap_or_else(|e| panic!("{e:?}")),
    );
    let holding = [HoldingInvariant::new("common_head", &["link", "owner"])];
    let finest = lat
        .enabled(&holding)
        .into_iter()
        .max_by_key(|m| m.families().count())
        .unwrap();
    assert_eq!(
        finest.to_string(),
        "common-head{cyclic, is_head, reach, same_head, share}(head=owner, next=link)"
    );
    let d = TrackingDef::new(["p", "q"], ["p"], Vec::<&str>::new());
    let c = lat.generate(&finest, &d);
    let show = |v: &[shapemc::tvla::class::PredDef]| {
        v.iter()
            .map(|p| p.sym.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    assert!(
        readme.contains(&format!("core:  {}", show(&c.core))),
        "{}",
        show(&c.core)
    );
    assert!(
        readme.contains(&format!("instr: {}", show(&c.instr))),
        "{}",
        show(&c.instr)
    );
    let abs: Vec<String> = c.abs.iter().map(|p| p.to_string()).collect();
    assert!(
        readme.contains(&format!("abs:   {}", abs.join(", "))),
        "{abs:?}"
    );
    let sh = c.instr.iter().find(|p| p.sym.name == "sh").unwrap();
    assert!(readme.contains(&format!(
        "`sh[link, owner](v) := {}`",
        sh.def.as_ref().unwrap()
    )));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Regression: `shapemc ... | head` made `println!` panic on the broken pipe (the CFA of
/// tree_delete.c as JSON is ≈ 125 KB, more than a pipe buffer).
#[test]
fn closed_stdout_pipe_is_not_a_panic() {
    let exe = env!("CARGO_BIN_EXE_shapemc");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{exe}' cfa benchmarks/tree_delete.c --format json | head -c 1 >/dev/null"
        ))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("sh runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "stderr: {err}");
}

#[test]
fn always_nonabs_predicates_are_in_every_scg_but_never_abstraction() {
    // `nn[f]` sharpens the node a pointer points to without splitting summary nodes
    let lat = default_lattice();
    let d = TrackingDef::new(["p"], ["p"], Vec::<&str>::new());
    let holding = [HoldingInvariant::new("binary_tree", &["l", "r"])];
    // `always family nonnull`: already in the coarsest tree SCG, and never chosen
    let tree = lat
        .enabled(&holding)
        .into_iter()
        .find(|m| m.structure() == Some("tree") && m.families().count() == 0)
        .expect("tree{}");
    let c = lat.generate(&tree, &d);
    assert!(lat
        .enabled(&holding)
        .iter()
        .all(|m| m.families().all(|f| f != "nonnull")));
    let nn: Vec<_> = c.instr.iter().filter(|p| p.sym.name == "nn").collect();
    assert_eq!(nn.len(), 2, "{c:?}");
    assert!(nn.iter().all(|p| p.arity == 1 && !c.abs.contains(&p.sym)));
    // and canonical abstraction keeps them only on pointed-to nodes
    assert!(nn.iter().all(|p| c.pointed_only.contains(&p.sym)));
    assert_eq!(c.pointed_only.len(), 2, "{c:?}");
    assert!(
        c.abs.iter().any(|s| s.name == "pt"),
        "pointers still separate"
    );
    // the printer keeps the keyword, the parser reads it back
    let src = "structure s { roles n; requires acyclic_list(n);
        always family f { nonabs pred nn[n](v) := E w. n(v, w); } }";
    let parsed = parse_dsl(src).unwrap();
    assert!(parsed[0].families[0].always && parsed[0].families[0].preds[0].nonabs);
    assert_eq!(parse_dsl(&parsed[0].to_string()).unwrap(), parsed);
    // unary only
    let bad = "structure s { roles n; requires acyclic_list(n);
        family f { nonabs pred m[n](v1, v2) := n(v1, v2); } }";
    let err = parse_dsl(bad).unwrap_err().to_string();
    assert!(err.contains("`nonabs` is for unary predicates"), "{err}");
}
