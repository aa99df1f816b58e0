//! Three-valued logical structures (shape graphs) over a [`ShapeClass`] vocabulary.
//!
//! A [`Structure`] has `len()` individuals (heap nodes) `0..len()` and dense tables of
//! [`Kleene`] values for the nullary, unary and binary predicates of its [`Vocab`] (the
//! compiled shape class; unary predicate 0 is always `sm`). Structures returned by
//! [`Structure::blur`] (and hence by every abstract operation) are in *canonical form*:
//! nodes are ordered by their abstraction-predicate values (canonical abstraction's
//! naming), then by the other unary values, then by colour refinement over the binary
//! predicates, with remaining ties broken by a bounded search for the least encoding, so
//! isomorphic structures compare and hash equal.

use super::analysis::{
    clause, clause_rules, definition_rules, free_positions, guarded, nonlocal_preds, polarity, Pol,
    PolKey,
};
use super::class::{PredDef, ShapeClass};
use super::eval::{Compiled, Evaluator};
use super::families::{recognize, Family};
use super::formula::{Formula, Kleene, PredSym};
use fixedbitset::FixedBitSet;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Errors of the structure builders (user-facing input such as explicit heaps).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TvlaError {
    #[error("predicate {0} is not a core predicate of the shape class")]
    UnknownPredicate(String),
    #[error("predicate {0} used with the wrong number of arguments")]
    Arity(String),
    #[error("node {0} out of range")]
    NodeOutOfRange(usize),
    #[error("the concrete heap violates an integrity constraint of the shape class")]
    Integrity,
}

/// An instrumentation predicate compiled against its vocabulary.
#[derive(Clone, Debug)]
pub struct InstrInfo {
    pub sym: PredSym,
    pub arity: u8,
    pub idx: usize,
    /// Defining formula over free variables `v` (unary) / `v1, v2` (binary), or `()`.
    pub def: Compiled,
    /// Core predicates the definition depends on (transitively through other
    /// instrumentation predicates).
    pub core_deps: BTreeSet<PredSym>,
    /// The differencing family, when the predicate was built by [`super::families`].
    pub family: Option<Family>,
    /// Polarity of the definition in each predicate and the universe.
    pub pol: BTreeMap<PolKey, Pol>,
    /// The (arity, index) of each key of `pol`, in `pol`'s order (`None` for the
    /// universe and for a predicate the vocabulary lacks).
    pub pol_keys: Vec<Option<(u8, usize)>>,
    /// Predicates with a non-local occurrence in the definition.
    pub nonlocal: BTreeSet<PredSym>,
    /// Whether every quantifier of the definition is guarded by a field atom.
    pub guarded: bool,
    /// Argument positions holding a free variable, per predicate.
    pub free_pos: BTreeMap<PredSym, BTreeSet<usize>>,
    /// The definition's [`super::eval::CFormula::needs_unary`]: where that unary
    /// predicate is 0 at every node, the definition is 0 at every tuple.
    pub needs: Option<usize>,
}

/// A compiled [`ShapeClass`]: predicate tables, abstraction predicates, compiled
/// instrumentation definitions (in dependency order) and integrity constraints.
#[derive(Debug)]
pub struct Vocab {
    pub class: ShapeClass,
    pub nullary: Vec<PredSym>,
    pub unary: Vec<PredSym>,
    pub binary: Vec<PredSym>,
    index: FxHashMap<PredSym, (u8, usize)>,
    /// Unary indices of the abstraction predicates (canonical names), sorted.
    pub abs: Vec<usize>,
    /// Whether a unary predicate index is an abstraction predicate.
    pub is_abs: Vec<bool>,
    /// Instrumentation predicates, each after the ones its definition mentions.
    pub instr: Vec<InstrInfo>,
    /// Unary indices of [`ShapeClass::pointed_only`] predicates.
    pub pointed_only: Vec<usize>,
    /// `pt[x]` predicates: (x, unary index).
    pub pt: Vec<(String, usize)>,
    /// Binary core predicates (pointer fields): (field name, binary index).
    pub fields: Vec<(String, usize)>,
    /// `ShapeClass::constraints`, compiled (closed formulas).
    pub constraints: Vec<Compiled>,
    /// Unit-propagation rules `A vs. lhs -> literal` derived from clause-shaped
    /// constraints and instrumentation definitions (used by coerce).
    pub rules: Vec<Compiled>,
    /// The fields cancellation makes injective, with the predicates that follow.
    pub injective: Vec<super::families::Injective>,
    /// Whether every definition and constraint is local to a connected component
    /// ([`super::analysis::component_local`]; binary definitions also link their two
    /// nodes), with no nullary predicate and no counters: then a post may leave the
    /// components its operation does not touch as they are (the frame rule,
    /// `transfer::frame`).
    pub frame_local: bool,
}

/// The unary index of `sm` in every vocabulary.
pub const SM: usize = 0;

thread_local! {
    static VOCABS: RefCell<Vec<Arc<Vocab>>> = const { RefCell::new(Vec::new()) };
}

