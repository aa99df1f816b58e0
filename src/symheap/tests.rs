//! Tests of the symbolic-heap domain: unit tests of canonical forms, folding and
//! entailment, and property tests against concrete heaps: a small model checker
//! ([`models`]) decides whether a concrete heap is a state of a symbolic heap, and
//! folding, entailment and every transfer function must keep the concrete states.

use super::cpa::SymHeapCpa;
use super::*;
use crate::art::{build, Art, BuildOptions, BuildOutcome};
use crate::cfa::{AllocKind, BinOp, Expr, FieldRef, Op, Ty};
use crate::testutil::parse_c;
use proptest::prelude::*;

mod lost_facts;
mod ordered;

pub(super) const PRE: &str = "extern void abort(void);\nvoid reach_error(void);\nextern int __VERIFIER_nondet_int(void);\n#include <stdlib.h>\n";

/// Builds the ART of the symbolic-heap CPA alone on `src` (empty precision).
pub(super) fn explore(src: &str) -> (Program, Art<SymHeap>, BuildOutcome) {
    explore_tracking(src, false)
}

/// Builds the ART of the symbolic-heap CPA alone on `src`; `track`: with every
/// integer field tracked.
fn explore_tracking(src: &str, track: bool) -> (Program, Art<SymHeap>, BuildOutcome) {
    let prog = parse_c(&format!("{PRE}{src}"));
    let mut prec = fold::SymPrec::default();
    if track {
        for (s, d) in prog.structs.iter().enumerate() {
            for (f, fd) in d.fields.iter().enumerate() {
                if fd.ty.is_int() {
                    prec.track.insert(FieldRef {
                        strukt: s,
                        field: f,
                    });
                }
            }
        }
    }
    let cpa = SymHeapCpa::new(&prog);
    let mut art = Art::new(&prog, SymHeap::initial());
    let opts = BuildOptions {
        max_nodes: 20_000,
        ..Default::default()
    };
    let out = build(&cpa, &prog, &mut art, &prec, &opts, &mut |_| false);
    (prog, art, out)
}

#[test]
fn a_list_built_in_a_loop_and_walked_needs_no_predicates() {
    // the walk's NULL checks and the free are proved by the segments alone
    let (prog, art, out) = explore(
        "struct n { struct n *next; int d; };
         int main() {
           struct n *l = NULL;
           while (__VERIFIER_nondet_int()) {
             struct n *x = malloc(sizeof(struct n));
             if (!x) abort();
             x->next = l; l = x;
           }
           while (l) { struct n *t = l->next; free(l); l = t; }
           return 0;
         }",
    );
    assert!(matches!(out, BuildOutcome::Complete), "{out:?}");
    let folded = art
        .nodes
        .iter()
        .any(|n| n.state.atoms.iter().any(|a| matches!(a, Atom::Ls { .. })));
    assert!(folded, "no segment in {} nodes", art.nodes.len());
    assert!(
        art.nodes.iter().all(|n| !n.state.top),
        "{}",
        prog.file.display()
    );
}

#[test]
fn a_doubly_linked_list_folds_into_a_dls_and_keeps_its_back_links() {
    let (_, art, out) = explore(
        "struct n { struct n *next; struct n *prev; };
         int main() {
           struct n *h = malloc(sizeof(struct n));
           if (!h) abort();
           h->next = NULL; h->prev = NULL;
           struct n *t = h;
           while (__VERIFIER_nondet_int()) {
             struct n *x = malloc(sizeof(struct n));
             if (!x) abort();
             x->next = NULL; x->prev = t; t->next = x; t = x;
           }
           for (struct n *p = h; p->next; p = p->next)
             if (p->next->prev != p) reach_error();
           return 0;
         }",
    );
    assert!(matches!(out, BuildOutcome::Complete), "{out:?}");
    assert!(art
        .nodes
        .iter()
        .any(|n| n.state.atoms.iter().any(|a| matches!(a, Atom::Dls { .. }))));
}

#[test]
fn a_segment_keeps_the_values_its_objects_were_given() {
    // the cells hold 0 or 1 (a fact with two values), the check needs both
    let (prog, art, out) = explore_tracking(
        "struct n { struct n *next; int d; };
         int main() {
           struct n *l = NULL;
           while (__VERIFIER_nondet_int()) {
             struct n *x = malloc(sizeof(struct n));
             if (!x) abort();
             x->d = __VERIFIER_nondet_int() ? 0 : 1;
             x->next = l; l = x;
           }
           for (struct n *p = l; p; p = p->next)
             if (p->d != 0 && p->d != 1) reach_error();
           return 0;
         }",
        true,
    );
    assert!(matches!(out, BuildOutcome::Complete), "{out:?}");
    let two = art.nodes.iter().any(|n| {
        n.state
            .atoms
            .iter()
            .any(|a| matches!(a, Atom::Ls { data, .. } if data == &vec![(1, vec![0, 1])]))
    });
    assert!(two, "{}", prog.file.display());
}

#[test]
fn an_integer_that_its_variable_or_field_cannot_hold_is_not_kept() {
    // 200 + 100 is 44 in an unsigned char (C converts on the assignment): keeping 300
    // would make `c == 44` infeasible and hide the error (the front end writes the
    // conversion as a cast, and the store checks the type again)
    for body in [
        "unsigned char c = 200; c = c + 100; if (c == 44) reach_error();",
        "struct n { unsigned char c; } *x = malloc(sizeof(struct n)); if (!x) abort(); \
         x->c = 300; if (x->c == 44) reach_error();",
    ] {
        let (_, _, out) = explore(&format!("int main() {{ {body} return 0; }}"));
        assert!(matches!(out, BuildOutcome::Error(_)), "{body}: {out:?}");
    }
}

// ---------------------------------------------------------------------------------
// concrete heaps

/// A concrete pointer value: NULL, an object, or an address no object has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Cv {
    Null,
    Addr(usize),
    Dangle(u8),
    /// The address of field `prev` (1) of a cell; the address of `next` (offset 0) is
    /// the cell's own address, `Addr` ([`fld`]).
    Fld(usize, u8),
}

/// The address of field `f` of cell `i` (`next` is at offset 0: the cell's address).
fn fld(i: usize, f: usize) -> Cv {
    if f == 0 {
        Cv::Addr(i)
    } else {
        Cv::Fld(i, f as u8)
    }
}

/// A concrete heap over `struct n { struct n *next, *prev; int d; }`, three pointer
/// variables and the integer variable `v`; a cell is the two pointers and `d`, `None`
/// a freed object.
#[derive(Clone, Debug)]
struct Conc {
    cells: Vec<Option<([Cv; 2], i64)>>,
    vars: [Cv; 3],
    v: i64,
}

impl Conc {
    fn live(&self, v: Cv) -> Option<usize> {
        match v {
            Cv::Addr(i) if self.cells.get(i).is_some_and(|c| c.is_some()) => Some(i),
            _ => None,
        }
    }
}

