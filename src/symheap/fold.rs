//! Abstraction of [`SymHeap`]s: folding chains of objects into segments.
//!
//! Two adjacent pieces (an object or a segment) merge into one segment when an object
//! that the merge hides is referenced only by the link between the pieces (no
//! variable, no other field, no disequality names it). Doubly-linked merges come
//! first; a singly-linked merge is refused when the objects' other fields point into
//! the two pieces (a doubly-linked list whose merge must wait for a third object).
//! Folding only forgets (a segment represents every chain it was made of), so it is
//! sound whatever it folds; it is what keeps the states finite.
//!
//! The precision ([`SymPrec`]) names the integer fields whose values are kept at loop
//! heads (elsewhere every known value is kept); two pieces whose facts about such a
//! field differ are not merged, so that a segment of white objects and the one blue
//! object after it stay apart. A tracked field's values are pooled at loop heads
//! first (every piece gets the values two objects share, `cpa::pool_values`), so
//! only an object with a value of its own stays apart; a split field's values are
//! not pooled, so every value keeps its pieces; an ordered field's pieces merge
//! whatever their values ([`super::order`] remembers where each value is). The
//! refinement tracks a field when an interpolant first speaks of it, and splits on it
//! when one does again.

use super::{cells, order, Atom, Cells, Facts, Id, SymHeap, Val, MAX_ATOMS};
use crate::cfa::{FieldRef, Program, StructId, VarId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

/// The symbolic heap's precision: the integer fields whose values are kept across
/// loop heads, and those whose values keep pieces apart when folding. Any precision
/// gives a sound abstraction (widening and folding only forget); a larger one forgets
/// less.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SymPrec {
    /// Integer fields whose values (objects' and segments' facts) survive a loop head.
    pub track: BTreeSet<FieldRef>,
    /// Tracked integer fields whose values are not pooled at loop heads (merged
    /// pieces must agree on their exact values).
    pub split: BTreeSet<FieldRef>,
    /// Integer variables kept as affine equalities with the segments' lengths
    /// ([`super::counts`]).
    #[serde(default)]
    pub count: BTreeSet<VarId>,
    /// Values a tracked field keeps at loop heads besides the program's constants:
    /// values the refinement saw forgotten on a spurious path (`i + len` written by a
    /// loop bounded by a constant). At most [`MAX_KEEP`] of them.
    #[serde(default)]
    pub keep: BTreeSet<(FieldRef, i64)>,
    /// Whether states equal but for their counts wait [`UNROLL`] at a location before
    /// they merge ([`crate::cpa::Cpa::merge_after`]; otherwise they merge at once):
    /// set when a spurious path went through merged nodes that the symbolic heaps
    /// without merging rule out.
    #[serde(default)]
    pub unroll: bool,
    /// Tracked integer fields whose segments keep the order of their values
    /// ([`super::order`]): pieces with other values of such a field merge whatever
    /// `split` says (the order keeps them apart), and widening pools none of them.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub order: BTreeSet<FieldRef>,
}

/// How many states wait at a location before they merge under [`SymPrec::unroll`].
pub const UNROLL: usize = 4;

/// The most values [`SymPrec::keep`] holds (the refinement adds none beyond; a
/// certificate with more is malformed), so that widening still ends every loop.
pub const MAX_KEEP: usize = 64;

/// The most values of one field the refinement adds to [`SymPrec::keep`]: a field
/// whose values keep growing along longer and longer paths (`q->len++`) is a counter,
/// not a loop bounded by a constant, and keeping one more value per refinement would
/// only unroll it.
pub const MAX_KEEP_PER_FIELD: usize = 4;

impl SymPrec {
    /// Whether two pieces of struct `s` with facts `a` and `b` may merge: they agree on
    /// every tracked or split field of `s` that keeps no order (both without a fact,
    /// or the same values; a tracked field's values are pooled at loop heads first, so
    /// this keeps apart only an object with a value no other object has).
    pub fn agree(&self, s: StructId, a: &Facts, b: &Facts) -> bool {
        let get = |d: &Facts, f: usize| d.iter().find(|(g, _)| *g == f).map(|(_, ks)| ks.clone());
        let range = FieldRef {
            strukt: s,
            field: 0,
        }..=FieldRef {
            strukt: s,
            field: usize::MAX,
        };
        self.split
            .range(range.clone())
            .chain(self.track.range(range))
            .all(|r| self.order.contains(r) || get(a, r.field) == get(b, r.field))
    }

