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

mod assign;
mod differencing;
mod store;
#[cfg(test)]
mod tests;
mod update;

use assign::{nullify_pt, set_pt, set_pt_load};
use store::{havoc_field, insert_field, nullify_field, set_unary};
use update::update;

use super::class::ShapeClass;
use super::coerce::{coerce, focus_all, FocusLit};
use super::formula::{Kleene, PredSym};
use super::structure::{Structure, Vocab};
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