/// The program the concrete heaps live in: struct 0 with fields next, prev, d;
/// variables `a`, `b`, `c`.
fn heap_prog() -> (Program, [VarId; 3]) {
    prog_with_prev("struct n *")
}

/// The concrete heaps' program with `prev` of type `prev_ty`.
fn prog_with_prev(prev_ty: &str) -> (Program, [VarId; 3]) {
    let prog = parse_c(&format!(
        "struct n {{ struct n *next; {prev_ty}prev; int d; }};\nstruct n *a, *b, *c;\nint v;\nint main() {{ return 0; }}\n"
    ));
    let var = |name: &str| {
        prog.vars
            .iter()
            .position(|v| v.name == name)
            .unwrap_or_else(|| panic!("no variable {name}"))
    };
    let vs = [var("a"), var("b"), var("c")];
    (prog, vs)
}

/// The symbolic heap that describes `c` exactly (one `Pt` per live object).
/// The integer variable `v` of [`heap_prog`].
fn int_var(prog: &Program) -> VarId {
    prog.vars
        .iter()
        .position(|x| x.name == "v")
        .unwrap_or_else(|| panic!("no v"))
}

fn exact(c: &Conc, vs: &[VarId; 3]) -> SymHeap {
    exact_with(c, vs, false)
}

/// [`exact`], with `v` counted ([`counts`]) if `counted`.
fn exact_with(c: &Conc, vs: &[VarId; 3], counted: bool) -> SymHeap {
    let val = |v: Cv| match v {
        Cv::Null => Val::Null,
        Cv::Addr(i) => Val::Id(i as Id),
        Cv::Dangle(k) => Val::Id(100 + k as Id),
        Cv::Fld(i, f) => Val::Field(i as Id, u32::from(f)),
    };
    let mut h = SymHeap::initial();
    if counted {
        h.counts = Some(Counts::new(vec![vs[2] + 1]));
    }
    for (i, x) in vs.iter().enumerate() {
        h.set(*x, val(c.vars[i]));
    }
    for (i, cell) in c.cells.iter().enumerate() {
        if let Some((f, d)) = cell {
            h.atoms.push(Atom::Pt {
                at: i as Id,
                strukt: 0,
                fields: vec![val(f[0]), val(f[1]), Val::Int(*d)],
                heap: true,
                data: Vec::new(),
            });
        }
    }
    // `v` is the variable after a, b, c in declaration order
    h.set(vs[2] + 1, Val::Int(c.v));
    h
}

/// Whether the concrete heap `c` is a state of `h` (a search for the ids' values and
/// for the objects each atom covers).
fn models(c: &Conc, vs: &[VarId; 3], h: &SymHeap) -> bool {
    if h.top {
        return true;
    }
    let mut sig = std::collections::HashMap::new();
    for (i, x) in vs.iter().enumerate() {
        let ok = match h.get(*x) {
            Val::Unknown => true,
            Val::Null => c.vars[i] == Cv::Null,
            Val::Int(_) => false,
            t => match_val(&mut sig, t, c.vars[i]),
        };
        if !ok {
            return false;
        }
    }
    match h.get(vs[2] + 1) {
        Val::Int(k) if k != c.v => return false,
        _ => {}
    }
    let used = vec![false; c.cells.len()];
    let done = &mut vec![false; h.atoms.len()];
    search(c, h, done, sig, used, Vec::new(), &mut |sig, _, lens| {
        disequalities_hold(h, sig) && counts_hold(c, h, lens)
    })
}

/// What [`search`] calls once every atom is matched: with the binding, the objects
/// used and the segments' lengths; its answer is the search's.
type Leaf<'a> =
    dyn FnMut(&std::collections::HashMap<Id, Cv>, &[bool], &[(usize, i128)]) -> bool + 'a;

/// Whether each object of `objs` from the `i`-th on, with objects of its own that
/// `used` leaves free, is a state of one of `shapes` ([`cells`]); `then` gets the
/// objects used after each way.
fn owned(
    c: &Conc,
    shapes: &[cells::Shape],
    objs: &[usize],
    i: usize,
    used: Vec<bool>,
    then: &mut dyn FnMut(Vec<bool>) -> bool,
) -> bool {
    let Some(&obj) = objs.get(i) else {
        return then(used);
    };
    for shape in shapes {
        let hs = shape.heap();
        let mut free = used.clone();
        free[obj] = false;
        let mut sig = std::collections::HashMap::new();
        sig.insert(0, Cv::Addr(obj));
        let done = &mut vec![false; hs.atoms.len()];
        let found = search(c, &hs, done, sig, free, Vec::new(), &mut |sig, u, _| {
            disequalities_hold(&hs, sig) && owned(c, shapes, objs, i + 1, u.to_vec(), then)
        });
        if found {
            return true;
        }
    }
    false
}

/// Whether `h`'s counts hold of the concrete heap: the counted variable `v` (the only
/// integer variable) has `c.v`, the segment with column `col` covers `len` objects for
/// each `(col, len)` of `lens` (rows over other columns are not checked).
fn counts_hold(c: &Conc, h: &SymHeap, lens: &[(usize, i128)]) -> bool {
    let Some(k) = &h.counts else {
        return true;
    };
    // the property tests count `v` only
    let mut val: Vec<Option<i128>> = vec![None; k.eqs.dims()];
    for v in val.iter_mut().take(k.ints.len()) {
        *v = Some(i128::from(c.v));
    }
    for &(col, len) in lens {
        if let Some(v) = val.get_mut(col) {
            *v = Some(len);
        }
    }
    if k.eqs.is_bottom() {
        return false;
    }
    let bounded = k.bounds.iter().all(|&(col, lo, hi)| {
        val.get(col)
            .copied()
            .flatten()
            .is_none_or(|v| i128::from(lo) <= v && v <= i128::from(hi))
    });
    bounded
        && k.eqs.rows().iter().all(|r| {
            let d = k.eqs.dims();
            let mut sum = 0;
            for (i, a) in r[..d].iter().enumerate() {
                if *a != 0 {
                    match val[i] {
                        Some(v) => sum += a * v,
                        None => return true,
                    }
                }
            }
            sum == r[d]
        })
}

fn bind(sig: &mut std::collections::HashMap<Id, Cv>, k: Id, v: Cv) -> bool {
    *sig.entry(k).or_insert(v) == v
}

fn match_val(sig: &mut std::collections::HashMap<Id, Cv>, t: Val, v: Cv) -> bool {
    match (t, v) {
        (Val::Unknown, _) => true,
        (Val::Null, v) => v == Cv::Null,
        (Val::Id(k), v) => bind(sig, k, v),
        // `&k->next` is k's own address
        (Val::Field(k, 0), Cv::Addr(i)) => bind(sig, k, Cv::Addr(i)),
        (Val::Field(k, f), Cv::Fld(i, g)) => u32::from(g) == f && bind(sig, k, Cv::Addr(i)),
        (Val::Field(..) | Val::Int(_), _) => false,
    }
}

