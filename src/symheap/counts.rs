//! Counters and segment lengths in symbolic heaps: `count + |rest of the list| = total`
//! (issue #34, "counters equal to lengths").
//!
//! A state may carry [`Counts`]: affine equalities (Karr's domain, [`crate::affine`])
//! over the *counted* integer variables (the precision's
//! [`SymPrec::count`](super::fold::SymPrec::count), columns `0..ints.len()`) and the
//! numbers of objects of its segments (each `Ls`/`Dls` names its column in `len`; a
//! canonical state numbers them after the variables in atom order). Meaning: a
//! concrete state is represented only if the counted variables' values and the
//! segments' lengths satisfy the equalities. A counted variable's value lives only
//! here, never in [`SymHeap::vars`].
//!
//! Facts that hold of every state are not stored but added whenever Z3 is asked
//! ([`crate::shape::numeric::satisfiable_bounded`]): a singly-linked segment has at
//! least one object and a doubly-linked one two, the objects fit a 32-bit address
//! space (ILP32, as the three-valued domain's counting assumes), a counter is a
//! signed 32-bit value. An assignment whose value may leave that range forgets the
//! counter, and a comparison whose computed side may leave it decides nothing, so the
//! wrapping semantics of the interpreter is over-approximated.
//!
//! Every operation keeps the meaning: unfolding a segment of length n gives an object
//! and a segment of length n - 1 (or n = 1), folding pieces gives a segment whose
//! length is their sum, dropping a segment projects its column out, coverage maps
//! each covering segment's length to the sum of the pieces that match it, a merge of
//! two states that differ only in their counts is the affine hull.

use super::{Atom, SymHeap, Val};
use crate::affine::Affine;
use crate::cfa::{BinOp, Expr, Program, VarId};
use crate::shape::numeric::{self, Constraint};
use serde::{Deserialize, Serialize};

/// The counted variables and the affine equalities over them and the segments'
/// lengths, and bounds on the variables (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Counts {
    /// The counted integer variables, ascending: columns `0..ints.len()`.
    pub ints: Vec<VarId>,
    /// Equalities over the columns: the counted variables, then the segments' lengths.
    pub eqs: Affine,
    /// Intervals of counted variables, `(column, least, greatest)`, ascending by
    /// column: only those narrower than the signed 32-bit range and not fixed by the
    /// equalities. A loop bounded by a constant keeps its bound here when its states
    /// are merged (the affine hull of `i = 0` and `i = 1` says nothing of `i`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bounds: Vec<(usize, i64, i64)>,
}

impl Counts {
    /// No equality over the variables `ints` (ascending), no segment.
    pub fn new(ints: Vec<VarId>) -> Counts {
        let eqs = Affine::top(ints.len());
        Counts {
            ints,
            eqs,
            bounds: Vec::new(),
        }
    }

    /// The stored bound of variable column `col` (the full range without one).
    fn bound(&self, col: usize) -> (i128, i128) {
        self.bounds
            .iter()
            .find(|b| b.0 == col)
            .map_or((MIN, MAX), |b| (i128::from(b.1), i128::from(b.2)))
    }

    /// The values variable column `col` may have: its bound, or the one value the
    /// equalities fix (intersected).
    fn interval(&self, col: usize) -> (i128, i128) {
        let (lo, hi) = self.bound(col);
        match self.eqs.value_of(col) {
            Some((num, den)) if den != 0 && num % den == 0 => {
                let v = num / den;
                (lo.max(v), hi.min(v))
            }
            _ => (lo, hi),
        }
    }

    /// Sets variable column `col`'s bound to `[lo, hi]` (clamped to the range; a full
    /// range or a column the equalities fix keeps none).
    fn set_bound(&mut self, col: usize, lo: i128, hi: i128) {
        self.bounds.retain(|b| b.0 != col);
        let (lo, hi) = (lo.max(MIN), hi.min(MAX));
        let fixed = matches!(self.eqs.value_of(col), Some((_, d)) if d != 0);
        if (lo, hi) == (MIN, MAX) || fixed || col >= self.ints.len() {
            return;
        }
        let at = self.bounds.partition_point(|b| b.0 < col);
        self.bounds.insert(at, (col, lo as i64, hi as i64));
    }

    /// Drops the bounds of the columns the equalities now fix.
    fn normalize_bounds(&mut self) {
        let eqs = &self.eqs;
        self.bounds
            .retain(|b| !matches!(eqs.value_of(b.0), Some((_, d)) if d != 0));
    }

    /// The values the linear form `f` may take by the variables' intervals, when it
    /// reads no segment length.
    fn range_of(&self, f: &Linear) -> Option<(i128, i128)> {
        let n = self.ints.len();
        let (mut lo, mut hi) = (f.1, f.1);
        for (col, &a) in f.0.iter().enumerate() {
            if a == 0 {
                continue;
            }
            if col >= n {
                return None;
            }
            let (l, h) = self.interval(col);
            let (x, y) = (a.checked_mul(l)?, a.checked_mul(h)?);
            lo = lo.checked_add(x.min(y))?;
            hi = hi.checked_add(x.max(y))?;
        }
        Some((lo, hi))
    }
}

/// The number of counted variables, per segment column its (least length, object
/// size), and the bytes the segments' objects share.
type LengthBounds = (usize, Vec<(i128, i128)>, i128);

/// A linear form over a state's columns: coefficients and a constant.
pub type Linear = (Vec<i128>, i128);

/// The range of a counter (a signed 32-bit variable).
const MIN: i128 = i32::MIN as i128;
const MAX: i128 = i32::MAX as i128;