    /// The fields of struct `s` whose segments keep orders.
    pub fn ordered(&self, s: StructId) -> impl Iterator<Item = usize> + '_ {
        self.order
            .iter()
            .filter(move |r| r.strukt == s)
            .map(|r| r.field)
    }

    /// Checks that every split field is an integer field of a struct of `prog` (for
    /// certificates).
    pub fn validate(&self, prog: &Program) -> Result<(), String> {
        if self.keep.len() > MAX_KEEP {
            return Err(format!(
                "precision keeps {} values (at most {MAX_KEEP})",
                self.keep.len()
            ));
        }
        for r in self
            .track
            .iter()
            .chain(&self.split)
            .chain(&self.order)
            .chain(self.keep.iter().map(|(r, _)| r))
        {
            if !is_int_field(prog, *r) {
                return Err(format!(
                    "precision field {}.{} is no integer field",
                    r.strukt, r.field
                ));
            }
        }
        if let Some(x) = self
            .count
            .iter()
            .find(|x| !crate::shape::numeric::counter_type(prog, **x))
        {
            return Err(format!("counted variable {x} is no signed 32-bit integer"));
        }
        Ok(())
    }
}

/// Whether `r` is an integer field of a struct of `prog` (what a precision may name).
pub fn is_int_field(prog: &Program, r: FieldRef) -> bool {
    prog.structs
        .get(r.strukt)
        .and_then(|d| d.fields.get(r.field))
        .is_some_and(|f| f.ty.is_int())
}

/// The canonical, folded form of `h` under the empty precision.
pub fn fold(prog: &Program, h: SymHeap) -> SymHeap {
    fold_with(prog, &SymPrec::default(), h)
}

/// The canonical, folded form of `h` (pieces merge only where `prec` lets them); ⊤
/// when more than [`MAX_ATOMS`] atoms remain.
pub fn fold_with(prog: &Program, prec: &SymPrec, h: SymHeap) -> SymHeap {
    let mut h = h.canonical();
    while !h.top {
        match merge_once(prog, prec, &h) {
            Some(next) => h = next.canonical(),
            None => break,
        }
    }
    bounded(h)
}

/// `h`, or ⊤ when it has more than [`MAX_ATOMS`] atoms.
pub fn bounded(h: SymHeap) -> SymHeap {
    if h.atoms.len() > MAX_ATOMS {
        return SymHeap::top();
    }
    h
}

/// The integer facts of one piece: an object's known integer fields, a segment's
/// facts (ascending by field).
pub fn piece_data(a: &Atom) -> Facts {
    match a {
        Atom::Pt { fields, data, .. } => {
            let mut out: Facts = fields
                .iter()
                .enumerate()
                .filter_map(|(f, v)| match v {
                    Val::Int(k) => Some((f, vec![*k])),
                    _ => None,
                })
                .chain(data.iter().cloned())
                .collect();
            out.sort();
            out
        }
        Atom::Ls { data, .. } | Atom::Dls { data, .. } => data.clone(),
        Atom::Block { .. } => Vec::new(),
    }
}

/// The integer facts that hold of every object of `pieces` (what a segment made of
/// them keeps): the fields every piece has a fact of, with the union of the values.
fn common_data<'a>(mut pieces: impl Iterator<Item = &'a Atom>) -> Facts {
    let Some(first) = pieces.next() else {
        return Vec::new();
    };
    let mut out = piece_data(first);
    for a in pieces {
        let d = piece_data(a);
        out.retain_mut(|(f, ks)| match d.iter().find(|(g, _)| g == f) {
            Some((_, ks2)) => {
                ks.extend(ks2);
                ks.sort_unstable();
                ks.dedup();
                true
            }
            None => false,
        });
    }
    out
}

