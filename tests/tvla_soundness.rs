//! Soundness harness for the TVLA core: on random small concrete heaps, the concrete
//! post of every pointer operation (and of short operation sequences) must embed into
//! some structure of the abstract post of the canonical abstraction; plus algebraic laws
//! of canonical form, embedding and region join. The concrete post comes from
//! `post_concrete` and, independently of the library's update code, from the test's own
//! semantics on plain cell vectors (`Heap::exec`, the `*_per_oracle` tests).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use shapemc::tvla::families as fam;
use shapemc::tvla::{
    post, post_concrete, Fact, PredSym, PtrOp, ShapeClass, ShapeRegion, Structure,
};
use std::cell::Cell;

const VARS: [&str; 3] = ["x", "y", "t"];

#[derive(Clone, Copy, Debug)]
enum Kind {
    List,
    Dll,
    Tree,
}

fn fields(k: Kind) -> &'static [&'static str] {
    match k {
        Kind::List => &["next"],
        Kind::Dll => &["next", "prev"],
        Kind::Tree => &["left", "right", "parent"],
    }
}

/// Shape classes per kind; `variant` 1 keeps only `pt[x]` abstract (exercises focus on
/// non-abstraction pointers), variant 2 has no instrumentation at all. Every class with
/// instrumentation has `nn[f]` for each field as a non-abstraction predicate (the
/// library's `always family nonnull`).
fn class(k: Kind, variant: u8) -> ShapeClass {
    let mut instr = match (k, variant) {
        (_, 2) => vec![],
        (Kind::List, _) => vec![
            fam::reach("x", &["next"]),
            fam::reach("y", &["next"]),
            fam::tc(&["next"]),
            fam::cyclic(&["next"]),
            fam::acyclic(&["next"]),
            fam::shared(&["next"]),
            fam::segment("x", &["next"], &VARS),
            fam::segment("y", &["next"], &VARS),
            fam::segment("t", &["next"], &VARS),
        ],
        (Kind::Dll, _) => vec![
            fam::reach("x", &["next"]),
            fam::reach("y", &["prev"]),
            fam::cyclic(&["next"]),
            fam::cancel("next", "prev"),
            fam::cancel("prev", "next"),
            fam::shared(&["next"]),
            fam::segment("x", &["next"], &VARS),
            fam::segment("t", &["next"], &VARS),
        ],
        (Kind::Tree, _) => vec![
            fam::down(&["left", "right"]),
            fam::tc(&["left", "right"]),
            fam::reach("x", &["left", "right"]),
            fam::acyclic(&["left", "right"]),
            fam::cancel("left", "parent"),
            fam::cancel("right", "parent"),
            fam::parent_cancel("parent", "left", "right"),
            fam::shared(&["left", "right"]),
        ],
    };
    if variant != 2 {
        instr.extend(fields(k).iter().map(|f| fam::nonnull(f)));
    }
    let mut c = fam::simple_class(&VARS, fields(k), instr);
    c.abs.retain(|p| p.name != "nn");
    c.core.push(fam::fd("d == 0"));
    if variant == 1 {
        c.abs.retain(|p| p.name != "pt" || p.params[0] == "x");
    }
    c
}

#[derive(Clone, Debug)]
struct Heap {
    kind: Kind,
    variant: u8,
    n: usize,
    ptrs: Vec<Option<usize>>,
    /// per field, per node
    links: Vec<Vec<Option<usize>>>,
    data: Vec<bool>,
}