/// The objects of a state's atoms fit this many bytes.
const ADDRESS_SPACE: i128 = 1 << 32;

impl Atom {
    /// A segment's length column (`None` for an object or a block).
    pub fn len_col(&self) -> Option<usize> {
        match self {
            Atom::Ls { len, .. } | Atom::Dls { len, .. } => Some(*len as usize),
            Atom::Pt { .. } | Atom::Block { .. } => None,
        }
    }
    fn set_len_col(&mut self, c: usize) {
        if let Atom::Ls { len, .. } | Atom::Dls { len, .. } = self {
            *len = c as u32;
        }
    }
    /// The fewest objects the atom stands for.
    pub fn min_objects(&self) -> i128 {
        match self {
            Atom::Dls { .. } => 2,
            _ => 1,
        }
    }
}

impl SymHeap {
    /// The column of counted variable `x`.
    pub fn int_col(&self, x: VarId) -> Option<usize> {
        let c = self.counts.as_ref()?;
        c.ints.binary_search(&x).ok()
    }

    /// A column for a new segment's length (unconstrained; 0 without counts).
    pub(super) fn new_col(&mut self) -> u32 {
        match &mut self.counts {
            Some(c) => {
                c.eqs = c.eqs.extend(1);
                (c.eqs.dims() - 1) as u32
            }
            None => 0,
        }
    }

    /// Adds `Σ c·x_col = k` over the sparse `terms` (nothing without counts).
    pub(super) fn add_count_eq(&mut self, terms: &[(usize, i128)], k: i128) {
        if let Some(c) = &mut self.counts {
            let mut row = vec![0; c.eqs.dims()];
            for &(col, a) in terms {
                if col >= row.len() {
                    return; // a column the state does not have: no fact
                }
                row[col] += a;
            }
            c.eqs.add_eq(&row, k);
        }
    }

    /// A column for the length of a segment made of `pieces` (their lengths summed;
    /// an object counts one), for folding.
    pub(super) fn fold_len<'a>(&mut self, pieces: impl Iterator<Item = &'a Atom>) -> u32 {
        if self.counts.is_none() {
            return 0;
        }
        let c = self.new_col();
        let mut terms = vec![(c as usize, 1)];
        let mut objects = 0;
        for a in pieces {
            match a.len_col() {
                Some(col) => terms.push((col, -1)),
                None => objects += 1,
            }
        }
        self.add_count_eq(&terms, objects);
        c
    }

    /// Counted variable `x := v` (an integer, else unknown).
    pub(super) fn set_counted(&mut self, col: usize, v: Val) {
        if let Some(c) = &mut self.counts {
            c.eqs = match v {
                Val::Int(k) => c.eqs.assign(col, &vec![0; c.eqs.dims()], k as i128),
                _ => c.eqs.havoc(col),
            };
            c.set_bound(col, MIN, MAX);
        }
    }

    /// The value the equalities fix for counted variable column `col`, if integral.
    pub(crate) fn counted_value(&self, col: usize) -> Option<i64> {
        let c = self.counts.as_ref()?;
        let (num, den) = c.eqs.value_of(col)?;
        (den != 0 && num % den == 0)
            .then(|| i64::try_from(num / den).ok())
            .flatten()
    }

    /// Gives the segments the columns after the counted variables in atom order and
    /// projects out every other column (a dropped segment's length, a column two
    /// segments claim: the second one's length becomes unconstrained). Without counts
    /// every `len` is 0.
    pub(super) fn renumber_columns(&mut self) {
        let Some(c) = &mut self.counts else {
            for a in &mut self.atoms {
                a.set_len_col(0);
            }
            return;
        };
        let n = c.ints.len();
        let dims = c.eqs.dims();
        let mut map: Vec<Option<usize>> = (0..dims).map(|i| (i < n).then_some(i)).collect();
        let mut next = n;
        for a in &mut self.atoms {
            let Some(old) = a.len_col() else { continue };
            if old >= n && old < dims && map[old].is_none() {
                map[old] = Some(next);
            }
            // else: a fresh, unconstrained column
            a.set_len_col(next);
            next += 1;
        }
        let identity = next == dims && map.iter().enumerate().all(|(i, m)| *m == Some(i));
        if !identity {
            c.eqs = c.eqs.remap(&map, next);
        }
    }

    /// Per column of the segments (in column order): its least length and the size of
    /// its objects; and the bytes left for them beside the objects.
    fn length_bounds(&self, prog: &Program) -> Option<LengthBounds> {
        let c = self.counts.as_ref()?;
        let n = c.ints.len();
        let mut bounds = vec![(0, 0); c.eqs.dims().saturating_sub(n)];
        let size = |a: &Atom| {
            a.strukt()
                .and_then(|s| prog.structs.get(s))
                .map_or(1, |d| d.size.max(1) as i128)
        };
        let mut budget = ADDRESS_SPACE;
        for a in &self.atoms {
            match a.len_col() {
                Some(col) if col >= n && col - n < bounds.len() => {
                    bounds[col - n] = (a.min_objects(), size(a));
                }
                _ => budget -= size(a),
            }
        }
        Some((n, bounds, budget))
    }

    /// Whether the counts allow some alternative of `any_of` (empty: whether they are
    /// satisfiable at all), with the facts of every state (module documentation).
    /// Without counts: true.
    pub fn counts_allow(&self, prog: &Program, any_of: &[Vec<Constraint>]) -> bool {
        let (Some(c), Some((n, bounds, budget))) = (&self.counts, self.length_bounds(prog)) else {
            return true;
        };
        // (the variables' bounds are left out: they are for overflow, which
        // `may_overflow` decides by them first, and for a comparison of one variable
        // with a constant, which `narrow` decides)
        numeric::satisfiable_bounded(&c.eqs, n, &bounds, budget, any_of)
    }

    /// A cheap necessary condition for the counts to be satisfiable (no Z3): not ⊥,
    /// and every value the equalities fix within its column's bounds.
    pub fn counts_plausible(&self, prog: &Program) -> bool {
        let (Some(c), Some((n, bounds, _))) = (&self.counts, self.length_bounds(prog)) else {
            return true;
        };
        if c.eqs.is_bottom() {
            return false;
        }
        if (0..n).any(|i| {
            let (lo, hi) = c.interval(i);
            lo > hi
        }) {
            return false;
        }
        (0..c.eqs.dims()).all(|i| match c.eqs.value_of(i) {
            None => true,
            Some((_, 0)) => true,
            // a value that is no integer: no integer point
            Some((num, den)) if num % den != 0 => false,
            Some((num, den)) => {
                let v = num / den;
                if i < n {
                    (MIN..=MAX).contains(&v)
                } else {
                    bounds.get(i - n).is_none_or(|b| v >= b.0)
                }
            }
        })
    }

    /// Whether `f` may leave a counter's range in some state of the counts.
    fn may_overflow(&self, prog: &Program, f: &Linear) -> bool {
        let within = |(lo, hi): (i128, i128)| MIN <= lo && hi <= MAX;
        if self
            .counts
            .as_ref()
            .and_then(|c| c.range_of(f))
            .is_some_and(within)
        {
            return false;
        }
        self.counts_allow(prog, &numeric::out_of_range(f))
    }
}