/// One way an atom covers objects: the objects and the values it binds.
type Way = (Vec<usize>, Vec<(Val, Cv)>);

/// Whether `h`'s disequalities hold under the binding `sig` (those whose sides it
/// does not bind hold for some choice).
fn disequalities_hold(h: &SymHeap, sig: &std::collections::HashMap<Id, Cv>) -> bool {
    h.neq.iter().all(|&(a, b)| {
        let v = |x: Val| match x {
            Val::Null => Some(Cv::Null),
            Val::Id(k) => sig.get(&k).copied(),
            Val::Field(k, f) => match sig.get(&k) {
                Some(Cv::Addr(i)) => Some(fld(*i, f as usize)),
                _ => None,
            },
            Val::Unknown | Val::Int(_) => None,
        };
        match (v(a), v(b)) {
            (Some(x), Some(y)) => x != y,
            _ => true,
        }
    })
}

/// Every way atom `a` can cover objects from object `i` (none of `used`): the
/// objects and the bindings of the atom's values.
fn ways_of(c: &Conc, a: &Atom, i: usize, used: &[bool]) -> Vec<Way> {
    // every way the atom can cover objects from i: (objects, bindings)
    let mut ways: Vec<Way> = Vec::new();
    let cell = |j: usize| c.cells[j].map_or([Cv::Null; 2], |o| o.0);
    let data = |j: usize| c.cells[j].map_or(0, |o| o.1);
    // the objects of a segment have its integer facts (field 2 is `d`)
    let facts = |objs: &[usize], fs: &Facts| {
        objs.iter()
            .all(|&j| fs.iter().all(|(f, ks)| *f == 2 && ks.contains(&data(j))))
    };
    // and their values are in the segment's orders
    let ordered = |objs: &[usize], os: &order::Orders| {
        os.iter().all(|o| {
            o.field == 2
                && o.first.contains(&data(objs[0]))
                && o.last.contains(&data(objs[objs.len() - 1]))
                && objs
                    .windows(2)
                    .all(|w| o.pairs.contains(&(data(w[0]), data(w[1]))))
        })
    };
    match a {
        Atom::Pt {
            at,
            fields,
            data: fs,
            ..
        } => {
            let f = cell(i);
            if matches!(fields[2], Val::Int(k) if k != data(i)) || !facts(&[i], fs) {
                return ways;
            }
            ways.push((
                vec![i],
                vec![
                    (Val::Id(*at), Cv::Addr(i)),
                    (fields[0], f[0]),
                    (fields[1], f[1]),
                ],
            ));
        }
        Atom::Block { .. } => {}
        Atom::Ls {
            link,
            from,
            to,
            data: fs,
            order: os,
            ..
        } => {
            let mut chain = vec![i];
            loop {
                let last = chain[chain.len() - 1];
                let nv = cell(last)[*link];
                if facts(&chain, fs) && ordered(&chain, os) {
                    ways.push((
                        chain.clone(),
                        vec![(Val::Id(*from), Cv::Addr(i)), (*to, nv)],
                    ));
                }
                match c.live(nv) {
                    Some(j) if !chain.contains(&j) && !used[j] => chain.push(j),
                    _ => break,
                }
            }
        }
        Atom::Dls {
            next,
            prev,
            first,
            back,
            last,
            fwd,
            data: fs,
            by_field,
            order: os,
            ..
        } => {
            // what the next object's `prev` holds for object l
            let back_to = |l: usize| {
                if *by_field {
                    fld(l, *next)
                } else {
                    Cv::Addr(l)
                }
            };
            let mut chain = vec![i];
            loop {
                let l = chain[chain.len() - 1];
                let nv = cell(l)[*next];
                if chain.len() >= 2 && facts(&chain, fs) && ordered(&chain, os) {
                    ways.push((
                        chain.clone(),
                        vec![
                            (Val::Id(*first), Cv::Addr(i)),
                            (*back, cell(i)[*prev]),
                            (Val::Id(*last), Cv::Addr(l)),
                            (*fwd, nv),
                        ],
                    ));
                }
                match c.live(nv) {
                    Some(j) if !chain.contains(&j) && !used[j] && cell(j)[*prev] == back_to(l) => {
                        chain.push(j)
                    }
                    _ => break,
                }
            }
        }
    }
    ways
}

fn search(
    c: &Conc,
    h: &SymHeap,
    done: &mut Vec<bool>,
    sig: std::collections::HashMap<Id, Cv>,
    used: Vec<bool>,
    lens: Vec<(usize, i128)>,
    leaf: &mut Leaf,
) -> bool {
    let pick = (0..h.atoms.len())
        .filter(|&k| !done[k])
        .max_by_key(|&k| sig.contains_key(&h.atoms[k].start()));
    let Some(k) = pick else {
        return leaf(&sig, &used, &lens);
    };
    let a = &h.atoms[k];
    let starts: Vec<usize> = match sig.get(&a.start()) {
        Some(v) => c.live(*v).into_iter().collect(),
        None => (0..c.cells.len())
            .filter(|&i| c.live(Cv::Addr(i)).is_some())
            .collect(),
    };
    done[k] = true;
    for i in starts {
        if used[i] {
            continue;
        }
        let ways = ways_of(c, a, i, &used);
        let cell = |j: usize| c.cells[j].map_or([Cv::Null; 2], |o| o.0);
        let cells = match a {
            Atom::Ls { cells, .. } | Atom::Dls { cells, .. } => Some(cells),
            _ => None,
        };
        for (objs, mut binds) in ways {
            if objs.iter().any(|&j| used[j]) {
                continue;
            }
            // a segment's common values hold of every object
            for (f, v) in cells.iter().flat_map(|x| &x.common) {
                binds.extend(objs.iter().map(|&j| (*v, cell(j)[*f])));
            }
            let mut s2 = sig.clone();
            if !binds.iter().all(|&(t, v)| match_val(&mut s2, t, v)) {
                continue;
            }
            let mut u2 = used.clone();
            objs.iter().for_each(|&j| u2[j] = true);
            let mut l2 = lens.clone();
            if let Some(col) = a.len_col() {
                l2.push((col, objs.len() as i128));
            }
            let found = match cells.filter(|x| !x.shapes.is_empty()) {
                // and each object with objects of its own is one of its shapes
                Some(x) => owned(c, &x.shapes, &objs, 0, u2, &mut |u3| {
                    search(c, h, done, s2.clone(), u3, l2.clone(), leaf)
                }),
                None => search(c, h, done, s2, u2, l2, leaf),
            };
            if found {
                done[k] = false;
                return true;
            }
        }
    }
    done[k] = false;
    false
}

fn cv(n: usize) -> impl Strategy<Value = Cv> {
    prop_oneof![
        2 => Just(Cv::Null),
        4 => (0..n.max(1)).prop_map(Cv::Addr),
        1 => (0u8..2).prop_map(Cv::Dangle),
        1 => (0..n.max(1), 0usize..2).prop_map(|(i, f)| fld(i, f)),
    ]
}

