//! The symbolic-heap CPA: [`SymHeap`] states, the transfer of [`super::post`]
//! followed by folding (under the precision [`SymPrec`]), entailment as coverage.

use super::fold::SymPrec;
use super::{entail, fold, post, SymHeap, Val};
use crate::cfa::{FieldRef, Node, Program, Scope, Step, VarId};
use crate::cpa::{Cpa, Fingerprint};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The symbolic-heap CPA over one program. The laws of [`Cpa`] hold: the post
/// over-approximates (unfolding is exact, folding and forgetting dead variables only
/// forget, anything not modelled is ⊤), coverage is [`entail::entails`] (reflexive;
/// sound), and the precision ([`SymPrec`]) only chooses what folding keeps apart.
#[derive(Clone, Debug)]
pub struct SymHeapCpa {
    /// Live local variables per location ([`crate::cfa::live::live_vars`]): a pointer
    /// of the location's own function that is dead there is forgotten.
    live: Arc<HashMap<Node, BTreeSet<VarId>>>,
    /// Where states are folded: the loop heads (every cycle of the CFA passes one, so
    /// the states stay finite; elsewhere an object a statement is about to link is not
    /// hidden in a segment half-way through the statement).
    fold_at: Arc<BTreeSet<Node>>,
    /// The integer constants of the program (and 0): at the loop heads an integer
    /// field keeps only such a value, and integer variables keep none, so that a
    /// loop cannot make ever new values (`p->next->data = p->data + 1`).
    consts: Arc<BTreeSet<i64>>,
    /// The thresholds a merge widens counters' intervals to
    /// ([`compared_constants`]).
    thresholds: Arc<BTreeSet<i64>>,
}

impl SymHeapCpa {
    /// The CPA for `prog`.
    pub fn new(prog: &Program) -> SymHeapCpa {
        SymHeapCpa {
            live: Arc::new(crate::cfa::live::live_vars(prog)),
            fold_at: Arc::new(prog.loop_heads()),
            consts: Arc::new(program_constants(prog)),
            thresholds: Arc::new(compared_constants(prog)),
        }
    }

    /// `h` without the values of the pointers of `at`'s function that are dead there.
    fn forget_dead(&self, prog: &Program, mut h: SymHeap, at: Node) -> SymHeap {
        let Some(loc) = prog.graph.node_weight(at) else {
            return h;
        };
        let func = loc.func;
        let live = self.live.get(&at);
        let dead = |x: VarId| {
            let own = prog.vars.get(x).is_some_and(|v| {
                matches!(v.scope, Scope::Local(f) | Scope::Param(f) | Scope::Temp(f) if f == func)
            });
            own && !live.is_some_and(|l| l.contains(&x))
        };
        h.vars.retain(|&(x, _)| !dead(x));
        let counted: Vec<VarId> = h.counts.as_ref().map_or_else(Vec::new, |c| c.ints.clone());
        for x in counted {
            if dead(x) {
                h.set(x, Val::Unknown);
            }
        }
        h
    }
}

impl SymHeapCpa {
    /// `h` without integer variables, and with values only of the fields `prec`
    /// tracks and only the program's constants there (at loop heads).
    fn widen(&self, prog: &Program, prec: &SymPrec, mut h: SymHeap) -> SymHeap {
        h.vars
            .retain(|&(x, _)| !prog.vars.get(x).is_some_and(|v| v.ty.is_int()));
        let tracked = |strukt, field| prec.track.contains(&FieldRef { strukt, field });
        let keeps = |strukt, field, k: &i64| self.kept(prec, FieldRef { strukt, field }, *k);
        for a in &mut h.atoms {
            match a {
                super::Atom::Pt {
                    fields,
                    strukt,
                    data,
                    ..
                } => {
                    for (f, v) in fields.iter_mut().enumerate() {
                        if matches!(v, Val::Int(k) if !keeps(*strukt, f, k) || !tracked(*strukt, f))
                        {
                            *v = Val::Unknown;
                        }
                    }
                    data.retain(|(f, ks)| {
                        tracked(*strukt, *f) && ks.iter().all(|k| keeps(*strukt, *f, k))
                    });
                }
                super::Atom::Ls {
                    data,
                    strukt,
                    order,
                    ..
                }
                | super::Atom::Dls {
                    data,
                    strukt,
                    order,
                    ..
                } => {
                    // a fact with another value is dropped whole (a smaller set
                    // would claim more)
                    data.retain(|(f, ks)| {
                        tracked(*strukt, *f) && ks.iter().all(|k| keeps(*strukt, *f, k))
                    });
                    let s = *strukt;
                    order.retain(|o| {
                        prec.order.contains(&FieldRef {
                            strukt: s,
                            field: o.field,
                        })
                    });
                    super::order::normalize(data, order);
                }
                super::Atom::Block { .. } => {}
            }
        }
        for r in prec.track.difference(&prec.split) {
            if !prec.order.contains(r) {
                pool_values(&mut h, *r);
            }
        }
        h
    }
}