/// `e` as a linear form over `h`'s columns: integer constants, counted variables,
/// signed 32-bit variables whose value `h` knows, `+`, `-`, negation and
/// multiplication by a constant. `None` otherwise (also without counts).
pub fn linear(prog: &Program, h: &SymHeap, e: &Expr) -> Option<Linear> {
    let dims = h.counts.as_ref()?.eqs.dims();
    numeric::linear_by(e, dims, &|x| {
        if !numeric::counter_type(prog, x) {
            return None;
        }
        if let Some(col) = h.int_col(x) {
            let mut c = vec![0; dims];
            c[col] = 1;
            return Some((c, 0));
        }
        match h.get(x) {
            Val::Int(k) => Some((vec![0; dims], k as i128)),
            _ => None,
        }
    })
}

/// A variable or a constant: its value is in range whatever the counts say.
fn plain(e: &Expr) -> bool {
    matches!(e, Expr::Var(_) | Expr::Int(_))
}

/// `dst := src` for a counted variable `dst` when `src` is a linear form whose value
/// stays in range; `None` when the counts cannot express it (the caller assigns the
/// value [`super::post::eval_int`] gives, or forgets it).
pub fn assign(prog: &Program, h: &SymHeap, dst: usize, src: &Expr) -> Option<SymHeap> {
    let f = linear(prog, h, src)?;
    if f.0.iter().all(|c| *c == 0) {
        return None; // a constant: the plain assignment keeps it
    }
    let mut out = h.clone();
    let c = out.counts.as_mut()?;
    let range = c.range_of(&f);
    if !plain(src) && h.may_overflow(prog, &f) {
        c.eqs = c.eqs.havoc(dst);
        c.set_bound(dst, MIN, MAX);
    } else {
        c.eqs = c.eqs.assign(dst, &f.0, f.1);
        let (lo, hi) = range.unwrap_or((MIN, MAX));
        c.set_bound(dst, lo, hi);
    }
    c.normalize_bounds();
    Some(out)
}

/// The states of `h` where `a op b` has truth value `truth`, when both sides are
/// linear forms and one mentions a counted variable (`None` otherwise): none if the
/// counts rule it out, else `h` with the equality an `==` adds. A side computed with
/// possible overflow decides nothing.
pub fn assume(
    prog: &Program,
    h: &SymHeap,
    op: BinOp,
    a: &Expr,
    b: &Expr,
    truth: bool,
) -> Option<Vec<SymHeap>> {
    let rel = match (op, truth) {
        (BinOp::Eq, true) | (BinOp::Ne, false) => BinOp::Eq,
        (BinOp::Ne, true) | (BinOp::Eq, false) => BinOp::Ne,
        (BinOp::Lt, true) | (BinOp::Ge, false) => BinOp::Lt,
        (BinOp::Le, true) | (BinOp::Gt, false) => BinOp::Le,
        (BinOp::Gt, true) | (BinOp::Le, false) => BinOp::Gt,
        (BinOp::Ge, true) | (BinOp::Lt, false) => BinOp::Ge,
        _ => return None,
    };
    let (fa, fb) = (linear(prog, h, a)?, linear(prog, h, b)?);
    let n = h.counts.as_ref()?.ints.len();
    if fa.0[..n].iter().chain(&fb.0[..n]).all(|c| *c == 0) {
        return None;
    }
    if (!plain(a) && h.may_overflow(prog, &fa)) || (!plain(b) && h.may_overflow(prog, &fb)) {
        return Some(vec![h.clone()]);
    }
    let diff: Linear = (
        fa.0.iter().zip(&fb.0).map(|(x, y)| x - y).collect(),
        fa.1 - fb.1,
    );
    let cond = Constraint {
        form: diff.clone(),
        rel,
    };
    if !h.counts_allow(prog, &[vec![cond]]) {
        return Some(Vec::new());
    }
    let mut out = h.clone();
    if let Some(c) = &mut out.counts {
        if rel == BinOp::Eq {
            c.eqs.add_eq(&diff.0, -diff.1);
            if c.eqs.is_bottom() {
                return Some(Vec::new());
            }
            c.normalize_bounds();
        } else if !narrow(c, &diff, rel) {
            return Some(Vec::new());
        }
    }
    Some(vec![out])
}