/// The fields of `s` that point to `s` itself (the candidate links).
pub fn self_links(prog: &Program, s: StructId) -> Vec<usize> {
    prog.structs.get(s).map_or_else(Vec::new, |d| {
        d.fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.ty.pointee_struct() == Some(s))
            .map(|(i, _)| i)
            .collect()
    })
}

/// The fields of `s` of type `s **` (candidate links back by field address).
pub fn back_field_links(prog: &Program, s: StructId) -> Vec<usize> {
    prog.structs.get(s).map_or_else(Vec::new, |d| {
        d.fields
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                matches!(&f.ty, crate::cfa::Ty::Ptr(inner) if inner.pointee_struct() == Some(s))
            })
            .map(|(i, _)| i)
            .collect()
    })
}

/// A doubly-linked piece: (first, back, last, fwd, is a segment).
type Piece = (Id, Val, Id, Val, bool);

/// The atom as a doubly-linked piece over (`next`, `prev`) of struct `s`, its links
/// back field addresses if `by_field`.
fn dll_piece(a: &Atom, (s, next, prev, by_field): Links) -> Option<Piece> {
    match a {
        Atom::Pt {
            at,
            strukt,
            fields,
            heap: true,
            ..
        } if *strukt == s => Some((*at, *fields.get(prev)?, *at, *fields.get(next)?, false)),
        Atom::Dls {
            strukt,
            next: n,
            prev: p,
            first,
            back,
            last,
            fwd,
            by_field: bf,
            ..
        } if *strukt == s && *n == next && *p == prev && *bf == by_field => {
            Some((*first, *back, *last, *fwd, true))
        }
        _ => None,
    }
}

/// When a state has more than this many pieces of one struct beyond one per distinct
/// value of its split fields, folding merges them whatever the precision says (a list
/// of alternating values would otherwise grow a piece per value; five lists of five
/// values joined in order keep their five segments and the objects between them).
pub const SPLIT_BUDGET: usize = 6;

/// One merge, if any applies: under `prec`, then, for a struct with more than
/// [`SPLIT_BUDGET`] pieces, under the empty precision.
fn merge_once(prog: &Program, prec: &SymPrec, h: &SymHeap) -> Option<SymHeap> {
    if let Some(out) = merge_under(prog, prec, h) {
        return Some(out);
    }
    if prec.split.is_empty() && prec.track.is_empty() {
        return None;
    }
    // per struct: its pieces, and the distinct facts they have on its split fields
    let mut count: HashMap<StructId, (usize, BTreeSet<Facts>)> = HashMap::new();
    for a in &h.atoms {
        let Some(s) = a.strukt() else { continue };
        let mut d = piece_data(a);
        d.retain(|(f, _)| {
            let r = FieldRef {
                strukt: s,
                field: *f,
            };
            prec.split.contains(&r) || prec.track.contains(&r)
        });
        let e = count.entry(s).or_default();
        e.0 += 1;
        e.1.insert(d);
    }
    let over = |s: StructId| {
        count
            .get(&s)
            .is_some_and(|(n, kinds)| *n > SPLIT_BUDGET + kinds.len())
    };
    let relaxed = SymPrec {
        track: prec
            .track
            .iter()
            .filter(|r| !over(r.strukt))
            .copied()
            .collect(),
        count: prec.count.clone(),
        keep: prec.keep.clone(),
        unroll: prec.unroll,
        order: prec.order.clone(),
        split: prec
            .split
            .iter()
            .filter(|r| !over(r.strukt))
            .copied()
            .collect(),
    };
    if relaxed == *prec {
        return None;
    }
    merge_under(prog, &relaxed, h)
}