impl SymHeapCpa {
    /// Whether widening keeps value `k` of field `r` (tracked): a constant of the
    /// program or a value `prec` keeps.
    fn kept(&self, prec: &SymPrec, r: FieldRef, k: i64) -> bool {
        self.consts.contains(&k) || prec.keep.contains(&(r, k))
    }

    /// The values of `prec`'s tracked fields in `h` that widening would forget (neither
    /// a constant of the program nor kept by `prec`).
    pub fn unkept_values(&self, prec: &SymPrec, h: &SymHeap) -> Vec<(FieldRef, i64)> {
        let mut out = Vec::new();
        for a in &h.atoms {
            let (strukt, facts) = match a {
                super::Atom::Pt { strukt, .. }
                | super::Atom::Ls { strukt, .. }
                | super::Atom::Dls { strukt, .. } => (*strukt, fold::piece_data(a)),
                super::Atom::Block { .. } => continue,
            };
            for (field, ks) in facts {
                let r = FieldRef { strukt, field };
                if !prec.track.contains(&r) {
                    continue;
                }
                out.extend(
                    ks.into_iter()
                        .filter(|k| !self.kept(prec, r, *k))
                        .map(|k| (r, k)),
                );
            }
        }
        out
    }
}

/// Gives the pieces of `r.strukt` with a value or value set for field `r.field` the
/// pool of the state's common values (sound: each set only grows): the pool is the
/// union of the segments' and objects' value sets and of the exact values at least
/// two objects hold; an object whose exact value is in the pool gets the pool, one
/// with a value of its own (the one blue object among white ones) keeps it. Objects
/// read once then no longer multiply the states by their values; a field the
/// precision splits on keeps its exact values instead.
pub(super) fn pool_values(h: &mut SymHeap, r: FieldRef) {
    use super::Atom;
    let mut pool = BTreeSet::new();
    let mut exact: HashMap<i64, usize> = HashMap::new();
    for a in &h.atoms {
        match a {
            Atom::Pt {
                strukt,
                fields,
                data,
                ..
            } if *strukt == r.strukt => {
                if let Some(Val::Int(k)) = fields.get(r.field) {
                    *exact.entry(*k).or_default() += 1;
                }
                data.iter()
                    .filter(|(f, _)| *f == r.field)
                    .for_each(|(_, ks)| pool.extend(ks));
            }
            Atom::Ls { strukt, data, .. } | Atom::Dls { strukt, data, .. }
                if *strukt == r.strukt =>
            {
                data.iter()
                    .filter(|(f, _)| *f == r.field)
                    .for_each(|(_, ks)| pool.extend(ks));
            }
            _ => {}
        }
    }
    pool.extend(exact.iter().filter(|(_, n)| **n >= 2).map(|(k, _)| *k));
    if pool.len() < 2 {
        return;
    }
    let pool: Vec<i64> = pool.into_iter().collect();
    for a in &mut h.atoms {
        match a {
            Atom::Pt {
                strukt,
                fields,
                data,
                ..
            } if *strukt == r.strukt => {
                let has = matches!(fields.get(r.field), Some(Val::Int(k)) if pool.contains(k))
                    || data.iter().any(|(f, _)| *f == r.field);
                if has {
                    fields[r.field] = Val::Unknown;
                    data.retain(|(f, _)| *f != r.field);
                    data.push((r.field, pool.clone()));
                    data.sort();
                }
            }
            Atom::Ls { strukt, data, .. } | Atom::Dls { strukt, data, .. }
                if *strukt == r.strukt =>
            {
                for (f, ks) in data.iter_mut() {
                    if *f == r.field {
                        *ks = pool.clone();
                    }
                }
            }
            _ => {}
        }
    }
}