/// Narrows the bound of the one counted variable `diff rel 0` compares with a
/// constant (`x + k < 0`, `-x + k >= 0`, ...); false if no value is left.
fn narrow(c: &mut Counts, diff: &Linear, rel: BinOp) -> bool {
    let mut cols = diff.0.iter().enumerate().filter(|(_, a)| **a != 0);
    let (Some((col, &a)), None) = (cols.next(), cols.next()) else {
        return true;
    };
    if col >= c.ints.len() || (a != 1 && a != -1) {
        return true;
    }
    // a·x + k rel 0  ⇔  x rel' -a·k
    let v = -a * diff.1;
    let rel = if a == 1 {
        rel
    } else {
        match rel {
            BinOp::Lt => BinOp::Gt,
            BinOp::Le => BinOp::Ge,
            BinOp::Gt => BinOp::Lt,
            BinOp::Ge => BinOp::Le,
            r => r,
        }
    };
    let (lo, hi) = c.interval(col);
    let (lo, hi) = match rel {
        BinOp::Lt => (lo, hi.min(v - 1)),
        BinOp::Le => (lo, hi.min(v)),
        BinOp::Gt => (lo.max(v + 1), hi),
        BinOp::Ge => (lo.max(v), hi),
        _ => (lo, hi),
    };
    if lo > hi {
        return false;
    }
    if lo == hi {
        let mut row = vec![0; c.eqs.dims()];
        row[col] = 1;
        c.eqs.add_eq(&row, lo);
        c.normalize_bounds();
        return !c.eqs.is_bottom();
    }
    c.set_bound(col, lo, hi);
    true
}

/// What a covering segment's length is in the covered state: the sum of the length
/// columns of the covered state's pieces that match it, plus its matching objects.
#[derive(Clone, Debug, Default)]
pub struct Image {
    /// Columns of the covered state.
    pub cols: Vec<usize>,
    /// Objects (each one object long).
    pub objects: i128,
}

/// Whether `s`'s counts imply `t`'s, where `t`'s segment column `c` is `images[c]`
/// in `s` (the matching of [`super::entail`]) and a counted variable is the same
/// variable in both (one `s` does not count is unconstrained).
pub fn implies(s: &SymHeap, t: &SymHeap, images: &[(usize, Image)]) -> bool {
    let Some(tc) = &t.counts else {
        return true;
    };
    if tc.eqs.is_bottom() {
        // `t` has no state: it covers only a state without any
        return s.counts.as_ref().is_some_and(|c| c.eqs.is_bottom());
    }
    if tc.eqs.rows().is_empty() && tc.bounds.is_empty() {
        return true;
    }
    // `s`'s columns, then one unconstrained column per variable only `t` counts
    let Some(sc) = &s.counts else {
        return false; // `s` keeps no lengths
    };
    if sc.eqs.is_bottom() {
        return true;
    }
    // `t`'s bounds: each variable's values in `s` within them
    for &(col, lo, hi) in &tc.bounds {
        let Some(x) = tc.ints.get(col) else {
            return false;
        };
        let Ok(i) = sc.ints.binary_search(x) else {
            return false;
        };
        let (l, h) = sc.interval(i);
        if l < i128::from(lo) || h > i128::from(hi) {
            return false;
        }
    }
    let (mut eqs, s_ints) = (sc.eqs.clone(), sc.ints.clone());
    let mut var_col = Vec::with_capacity(tc.ints.len());
    for x in &tc.ints {
        match s_ints.binary_search(x) {
            Ok(i) => var_col.push(i),
            Err(_) => {
                eqs = eqs.extend(1);
                var_col.push(eqs.dims() - 1);
            }
        }
    }
    if eqs.is_bottom() {
        return true;
    }
    // t's column → (s columns with coefficient 1, constant)
    let mut forms: Vec<Option<Image>> = vec![None; tc.eqs.dims()];
    for (i, col) in var_col.iter().enumerate() {
        forms[i] = Some(Image {
            cols: vec![*col],
            objects: 0,
        });
    }
    for (c, img) in images {
        if let Some(f) = forms.get_mut(*c) {
            *f = Some(img.clone());
        }
    }
    tc.eqs.rows().iter().all(|row| {
        let d = tc.eqs.dims();
        let mut coeffs = vec![0i128; eqs.dims()];
        let mut k = row[d];
        for (i, a) in row[..d].iter().enumerate() {
            if *a == 0 {
                continue;
            }
            let Some(f) = &forms[i] else {
                return false; // a column nothing matched: no fact about it
            };
            for &c in &f.cols {
                match coeffs.get_mut(c) {
                    Some(x) => *x += a,
                    None => return false,
                }
            }
            k -= a * f.objects;
        }
        eqs.implies(&coeffs, k)
    })
}