impl Heap {
    fn facts(&self) -> Vec<Fact> {
        let mut f = Vec::new();
        for (i, p) in self.ptrs.iter().enumerate() {
            if let Some(u) = p {
                f.push(Fact::Unary(PredSym::with("pt", &[VARS[i]]), *u));
            }
        }
        for (fi, name) in fields(self.kind).iter().enumerate() {
            for (u, t) in self.links[fi].iter().enumerate() {
                if let Some(t) = t {
                    f.push(Fact::Binary(PredSym::plain(*name), u, *t));
                }
            }
        }
        for (u, d) in self.data.iter().enumerate() {
            if *d {
                f.push(Fact::Unary(PredSym::with("fd", &["d == 0"]), u));
            }
        }
        f
    }
    fn structure(&self) -> Structure {
        match Structure::from_concrete(&class(self.kind, self.variant), self.n, &self.facts()) {
            Ok(s) => s,
            Err(e) => panic!("generated heap rejected: {e}"),
        }
    }
    /// The same heap with nodes renamed by `perm`.
    fn permuted(&self, perm: &[usize]) -> Heap {
        let m = |u: Option<usize>| u.map(|u| perm[u]);
        let mut h = self.clone();
        h.ptrs = self.ptrs.iter().map(|p| m(*p)).collect();
        for (fi, l) in self.links.iter().enumerate() {
            for (u, t) in l.iter().enumerate() {
                h.links[fi][perm[u]] = m(*t);
            }
        }
        for (u, d) in self.data.iter().enumerate() {
            h.data[perm[u]] = *d;
        }
        h
    }
}

fn heap() -> impl Strategy<Value = Heap> {
    (0u8..3, 0u8..3, 3usize..=6).prop_flat_map(|(k, variant, n)| {
        let kind = [Kind::List, Kind::Dll, Kind::Tree][k as usize];
        let nf = fields(kind).len();
        let node = proptest::option::weighted(0.75, 0..n);
        (
            proptest::collection::vec(node.clone(), VARS.len()),
            proptest::collection::vec(proptest::collection::vec(node, n), nf),
            proptest::collection::vec(any::<bool>(), n),
        )
            .prop_map(move |(ptrs, links, data)| Heap {
                kind,
                variant,
                n,
                ptrs,
                links,
                data,
            })
    })
}

fn op(kind: Kind) -> impl Strategy<Value = PtrOp> {
    let v = || proptest::sample::select(VARS.to_vec()).prop_map(|s| s.to_string());
    let f = move || proptest::sample::select(fields(kind).to_vec()).prop_map(|s| s.to_string());
    prop_oneof![
        v().prop_map(|x| PtrOp::AssignNull { x }),
        (v(), v()).prop_map(|(x, y)| PtrOp::Copy { x, y }),
        (v(), v(), f()).prop_map(|(x, y, field)| PtrOp::Load { x, y, field }),
        (v(), v(), f()).prop_map(|(x, y, field)| PtrOp::Load { x, y, field }),
        (v(), f()).prop_map(|(x, field)| PtrOp::StoreNull { x, field }),
        (v(), f(), v()).prop_map(|(x, field, y)| PtrOp::Store { x, field, y }),
        (v(), f(), v()).prop_map(|(x, field, y)| PtrOp::Store { x, field, y }),
        v().prop_map(|x| PtrOp::Malloc { x }),
        v().prop_map(|x| PtrOp::Free { x }),
        (v(), v()).prop_map(|(x, y)| PtrOp::AssumeEq { x, y }),
        (v(), v()).prop_map(|(x, y)| PtrOp::AssumeNe { x, y }),
        v().prop_map(|x| PtrOp::AssumeNull { x }),
        v().prop_map(|x| PtrOp::AssumeNotNull { x }),
        (
            v(),
            prop_oneof![
                Just(shapemc::tvla::Kleene::False),
                Just(shapemc::tvla::Kleene::True),
                Just(shapemc::tvla::Kleene::Half)
            ]
        )
            .prop_map(|(x, value)| PtrOp::SetField {
                x,
                assertion: "d == 0".into(),
                value
            }),
        (v(), any::<bool>()).prop_map(|(x, positive)| PtrOp::AssumeField {
            x,
            assertion: "d == 0".into(),
            positive
        }),
    ]
}

fn heap_and_ops() -> impl Strategy<Value = (Heap, Vec<PtrOp>)> {
    heap().prop_flat_map(|h| {
        let k = h.kind;
        (Just(h), proptest::collection::vec(op(k), 1..=6))
    })
}