/// Facts of `s` that every state it covers has too, and the facts `s` has for others
/// to require (the first and the second words), hashed into bits: a variable holding an integer, two variables
/// holding one id (offered: one value), a variable pointing to an
/// allocated object, to an object (not a segment), and that object's integer and
/// NULL fields, the number of objects with a known integer value (up to it) ([`entail::entails`] maps each id to one value, matches a piece by a
/// piece starting at the same address, an object only by an object with the same
/// known fields); a counted variable the counts fix (its equality must be implied).
fn fingerprint_facts(s: &SymHeap) -> ([u64; FACT_WORDS], [u64; FACT_WORDS]) {
    use std::hash::{Hash, Hasher};
    let bit_of = |fact: &dyn Fn(&mut rustc_hash::FxHasher)| {
        let mut h = rustc_hash::FxHasher::default();
        fact(&mut h);
        let b = h.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        ((b as usize / 64) % FACT_WORDS, 1u64 << (b % 64))
    };
    // aliases: σ maps an id to one value (of any kind: offered for all values,
    // required for ids); the other facts are both required and offered
    let mut aliases_offered = [0u64; FACT_WORDS];
    let mut words = [0u64; FACT_WORDS];
    for (n, &(x, v)) in s.vars.iter().enumerate() {
        for &(y, w) in &s.vars[n + 1..] {
            if w == v {
                let (i, m) = bit_of(&|h| (3u8, x, y).hash(h));
                if matches!(v, Val::Id(_)) {
                    words[i] |= m;
                } else {
                    aliases_offered[i] |= m;
                }
            }
        }
    }
    let mut bit = |fact: &dyn Fn(&mut rustc_hash::FxHasher)| {
        let (i, m) = bit_of(fact);
        words[i] |= m;
    };
    for &(x, v) in &s.vars {
        match v {
            Val::Int(k) => bit(&|h| (0u8, x, k).hash(h)),
            Val::Id(i) => {
                match s.atom_at(i).map(|k| &s.atoms[k]) {
                    Some(super::Atom::Pt { fields, .. }) => {
                        {
                            bit(&|h| (1u8, x).hash(h));
                            bit(&|h| (4u8, x).hash(h));
                        }
                        for (f, v) in fields.iter().enumerate() {
                            if let Val::Int(_) | Val::Null = v {
                                bit(&|h| (2u8, x, f, *v).hash(h));
                            }
                        }
                    }
                    // an allocated id is matched by a piece starting there
                    Some(_) => bit(&|h| (4u8, x).hash(h)),
                    None => {}
                }
            }
            _ => {}
        }
    }
    // a piece whose integer field has one value is matched by pieces that all have
    // it; an object with a known integer field by an object with that value (so a
    // covered state has at least as many: a thermometer per value)
    let mut objects: HashMap<(usize, usize, i64), usize> = HashMap::new();
    for a in &s.atoms {
        let Some(st) = a.strukt() else { continue };
        for (f, ks) in super::fold::piece_data(a) {
            if let [k] = ks.as_slice() {
                bit(&|h| (5u8, st, f, *k).hash(h));
            }
        }
        if let super::Atom::Pt { fields, .. } = a {
            for (f, v) in fields.iter().enumerate() {
                if let Val::Int(k) = v {
                    let n = objects.entry((st, f, *k)).or_default();
                    *n += 1;
                    let n = *n;
                    bit(&|h| (6u8, st, f, *k, n).hash(h));
                }
            }
        }
    }
    if let Some(c) = &s.counts {
        for (col, &x) in c.ints.iter().enumerate() {
            if let Some(k) = s.counted_value(col) {
                bit(&|h| (0u8, x, k).hash(h));
            }
        }
    }
    let mut offered = words;
    for (o, a) in offered.iter_mut().zip(aliases_offered) {
        *o |= a;
    }
    (words, offered)
}

/// Words of hashed facts in a symbolic heap's fingerprint (a required fact a state
/// does not have is missed by chance in about one of `64 · FACT_WORDS / facts`).
const FACT_WORDS: usize = 4;

/// A hash of everything but the counts: equal for two states [`super::counts::join`]
/// may merge.
pub(crate) fn merge_key(s: &SymHeap) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    (s.top, &s.vars, &s.atoms, &s.neq).hash(&mut h);
    s.counts.as_ref().map(|c| &c.ints).hash(&mut h);
    h.finish()
}

/// The integer literals of `prog`'s operations, and 0 and 1 (the values of a
/// comparison).
fn program_constants(prog: &Program) -> BTreeSet<i64> {
    fn walk(e: &crate::cfa::Expr, out: &mut BTreeSet<i64>) {
        use crate::cfa::Expr;
        match e {
            Expr::Int(k) => {
                out.insert(*k);
            }
            Expr::Null | Expr::Var(_) => {}
            Expr::Unary(_, a) | Expr::Cast(_, a) => walk(a, out),
            Expr::Binary(_, a, b) => {
                walk(a, out);
                walk(b, out);
            }
        }
    }
    let mut out = BTreeSet::from([0, 1]);
    for e in prog.graph.edge_weights() {
        match &e.op {
            crate::cfa::Op::Assign { src, .. } | crate::cfa::Op::Store { src, .. } => {
                walk(src, &mut out)
            }
            crate::cfa::Op::Assume { cond } => walk(cond, &mut out),
            crate::cfa::Op::Call { args, .. } => args.iter().for_each(|a| walk(a, &mut out)),
            _ => {}
        }
    }
    out
}