/// The join of two states that are equal but for their counts (the affine hull);
/// `None` if they differ otherwise or the hull is `existing`'s counts.
///
/// The counted variables' intervals are joined with widening up to `thresholds`
/// (the program's constants): a side the new state exceeds moves to the next
/// threshold beyond it, or to the end of the range, so that merges at one node end.
pub fn join(
    existing: &SymHeap,
    new: &SymHeap,
    thresholds: &std::collections::BTreeSet<i64>,
) -> Option<SymHeap> {
    let (Some(a), Some(b)) = (&existing.counts, &new.counts) else {
        return None;
    };
    if a.ints != b.ints
        || a.eqs.dims() != b.eqs.dims()
        || existing.top
        || new.top
        || existing.vars != new.vars
        || existing.atoms != new.atoms
        || existing.neq != new.neq
    {
        return None;
    }
    let hull = a.eqs.join(&b.eqs);
    // the variables' intervals, widened to the thresholds (a loop `i < 2` whose
    // states `i = 0` and `i = 1` merge keeps `i ∈ [0, 1]`, and its body narrows the
    // widened `[0, 2]` again)
    let up = |v: i128| {
        thresholds
            .range(i64::try_from(v).unwrap_or(i64::MAX)..)
            .next()
            .map_or(MAX, |&k| i128::from(k).min(MAX))
    };
    let down = |v: i128| {
        thresholds
            .range(..=i64::try_from(v).unwrap_or(i64::MIN))
            .next_back()
            .map_or(MIN, |&k| i128::from(k).max(MIN))
    };
    let mut joined = Counts {
        ints: a.ints.clone(),
        eqs: hull,
        bounds: Vec::new(),
    };
    for col in 0..a.ints.len() {
        let ((la, ha), (lb, hb)) = (a.interval(col), b.interval(col));
        let lo = if lb < la { down(lb) } else { la };
        let hi = if hb > ha { up(hb) } else { ha };
        joined.set_bound(col, lo, hi);
    }
    if joined == *a {
        return None;
    }
    let mut out = existing.clone();
    out.counts = Some(joined);
    Some(out)
}

/// Checks a certificate state's counts: ascending distinct counter variables, none
/// also in `vars`, and the segments' columns exactly the ones after the variables.
pub fn validate(prog: &Program, h: &SymHeap) -> Result<(), String> {
    let Some(c) = &h.counts else {
        return if h.atoms.iter().all(|a| a.len_col().unwrap_or(0) == 0) {
            Ok(())
        } else {
            Err("a segment names a length column without counts".into())
        };
    };
    if c.ints.windows(2).any(|w| w[0] >= w[1])
        || c.ints.iter().any(|x| !numeric::counter_type(prog, *x))
    {
        return Err("counted variables are no ascending signed 32-bit integers".into());
    }
    if c.bounds.windows(2).any(|w| w[0].0 >= w[1].0)
        || c.bounds.iter().any(|&(col, lo, hi)| {
            col >= c.ints.len()
                || lo > hi
                || i128::from(lo) < MIN
                || i128::from(hi) > MAX
                || (i128::from(lo), i128::from(hi)) == (MIN, MAX)
        })
    {
        return Err(
            "the counted variables' bounds are not ascending, in range and narrower than it".into(),
        );
    }
    if h.vars.iter().any(|(x, _)| c.ints.binary_search(x).is_ok()) {
        return Err("a counted variable also has a value of its own".into());
    }
    let n = c.ints.len();
    let mut cols: Vec<usize> = h.atoms.iter().filter_map(|a| a.len_col()).collect();
    cols.sort_unstable();
    if cols.iter().enumerate().any(|(i, c)| *c != n + i) || c.eqs.dims() != n + cols.len() {
        return Err("the segments' length columns do not follow the counted variables".into());
    }
    Ok(())
}

/// `x=…` renderings of the equalities (over variable names and `|#id|` lengths).
pub fn render(prog: &Program, h: &SymHeap) -> String {
    let Some(c) = &h.counts else {
        return String::new();
    };
    let mut names: Vec<String> = c
        .ints
        .iter()
        .map(|x| {
            prog.vars
                .get(*x)
                .map_or(format!("v{x}"), |v| v.name.clone())
        })
        .collect();
    names.resize(c.eqs.dims(), "?".into());
    for a in &h.atoms {
        if let Some(col) = a.len_col() {
            if let Some(n) = names.get_mut(col) {
                *n = format!("|#{}|", a.start());
            }
        }
    }
    if c.eqs.is_bottom() {
        return " ; ⊥".into();
    }
    let rows: Vec<String> = c
        .eqs
        .rows()
        .iter()
        .map(|r| {
            let d = c.eqs.dims();
            let terms: Vec<String> = r[..d]
                .iter()
                .enumerate()
                .filter(|(_, a)| **a != 0)
                .map(|(i, a)| match a {
                    1 => names[i].clone(),
                    -1 => format!("-{}", names[i]),
                    a => format!("{a}·{}", names[i]),
                })
                .collect();
            format!("{}={}", terms.join("+"), r[d])
        })
        .chain(c.bounds.iter().map(|&(col, lo, hi)| {
            let name = names.get(col).map_or("?", |n| n.as_str());
            format!("{name}∈[{lo},{hi}]")
        }))
        .collect();
    format!(" ; {}", rows.join(" "))
}

#[cfg(test)]
mod tests {
    use super::super::cpa::SymHeapCpa;
    use super::super::fold::SymPrec;
    use super::super::Id;
    use super::*;
    use crate::art::{build, Art, BuildOptions, BuildOutcome};
    use crate::cpa::Cpa;
    use crate::testutil::parse_c;

    const PRE: &str = "extern void abort(void);\nvoid reach_error(void);\nextern int __VERIFIER_nondet_int(void);\n#include <stdlib.h>\n";