fn abs_definite(s: &Structure) -> bool {
    let v = s.vocab();
    (0..s.len()).all(|u| {
        v.abs
            .iter()
            .all(|p| s.get1(*p, u) != shapemc::tvla::Kleene::Half)
    })
}

fn embeds_somewhere(c: &Structure, abs: &[Structure]) -> bool {
    abs.iter().any(|a| c.embeds_into(a))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(400),
        .. ProptestConfig::default()
    })]

    /// Single operations: concrete post embeds into the abstract post of blur(s), and
    /// so does its canonical abstraction; concrete null dereferences are reported.
    #[test]
    fn single_op_sound((h, o) in heap().prop_flat_map(|h| { let k = h.kind; (Just(h), op(k)) })) {
        let s = h.structure();
        let cls = class(h.kind, h.variant);
        let c = post_concrete(&s, &o);
        let a = post(&s.blur(), &cls, &o);
        for e in &c.errors {
            prop_assert!(a.errors.contains(e), "error {:?} missed for {:?}", e, o);
        }
        for ci in &c.structures {

            prop_assert!(embeds_somewhere(ci, &a.structures),
                "op {:?}\nconcrete post {}\nabstract {:?}\nfrom {}", o, ci, a.structures, s.blur());
            // blur(c) ⊑ a needs a's abstraction values definite (otherwise a may keep
            // apart nodes that blur(c) merges); the theorem is the concrete check above
            prop_assert!(!a.structures.iter().all(abs_definite)
                || embeds_somewhere(&ci.blur(), &a.structures),
                "blurred: op {:?}\nconcrete post {}\nabstract {:?}", o, ci.blur(), a.structures);
        }
    }

    /// Operation sequences (instrumentation values carried across steps on summary
    /// nodes, finite differencing): every concrete run is covered by the abstract run.
    #[test]
    fn op_sequence_sound((h, ops) in heap_and_ops()) {
        let cls = class(h.kind, h.variant);
        let mut conc = vec![h.structure()];
        let mut abst = vec![h.structure().blur()];
        for o in &ops {
            let mut nc = Vec::new();
            let mut cerr = Vec::new();
            for c in &conc {
                let r = post_concrete(c, o);
                cerr.extend(r.errors);
                nc.extend(r.structures);
            }
            let mut na = Vec::new();
            let mut aerr = Vec::new();
            for a in &abst {
                let r = post(a, &cls, o);
                aerr.extend(r.errors);
                na.extend(r.structures);
            }
            for e in &cerr {
                prop_assert!(aerr.contains(e));
            }
            for c in &nc {
                prop_assert!(embeds_somewhere(c, &na), "after {:?}: {} not covered by {:?}", o, c, na);
            }
            conc = nc;
            abst = na;
        }
    }

    /// Canonical form and canonical abstraction are invariant under node renaming.
    #[test]
    fn canonical_invariant(h in heap(), seed in any::<u64>()) {
        let mut perm: Vec<usize> = (0..h.n).collect();
        let mut x = seed;
        for i in (1..perm.len()).rev() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            perm.swap(i, (x >> 33) as usize % (i + 1));
        }
        let s = h.structure();
        let p = h.permuted(&perm).structure();
        prop_assert_eq!(s.blur(), p.blur());
        prop_assert_eq!(s.canonical(), p.canonical());
        prop_assert!(s.embeds_into(&p) && p.embeds_into(&s));
    }

    /// Embedding is reflexive and transitive along s ⊑ blur(s) ⊑ blur(post) chains;
    /// region join is idempotent and commutative and subsumption is reflexive.
    #[test]
    fn laws(h1 in heap(), h2 in heap()) {
        let s = h1.structure();
        let b = s.blur();
        prop_assert!(s.embeds_into(&s));
        prop_assert!(b.embeds_into(&b));
        prop_assert!(s.embeds_into(&b));
        prop_assert_eq!(b.blur(), b.clone());
        let cls = class(h1.kind, h1.variant);
        let r1 = ShapeRegion::from_structures(cls.clone(), [b.clone()]);
        let r2 = if h2.kind as u8 == h1.kind as u8 && h2.variant == h1.variant {
            ShapeRegion::from_structures(cls.clone(), [h2.structure().blur()])
        } else {
            ShapeRegion::empty(cls.clone())
        };
        prop_assert_eq!(r1.join(&r1), r1.clone());
        prop_assert_eq!(r1.join(&r2), r2.join(&r1));
        prop_assert!(r1.subsumed_by(&r1));
        prop_assert!(r1.subsumed_by(&r1.join(&r2)));
        prop_assert!(r2.subsumed_by(&r1.join(&r2)));
        // transitivity on a chain s ⊑ b ⊑ (b joined with an abstract successor's blur)
        let o = PtrOp::AssignNull { x: "x".into() };
        let pc = post_concrete(&s, &o);
        let pa = post(&b, &cls, &o);
        for c in &pc.structures {
            let cb = c.blur();
            for a in &pa.structures {
                if c.embeds_into(&cb) && cb.embeds_into(a) {
                    prop_assert!(c.embeds_into(a));
                }
            }
        }
    }
}

