//! Abstract transfer functions of pointer operations (TVLA predicate updates).
//!
//! [`post`] = focus on what the operation needs definite, null-dereference check,
//! predicate update of the core predicates (the usual update formulas, evaluated in
//! Kleene logic, so sound even where focus left 1/2), update of the instrumentation
//! predicates, coerce, canonical abstraction. Assignments are split into a nullifying
//! step and a setting step (as in TVLA), so every step changes each core predicate in
//! one direction only.
//!
//! Instrumentation predicates are updated per step as the meet of sound estimates:
//! - unchanged when the definition mentions no changed predicate (and the universe is
//!   unchanged or the definition is guarded);
//! - for local definitions ([`super::analysis`]) only tuples touching a changed node are
//!   re-evaluated;
//! - otherwise re-evaluated in the new structure, sharpened by monotonicity (a positive
//!   definition whose changed predicates only decreased keeps its 0s, etc.);
//! - the reachability/cyclicity families of [`super::families`] are additionally updated
//!   by finite differencing on edge insertion (`tc' = tc | rtc(., x) & rtc(y, .)`), on
//!   `x = y` (`r[x] := r[y]`) and on pointer moves (`r[x](v) := rtc(target, v)`).
//!
//! Conflicting definite estimates mean the structure represents no heap: it is dropped.

use super::class::ShapeClass;
use super::coerce::{coerce, focus_all, FocusLit};
use super::eval::{CFormula, Compiled, Evaluator};
use super::families::{self, Family};
use super::formula::{Kleene, PredSym};
use super::structure::{Structure, Vocab, SM};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A pointer operation on program pointer variables `x`, `y` (names as in `pt[x]`) and
/// flattened field names. Variables or fields the shape class does not track are
/// handled soundly (their values become unknown); a dereference of an untracked
/// pointer is not checked here.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PtrOp {
    /// `x = NULL`
    AssignNull { x: String },
    /// `x = y`
    Copy { x: String, y: String },
    /// `x = y->field`
    Load { x: String, y: String, field: String },
    /// `x->field = NULL`
    StoreNull { x: String, field: String },
    /// `x->field = y`
    Store { x: String, field: String, y: String },
    /// `x = malloc(..)` (assumed to succeed; pointer fields of the new cell are NULL)
    Malloc { x: String },
    /// `free(x)` (`free(NULL)` is a no-op; pointers to the cell become dangling,
    /// represented like NULL)
    Free { x: String },
    /// `assume(x == y)`
    AssumeEq { x: String, y: String },
    /// `assume(x != y)`
    AssumeNe { x: String, y: String },
    /// `assume(x == NULL)`
    AssumeNull { x: String },
    /// `assume(x != NULL)`
    AssumeNotNull { x: String },
    /// a data-field write on `*x` after which `fd[assertion]` has `value` on x's cell
    SetField {
        x: String,
        assertion: String,
        value: Kleene,
    },
    /// after which the core unary predicate `pred` has `value` on x's cell (e.g.
    /// `un[f]`: the field `f` of the cell is uninitialised); other cells keep theirs
    SetUnary {
        x: String,
        pred: PredSym,
        value: Kleene,
    },
    /// `assume(assertion)` (or its negation) about `*x`
    AssumeField {
        x: String,
        assertion: String,
        positive: bool,
    },
}

/// An abstract error an operation may raise.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum AbstractError {
    /// The operation dereferences `var`, which may be NULL (or dangling) in some
    /// represented heap; the successors cover only the non-null case.
    MayDerefNull { var: String },
}

/// Result of [`post`]: successor structures (canonical, pairwise distinct) and errors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PostResult {
    pub structures: Vec<Structure>,
    pub errors: Vec<AbstractError>,
}

/// Abstract post of `op` on `s`: every concrete successor of every heap `s` represents
/// is represented (embeds into) one of the returned structures, and any possible
/// NULL dereference of a tracked pointer is reported. Never panics. The vocabulary is
/// the one `s` was built with (`class` must be that class; a mismatch is logged).
pub fn post(s: &Structure, class: &ShapeClass, op: &PtrOp) -> PostResult {
    if s.vocab().class != *class {
        tracing::warn!("post: structure built over a different shape class");
    }
    // The vocabulary's address is part of the key: `Structure`'s equality compares
    // predicate lists only, and the entry's structure keeps the vocabulary alive, so
    // the address is not reused while the entry exists.
    let key = (Arc::as_ptr(s.vocab()) as usize, s.clone(), op.clone());
    if let Some(r) = POST_MEMO.with(|m| m.borrow().get(&key).cloned()) {
        return r;
    }
    // provenance only for counting classes (tvla::counts); their vocabularies, and so
    // their memo entries, are their own
    let r = if s.vocab().class.counters.is_empty() {
        post_impl(s, op, true)
    } else {
        post_impl(&s.with_identity_origins(), op, true)
    };
    POST_MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= POST_MEMO_CAP {
            m.clear();
        }
        m.insert(key, r.clone());
    });
    r
}

/// Entries of the [`post`] memo before it is emptied (bounds its memory).
pub const POST_MEMO_CAP: usize = 1 << 15;

thread_local! {
    /// Abstract posts already computed: [`post`] is a function of the structure (with
    /// its vocabulary) and the operation, and the same structure reaches the same
    /// edge in many ART nodes.
    static POST_MEMO: RefCell<FxHashMap<(usize, Structure, PtrOp), PostResult>> =
        RefCell::new(FxHashMap::default());
}

