//! FineTune (paper §3.3) against synthetic monotone oracles.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use proptest::prelude::*;
use shapemc::scg::{fine_tune, HoldingInvariant, Lattice, Library, Scg, TrackingDef};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn lattice() -> &'static Lattice {
    static L: OnceLock<Lattice> = OnceLock::new();
    L.get_or_init(|| {
        Lattice::new(
            Library::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scg-library"))
                .expect("library loads"),
        )
    })
}

/// Enabled SCGs of a tree with parent pointers: tree (128) and tree-parent (256) over
/// (l, r, p), plus sll along l and r (8 each).
fn tree_enabled() -> Vec<Scg> {
    lattice().enabled(&[
        HoldingInvariant::new("binary_tree", &["l", "r"]),
        HoldingInvariant::new("tree_parent", &["l", "r", "p"]),
        HoldingInvariant::new("acyclic_list", &["l"]),
        HoldingInvariant::new("acyclic_list", &["r"]),
    ])
}

/// Checks the FineTune contract for the oracle "m is finer-or-equal to some generator".
fn check(current: &Scg, enabled: &[Scg], gens: &[Scg]) -> Result<(Scg, usize), TestCaseError> {
    let lat = lattice();
    let d = TrackingDef::new(["x", "y"], ["x"], ["data == 0"]);
    let rules = |m: &Scg| gens.iter().any(|g| lat.leq(m, g));
    let mut calls = 0usize;
    let res = fine_tune(current, enabled, lat, &d, &mut |m| {
        calls += 1;
        rules(m)
    });
    let cands: Vec<&Scg> = enabled.iter().filter(|m| lat.lt(m, current)).collect();
    let ruling: Vec<&&Scg> = cands.iter().filter(|m| rules(m)).collect();
    if ruling.is_empty() {
        prop_assert_eq!(&res, current);
    } else {
        prop_assert!(cands.contains(&&res), "result {} is a candidate", res);
        prop_assert!(rules(&res), "result {} rules the path out", res);
        for m in &ruling {
            prop_assert!(
                !lat.lt(&res, m),
                "{} is strictly coarser than {} and rules out",
                m,
                res
            );
        }
    }
    prop_assert!(calls <= cands.len());
    Ok((res, calls))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn returns_a_coarsest_ruling_scg_from_m0(idx in prop::collection::vec(0usize..1000, 0..4)) {
        let enabled = tree_enabled();
        let gens: Vec<Scg> = idx.iter().map(|i| enabled[i % enabled.len()].clone()).collect();
        check(&Scg::m0(), &enabled, &gens)?;
    }

    #[test]
    fn returns_a_coarsest_ruling_scg_below_current(cur in 0usize..1000, idx in prop::collection::vec(0usize..1000, 0..4)) {
        let enabled = tree_enabled();
        let current = enabled[cur % enabled.len()].clone();
        let gens: Vec<Scg> = idx.iter().map(|i| enabled[i % enabled.len()].clone()).collect();
        check(&current, &enabled, &gens)?;
    }
}

#[test]
fn returns_a_single_coarsest_scg_and_current_on_failure() {
    // dll along (succ, pred): every non-empty family set rules out; the result is a
    // coarsest one (a single family; which one depends on the search path, as in the paper).
    let lat = lattice();
    let enabled = lat.enabled(&[HoldingInvariant::new("doubly_linked", &["succ", "pred"])]);
    let d = TrackingDef::new(["a", "b", "c"], ["a"], Vec::<&str>::new());
    let res = fine_tune(&Scg::m0(), &enabled, lat, &d, &mut |m| {
        m.families().count() >= 1
    });
    assert_eq!(res.families().count(), 1, "{res}");
    // only the cheap families rule out: cancel (2 predicates) or cyclic (1)
    let res = fine_tune(&Scg::m0(), &enabled, lat, &d, &mut |m| {
        m.families().any(|f| f == "cyclic") || m.families().any(|f| f == "cancel")
    });
    let fams: Vec<&str> = res.families().map(|s| s.as_str()).collect();
    assert!(fams == ["cyclic"] || fams == ["cancel"], "{res}");
    // nothing rules out: current is returned
    let cur = enabled[0].clone();
    assert_eq!(fine_tune(&cur, &enabled, lat, &d, &mut |_| false), cur);
    // no candidate strictly finer than the finest SCG
    let finest = enabled
        .iter()
        .max_by_key(|m| m.families().count())
        .unwrap()
        .clone();
    let mut calls = 0;
    let r = fine_tune(&finest, &enabled, lat, &d, &mut |_| {
        calls += 1;
        true
    });
    assert_eq!((r, calls), (finest, 0));
}

