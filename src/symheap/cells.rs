//! Composite segments (the composite-structures paper's higher-order `ls Λ`): what
//! every object of a segment points to, and owns, besides its links.
//!
//! A segment's [`Cells`] say two things of each of its objects c:
//!
//! - `common`: field `f` of c holds `v`, for each `(f, v)` (a value of the enclosing
//!   state, e.g. every element's `owner` pointing to the one list head);
//! - `shapes` (if any): c and a part of the heap of its own, separate from every
//!   other atom and from the other objects' parts, are a state of one of the shapes,
//!   with the shape's id 0 the address of c (e.g. "`inner` is NULL, or points to one
//!   object whose fields are NULL", or "`down` starts a list of elements whose `owner`
//!   is c").
//!
//! A [`Shape`] is a small symbolic heap of its own ids: id 0 is the object, whose
//! links are unknown in the shape (its integer fields are kept where the precision
//! tracks them, which relates a value to what the object owns); ids other than 0
//! name the objects it owns. Nothing in a shape names an id of
//! the enclosing state. Empty cells are the plain segment: other fields unknown,
//! nothing owned.
//!
//! Folding ([`super::fold`]) makes cells from the pieces it merges: an object's
//! [`region`] (the atoms only it reaches through its other fields) becomes its shape;
//! two pieces' cells join by keeping the common values they agree on and the union of
//! their shapes (at most [`MAX_SHAPES`], else none). Unfolding ([`unpack`]) gives the
//! first object a copy of each shape, one state per shape. Entailment matches cells
//! by shape entailment ([`super::entail::shapes_entail`]; [`Cells::join`] is there too,
//! as it drops the shapes others entail).

use super::{Atom, Id, SymHeap, Val};
use crate::cfa::{FieldRef, Program, StructId, VarId};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// The pseudo-variable naming a shape's object (id 0) in [`Shape::heap`].
pub const CELL: VarId = VarId::MAX;

/// At most this many shapes per segment; a join with more keeps none.
pub const MAX_SHAPES: usize = 3;

/// A shape owns at most this many atoms; a larger region is not kept.
pub const MAX_SHAPE_ATOMS: usize = 2;

/// Shapes nest at most this deep (a segment in a shape may have shapes of its own).
pub const MAX_DEPTH: usize = 2;

/// What every object of a segment points to and owns besides its links (module
/// documentation). The default is the plain segment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Cells {
    /// `(field, value)`, ascending by field: every object's field holds the value.
    #[serde(default)]
    pub common: Vec<(usize, Val)>,
    /// Sorted, none entailing another; empty: nothing owned is known.
    #[serde(default)]
    pub shapes: Vec<Shape>,
}

/// One object of a composite segment with what it owns: id 0 is the object.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shape {
    /// The object (`Pt` at 0, links unknown) and the atoms it owns, canonical.
    pub atoms: Vec<Atom>,
    /// Disequalities among the shape's ids.
    #[serde(default)]
    pub neq: Vec<(Val, Val)>,
}

impl Cells {
    /// Whether these are a plain segment's cells.
    pub fn is_empty(&self) -> bool {
        self.common.is_empty() && self.shapes.is_empty()
    }

    /// The shape cells without shapes stand for, for a struct whose shapes look like
    /// `like`: the object with its NULL common values, owning nothing (what the
    /// cells say of a field that holds an outer value is unknown in a shape).
    pub(super) fn implied(&self, like: &Shape) -> Option<Shape> {
        let mut cell = like.atoms.iter().find(|a| a.start() == 0)?.clone();
        if let Atom::Pt { fields, data, .. } = &mut cell {
            data.clear();
            for (f, v) in fields.iter_mut().enumerate() {
                let null = self.common.contains(&(f, Val::Null));
                *v = if null { Val::Null } else { Val::Unknown };
            }
        }
        Some(Shape {
            atoms: vec![cell],
            neq: Vec::new(),
        })
    }

