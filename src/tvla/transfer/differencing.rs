//! Finite differencing of the recognised instrumentation families (`tc[F]`, `c[F]`,
//! `acyc[F]`, `r[x, F]`, `rs[x, F]`) and of unary `E w.`/`A w.` definitions: the new
//! value from the old one and the change, where re-evaluation would lose precision.

use super::update::meet;
use super::{pt_sym, target, Change, Dir, Domain};
use crate::tvla::eval::{CFormula, Compiled, Evaluator};
use crate::tvla::families::{self, Family};
use crate::tvla::formula::{Kleene, PredSym};
use crate::tvla::structure::{Structure, SM};
use std::collections::{BTreeMap, BTreeSet};

type DiffFn<'a> = Box<dyn Fn(&[usize]) -> Option<Kleene> + 'a>;

/// Reflexive reachability along fields `F` in `s` (stored `tc[F]` met with evaluation).
fn rtc(s: &Structure, fields: &[String]) -> Vec<Kleene> {
    let voc = s.vocab();
    let n = s.len();
    let fs: Vec<&str> = fields.iter().map(|f| f.as_str()).collect();
    let def = families::tc(&fs)
        .def
        .unwrap_or(crate::tvla::formula::Formula::Const(Kleene::Half));
    let c = Compiled::new(voc, &def, &["v1", "v2"]);
    let stored = voc
        .instr
        .iter()
        .find(|i| matches!(&i.family, Some(Family::Tc(g)) if g.as_slice() == fields))
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
pub(super) fn universal_differencing<'a>(
    pre: &'a Structure,
    cur: &Structure,
    ins: &'a crate::tvla::structure::InstrInfo,
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

/// Finite differencing of a family predicate (`tc[F]`, `c[F]`, `acyc[F]`, `r[x, F]`;
/// `rs[x, F]` in [`segment_differencing`]) for the change `ch`: a function giving the
/// new value of a tuple where the old one (or the change) determines it, or None
/// when the change is not one the family's rules cover.
pub(super) fn differencing<'a>(
    pre: &'a Structure,
    ins: &'a crate::tvla::structure::InstrInfo,
    ch: &'a Change,
    relevant: &[(&PredSym, Dir)],
    cache: &mut BTreeMap<Vec<String>, Vec<Kleene>>,
) -> Option<DiffFn<'a>> {
    let fam = ins.family.as_ref()?;
    let fields = fam.fields();
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
        return after_free(pre, fam, ins.idx, rm, cached_rtc(pre, fields, cache));
    }
    if ch.domain != Domain::Same {
        return None;
    }
    let only_fields = relevant
        .iter()
        .all(|(p, _)| p.params.is_empty() && fields.contains(&p.name));
    if let Some((f, nx, ny)) = &ch.insert {
        if !fields.contains(f) || !only_fields {
            return None;
        }
        return after_insert(pre, fam, ins.idx, *nx, *ny, cached_rtc(pre, fields, cache));
    }
    if let Some((f, nx)) = &ch.delete {
        if !fields.contains(f) || !only_fields {
            return None;
        }
        return after_delete(pre, fam, ins.idx, f, *nx, cached_rtc(pre, fields, cache));
    }
    let Family::Reach(z, _) = fam else {
        return None;
    };
    let only_z = relevant.iter().all(|(p, _)| **p == pt_sym(z));
    if !only_z {
        return None;
    }
    reach_differencing(pre, ch, z, fields, cache)
}

/// [`rtc`] of `pre` along `fields`, computed once per update.
fn cached_rtc(
    pre: &Structure,
    fields: &[String],
    cache: &mut BTreeMap<Vec<String>, Vec<Kleene>>,
) -> Vec<Kleene> {
    cache
        .entry(fields.to_vec())
        .or_insert_with(|| rtc(pre, fields))
        .clone()
}