// ---------------------------------------------------------------- concrete oracle
//
// The tests above compare `post` with `post_concrete`, which share the update code:
// a wrong update on both sides passes. The tests below run each operation on the
// generated heap with the test's own semantics (plain vectors of cells), build the
// structure of the result with `from_concrete` (instrumentation computed from the
// definitions), and check the embedding theorem against `post` of the abstraction of
// the original heap. They count the cases that reached the embedding check, so they
// cannot pass vacuously (every case blocked by an assume or a NULL dereference).

/// The outcome of an operation on a concrete heap.
#[derive(Debug)]
enum Step {
    /// The successor heap.
    Next(Heap),
    /// The operation dereferences this NULL variable (no successor).
    NullDeref(String),
    /// An `assume` that does not hold (no successor).
    Blocked,
}

impl Heap {
    fn var(x: &str) -> usize {
        VARS.iter()
            .position(|v| *v == x)
            .unwrap_or_else(|| panic!("variable {x}"))
    }
    fn field(&self, f: &str) -> usize {
        fields(self.kind)
            .iter()
            .position(|g| *g == f)
            .unwrap_or_else(|| panic!("field {f}"))
    }
    /// `op` on this heap; a cell `malloc` returns has data bit `fresh` and NULL fields,
    /// `free` removes the cell and every pointer and field to it becomes NULL (the
    /// dangling pointers of `PtrOp::Free`).
    fn exec(&self, op: &PtrOp, fresh: bool) -> Step {
        let mut h = self.clone();
        let at = |x: &str| self.ptrs[Heap::var(x)];
        match op {
            PtrOp::AssignNull { x } => h.ptrs[Heap::var(x)] = None,
            PtrOp::Copy { x, y } => h.ptrs[Heap::var(x)] = at(y),
            PtrOp::Load { x, y, field } => match at(y) {
                None => return Step::NullDeref(y.clone()),
                Some(c) => h.ptrs[Heap::var(x)] = self.links[self.field(field)][c],
            },
            PtrOp::StoreNull { x, field } => match at(x) {
                None => return Step::NullDeref(x.clone()),
                Some(c) => h.links[self.field(field)][c] = None,
            },
            PtrOp::Store { x, field, y } => match at(x) {
                None => return Step::NullDeref(x.clone()),
                Some(c) => h.links[self.field(field)][c] = at(y),
            },
            PtrOp::Malloc { x } => {
                let c = h.n;
                h.n += 1;
                h.links.iter_mut().for_each(|l| l.push(None));
                h.data.push(fresh);
                h.ptrs[Heap::var(x)] = Some(c);
            }
            PtrOp::Free { x } => {
                if let Some(c) = at(x) {
                    let gone = |t: Option<usize>| match t {
                        Some(t) if t == c => None,
                        Some(t) if t > c => Some(t - 1),
                        t => t,
                    };
                    h.n -= 1;
                    h.ptrs = self.ptrs.iter().map(|p| gone(*p)).collect();
                    for l in &mut h.links {
                        l.remove(c);
                        l.iter_mut().for_each(|t| *t = gone(*t));
                    }
                    h.data.remove(c);
                }
            }
            PtrOp::AssumeEq { x, y } if at(x) != at(y) => return Step::Blocked,
            PtrOp::AssumeNe { x, y } if at(x) == at(y) => return Step::Blocked,
            PtrOp::AssumeNull { x } if at(x).is_some() => return Step::Blocked,
            PtrOp::AssumeNotNull { x } if at(x).is_none() => return Step::Blocked,
            PtrOp::AssumeEq { .. }
            | PtrOp::AssumeNe { .. }
            | PtrOp::AssumeNull { .. }
            | PtrOp::AssumeNotNull { .. } => {}
            other => panic!("the oracle does not model {other:?}"),
        }
        Step::Next(h)
    }
}

