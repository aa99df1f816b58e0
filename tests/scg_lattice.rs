//! Laws of the SCG lattice: partial order, m0 coarsest, soundness of the structural
//! order w.r.t. the semantic order m ⊑ m' iff m(D) ≼ m'(D) for all D, monotonicity
//! of generated shape classes in D and in m, and well-formedness of generated classes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use proptest::prelude::*;
use shapemc::scg::{Lattice, Library, Scg, TrackingDef};
use std::path::Path;
use std::sync::OnceLock;

fn lattice() -> &'static (Lattice, Vec<Scg>) {
    static L: OnceLock<(Lattice, Vec<Scg>)> = OnceLock::new();
    L.get_or_init(|| {
        let lib = Library::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scg-library"))
            .expect("library loads");
        let lat = Lattice::new(lib);
        let fields: Vec<String> = ["f", "g", "h"].iter().map(|s| s.to_string()).collect();
        let mut all = lat.universe(&fields);
        all.push(Scg::m0());
        (lat, all)
    })
}

fn arb_scg() -> impl Strategy<Value = Scg> {
    let n = lattice().1.len();
    (0..n).prop_map(|i| lattice().1[i].clone())
}

/// A random chain a ⊑ b ⊑ c (each picked from the up-set of the previous one).
fn arb_chain() -> impl Strategy<Value = (Scg, Scg, Scg)> {
    let up = |m: &Scg| -> Vec<Scg> {
        let (lat, all) = lattice();
        all.iter().filter(|x| lat.leq(m, x)).cloned().collect()
    };
    arb_scg()
        .prop_flat_map(move |a| {
            let ups = up(&a);
            (Just(a), prop::sample::select(ups))
        })
        .prop_flat_map(move |(a, b)| {
            let ups = up(&b);
            (Just(a), Just(b), prop::sample::select(ups))
        })
}

fn arb_d() -> impl Strategy<Value = TrackingDef> {
    let ptrs = prop::sample::subsequence(vec!["p", "q", "main::r", "s#1"], 0..=4);
    let seps = prop::sample::subsequence(vec!["p", "q", "main::r", "s#1"], 0..=4);
    let phis = prop::sample::subsequence(vec!["data == 0", "key < 5"], 0..=2);
    (ptrs, seps, phis).prop_map(|(t, ts, phi)| {
        // Ts ⊆ T by construction of TrackingDef::new
        TrackingDef::new(t, ts, phi)
    })
}

/// A random refinement of `d`.
fn arb_refined(d: TrackingDef) -> impl Strategy<Value = (TrackingDef, TrackingDef)> {
    arb_d().prop_map(move |e| (d.join(&e), d.clone()))
}

/// A D under which every family predicate of every structure is instantiated with a
/// separating and a non-separating pointer.
fn d_star() -> TrackingDef {
    TrackingDef::new(["p", "q"], ["p"], ["data == 0"])
}