/// The family row `idx` after the cell `rm` left the universe (`r`: [`rtc`] before).
fn after_free<'a>(
    pre: &'a Structure,
    fam: &Family,
    idx: usize,
    rm: usize,
    r: Vec<Kleene>,
) -> Option<DiffFn<'a>> {
    let n = pre.len();
    let old = move |v: usize| if v >= rm { v + 1 } else { v };
    let unreached = move |a: usize, b: usize| r[a * n + b] == Kleene::False;
    Some(match fam {
        Family::Tc(_) => Box::new(move |t: &[usize]| {
            let (a, b) = (old(t[0]), old(t[1]));
            (unreached(a, rm) || unreached(rm, b)).then(|| pre.get2(idx, a, b))
        }),
        Family::Cyclic(_) | Family::Acyclic(_) => Box::new(move |t: &[usize]| {
            let a = old(t[0]);
            (unreached(a, rm) || unreached(rm, a)).then(|| pre.get1(idx, a))
        }),
        // no path from z's cell to v passes through rm when rm is not in r[z], or when
        // z's cell is not rm and v is not reachable from rm (a leaf freed in a walk)
        Family::Reach(z, _) => {
            let z_off_rm = pre
                .vocab()
                .pt(z)
                .is_some_and(|p| pre.get1(p, rm) == Kleene::False);
            Box::new(move |t: &[usize]| {
                let v = old(t[0]);
                (pre.get1(idx, rm) == Kleene::False || (z_off_rm && unreached(rm, v)))
                    .then(|| pre.get1(idx, v))
            })
        }
        Family::Seg(..) => return None,
    })
}

/// The family row `idx` after the edge `nx → ny` was inserted into one of its fields
/// (`r`: [`rtc`] before): `tc' = tc | rtc(., nx) & rtc(ny, .)`.
fn after_insert<'a>(
    pre: &'a Structure,
    fam: &Family,
    idx: usize,
    nx: usize,
    ny: usize,
    r: Vec<Kleene>,
) -> Option<DiffFn<'a>> {
    let n = pre.len();
    let r2 = r.clone();
    let through = move |a: usize, b: usize| r[a * n + nx].and(r[ny * n + b]);
    Some(match fam {
        Family::Tc(_) => {
            Box::new(move |t: &[usize]| Some(pre.get2(idx, t[0], t[1]).or(through(t[0], t[1]))))
        }
        Family::Cyclic(_) => {
            Box::new(move |t: &[usize]| Some(pre.get1(idx, t[0]).or(through(t[0], t[0]))))
        }
        Family::Acyclic(_) => {
            Box::new(move |t: &[usize]| Some(pre.get1(idx, t[0]).and(through(t[0], t[0]).negate())))
        }
        Family::Reach(..) => Box::new(move |t: &[usize]| {
            Some(
                pre.get1(idx, t[0])
                    .or(pre.get1(idx, nx).and(r2[ny * n + t[0]])),
            )
        }),
        Family::Seg(..) => return None,
    })
}

/// The family row `idx` after the `f` edges out of the single cell `nx` were removed
/// (`r`: [`rtc`] before).
fn after_delete<'a>(
    pre: &'a Structure,
    fam: &Family,
    idx: usize,
    f: &str,
    nx: usize,
    r: Vec<Kleene>,
) -> Option<DiffFn<'a>> {
    // Only the out-edges of the single cell `nx` were removed, so a path that
    // uses one of them passes through `nx` and continues from it. Unchanged are:
    // paths that cannot reach `nx`, paths to a node `nx` cannot reach, and
    // (shortest) paths ending at `nx` itself, which never leave `nx`.
    let n = pre.len();
    let unreached = move |a: usize, b: usize| r[a * n + b] == Kleene::False;
    // The removed edge's target `b0`, when it is one definite cell: a path from
    // `b0` to another node, cut after its last visit of `b0`, never enters `b0`
    // again, so it never used the removed edge (which enters `b0`): `tc(b0, v)`
    // for `v ≠ b0` is unchanged. This keeps the reachability of a cyclic list
    // whose head is re-linked (`head->next = n` with `n->next` the old first).
    let b0 = pre.vocab().lookup(&PredSym::plain(f)).and_then(|(ar, fi)| {
        if ar != 2 {
            return None;
        }
        let mut out = (0..n).filter(|&w| pre.get2(fi, nx, w) != Kleene::False);
        match (out.next(), out.next()) {
            (Some(w), None) if pre.get2(fi, nx, w) == Kleene::True && !pre.is_summary(w) => Some(w),
            _ => None,
        }
    });
    Some(match fam {
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
    })
}