/// The clause rules coerce applies for `class` ([`Vocab::rules`]): its constraints,
/// the definitions of its instrumentation predicates, and the facts of the recognised
/// families (a self-loop is a cycle, an edge is a path, `tc[F]` is transitive, `c[F]`
/// and `acyc[F]` are `tc[F](v, v)` and its negation).
fn coerce_rules(class: &ShapeClass) -> Vec<Formula> {
    let mut rules = Vec::new();
    for c in &class.constraints {
        if let Some((vars, lits)) = clause(c) {
            rules.extend(clause_rules(&vars, &lits));
        }
    }
    for p in &class.instr {
        if let (Some(def), true) = (&p.def, p.arity <= 2) {
            let free: &[&str] = match p.arity {
                0 => &[],
                1 => &["v"],
                _ => &["v1", "v2"],
            };
            rules.extend(definition_rules(&p.sym, free, def));
        }
        // a self-loop is a cycle, an edge is a path
        let fam = recognize(p);
        for f in fam.iter().flat_map(|f| f.fields().to_vec()) {
            let edge = |a: &str, b: &str| Formula::pred(PredSym::plain(f.clone()), &[a, b]);
            let me = |args: &[&str]| Formula::pred(p.sym.clone(), args);
            let rule = match fam {
                Some(Family::Tc(_)) => {
                    Some((vec!["v1", "v2"], edge("v1", "v2"), me(&["v1", "v2"]), true))
                }
                Some(Family::Cyclic(_)) => Some((vec!["v"], edge("v", "v"), me(&["v"]), true)),
                Some(Family::Acyclic(_)) => Some((vec!["v"], edge("v", "v"), me(&["v"]), false)),
                _ => None,
            };
            if let Some((vars, a, b, sign)) = rule {
                let lits = vec![(a, false), (b, sign)];
                let vars: Vec<String> = vars.iter().map(|s| s.to_string()).collect();
                rules.extend(clause_rules(&vars, &lits));
            }
        }
    }
    // closure facts: tc[F] is transitive, an edge followed by a path is a path, and
    // c[F] / acyc[F] are tc[F](v, v) / its negation
    let strs = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for p in &class.instr {
        let Some(Family::Tc(fs)) = recognize(p) else {
            continue;
        };
        let tc = |a: &str, b: &str| Formula::pred(p.sym.clone(), &[a, b]);
        rules.extend(clause_rules(
            &strs(&["a", "b", "c"]),
            &[
                (tc("a", "b"), false),
                (tc("b", "c"), false),
                (tc("a", "c"), true),
            ],
        ));
        for f in &fs {
            let e = Formula::pred(PredSym::plain(f.clone()), &["a", "b"]);
            rules.extend(clause_rules(
                &strs(&["a", "b", "c"]),
                &[(e, false), (tc("b", "c"), false), (tc("a", "c"), true)],
            ));
        }
        for q in &class.instr {
            let me = Formula::pred(q.sym.clone(), &["v"]);
            let sign = match recognize(q) {
                Some(Family::Cyclic(g)) if g == fs => true,
                Some(Family::Acyclic(g)) if g == fs => false,
                _ => continue,
            };
            let vv = (tc("v", "v"), true);
            rules.extend(clause_rules(
                &strs(&["v"]),
                &[(me.clone(), !sign), vv.clone()],
            ));
            rules.extend(clause_rules(&strs(&["v"]), &[(me, sign), (vv.0, false)]));
        }
    }
    rules
}

impl Vocab {
    /// The compiled vocabulary of `class` (cached per thread; equal classes share one).
    /// `sm` is added when the class lacks it; instrumentation predicates whose definition
    /// is missing are treated as unknown (their value is never refined).
    pub fn of(class: &ShapeClass) -> Arc<Vocab> {
        VOCABS.with(|c| {
            if let Some(v) = c.borrow().iter().find(|v| v.class == *class) {
                return v.clone();
            }
            let v = Arc::new(Vocab::build(class));
            let mut c = c.borrow_mut();
            if c.len() >= 64 {
                c.remove(0);
            }
            c.push(v.clone());
            v
        })
    }

    fn build(class: &ShapeClass) -> Vocab {
        let sm = PredSym::plain("sm");
        let mut v = Vocab {
            class: class.clone(),
            nullary: Vec::new(),
            unary: vec![sm.clone()],
            binary: Vec::new(),
            index: FxHashMap::default(),
            abs: Vec::new(),
            is_abs: Vec::new(),
            instr: Vec::new(),
            pointed_only: Vec::new(),
            pt: Vec::new(),
            fields: Vec::new(),
            constraints: Vec::new(),
            rules: Vec::new(),
            injective: Vec::new(),
            frame_local: false,
        };
        v.index.insert(sm, (1, SM));
        let add = |v: &mut Vocab, p: &PredDef, core: bool| {
            if v.index.contains_key(&p.sym) {
                return;
            }
            let (table, ar) = match p.arity {
                0 => (&mut v.nullary, 0),
                1 => (&mut v.unary, 1),
                _ => (&mut v.binary, 2),
            };
            table.push(p.sym.clone());
            let idx = table.len() - 1;
            v.index.insert(p.sym.clone(), (ar, idx));
            if core && ar == 1 && p.sym.name == "pt" && p.sym.params.len() == 1 {
                v.pt.push((p.sym.params[0].clone(), idx));
            }
            if core && ar == 2 && p.sym.params.is_empty() {
                v.fields.push((p.sym.name.clone(), idx));
            }
        };
        for p in &class.core {
            add(&mut v, p, true);
        }
        for p in &class.instr {
            add(&mut v, p, false);
        }
        v.is_abs = vec![false; v.unary.len()];
        for a in &class.abs {
            if let Some((1, i)) = v.index.get(a).copied() {
                if i != SM {
                    v.is_abs[i] = true;
                }
            }
        }
        v.abs = (0..v.unary.len()).filter(|i| v.is_abs[*i]).collect();
        v.pointed_only = class
            .pointed_only
            .iter()
            .filter_map(|p| match v.index.get(p).copied() {
                Some((1, i)) if i != SM && !v.is_abs[i] => Some(i),
                _ => None,
            })
            .collect();
        v.compile_instr(class);
        v.constraints = class
            .constraints
            .iter()
            .map(|f| Compiled::new(&v, f, &[]))
            .collect();
        let rules = coerce_rules(class);
        v.rules = rules.iter().map(|f| Compiled::new(&v, f, &[])).collect();
        v.injective = super::families::injective_fields(class, |p| v.lookup(p));
        v.frame_local = v.nullary.is_empty() && class.counters.is_empty() && {
            use super::analysis::{component_local, connects};
            let defs_local = class.instr.iter().all(|p| match (&p.def, p.arity) {
                (Some(d), 1) => component_local(d, &["v"]),
                (Some(d), 2) => connects(d, "v1", "v2") && component_local(d, &["v1", "v2"]),
                _ => false,
            });
            defs_local && class.constraints.iter().all(|c| component_local(c, &[]))
        };
        v
    }