fn conc() -> impl Strategy<Value = Conc> {
    (0usize..6).prop_flat_map(|n| {
        (
            proptest::collection::vec(
                proptest::option::weighted(0.9, ([cv(n), cv(n)], 0i64..2)),
                n,
            ),
            [cv(n), cv(n), cv(n)],
            0i64..3,
        )
            .prop_map(|(cells, vars, v)| Conc { cells, vars, v })
    })
}

/// A list from `a` by `next` whose objects' `prev` is NULL, owns a leaf (links NULL,
/// or `prev` back to its owner), points to the object itself, or shares the last leaf
/// (composite segments' cases); `b` names the last object or nothing.
fn owning_list() -> impl Strategy<Value = Conc> {
    (
        1usize..5,
        proptest::collection::vec(0u8..5, 5),
        any::<bool>(),
        0i64..2,
    )
        .prop_map(|(n, kinds, name_last, d)| {
            let mut cells: Vec<Option<([Cv; 2], i64)>> = (0..n)
                .map(|i| {
                    let next = if i + 1 < n { Cv::Addr(i + 1) } else { Cv::Null };
                    Some(([next, Cv::Null], d))
                })
                .collect();
            let mut last_leaf = None;
            for (i, kind) in kinds.iter().take(n).enumerate() {
                let prev = match kind {
                    0 => Cv::Null,
                    1 | 2 => {
                        let back = if *kind == 2 { Cv::Addr(i) } else { Cv::Null };
                        cells.push(Some(([Cv::Null, back], 0)));
                        last_leaf = Some(cells.len() - 1);
                        Cv::Addr(cells.len() - 1)
                    }
                    3 => Cv::Addr(i),
                    _ => last_leaf.map_or(Cv::Null, Cv::Addr),
                };
                if let Some((f, _)) = cells[i].as_mut() {
                    f[1] = prev;
                }
            }
            let b = if name_last { Cv::Addr(n - 1) } else { Cv::Null };
            Conc {
                cells,
                vars: [Cv::Addr(0), b, Cv::Null],
                v: 0,
            }
        })
}

/// Random heaps and lists whose objects own leaves.
fn any_heap() -> impl Strategy<Value = Conc> {
    prop_oneof![3 => conc(), 1 => owning_list()]
}

/// A list from `a` of `len` objects (doubly linked if `dll`), `b` at object `at`.
fn list(len: usize, dll: bool, at: Option<usize>) -> Conc {
    let cells = (0..len)
        .map(|i| {
            let next = if i + 1 < len {
                Cv::Addr(i + 1)
            } else {
                Cv::Null
            };
            let prev = if dll && i > 0 {
                Cv::Addr(i - 1)
            } else {
                Cv::Null
            };
            Some(([next, prev], 1))
        })
        .collect();
    let first = if len > 0 { Cv::Addr(0) } else { Cv::Null };
    Conc {
        cells,
        vars: [first, at.map_or(Cv::Null, Cv::Addr), Cv::Null],
        v: 0,
    }
}

#[test]
fn a_link_back_into_a_doubly_linked_prefix_is_not_folded_away() {
    // a walk turning a singly-linked list into a doubly-linked one, stopped at `c`:
    // objects 0..=3 are linked back, 4.. not yet; folding 3 into a singly-linked
    // segment with the rest forgot its `prev` (a regression of sll_to_dll_rev-2:
    // the walk back from the end then left the list)
    let (prog, vs) = heap_prog();
    for len in 6..9 {
        let mut c = list(len, false, None);
        for i in 1..=3 {
            if let Some(o) = &mut c.cells[i] {
                o.0[1] = Cv::Addr(i - 1);
            }
        }
        c.vars[2] = Cv::Addr(3);
        let f = fold::fold(&prog, exact(&c, &vs));
        assert!(models(&c, &vs, &f), "{}", f.render(&prog));
        let at = f.get(vs[2]).id().unwrap();
        let kept = f.atoms.iter().any(
            |a| matches!(a, Atom::Pt { at: i, fields, .. } if *i == at && fields[1].id().is_some()),
        );
        assert!(kept, "{}", f.render(&prog));
    }
}

#[test]
fn a_common_value_no_atom_allocates_is_dropped_from_the_cells() {
    // found by `merged_counters_keep_the_concrete_states_and_successors`: two objects
    // whose `prev` dangles to one unallocated id folded into a segment whose common
    // `prev` was renamed to `Unknown`, which certificates reject
    let (prog, vs) = heap_prog();
    let c = Conc {
        cells: vec![
            Some(([Cv::Null, Cv::Dangle(1)], 0)),
            Some(([Cv::Addr(0), Cv::Dangle(1)], 0)),
        ],
        vars: [Cv::Addr(1), Cv::Null, Cv::Null],
        v: 0,
    };
    let f = fold::fold(&prog, exact(&c, &vs));
    assert!(models(&c, &vs, &f), "{}", f.render(&prog));
    f.validate(&prog).unwrap();
}

#[test]
fn the_model_checker_tells_lists_apart() {
    let (prog, vs) = heap_prog();
    let five = list(5, false, None);
    let h = fold::fold(&prog, exact(&five, &vs));
    assert!(
        h.atoms.iter().any(|a| matches!(a, Atom::Ls { .. })),
        "{}",
        h.render(&prog)
    );
    assert!(models(&five, &vs, &h));
    assert!(models(&list(3, false, None), &vs, &h));
    // a list whose variable `b` points into it is not one without
    assert!(!models(&list(3, false, Some(1)), &vs, &h));
    let d = fold::fold(&prog, exact(&list(5, true, Some(4)), &vs));
    assert!(
        d.atoms.iter().any(|a| matches!(a, Atom::Dls { .. })),
        "{}",
        d.render(&prog)
    );
    assert!(models(&list(4, true, Some(3)), &vs, &d));
    assert!(!models(&list(4, false, Some(3)), &vs, &d));
}

#[test]
fn isomorphic_heaps_have_one_canonical_form() {
    let (_, vs) = heap_prog();
    let a = list(3, true, Some(2));
    // the same heap with the objects in another order
    let b = Conc {
        cells: vec![
            Some(([Cv::Null, Cv::Addr(2)], 1)),
            Some(([Cv::Addr(2), Cv::Null], 1)),
            Some(([Cv::Addr(0), Cv::Addr(1)], 1)),
        ],
        vars: [Cv::Addr(1), Cv::Addr(0), Cv::Null],
        v: 0,
    };
    assert_eq!(exact(&a, &vs).canonical(), exact(&b, &vs).canonical());
}