/// Like [`post`] but without the final canonical abstraction: on a 2-valued structure
/// this is the concrete semantics (used by the soundness tests and the explicit heap).
pub fn post_concrete(s: &Structure, op: &PtrOp) -> PostResult {
    post_impl(s, op, false)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Dec,
    Inc,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Domain {
    Same,
    Added(usize),
    Removed(usize),
}

#[derive(Clone, Debug)]
struct Change {
    dirs: BTreeMap<PredSym, Dir>,
    /// an edge (field, src, dst) inserted into a field whose src-edge was NULL
    insert: Option<(String, usize, usize)>,
    /// the `field` edges of this (single) node were removed
    delete: Option<(String, usize)>,
    /// `pt[x]` (nullified before) now points to exactly this node
    pt_set: Option<(String, usize)>,
    /// `pt[x] := y->field` where y points to the node (for `x == y` see `load_pre`)
    load: Option<(String, String, usize)>,
    /// for `x = x->field`: the structure before `x` was nullified (same nodes), from
    /// which the load reads y's (= x's) old values
    load_pre: Option<Structure>,
    /// `pt[x] := pt[y]` (x nullified before)
    copy: Option<(String, String)>,
    /// `pt[x]` (which pointed to exactly this node) was nullified
    pt_cleared: Option<(String, usize)>,
    domain: Domain,
}

impl Change {
    fn new() -> Change {
        Change {
            dirs: BTreeMap::new(),
            insert: None,
            delete: None,
            pt_set: None,
            load: None,
            load_pre: None,
            copy: None,
            pt_cleared: None,
            domain: Domain::Same,
        }
    }
    fn with(p: PredSym, d: Dir) -> Change {
        let mut c = Change::new();
        c.dirs.insert(p, d);
        c
    }
}

fn pt_sym(x: &str) -> PredSym {
    PredSym::with("pt", &[x])
}

fn post_impl(s: &Structure, op: &PtrOp, abstract_: bool) -> PostResult {
    let voc = s.vocab().clone();
    let mut errors = BTreeSet::new();
    let start = match coerce(s.clone()) {
        Some(t) => vec![t],
        None => Vec::new(),
    };
    let res = run_op(&voc, start, op, &mut errors);
    let mut seen = FxHashSet::default();
    let mut structures = Vec::new();
    for t in res {
        let t = if abstract_ { t.blur() } else { t };
        // equal structures with different provenance are different results for
        // counting (`super::counts::after_post`)
        let key = (
            t.clone(),
            t.origins().to_vec(),
            t.removed_origins().to_vec(),
        );
        if seen.insert(key) {
            structures.push(t);
        }
    }
    PostResult {
        structures,
        errors: errors.into_iter().collect(),
    }
}

fn focus_pt(ss: Vec<Structure>, p: Option<usize>) -> Vec<Structure> {
    match p {
        Some(p) => focus_all(ss, |_| Some(FocusLit::Unary(p))),
        None => ss,
    }
}

/// `E v. pt(v)`
fn nonnull(t: &Structure, p: usize) -> Kleene {
    (0..t.len()).fold(Kleene::False, |a, v| a.or(t.get1(p, v)))
}

/// The node a pointer definitely points to.
fn target(t: &Structure, p: usize) -> Option<usize> {
    let mut one = None;
    for v in 0..t.len() {
        match t.get1(p, v) {
            Kleene::True if one.is_none() => one = Some(v),
            Kleene::False => {}
            _ => return None,
        }
    }
    one
}

/// Focuses on `pt[x]` and keeps the structures where x may be non-null; reports a
/// possible NULL dereference.
fn deref(
    ss: Vec<Structure>,
    x: &str,
    p: Option<usize>,
    errors: &mut BTreeSet<AbstractError>,
) -> Vec<Structure> {
    let Some(p) = p else { return ss };
    focus_pt(ss, Some(p))
        .into_iter()
        .filter(|t| {
            let k = nonnull(t, p);
            if k != Kleene::True {
                errors.insert(AbstractError::MayDerefNull { var: x.to_string() });
            }
            k != Kleene::False
        })
        .collect()
}

fn run_op(
    voc: &Arc<Vocab>,
    ss: Vec<Structure>,
    op: &PtrOp,
    errors: &mut BTreeSet<AbstractError>,
) -> Vec<Structure> {
    match op {
        PtrOp::AssignNull { x } => {
            let Some(px) = voc.pt(x) else { return ss };
            ss.into_iter()
                .filter_map(|t| nullify_pt(&t, px, x))
                .collect()
        }
        PtrOp::Copy { x, y } => {
            let Some(px) = voc.pt(x) else { return ss };
            if x == y {
                return ss;
            }
            let py = voc.pt(y);
            ss.into_iter()
                .filter_map(|t| {
                    let vals: Vec<Kleene> = (0..t.len())
                        .map(|v| py.map_or(Kleene::Half, |py| t.get1(py, v)))
                        .collect();
                    let t = nullify_pt(&t, px, x)?;
                    let copy = py.map(|_| (x.clone(), y.clone()));
                    set_pt(&t, px, x, &vals, copy)
                })
                .collect()
        }
        PtrOp::Load { x, y, field } => {
            let py = voc.pt(y);
            let px = voc.pt(x);
            let pf = voc.field(field);
            let ss = deref(ss, y, py, errors);
            let ss = match (py, pf) {
                (Some(py), Some(pf)) => {
                    focus_all(ss, |t| target(t, py).map(|src| FocusLit::Succ(pf, src)))
                }
                _ => ss,
            };
            let Some(px) = px else { return ss };
            ss.into_iter()
                .filter_map(|t| {
                    let vals: Vec<Kleene> = (0..t.len())
                        .map(|v| match (py, pf) {
                            (Some(py), Some(pf)) => (0..t.len()).fold(Kleene::False, |a, w| {
                                a.or(t.get1(py, w).and(t.get2(pf, w, v)))
                            }),
                            _ => Kleene::Half,
                        })
                        .collect();
                    let load = py
                        .and_then(|py| target(&t, py))
                        .map(|n| (y.clone(), field.clone(), n));
                    // `x = x->f`: nullifying x loses r[x], which the load reads
                    let load_pre = (x == y).then(|| t.clone());
                    let t = nullify_pt(&t, px, x)?;
                    set_pt_load(&t, px, x, &vals, None, load, load_pre)
                })
                .collect()
        }
        PtrOp::StoreNull { x, field } => {
            let px = voc.pt(x);
            let ss = deref(ss, x, px, errors);
            let Some(pf) = voc.field(field) else {
                return ss;
            };
            let Some(px) = px else {
                // x untracked: any node may be x's target
                return ss
                    .into_iter()
                    .filter_map(|t| havoc_field(&t, pf, field, |_| Kleene::False))
                    .collect();
            };
            ss.into_iter()
                .filter_map(|t| nullify_field(&t, pf, field, px))
                .collect()
        }
        PtrOp::Store { x, field, y } => {
            let px = voc.pt(x);
            let py = voc.pt(y);
            let ss = deref(ss, x, px, errors);
            let ss = focus_pt(ss, py);
            let Some(pf) = voc.field(field) else {
                return ss;
            };
            let Some(px) = px else {
                // x untracked: any node may be x's target
                return ss
                    .into_iter()
                    .filter_map(|t| {
                        let ys: Vec<Kleene> = (0..t.len())
                            .map(|b| py.map_or(Kleene::Half, |py| t.get1(py, b)))
                            .collect();
                        havoc_field(&t, pf, field, |b| ys[b])
                    })
                    .collect();
            };
            ss.into_iter()
                .filter_map(|t| {
                    let t = nullify_field(&t, pf, field, px)?;
                    insert_field(&t, pf, field, px, py)
                })
                .collect()
        }
        PtrOp::Malloc { x } => {
            let px = voc.pt(x);
            ss.into_iter()
                .filter_map(|t| {
                    let mut post = t.clone();
                    let k = post.add_node(Kleene::False);
                    for (i, p) in voc.unary.iter().enumerate() {
                        if p.name == "fd" {
                            post.set1(i, k, Kleene::Half);
                        }
                    }
                    let mut ch = Change::new();
                    ch.domain = Domain::Added(k);
                    for (i, p) in voc.unary.iter().enumerate() {
                        if p.name == "fd" {
                            ch.dirs.insert(voc.unary[i].clone(), Dir::Both);
                        }
                    }
                    let t2 = update(&t, post, &ch)?;
                    // x untracked: the new cell exists, no tracked pointer points to it
                    let Some(px) = px else { return Some(t2) };
                    let t3 = nullify_pt(&t2, px, x)?;
                    let mut vals = vec![Kleene::False; t3.len()];
                    vals[k] = Kleene::True;
                    set_pt(&t3, px, x, &vals, None)
                })
                .collect()
        }
        PtrOp::Free { x } => {
            let Some(px) = voc.pt(x) else { return ss };
            focus_pt(ss, Some(px))
                .into_iter()
                .filter_map(|t| {
                    if nonnull(&t, px) == Kleene::False {
                        return Some(t); // free(NULL)
                    }
                    let Some(r) = target(&t, px) else {
                        tracing::warn!("free: target of {x} not definite; left unchanged");
                        return Some(t);
                    };
                    let post = t.remove_node(r);
                    // every tuple of the remaining nodes keeps its value: only the
                    // universe shrinks (so e.g. a universal definition can only become
                    // more true, and keeps its 1s)
                    let mut ch = Change::new();
                    ch.domain = Domain::Removed(r);
                    update(&t, post, &ch)
                })
                .collect()
        }
        PtrOp::AssumeEq { x, y } | PtrOp::AssumeNe { x, y } => {
            let (Some(px), Some(py)) = (voc.pt(x), voc.pt(y)) else {
                return ss;
            };
            let want_eq = matches!(op, PtrOp::AssumeEq { .. });
            focus_pt(focus_pt(ss, Some(px)), Some(py))
                .into_iter()
                .filter(|t| {
                    let both = (0..t.len())
                        .fold(Kleene::False, |a, v| a.or(t.get1(px, v).and(t.get1(py, v))));
                    let nulls = nonnull(t, px).negate().and(nonnull(t, py).negate());
                    let eq = both.or(nulls);
                    if want_eq {
                        eq != Kleene::False
                    } else {
                        eq != Kleene::True
                    }
                })
                .collect()
        }
        PtrOp::AssumeNull { x } | PtrOp::AssumeNotNull { x } => {
            let Some(px) = voc.pt(x) else { return ss };
            let want_null = matches!(op, PtrOp::AssumeNull { .. });
            focus_pt(ss, Some(px))
                .into_iter()
                .filter_map(|mut t| {
                    let k = nonnull(&t, px);
                    if want_null {
                        if k == Kleene::True {
                            return None;
                        }
                        for v in 0..t.len() {
                            t.set1(px, v, Kleene::False);
                        }
                        coerce(t)
                    } else {
                        (k != Kleene::False).then_some(t)
                    }
                })
                .collect()
        }
        PtrOp::SetField {
            x,
            assertion,
            value,
        } => {
            let fsym = PredSym::with("fd", &[assertion.as_str()]);
            set_unary(ss, voc, x, fsym, *value, errors)
        }
        PtrOp::SetUnary { x, pred, value } => set_unary(ss, voc, x, pred.clone(), *value, errors),
        PtrOp::AssumeField {
            x,
            assertion,
            positive,
        } => {
            let px = voc.pt(x);
            let ss = deref(ss, x, px, errors);
            let fsym = PredSym::with("fd", &[assertion.as_str()]);
            let (Some(px), Some((1, pfd))) = (px, voc.lookup(&fsym)) else {
                return ss;
            };
            let want = Kleene::from_bool(*positive);
            ss.into_iter()
                .filter_map(|t| {
                    let holds = (0..t.len()).fold(Kleene::False, |a, v| {
                        let f = t.get1(pfd, v);
                        let lit = if *positive { f } else { f.negate() };
                        a.or(t.get1(px, v).and(lit))
                    });
                    if holds == Kleene::False {
                        return None;
                    }
                    let Some(n) = target(&t, px) else {
                        return Some(t);
                    };
                    if t.get1(pfd, n) == want {
                        return Some(t);
                    }
                    let mut post = t.clone();
                    post.set1(pfd, n, want);
                    // a refinement, not a state change: instrumentation values stay
                    coerce(post)
                })
                .collect()
        }
    }
}

fn nullify_pt(t: &Structure, px: usize, x: &str) -> Option<Structure> {
    if nonnull(t, px) == Kleene::False {
        return Some(t.clone());
    }
    let mut post = t.clone();
    for v in 0..t.len() {
        post.set1(px, v, Kleene::False);
    }
    let mut ch = Change::with(pt_sym(x), Dir::Dec);
    ch.pt_cleared = target(t, px).map(|n| (x.to_string(), n));
    update(t, post, &ch)
}

/// `pt[x] := vals` on a structure where `pt[x]` is 0 everywhere.
fn set_pt(
    t: &Structure,
    px: usize,
    x: &str,
    vals: &[Kleene],
    copy: Option<(String, String)>,
) -> Option<Structure> {
    set_pt_load(t, px, x, vals, copy, None, None)
}

/// [`set_pt`] for `x = y->field` (`load` = (y, field, y's node)).
fn set_pt_load(
    t: &Structure,
    px: usize,
    x: &str,
    vals: &[Kleene],
    copy: Option<(String, String)>,
    load: Option<(String, String, usize)>,
    load_pre: Option<Structure>,
) -> Option<Structure> {
    if vals.iter().all(|k| *k == Kleene::False) {
        return Some(t.clone());
    }
    let mut post = t.clone();
    for (v, k) in vals.iter().enumerate() {
        post.set1(px, v, *k);
    }
    let mut ch = Change::with(pt_sym(x), Dir::Inc);
    ch.copy = copy;
    ch.load = load;
    ch.load_pre = load_pre;
    if let Some(n) = target(&post, px) {
        ch.pt_set = Some((x.to_string(), n));
    }
    update(t, post, &ch)
}

/// `f(a, b) := f(a, b) & !pt[x](a)`
fn nullify_field(t: &Structure, pf: usize, field: &str, px: usize) -> Option<Structure> {
    let mut post = t.clone();
    let mut any = false;
    for a in 0..t.len() {
        let p = t.get1(px, a);
        if p == Kleene::False {
            continue;
        }
        for b in 0..t.len() {
            let old = t.get2(pf, a, b);
            let k = old.and(p.negate());
            if k != old {
                any = true;
                post.set2(pf, a, b, k);
            }
        }
    }
    if !any {
        return Some(post);
    }
    let mut ch = Change::with(PredSym::plain(field), Dir::Dec);
    ch.delete = target(t, px).map(|nx| (field.to_string(), nx));
    update(t, post, &ch)
}

/// `f(a, b) := f(a, b) | pt[x](a) & pt[y](b)` (y untracked: unknown target)
fn insert_field(
    t: &Structure,
    pf: usize,
    field: &str,
    px: usize,
    py: Option<usize>,
) -> Option<Structure> {
    let mut post = t.clone();
    let mut any = false;
    for a in 0..t.len() {
        let p = t.get1(px, a);
        if p == Kleene::False {
            continue;
        }
        for b in 0..t.len() {
            let yb = py.map_or(Kleene::Half, |py| t.get1(py, b));
            let old = t.get2(pf, a, b);
            let k = old.or(p.and(yb));
            if k != old {
                any = true;
                post.set2(pf, a, b, k);
            }
        }
    }
    if !any {
        return Some(post);
    }
    let mut ch = Change::with(PredSym::plain(field), Dir::Inc);
    if let (Some(nx), Some(py)) = (target(t, px), py) {
        if let Some(ny) = target(t, py) {
            ch.insert = Some((field.to_string(), nx, ny));
        }
    }
    update(t, post, &ch)
}

/// A write of `x->field` through an untracked `x`: every node may be the written one,
/// so `f(a, b) := f(a, b) ⊔ new(b)` for every `a` (`new(b)`: the value the written
/// field has towards `b`).
fn havoc_field(
    t: &Structure,
    pf: usize,
    field: &str,
    new: impl Fn(usize) -> Kleene,
) -> Option<Structure> {
    let mut post = t.clone();
    let mut any = false;
    for a in 0..t.len() {
        for b in 0..t.len() {
            let old = t.get2(pf, a, b);
            let k = old.join(new(b));
            if k != old {
                any = true;
                post.set2(pf, a, b, k);
            }
        }
    }
    if !any {
        return Some(post);
    }
    update(t, post, &Change::with(PredSym::plain(field), Dir::Both))
}

/// Meet of two sound estimates; `None` on contradiction.
fn meet(a: Kleene, b: Kleene) -> Option<Kleene> {
    match (a, b) {
        (Kleene::Half, k) | (k, Kleene::Half) => Some(k),
        (x, y) if x == y => Some(x),
        _ => None,
    }
}

/// Updates the instrumentation predicates of `post` (core predicates already updated
/// from `pre` as described by `ch`), then coerces.
/// `SetField` / `SetUnary`: after a dereference of `x`, the unary predicate `sym` is
/// `value` on x's node (joined with its old value where x only may point; on every
/// node when x is untracked). No-op on structures without `sym`.
fn set_unary(
    ss: Vec<Structure>,
    voc: &Vocab,
    x: &str,
    sym: PredSym,
    value: Kleene,
    errors: &mut BTreeSet<AbstractError>,
) -> Vec<Structure> {
    let px = voc.pt(x);
    let ss = deref(ss, x, px, errors);
    let Some((1, pi)) = voc.lookup(&sym) else {
        return ss;
    };
    ss.into_iter()
        .filter_map(|t| {
            let mut post = t.clone();
            for v in 0..t.len() {
                // x untracked: any node may be x's target
                let p = px.map_or(Kleene::Half, |px| t.get1(px, v));
                let k = p.and(value).or(p.negate().and(t.get1(pi, v)));
                post.set1(pi, v, k);
            }
            update(&t, post, &Change::with(sym.clone(), Dir::Both))
        })
        .collect()
}

fn update(pre: &Structure, post: Structure, ch: &Change) -> Option<Structure> {
    let voc = pre.vocab().clone();
    let mut cur = post;
    let n = cur.len();
    // old index of a new node
    let old_of = |v: usize| -> Option<usize> {
        match ch.domain {
            Domain::Same => Some(v),
            Domain::Added(k) => (v != k).then_some(v),
            Domain::Removed(r) => Some(if v >= r { v + 1 } else { v }),
        }
    };
    let mut dirs = ch.dirs.clone();
    let mut rtc_cache: BTreeMap<Vec<String>, Vec<Kleene>> = BTreeMap::new();
    for ins in &voc.instr {
        let relevant: Vec<(&PredSym, Dir)> = ins
            .pol
            .keys()
            .filter_map(|k| k.as_ref())
            .filter_map(|p| dirs.get(p).map(|d| (p, *d)))
            .collect();
        let fam_iso = ins.family.is_some() || ins.guarded;
        let domain_effect = match ch.domain {
            Domain::Same => false,
            Domain::Added(_) => !fam_iso,
            Domain::Removed(_) => true,
        };
        if relevant.is_empty() && !domain_effect {
            if let Domain::Added(k) = ch.domain {
                // only the new node's tuples need values
                let vals = eval_tuples(&cur, ins, |t| t.contains(&k));
                for (t, v) in vals {
                    cur.set_at(ins.arity, ins.idx, &t, v);
                }
            }
            continue;
        }
        // direction of the definition's value
        let mut vdir: Option<Dir> = None;
        let mut combine = |d: Dir| {
            vdir = Some(match vdir {
                None => d,
                Some(e) if e == d => d,
                _ => Dir::Both,
            })
        };
        for (p, d) in &relevant {
            let pol = ins.pol[&Some((*p).clone())];
            combine(compose(pol, *d));
        }
        if domain_effect {
            let d = match ch.domain {
                Domain::Removed(_) => Dir::Dec,
                _ => Dir::Inc,
            };
            if let Some(pol) = ins.pol.get(&None) {
                combine(compose(*pol, d))
            }
        }
        // locality
        let local = relevant.iter().all(|(p, _)| !ins.nonlocal.contains(*p))
            && (!domain_effect || ins.guarded);
        let touched = if local {
            touched_nodes(pre, &cur, &relevant, ch.domain, ins)
        } else {
            None
        };
        // finite differencing
        let diff = differencing(pre, ins, ch, &relevant, &mut rtc_cache)
            .or_else(|| universal_differencing(pre, &cur, ins, ch, &relevant));
        let old_val = |t: &[usize]| -> Option<Kleene> {
            let o: Option<Vec<usize>> = t.iter().map(|v| old_of(*v)).collect();
            let o = o?;
            Some(pre.get_at(ins.arity, ins.idx, &o))
        };
        let needs_eval = |t: &[usize]| -> bool {
            match &touched {
                Some(tn) => t.iter().any(|v| tn.contains(v)) || old_val(t).is_none(),
                None => true,
            }
        };
        let evals = eval_tuples(&cur, ins, needs_eval);
        let mut newvals: Vec<(Vec<usize>, Kleene)> = Vec::with_capacity(evals.len());
        let mut went_down = false;
        let mut went_up = false;
        for (t, e) in evals {
            let old = old_val(&t);
            let mut v = e;
            if let (Some(o), Some(d)) = (old, vdir) {
                let bound = match (d, o) {
                    (Dir::Dec, Kleene::False) => Kleene::False,
                    (Dir::Inc, Kleene::True) => Kleene::True,
                    _ => Kleene::Half,
                };
                v = meet(v, bound)?;
            }
            if let Some(dv) = diff.as_ref().and_then(|f| f(&t)) {
                v = meet(v, dv)?;
            }
            if let Some(o) = old {
                if v < o {
                    went_down = true;
                }
                if v > o {
                    went_up = true;
                }
            }
            newvals.push((t, v));
        }
        for (t, v) in newvals {
            cur.set_at(ins.arity, ins.idx, &t, v);
        }
        match (went_down, went_up) {
            (false, false) => {}
            (true, false) => {
                dirs.insert(ins.sym.clone(), Dir::Dec);
            }
            (false, true) => {
                dirs.insert(ins.sym.clone(), Dir::Inc);
            }
            _ => {
                dirs.insert(ins.sym.clone(), Dir::Both);
            }
        }
    }
    let _ = n;
    coerce(cur)
}

/// Direction of a definition's value given its polarity in a predicate that moved `d`.
fn compose(pol: super::analysis::Pol, d: Dir) -> Dir {
    use super::analysis::Pol;
    match (pol, d) {
        (_, Dir::Both) | (Pol::Mixed, _) => Dir::Both,
        (Pol::Pos, d) => d,
        (Pol::Neg, Dir::Dec) => Dir::Inc,
        (Pol::Neg, Dir::Inc) => Dir::Dec,
    }
}

fn tuples(arity: u8, n: usize) -> Vec<Vec<usize>> {
    match arity {
        0 => vec![vec![]],
        1 => (0..n).map(|v| vec![v]).collect(),
        _ => (0..n)
            .flat_map(|a| (0..n).map(move |b| vec![a, b]))
            .collect(),
    }
}

fn eval_tuples(
    s: &Structure,
    ins: &super::structure::InstrInfo,
    want: impl Fn(&[usize]) -> bool,
) -> Vec<(Vec<usize>, Kleene)> {
    let mut ev = Evaluator::new(s);
    tuples(ins.arity, s.len())
        .into_iter()
        .filter(|t| want(t))
        .map(|t| {
            let k = ins.def.eval(&mut ev, &t);
            (t, k)
        })
        .collect()
}

/// Nodes (new indices) whose predicate values changed for the relevant predicates, or
/// that neighbour an added/removed node; `None` when every tuple may be affected.
fn touched_nodes(
    pre: &Structure,
    cur: &Structure,
    relevant: &[(&PredSym, Dir)],
    domain: Domain,
    ins: &super::structure::InstrInfo,
) -> Option<BTreeSet<usize>> {
    let voc = pre.vocab();
    let mut out = BTreeSet::new();
    let n = cur.len();
    let old = |v: usize| -> usize {
        match domain {
            Domain::Removed(r) if v >= r => v + 1,
            _ => v,
        }
    };
    let exists_old = |v: usize| !matches!(domain, Domain::Added(k) if k == v);
    for (p, _) in relevant {
        match voc.lookup(p)? {
            (0, i) => {
                if pre.get0(i) != cur.get0(i) {
                    return None;
                }
            }
            (1, i) => {
                for v in (0..n).filter(|v| exists_old(*v)) {
                    if pre.get1(i, old(v)) != cur.get1(i, v) {
                        out.insert(v);
                    }
                }
            }
            (_, i) => {
                let pos = ins.free_pos.get(*p);
                let at = |k: usize| pos.is_none_or(|s| s.contains(&k));
                for a in (0..n).filter(|v| exists_old(*v)) {
                    for b in (0..n).filter(|v| exists_old(*v)) {
                        if pre.get2(i, old(a), old(b)) != cur.get2(i, a, b) {
                            if at(0) {
                                out.insert(a);
                            }
                            if at(1) {
                                out.insert(b);
                            }
                        }
                    }
                }
            }
        }
    }
    match domain {
        Domain::Same => {}
        Domain::Added(k) => {
            out.insert(k);
        }
        Domain::Removed(r) => {
            for w in 0..pre.len() {
                if w == r {
                    continue;
                }
                let linked = (0..voc.binary.len()).any(|i| {
                    pre.get2(i, w, r) != Kleene::False || pre.get2(i, r, w) != Kleene::False
                });
                if linked {
                    out.insert(if w > r { w - 1 } else { w });
                }
            }
        }
    }
    Some(out)
}

type DiffFn<'a> = Box<dyn Fn(&[usize]) -> Option<Kleene> + 'a>;

/// Reflexive reachability along fields `F` in `s` (stored `tc[F]` met with evaluation).
fn rtc(s: &Structure, fields: &[String]) -> Vec<Kleene> {
    let voc = s.vocab();
    let n = s.len();
    let fs: Vec<&str> = fields.iter().map(|f| f.as_str()).collect();
    let def = families::tc(&fs)
        .def
        .unwrap_or(super::formula::Formula::Const(Kleene::Half));
    let c = Compiled::new(voc, &def, &["v1", "v2"]);
    let stored = voc
        .instr
        .iter()
        .find(|i| i.family == Some(Family::Tc(fields.to_vec())))
        .map(|i| i.idx);
    let mut ev = Evaluator::new(s);
    let mut m = vec![Kleene::False; n * n];
    for a in 0..n {
        for b in 0..n {
            let mut k = c.eval(&mut ev, &[a, b]);
            if let Some(i) = stored {
                k = meet(k, s.get2(i, a, b)).unwrap_or(k);
            }
            if a == b {
                k = k.or(if s.get1(SM, a) == Kleene::False {
                    Kleene::True
                } else {
                    Kleene::Half
                });
            }
            m[a * n + b] = k;
        }
    }
    // the row of a node a pointer z points to is r[z, F]
    for ins in &voc.instr {
        if let Some(Family::Reach(z, g)) = &ins.family {
            if g.as_slice() != fields {
                continue;
            }
            let Some(a) = voc.pt(z).and_then(|p| target(s, p)) else {
                continue;
            };
            for b in 0..n {
                let k = m[a * n + b];
                m[a * n + b] = meet(k, s.get1(ins.idx, b)).unwrap_or(k);
            }
        }
    }
    m
}

/// Quantifier-free formula whose atoms of arity >= 1 are binary.
fn qf_binary(f: &CFormula) -> bool {
    match f {
        CFormula::Const(_) | CFormula::P0(_) | CFormula::P2(..) | CFormula::Eq(..) => true,
        CFormula::P1(..) => true,
        CFormula::Not(g) => qf_binary(g),
        CFormula::And(gs) | CFormula::Or(gs) => gs.iter().all(qf_binary),
        CFormula::Implies(a, b) | CFormula::Iff(a, b) => qf_binary(a) && qf_binary(b),
        CFormula::Exists(..) | CFormula::Forall(..) | CFormula::Tc { .. } => false,
    }
}

/// The argument slots of every occurrence of binary predicate `i` in `f`.
fn binary_atoms(f: &CFormula, i: usize, out: &mut Vec<(usize, usize)>) {
    match f {
        CFormula::P2(j, a, b) if *j == i => out.push((*a, *b)),
        CFormula::Const(_) | CFormula::P0(_) | CFormula::P1(..) | CFormula::P2(..) => {}
        CFormula::Eq(..) => {}
        CFormula::Not(g) | CFormula::Exists(_, g) | CFormula::Forall(_, g) => {
            binary_atoms(g, i, out)
        }
        CFormula::And(gs) | CFormula::Or(gs) => gs.iter().for_each(|g| binary_atoms(g, i, out)),
        CFormula::Implies(a, b) | CFormula::Iff(a, b) => {
            binary_atoms(a, i, out);
            binary_atoms(b, i, out);
        }
        CFormula::Tc { body, .. } => binary_atoms(body, i, out),
    }
}

/// Differencing for unary definitions `A w. psi(v, w)` / `E w. psi(v, w)` with a
/// quantifier-free `psi` when only binary predicates changed: the tuples that changed
/// have all their endpoints in a node set `C`, so the part of the quantifier over
/// `w` outside `C` keeps its old value (recovered from the stored value where
/// possible) and only `w` in `C` is re-evaluated.
///
/// When a node `rm` leaves the universe (free) and nothing else changes, the value at
/// `v` stays unless `rm` was a possible witness: `psi(v, rm)` definitely false for `E`
/// (definitely true for `A`) keeps it. (E.g. `tot[next](v) := E w. next(v, w)` of a
/// cell whose predecessor is freed: re-evaluation gives 1/2 when its successor lies
/// in a summary node.)
fn universal_differencing<'a>(
    pre: &'a Structure,
    cur: &Structure,
    ins: &'a super::structure::InstrInfo,
    ch: &Change,
    relevant: &[(&PredSym, Dir)],
) -> Option<DiffFn<'a>> {
    let (forall, wslot, body) = match &ins.def.f {
        CFormula::Forall(w, b) => (true, *w, b.as_ref()),
        CFormula::Exists(w, b) => (false, *w, b.as_ref()),
        _ => return None,
    };
    if ins.arity != 1 || !qf_binary(body) {
        return None;
    }
    if let (Domain::Removed(rm), true) = (ch.domain, relevant.is_empty()) {
        let mut ev = Evaluator::new(pre);
        let mut env = vec![0usize; ins.def.slots];
        let keep: Vec<bool> = (0..pre.len())
            .map(|v| {
                env[0] = v;
                env[wslot] = rm;
                let k = ev.eval(body, &mut env);
                v != rm && k == Kleene::from_bool(forall)
            })
            .collect();
        let idx = ins.idx;
        return Some(Box::new(move |t: &[usize]| {
            let v = if t[0] >= rm { t[0] + 1 } else { t[0] };
            keep[v].then(|| pre.get1(idx, v))
        }));
    }
    if ch.domain != Domain::Same || relevant.is_empty() {
        return None;
    }
    let voc = pre.vocab();
    let n = pre.len();
    // the values of `w` at which the body may have changed: for each occurrence
    // `p(s1, s2)` of a changed `p`, the endpoint of a changed tuple at `w`'s position
    let mut c = BTreeSet::new();
    for (p, _) in relevant {
        let (2, i) = voc.lookup(p)? else {
            return None;
        };
        let mut occ = Vec::new();
        binary_atoms(body, i, &mut occ);
        if occ.iter().any(|(s1, s2)| *s1 != wslot && *s2 != wslot) {
            // an occurrence without `w` changes the body for every `w`
            return None;
        }
        for a in 0..n {
            for b in 0..n {
                if pre.get2(i, a, b) != cur.get2(i, a, b) {
                    for (s1, s2) in &occ {
                        if *s1 == wslot {
                            c.insert(a);
                        }
                        if *s2 == wslot {
                            c.insert(b);
                        }
                    }
                }
            }
        }
    }
    let part = |s: &Structure, v: usize| -> Kleene {
        let mut ev = Evaluator::new(s);
        let mut env = vec![0usize; ins.def.slots];
        env[0] = v;
        let mut acc = Kleene::from_bool(forall);
        for w in &c {
            env[wslot] = *w;
            let k = ev.eval(body, &mut env);
            acc = if forall { acc.and(k) } else { acc.or(k) };
        }
        acc
    };
    let vals: Vec<Kleene> = (0..n)
        .map(|v| {
            let old = pre.get1(ins.idx, v);
            let (old_part, new_part) = (part(pre, v), part(cur, v));
            if forall {
                let rest = if old == Kleene::True || old_part == Kleene::True {
                    old
                } else {
                    Kleene::Half
                };
                rest.and(new_part)
            } else {
                let rest = if old == Kleene::False || old_part == Kleene::False {
                    old
                } else {
                    Kleene::Half
                };
                rest.or(new_part)
            }
        })
        .collect();
    Some(Box::new(move |t: &[usize]| vals.get(t[0]).copied()))
}