    /// The cells without shapes if no shape owns an object or points to its own
    /// object: what such shapes say beyond the common values is only a choice of
    /// field values (which would make every list whose objects have a NULL field
    /// composite).
    pub fn owning(mut self) -> Cells {
        let says_more = |s: &Shape| {
            s.atoms.len() > 1
                || s.atoms
                    .iter()
                    .any(|a| a.values().iter().any(|v| v.base() == Some(0)))
        };
        if !self.shapes.iter().any(says_more) {
            self.shapes.clear();
        }
        self
    }

    /// The values the cells store (the common ones), for reference counting.
    pub fn values(&self) -> impl Iterator<Item = Val> + '_ {
        self.common.iter().map(|p| p.1)
    }
}

impl Shape {
    /// The shape as a symbolic heap: the pseudo-variable [`CELL`] names id 0.
    pub fn heap(&self) -> SymHeap {
        SymHeap {
            top: false,
            vars: vec![(CELL, Val::Id(0))],
            atoms: self.atoms.clone(),
            neq: self.neq.clone(),
            counts: None,
        }
    }

    /// The canonical shape of `h`, whose [`CELL`] names the object; `None` if it does
    /// not name an object.
    pub fn from_heap(h: SymHeap) -> Option<Shape> {
        let h = h.canonical();
        if h.top || h.get(CELL) != Val::Id(0) || h.atom_at(0).is_none() {
            return None;
        }
        Some(Shape {
            atoms: h.atoms,
            neq: h.neq,
        })
    }

    /// Whether the shape says nothing: the object alone, its fields unknown.
    pub fn is_trivial(&self) -> bool {
        self.neq.is_empty()
            && matches!(self.atoms.as_slice(),
                [Atom::Pt { fields, data, .. }] if data.is_empty() && fields.iter().all(|v| *v == Val::Unknown))
    }
}

/// What an object of a piece owns: the atoms of its region and its shape.
#[derive(Clone, Debug, Default)]
pub struct Region {
    /// Indices of the region's atoms in the state.
    pub atoms: Vec<usize>,
    /// The object with its region (`None`: nothing beyond unknown fields).
    pub shape: Option<Shape>,
    /// References to the object from inside its region (its owner's back links);
    /// 0 when the region is too large for a shape.
    pub self_refs: usize,
    /// Whether an atom of the region points to an allocated object outside it that a
    /// variable names (the program is working inside the region: e.g. a variable
    /// walks the object's inner list).
    pub open: bool,
}

