//! Shape fixpoints over the real CFA (issue 5 "Done when"): with a fixed shape class
//! given by hand, the shape CPA proves list reversal keeps a list acyclic, DLL
//! concatenation keeps cancellation (and its bug variant loses it), and tree rotation
//! keeps parent cancellation. `--nocapture` prints structures per location and times.

use shapemc::art::{build, Art, BuildOptions, BuildOutcome};
use shapemc::cfa::{Program, StructId};
use shapemc::frontend::{parse_file, FrontendOptions};
use shapemc::scg::{Lattice, Scg, TrackingDef};
use shapemc::shape::{class_for, fixpoint, pointer_vars, ShapeCpa, ShapePrec, ShapeState};
use shapemc::tvla::{Kleene, PredSym, ShapeClass};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn bench(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn parse(rel: &str) -> Program {
    parse_file(&bench(rel), &FrontendOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e:?}"))
}

fn struct_id(p: &Program, name: &str) -> StructId {
    p.structs
        .iter()
        .position(|s| s.name == name)
        .unwrap_or_else(|| panic!("no struct {name}"))
}

fn lattice() -> Lattice {
    Lattice::load(None).unwrap_or_else(|e| panic!("{e:?}"))
}

/// The class `structure{families}(binding)` over all pointer variables of the type
/// (all separating) and the given field assertions.
fn class(
    p: &Program,
    sid: StructId,
    structure: &str,
    families: &[&str],
    binding: &[(&str, &str)],
    assertions: &[&str],
) -> ShapeClass {
    let ptrs = pointer_vars(p, sid);
    let d = TrackingDef::new(ptrs.clone(), ptrs, assertions.iter().map(|s| s.to_string()));
    let scg = Scg::new(
        structure,
        families.iter().copied(),
        binding
            .iter()
            .map(|(r, f)| (r.to_string(), f.to_string()))
            .collect(),
    );
    class_for(p, sid, &lattice(), &scg, &d)
}

/// All unary predicate values of `p` at every node of every structure equal `want`.
fn everywhere(s: &ShapeState, sid: StructId, p: &PredSym, want: Kleene) -> bool {
    s.comps[&sid]
        .region
        .structures()
        .all(|st| match st.vocab().lookup(p) {
            Some((1, i)) => (0..st.len()).all(|u| st.get1(i, u) == want),
            _ => false,
        })
}

struct Run {
    art: Art<ShapeState>,
    outcome: BuildOutcome,
    ms: f64,
}

fn run_art(p: &Program, prec: &ShapePrec) -> Run {
    let cpa = ShapeCpa::new(p);
    let mut art = Art::new(p, shapemc::cpa::Cpa::initial(&cpa, p, prec));
    let t0 = Instant::now();
    let outcome = build(
        &cpa,
        p,
        &mut art,
        prec,
        &BuildOptions::default(),
        &mut |_| false,
    );
    Run {
        art,
        outcome,
        ms: t0.elapsed().as_secs_f64() * 1e3,
    }
}

fn report(name: &str, p: &Program, r: &Run) {
    let alive: Vec<_> = r.art.nodes.iter().filter(|n| n.alive).collect();
    let mut locs = std::collections::BTreeMap::new();
    for n in &alive {
        *locs.entry(n.loc).or_insert(0usize) += n.state.num_structures();
    }
    let max = locs.values().max().copied().unwrap_or(0);
    println!(
        "{name}: ART {:?}, {} nodes, {} locations, max {max} structures/location, {:.1} ms",
        r.outcome,
        alive.len(),
        locs.len(),
        r.ms
    );
    let _ = p;
}

#[test]
fn sll_reverse_keeps_acyclicity() {
    let p = parse("tests/data/shape/sll_reverse.c");
    let sid = struct_id(&p, "node");
    let cl = class(
        &p,
        sid,
        "sll",
        &["reach", "cyclic"],
        &[("next", "next")],
        &[],
    );
    let prec = ShapePrec::single(sid, cl);
    let r = run_art(&p, &prec);
    report("sll_reverse", &p, &r);
    assert_eq!(
        r.outcome,
        BuildOutcome::Complete,
        "the error must be unreachable"
    );
    let cyc = PredSym::with("c", &["next"]);
    for n in r.art.nodes.iter().filter(|n| n.alive) {
        assert!(
            everywhere(&n.state, sid, &cyc, Kleene::False),
            "cycle possible at {:?}: {}",
            n.loc,
            n.state.comps[&sid]
                .region
                .structures()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    // the joined worklist fixpoint agrees
    let t0 = Instant::now();
    let fx = fixpoint(&p, &prec, 100_000);
    println!(
        "sll_reverse: worklist {} posts, {:.1} ms, structures per location {:?}",
        fx.posts,
        t0.elapsed().as_secs_f64() * 1e3,
        fx.structures_per_location().values().collect::<Vec<_>>()
    );
    assert!(!fx.incomplete && fx.errors.is_empty());
}

fn seeds(name: &str) -> String {
    format!("../shared/bench/seeds/{name}")
}

/// ART nodes after the concatenation in `main` of dll_concat(_bug).c: in `assert_dll`,
/// `free_list`, or in `main` from line 57 on.
fn after_concat(p: &Program, loc: shapemc::cfa::Node) -> bool {
    let l = &p.graph[loc];
    let f = p.functions[l.func].name.as_str();
    f == "assert_dll" || f == "free_list" || (f == "main" && l.src.line >= 57)
}

fn dll_prec(p: &Program) -> (StructId, ShapePrec) {
    let sid = struct_id(p, "node");
    let cl = class(
        p,
        sid,
        "dll",
        &["cancel", "reach"],
        &[("next", "succ"), ("prev", "pred")],
        &["data == 0"],
    );
    (sid, ShapePrec::single(sid, cl))
}

#[test]
fn dll_concat_keeps_cancellation() {
    let p = parse(&seeds("dll_concat.c"));
    let (sid, prec) = dll_prec(&p);
    let r = run_art(&p, &prec);
    report("dll_concat", &p, &r);
    assert_eq!(
        r.outcome,
        BuildOutcome::Complete,
        "no error location is reachable"
    );
    let c1 = PredSym::with("cancel", &["succ", "pred"]);
    let c2 = PredSym::with("cancel", &["pred", "succ"]);
    let mut checked = 0;
    for n in r
        .art
        .nodes
        .iter()
        .filter(|n| n.alive && after_concat(&p, n.loc))
    {
        checked += 1;
        for c in [&c1, &c2] {
            assert!(
                everywhere(&n.state, sid, c, Kleene::True),
                "{c} lost at {:?}: {}",
                n.loc,
                n.state.comps[&sid]
                    .region
                    .structures()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
    assert!(checked > 20, "only {checked} nodes after the concatenation");
}

#[test]
fn dll_concat_bug_loses_cancellation() {
    let p = parse(&seeds("dll_concat_bug.c"));
    let (sid, prec) = dll_prec(&p);
    let r = run_art(&p, &prec);
    report("dll_concat_bug", &p, &r);
    let BuildOutcome::Error(e) = r.outcome else {
        panic!("the bug must reach an error location: {:?}", r.outcome)
    };
    // the error is the failed back-link check p->succ->pred == p (line 36)
    assert_eq!(p.graph[r.art.nodes[e].loc].src.line, 36);
    let c1 = PredSym::with("cancel", &["succ", "pred"]);
    let lost = r
        .art
        .nodes
        .iter()
        .filter(|n| n.alive && after_concat(&p, n.loc))
        .any(|n| !everywhere(&n.state, sid, &c1, Kleene::True));
    assert!(
        lost,
        "cancel[succ, pred] must be lost after the buggy concatenation"
    );
}

fn gdsl(name: &str) -> String {
    format!("../shared/bench/gdsl/{name}")
}

fn treep_prec(p: &Program, families: &[&str]) -> (StructId, ShapePrec) {
    let sid = struct_id(p, "tp");
    let cl = class(
        p,
        sid,
        "tree-parent",
        families,
        &[("left", "l"), ("right", "r"), ("parent", "father")],
        &[],
    );
    (sid, ShapePrec::single(sid, cl))
}

/// A hand-made tree class (as in `tests/tvla_fixpoint.rs`): all `struct tp *` variables
/// separating, fields l, r, father; downward reachability from the root and the
/// rotated nodes, the down closure, downward acyclicity, both parent cancellations,
/// the parent-is-a-child constraint predicate and sharing.
fn treep_hand(p: &Program) -> (StructId, ShapePrec) {
    use shapemc::tvla::families as fam;
    let sid = struct_id(p, "tp");
    let ptrs = pointer_vars(p, sid);
    let ptrs: Vec<&str> = ptrs.iter().map(|s| s.as_str()).collect();
    let lr = ["l", "r"];
    let instr = vec![
        fam::tc(&lr),
        fam::acyclic(&lr),
        fam::cancel("l", "father"),
        fam::cancel("r", "father"),
        fam::shared(&lr),
    ];
    let cl = fam::simple_class(&ptrs, &["l", "r", "father"], instr);
    (sid, ShapePrec::single(sid, cl))
}

/// Nodes in `main` after the rotation and in `check_parents` (before `tp_free`).
fn after_rotation(p: &Program, loc: shapemc::cfa::Node) -> bool {
    let l = &p.graph[loc];
    let f = p.functions[l.func].name.as_str();
    f == "check_parents" || (f == "main" && (96..=97).contains(&l.src.line))
}

#[test]
fn tree_rotation_keeps_parent_cancellation() {
    let p = parse(&gdsl("treep_rotate_left.c"));
    let (sid, prec) = treep_prec(&p, &["cancel"]);
    let r = run_art(&p, &prec);
    report("treep_rotate_left", &p, &r);
    assert_eq!(
        r.outcome,
        BuildOutcome::Complete,
        "no error location is reachable"
    );
    let mut checked = 0;
    for n in r
        .art
        .nodes
        .iter()
        .filter(|n| n.alive && after_rotation(&p, n.loc))
    {
        checked += 1;
        for c in [
            PredSym::with("cancel", &["l", "father"]),
            PredSym::with("cancel", &["r", "father"]),
        ] {
            assert!(
                everywhere(&n.state, sid, &c, Kleene::True),
                "{c} lost at {:?}",
                n.loc
            );
        }
    }
    assert!(checked > 5, "only {checked} nodes after the rotation");
}

#[test]
fn tree_rotation_bug_is_found() {
    let p = parse(&gdsl("treep_rotate_left_bug.c"));
    let (_, prec) = treep_prec(&p, &["cancel"]);
    let r = run_art(&p, &prec);
    report("treep_rotate_left_bug", &p, &r);
    assert!(
        matches!(r.outcome, BuildOutcome::Error(_)),
        "{:?}",
        r.outcome
    );
}

#[test]
#[ignore]
fn debug_tree() {
    let p = parse(&gdsl("treep_rotate_left.c"));
    let (sid, prec) = treep_hand(&p);
    let r = run_art(&p, &prec);
    report("dbg", &p, &r);
    let acyc = PredSym::with("acyc", &["l", "r"]);
    let bad = r
        .art
        .nodes
        .iter()
        .position(|n| !everywhere(&n.state, sid, &acyc, Kleene::True));
    if let Some(n) = bad {
        println!("error line {}", p.graph[r.art.nodes[n].loc].src.line);
        for m in r
            .art
            .nodes_to(n)
            .into_iter()
            .rev()
            .take(8)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            let nd = &r.art.nodes[m];
            let c = &nd.state.comps[&sid];
            println!(
                "--- loc {:?} wild {:?} {:?} uninit {:?}",
                nd.loc, c.wild_vars, c.wild_fields, c.uninit
            );
            if let Some((_, st)) = nd.parent {
                println!("via {}", p.op_str(&p.step_edge(st).op));
            }
            for s in c.region.structures() {
                println!("{s}");
            }
        }
    }
}

#[test]
#[ignore]
fn debug_dll() {
    let p = parse(&seeds("dll_concat.c"));
    let (sid, prec) = dll_prec(&p);
    let r = run_art(&p, &prec);
    let c2 = PredSym::with("cancel", &["pred", "succ"]);
    let bad = r.art.nodes.iter().position(|n| {
        n.alive && after_concat(&p, n.loc) && !everywhere(&n.state, sid, &c2, Kleene::True)
    });
    if let Some(n) = bad {
        for m in r
            .art
            .nodes_to(n)
            .into_iter()
            .rev()
            .take(12)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            let nd = &r.art.nodes[m];
            let c = &nd.state.comps[&sid];
            println!(
                "--- loc {:?} wild {:?} {:?} uninit {:?}",
                nd.loc, c.wild_vars, c.wild_fields, c.uninit
            );
            if let Some((_, st)) = nd.parent {
                println!("via {}", p.op_str(&p.step_edge(st).op));
            }
            for s in c.region.structures() {
                println!("{s}");
            }
        }
    }
}