/// `r[z, F]` when only `pt[z]` changed: `z = y` copies `r[y, F]`; `z` set to a definite
/// cell gives that cell's [`rtc`] row, met for `z = y->f` with what `r[y, F]` says.
fn reach_differencing<'a>(
    pre: &'a Structure,
    ch: &'a Change,
    z: &str,
    fields: &[String],
    cache: &mut BTreeMap<Vec<String>, Vec<Kleene>>,
) -> Option<DiffFn<'a>> {
    let n = pre.len();
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
                i.sym == ry
                    && matches!(&i.family, Some(Family::Reach(a, g)) if a == y && g.as_slice() == fields)
            });
            if let (true, Some((1, iy))) = (has_family, voc.lookup(&ry)) {
                return Some(Box::new(move |t: &[usize]| Some(pre.get1(iy, t[0]))));
            }
        }
    }
    // x = y->f: r[x, F] is r[y, F] minus y's node when F = {f} (y's node stays when on
    // a cycle); a subset of r[y, F] when f is one of several fields of F
    let from_load = reach_after_load(pre, ch, z, fields);
    if let Some((x, nz)) = &ch.pt_set {
        if x == z {
            let nz = *nz;
            let r = cached_rtc(pre, fields, cache);
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

/// For `z = y->f` (the change's `load`): what `r[y, F]` before the load says of
/// `r[z, F]` after it.
fn reach_after_load<'a>(
    pre: &'a Structure,
    ch: &'a Change,
    z: &str,
    fields: &[String],
) -> Option<DiffFn<'a>> {
    let (y, f, ny) = ch.load.as_ref()?;
    let pre: &'a Structure = ch.load_pre.as_ref().unwrap_or(pre);
    let voc = pre.vocab();
    let ry = voc.instr.iter().find(|i| {
        matches!(&i.family, Some(Family::Reach(a, g)) if a == y && g.as_slice() == fields)
            && fields.contains(f)
    });
    let (Some(ry), true) = (ry, ch.pt_set.as_ref().is_some_and(|(x, _)| x == z)) else {
        return None;
    };
    let iy = ry.idx;
    let ny = *ny;
    // every path from y's cell to another cell starts with its only F-edge, the one
    // loaded (one field, or the others definitely without an edge: NULL, or an
    // unknown value, which a structure represents without one)
    let exact = fields.len() == 1 || only_edge(pre, fields, ny, f);
    let on_cycle = voc
        .instr
        .iter()
        .find_map(|i| match &i.family {
            Some(Family::Acyclic(g)) if g == fields => Some(pre.get1(i.idx, ny).negate()),
            Some(Family::Cyclic(g)) if g == fields => Some(pre.get1(i.idx, ny)),
            _ => None,
        })
        .unwrap_or(Kleene::Half);
    Some(Box::new(move |t: &[usize]| {
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
    }))
}

/// Whether the non-summary node `a` has exactly one edge along `fields`, a definite
/// `f`-edge to a non-summary node (every other tuple `g(a, w)` definitely false).
fn only_edge(s: &Structure, fields: &[String], a: usize, f: &str) -> bool {
    if s.get1(SM, a) != Kleene::False {
        return false;
    }
    let mut found = false;
    for g in fields {
        let Some(gi) = s.vocab().field(g) else {
            return false;
        };
        for w in 0..s.len() {
            match s.get2(gi, a, w) {
                Kleene::False => {}
                Kleene::True if g == f && !found && s.get1(SM, w) == Kleene::False => found = true,
                _ => return false,
            }
        }
    }
    found
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
        .find(|i| matches!(&i.family, Some(Family::Seg(a, g)) if a == x && g.as_slice() == fields))
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
/// [`crate::tvla::families::segment`]): every pointed cell is a cut point, so
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
    ins: &'a crate::tvla::structure::InstrInfo,
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