/// The region of the object atom `k` of `h` with respect to its `links`: the atoms
/// reachable from its other fields (not through the object) that no variable, no
/// disequality, no atom outside the region and none of the object's links refers to.
/// Integer values are kept in the shape only where `keep_int` says so; `depth` is how
/// deep the shape would sit (beyond [`MAX_DEPTH`] nested shapes are dropped).
pub fn region(
    h: &SymHeap,
    k: usize,
    links: &[usize],
    keep_int: &dyn Fn(FieldRef) -> bool,
    depth: usize,
) -> Region {
    let Some(Atom::Pt { at, fields, .. }) = h.atoms.get(k) else {
        return Region::default();
    };
    let at = *at;
    let roots: Vec<Id> = fields
        .iter()
        .enumerate()
        .filter(|(f, _)| !links.contains(f))
        .filter_map(|(_, v)| v.base())
        .filter(|&i| i != at)
        .collect();
    let known = fields
        .iter()
        .enumerate()
        .any(|(f, v)| !links.contains(&f) && (v.base().is_some() || *v == Val::Null));
    if !known {
        return Region::default();
    }
    let by_addr: HashMap<Id, usize> = h
        .atoms
        .iter()
        .enumerate()
        .flat_map(|(j, a)| a.addresses().map(move |i| (i, j)))
        .collect();
    let inside = owned_atoms(h, k, &roots, &by_addr);
    let ids: HashSet<Id> = inside
        .iter()
        .flat_map(|&j| h.atoms[j].addresses())
        .chain([at])
        .collect();
    // the region's links back to the object, and the object's own other fields that
    // point to itself (`x->opt = x`)
    let self_refs = inside
        .iter()
        .flat_map(|&j| h.atoms[j].values())
        .chain(
            fields
                .iter()
                .enumerate()
                .filter(|(f, _)| !links.contains(f))
                .map(|(_, v)| *v),
        )
        .filter(|v| v.base() == Some(at))
        .count();
    let named: HashSet<Id> = h.vars.iter().filter_map(|p| p.1.base()).collect();
    let open = inside.iter().flat_map(|&j| h.atoms[j].values()).any(|v| {
        v.base()
            .is_some_and(|i| !ids.contains(&i) && named.contains(&i) && by_addr.contains_key(&i))
    });
    // an object of the cell's own struct in the region must be a leaf (its links of
    // that struct lead nowhere but back to the cell): a region that goes on along
    // the struct's own links is a subtree, whose shapes would not stay few
    let strukt = h.atoms[k].strukt();
    let deep = inside.iter().any(|&j| match &h.atoms[j] {
        Atom::Pt {
            strukt: s2, fields, ..
        } if Some(*s2) == strukt => fields
            .iter()
            .any(|v| v.base().is_some_and(|i| i != at && ids.contains(&i))),
        Atom::Ls { strukt: s2, .. } | Atom::Dls { strukt: s2, .. } => Some(*s2) == strukt,
        _ => false,
    });
    if inside.len() > MAX_SHAPE_ATOMS || deep {
        // too large to keep: the references back do not count as the region's
        return Region {
            atoms: inside,
            shape: None,
            self_refs: 0,
            open,
        };
    }
    let shape = shape_of(h, k, links, &inside, &ids, keep_int, depth);
    Region {
        atoms: inside,
        shape,
        self_refs,
        open,
    }
}

/// The atoms of the region of object atom `k` whose other fields hold `roots`: those
/// reachable from the roots through atoms that are not stack objects, all of whose
/// references come from the roots or from the region itself.
fn owned_atoms(h: &SymHeap, k: usize, roots: &[Id], by_addr: &HashMap<Id, usize>) -> Vec<usize> {
    let rc = h.refcounts();
    let mut excluded: HashSet<usize> = h
        .atoms
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            matches!(
                a,
                Atom::Pt { heap: false, .. } | Atom::Block { heap: false, .. }
            )
        })
        .map(|(j, _)| j)
        .collect();
    excluded.insert(k);
    loop {
        let mut inside: Vec<usize> = Vec::new();
        let mut seen = vec![false; h.atoms.len()];
        let mut stack = roots.to_vec();
        while let Some(i) = stack.pop() {
            let Some(&j) = by_addr.get(&i) else { continue };
            if excluded.contains(&j) || seen[j] {
                continue;
            }
            seen[j] = true;
            inside.push(j);
            stack.extend(h.atoms[j].values().iter().filter_map(|v| v.base()));
        }
        // references from inside: the object's other fields and the region's atoms
        let mut internal: HashMap<Id, usize> = HashMap::new();
        for &i in roots {
            *internal.entry(i).or_default() += 1;
        }
        for &j in &inside {
            for v in h.atoms[j].values() {
                if let Some(i) = v.base() {
                    *internal.entry(i).or_default() += 1;
                }
            }
        }
        let shared = inside.iter().copied().find(|&j| {
            h.atoms[j]
                .addresses()
                .any(|i| rc.get(&i).copied().unwrap_or(0) != internal.get(&i).copied().unwrap_or(0))
        });
        match shared {
            Some(j) => {
                excluded.insert(j);
            }
            None => return inside,
        }
    }
}