#[test]
fn universe_is_large_enough() {
    let (lat, all) = lattice();
    // sll 3*8, cyclic-sll 3*64, dll 6*16, cyclic-dll 6*64, tree 6*128, tree-parent 6*256,
    // list-of-lists 6*32, headed-dll 6*64, m0
    assert_eq!(all.len(), 24 + 192 + 96 + 384 + 768 + 1536 + 192 + 384 + 1);
    for m in all {
        assert!(lat.validate(m).is_ok(), "{m}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn order_is_reflexive_and_m0_is_coarsest(m in arb_scg(), d in arb_d()) {
        let (lat, _) = lattice();
        prop_assert!(lat.leq(&m, &m));
        prop_assert!(lat.leq(&m, &Scg::m0()));
        prop_assert!(!lat.lt(&Scg::m0(), &m));
        let e = lat.generate(&Scg::m0(), &d);
        prop_assert_eq!(e, Default::default());
    }

    #[test]
    fn order_is_antisymmetric_and_transitive(a in arb_scg(), b in arb_scg(), c in arb_scg()) {
        let (lat, _) = lattice();
        if lat.leq(&a, &b) && lat.leq(&b, &a) {
            prop_assert_eq!(&a, &b);
        }
        if lat.leq(&a, &b) && lat.leq(&b, &c) {
            prop_assert!(lat.leq(&a, &c), "{} ⊑ {} ⊑ {}", a, b, c);
        }
    }

    #[test]
    fn chains_are_transitive_and_not_cyclic((a, b, c) in arb_chain()) {
        let (lat, _) = lattice();
        prop_assert!(lat.leq(&a, &b) && lat.leq(&b, &c));
        prop_assert!(lat.leq(&a, &c), "{} ⊑ {} ⊑ {}", a, b, c);
        if lat.leq(&c, &a) {
            prop_assert!(a == b && b == c);
        }
    }

    /// Structural ⊑ implies semantic ⊑ (m(D) ≼ m'(D)), i.e. generation is monotone in m.
    #[test]
    fn structural_order_is_sound((a, b, c) in arb_chain(), d in arb_d()) {
        let (lat, _) = lattice();
        let (ga, gb, gc) = (lat.generate(&a, &d), lat.generate(&b, &d), lat.generate(&c, &d));
        prop_assert!(ga.refines(&gb), "{} ⊑ {}", a, b);
        prop_assert!(gb.refines(&gc), "{} ⊑ {}", b, c);
        prop_assert!(ga.num_preds() >= gc.num_preds());
    }

    /// Random pairs: whenever the structural order relates them, so does the semantic one.
    #[test]
    fn structural_order_is_sound_on_random_pairs(a in arb_scg(), b in arb_scg(), d in arb_d()) {
        let (lat, _) = lattice();
        if lat.leq(&a, &b) {
            prop_assert!(lat.generate(&a, &d).refines(&lat.generate(&b, &d)), "{} ⊑ {}", a, b);
        }
    }

    /// Within one structure and binding, the structural order is exactly the semantic one.
    #[test]
    fn structural_order_is_complete_within_a_structure(a in arb_scg(), mask in 0u32..64) {
        let (lat, _) = lattice();
        let Scg::Gen { structure, families, binding } = &a else { return Ok(()) };
        let s = lat.library().structure(structure).unwrap();
        let fams: Vec<&String> = s.optional_families().map(|f| &f.name)
            .enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, n)| n).collect();
        let b = Scg::new(structure.clone(), fams, binding.clone());
        let d = d_star();
        let semantic = lat.generate(&a, &d).refines(&lat.generate(&b, &d));
        prop_assert_eq!(semantic, lat.leq(&a, &b), "{} vs {} (families {:?})", a, b, families);
    }

    /// D ≼ D' implies m(D) ≼ m(D').
    #[test]
    fn generation_is_monotone_in_d(m in arb_scg(), (fine, coarse) in arb_d().prop_flat_map(arb_refined)) {
        let (lat, _) = lattice();
        prop_assert!(fine.refines(&coarse));
        prop_assert!(lat.generate(&m, &fine).refines(&lat.generate(&m, &coarse)));
    }

    /// Generated classes are well formed: sm present, abstraction predicates are unary
    /// predicates of the class, instrumentation predicates have closed-over definitions
    /// in v / v1, v2, about separating pointers only when abstracting.
    #[test]
    fn generated_classes_are_well_formed(m in arb_scg(), d in arb_d()) {
        let (lat, _) = lattice();
        let c = lat.generate(&m, &d);
        if m.is_m0() {
            return Ok(());
        }
        prop_assert_eq!(c.core[0].sym.to_string(), "sm");
        let all: Vec<_> = c.core.iter().chain(&c.instr).collect();
        for a in &c.abs {
            prop_assert!(all.iter().any(|p| &p.sym == a && p.arity == 1), "abs {}", a);
            if a.name == "pt" {
                prop_assert!(d.separating().contains(&a.params[0]));
            }
        }
        for x in d.tracked() {
            let pt = shapemc::tvla::formula::PredSym::with("pt", &[x]);
            prop_assert!(c.core.iter().any(|p| p.sym == pt));
            prop_assert_eq!(c.abs.contains(&pt), d.separating().contains(x));
        }
        let mut syms: Vec<_> = all.iter().map(|p| &p.sym).collect();
        let n = syms.len();
        syms.sort();
        syms.dedup();
        prop_assert_eq!(syms.len(), n, "predicate symbols are unique");
        for p in &c.instr {
            let def = p.def.as_ref().unwrap();
            let want: Vec<String> = if p.arity == 1 { vec!["v".into()] } else { vec!["v1".into(), "v2".into()] };
            prop_assert!(def.free_vars().iter().all(|v| want.contains(v)), "{}", def);
            // every predicate a definition mentions is in the class
            for q in def.preds() {
                prop_assert!(all.iter().any(|r| r.sym == q), "{} uses unknown {}", p.sym, q);
            }
        }
        for k in &c.constraints {
            prop_assert!(k.free_vars().is_empty());
        }
    }
}

#[test]
fn tracked_pointers_instantiate_per_pointer_families() {
    let (lat, all) = lattice();
    let m = all
        .iter()
        .find(|m| m.structure() == Some("sll") && m.families().count() == 2)
        .unwrap();
    let d = TrackingDef::new(["l1", "l2"], ["l1"], ["data == 0"]);
    let c = lat.generate(m, &d);
    let instr: Vec<String> = c.instr.iter().map(|p| p.sym.to_string()).collect();
    let f = m.binding().unwrap()["next"].clone();
    assert_eq!(
        instr,
        [
            format!("r[l1, {f}]"),
            format!("r[l2, {f}]"),
            format!("c[{f}]"),
            format!("nn[{f}]"),
        ]
    );
    let abs: Vec<String> = c.abs.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        abs,
        [
            format!("c[{f}]"),
            "fd[data == 0]".to_string(),
            "pt[l1]".to_string(),
            format!("r[l1, {f}]")
        ]
    );
    assert_eq!(
        c.instr[0].def.as_ref().unwrap().to_string(),
        format!("(E u. (pt[l1](u) & (u == v | TC(a, b: {f}(a, b))(u, v))))")
    );
    // D0 with a non-trivial SCG: only sm and the field predicates
    let c0 = lat.generate(m, &TrackingDef::d0());
    assert_eq!(c0.core.len(), 2);
    assert_eq!(
        c0.instr.len(),
        2,
        "cyclicity and nn (always) are not per-pointer"
    );
}