fn differencing<'a>(
    pre: &'a Structure,
    ins: &'a super::structure::InstrInfo,
    ch: &'a Change,
    relevant: &[(&PredSym, Dir)],
    cache: &mut BTreeMap<Vec<String>, Vec<Kleene>>,
) -> Option<DiffFn<'a>> {
    let fam = ins.family.as_ref()?;
    let fields = fam.fields();
    let n = pre.len();
    let get_rtc = |cache: &mut BTreeMap<Vec<String>, Vec<Kleene>>| -> Vec<Kleene> {
        cache
            .entry(fields.to_vec())
            .or_insert_with(|| rtc(pre, fields))
            .clone()
    };
    let idx = ins.idx;
    if let Family::Seg(z, _) = fam {
        return segment_differencing(pre, ins, ch, relevant, z, fields);
    }
    if let Domain::Removed(rm) = ch.domain {
        // A cell leaves the universe (free) and no field changes: a path that cannot
        // reach the removed cell never passed through it, so its value stays. (Tuples
        // are in the new numbering; `pre` in the old one.)
        if !relevant.is_empty() {
            return None;
        }
        let old = move |v: usize| if v >= rm { v + 1 } else { v };
        let r = get_rtc(cache);
        let unreached = move |a: usize, b: usize| r[a * n + b] == Kleene::False;
        return Some(match fam {
            Family::Tc(_) => Box::new(move |t: &[usize]| {
                let (a, b) = (old(t[0]), old(t[1]));
                (unreached(a, rm) || unreached(rm, b)).then(|| pre.get2(idx, a, b))
            }),
            Family::Cyclic(_) | Family::Acyclic(_) => Box::new(move |t: &[usize]| {
                let a = old(t[0]);
                (unreached(a, rm) || unreached(rm, a)).then(|| pre.get1(idx, a))
            }),
            Family::Reach(..) => Box::new(move |t: &[usize]| {
                (pre.get1(idx, rm) == Kleene::False).then(|| pre.get1(idx, old(t[0])))
            }),
            Family::Seg(..) => return None,
        });
    }
    if ch.domain != Domain::Same {
        return None;
    }
    if let Some((f, nx, ny)) = &ch.insert {
        let only_fields = relevant
            .iter()
            .all(|(p, _)| p.params.is_empty() && fields.contains(&p.name));
        if !fields.contains(f) || !only_fields {
            return None;
        }
        let (nx, ny) = (*nx, *ny);
        let r = get_rtc(cache);
        let r2 = r.clone();
        let through = move |a: usize, b: usize| r[a * n + nx].and(r[ny * n + b]);
        return Some(match fam {
            Family::Tc(_) => {
                Box::new(move |t: &[usize]| Some(pre.get2(idx, t[0], t[1]).or(through(t[0], t[1]))))
            }
            Family::Cyclic(_) => {
                Box::new(move |t: &[usize]| Some(pre.get1(idx, t[0]).or(through(t[0], t[0]))))
            }
            Family::Acyclic(_) => Box::new(move |t: &[usize]| {
                Some(pre.get1(idx, t[0]).and(through(t[0], t[0]).negate()))
            }),
            Family::Reach(..) => Box::new(move |t: &[usize]| {
                Some(
                    pre.get1(idx, t[0])
                        .or(pre.get1(idx, nx).and(r2[ny * n + t[0]])),
                )
            }),
            Family::Seg(..) => return None,
        });
    }
    if let Some((f, nx)) = &ch.delete {
        // Only the out-edges of the single cell `nx` were removed, so a path that
        // uses one of them passes through `nx` and continues from it. Unchanged are:
        // paths that cannot reach `nx`, paths to a node `nx` cannot reach, and
        // (shortest) paths ending at `nx` itself, which never leave `nx`.
        let only_fields = relevant
            .iter()
            .all(|(p, _)| p.params.is_empty() && fields.contains(&p.name));
        if !fields.contains(f) || !only_fields {
            return None;
        }
        let nx = *nx;
        let r = get_rtc(cache);
        let unreached = move |a: usize, b: usize| r[a * n + b] == Kleene::False;
        // The removed edge's target `b0`, when it is one definite cell: a path from
        // `b0` to another node, cut after its last visit of `b0`, never enters `b0`
        // again, so it never used the removed edge (which enters `b0`): `tc(b0, v)`
        // for `v ≠ b0` is unchanged. This keeps the reachability of a cyclic list
        // whose head is re-linked (`head->next = n` with `n->next` the old first).
        let b0 = pre
            .vocab()
            .lookup(&PredSym::plain(f.clone()))
            .and_then(|(ar, fi)| {
                if ar != 2 {
                    return None;
                }
                let mut out = (0..n).filter(|&w| pre.get2(fi, nx, w) != Kleene::False);
                match (out.next(), out.next()) {
                    (Some(w), None)
                        if pre.get2(fi, nx, w) == Kleene::True && !pre.is_summary(w) =>
                    {
                        Some(w)
                    }
                    _ => None,
                }
            });
        return Some(match fam {
            Family::Tc(_) => Box::new(move |t: &[usize]| {
                let (a, b) = (t[0], t[1]);
                (unreached(a, nx)
                    || unreached(nx, b)
                    || (b == nx && a != nx)
                    || (Some(a) == b0 && b != a))
                    .then(|| pre.get2(idx, a, b))
            }),
            Family::Cyclic(_) | Family::Acyclic(_) => Box::new(move |t: &[usize]| {
                (unreached(t[0], nx) || unreached(nx, t[0])).then(|| pre.get1(idx, t[0]))
            }),
            Family::Reach(..) => Box::new(move |t: &[usize]| {
                (pre.get1(idx, nx) == Kleene::False || t[0] == nx || unreached(nx, t[0]))
                    .then(|| pre.get1(idx, t[0]))
            }),
            Family::Seg(..) => return None,
        });
    }
    let Family::Reach(z, _) = fam else {
        return None;
    };
    let only_z = relevant.iter().all(|(p, _)| **p == pt_sym(z));
    if !only_z {
        return None;
    }
    if let Some((x, y)) = &ch.copy {
        if x == z {
            let voc = pre.vocab();
            let mut params = vec![y.clone()];
            params.extend(fields.iter().cloned());
            let ry = PredSym {
                name: "r".into(),
                params,
            };
            let has_family = voc.instr.iter().any(|i| {
                i.sym == ry && i.family == Some(Family::Reach(y.clone(), fields.to_vec()))
            });
            if let (true, Some((1, iy))) = (has_family, voc.lookup(&ry)) {
                return Some(Box::new(move |t: &[usize]| Some(pre.get1(iy, t[0]))));
            }
        }
    }
    // x = y->f: r[x, F] is r[y, F] minus y's node when F = {f} (y's node stays when on
    // a cycle); a subset of r[y, F] when f is one of several fields of F
    let mut from_load: Option<DiffFn<'a>> = None;
    if let Some((y, f, ny)) = &ch.load {
        let pre: &'a Structure = ch.load_pre.as_ref().unwrap_or(pre);
        let voc = pre.vocab();
        let ry = voc.instr.iter().find(|i| {
            i.family == Some(Family::Reach(y.clone(), fields.to_vec())) && fields.contains(f)
        });
        if let (Some(ry), true) = (ry, ch.pt_set.as_ref().is_some_and(|(x, _)| x == z)) {
            let iy = ry.idx;
            let ny = *ny;
            let exact = fields.len() == 1;
            let on_cycle = voc
                .instr
                .iter()
                .find_map(|i| match &i.family {
                    Some(Family::Acyclic(g)) if g == fields => Some(pre.get1(i.idx, ny).negate()),
                    Some(Family::Cyclic(g)) if g == fields => Some(pre.get1(i.idx, ny)),
                    _ => None,
                })
                .unwrap_or(Kleene::Half);
            from_load = Some(Box::new(move |t: &[usize]| {
                let v = t[0];
                let r = pre.get1(iy, v);
                if r == Kleene::False {
                    Some(Kleene::False)
                } else if v == ny {
                    (on_cycle == Kleene::False).then_some(Kleene::False)
                } else if exact {
                    Some(r)
                } else {
                    None
                }
            }));
        }
    }
    if let Some((x, nz)) = &ch.pt_set {
        if x == z {
            let nz = *nz;
            let r = get_rtc(cache);
            return Some(Box::new(move |t: &[usize]| {
                let a = r[nz * n + t[0]];
                match from_load.as_ref().and_then(|g| g(t)) {
                    Some(b) => Some(meet(a, b).unwrap_or(b)),
                    None => Some(a),
                }
            }));
        }
    }
    None
}