    /// The instrumentation definitions of `class` compiled into [`Vocab::instr`], in
    /// the order of their dependencies (a cycle is broken at its first definition; the
    /// values stay sound), each with its core dependencies, recognised family,
    /// polarity and locality facts.
    fn compile_instr(&mut self, class: &ShapeClass) {
        // instrumentation definitions, ordered by dependencies
        let instr_syms: BTreeSet<PredSym> = class.instr.iter().map(|p| p.sym.clone()).collect();
        let mut pending: Vec<&PredDef> = class
            .instr
            .iter()
            .filter(|p| p.def.is_some() && p.arity <= 2)
            .collect();
        let mut done: FxHashMap<PredSym, BTreeSet<PredSym>> = FxHashMap::default();
        while !pending.is_empty() {
            let pos = pending
                .iter()
                .position(|p| {
                    p.def.as_ref().is_some_and(|d| {
                        d.preds()
                            .iter()
                            .all(|q| !instr_syms.contains(q) || done.contains_key(q) || *q == p.sym)
                    })
                })
                .unwrap_or(0); // a dependency cycle: take the first, values stay sound
            let p = pending.remove(pos);
            let Some(def) = p.def.as_ref() else { continue };
            let mut deps = BTreeSet::new();
            for q in def.preds() {
                if let Some(d) = done.get(&q) {
                    deps.extend(d.iter().cloned());
                } else if instr_syms.contains(&q) {
                    // unresolved (cyclic) dependency: depend on everything
                    deps.extend(class.core.iter().map(|c| c.sym.clone()));
                } else {
                    deps.insert(q);
                }
            }
            let free: &[&str] = match p.arity {
                0 => &[],
                1 => &["v"],
                _ => &["v1", "v2"],
            };
            let (ar, idx) = self.index[&p.sym];
            let c = Compiled::new(self, def, free);
            done.insert(p.sym.clone(), deps.clone());
            let field_syms: BTreeSet<PredSym> = self
                .fields
                .iter()
                .map(|(f, _)| PredSym::plain(f.clone()))
                .collect();
            self.instr.push(InstrInfo {
                sym: p.sym.clone(),
                arity: ar,
                idx,
                needs: c.f.needs_unary(),
                def: c,
                core_deps: deps,
                family: recognize(p).filter(|f| match f {
                    // the segment rules take every pointed cell for a cut point
                    Family::Seg(..) => {
                        let ps = def.preds();
                        self.pt
                            .iter()
                            .all(|(y, _)| ps.contains(&PredSym::with("pt", &[y.as_str()])))
                    }
                    _ => true,
                }),
                pol_keys: polarity(def)
                    .keys()
                    .map(|k| k.as_ref().and_then(|q| self.index.get(q).copied()))
                    .collect(),
                pol: polarity(def),
                nonlocal: nonlocal_preds(def, free),
                guarded: guarded(def, free, &field_syms),
                free_pos: free_positions(def, free),
            });
        }
    }

    /// (arity, index) of a predicate symbol.
    pub fn lookup(&self, p: &PredSym) -> Option<(u8, usize)> {
        self.index.get(p).copied()
    }

    /// Unary index of `pt[x]`.
    pub fn pt(&self, x: &str) -> Option<usize> {
        self.pt.iter().find(|(n, _)| n == x).map(|(_, i)| *i)
    }

    /// Binary index of the field predicate `f`.
    pub fn field(&self, f: &str) -> Option<usize> {
        self.fields.iter().find(|(n, _)| n == f).map(|(_, i)| *i)
    }

    fn same(&self, o: &Vocab) -> bool {
        std::ptr::eq(self, o)
            || (self.nullary == o.nullary && self.unary == o.unary && self.binary == o.binary)
    }
}

/// A three-valued logical structure; see the module documentation. The raw accessors
/// (`get*`/`set*`) take indices from [`Vocab`] and node numbers `< len()` and panic
/// otherwise; [`Structure::value`] is the checked accessor by symbol.
#[derive(Clone)]
pub struct Structure {
    voc: Arc<Vocab>,
    n: usize,
    v0: Vec<Kleene>,
    /// node-major: `v1[node * nu + pred]`
    v1: Vec<Kleene>,
    /// predicate-major: `v2[pred * n * n + a * n + b]`
    v2: Vec<Kleene>,
    /// [`UnarySig`] of the values, computed on first use by [`Structure::embeds_into`]
    /// and reset by every mutation; not part of equality, order or hash.
    sig: std::sync::OnceLock<UnarySig>,
    /// Set by [`super::coerce::coerce`] at its fixpoint (the values are as sharp as
    /// the integrity constraints make them), reset by every mutation; not part of
    /// equality, order or hash.
    coerced: bool,
    /// Provenance, one mask per node, while tracked (see [`Structure::origins`]; `None`:
    /// not tracked, which costs nothing); not part of equality, order or hash.
    origin: Option<Vec<u64>>,
    /// Provenance masks of the nodes [`Structure::remove_node`] removed (one concrete
    /// cell each, e.g. by `free`); not part of equality, order or hash.
    removed: Vec<u64>,
}

/// The provenance bit of nodes created by [`Structure::add_node`] (an allocation);
/// bits `0..63` name the nodes of the structure [`Structure::with_identity_origins`]
/// was called on.
pub const ORIGIN_NEW: u64 = 1 << 63;

/// Aggregated definite unary values of a structure, as bitmasks over the unary
/// predicates: the predicates true (false) at every node (`all_*`) and at some node
/// (`some_*`). If `s` embeds into `t` (a surjective map under which every value of `t`
/// is 1/2 or equal to that of its preimages), each mask of `t` is a subset of `s`'s
/// (for `s`, `t` with nodes): a cheap test that rejects most non-embeddings.
#[derive(Clone, Debug)]
struct UnarySig {
    /// u64s per node in `node_t` / `node_f`.
    words: usize,
    /// Per node (node-major), the unary predicates true / false there.
    node_t: Vec<u64>,
    node_f: Vec<u64>,
    all_t: Vec<u64>,
    some_t: Vec<u64>,
    all_f: Vec<u64>,
    some_f: Vec<u64>,
}

impl UnarySig {
    fn of(st: &Structure) -> UnarySig {
        let nu = st.voc.unary.len();
        let words = nu.div_ceil(64).max(1);
        let mut sig = UnarySig {
            words,
            node_t: Vec::with_capacity(st.n * words),
            node_f: Vec::with_capacity(st.n * words),
            all_t: vec![u64::MAX; words],
            some_t: vec![0; words],
            all_f: vec![u64::MAX; words],
            some_f: vec![0; words],
        };
        for u in 0..st.n {
            let (mut t, mut f) = (vec![0u64; words], vec![0u64; words]);
            for i in 0..nu {
                match st.get1(i, u) {
                    Kleene::True => t[i / 64] |= 1 << (i % 64),
                    Kleene::False => f[i / 64] |= 1 << (i % 64),
                    Kleene::Half => {}
                }
            }
            for j in 0..words {
                sig.all_t[j] &= t[j];
                sig.some_t[j] |= t[j];
                sig.all_f[j] &= f[j];
                sig.some_f[j] |= f[j];
            }
            sig.node_t.extend(t);
            sig.node_f.extend(f);
        }
        sig
    }

    /// Node `u` of this signature's structure has every definite unary value of node
    /// `x` of `t`'s (each value of `x` is 1/2 or equal to `u`'s).
    fn node_leq(&self, u: usize, t: &UnarySig, x: usize) -> bool {
        let w = self.words;
        let (su, fu) = (&self.node_t[u * w..][..w], &self.node_f[u * w..][..w]);
        let (tx, fx) = (&t.node_t[x * w..][..w], &t.node_f[x * w..][..w]);
        (0..w).all(|j| tx[j] & !su[j] == 0 && fx[j] & !fu[j] == 0)
    }