    fn var(prog: &Program, name: &str) -> VarId {
        prog.vars
            .iter()
            .position(|v| v.name == name || v.name.ends_with(&format!("::{name}")))
            .unwrap_or_else(|| panic!("no variable {name}"))
    }

    /// The ART of the symbolic heaps alone (with merges) on `src`, counting `counted`.
    fn explore_counting(src: &str, counted: &[&str]) -> (Program, Art<SymHeap>, BuildOutcome) {
        let prog = parse_c(&format!("{PRE}{src}"));
        let mut prec = SymPrec::default();
        for c in counted {
            prec.count.insert(var(&prog, c));
        }
        let cpa = SymHeapCpa::new(&prog);
        let mut art = Art::new(&prog, cpa.initial(&prog, &prec));
        let opts = BuildOptions {
            max_nodes: 20_000,
            merge: true,
            ..Default::default()
        };
        let out = build(&cpa, &prog, &mut art, &prec, &opts, &mut |_| false);
        (prog, art, out)
    }

    fn errors(prog: &Program, art: &Art<SymHeap>) -> usize {
        art.nodes
            .iter()
            .filter(|n| n.alive && prog.graph[n.loc].kind == crate::cfa::LocKind::Error)
            .count()
    }

    const LENGTH: &str = "struct n { struct n *next; int d; };
         int main() {
           struct n *l = NULL, *p;
           int len = 0, count = 0;
           while (__VERIFIER_nondet_int()) {
             struct n *x = malloc(sizeof(struct n));
             if (!x) abort();
             x->next = l; l = x; len++;
           }
           p = l;
           while (p) { if (count >= len) reach_error(); count++; p = p->next; }
           if (count != len) reach_error();
           return 0;
         }";

    #[test]
    fn a_counter_of_the_objects_built_is_the_length_of_the_walk() {
        let (prog, art, out) = explore_counting(LENGTH, &["len", "count"]);
        assert!(matches!(out, BuildOutcome::Complete), "{out:?}");
        assert_eq!(errors(&prog, &art), 0);
        assert!(art.nodes.iter().all(|n| !n.state.top));
        // lengths were kept relationally: some state has a segment and `len` equal to
        // an expression over its length column
        assert!(art
            .nodes
            .iter()
            .any(|n| n.state.counts.as_ref().is_some_and(|c| c
                .eqs
                .rows()
                .iter()
                .any(|r| r[0] != 0 && r[2..].iter().any(|x| *x != 0)))));
        // every state is well formed
        for n in art.nodes.iter().filter(|n| n.alive) {
            n.state.validate(&prog).unwrap();
        }
    }

    #[test]
    fn a_length_computed_by_a_function_is_related_through_its_result() {
        let src = "struct n { struct n *next; int d; };
         int length(struct n *p) { int k = 0; while (p) { k++; p = p->next; } return k; }
         int main() {
           struct n *l = NULL;
           int len = 0, got;
           while (__VERIFIER_nondet_int()) {
             struct n *x = malloc(sizeof(struct n));
             if (!x) abort();
             x->next = l; l = x; len++;
           }
           got = length(l);
           if (got != len) reach_error();
           return 0;
         }";
        let counted = ["len", "got", "k", "length::__ret"];
        let (prog, art, out) = explore_counting(src, &counted);
        assert!(matches!(out, BuildOutcome::Complete), "{out:?}");
        assert_eq!(errors(&prog, &art), 0);
        let bug = src.replace("return k;", "return k + 1;");
        let (prog, art, out) = explore_counting(&bug, &counted);
        assert!(matches!(out, BuildOutcome::Error(_)) || errors(&prog, &art) > 0);
    }

    #[test]
    fn a_counter_off_by_one_reaches_the_error() {
        let src = LENGTH.replace("if (count != len)", "if (count != len + 1)");
        let (prog, art, out) = explore_counting(&src, &["len", "count"]);
        assert!(
            matches!(out, BuildOutcome::Error(_)) || errors(&prog, &art) > 0,
            "{out:?}"
        );
        // without the counters the walk's check is not decided either
        let (prog, art, out) = explore_counting(LENGTH, &[]);
        assert!(matches!(out, BuildOutcome::Error(_)) || errors(&prog, &art) > 0);
    }

    /// `n` objects in one list from `l`, the counted `len` equal to `n`, folded.
    fn counted_list(prog: &Program, n: usize, len_value: i64) -> SymHeap {
        let s = 0;
        let (l, len) = (var(prog, "l"), var(prog, "len"));
        let mut h = SymHeap::initial();
        h.counts = Some(Counts::new(vec![len]));
        for i in 0..n {
            let next = if i + 1 < n {
                Val::Id(i as Id + 1)
            } else {
                Val::Null
            };
            h.atoms.push(Atom::Pt {
                at: i as Id,
                strukt: s,
                fields: vec![next, Val::Unknown],
                heap: true,
                data: Vec::new(),
            });
        }
        h.set(l, if n > 0 { Val::Id(0) } else { Val::Null });
        h.set(len, Val::Int(len_value));
        super::super::fold::fold(prog, h)
    }