/// Some tracked pointer other than `x` points to `v` (`v` stays a cut point when `x`
/// leaves it).
fn pointed_by_other(s: &Structure, x: &str, v: usize) -> Kleene {
    s.vocab()
        .pt
        .iter()
        .filter(|(y, _)| y != x)
        .fold(Kleene::False, |k, (_, p)| k.or(s.get1(*p, v)))
}

/// An edge from `a` to `b` along one of `fields`.
fn edge(s: &Structure, fields: &[String], a: usize, b: usize) -> Kleene {
    fields
        .iter()
        .filter_map(|f| s.vocab().field(f))
        .fold(Kleene::False, |k, f| k.or(s.get2(f, a, b)))
}

/// The row of `rs[x, F]` in `s`'s vocabulary, if the class has it.
fn segment_row(s: &Structure, x: &str, fields: &[String]) -> Option<usize> {
    s.vocab()
        .instr
        .iter()
        .find(|i| i.family == Some(Family::Seg(x.to_string(), fields.to_vec())))
        .map(|i| i.idx)
}

/// Whether the segment `rs[z, F]` (row `idx`) ends at the cut point `nx`: one of its
/// cells has an edge to `nx` (`E a. rs[z](a) & F(a, nx)`), or, when that edge is only
/// 1/2 (from a summary), `nx` is definitely reachable from `z`'s cell and no cell that
/// may be in the segment has an edge to another cell that may be pointed to: the path
/// from `z` then leaves the segment first at `nx`, from the segment's last cell.
fn segment_ends_at(pre: &Structure, idx: usize, z: &str, fields: &[String], nx: usize) -> Kleene {
    let n = pre.len();
    let direct = (0..n).fold(Kleene::False, |k, a| {
        k.or(pre.get1(idx, a).and(edge(pre, fields, a, nx)))
    });
    if direct != Kleene::Half {
        return direct;
    }
    let voc = pre.vocab();
    let Some(zc) = voc.pt(z).and_then(|p| target(pre, p)) else {
        return direct;
    };
    let maybe_cut = |c: usize| voc.pt.iter().any(|(_, p)| pre.get1(*p, c) != Kleene::False);
    let other_exit = (0..n).any(|a| {
        pre.get1(idx, a) != Kleene::False
            && (0..n).any(|c| c != nx && maybe_cut(c) && edge(pre, fields, a, c) != Kleene::False)
    });
    if !other_exit && zc != nx && rtc(pre, fields)[zc * n + nx] == Kleene::True {
        Kleene::True
    } else {
        direct
    }
}