    /// False only if no structure with this signature can embed into one with `t`'s.
    fn may_embed_into(&self, t: &UnarySig) -> bool {
        let sub = |a: &[u64], b: &[u64]| a.iter().zip(b).all(|(x, y)| x & !y == 0);
        sub(&t.all_t, &self.all_t)
            && sub(&t.some_t, &self.some_t)
            && sub(&t.all_f, &self.all_f)
            && sub(&t.some_f, &self.some_f)
    }
}

impl PartialEq for Structure {
    fn eq(&self, o: &Self) -> bool {
        self.n == o.n
            && self.v0 == o.v0
            && self.v1 == o.v1
            && self.v2 == o.v2
            && self.voc.same(&o.voc)
    }
}
impl Eq for Structure {}
impl Hash for Structure {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.n.hash(h);
        self.v0.hash(h);
        self.v1.hash(h);
        self.v2.hash(h);
    }
}
impl PartialOrd for Structure {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Structure {
    /// Orders by the value tables only (structures of one vocabulary).
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.n, &self.v0, &self.v1, &self.v2).cmp(&(o.n, &o.v0, &o.v1, &o.v2))
    }
}

/// A fact of a concrete (2-valued) heap for [`Structure::from_concrete`]; every core
/// predicate tuple not listed is false, `sm` is false everywhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    Nullary(PredSym),
    Unary(PredSym, usize),
    Binary(PredSym, usize, usize),
}

impl Structure {
    /// The structure without nodes; nullary predicates are 0.
    pub fn empty(class: &ShapeClass) -> Structure {
        Structure::empty_voc(Vocab::of(class))
    }

    pub(crate) fn empty_voc(voc: Arc<Vocab>) -> Structure {
        Structure {
            v0: vec![Kleene::False; voc.nullary.len()],
            voc,
            n: 0,
            v1: Vec::new(),
            v2: Vec::new(),
            sig: Default::default(),
            coerced: false,
            origin: None,
            removed: Vec::new(),
        }
    }

    /// Builds the 2-valued structure of a concrete heap with `nodes` cells and the given
    /// core facts; instrumentation predicates are computed from their definitions.
    /// Fails on unknown/instrumentation predicates, wrong arities, out-of-range nodes, and
    /// facts violating the integrity constraints (a field with two targets, `pt[x]` on two
    /// nodes, a false class constraint).
    pub fn from_concrete(
        class: &ShapeClass,
        nodes: usize,
        facts: &[Fact],
    ) -> Result<Structure, TvlaError> {
        let voc = Vocab::of(class);
        let mut s = Structure::empty_voc(voc.clone());
        for _ in 0..nodes {
            s.add_node(Kleene::False);
        }
        let core: BTreeSet<&PredSym> = class.core.iter().map(|p| &p.sym).collect();
        let check = |p: &PredSym, ar: u8| -> Result<usize, TvlaError> {
            if !core.contains(p) {
                return Err(TvlaError::UnknownPredicate(p.to_string()));
            }
            match voc.lookup(p) {
                Some((a, i)) if a == ar => Ok(i),
                Some(_) => Err(TvlaError::Arity(p.to_string())),
                None => Err(TvlaError::UnknownPredicate(p.to_string())),
            }
        };
        let node = |u: usize| {
            if u < nodes {
                Ok(u)
            } else {
                Err(TvlaError::NodeOutOfRange(u))
            }
        };
        for f in facts {
            match f {
                Fact::Nullary(p) => {
                    let i = check(p, 0)?;
                    s.set0(i, Kleene::True)
                }
                Fact::Unary(p, u) => {
                    let i = check(p, 1)?;
                    if i == SM {
                        return Err(TvlaError::UnknownPredicate(p.to_string()));
                    }
                    s.set1(i, node(*u)?, Kleene::True)
                }
                Fact::Binary(p, a, b) => {
                    let i = check(p, 2)?;
                    s.set2(i, node(*a)?, node(*b)?, Kleene::True)
                }
            }
        }
        let s = s.recompute_instr(None);
        super::coerce::check_integrity(s).ok_or(TvlaError::Integrity)
    }