/// The pointer operations the oracle models (assumes less often, so that most cases
/// have a successor).
fn oracle_op(kind: Kind) -> impl Strategy<Value = PtrOp> {
    let v = || proptest::sample::select(VARS.to_vec()).prop_map(|s| s.to_string());
    let f = move || proptest::sample::select(fields(kind).to_vec()).prop_map(|s| s.to_string());
    prop_oneof![
        2 => v().prop_map(|x| PtrOp::AssignNull { x }),
        2 => (v(), v()).prop_map(|(x, y)| PtrOp::Copy { x, y }),
        4 => (v(), v(), f()).prop_map(|(x, y, field)| PtrOp::Load { x, y, field }),
        2 => (v(), f()).prop_map(|(x, field)| PtrOp::StoreNull { x, field }),
        4 => (v(), f(), v()).prop_map(|(x, field, y)| PtrOp::Store { x, field, y }),
        2 => v().prop_map(|x| PtrOp::Malloc { x }),
        2 => v().prop_map(|x| PtrOp::Free { x }),
        1 => (v(), v()).prop_map(|(x, y)| PtrOp::AssumeEq { x, y }),
        1 => (v(), v()).prop_map(|(x, y)| PtrOp::AssumeNe { x, y }),
        1 => v().prop_map(|x| PtrOp::AssumeNull { x }),
        1 => v().prop_map(|x| PtrOp::AssumeNotNull { x }),
    ]
}

fn oracle_config(default_cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default_cases),
        source_file: Some(file!()),
        ..ProptestConfig::default()
    }
}

/// Asserts the embedding theorem for one concrete successor `next` (a heap) of a
/// heap whose abstraction has the abstract post `a`; `pc` is `post_concrete` of the
/// original heap, which must represent `next` too.
fn check_successor(
    next: &Heap,
    a: &[Structure],
    pc: Option<&[Structure]>,
    what: &dyn Fn() -> String,
) -> Result<(), TestCaseError> {
    let c = next.structure();
    prop_assert!(
        embeds_somewhere(&c, a),
        "{}\nconcrete successor {}\nnot in the abstract post {:?}",
        what(),
        c,
        a
    );
    // blur(c) ⊑ a needs a's abstraction values definite (see single_op_sound)
    prop_assert!(
        !a.iter().all(abs_definite) || embeds_somewhere(&c.blur(), a),
        "{}\nblurred successor {}\nnot in the abstract post {:?}",
        what(),
        c.blur(),
        a
    );
    if let Some(pc) = pc {
        prop_assert!(
            embeds_somewhere(&c, pc),
            "{}\nconcrete successor {}\nnot in post_concrete {:?}",
            what(),
            c,
            pc
        );
    }
    Ok(())
}