/// Finite differencing of the segment predicate `rs[z, F]` (cut-point reachability,
/// [`super::families::segment`]): every pointed cell is a cut point, so
/// - a store `x->f = y` inserts an edge into a cut point (`y`'s cell), which no
///   segment may enter: nothing changes; deleting `x`'s out-edge only shortens the
///   segments that start at `x`'s cell (to that cell, when `F = {f}`);
/// - `x := NULL` turns `x`'s old cell `nx` into an ordinary cell (unless another
///   pointer stays): a segment ending at `nx` (`E a. rs[z](a) & F(a, nx)`) continues
///   with `x`'s old segment;
/// - `x := nt` makes `nt` a cut point: `x`'s segment is `y`'s when `y` points to `nt`,
///   and for `x = y->f` it is `y`'s segment after `y`'s cell (plus that cell when the
///   load left it and the rest leads back to it); the segment that contained `nt`
///   loses `x`'s new segment when it is entered only through `nt` (every edge into
///   one of its cells but `nt` comes from a cell definitely in it);
/// - freeing a cell keeps the segments that do not contain it.
fn segment_differencing<'a>(
    pre: &'a Structure,
    ins: &'a super::structure::InstrInfo,
    ch: &'a Change,
    relevant: &[(&PredSym, Dir)],
    z: &'a str,
    fields: &'a [String],
) -> Option<DiffFn<'a>> {
    let idx = ins.idx;
    let n = pre.len();
    if let Domain::Removed(rm) = ch.domain {
        if !relevant.is_empty() || pre.get1(idx, rm) != Kleene::False {
            return None;
        }
        return Some(Box::new(move |t: &[usize]| {
            let v = if t[0] >= rm { t[0] + 1 } else { t[0] };
            Some(pre.get1(idx, v))
        }));
    }
    if ch.domain != Domain::Same {
        return None;
    }
    let only_fields = || {
        relevant
            .iter()
            .all(|(p, _)| p.params.is_empty() && fields.contains(&p.name))
    };
    if let Some((f, _, ny)) = &ch.insert {
        let into_cut = pre
            .vocab()
            .pt
            .iter()
            .any(|(_, p)| pre.get1(*p, *ny) == Kleene::True);
        if !fields.contains(f) || !only_fields() || !into_cut {
            return None;
        }
        return Some(Box::new(move |t: &[usize]| Some(pre.get1(idx, t[0]))));
    }
    if let Some((f, nx)) = &ch.delete {
        if !fields.contains(f) || !only_fields() {
            return None;
        }
        let nx = *nx;
        let at = pre.vocab().pt(z).map_or(Kleene::Half, |p| pre.get1(p, nx));
        let single = fields.len() == 1;
        return match at {
            Kleene::False => Some(Box::new(move |t: &[usize]| Some(pre.get1(idx, t[0])))),
            Kleene::True if single => Some(Box::new(move |t: &[usize]| {
                Some(Kleene::from_bool(t[0] == nx))
            })),
            _ => None,
        };
    }
    if let Some((x, nx)) = &ch.pt_cleared {
        if !relevant.iter().all(|(p, _)| **p == pt_sym(x)) {
            return None;
        }
        if x == z {
            return Some(Box::new(|_: &[usize]| Some(Kleene::False)));
        }
        let ix = segment_row(pre, x, fields)?;
        let nx = *nx;
        let freed = pointed_by_other(pre, x, nx).negate();
        let ends = segment_ends_at(pre, idx, z, fields, nx);
        let joins = freed.and(ends);
        return Some(Box::new(move |t: &[usize]| {
            Some(pre.get1(idx, t[0]).or(joins.and(pre.get1(ix, t[0]))))
        }));
    }
    let (x, nt) = ch.pt_set.as_ref()?;
    if !relevant.iter().all(|(p, _)| **p == pt_sym(x)) {
        return None;
    }
    let nt = *nt;
    let co = pointed_by_other(pre, x, nt);
    // x's new segment
    let new_x: Option<Vec<Kleene>> = match co {
        Kleene::True => pre
            .vocab()
            .pt
            .iter()
            .filter(|(y, p)| y != x && pre.get1(*p, nt) == Kleene::True)
            .find_map(|(y, _)| segment_row(pre, y, fields))
            .map(|iy| (0..n).map(|v| pre.get1(iy, v)).collect()),
        Kleene::False => ch.load.as_ref().and_then(|(y, f, ny)| {
            let ny = *ny;
            if fields != [f.clone()] {
                return None;
            }
            let src: &Structure = if y == x { ch.load_pre.as_ref()? } else { pre };
            if src.len() != n || edge(src, fields, ny, nt) != Kleene::True {
                return None;
            }
            let iy = segment_row(src, y, fields)?;
            let left = pointed_by_other(pre, x, ny).negate();
            let back = (0..n).filter(|&a| a != ny).fold(Kleene::False, |k, a| {
                k.or(src.get1(iy, a).and(edge(src, fields, a, ny)))
            });
            Some(
                (0..n)
                    .map(|v| {
                        if v == nt {
                            Kleene::True
                        } else if v == ny {
                            left.and(back)
                        } else {
                            src.get1(iy, v)
                        }
                    })
                    .collect(),
            )
        }),
        Kleene::Half => None,
    };
    if x == z {
        let new_x = new_x?;
        return Some(Box::new(move |t: &[usize]| Some(new_x[t[0]])));
    }
    if pre.get1(idx, nt) == Kleene::False || co == Kleene::True {
        return Some(Box::new(move |t: &[usize]| Some(pre.get1(idx, t[0]))));
    }
    let new_x = new_x?;
    let closed = (0..n)
        .filter(|&v| v != nt && new_x[v] != Kleene::False)
        .all(|v| {
            (0..n).all(|a| edge(pre, fields, a, v) == Kleene::False || new_x[a] == Kleene::True)
        });
    Some(Box::new(move |t: &[usize]| {
        let v = t[0];
        let old = pre.get1(idx, v);
        Some(if v == nt {
            Kleene::False
        } else if new_x[v] == Kleene::False {
            old
        } else if closed && new_x[v] == Kleene::True {
            Kleene::False
        } else {
            old.and(Kleene::Half)
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::super::families as fam;
    use super::super::structure::Fact;
    use super::*;

    fn op_load(x: &str, y: &str) -> PtrOp {
        PtrOp::Load {
            x: x.into(),
            y: y.into(),
            field: "next".into(),
        }
    }

    #[test]
    fn relinking_the_head_of_a_cycle_keeps_every_cell_reachable() {
        // h → a → (b c d) → h, with n → a; `h->next = n` (list_add at the head):
        // the summary b..d stays reachable from h, since a path from a, the old
        // successor of h, to another cell never needs the removed edge h → a.
        let c = fam::simple_class(
            &["h", "n", "t"],
            &["next"],
            vec![fam::reach("h", &["next"]), fam::tc(&["next"])],
        );
        let next = PredSym::plain("next");
        let (h, n, a) = (0, 5, 1);
        let mut facts = vec![
            Fact::Unary(PredSym::with("pt", &["h"]), h),
            Fact::Unary(PredSym::with("pt", &["n"]), n),
            Fact::Unary(PredSym::with("pt", &["t"]), a),
            Fact::Binary(next.clone(), n, a),
        ];
        for (u, v) in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)] {
            facts.push(Fact::Binary(next.clone(), u, v));
        }
        let s = Structure::from_concrete(&c, 6, &facts)
            .unwrap_or_else(|e| panic!("{e}"))
            .blur();
        assert_eq!(s.len(), 4, "b, c, d are one summary node: {s}");
        let op = PtrOp::Store {
            x: "h".into(),
            field: "next".into(),
            y: "n".into(),
        };
        let r = post(&s, &c, &op);
        assert!(!r.structures.is_empty());
        let rh = PredSym::with("r", &["h", "next"]);
        for t in &r.structures {
            assert!(
                true_everywhere(t, &rh),
                "every cell is reachable from h: {t}"
            );
        }
    }

    #[test]
    fn freeing_a_cell_no_path_from_h_reaches_keeps_reachability_from_h() {
        // x → h → (summary tail), where h's `next` is only known 1/2 but the tail is
        // definitely reachable from h; free(x) cannot cut a path from h, so r[h] stays
        // 1 (re-evaluating the definition would give 1/2).
        let c = fam::simple_class(
            &["h", "x"],
            &["next"],
            vec![fam::reach("h", &["next"]), fam::tc(&["next"])],
        );
        let next = PredSym::plain("next");
        let facts = vec![
            Fact::Unary(PredSym::with("pt", &["h"]), 0),
            Fact::Unary(PredSym::with("pt", &["x"]), 3),
            Fact::Binary(next.clone(), 0, 1),
            Fact::Binary(next.clone(), 1, 2),
            Fact::Binary(next.clone(), 3, 0),
        ];
        let mut s = Structure::from_concrete(&c, 4, &facts)
            .unwrap_or_else(|e| panic!("{e}"))
            .blur();
        let rh = PredSym::with("r", &["h", "next"]);
        let (Some((2, fi)), Some(ph)) = (s.vocab().lookup(&next), s.vocab().pt("h")) else {
            panic!("vocabulary")
        };
        let h = (0..s.len())
            .find(|&u| s.get1(ph, u) == Kleene::True)
            .unwrap();
        let tail = (0..s.len()).find(|&u| s.is_summary(u)).unwrap();
        s.set2(fi, h, tail, Kleene::Half);
        let tc = s.vocab().lookup(&PredSym::with("tc", &["next"])).unwrap().1;
        s.set2(tc, h, tail, Kleene::Half);
        assert_eq!(s.value(&rh, &[tail]), Kleene::True);
        let r = post(&s, &c, &PtrOp::Free { x: "x".into() });
        assert!(!r.structures.is_empty());
        for t in &r.structures {
            assert!(true_everywhere(t, &rh), "{t}");
        }
    }

    #[test]
    fn null_dereference_is_reported_not_panicked() {
        let c = fam::simple_class(&["x", "y"], &["next"], vec![fam::reach("x", &["next"])]);
        let empty = Structure::empty(&c);
        let r = post(&empty, &c, &op_load("y", "x"));
        assert_eq!(
            r.errors,
            vec![AbstractError::MayDerefNull { var: "x".into() }]
        );
        assert!(r.structures.is_empty());
        // free(NULL) is a no-op; untracked pointers are ignored
        let r = post(&empty, &c, &PtrOp::Free { x: "x".into() });
        assert_eq!(r.structures, vec![empty.clone()]);
        let r = post(&empty, &c, &op_load("zz", "qq"));
        assert!(r.errors.is_empty());
    }

    #[test]
    fn load_materialises_the_successor() {
        let c = fam::simple_class(&["x", "y"], &["next"], vec![fam::reach("x", &["next"])]);
        let mut f = vec![Fact::Unary(PredSym::with("pt", &["x"]), 0)];
        for i in 0..4 {
            f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
        }
        let s = Structure::from_concrete(&c, 5, &f)
            .unwrap_or_else(|e| panic!("{e}"))
            .blur();
        let r = post(&s, &c, &op_load("y", "x"));
        assert!(r.errors.is_empty());
        // y = x->next: y definitely points to a single cell in every successor
        let py = c
            .core
            .iter()
            .position(|p| p.sym == PredSym::with("pt", &["y"]));
        assert!(py.is_some());
        for t in &r.structures {
            let i = t.vocab().pt("y").unwrap_or(0);
            assert_eq!(target(t, i).map(|n| t.is_summary(n)), Some(false), "{t}");
        }
        assert_eq!(r.structures.len(), 2); // next(y) is NULL or a summary tail
    }

    /// A concrete list `0 -> 1 -> ... -> n-1` along `next` (plus `prev` back links
    /// when `dll`), pointer facts `ptrs`, blurred.
    /// The unary predicate `p` is definite (0 or 1) at every node of `t`.
    fn definite_everywhere(t: &Structure, p: &PredSym) -> bool {
        values(t, p).iter().all(|k| *k != Kleene::Half)
    }

    #[test]
    fn walking_a_cycle_from_its_head_keeps_both_segments_definite() {
        // h → 1 → ... → 5 → h, p = h; `p = p->next` until p is back at h. Unary
        // reachability is 1 everywhere on a cycle; the segments rs[h] (cells from h up
        // to p) and rs[p] (from p back to h) tell the walked cells from the others.
        // (Without `is[next]` the summary may link back into the walked cells.)
        let ptrs = ["h", "p", "t"];
        let c = fam::simple_class(
            &ptrs,
            &["next"],
            vec![
                fam::tc(&["next"]),
                fam::shared(&["next"]),
                fam::segment("h", &["next"], &ptrs),
                fam::segment("p", &["next"], &ptrs),
                fam::segment("t", &["next"], &ptrs),
            ],
        );
        let next = PredSym::plain("next");
        let mut facts = vec![
            Fact::Unary(PredSym::with("pt", &["h"]), 0),
            Fact::Unary(PredSym::with("pt", &["p"]), 0),
        ];
        for u in 0..6 {
            facts.push(Fact::Binary(next.clone(), u, (u + 1) % 6));
        }
        let s = Structure::from_concrete(&c, 6, &facts)
            .unwrap_or_else(|e| panic!("{e}"))
            .blur();
        let (rh, rp) = (
            PredSym::with("rs", &["h", "next"]),
            PredSym::with("rs", &["p", "next"]),
        );
        let op = op_load("p", "p");
        let mut frontier = vec![s];
        let mut seen = BTreeSet::new();
        while let Some(t) = frontier.pop() {
            if !seen.insert(t.clone()) {
                continue;
            }
            assert!(seen.len() < 50, "the walk converges");
            for u in post(&t, &c, &op).structures {
                assert!(
                    definite_everywhere(&u, &rh) && definite_everywhere(&u, &rp),
                    "segments stay definite: {t}\n ---> {u}"
                );
                frontier.push(u);
            }
        }
        // the walk reaches a state with a non-empty walked segment and one where p is
        // back at h (rs[h] = {h} = rs[p])
        assert!(seen.len() >= 3, "{}", seen.len());
    }

    fn list(c: &ShapeClass, n: usize, dll: bool, ptrs: &[(&str, usize)]) -> Structure {
        let mut f: Vec<Fact> = ptrs
            .iter()
            .map(|(x, u)| Fact::Unary(PredSym::with("pt", &[x]), *u))
            .collect();
        for i in 0..n - 1 {
            f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
            if dll {
                f.push(Fact::Binary(PredSym::plain("prev"), i + 1, i));
            }
        }
        Structure::from_concrete(c, n, &f)
            .unwrap_or_else(|e| panic!("{e}"))
            .blur()
    }

    fn values(t: &Structure, p: &PredSym) -> Vec<Kleene> {
        (0..t.len()).map(|u| t.value(p, &[u])).collect()
    }

    /// The unary predicate `p` is 1 at every node of `t`.
    fn true_everywhere(t: &Structure, p: &PredSym) -> bool {
        values(t, p).iter().all(|k| *k == Kleene::True)
    }

    #[test]
    fn self_load_keeps_reachability_of_the_tail() {
        // x = x->next on h, x -> [summary]: every cell after x's new target is still
        // reachable from x (r[x] is not re-derived from the 1/2 summary edges)
        let c = fam::simple_class(
            &["h", "x"],
            &["next"],
            vec![fam::reach("h", &["next"]), fam::reach("x", &["next"])],
        );
        let s = list(&c, 6, false, &[("h", 0), ("x", 0)]);
        let r = post(&s, &c, &op_load("x", "x"));
        assert!(!r.structures.is_empty());
        let rx = PredSym::with("r", &["x", "next"]);
        for t in &r.structures {
            assert!(
                values(t, &rx).iter().all(|k| *k != Kleene::Half),
                "r[x] lost: {t}"
            );
        }
    }

    #[test]
    fn edge_removal_keeps_reachability_of_its_source() {
        // h -> [1 2] -> p -> [4 5]; p->next = NULL: p and the cells before it stay
        // reachable from h (a shortest path to p never leaves p)
        let c = fam::simple_class(
            &["h", "p"],
            &["next"],
            vec![
                fam::reach("h", &["next"]),
                fam::reach("p", &["next"]),
                fam::tc(&["next"]),
                fam::cyclic(&["next"]),
            ],
        );
        let s = list(&c, 6, false, &[("h", 0), ("p", 3)]);
        let op = PtrOp::StoreNull {
            x: "p".into(),
            field: "next".into(),
        };
        let r = post(&s, &c, &op);
        assert_eq!(r.structures.len(), 1);
        let t = &r.structures[0];
        let rh = PredSym::with("r", &["h", "next"]);
        let tc = PredSym::with("tc", &["next"]);
        let (Some(p), Some(h)) = (t.vocab().pt("p"), t.vocab().pt("h")) else {
            panic!("no pt[p]/pt[h]")
        };
        let (np, nh) = (target(t, p), target(t, h));
        let (Some(np), Some(nh)) = (np, nh) else {
            panic!("p, h not definite: {t}")
        };
        // the old tail [4 5] is cut off, every other cell stays reachable from h
        let vals = values(t, &rh);
        assert!(vals.iter().all(|k| *k != Kleene::Half), "r[h] lost: {t}");
        let cut: Vec<usize> = (0..t.len()).filter(|u| vals[*u] == Kleene::False).collect();
        assert_eq!(cut.len(), 1, "{t}");
        assert!(t.is_summary(cut[0]) && cut[0] != np, "{t}");
        assert_eq!(t.value(&tc, &[nh, np]), Kleene::True, "tc(h, p) lost: {t}");
    }

    #[test]
    fn removing_a_back_link_keeps_unrelated_cancellation() {
        // h <-> [1 2], n = 3 with n.prev = 2 but 2.next = NULL (n was unlinked);
        // n->prev = NULL changes no cancellation of the cells 1, 2
        let c = fam::simple_class(
            &["h", "n"],
            &["next", "prev"],
            vec![fam::cancel("next", "prev"), fam::cancel("prev", "next")],
        );
        let mut f = vec![
            Fact::Unary(PredSym::with("pt", &["h"]), 0),
            Fact::Unary(PredSym::with("pt", &["n"]), 3),
            Fact::Binary(PredSym::plain("prev"), 3, 2),
        ];
        for i in 0..2 {
            f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
            f.push(Fact::Binary(PredSym::plain("prev"), i + 1, i));
        }
        let s = Structure::from_concrete(&c, 4, &f)
            .unwrap_or_else(|e| panic!("{e}"))
            .blur();
        assert_eq!(s.len(), 3, "{s}");
        let op = PtrOp::StoreNull {
            x: "n".into(),
            field: "prev".into(),
        };
        let r = post(&s, &c, &op);
        assert_eq!(r.structures.len(), 1);
        let t = &r.structures[0];
        for p in [
            PredSym::with("cancel", &["next", "prev"]),
            PredSym::with("cancel", &["prev", "next"]),
        ] {
            assert!(true_everywhere(t, &p), "{p} lost: {t}");
        }
    }

    #[test]
    fn free_of_a_predecessor_keeps_the_successor_non_null() {
        // x -> a -> [b c d]; free(x) after t = x->next: `E w. next(t, w)` stays 1 at a
        // (x was no witness for it; re-evaluation gives 1/2, a's successor being a
        // cell of the summary)
        let c = fam::simple_class(&["x", "t"], &["next"], vec![fam::nonnull("next")]);
        let s = list(&c, 5, false, &[("x", 0), ("t", 1)]);
        let nn = PredSym::with("nn", &["next"]);
        let r = post(&s, &c, &PtrOp::Free { x: "x".into() });
        assert_eq!(r.structures.len(), 1);
        let t = &r.structures[0];
        let pt = t.vocab().pt("t").unwrap();
        let a = target(t, pt).unwrap();
        assert_eq!(t.value(&nn, &[a]), Kleene::True, "{t}");
    }

    #[test]
    fn free_keeps_cancellation_next_to_a_summary() {
        // x -> a -> [b c d] (a DLL); free(x) after t = x->next: t's cancellation stays 1
        let c = fam::simple_class(
            &["x", "t"],
            &["next", "prev"],
            vec![fam::cancel("next", "prev"), fam::cancel("prev", "next")],
        );
        let mut f = vec![
            Fact::Unary(PredSym::with("pt", &["x"]), 0),
            Fact::Unary(PredSym::with("pt", &["t"]), 1),
        ];
        for i in 0..4 {
            f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
            f.push(Fact::Binary(PredSym::plain("prev"), i + 1, i));
        }
        let s = Structure::from_concrete(&c, 5, &f)
            .unwrap_or_else(|e| panic!("{e}"))
            .blur();
        let r = post(&s, &c, &PtrOp::Free { x: "x".into() });
        assert_eq!(r.structures.len(), 1);
        let t = &r.structures[0];
        for p in [
            PredSym::with("cancel", &["next", "prev"]),
            PredSym::with("cancel", &["prev", "next"]),
        ] {
            for u in 0..t.len() {
                assert_eq!(t.value(&p, &[u]), Kleene::True, "{p} at u{u}: {t}");
            }
        }
    }
}