    /// The compiled vocabulary.
    pub fn vocab(&self) -> &Arc<Vocab> {
        &self.voc
    }
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.n
    }
    /// True when the structure has no nodes.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// Value of nullary predicate `i`.
    pub fn get0(&self, i: usize) -> Kleene {
        self.v0[i]
    }
    /// Value of unary predicate `i` at node `u`.
    pub fn get1(&self, i: usize, u: usize) -> Kleene {
        self.v1[u * self.voc.unary.len() + i]
    }
    /// Value of binary predicate `i` at `(a, b)`.
    pub fn get2(&self, i: usize, a: usize, b: usize) -> Kleene {
        self.v2[i * self.n * self.n + a * self.n + b]
    }
    /// True if [`super::coerce::coerce`] left the structure as it is now.
    pub fn is_coerced(&self) -> bool {
        self.coerced
    }
    pub(crate) fn mark_coerced(&mut self) {
        self.coerced = true;
    }
    /// Sets nullary predicate `i`.
    pub fn set0(&mut self, i: usize, k: Kleene) {
        self.sig = Default::default();
        self.coerced = false;
        self.v0[i] = k
    }
    /// Sets unary predicate `i` at `u`.
    pub fn set1(&mut self, i: usize, u: usize, k: Kleene) {
        let nu = self.voc.unary.len();
        self.sig = Default::default();
        self.coerced = false;
        self.v1[u * nu + i] = k
    }
    /// Sets binary predicate `i` at `(a, b)`.
    pub fn set2(&mut self, i: usize, a: usize, b: usize, k: Kleene) {
        let n = self.n;
        self.sig = Default::default();
        self.coerced = false;
        self.v2[i * n * n + a * n + b] = k
    }
    /// Value of predicate `i` of arity `arity` at `at` (as many nodes as the arity).
    pub fn get_at(&self, arity: u8, i: usize, at: &[usize]) -> Kleene {
        match arity {
            0 => self.get0(i),
            1 => self.get1(i, at[0]),
            _ => self.get2(i, at[0], at[1]),
        }
    }
    /// Sets predicate `i` of arity `arity` at `at` (as many nodes as the arity).
    pub fn set_at(&mut self, arity: u8, i: usize, at: &[usize], k: Kleene) {
        match arity {
            0 => self.set0(i, k),
            1 => self.set1(i, at[0], k),
            _ => self.set2(i, at[0], at[1], k),
        }
    }
    /// `sm(u) != 0`.
    pub fn is_summary(&self, u: usize) -> bool {
        self.get1(SM, u) != Kleene::False
    }
    /// Value of a predicate by symbol and arguments (1/2 for unknown predicates).
    pub fn value(&self, p: &PredSym, args: &[usize]) -> Kleene {
        match (self.voc.lookup(p), args) {
            (Some((0, i)), []) => self.get0(i),
            (Some((1, i)), [a]) if *a < self.n => self.get1(i, *a),
            (Some((2, i)), [a, b]) if *a < self.n && *b < self.n => self.get2(i, *a, *b),
            _ => Kleene::Half,
        }
    }
    /// The unary values of node `u` (indexed like `vocab().unary`).
    pub fn unary_row(&self, u: usize) -> &[Kleene] {
        let nu = self.voc.unary.len();
        &self.v1[u * nu..(u + 1) * nu]
    }
    /// True when no predicate has the value 1/2 and no node is a summary node.
    pub fn is_two_valued(&self) -> bool {
        !self
            .v0
            .iter()
            .chain(&self.v1)
            .chain(&self.v2)
            .any(|k| *k == Kleene::Half)
    }

    /// Appends a node with `sm = sm`, all other predicates 0; returns its index.
    pub fn add_node(&mut self, sm: Kleene) -> usize {
        let n = self.n;
        let nu = self.voc.unary.len();
        let nb = self.voc.binary.len();
        let mut v2 = vec![Kleene::False; nb * (n + 1) * (n + 1)];
        for p in 0..nb {
            for a in 0..n {
                for b in 0..n {
                    v2[p * (n + 1) * (n + 1) + a * (n + 1) + b] = self.v2[p * n * n + a * n + b];
                }
            }
        }
        self.sig = Default::default();
        self.coerced = false;
        self.v2 = v2;
        self.v1.extend(std::iter::repeat_n(Kleene::False, nu));
        if let Some(o) = &mut self.origin {
            o.push(ORIGIN_NEW);
        }
        self.n = n + 1;
        self.set1(SM, n, sm);
        n
    }

    /// Adds a copy of node `u` (all unary values, all edges to/from other nodes, and
    /// the self-edge values copied between the two copies); returns the copy's index.
    pub fn duplicate_node(&mut self, u: usize) -> usize {
        let c = self.add_node(Kleene::False);
        if let Some(o) = &mut self.origin {
            o[c] = o[u];
        }
        let nu = self.voc.unary.len();
        for p in 0..nu {
            let k = self.get1(p, u);
            self.set1(p, c, k);
        }
        for p in 0..self.voc.binary.len() {
            for w in 0..c {
                let out = self.get2(p, u, w);
                let inc = self.get2(p, w, u);
                self.set2(p, c, w, out);
                self.set2(p, w, c, inc);
            }
            let selfv = self.get2(p, u, u);
            self.set2(p, c, c, selfv);
            self.set2(p, u, c, selfv);
            self.set2(p, c, u, selfv);
        }
        c
    }

    /// Keeps the nodes `order[0], order[1], ...` in that order (a permutation or a
    /// selection; used for canonical ordering and node removal).
    pub fn select(&self, order: &[usize]) -> Structure {
        let n = self.n;
        let m = order.len();
        let nu = self.voc.unary.len();
        let nb = self.voc.binary.len();
        let mut v1 = Vec::with_capacity(m * nu);
        for &u in order {
            v1.extend_from_slice(&self.v1[u * nu..(u + 1) * nu]);
        }
        let mut v2 = Vec::with_capacity(nb * m * m);
        for p in 0..nb {
            for &a in order {
                for &b in order {
                    v2.push(self.v2[p * n * n + a * n + b]);
                }
            }
        }
        // a permutation of a coerced structure is coerced (the constraints do not
        // name nodes)
        let mut seen = vec![false; n];
        let perm = m == n
            && order
                .iter()
                .all(|&u| !std::mem::replace(&mut seen[u], true));
        Structure {
            voc: self.voc.clone(),
            n: m,
            v0: self.v0.clone(),
            v1,
            v2,
            sig: Default::default(),
            coerced: self.coerced && perm,
            origin: self
                .origin
                .as_ref()
                .map(|o| order.iter().map(|&u| o[u]).collect()),
            removed: self.removed.clone(),
        }
    }

    /// A copy whose node `u` has provenance `1 << u` (`u < 63`; nodes beyond have
    /// none: mask 0). Operations carry the masks along: [`Structure::duplicate_node`]
    /// copies, [`Structure::select`] permutes, [`Structure::blur`] unions the masks of
    /// merged nodes, [`Structure::add_node`] marks [`ORIGIN_NEW`]. So after
    /// [`super::transfer::post`] (which calls this on its input) node `v` of a result
    /// represents concrete nodes that were represented by the input nodes in
    /// `origins()[v]`, plus a freshly allocated one if [`ORIGIN_NEW`] is set.
    pub fn with_identity_origins(&self) -> Structure {
        let mut t = self.clone();
        t.origin = Some(
            (0..self.n)
                .map(|u| if u < 63 { 1u64 << u } else { 0 })
                .collect(),
        );
        t.removed.clear();
        t
    }

    /// The provenance masks, one per node (see [`Structure::with_identity_origins`]).
    /// Empty while provenance is not tracked.
    pub fn origins(&self) -> &[u64] {
        self.origin.as_deref().unwrap_or(&[])
    }

    /// When every node's provenance mask names one node of a structure with as many
    /// nodes (e.g. after [`Structure::canonical`] of [`Structure::with_identity_origins`]),
    /// the permutation `h` with `h[old] = new`.
    pub fn node_permutation(&self) -> Option<Vec<usize>> {
        let mut h = vec![usize::MAX; self.n];
        let origin = self.origin.as_ref()?;
        for (v, &o) in origin.iter().enumerate() {
            if o.count_ones() != 1 || o & ORIGIN_NEW != 0 {
                return None;
            }
            let u = o.trailing_zeros() as usize;
            if u >= self.n || h[u] != usize::MAX {
                return None;
            }
            h[u] = v;
        }
        (origin.len() == self.n).then_some(h)
    }

    /// The provenance masks of the nodes removed since the last
    /// [`Structure::with_identity_origins`], one entry per removed (single) cell.
    pub fn removed_origins(&self) -> &[u64] {
        &self.removed
    }

    /// The disjoint union of `self` and `other` (same vocabulary and nullary values):
    /// `self`'s nodes, then `other`'s, with no binary value between the two parts
    /// other than 0; coerced if both are. Not in canonical form. `None` when the
    /// vocabularies or nullary values differ, or either tracks provenance.
    pub fn disjoint_union(&self, other: &Structure) -> Option<Structure> {
        if !Arc::ptr_eq(&self.voc, &other.voc)
            || self.v0 != other.v0
            || self.origin.is_some()
            || other.origin.is_some()
        {
            return None;
        }
        let (a, b) = (self.n, other.n);
        let n = a + b;
        let nb = self.voc.binary.len();
        let mut v1 = Vec::with_capacity(self.v1.len() + other.v1.len());
        v1.extend_from_slice(&self.v1);
        v1.extend_from_slice(&other.v1);
        let mut v2 = vec![Kleene::False; nb * n * n];
        for p in 0..nb {
            for u in 0..a {
                let row = p * n * n + u * n;
                v2[row..row + a].copy_from_slice(&self.v2[p * a * a + u * a..][..a]);
            }
            for u in 0..b {
                let row = p * n * n + (a + u) * n + a;
                v2[row..row + b].copy_from_slice(&other.v2[p * b * b + u * b..][..b]);
            }
        }
        Some(Structure {
            voc: self.voc.clone(),
            n,
            v0: self.v0.clone(),
            v1,
            v2,
            sig: Default::default(),
            coerced: self.coerced && other.coerced,
            origin: None,
            removed: Vec::new(),
        })
    }

    /// Removes node `u`.
    pub fn remove_node(&self, u: usize) -> Structure {
        let order: Vec<usize> = (0..self.n).filter(|w| *w != u).collect();
        let mut t = self.select(&order);
        if let Some(o) = &self.origin {
            t.removed.push(o[u]);
        }
        t
    }

    /// Re-evaluates the definitions of the instrumentation predicates (all of them, or
    /// only those whose core dependencies intersect `changed`), in dependency order.
    pub fn recompute_instr(&self, changed: Option<&BTreeSet<PredSym>>) -> Structure {
        let voc = self.voc.clone();
        let mut s = self.clone();
        for ins in &voc.instr {
            if let Some(ch) = changed {
                if ins.core_deps.is_disjoint(ch) {
                    continue;
                }
            }
            let mut next = s.clone();
            {
                let mut ev = Evaluator::new(&s);
                match ins.arity {
                    0 => next.set0(ins.idx, ins.def.eval(&mut ev, &[])),
                    1 => {
                        for u in 0..s.n {
                            next.set1(ins.idx, u, ins.def.eval(&mut ev, &[u]));
                        }
                    }
                    _ => {
                        for a in 0..s.n {
                            for b in 0..s.n {
                                next.set2(ins.idx, a, b, ins.def.eval(&mut ev, &[a, b]));
                            }
                        }
                    }
                }
            }
            s = next;
        }
        s
    }

    /// Canonical abstraction: merges the nodes with equal abstraction-predicate values
    /// (joining all predicate values; a merged node is a summary node) and returns the
    /// result in canonical form.
    /// Before merging, the [`ShapeClass::pointed_only`] predicates are set to 1/2 on
    /// the nodes no `pt[x]` is definitely true of.
    pub fn blur(&self) -> Structure {
        if !self.voc.pointed_only.is_empty() {
            let unpointed = |u: usize| {
                !self
                    .voc
                    .pt
                    .iter()
                    .any(|(_, i)| self.get1(*i, u) == Kleene::True)
            };
            let forget: Vec<(usize, usize)> = (0..self.n)
                .filter(|&u| unpointed(u))
                .flat_map(|u| self.voc.pointed_only.iter().map(move |&p| (p, u)))
                .filter(|&(p, u)| self.get1(p, u) != Kleene::Half)
                .collect();
            if !forget.is_empty() {
                let mut t = self.clone();
                for (p, u) in forget {
                    t.set1(p, u, Kleene::Half);
                }
                return t.blur_names();
            }
        }
        self.blur_names()
    }

    /// [`Structure::blur`] without forgetting.
    fn blur_names(&self) -> Structure {
        let mut groups: Vec<(Vec<Kleene>, Vec<usize>)> = Vec::new();
        let mut by_name: FxHashMap<Vec<Kleene>, usize> = FxHashMap::default();
        for u in 0..self.n {
            let name: Vec<Kleene> = self.voc.abs.iter().map(|i| self.get1(*i, u)).collect();
            let g = *by_name.entry(name.clone()).or_insert_with(|| {
                groups.push((name, Vec::new()));
                groups.len() - 1
            });
            groups[g].1.push(u);
        }
        if groups.len() == self.n {
            return self.canonical();
        }
        let mut t = Structure::empty_voc(self.voc.clone());
        t.v0 = self.v0.clone();
        t.sig = Default::default();
        t.removed = self.removed.clone();
        for _ in 0..groups.len() {
            t.add_node(Kleene::False);
        }
        let nu = self.voc.unary.len();
        for (g, (_, members)) in groups.iter().enumerate() {
            for p in 0..nu {
                let mut k = self.get1(p, members[0]);
                for m in &members[1..] {
                    k = k.join(self.get1(p, *m));
                }
                t.set1(p, g, k);
            }
            if members.len() > 1 {
                t.set1(SM, g, Kleene::Half);
            }
        }
        t.origin = self.origin.as_ref().map(|o| {
            groups
                .iter()
                .map(|(_, members)| members.iter().fold(0, |m, &u| m | o[u]))
                .collect()
        });
        for p in 0..self.voc.binary.len() {
            for (g, (_, ma)) in groups.iter().enumerate() {
                for (h, (_, mb)) in groups.iter().enumerate() {
                    let mut k: Option<Kleene> = None;
                    for a in ma {
                        for b in mb {
                            let v = self.get2(p, *a, *b);
                            k = Some(k.map_or(v, |k| k.join(v)));
                        }
                    }
                    t.set2(p, g, h, k.unwrap_or(Kleene::False));
                }
            }
        }
        t.canonical()
    }

    /// The name of node `u`: its values of the abstraction predicates.
    pub fn name(&self, u: usize) -> Vec<Kleene> {
        self.voc.abs.iter().map(|i| self.get1(*i, u)).collect()
    }

    /// A hash of what [`Structure::joins_partially`] compares (the node count, the
    /// nullary values, the multiset of node names): equal for any two structures that
    /// join partially.
    pub fn join_key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut names: Vec<u64> = (0..self.n)
            .map(|u| {
                let mut h = rustc_hash::FxHasher::default();
                for i in &self.voc.abs {
                    self.get1(*i, u).hash(&mut h);
                }
                h.finish()
            })
            .collect();
        names.sort_unstable();
        let mut h = rustc_hash::FxHasher::default();
        self.n.hash(&mut h);
        self.v0.hash(&mut h);
        names.hash(&mut h);
        h.finish()
    }

    /// True if [`Structure::partial_join`] of the two would not be `None`: the same
    /// vocabulary, nullary values and node names, each name on exactly one node. A
    /// cheap test (no structure is built).
    pub fn joins_partially(&self, other: &Structure) -> bool {
        if self.n != other.n || self.v0 != other.v0 || !self.voc.same(&other.voc) {
            return false;
        }
        let mut a: Vec<Vec<Kleene>> = (0..self.n).map(|u| self.name(u)).collect();
        let mut b: Vec<Vec<Kleene>> = (0..other.n).map(|u| other.name(u)).collect();
        a.sort_unstable();
        b.sort_unstable();
        a == b && a.windows(2).all(|w| w[0] != w[1])
    }

    /// TVLA's partial join: when `self` and `other` have the same vocabulary, the same
    /// nullary values and the same node names (abstraction-predicate values), each name
    /// on exactly one node, the structure over those nodes whose every value is the
    /// join of the two structures' values at the nodes of the same names (canonical).
    /// Both structures embed into it (by the name bijection), so it represents every
    /// heap either represents; names and nullary values are unchanged. `None` otherwise.
    pub fn partial_join(&self, other: &Structure) -> Option<Structure> {
        if self.n != other.n || self.v0 != other.v0 || !self.voc.same(&other.voc) {
            return None;
        }
        let mut by_name: FxHashMap<Vec<Kleene>, usize> = FxHashMap::default();
        for x in 0..other.n {
            if by_name.insert(other.name(x), x).is_some() {
                return None;
            }
        }
        let mut to = vec![usize::MAX; self.n];
        for (u, t) in to.iter_mut().enumerate() {
            *t = by_name.remove(&self.name(u))?;
        }
        let mut j = self.clone();
        for (u, &x) in to.iter().enumerate() {
            for p in 0..self.voc.unary.len() {
                j.set1(p, u, self.get1(p, u).join(other.get1(p, x)));
            }
        }
        for p in 0..self.voc.binary.len() {
            for a in 0..self.n {
                for b in 0..self.n {
                    j.set2(
                        p,
                        a,
                        b,
                        self.get2(p, a, b).join(other.get2(p, to[a], to[b])),
                    );
                }
            }
        }
        Some(j.canonical())
    }

    /// The canonical form (see the module documentation): a node permutation of `self`
    /// that is equal for isomorphic structures whenever colour refinement plus the
    /// bounded tie search (at most 720 candidate orders) separates the nodes, which
    /// always holds for canonically abstracted structures with distinct names.
    pub fn canonical(&self) -> Structure {
        let n = self.n;
        if n <= 1 {
            return self.clone();
        }
        let nu = self.voc.unary.len();
        // initial key: abstraction values first, then all unary values
        let keys: Vec<Vec<Kleene>> = (0..n)
            .map(|u| {
                let mut k: Vec<Kleene> = self.voc.abs.iter().map(|i| self.get1(*i, u)).collect();
                k.extend_from_slice(&self.v1[u * nu..(u + 1) * nu]);
                k
            })
            .collect();
        let mut color = rank(&keys);
        let nb = self.voc.binary.len();
        for _ in 0..n {
            let ncolors = color.iter().max().map_or(0, |m| m + 1);
            if ncolors == n {
                break;
            }
            let keys: Vec<(usize, Vec<NbSig>)> = (0..n)
                .map(|u| {
                    let mut nb_sig = Vec::new();
                    for p in 0..nb {
                        for (w, cw) in color.iter().enumerate() {
                            let cw = *cw;
                            let o = self.get2(p, u, w);
                            if o != Kleene::False {
                                nb_sig.push((p, 0u8, o, cw));
                            }
                            let i = self.get2(p, w, u);
                            if i != Kleene::False {
                                nb_sig.push((p, 1u8, i, cw));
                            }
                        }
                    }
                    nb_sig.sort_unstable();
                    (color[u], nb_sig)
                })
                .collect();
            let new = rank(&keys);
            let newcolors = new.iter().max().map_or(0, |m| m + 1);
            color = new;
            if newcolors == ncolors {
                break;
            }
        }
        // order by colour; enumerate tie permutations if few
        let mut classes: Vec<Vec<usize>> = Vec::new();
        let ncolors = color.iter().max().map_or(0, |m| m + 1);
        classes.resize(ncolors, Vec::new());
        for u in 0..n {
            classes[color[u]].push(u);
        }
        let mut budget: usize = 1;
        for c in &classes {
            for k in 2..=c.len() {
                budget = budget.saturating_mul(k);
            }
        }
        let base: Vec<usize> = classes.iter().flatten().copied().collect();
        if budget == 1 || budget > 720 {
            return self.select(&base);
        }
        let mut best: Option<Structure> = None;
        let mut perms: Vec<Vec<Vec<usize>>> = classes.iter().map(|c| permutations(c)).collect();
        let mut idx = vec![0usize; perms.len()];
        loop {
            let order: Vec<usize> = idx
                .iter()
                .enumerate()
                .flat_map(|(c, i)| perms[c][*i].iter().copied())
                .collect();
            let cand = self.select(&order);
            if best.as_ref().is_none_or(|b| cand.v2 < b.v2) {
                best = Some(cand);
            }
            // next index tuple
            let mut c = 0;
            loop {
                if c == idx.len() {
                    perms.clear();
                    return best.unwrap_or_else(|| self.select(&base));
                }
                idx[c] += 1;
                if idx[c] < perms[c].len() {
                    break;
                }
                idx[c] = 0;
                c += 1;
            }
        }
    }

    /// Embedding order `self ⊑ other` (TVLA): a surjective map `h` of the nodes of `self`
    /// onto the nodes of `other` with `val(p)(ū) ⊑ val'(p)(h(ū))` for every predicate
    /// (including `sm`), where a node of `other` with several preimages is a summary
    /// node. Implies that every concrete heap represented by `self` is represented by
    /// `other`. Structures of different vocabularies never embed.
    pub fn embeds_into(&self, other: &Structure) -> bool {
        self.embedding(other).is_some()
    }

    /// Facts that every structure embedding into this one shares with it, as bits
    /// (`4 * w + 2 * w0 + 4` words for `w`, `w0` words of unary and nullary predicates):
    /// per unary predicate "1 at every node", "1 at some node", "0 at every node", "0 at
    /// some node" (one section of `w` words each), then per nullary predicate "1" and
    /// "0", then (hashed into 4 words) the unary values of each node whose unary
    /// values are all definite. If `s` embeds into `t`, every bit of `t.embed_facts()` is set in
    /// `s.embed_facts()` (the embedding is onto and only raises values to 1/2).
    pub fn embed_facts(&self) -> Vec<u64> {
        let sig = self.sig.get_or_init(|| UnarySig::of(self));
        let w0 = self.v0.len().div_ceil(64);
        let mut out = Vec::with_capacity(4 * sig.words + 2 * w0);
        for part in [&sig.all_t, &sig.some_t, &sig.all_f, &sig.some_f] {
            out.extend_from_slice(part);
        }
        let (mut one, mut zero) = (vec![0u64; w0], vec![0u64; w0]);
        for (i, k) in self.v0.iter().enumerate() {
            match k {
                Kleene::True => one[i / 64] |= 1 << (i % 64),
                Kleene::False => zero[i / 64] |= 1 << (i % 64),
                Kleene::Half => {}
            }
        }
        out.extend(one);
        out.extend(zero);
        // nodes with every unary value definite: an embedding maps some node onto
        // each, with exactly its values (hashed into 256 bits)
        let mut nodes = [0u64; 4];
        let nu = self.voc.unary.len();
        let full: Vec<u64> = (0..sig.words)
            .map(|j| {
                let bits = nu - (j * 64).min(nu);
                if bits >= 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                }
            })
            .collect();
        for u in 0..self.n {
            let (t, f) = (
                &sig.node_t[u * sig.words..][..sig.words],
                &sig.node_f[u * sig.words..][..sig.words],
            );
            if (0..sig.words).all(|j| t[j] | f[j] == full[j]) {
                let mut h = rustc_hash::FxHasher::default();
                t.hash(&mut h);
                let b = (h.finish() % 256) as usize;
                nodes[b / 64] |= 1 << (b % 64);
            }
        }
        out.extend(nodes);
        out
    }

    /// A witness of [`Structure::embeds_into`]: the map `h` (`h[u]` is the node of
    /// `other` that node `u` of `self` goes to; the identity for equal structures).
    pub fn embedding(&self, other: &Structure) -> Option<Vec<usize>> {
        if !self.voc.same(&other.voc) || self.n < other.n {
            return None;
        }
        if !self.v0.iter().zip(&other.v0).all(|(a, b)| a.leq_info(*b)) {
            return None;
        }
        // the signatures reject most pairs: before the equality test, which compares
        // every value of two structures that agree on their first ones
        let (a, b) = (
            self.sig.get_or_init(|| UnarySig::of(self)),
            other.sig.get_or_init(|| UnarySig::of(other)),
        );
        if self.n > 0 && other.n > 0 && !a.may_embed_into(b) {
            return None;
        }
        if self == other {
            return Some((0..self.n).collect());
        }
        // the candidates of node u are the bits u * m .. (u + 1) * m (m = other.n); a
        // node without one, or a node of `other` that no node can map onto (the map is
        // onto), ends the search before it starts
        let m = other.n;
        let mut cands = FixedBitSet::with_capacity(self.n * m);
        let mut onto = FixedBitSet::with_capacity(m);
        for u in 0..self.n {
            let mut any = false;
            for x in 0..m {
                if a.node_leq(u, b, x)
                    && (0..self.voc.binary.len())
                        .all(|p| self.get2(p, u, u).leq_info(other.get2(p, x, x)))
                {
                    cands.insert(u * m + x);
                    onto.insert(x);
                    any = true;
                }
            }
            if !any {
                return None;
            }
        }
        if onto.count_ones(..) < m {
            return None;
        }
        let mut h = vec![usize::MAX; self.n];
        let mut count = vec![0usize; m];
        self.embed_rec(other, &cands, 0, &mut h, &mut count, m)
            .then_some(h)
    }

    /// Extends the partial map `h` (nodes before `u` mapped) to an embedding; bit
    /// `u * other.n + x` of `cands` says whether `x` is a candidate of `u`.
    fn embed_rec(
        &self,
        other: &Structure,
        cands: &FixedBitSet,
        u: usize,
        h: &mut [usize],
        count: &mut [usize],
        uncovered: usize,
    ) -> bool {
        if u == self.n {
            return uncovered == 0;
        }
        if self.n - u < uncovered {
            return false;
        }
        let m = other.n;
        for x in (0..m).filter(|&x| cands.contains(u * m + x)) {
            if count[x] >= 1 && !other.is_summary(x) {
                continue;
            }
            let ok = (0..self.voc.binary.len()).all(|p| {
                (0..u).all(|w| {
                    self.get2(p, u, w).leq_info(other.get2(p, x, h[w]))
                        && self.get2(p, w, u).leq_info(other.get2(p, h[w], x))
                })
            });
            if !ok {
                continue;
            }
            h[u] = x;
            count[x] += 1;
            let unc = if count[x] == 1 {
                uncovered - 1
            } else {
                uncovered
            };
            if self.embed_rec(other, cands, u + 1, h, count, unc) {
                return true;
            }
            count[x] -= 1;
            h[u] = usize::MAX;
        }
        false
    }
}