#[test]
fn longer_lists_are_covered_by_the_folded_list_and_not_the_other_way() {
    let (prog, vs) = heap_prog();
    let two = fold::fold(&prog, exact(&list(2, false, None), &vs));
    let six = fold::fold(&prog, exact(&list(6, false, None), &vs));
    let one = fold::fold(&prog, exact(&list(1, false, None), &vs));
    assert!(
        entail::entails(&six, &two),
        "{} ⊑ {}",
        six.render(&prog),
        two.render(&prog)
    );
    assert!(entail::entails(&one, &six));
    assert!(!entail::entails(&six, &one));
    assert!(!entail::entails(
        &six,
        &exact(&list(0, false, None), &vs).canonical()
    ));
}

/// `h` folded, under a precision whose segments keep the order of the values of
/// field `d` if `ordered` ([`order`]), else under the empty one.
fn fold_as(prog: &Program, h: SymHeap, ordered: bool) -> SymHeap {
    if !ordered {
        return fold::fold(prog, h);
    }
    let d = FieldRef {
        strukt: 0,
        field: 2,
    };
    let prec = fold::SymPrec {
        track: [d].into(),
        order: [d].into(),
        ..Default::default()
    };
    fold::fold_with(prog, &prec, h)
}

/// Some state of `posts` (the successors of `from` by `op`) holds of the concrete
/// successor `d`.
fn some_post_models(
    prog: &Program,
    vs: &[VarId; 3],
    d: &Conc,
    op: &Op,
    from: &SymHeap,
    posts: &[SymHeap],
) -> Result<(), TestCaseError> {
    prop_assert!(
        posts.iter().any(|s| models(d, vs, s)),
        "{:?} from {} gives {:?}",
        op,
        from.render(prog),
        posts.iter().map(|s| s.render(prog)).collect::<Vec<_>>()
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn canonical_form_and_folding_keep_the_concrete_heap(c in conc(), counted: bool, ordered: bool) {
        let (prog, vs) = heap_prog();
        let h = exact_with(&c, &vs, counted);
        prop_assert!(models(&c, &vs, &h));
        let k = h.clone().canonical();
        prop_assert!(models(&c, &vs, &k), "canonical {}", k.render(&prog));
        let f = fold_as(&prog, h, ordered);
        prop_assert!(models(&c, &vs, &f), "folded {}", f.render(&prog));
        f.validate(&prog).map_err(|e| TestCaseError::fail(format!("{e}: {}", f.render(&prog))))?;
    }

    #[test]
    fn composite_folding_and_entailment_keep_the_concrete_heaps(c in owning_list(), d in owning_list(), counted: bool) {
        let (prog, vs) = heap_prog();
        let s = fold::fold(&prog, exact_with(&c, &vs, counted));
        prop_assert!(models(&c, &vs, &s), "folded {}", s.render(&prog));
        let t = fold::fold(&prog, exact_with(&d, &vs, counted));
        if entail::entails(&s, &t) {
            prop_assert!(models(&c, &vs, &t), "{} ⊑ {}", s.render(&prog), t.render(&prog));
        }
        // the first object unfolded: some case holds of the concrete heap
        if let Some(i) = s.get(vs[0]).id() {
            if let Some(states) = post::focus(&prog, &s, i) {
                prop_assert!(states.iter().any(|u| models(&c, &vs, u)), "unfolded {}", s.render(&prog));
            }
        }
    }

    #[test]
    fn entailment_keeps_the_concrete_heaps(c in conc(), d in conc(), counted: bool, ordered: bool) {
        let (prog, vs) = heap_prog();
        let s = fold_as(&prog, exact_with(&c, &vs, counted), ordered);
        let t = fold_as(&prog, exact_with(&d, &vs, counted), ordered);
        if entail::entails(&s, &t) {
            prop_assert!(models(&c, &vs, &t), "{} ⊑ {}", s.render(&prog), t.render(&prog));
        }
    }

    #[test]
    fn every_transfer_keeps_the_concrete_successor(c in any_heap(), op in 0usize..21, x in 0usize..3, y in 0usize..3, f in 0usize..2, k in 0i64..3, narrow_all: bool, counted: bool, ordered: bool) {
        let (prog, vs) = heap_prog();
        let iv = int_var(&prog);
        let dfield = FieldRef { strukt: 0, field: 2 };
        let field = FieldRef { strukt: 0, field: f };
        let var = |i: usize| Expr::Var(vs[i]);
        let mut d = c.clone();
        // the concrete step (`None`: blocked or undefined, nothing to check)
        let (abs_op, ok) = match op {
            0 => { d.vars[x] = c.vars[y]; (Op::Assign { dst: vs[x], src: var(y) }, true) }
            1 => { d.vars[x] = Cv::Null; (Op::Assign { dst: vs[x], src: Expr::Null }, true) }
            2 => {
                let ok = c.live(c.vars[y]).map(|i| d.vars[x] = c.cells[i].map_or(Cv::Null, |o| o.0[f])).is_some();
                (Op::Load { dst: vs[x], ptr: vs[y], field }, ok)
            }
            3 => {
                let ok = c.live(c.vars[x]).map(|i| if let Some(o) = &mut d.cells[i] { o.0[f] = c.vars[y] }).is_some();
                (Op::Store { ptr: vs[x], field, src: var(y) }, ok)
            }
            4 => {
                d.cells.push(Some(([Cv::Null, Cv::Null], 0)));
                d.vars[x] = Cv::Addr(d.cells.len() - 1);
                (Op::Alloc { dst: vs[x], pointee: Ty::Struct(0), bytes: None, kind: AllocKind::Heap { zeroed: false } }, true)
            }
            5 => {
                let ok = match c.vars[x] { Cv::Null => true, v => c.live(v).map(|i| d.cells[i] = None).is_some() };
                (Op::Free { ptr: vs[x] }, ok)
            }
            6 => (Op::Assume { cond: Expr::bin(BinOp::Eq, var(x), var(y)) }, c.vars[x] == c.vars[y]),
            7 => (Op::Assume { cond: Expr::bin(BinOp::Ne, var(x), var(y)) }, c.vars[x] != c.vars[y]),
            8 => (Op::Assume { cond: Expr::Var(vs[x]) }, c.vars[x] != Cv::Null),
            9 => {
                let ok = c.live(c.vars[x]).map(|i| if let Some(o) = &mut d.cells[i] { o.1 = k }).is_some();
                (Op::Store { ptr: vs[x], field: dfield, src: Expr::Int(k) }, ok)
            }
            10 => {
                let ok = c.live(c.vars[y]).map(|i| d.v = c.cells[i].map_or(0, |o| o.1)).is_some();
                (Op::Load { dst: iv, ptr: vs[y], field: dfield }, ok)
            }
            15 => {
                let ok = c.live(c.vars[y]).map(|i| d.vars[x] = fld(i, f)).is_some();
                (Op::FieldAddr { dst: vs[x], ptr: vs[y], field }, ok)
            }
            16 => {
                // `x = *y` through a field address of a live cell
                let cell = match c.vars[y] {
                    Cv::Addr(i) => Some((i, 0)),
                    Cv::Fld(i, g) => Some((i, g as usize)),
                    _ => None,
                };
                let ok = cell
                    .and_then(|(i, g)| c.cells.get(i).copied().flatten().map(|o| d.vars[x] = o.0[g]))
                    .is_some();
                (Op::LoadIndirect { dst: vs[x], ptr: vs[y] }, ok)
            }
            17 => {
                let cell = match c.vars[x] {
                    Cv::Addr(i) => Some((i, 0)),
                    Cv::Fld(i, g) => Some((i, g as usize)),
                    _ => None,
                };
                let ok = match cell {
                    Some((i, g)) if c.cells.get(i).is_some_and(|o| o.is_some()) => {
                        if let Some(o) = &mut d.cells[i] {
                            o.0[g] = c.vars[y];
                        }
                        true
                    }
                    _ => false,
                };
                (Op::StoreIndirect { ptr: vs[x], src: var(y) }, ok)
            }
            13 => {
                // a comparison whose value the domain may not know: 0 or 1
                let ok = c.live(c.vars[x]).map(|i| if let Some(o) = &mut d.cells[i] { o.1 = i64::from(c.v != k) }).is_some();
                (Op::Store { ptr: vs[x], field: dfield, src: Expr::bin(BinOp::Ne, Expr::Var(iv), Expr::Int(k)) }, ok)
            }
            18 => { d.v = c.v + 1; (Op::Assign { dst: iv, src: Expr::bin(BinOp::Add, Expr::Var(iv), Expr::Int(1)) }, true) }
            19 => (Op::Assume { cond: Expr::bin(BinOp::Lt, Expr::Var(iv), Expr::Int(k)) }, c.v < k),
            20 => (Op::Assume { cond: Expr::bin(BinOp::Ge, Expr::Var(iv), Expr::Int(k)) }, c.v >= k),
            11 => (Op::Assume { cond: Expr::bin(BinOp::Eq, Expr::Var(iv), Expr::Int(k)) }, c.v == k),
            12 => (Op::Assume { cond: Expr::bin(BinOp::Ne, Expr::Var(iv), Expr::Int(k)) }, c.v != k),
            _ => { d.v = k; (Op::Assign { dst: iv, src: Expr::Int(k) }, true) }
        };
        if ok {
            let h = fold_as(&prog, exact_with(&c, &vs, counted), ordered);
            let narrow = prog
                .structs
                .iter()
                .enumerate()
                .flat_map(|(s, d)| (0..d.fields.len()).map(move |f| FieldRef { strukt: s, field: f }))
                .filter(|_| narrow_all)
                .collect();
            let out = (post::Post { prog: &prog, narrow: &narrow }).op(&h, &abs_op);
            let posts: Vec<SymHeap> = out.into_iter().map(|s| fold_as(&prog, s, ordered)).collect();
            // entailment soundness with the concrete successor as the witness
            let dh = fold_as(&prog, exact_with(&d, &vs, counted), ordered);
            for r in &posts {
                if entail::entails(&dh, r) {
                    prop_assert!(models(&d, &vs, r), "{} ⊑ {}", dh.render(&prog), r.render(&prog));
                }
            }
            some_post_models(&prog, &vs, &d, &abs_op, &h, &posts)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// A merge of two states that differ in the counted `v` keeps both concrete states
    /// (the interval widened to the thresholds), and the transfers that read the
    /// interval keep the concrete successor of either.
    #[test]
    fn merged_counters_keep_the_concrete_states_and_successors(c in conc(), a in -3i64..4, b in -3i64..4, op in 0usize..5, k in -2i64..3, th in proptest::collection::btree_set(-3i64..4, 0..3)) {
        let (prog, vs) = heap_prog();
        let iv = int_var(&prog);
        let (mut ca, mut cb) = (c.clone(), c.clone());
        ca.v = a;
        cb.v = b;
        let ha = fold::fold(&prog, exact_with(&ca, &vs, true));
        let hb = fold::fold(&prog, exact_with(&cb, &vs, true));
        let Some(j) = counts::join(&ha, &hb, &th) else {
            prop_assert!(a == b || ha.atoms != hb.atoms || ha.vars != hb.vars);
            return Ok(());
        };
        prop_assert!(models(&ca, &vs, &j) && models(&cb, &vs, &j), "{}", j.render(&prog));
        j.validate(&prog).map_err(|e| TestCaseError::fail(format!("{e}: {}", j.render(&prog))))?;
        let v = || Expr::Var(iv);
        for cc in [&ca, &cb] {
            let mut d = cc.clone();
            let (abs_op, ok) = match op {
                0 => (Op::Assume { cond: Expr::bin(BinOp::Lt, v(), Expr::Int(k)) }, cc.v < k),
                1 => (Op::Assume { cond: Expr::bin(BinOp::Ge, v(), Expr::Int(k)) }, cc.v >= k),
                2 => (Op::Assume { cond: Expr::bin(BinOp::Le, Expr::Int(k), v()) }, k <= cc.v),
                3 => {
                    d.v = cc.v + k;
                    (Op::Assign { dst: iv, src: Expr::bin(BinOp::Add, v(), Expr::Int(k)) }, true)
                }
                _ => (Op::Assume { cond: Expr::bin(BinOp::Ne, v(), Expr::Int(k)) }, cc.v != k),
            };
            if !ok {
                continue;
            }
            let narrow = Default::default();
            let posts = (post::Post { prog: &prog, narrow: &narrow }).op(&j, &abs_op);
            for p in &posts {
                p.validate(&prog).map_err(|e| TestCaseError::fail(format!("{e}: {}", p.render(&prog))))?;
            }
            some_post_models(&prog, &vs, &d, &abs_op, &j, &posts)?;
        }
    }
}

#[test]
fn every_list_is_covered_by_its_folded_form() {
    // completeness where it matters: lists, from every variable position (for random
    // heaps with several link fields the greedy matching may stop elsewhere than the
    // folding did, which only costs coverage)
    let (prog, vs) = heap_prog();
    for len in 0..7 {
        for dll in [false, true] {
            for at in std::iter::once(None).chain((0..len).map(Some)) {
                let c = list(len, dll, at);
                let k = exact(&c, &vs).canonical();
                let f = fold::fold(&prog, exact(&c, &vs));
                assert!(models(&c, &vs, &f), "{}", f.render(&prog));
                assert!(
                    entail::entails(&k, &f),
                    "{} ⋢ {}",
                    k.render(&prog),
                    f.render(&prog)
                );
            }
        }
    }
}

/// One object `a ↦ {next: NULL, prev: NULL}` with `d` unknown, and `v` unknown.
fn one_object(prog: &Program, vs: &[VarId; 3]) -> SymHeap {
    let _ = prog;
    let mut h = SymHeap::initial();
    h.set(vs[0], Val::Id(0));
    h.atoms.push(Atom::Pt {
        at: 0,
        strukt: 0,
        fields: vec![Val::Null, Val::Null, Val::Unknown],
        heap: true,
        data: Vec::new(),
    });
    h
}

#[test]
fn a_comparison_stored_in_a_field_is_one_value_set_not_two_states() {
    let (prog, vs) = heap_prog();
    let iv = int_var(&prog);
    let h = one_object(&prog, &vs);
    let store = Op::Store {
        ptr: vs[0],
        field: FieldRef {
            strukt: 0,
            field: 2,
        },
        src: Expr::bin(BinOp::Ne, Expr::Var(iv), Expr::Int(1)),
    };
    let none = Default::default();
    let out = (post::Post {
        prog: &prog,
        narrow: &none,
    })
    .op(&h, &store);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(
        matches!(&out[0].atoms[0], Atom::Pt { data, fields, .. }
            if data == &vec![(2, vec![0, 1])] && fields[2] == Val::Unknown),
        "{}",
        out[0].render(&prog)
    );
    // a load gives each value in a state of its own; a tracked field then holds it
    let load = Op::Load {
        dst: iv,
        ptr: vs[0],
        field: FieldRef {
            strukt: 0,
            field: 2,
        },
    };
    let loose = (post::Post {
        prog: &prog,
        narrow: &none,
    })
    .op(&out[0], &load);
    assert_eq!(loose.len(), 2);
    assert!(loose.iter().all(|s| s.atoms == out[0].atoms));
    let d = [FieldRef {
        strukt: 0,
        field: 2,
    }]
    .into_iter()
    .collect();
    let narrowed = (post::Post {
        prog: &prog,
        narrow: &d,
    })
    .op(&out[0], &load);
    let held: Vec<Val> = narrowed
        .iter()
        .map(|s| match &s.atoms[0] {
            Atom::Pt { fields, .. } => fields[2],
            _ => Val::Unknown,
        })
        .collect();
    assert_eq!(held, vec![Val::Int(0), Val::Int(1)]);
    assert_eq!(narrowed[1].get(iv), Val::Int(1));
}

#[test]
fn pooling_gives_every_piece_the_union_of_the_values() {
    let (prog, vs) = heap_prog();
    // a = #0 (d = `own`) ↦ ls(#1, NULL) whose objects hold 0 or 1
    let state = |own: i64| {
        let mut h = one_object(&prog, &vs);
        if let Atom::Pt { fields, .. } = &mut h.atoms[0] {
            fields[0] = Val::Id(1);
            fields[2] = Val::Int(own);
        }
        h.atoms.push(Atom::Ls {
            strukt: 0,
            link: 0,
            from: 1,
            to: Val::Null,
            data: vec![(2, vec![0, 1])],
            len: 0,
            cells: Default::default(),
            order: Vec::new(),
        });
        h
    };
    let d = FieldRef {
        strukt: 0,
        field: 2,
    };
    // a value the segment's objects may hold: the object gets the pool
    let before = state(1);
    let mut h = before.clone();
    super::cpa::pool_values(&mut h, d);
    assert!(matches!(&h.atoms[0], Atom::Pt { data, fields, .. }
        if data == &vec![(2, vec![0, 1])] && fields[2] == Val::Unknown));
    assert!(matches!(&h.atoms[1], Atom::Ls { data, .. } if data == &vec![(2, vec![0, 1])]));
    // pooling only forgets
    assert!(entail::entails(&before, &h));
    assert!(!entail::entails(&h, &before));
    // a value of its own (2) is kept, as is the segment's set
    let mut h = state(2);
    super::cpa::pool_values(&mut h, d);
    assert_eq!(h, state(2), "{}", h.render(&prog));
}

#[test]
fn a_split_field_keeps_an_object_with_another_value_out_of_the_segment() {
    let (prog, vs) = heap_prog();
    // a ↦ x1 (d = 1) ↦ x2 (d = 0) ↦ x3 (d = 0) ↦ NULL, singly linked by `next`
    let mut h = SymHeap::initial();
    h.set(vs[0], Val::Id(0));
    for (i, d) in [1, 0, 0].into_iter().enumerate() {
        let next = if i < 2 {
            Val::Id(i as Id + 1)
        } else {
            Val::Null
        };
        h.atoms.push(Atom::Pt {
            at: i as Id,
            strukt: 0,
            fields: vec![next, Val::Unknown, Val::Int(d)],
            heap: true,
            data: Vec::new(),
        });
    }
    let plain = fold::fold(&prog, h.clone());
    assert_eq!(plain.atoms.len(), 1, "{}", plain.render(&prog));
    let mut prec = fold::SymPrec::default();
    prec.split.insert(FieldRef {
        strukt: 0,
        field: 2,
    });
    let split = fold::fold_with(&prog, &prec, h);
    assert_eq!(split.atoms.len(), 2, "{}", split.render(&prog));
    assert!(split
        .atoms
        .iter()
        .any(|a| matches!(a, Atom::Pt { fields, .. } if fields[2] == Val::Int(1))));
    assert!(split
        .atoms
        .iter()
        .any(|a| matches!(a, Atom::Ls { data, .. } if data == &vec![(2, vec![0])])));
    // the precision is checked like any certificate content
    assert!(prec.validate(&prog).is_ok());
    prec.split.insert(FieldRef {
        strukt: 0,
        field: 0,
    });
    assert!(prec.validate(&prog).is_err());
}

/// The symbolic heaps alone explored `prog` completely, never went ⊤ and reached no
/// error location.
fn assert_proved(prog: &Program, art: &Art<SymHeap>, out: &BuildOutcome) {
    assert!(matches!(out, BuildOutcome::Complete), "{out:?}");
    assert!(art.nodes.iter().all(|n| !n.state.top));
    let errors = art
        .nodes
        .iter()
        .filter(|n| prog.graph[n.loc].kind == crate::cfa::LocKind::Error)
        .count();
    assert_eq!(errors, 0, "{}", prog.file.display());
}

#[test]
fn a_queue_with_a_pointer_to_its_last_link_field_is_followed() {
    // glibc's STAILQ: `last` holds the address of the last `next` field (or of the
    // head's `first`); inserting stores through it
    let (prog, art, out) = explore(
        "struct n { int d; struct n *next; };
         struct q { struct n *first; struct n **last; };
         int main() {
           struct q q;
           q.first = NULL; q.last = &q.first;
           while (__VERIFIER_nondet_int()) {
             struct n *x = malloc(sizeof(struct n));
             if (!x) abort();
             x->next = NULL; *q.last = x; q.last = &x->next;
           }
           if (q.first == NULL && q.last != &q.first) reach_error();
           if (q.first != NULL && *q.last != NULL) reach_error();
           struct n *p = q.first;
           while (p) { struct n *t = p->next; free(p); p = t; }
           return 0;
         }",
    );
    assert_proved(&prog, &art, &out);
    assert!(art.nodes.iter().any(|n| n
        .state
        .vars
        .iter()
        .any(|(_, v)| matches!(v, Val::Field(..)))
        || n.state
            .atoms
            .iter()
            .any(|a| a.values().iter().any(|v| matches!(v, Val::Field(..))))));
}

#[test]
fn field_addresses_are_renamed_matched_and_kept_apart() {
    let (prog, vs) = heap_prog();
    // a = #k ↦ {next: NULL, prev: NULL}, b = &#k.next, for two numberings of k
    let state = |k: Id, f: u32| {
        let mut h = SymHeap::initial();
        h.set(vs[0], Val::Id(k));
        h.set(vs[1], Val::Field(k, f));
        h.atoms.push(Atom::Pt {
            at: k,
            strukt: 0,
            fields: vec![Val::Null, Val::Null, Val::Unknown],
            heap: true,
            data: Vec::new(),
        });
        h.canonical()
    };
    assert_eq!(state(7, 0), state(3, 0), "{}", state(7, 0).render(&prog));
    assert!(matches!(state(7, 0).get(vs[1]), Val::Field(0, 0)));
    assert!(entail::entails(&state(7, 0), &state(3, 0)));
    assert!(!entail::entails(&state(7, 0), &state(7, 1)));
    // a field of a live object is no NULL and differs from another field of it
    let h = state(7, 0);
    assert!(h.distinct(Val::Field(0, 0), Val::Null));
    assert!(h.distinct(Val::Field(0, 0), Val::Field(0, 1)));
    assert!(!h.distinct(Val::Field(0, 0), Val::Id(0)));
    // an id no atom allocates, named once by a field address, is any value
    let mut g = SymHeap::initial();
    g.set(vs[1], Val::Field(9, 0));
    assert_eq!(g.canonical().get(vs[1]), Val::Unknown);
    assert!(h.validate(&prog).is_ok());
}

/// `heap_prog` with `prev` declared `struct n **` (glibc LIST's `le_prev`, the
/// kernel's `hlist` `pprev`): the concrete cells' second field holds `&x->next`, which
/// is `x` itself (offset 0).
fn pprev_prog() -> (Program, [VarId; 3]) {
    prog_with_prev("struct n **")
}

/// A LIST of `len` cells from `a`: cell i's `prev` holds `&cell[i-1].next` (the first
/// one's NULL), as the symbolic heap and as the concrete heap.
fn pprev_list(len: usize, vs: &[VarId; 3]) -> (SymHeap, Conc) {
    let mut h = SymHeap::initial();
    let mut cells = Vec::new();
    for i in 0..len {
        let next = if i + 1 < len {
            Cv::Addr(i + 1)
        } else {
            Cv::Null
        };
        let prev = if i > 0 { fld(i - 1, 0) } else { Cv::Null };
        cells.push(Some(([next, prev], 0)));
        h.atoms.push(Atom::Pt {
            at: i as Id,
            strukt: 0,
            fields: vec![
                if i + 1 < len {
                    Val::Id(i as Id + 1)
                } else {
                    Val::Null
                },
                if i > 0 {
                    Val::Field(i as Id - 1, 0)
                } else {
                    Val::Null
                },
                Val::Unknown,
            ],
            heap: true,
            data: Vec::new(),
        });
    }
    let head = if len > 0 { Cv::Addr(0) } else { Cv::Null };
    h.set(vs[0], if len > 0 { Val::Id(0) } else { Val::Null });
    let c = Conc {
        cells,
        vars: [head, Cv::Null, Cv::Null],
        v: 0,
    };
    (h, c)
}

#[test]
fn a_list_linked_back_by_field_addresses_folds_into_one_segment() {
    let (prog, vs) = pprev_prog();
    let mut folded = Vec::new();
    for len in 1..8 {
        let (h, c) = pprev_list(len, &vs);
        let f = fold::fold(&prog, h.clone());
        // sound: the folded form still has the concrete list among its models
        assert!(models(&c, &vs, &f), "{len}: {}", f.render(&prog));
        assert!(entail::entails(&h.canonical(), &f), "{len}");
        if len >= 3 {
            assert!(
                f.atoms
                    .iter()
                    .any(|a| matches!(a, Atom::Dls { by_field: true, .. })),
                "{len}: {}",
                f.render(&prog)
            );
            assert!(f.validate(&prog).is_ok(), "{len}");
        }
        folded.push(f);
    }
    // the folded form of a long list covers the longer ones, and not a shorter one
    for (k, f) in folded.iter().enumerate().skip(3) {
        assert!(entail::entails(f, &folded[2]), "{k}");
    }
    assert!(!entail::entails(&folded[0], &folded[2]));
}

#[test]
fn a_linux_style_hlist_with_pprev_needs_no_refinement() {
    let (prog, art, out) = explore(
        "struct n { struct n *next; struct n **pprev; };
         struct head { struct n *first; };
         int main() {
           struct head h; h.first = NULL;
           while (__VERIFIER_nondet_int()) {
             struct n *x = malloc(sizeof(struct n));
             if (!x) abort();
             x->next = h.first;
             if (h.first) h.first->pprev = &x->next;
             h.first = x; x->pprev = &h.first;
           }
           for (struct n *p = h.first; p; p = p->next)
             if (*p->pprev != p) reach_error();
           while (h.first) {
             struct n *x = h.first;
             *x->pprev = x->next;
             if (x->next) x->next->pprev = x->pprev;
             free(x);
           }
           return 0;
         }",
    );
    assert_proved(&prog, &art, &out);
    assert!(art.nodes.iter().any(|n| n
        .state
        .atoms
        .iter()
        .any(|a| matches!(a, Atom::Dls { by_field: true, .. }))));
}

#[test]
fn the_model_checker_reads_composite_segments() {
    let (prog, vs) = heap_prog();
    // a ↦ n₀ ↦ n₁ ↦ n₂ ↦ NULL by `next`, each nᵢ's `prev` pointing to a leaf of its own
    let mut cells: Vec<Option<([Cv; 2], i64)>> = Vec::new();
    for i in 0..3 {
        let next = if i < 2 { Cv::Addr(i + 1) } else { Cv::Null };
        cells.push(Some(([next, Cv::Addr(3 + i)], 0)));
    }
    for _ in 0..3 {
        cells.push(Some(([Cv::Null, Cv::Null], 0)));
    }
    let c = Conc {
        cells,
        vars: [Cv::Addr(0), Cv::Null, Cv::Null],
        v: 0,
    };
    let folded = fold::fold(&prog, exact(&c, &vs));
    assert!(
        folded
            .atoms
            .iter()
            .any(|a| matches!(a, Atom::Ls { cells, .. } if !cells.shapes.is_empty())),
        "{}",
        folded.render(&prog)
    );
    assert!(models(&c, &vs, &folded), "{}", folded.render(&prog));
    // one leaf shared by two objects: not each object's own
    let mut shared = c.clone();
    shared.cells[1] = Some(([Cv::Addr(2), Cv::Addr(3)], 0));
    assert!(!models(&shared, &vs, &folded));
    // a leaf that is no leaf
    let mut deep = c.clone();
    deep.cells[4] = Some(([Cv::Addr(0), Cv::Null], 0));
    assert!(!models(&deep, &vs, &folded));
}