/// One merge under `prec`, if any applies: doubly-linked first, then singly-linked.
fn merge_under(prog: &Program, prec: &SymPrec, h: &SymHeap) -> Option<SymHeap> {
    let rc = h.refcounts();
    let by_first: HashMap<Id, usize> = h
        .atoms
        .iter()
        .enumerate()
        .filter(|(_, a)| !matches!(a, Atom::Block { .. }))
        .map(|(k, a)| (a.start(), k))
        .collect();
    let mut structs: Vec<StructId> = h.atoms.iter().filter_map(|a| a.strukt()).collect();
    structs.sort_unstable();
    structs.dedup();
    for &s in &structs {
        let links = self_links(prog, s);
        let backs = back_field_links(prog, s);
        for &next in &links {
            let prevs = links
                .iter()
                .map(|&p| (p, false))
                .chain(backs.iter().map(|&p| (p, true)));
            for (prev, by_field) in prevs {
                if next == prev {
                    continue;
                }
                let l = (s, next, prev, by_field);
                // an object's references from its own region (its owned objects'
                // links back to it) do not keep it named
                let rc1 = |i: Id, n: usize| external_refs(h, &rc, &by_first, i, &[next, prev]) == n;
                if let Some(out) = merge_dll(prog, h, prec, l, &by_first, &rc1) {
                    return Some(out);
                }
            }
        }
    }
    for &s in &structs {
        for link in self_links(prog, s) {
            let rc1 = |i: Id, n: usize| external_refs(h, &rc, &by_first, i, &[link]) == n;
            if let Some(out) = merge_sll(prog, h, prec, (s, link), &by_first, &rc1) {
                return Some(out);
            }
        }
    }
    None
}

/// The references to `i` other than those from the region ([`cells::region`]) of the
/// object at `i` over `links` (all of them if no object starts at `i`).
fn external_refs(
    h: &SymHeap,
    rc: &HashMap<Id, usize>,
    by_first: &HashMap<Id, usize>,
    i: Id,
    links: &[usize],
) -> usize {
    let all = rc.get(&i).copied().unwrap_or(0);
    match by_first.get(&i) {
        Some(&k) if all > 1 && matches!(h.atoms[k], Atom::Pt { .. }) => {
            all - cells::region(h, k, links, &|_| false, 0).self_refs
        }
        _ => all,
    }
}

/// The cells of a segment made of the pieces `ks` of `h` over `links`; `None` when
/// an object's region is open ([`cells::Region::open`]): the merge would hide what a
/// variable is working on.
fn joined_cells(
    prog: &Program,
    prec: &SymPrec,
    h: &SymHeap,
    ks: &[usize],
    links: &[usize],
) -> Option<Cells> {
    let keep_int = |r: FieldRef| prec.track.contains(&r);
    let mut out: Option<Cells> = None;
    for &k in ks {
        let (c, r) = cells::piece_cells(prog, h, k, links, &keep_int);
        if r.open {
            return None;
        }
        out = Some(match out {
            None => c,
            Some(o) => Cells::join(&o, &c),
        });
    }
    Some(out.unwrap_or_default().owning())
}

/// Whether an object among the pieces `ks` points, through a field other than
/// `links`, to an allocated object a variable names while the merged `cells` do not
/// keep that value: the merge would forget what the object owns while the program
/// works on it (an outer node whose inner list a variable walks).
fn forgets_named(h: &SymHeap, ks: &[usize], links: &[usize], cells: &Cells) -> bool {
    ks.iter().any(|&k| match &h.atoms[k] {
        Atom::Pt { fields, .. } => fields.iter().enumerate().any(|(f, v)| {
            !links.contains(&f)
                && v.id()
                    .is_some_and(|i| h.allocated(i) && h.vars.iter().any(|p| p.1 == Val::Id(i)))
                && !cells.common.contains(&(f, *v))
        }),
        _ => false,
    })
}