/// A library with one structure of `n` families, so that nested family sets form a chain.
fn chain_lattice(n: usize) -> (Lattice, Vec<Scg>) {
    let mut src =
        String::from("structure chain {\n  roles next;\n  requires acyclic_list(next);\n");
    for i in 0..n {
        src.push_str(&format!(
            "  family f{i} {{\n    pred p{i}[next](v) := E w. next(v, w);\n  }}\n"
        ));
    }
    src.push_str("}\n");
    let lib = Library::from_sources([(PathBuf::from("chain.scg"), src)]).expect("loads");
    assert_eq!(lib.structure("chain").unwrap().families.len(), n);
    let lat = Lattice::new(lib);
    let b: shapemc::scg::RoleBinding = [("next".to_string(), "n".to_string())]
        .into_iter()
        .collect();
    let chain: Vec<Scg> = (0..=n)
        .map(|k| Scg::new("chain", (0..k).map(|i| format!("f{i}")), b.clone()))
        .collect();
    (lat, chain)
}

#[test]
fn oracle_calls_are_logarithmic_on_chains() {
    for n in [1usize, 2, 3, 7, 8, 15, 16, 23, 24] {
        let (lat, chain) = chain_lattice(n);
        let d = TrackingDef::new(["x"], ["x"], Vec::<&str>::new());
        // chain[k] has k families; candidates below m0: all n+1 elements
        let len = chain.len();
        let bound = 2 * (len as f64).log2().ceil() as usize + 2;
        let mut max_calls = 0;
        for k in 0..=len {
            // rules out iff at least k families (k = len: nothing rules out)
            let mut calls = 0;
            let res = fine_tune(&Scg::m0(), &chain, &lat, &d, &mut |m| {
                calls += 1;
                m.families().count() >= k
            });
            if k == len {
                assert_eq!(res, Scg::m0());
            } else {
                assert_eq!(res, chain[k], "n={n} k={k}");
            }
            assert!(calls <= bound, "n={n} k={k}: {calls} calls > {bound}");
            max_calls = max_calls.max(calls);
        }
        eprintln!("chain of {len}: at most {max_calls} oracle calls (bound {bound})");
    }
    // more families than the library supports are rejected with a position
    let mut src = String::from("structure big {\n  roles next;\n  requires acyclic_list(next);\n");
    for i in 0..25 {
        src.push_str(&format!(
            "  family f{i} {{\n    pred p{i}[next](v) := sm(v);\n  }}\n"
        ));
    }
    src.push_str("}\n");
    let e = Library::from_sources([(PathBuf::from("big.scg"), src)]).unwrap_err();
    assert!(
        e[0].to_string()
            .starts_with("big.scg:1:1: `big` has 25 families"),
        "{}",
        e[0]
    );
}

/// FineTune over the whole universe of three fields (2,664 SCGs) is correct: the
/// situation after Refine extends E(σ) to everything not coarser.
#[test]
fn whole_universe_search_finds_the_target() {
    whole_universe_search();
}

/// ... and fast: 0.5 s with the order computed once per search; 47.5 s when every
/// round recomputed `leq` over all candidate pairs. A wall-clock bound, kept out of
/// the default run (it fails under load, not on a bug).
#[test]
#[ignore = "wall-clock bound; scripts/timing runs it on an idle machine"]
fn timing_whole_universe_search() {
    let took = whole_universe_search();
    assert!(took.as_secs() < 5, "{took:?}");
}

/// The search of [`whole_universe_search_finds_the_target`]; returns its time.
fn whole_universe_search() -> std::time::Duration {
    let lat = lattice();
    let fields: Vec<String> = ["f", "g", "h"].iter().map(|s| s.to_string()).collect();
    let universe = lat.universe(&fields);
    let target = universe
        .iter()
        .find(|m| m.structure() == Some("tree-parent") && m.families().count() == 2)
        .unwrap()
        .clone();
    let start = std::time::Instant::now();
    let (res, calls) = check(&Scg::m0(), &universe, std::slice::from_ref(&target)).unwrap();
    let took = start.elapsed();
    eprintln!(
        "universe of {}: {calls} oracle calls, {took:?}",
        universe.len()
    );
    assert_eq!(res, target);
    took
}

#[test]
fn cost_pass_prefers_the_cheaper_of_two_incomparable_classes() {
    // gdsl/cancel_list_insert_after: reachability and sharing + cancellation both rule
    // the spurious path out; the binary search alone settles on the first it meets
    // (reach: one predicate per tracked pointer and a binary one), the cost pass must
    // then find the cheaper sharing class.
    let lat = lattice();
    let enabled = lat.enabled(&[HoldingInvariant::new("doubly_linked", &["succ", "pred"])]);
    let d = TrackingDef::new(["a", "b", "c", "e"], ["a", "b"], Vec::<&str>::new());
    let has = |m: &Scg, f: &str| m.families().any(|g| g == f);
    let mut calls = 0usize;
    let res = fine_tune(&Scg::m0(), &enabled, lat, &d, &mut |m| {
        calls += 1;
        m.structure() == Some("dll") && (has(m, "reach") || has(m, "cancel") && has(m, "share"))
    });
    assert_eq!(res.to_string(), "dll{cancel, share}(next=succ, prev=pred)");
    assert!(
        calls <= 2 * 5 + 2 + shapemc::scg::finetune::MAX_COST_QUERIES,
        "{calls} calls"
    );
}