/// The shape of object atom `k` of `h` with the region `inside` (whose ids, with the
/// object's, are `ids`): outside ids, links and integers `keep_int` does not keep
/// unknown; `None` if it says nothing.
fn shape_of(
    h: &SymHeap,
    k: usize,
    links: &[usize],
    inside: &[usize],
    ids: &HashSet<Id>,
    keep_int: &dyn Fn(FieldRef) -> bool,
    depth: usize,
) -> Option<Shape> {
    let at = h.atoms[k].start();
    // the shape: outside ids, links and unkept integers unknown
    let keep = |v: Val| match v.base() {
        Some(i) if !ids.contains(&i) => Val::Unknown,
        _ => v,
    };
    let mut atoms = Vec::with_capacity(inside.len() + 1);
    let mut cell = h.atoms[k].clone();
    if let Atom::Pt {
        fields,
        data,
        strukt,
        ..
    } = &mut cell
    {
        let s = *strukt;
        let kept = |f: usize| {
            keep_int(FieldRef {
                strukt: s,
                field: f,
            })
        };
        for (f, v) in fields.iter_mut().enumerate() {
            *v = match *v {
                _ if links.contains(&f) => Val::Unknown,
                // a kept integer field relates the object's value to what it owns
                Val::Int(_) if !kept(f) => Val::Unknown,
                x => keep(x),
            };
        }
        data.retain(|(f, _)| kept(*f));
    }
    atoms.push(cell);
    for &j in inside {
        let mut a = h.atoms[j].clone();
        strip(&mut a, &keep, keep_int, depth);
        atoms.push(a);
    }
    let mut sh = SymHeap::initial();
    sh.vars = vec![(CELL, Val::Id(at))];
    sh.atoms = atoms;
    Shape::from_heap(sh).filter(|s| !s.is_trivial())
}

/// An atom copied into a shape: values outside the shape unknown, integers kept only
/// where `keep_int` says, no length column, nested shapes only up to [`MAX_DEPTH`].
fn strip(
    a: &mut Atom,
    keep: &dyn Fn(Val) -> Val,
    keep_int: &dyn Fn(FieldRef) -> bool,
    depth: usize,
) {
    // values outside the shape unknown (the addresses are the shape's own)
    a.rename(&mut |i| keep(Val::Id(i)));
    let kept = |s: StructId, f: usize| {
        keep_int(FieldRef {
            strukt: s,
            field: f,
        })
    };
    match a {
        Atom::Pt {
            strukt,
            fields,
            data,
            ..
        } => {
            let s = *strukt;
            for (f, v) in fields.iter_mut().enumerate() {
                if matches!(v, Val::Int(_)) && !kept(s, f) {
                    *v = Val::Unknown;
                }
            }
            data.retain(|(f, _)| kept(s, *f));
        }
        Atom::Block { .. } => {}
        Atom::Ls {
            strukt,
            data,
            len,
            cells,
            order,
            ..
        }
        | Atom::Dls {
            strukt,
            data,
            len,
            cells,
            order,
            ..
        } => {
            let s = *strukt;
            data.retain(|(f, _)| kept(s, *f));
            super::order::normalize(data, order);
            *len = 0;
            strip_cells(cells, depth);
        }
    }
}

fn strip_cells(c: &mut Cells, depth: usize) {
    c.common.retain(|(_, v)| *v != Val::Unknown);
    if depth + 1 >= MAX_DEPTH {
        c.shapes.clear();
    }
}