    #[test]
    fn folding_and_coverage_keep_the_length_and_compare_it() {
        let prog = parse_c(&format!("{PRE}{LENGTH}"));
        let three = counted_list(&prog, 3, 3);
        let four = counted_list(&prog, 4, 4);
        // folded: one segment from `l` whose length is fixed
        assert_eq!(three.atoms.len(), 1);
        let seg = three.atoms.iter().find_map(Atom::len_col).unwrap();
        assert_eq!(
            three.counts.as_ref().unwrap().eqs.value_of(seg),
            Some((3, 1))
        );
        // neither covers the other; their join covers both and keeps `len = |seg|`
        assert!(!super::super::entail::entails(&three, &four));
        assert!(!super::super::entail::entails(&four, &three));
        let j = join(&three, &four, &Default::default()).unwrap();
        assert!(super::super::entail::entails(&three, &j));
        assert!(super::super::entail::entails(&four, &j));
        let c = j.counts.as_ref().unwrap();
        assert!(c.eqs.implies(&[1, -1], 0), "{:?}", c.eqs.rows());
        // a list whose counter is off by one is not covered by the join
        let wrong = counted_list(&prog, 5, 6);
        assert!(!super::super::entail::entails(&wrong, &j));
        let right = counted_list(&prog, 5, 5);
        assert!(super::super::entail::entails(&right, &j));
        // a state whose counts allow nothing covers nothing but such a state (a
        // regression: it covered every state, since it has no equality to imply)
        let mut none = j.clone();
        if let Some(c) = &mut none.counts {
            c.eqs = Affine::bottom(c.eqs.dims());
        }
        assert!(!super::super::entail::entails(&three, &none));
        assert!(super::super::entail::entails(&none, &none));
    }

    #[test]
    fn a_merge_covers_what_went_into_it_even_where_a_chain_could_go_on() {
        // a regression (a certificate check failed on real/ut_cdl_reverse): a segment
        // without facts followed by an object that fold kept apart (its value is split
        // on) and that only the segment points to; the greedy matching extended the
        // segment over the object, so the hull did not cover its own inputs
        let prog = parse_c(&format!("{PRE}{LENGTH}"));
        let (l, len) = (var(&prog, "l"), var(&prog, "len"));
        let state = |n: i64| {
            let mut h = SymHeap::initial();
            h.counts = Some(Counts::new(vec![len]));
            let seg = h.new_col();
            h.atoms.push(Atom::Ls {
                strukt: 0,
                link: 0,
                from: 0,
                to: Val::Id(1),
                data: Vec::new(),
                len: seg,
                cells: Default::default(),
                order: Vec::new(),
            });
            h.atoms.push(Atom::Pt {
                at: 1,
                strukt: 0,
                fields: vec![Val::Null, Val::Int(2)],
                heap: true,
                data: Vec::new(),
            });
            h.set(l, Val::Id(0));
            h.set(len, Val::Int(n + 1));
            h.add_count_eq(&[(seg as usize, 1)], i128::from(n));
            h.canonical()
        };
        let (a, b) = (state(4), state(5));
        let j = join(&a, &b, &Default::default()).unwrap();
        assert!(super::super::entail::entails(&a, &j));
        assert!(super::super::entail::entails(&b, &j));
        assert!(!super::super::entail::entails(&j, &a));
    }

    #[test]
    fn comparisons_are_decided_with_the_segments_at_least_one_object_long() {
        let prog = parse_c(&format!("{PRE}{LENGTH}"));
        let j = join(
            &counted_list(&prog, 3, 3),
            &counted_list(&prog, 4, 4),
            &Default::default(),
        )
        .unwrap();
        let (len, count) = (var(&prog, "len"), var(&prog, "count"));
        let v = |x| Box::new(Expr::Var(x));
        let k = |c| Box::new(Expr::Int(c));
        // len = |seg| ≥ 1: `len < 1` is impossible, `len >= 1` certain; the merge
        // bounds len by 3 below, so `len < 2` is impossible too, `len < 5` narrows it
        let lt = |c, truth| assume(&prog, &j, BinOp::Lt, &v(len), &k(c), truth);
        assert_eq!(lt(1, true), Some(vec![]));
        assert_eq!(lt(1, false), Some(vec![j.clone()]));
        assert_eq!(
            j.counts.as_ref().unwrap().bounds,
            vec![(0, 3, i32::MAX as i64)]
        );
        assert_eq!(lt(2, true), Some(vec![]));
        let below = lt(5, true).unwrap();
        assert_eq!(below[0].counts.as_ref().unwrap().bounds, vec![(0, 3, 4)]);
        // `len == 7` fixes the segment's length
        let seven = assume(&prog, &j, BinOp::Eq, &v(len), &k(7), true).unwrap();
        let seg = seven[0].atoms.iter().find_map(Atom::len_col).unwrap();
        assert_eq!(
            seven[0].counts.as_ref().unwrap().eqs.value_of(seg),
            Some((7, 1))
        );
        // `count` is not counted: no decision here
        assert_eq!(assume(&prog, &j, BinOp::Lt, &v(count), &k(2), true), None);
        // an assignment of a linear form is exact: len := len + 1 keeps the relation
        let plus = assign(&prog, &j, 0, &Expr::Binary(BinOp::Add, v(len), k(1))).unwrap();
        assert!(plus.counts.as_ref().unwrap().eqs.implies(&[1, -1], 1));
    }

    /// A state with no object and counted variables `i`, `v` (of [`BOUNDED`]), `i`
    /// equal to `k`.
    fn counter_at(prog: &Program, k: i64) -> SymHeap {
        let (i, v) = (var(prog, "i"), var(prog, "v"));
        let mut h = SymHeap::initial();
        h.counts = Some(Counts::new(vec![i, v]));
        h.set(i, Val::Int(k));
        h
    }

    const BOUNDED: &str =
        "int main() { int i = 0, v = 0; while (i < 2) { v = i + 2; i++; } return v; }";