/// The constants the program's conditions order an integer variable against (`<`,
/// `<=`, `>`, `>=`), one less and one more (`i < 2` bounds `i` by 1 in the loop and by
/// 2 after it): the thresholds of the counters' widening, few, so that a loop they do
/// not bound widens at once.
fn compared_constants(prog: &Program) -> BTreeSet<i64> {
    use crate::cfa::{BinOp, Expr};
    let mut out = BTreeSet::new();
    for e in prog.graph.edge_weights() {
        let crate::cfa::Op::Assume { cond } = &e.op else {
            continue;
        };
        let Expr::Binary(op, a, b) = cond else {
            continue;
        };
        if !matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge) {
            continue;
        }
        let int_var = |e: &Expr| matches!(e, Expr::Var(x) if prog.vars.get(*x).is_some_and(|v| v.ty.is_int()));
        match (a.as_ref(), b.as_ref()) {
            (Expr::Int(k), x) | (x, Expr::Int(k)) if int_var(x) => {
                out.extend([k.saturating_sub(1), *k, k.saturating_add(1)]);
            }
            _ => {}
        }
    }
    out
}

impl Cpa for SymHeapCpa {
    type State = SymHeap;
    type Prec = SymPrec;

    fn name(&self) -> &'static str {
        "symheap"
    }
    fn initial(&self, _prog: &Program, prec: &SymPrec) -> SymHeap {
        let mut h = SymHeap::initial();
        if !prec.count.is_empty() {
            h.counts = Some(super::Counts::new(prec.count.iter().copied().collect()));
        }
        h
    }
    fn post(
        &self,
        prog: &Program,
        s: &SymHeap,
        step: Step,
        to: Node,
        prec: &SymPrec,
    ) -> Vec<SymHeap> {
        let mut out: Vec<SymHeap> = Vec::new();
        let narrow = &prec.track;
        for h in (post::Post { prog, narrow }).post(s, step) {
            if !h.counts_plausible(prog) {
                continue; // the lengths and counters allow no state
            }
            let h = self.forget_dead(prog, h, to);
            let h = if self.fold_at.contains(&to) {
                fold::fold_with(prog, prec, self.widen(prog, prec, h))
            } else {
                fold::bounded(h.canonical())
            };
            if !out.contains(&h) {
                out.push(h);
            }
        }
        out
    }
    fn covers(&self, t: &SymHeap, s: &SymHeap) -> bool {
        entail::entails(s, t)
    }
    /// Two states equal but for their counts: the affine hull of the counts
    /// ([`super::counts::join`]), so that a loop that counts what it builds reaches a
    /// fixed point.
    fn merge(&self, existing: &SymHeap, new: &SymHeap, _: Node, _: &SymPrec) -> Option<SymHeap> {
        super::counts::join(existing, new, &self.thresholds)
    }
    fn merge_after(&self, _at: Node, prec: &SymPrec) -> usize {
        if prec.unroll {
            fold::UNROLL
        } else {
            0
        }
    }
    fn fingerprint(&self, s: &SymHeap) -> Fingerprint {
        // a covering state's variables that are NULL are NULL in the covered one
        // (bit per variable, modulo 64), and ⊤ covers everything
        if s.top {
            return Fingerprint {
                req: Vec::new(),
                offer: None,
                merge: None,
            };
        }
        let mut null = 0u64;
        for &(x, v) in &s.vars {
            if v == Val::Null {
                null |= 1 << (x % 64);
            }
        }
        let (req, offer) = fingerprint_facts(s);
        // thermometers: a covering state has at most as many atoms and objects as the
        // covered one (each of its atoms takes at least one piece, an object an object)
        let thermo = |n: usize| (1u64 << n.min(31)) - 1;
        let objects = s
            .atoms
            .iter()
            .filter(|a| matches!(a, super::Atom::Pt { .. }))
            .count();
        let sizes = thermo(s.atoms.len()) | (thermo(objects) << 32);
        let words = |facts: [u64; FACT_WORDS]| {
            let mut bits = vec![null, sizes];
            bits.extend(facts);
            bits
        };
        Fingerprint {
            req: words(req),
            offer: Some(words(offer)),
            merge: Some(crate::cpa::MergeKey {
                exact: merge_key(s),
                bits: 0,
            }),
        }
    }
}