/// A neighbour signature entry: (binary predicate, direction, value, neighbour colour).
type NbSig = (usize, u8, Kleene, usize);

fn rank<K: Ord + Clone>(keys: &[K]) -> Vec<usize> {
    let mut sorted: Vec<K> = keys.to_vec();
    sorted.sort();
    sorted.dedup();
    keys.iter()
        .map(|k| sorted.binary_search(k).unwrap_or(0))
        .collect()
}

fn permutations(c: &[usize]) -> Vec<Vec<usize>> {
    if c.len() <= 1 {
        return vec![c.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..c.len() {
        let mut rest = c.to_vec();
        let x = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

impl fmt::Debug for Structure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Structure {
    /// Lists the non-zero values: `p = 1/2`, `u3: sm=1/2 pt[x]=1`, `next(u0, u1) = 1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{")?;
        for (i, p) in self.voc.nullary.iter().enumerate() {
            if self.v0[i] != Kleene::False {
                write!(f, " {p}={}", self.v0[i])?;
            }
        }
        for u in 0..self.n {
            write!(f, " u{u}[")?;
            let mut first = true;
            for (i, p) in self.voc.unary.iter().enumerate() {
                let k = self.get1(i, u);
                if k != Kleene::False {
                    if !first {
                        write!(f, " ")?;
                    }
                    first = false;
                    write!(f, "{p}={k}")?;
                }
            }
            write!(f, "]")?;
        }
        for (i, p) in self.voc.binary.iter().enumerate() {
            for a in 0..self.n {
                for b in 0..self.n {
                    let k = self.get2(i, a, b);
                    if k != Kleene::False {
                        write!(f, " {p}(u{a},u{b})={k}")?;
                    }
                }
            }
        }
        write!(f, " }}")
    }
}

#[cfg(test)]
mod tests;