/// The cells of piece `k` of `h` over `links`: a segment's own; an object's common
/// values (its other pointer fields that point outside its region) and its region's
/// shape. Also the region (empty for a segment).
pub fn piece_cells(
    prog: &Program,
    h: &SymHeap,
    k: usize,
    links: &[usize],
    keep_int: &dyn Fn(FieldRef) -> bool,
) -> (Cells, Region) {
    match &h.atoms[k] {
        Atom::Ls { cells, .. } | Atom::Dls { cells, .. } => (cells.clone(), Region::default()),
        Atom::Pt { strukt, fields, .. } => {
            let r = region(h, k, links, keep_int, 0);
            let owned: HashSet<Id> = r
                .atoms
                .iter()
                .flat_map(|&j| h.atoms[j].addresses())
                .collect();
            let common = fields
                .iter()
                .enumerate()
                .filter(|(f, v)| {
                    !links.contains(f)
                        && is_ptr_field(prog, *strukt, *f)
                        && **v != Val::Unknown
                        && !v
                            .base()
                            .is_some_and(|i| owned.contains(&i) || i == h.atoms[k].start())
                })
                .map(|(f, v)| (f, *v))
                .collect();
            let shapes = r.shape.clone().into_iter().collect();
            (Cells { common, shapes }, r)
        }
        Atom::Block { .. } => (Cells::default(), Region::default()),
    }
}

fn is_ptr_field(prog: &Program, s: StructId, f: usize) -> bool {
    prog.structs
        .get(s)
        .and_then(|d| d.fields.get(f))
        .is_some_and(|d| d.ty.is_ptr())
}

/// The states where the object at `at` of `h` (just unfolded from a segment with
/// `cells`) has the segment's common values and, one state per shape, a copy of the
/// shape's region (fresh ids, new length columns where `h` counts).
pub fn unpack(h: SymHeap, at: Id, cells: &Cells) -> Vec<SymHeap> {
    let Some(k) = h
        .atoms
        .iter()
        .position(|a| matches!(a, Atom::Pt { at: a2, .. } if *a2 == at))
    else {
        return vec![h];
    };
    let mut h = h;
    if let Atom::Pt { fields, .. } = &mut h.atoms[k] {
        for &(f, v) in &cells.common {
            if let Some(x) = fields.get_mut(f) {
                *x = v;
            }
        }
    }
    if cells.shapes.is_empty() {
        return vec![h];
    }
    let mut out = Vec::with_capacity(cells.shapes.len());
    for shape in &cells.shapes {
        let mut g = h.clone();
        let base = g.fresh();
        let mut ren = |i: Id| -> Val {
            if i == 0 {
                Val::Id(at)
            } else {
                Val::Id(base + i - 1)
            }
        };
        for a in &shape.atoms {
            let mut a = a.clone();
            a.rename(&mut ren);
            match a {
                Atom::Pt {
                    at: a0, fields: sf, ..
                } if a0 == at => {
                    if let Atom::Pt { fields, .. } = &mut g.atoms[k] {
                        for (x, v) in fields.iter_mut().zip(sf) {
                            if v != Val::Unknown {
                                *x = v;
                            }
                        }
                    }
                }
                Atom::Ls { .. } | Atom::Dls { .. } => {
                    let col = g.new_col();
                    let mut a = a;
                    if let Atom::Ls { len, .. } | Atom::Dls { len, .. } = &mut a {
                        *len = col;
                    }
                    g.atoms.push(a);
                }
                a => g.atoms.push(a),
            }
        }
        let mut g = Some(g);
        for &(x, y) in &shape.neq {
            g = g.and_then(|g| g.add_neq(x.map_id(&mut ren), y.map_id(&mut ren)));
        }
        out.extend(g);
    }
    out
}