    #[test]
    fn merged_counters_keep_their_bounds_up_to_the_compared_constants() {
        let prog = parse_c(&format!("{PRE}{BOUNDED}"));
        let (zero, one, two) = (
            counter_at(&prog, 0),
            counter_at(&prog, 1),
            counter_at(&prog, 2),
        );
        let thresholds = std::collections::BTreeSet::from([1, 2, 3]);
        // i = 0 and i = 1: the hull says nothing of i, the bound [0, 1] is kept
        let j = join(&zero, &one, &thresholds).unwrap();
        assert_eq!(j.counts.as_ref().unwrap().bounds, vec![(0, 0, 1)]);
        assert!(
            super::super::entail::entails(&zero, &j) && super::super::entail::entails(&one, &j)
        );
        assert!(!super::super::entail::entails(&two, &j));
        // a bound exceeded again widens to the next threshold, then to the range's end
        let j2 = join(&j, &two, &thresholds).unwrap();
        assert_eq!(j2.counts.as_ref().unwrap().bounds, vec![(0, 0, 2)]);
        let j3 = join(&j2, &counter_at(&prog, 7), &thresholds).unwrap();
        assert_eq!(
            j3.counts.as_ref().unwrap().bounds,
            vec![(0, 0, i32::MAX as i64)]
        );
        // without thresholds at once
        let w = join(&zero, &one, &Default::default()).unwrap();
        assert_eq!(
            w.counts.as_ref().unwrap().bounds,
            vec![(0, 0, i32::MAX as i64)]
        );
        assert_eq!(join(&w, &one, &Default::default()), None);
        // `i < 2` narrows, `i + 2` then cannot overflow and is exact with its bound
        let v = |x| Box::new(Expr::Var(x));
        let (i, vv) = (var(&prog, "i"), var(&prog, "v"));
        let inside = assume(&prog, &j3, BinOp::Lt, &v(i), &Box::new(Expr::Int(2)), true).unwrap();
        assert_eq!(inside[0].counts.as_ref().unwrap().bounds, vec![(0, 0, 1)]);
        let sum = Expr::Binary(BinOp::Add, v(i), Box::new(Expr::Int(2)));
        let col = inside[0].int_col(vv).unwrap();
        let set = assign(&prog, &inside[0], col, &sum).unwrap();
        let c = set.counts.as_ref().unwrap();
        assert!(c.eqs.implies(&[1, -1], -2), "{:?}", c.eqs.rows());
        assert_eq!(c.bounds, vec![(0, 0, 1), (1, 2, 3)]);
        // unbounded, it may overflow: forgotten
        let set = assign(&prog, &j3, col, &sum).unwrap();
        assert!(set.counts.as_ref().unwrap().eqs.rows().is_empty());
        // `i >= 2` on [0, 1] leaves nothing; `i <= 0` fixes i
        assert_eq!(
            assume(
                &prog,
                &inside[0],
                BinOp::Ge,
                &v(i),
                &Box::new(Expr::Int(2)),
                true
            ),
            Some(vec![])
        );
        let low = assume(
            &prog,
            &inside[0],
            BinOp::Le,
            &v(i),
            &Box::new(Expr::Int(0)),
            true,
        )
        .unwrap();
        assert_eq!(low[0].counted_value(0), Some(0));
        assert!(low[0].counts.as_ref().unwrap().bounds.is_empty());
        for h in [&j, &j2, &j3, &inside[0], &low[0]] {
            h.validate(&prog).unwrap();
        }
    }

    #[test]
    fn malformed_counts_are_rejected() {
        let prog = parse_c(&format!("{PRE}{LENGTH}"));
        let good = counted_list(&prog, 3, 3);
        good.validate(&prog).unwrap();
        // a segment naming a column of a variable
        let mut bad = good.clone();
        for a in &mut bad.atoms {
            a.set_len_col(0);
        }
        assert!(bad.validate(&prog).is_err());
        // a counted variable that also has a value of its own
        let mut bad = good.clone();
        let len = var(&prog, "len");
        bad.vars.push((len, Val::Int(3)));
        bad.vars.sort();
        assert!(bad.validate(&prog).is_err());
        // a pointer counted
        let mut bad = good.clone();
        bad.counts.as_mut().unwrap().ints = vec![var(&prog, "l")];
        assert!(bad.validate(&prog).is_err());
        // bounds: on a segment's column, empty, the full range, out of order
        for bounds in [
            vec![(1, 0, 3)],
            vec![(0, 3, 2)],
            vec![(0, i32::MIN as i64, i32::MAX as i64)],
            vec![(0, 0, 1 << 40)],
        ] {
            let mut bad = good.clone();
            bad.counts.as_mut().unwrap().bounds = bounds.clone();
            assert!(bad.validate(&prog).is_err(), "{bounds:?}");
        }
        // lengths without counts
        let mut bad = good;
        bad.counts = None;
        for a in &mut bad.atoms {
            a.set_len_col(3);
        }
        assert!(bad.validate(&prog).is_err());
    }

    #[test]
    fn renumbering_projects_out_dropped_segments_and_keeps_the_others() {
        let prog = parse_c(&format!("{PRE}{LENGTH}"));
        let mut h = counted_list(&prog, 4, 4);
        // unreachable now: the segment's column goes, `len` keeps its value
        h.set(var(&prog, "l"), Val::Null);
        let h = h.canonical();
        assert!(h.atoms.is_empty());
        let c = h.counts.as_ref().unwrap();
        assert_eq!(c.eqs.dims(), 1);
        assert_eq!(c.eqs.value_of(0), Some((4, 1)));
    }
}