/// Single operations against the oracle: the concrete successor (re-abstracted by
/// `from_concrete`) embeds into the abstract post of blur(heap), and into
/// `post_concrete` of the heap; a NULL dereference is reported by the abstract post.
#[test]
fn single_op_embeds_per_oracle() {
    let config = oracle_config(300);
    let cases = config.cases as usize;
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let (checked, deref, blocked) = (Cell::new(0usize), Cell::new(0usize), Cell::new(0usize));
    let strategy = heap().prop_flat_map(|h| {
        let k = h.kind;
        (Just(h), oracle_op(k), any::<bool>())
    });
    let result = runner.run(&strategy, |(h, o, fresh)| {
        let s = h.structure();
        let cls = class(h.kind, h.variant);
        let a = post(&s.blur(), &cls, &o);
        match h.exec(&o, fresh) {
            Step::NullDeref(var) => {
                deref.set(deref.get() + 1);
                let e = shapemc::tvla::AbstractError::MayDerefNull { var };
                prop_assert!(
                    a.errors.contains(&e),
                    "{:?} missed for {:?} on {:?}",
                    e,
                    o,
                    h
                );
            }
            Step::Blocked => blocked.set(blocked.get() + 1),
            Step::Next(next) => {
                checked.set(checked.get() + 1);
                let pc = post_concrete(&s, &o);
                check_successor(&next, &a.structures, Some(&pc.structures), &|| {
                    format!("op {o:?} on {h:?}\nabstraction {}", s.blur())
                })?;
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (c, d, b) = (checked.get(), deref.get(), blocked.get());
    eprintln!("single_op_embeds_per_oracle: {c} embedding checks, {d} NULL dereferences, {b} blocked assumes");
    // the oracle's successor exists in most cases (assumes are rare, pointers are
    // non-NULL three times in four): the check cannot pass vacuously
    assert!(
        c >= cases / 2,
        "only {c} of {cases} cases reached the embedding check"
    );
}

/// Operation sequences against the oracle: after every step the concrete heap (run by
/// the oracle) embeds into some structure of the abstract run from blur(heap).
#[test]
fn op_sequence_embeds_per_oracle() {
    let config = oracle_config(150);
    let cases = config.cases as usize;
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let (steps, full) = (Cell::new(0usize), Cell::new(0usize));
    let strategy = heap().prop_flat_map(|h| {
        let k = h.kind;
        (
            Just(h),
            proptest::collection::vec((oracle_op(k), any::<bool>()), 1..=5),
        )
    });
    let result = runner.run(&strategy, |(h, ops)| {
        let cls = class(h.kind, h.variant);
        let mut conc = h.clone();
        let mut abst = vec![h.structure().blur()];
        for (i, (o, fresh)) in ops.iter().enumerate() {
            let mut na = Vec::new();
            let mut aerr = Vec::new();
            for a in &abst {
                let r = post(a, &cls, o);
                aerr.extend(r.errors);
                na.extend(r.structures);
            }
            match conc.exec(o, *fresh) {
                Step::NullDeref(var) => {
                    let e = shapemc::tvla::AbstractError::MayDerefNull { var };
                    prop_assert!(aerr.contains(&e), "{:?} missed after {:?}", e, &ops[..=i]);
                    return Ok(());
                }
                Step::Blocked => return Ok(()),
                Step::Next(next) => {
                    steps.set(steps.get() + 1);
                    check_successor(&next, &na, None, &|| {
                        format!("ops {:?} from {h:?}", &ops[..=i])
                    })?;
                    conc = next;
                }
            }
            abst = na;
        }
        full.set(full.get() + 1);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (s, f) = (steps.get(), full.get());
    eprintln!(
        "op_sequence_embeds_per_oracle: {s} embedding checks, {f} of {cases} runs to the end"
    );
    assert!(
        s >= cases && f >= cases / 4,
        "only {s} steps in {cases} cases reached the embedding check ({f} runs to the end)"
    );
}