/// Checks the cells of a segment of struct `strukt` with `links` read from a
/// certificate: common fields are pointer fields other than the links, ascending;
/// every shape is a well-formed state whose id 0 is an object of `strukt` with its
/// links unknown, canonical, with shapes nested at most [`MAX_DEPTH`] deep.
pub fn validate(
    prog: &Program,
    strukt: StructId,
    links: &[usize],
    cells: &Cells,
    depth: usize,
) -> Result<(), String> {
    if cells.common.iter().any(|(f, v)| {
        links.contains(f)
            || !is_ptr_field(prog, strukt, *f)
            || matches!(v, Val::Int(_) | Val::Unknown)
    }) || cells.common.windows(2).any(|w| w[0].0 >= w[1].0)
    {
        return Err("a segment's common values name no other pointer fields (ascending)".into());
    }
    if !cells.shapes.is_empty() && depth >= MAX_DEPTH {
        return Err("shapes nested too deep".into());
    }
    if cells.shapes.len() > MAX_SHAPES || cells.shapes.windows(2).any(|w| w[0] >= w[1]) {
        return Err("a segment's shapes are too many or not sorted".into());
    }
    for s in &cells.shapes {
        // the depth first: a certificate must not make the check below recurse deep
        for a in &s.atoms {
            nested(prog, a, depth + 1)?;
        }
        let h = s.heap();
        let mut plain = h.clone();
        plain.vars.clear();
        plain.validate(prog)?;
        let cell_ok = s.atoms.iter().any(|a| match a {
            Atom::Pt {
                at: 0,
                strukt: s2,
                fields,
                heap: true,
                ..
            } => *s2 == strukt && links.iter().all(|&l| fields.get(l) == Some(&Val::Unknown)),
            _ => false,
        });
        if !cell_ok {
            return Err(
                "a shape's id 0 is no object of the segment's struct with unknown links".into(),
            );
        }
        if Shape::from_heap(h).as_ref() != Some(s) || s.atoms.len() > MAX_SHAPE_ATOMS + 1 {
            return Err("a shape is not canonical".into());
        }
        if s.atoms.iter().any(|a| a.len_col().is_some_and(|c| c != 0)) {
            return Err("a shape's segment has a length column".into());
        }
    }
    Ok(())
}

/// The cells of a segment inside a shape at `depth`.
fn nested(prog: &Program, a: &Atom, depth: usize) -> Result<(), String> {
    match a {
        Atom::Ls {
            strukt,
            link,
            cells,
            ..
        } => validate(prog, *strukt, &[*link], cells, depth),
        Atom::Dls {
            strukt,
            next,
            prev,
            cells,
            ..
        } => validate(prog, *strukt, &[*next, *prev], cells, depth),
        _ => Ok(()),
    }
}

/// A rendering of the cells: common values, shapes, or both split by `|`
/// (`{owner:#2}`, `{#0↦{down:NULL} ∨ #0↦{down:#1} * ls[next](#1,NULL){owner:#0}}`).
pub fn render(prog: &Program, strukt: StructId, cells: &Cells) -> String {
    if cells.is_empty() {
        return String::new();
    }
    let name = |f: usize| {
        prog.structs
            .get(strukt)
            .and_then(|d| d.fields.get(f))
            .map_or(format!("f{f}"), |d| d.name.clone())
    };
    let v = |v: &Val| match v {
        Val::Null => "NULL".to_string(),
        Val::Unknown => "?".to_string(),
        Val::Id(i) => format!("#{i}"),
        Val::Field(i, f) => format!("&#{i}.{f}"),
        Val::Int(k) => k.to_string(),
    };
    let common: Vec<String> = cells
        .common
        .iter()
        .map(|(f, x)| format!("{}:{}", name(*f), v(x)))
        .collect();
    let shapes: Vec<String> = cells
        .shapes
        .iter()
        .map(|s| {
            // the heap without the pseudo-variable's binding and empty parts
            let mut h = s.heap();
            h.vars.clear();
            let r = h.render(prog);
            let parts: Vec<&str> = r
                .split(" ; ")
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .collect();
            parts.join(" ; ")
        })
        .collect();
    match (common.is_empty(), shapes.is_empty()) {
        (false, true) => format!("{{{}}}", common.join(",")),
        (true, false) => format!("{{{}}}", shapes.join(" ∨ ")),
        _ => format!("{{{} | {}}}", common.join(","), shapes.join(" ∨ ")),
    }
}