/// Whether an object among the singly-linked pieces `ks` points, through a field
/// other than `link`, to an allocated object outside the pieces that something else
/// refers to as well, while the merged `cells` do not keep that value: the merge
/// would forget a link back into the list before it (`next->prev = list` in a walk
/// that turns a singly-linked list into a doubly-linked one, one object at a time).
fn forgets_shared(h: &SymHeap, ks: &[usize], link: usize, cells: &Cells) -> bool {
    let inside = |i: Id| ks.iter().any(|&k| h.atoms[k].addresses().any(|j| j == i));
    let refs = |i: Id| {
        let vars = h.vars.iter().filter(|p| p.1.base() == Some(i)).count();
        let fields: usize = h
            .atoms
            .iter()
            .map(|a| {
                a.values()
                    .into_iter()
                    .filter(|v| v.base() == Some(i))
                    .count()
            })
            .sum();
        vars + fields
    };
    ks.iter().any(|&k| match &h.atoms[k] {
        Atom::Pt { fields, .. } => fields.iter().enumerate().any(|(f, v)| {
            f != link
                && v.id().is_some_and(|i| {
                    // (an atom's first object that only this field refers to may be
                    // owned, a region the cells keep; a doubly-linked segment's last
                    // object never is)
                    let first = h
                        .atom_at(i)
                        .is_some_and(|k| h.atoms[k].addresses().next() == Some(i));
                    h.allocated(i) && !inside(i) && (!first || refs(i) > 1)
                })
                && !cells.common.contains(&(f, *v))
        }),
        _ => false,
    })
}

/// A doubly-linked list's struct, `next` and `prev` fields, and whether its links
/// back are field addresses.
type Links = (StructId, usize, usize, bool);

fn merge_dll(
    prog: &Program,
    h: &SymHeap,
    prec: &SymPrec,
    links: Links,
    by_first: &HashMap<Id, usize>,
    rc1: &dyn Fn(Id, usize) -> bool,
) -> Option<SymHeap> {
    let (s, next, prev, by_field) = links;
    // the piece following piece k, linked back to it
    let follow = |k: usize, p: &Piece| -> Option<(usize, Piece)> {
        let Val::Id(f2) = p.3 else { return None };
        let &k2 = by_first.get(&f2)?;
        let p2 = dll_piece(&h.atoms[k2], links)?;
        (k2 != k && p2.0 == f2 && p2.1 == super::back_link(by_field, next, p.2)).then_some((k2, p2))
    };
    // an object that becomes a segment's last must be referenced only by the links
    // around it (a variable or another field pointing to it makes it the first
    // object of a piece of its own: this keeps the folded form independent of the
    // order in which merges are found)
    let inner_only = |f: Id, p: &Piece| -> bool {
        let back_in = follow(usize::MAX, p).is_some();
        rc1(f, 1 + usize::from(back_in))
    };
    for (k1, a) in h.atoms.iter().enumerate() {
        let Some(p1) = dll_piece(a, links) else {
            continue;
        };
        let Some((k2, p2)) = follow(k1, &p1) else {
            continue;
        };
        let (remove, first, back, last, fwd) = if p1.4 || p2.4 {
            // hides p1's last (a segment's) and p2's first (a segment's)
            let ok = (!p1.4 || rc1(p1.2, 1))
                && (if p2.4 {
                    rc1(p2.0, 1)
                } else {
                    inner_only(p2.0, &p2)
                });
            if !ok {
                continue;
            }
            (vec![k1, k2], p1.0, p1.1, p2.2, p2.3)
        } else {
            // two objects: merge with a third, hiding the middle one
            let Some((k3, p3)) = follow(k2, &p2) else {
                continue;
            };
            if k3 == k1 || p3.4 || !rc1(p2.0, 2) || !inner_only(p3.0, &p3) {
                continue;
            }
            (vec![k1, k2, k3], p1.0, p1.1, p3.2, p3.3)
        };
        let d0 = piece_data(&h.atoms[k1]);
        if remove
            .iter()
            .any(|&k| !prec.agree(s, &d0, &piece_data(&h.atoms[k])))
        {
            continue;
        }
        let data = common_data(remove.iter().map(|&k| &h.atoms[k]));
        let chain: Vec<&Atom> = remove.iter().map(|&k| &h.atoms[k]).collect();
        let order = order::of_chain(&chain, prec.ordered(s));
        let Some(cells) = joined_cells(prog, prec, h, &remove, &[next, prev]) else {
            continue;
        };
        if forgets_named(h, &remove, &[next, prev], &cells) {
            continue;
        }
        let mut out = h.clone();
        let len = out.fold_len(remove.iter().map(|&k| &h.atoms[k]));
        let mut remove = remove;
        remove.sort_unstable();
        for k in remove.into_iter().rev() {
            out.atoms.remove(k);
        }
        out.atoms.push(Atom::Dls {
            strukt: s,
            next,
            prev,
            first,
            back,
            last,
            fwd,
            data,
            by_field,
            len,
            cells,
            order,
        });
        return Some(out);
    }
    None
}

