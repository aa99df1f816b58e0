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

mod alloc;
mod assign;
mod assume;
mod differencing;
mod frame;
mod store;
#[cfg(test)]
mod tests;
mod update;

pub use frame::frame_counts;
use store::set_unary;

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
    // a sanity check of the callers (a deep comparison of the classes: debug builds)
    if cfg!(debug_assertions) && s.vocab().class != *class {
        tracing::warn!("post: structure built over a different shape class");
    }
    // The vocabulary's address is part of the key: `Structure`'s equality compares
    // predicate lists only, and the entry's structure keeps the vocabulary alive, so
    // the address is not reused while the entry exists.
    let key = (Arc::as_ptr(s.vocab()) as usize, s.clone(), op.clone());
    if let Some(r) = POST_MEMO.with(|m| m.borrow_mut().get(&key)) {
        return r;
    }
    // provenance only for counting classes (tvla::counts); their vocabularies, and so
    // their memo entries, are their own
    let r = if s.vocab().class.counters.is_empty() {
        match frame::framed_post(s, class, op) {
            Some(r) if frame::check_requested().is_some() => {
                let full = post_impl(s, op, true);
                if let (false, Some(file)) =
                    (frame::same_result(&r, &full), frame::check_requested())
                {
                    frame::report_difference(file, s, op, &r, &full);
                }
                full
            }
            Some(r) => r,
            None => post_impl(s, op, true),
        }
    } else {
        post_impl(&s.with_identity_origins(), op, true)
    };
    POST_MEMO.with(|m| m.borrow_mut().insert(key, r.clone()));
    r
}

/// Entries of each generation of the [`post`] memo (bounds its memory: at most twice
/// as many entries are kept).
pub const POST_MEMO_CAP: usize = 1 << 17;

/// The key of a [`post`] memo entry: the vocabulary's address, the structure, the
/// operation.
type PostKey = (usize, Structure, PtrOp);

/// A memo of two generations: entries go into the young one; when it is full it
/// becomes the old one (the old one is dropped), and an entry found in the old one
/// moves back into the young one. So what was used since the last turn survives it,
/// where emptying one full table dropped everything at once (the certificate check,
/// which asks again for the posts of the whole ART: real/ut_dl_reverse 13.7 s of
/// checking with one table, 4.5 s with one four times as large).
struct TwoGenerations<K, V> {
    /// Entries of a generation.
    cap: usize,
    young: FxHashMap<K, V>,
    old: FxHashMap<K, V>,
}

impl<K: std::hash::Hash + Eq, V: Clone> TwoGenerations<K, V> {
    /// An empty memo of generations of `cap` entries.
    fn new(cap: usize) -> Self {
        TwoGenerations {
            cap,
            young: FxHashMap::default(),
            old: FxHashMap::default(),
        }
    }

    /// The memoised result of `key`, if any (moved to the young generation).
    fn get(&mut self, key: &K) -> Option<V> {
        if let Some(r) = self.young.get(key) {
            return Some(r.clone());
        }
        let (k, r) = self.old.remove_entry(key)?;
        self.insert(k, r.clone());
        Some(r)
    }

    /// Memoises `r` for `key`, turning the generations when the young one is full.
    /// The dropped generation's table is emptied and reused as the young one: a fresh
    /// table grown to a full generation again by rehashing had the kernel zero its new
    /// pages on every turn (13 % of real/fp_sorted_insert under `--shape-joined`).
    fn insert(&mut self, key: K, r: V) {
        if self.young.len() >= self.cap {
            std::mem::swap(&mut self.young, &mut self.old);
            self.young.clear();
        }
        self.young.insert(key, r);
    }
}

thread_local! {
    /// Abstract posts already computed: [`post`] is a function of the structure (with
    /// its vocabulary) and the operation, and the same structure reaches the same
    /// edge in many ART nodes.
    static POST_MEMO: RefCell<TwoGenerations<PostKey, PostResult>> =
        RefCell::new(TwoGenerations::new(POST_MEMO_CAP));
}

#[cfg(test)]
mod memo_tests {
    use super::TwoGenerations;

    #[test]
    fn an_entry_used_since_the_last_turn_survives_the_next_one() {
        let mut m: TwoGenerations<u32, u32> = TwoGenerations::new(4);
        for k in 0..4 {
            m.insert(k, 10 * k);
        }
        // the fifth entry turns the generations: 0..4 are old, still found
        m.insert(4, 40);
        assert_eq!(m.get(&1), Some(10));
        for k in 5..8 {
            m.insert(k, 10 * k);
        }
        // the next turn drops the old generation but 1, used since the first turn
        m.insert(8, 80);
        assert_eq!((m.get(&0), m.get(&2), m.get(&1)), (None, None, Some(10)));
        assert!(m.young.len() <= 4 && m.old.len() <= 4);
    }
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

/// One operation on a set of structures: dispatches to the transfer of its kind
/// (`assign`, `store`, `alloc`, `assume`).
fn run_op(
    voc: &Arc<Vocab>,
    ss: Vec<Structure>,
    op: &PtrOp,
    errors: &mut BTreeSet<AbstractError>,
) -> Vec<Structure> {
    match op {
        PtrOp::AssignNull { x } => assign::assign_null(voc, ss, x),
        PtrOp::Copy { x, y } => assign::copy(voc, ss, x, y),
        PtrOp::Load { x, y, field } => assign::load(voc, ss, x, y, field, errors),
        PtrOp::StoreNull { x, field } => store::store_null(voc, ss, x, field, errors),
        PtrOp::Store { x, field, y } => store::store(voc, ss, x, field, y, errors),
        PtrOp::Malloc { x } => alloc::malloc(voc, ss, x),
        PtrOp::Free { x } => alloc::free(voc, ss, x),
        PtrOp::AssumeEq { x, y } => assume::assume_eq(voc, ss, x, y, true),
        PtrOp::AssumeNe { x, y } => assume::assume_eq(voc, ss, x, y, false),
        PtrOp::AssumeNull { x } => assume::assume_null(voc, ss, x, true),
        PtrOp::AssumeNotNull { x } => assume::assume_null(voc, ss, x, false),
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
        } => assume::assume_field(voc, ss, x, assertion, *positive, errors),
    }
}