/// A singly-linked piece over `link`: (first, to, the other fields if an object).
fn sll_piece(a: &Atom, s: StructId, link: usize) -> Option<(Id, Val, Vec<Val>)> {
    match a {
        Atom::Pt {
            at,
            strukt,
            fields,
            heap: true,
            ..
        } if *strukt == s => {
            let to = *fields.get(link)?;
            let others = fields
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != link)
                .map(|(_, v)| *v)
                .collect();
            Some((*at, to, others))
        }
        Atom::Ls {
            strukt,
            link: l,
            from,
            to,
            ..
        } if *strukt == s && *l == link => Some((*from, *to, Vec::new())),
        _ => None,
    }
}

fn merge_sll(
    prog: &Program,
    h: &SymHeap,
    prec: &SymPrec,
    (s, link): (StructId, usize),
    by_first: &HashMap<Id, usize>,
    rc1: &dyn Fn(Id, usize) -> bool,
) -> Option<SymHeap> {
    // a link other than the struct's first one (`inner` beside `next`)
    let secondary = self_links(prog, s).first() != Some(&link);
    for (k1, a) in h.atoms.iter().enumerate() {
        let Some((a1, to1, others1)) = sll_piece(a, s, link) else {
            continue;
        };
        let Val::Id(b) = to1 else { continue };
        let Some(&k2) = by_first.get(&b) else {
            continue;
        };
        let Some((_, to2, others2)) = sll_piece(&h.atoms[k2], s, link) else {
            continue;
        };
        if k2 == k1 || !rc1(b, 1) {
            continue;
        }
        // a segment that would end where it starts (`ls(x, x)`, a whole cycle) would
        // forget that the cycle has at least two objects: `x ↦ y * ls(y, x)` stays
        if to2 == Val::Id(a1) {
            continue;
        }
        // two objects linked by a secondary link may be an object and one it owns (a
        // list node and its inner node): they merge only when a third piece goes on
        // the chain
        let pt = |k: usize| matches!(h.atoms[k], Atom::Pt { .. });
        if secondary && pt(k1) && pt(k2) {
            let third = to2.id().and_then(|c| by_first.get(&c)).is_some_and(|&k3| {
                k3 != k1 && k3 != k2 && sll_piece(&h.atoms[k3], s, link).is_some()
            });
            if !third {
                continue;
            }
        }
        // an object's other field may point to itself (its shape says so), not to
        // the other piece
        let across = others1.iter().any(|v| v.base() == Some(b))
            || others2.iter().any(|v| v.base() == Some(a1));
        if across || !prec.agree(s, &piece_data(a), &piece_data(&h.atoms[k2])) {
            continue;
        }
        let data = common_data([&h.atoms[k1], &h.atoms[k2]].into_iter());
        let order = order::of_chain(&[&h.atoms[k1], &h.atoms[k2]], prec.ordered(s));
        let Some(cells) = joined_cells(prog, prec, h, &[k1, k2], &[link]) else {
            continue;
        };
        if forgets_named(h, &[k1, k2], &[link], &cells)
            || forgets_shared(h, &[k1, k2], link, &cells)
        {
            continue;
        }
        let mut out = h.clone();
        let len = out.fold_len([&h.atoms[k1], &h.atoms[k2]].into_iter());
        let (lo, hi) = (k1.min(k2), k1.max(k2));
        out.atoms.remove(hi);
        out.atoms.remove(lo);
        out.atoms.push(Atom::Ls {
            strukt: s,
            link,
            from: a1,
            to: to2,
            data,
            len,
            cells,
            order,
        });
        return Some(out);
    }
    None
}
