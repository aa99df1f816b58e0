//! Symbolic heaps: the separation-logic shape domain (issue #34; the
//! composite-structures and bi-abduction papers), beside the three-valued core of
//! [`crate::tvla`].
//!
//! A [`SymHeap`] is a spatial conjunction of [`Atom`]s (one object `at ↦ {fields}`, a
//! non-empty singly-linked segment `ls(from, to)`, a doubly-linked segment of at least
//! two objects `dls(first, back, last, fwd)`), the pointer variables' values ([`Val`])
//! and pure disequalities. Its meaning, which every operation here keeps:
//!
//! - a concrete state is represented if some assignment σ of addresses to the ids
//!   makes each pointer variable hold its value (`Unknown`: any value), and the heap is
//!   the disjoint union of the atoms' objects and of *any* further objects (the frame:
//!   objects the heap no longer reaches are dropped, which only weakens the formula);
//! - the atoms' objects are pairwise distinct (separation), so two ids that are both
//!   allocated by atoms are different addresses, and none is NULL;
//! - a field that the atom does not determine (an integer field, a field of a
//!   segment's object other than its links, `Unknown`) holds any value;
//! - two distinct ids may be equal unless both are allocated or a disequality in
//!   `neq` says otherwise; an id that no atom allocates may be any address, also one
//!   of an allocated object, so a dereference of it gives up (⊤, [`SymHeap::top`]);
//! - a segment's end value (`to`, `fwd`, `back`) may be anything, also one of the
//!   segment's own objects: no acyclicity is assumed, so nothing needs proving when a
//!   segment is folded.
//!
//! States are kept canonical ([`SymHeap::canonical`]): atoms reachable from the
//! variables only, ids numbered in the order a fixed traversal from the variables
//! meets them, so that isomorphic heaps are equal values. Folding ([`fold`]) hides
//! objects no variable and no other object points to in segments, which keeps the
//! number of states finite together with a bound on the atoms ([`MAX_ATOMS`]; a
//! larger heap is ⊤). Coverage is an entailment check ([`entail::entails`]) that maps
//! the covering heap's ids onto the covered one's and matches every covering atom by
//! atoms of the covered heap.

pub mod cells;
#[cfg(test)]
mod cells_tests;
pub mod counts;
pub mod cpa;
pub mod entail;
pub mod fold;
pub mod order;
pub mod post;
#[cfg(test)]
mod tests;

use crate::cfa::{Program, StructId, VarId};
pub use cells::Cells;
pub use counts::Counts;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A symbolic address: an existentially quantified object address or pointer value.
pub type Id = u32;

/// The value of a pointer (a variable or a field) in a [`SymHeap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Val {
    /// NULL.
    Null,
    /// Any value (an integer field, an uninitialised pointer, a pointer the domain
    /// does not follow).
    Unknown,
    /// The value named by an id.
    Id(Id),
    /// An integer (of an integer variable or field; never a pointer's value).
    Int(i64),
    /// The address of field `f` (index into the struct's fields) of the object the id
    /// names: a `T **` such as glibc's `stqh_last` (`&elm->field.stqe_next`).
    Field(Id, u32),
}

impl Val {
    /// The id, if the value is one.
    pub fn id(self) -> Option<Id> {
        match self {
            Val::Id(i) => Some(i),
            _ => None,
        }
    }
    /// The id the value names or points into (an id, or a field address's object).
    pub fn base(self) -> Option<Id> {
        match self {
            Val::Id(i) | Val::Field(i, _) => Some(i),
            _ => None,
        }
    }
    /// The value with its id replaced by `f`'s value for it: a field address of an id
    /// mapped to another id is that id's field, of anything else unknown.
    pub fn map_id(self, f: &mut dyn FnMut(Id) -> Val) -> Val {
        match self {
            Val::Id(i) => f(i),
            Val::Field(i, k) => match f(i) {
                Val::Id(j) => Val::Field(j, k),
                _ => Val::Unknown,
            },
            v => v,
        }
    }
}

/// A segment's integer facts: per integer field (ascending), the values (ascending,
/// at least one) every object of the segment has one of.
pub type Facts = Vec<(usize, Vec<i64>)>;

/// One spatial conjunct. Fields are indexed like [`crate::cfa::StructDef::fields`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Atom {
    /// One object of struct `strukt` at `at`; `fields[i]` is field `i`'s value
    /// (`Unknown`: any value, or, for an integer field `f` with a fact `(f, ks)` in
    /// `data`, one of `ks`).
    Pt {
        at: Id,
        strukt: StructId,
        fields: Vec<Val>,
        /// Allocated by `malloc`/`calloc` (false: a stack or static object, which
        /// `free` must not be given and folding leaves alone).
        heap: bool,
        /// Value sets (at least two values) of integer fields whose value is
        /// `Unknown` in `fields`, ascending by field.
        #[serde(default)]
        data: Facts,
    },
    /// One allocated object of another type (no fields followed).
    Block { at: Id, heap: bool },
    /// `ls(from, to)`: objects c₁ … cₙ of `strukt`, n ≥ 1, c₁ = from, cᵢ.link = cᵢ₊₁,
    /// cₙ.link = to; every object's integer field `f` is one of `ks` for each
    /// `(f, ks)` of `data`; their other fields are unknown.
    Ls {
        strukt: StructId,
        link: usize,
        from: Id,
        to: Val,
        #[serde(default)]
        data: Facts,
        /// The column of the segment's length n in the state's [`Counts`] (0, and
        /// meaningless, in a state without counts).
        #[serde(default)]
        len: u32,
        /// What every object points to and owns besides its links ([`cells`]).
        #[serde(default, skip_serializing_if = "Cells::is_empty")]
        cells: Cells,
        /// Where along the segment its integer fields' values are ([`order`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        order: order::Orders,
    },
    /// `dls(first, back, last, fwd)`: objects c₁ … cₙ of `strukt`, n ≥ 2, c₁ = first,
    /// cₙ = last, c₁.prev = back, cᵢ.next = cᵢ₊₁ and cᵢ₊₁.prev = cᵢ, cₙ.next = fwd;
    /// every object's integer field `f` is one of `ks` for each `(f, ks)` of `data`;
    /// their other fields are unknown.
    Dls {
        strukt: StructId,
        next: usize,
        prev: usize,
        first: Id,
        back: Val,
        last: Id,
        fwd: Val,
        #[serde(default)]
        data: Facts,
        /// The links back are field addresses: cᵢ₊₁.prev = &cᵢ.next (glibc's LIST and
        /// TAILQ `le_prev`/`tqe_prev`, the kernel's `hlist` `pprev`), and `back` is
        /// what c₁.prev holds.
        #[serde(default)]
        by_field: bool,
        /// The column of the segment's length n in the state's [`Counts`] (0, and
        /// meaningless, in a state without counts).
        #[serde(default)]
        len: u32,
        /// What every object points to and owns besides its links ([`cells`]).
        #[serde(default, skip_serializing_if = "Cells::is_empty")]
        cells: Cells,
        /// Where along the segment its integer fields' values are ([`order`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        order: order::Orders,
    },
}

/// The value a doubly-linked segment's `prev` link holds for the previous object `x`:
/// `x`, or `&x->next` where the links back are field addresses.
pub fn back_link(by_field: bool, next: usize, x: Id) -> Val {
    if by_field {
        Val::Field(x, next as u32)
    } else {
        Val::Id(x)
    }
}

/// The previous object a `prev` link `v` names (the inverse of [`back_link`]).
pub fn back_target(by_field: bool, next: usize, v: Val) -> Option<Id> {
    match (by_field, v) {
        (false, Val::Id(x)) => Some(x),
        (true, Val::Field(x, f)) if f as usize == next => Some(x),
        _ => None,
    }
}

impl Atom {
    /// The address of its first object (where a chain of pieces enters it).
    pub fn start(&self) -> Id {
        match self {
            Atom::Pt { at, .. } | Atom::Block { at, .. } => *at,
            Atom::Ls { from, .. } => *from,
            Atom::Dls { first, .. } => *first,
        }
    }
    /// The ids this atom allocates (an object at that address belongs to it).
    pub fn addresses(&self) -> impl Iterator<Item = Id> {
        let (a, b) = match self {
            Atom::Pt { at, .. } | Atom::Block { at, .. } => (*at, None),
            Atom::Ls { from, .. } => (*from, None),
            Atom::Dls { first, last, .. } => (*first, Some(*last)),
        };
        std::iter::once(a).chain(b)
    }
    /// The values the atom stores (pointers out of its objects), in a fixed order.
    pub fn values(&self) -> Vec<Val> {
        match self {
            Atom::Pt { fields, .. } => fields.clone(),
            Atom::Block { .. } => Vec::new(),
            Atom::Ls { to, cells, .. } => std::iter::once(*to).chain(cells.values()).collect(),
            Atom::Dls {
                back, fwd, cells, ..
            } => [*back, *fwd].into_iter().chain(cells.values()).collect(),
        }
    }
    /// The struct type of its objects (`None` for a block).
    pub fn strukt(&self) -> Option<StructId> {
        match self {
            Atom::Pt { strukt, .. } | Atom::Ls { strukt, .. } | Atom::Dls { strukt, .. } => {
                Some(*strukt)
            }
            Atom::Block { .. } => None,
        }
    }
    /// Applies `f` to every id in the atom (addresses and values).
    fn rename(&mut self, f: &mut impl FnMut(Id) -> Val) {
        let id = |i: &mut Id, f: &mut dyn FnMut(Id) -> Val| {
            if let Val::Id(j) = f(*i) {
                *i = j;
            }
        };
        let val = |v: &mut Val, f: &mut dyn FnMut(Id) -> Val| {
            *v = v.map_id(f);
        };
        match self {
            Atom::Pt { at, fields, .. } => {
                id(at, f);
                fields.iter_mut().for_each(|v| val(v, f));
            }
            Atom::Block { at, .. } => id(at, f),
            Atom::Ls {
                from, to, cells, ..
            } => {
                id(from, f);
                val(to, f);
                cells.common.iter_mut().for_each(|p| val(&mut p.1, f));
                // a value renamed away (an id no atom allocates) says nothing
                cells.common.retain(|p| p.1 != Val::Unknown);
            }
            Atom::Dls {
                first,
                back,
                last,
                fwd,
                cells,
                ..
            } => {
                id(first, f);
                val(back, f);
                id(last, f);
                val(fwd, f);
                cells.common.iter_mut().for_each(|p| val(&mut p.1, f));
                // a value renamed away (an id no atom allocates) says nothing
                cells.common.retain(|p| p.1 != Val::Unknown);
            }
        }
    }
}

/// At most this many atoms in a state; a larger one is ⊤ (keeps the domain finite
/// where folding does not apply, e.g. trees).
pub const MAX_ATOMS: usize = 24;

/// Ids a certificate's states may use are below this (states made by the analysis
/// are canonical: their ids are below the number of values they name).
pub const MAX_ID: Id = 1 << 16;

/// A symbolic heap: see the module documentation for what it represents.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SymHeap {
    /// ⊤: every state (the domain gave up).
    pub top: bool,
    /// The pointer variables whose value is not `Unknown`, ascending.
    pub vars: Vec<(VarId, Val)>,
    /// The spatial part, sorted.
    pub atoms: Vec<Atom>,
    /// Disequalities (`a < b`, sorted), between ids or an id and NULL.
    pub neq: Vec<(Val, Val)>,
    /// The counted integer variables and the segments' lengths, related by affine
    /// equalities (`None`: no variable is counted, lengths are not kept).
    #[serde(default)]
    pub counts: Option<Counts>,
}

impl SymHeap {
    /// The state where every pointer is unknown and nothing is allocated.
    pub fn initial() -> SymHeap {
        SymHeap {
            top: false,
            vars: Vec::new(),
            atoms: Vec::new(),
            neq: Vec::new(),
            counts: None,
        }
    }
    /// ⊤.
    pub fn top() -> SymHeap {
        SymHeap {
            top: true,
            ..SymHeap::initial()
        }
    }
    /// The value of variable `x` (of a counted one: the integer its counts fix, if
    /// any).
    pub fn get(&self, x: VarId) -> Val {
        if let Some(col) = self.int_col(x) {
            return self.counted_value(col).map_or(Val::Unknown, Val::Int);
        }
        match self.vars.binary_search_by_key(&x, |p| p.0) {
            Ok(i) => self.vars[i].1,
            Err(_) => Val::Unknown,
        }
    }
    /// Sets variable `x` to `v` (a counted one: in its counts).
    pub fn set(&mut self, x: VarId, v: Val) {
        if let Some(col) = self.int_col(x) {
            self.set_counted(col, v);
            return;
        }
        match (self.vars.binary_search_by_key(&x, |p| p.0), v) {
            (Ok(i), Val::Unknown) => {
                self.vars.remove(i);
            }
            (Ok(i), v) => self.vars[i].1 = v,
            (Err(_), Val::Unknown) => {}
            (Err(i), v) => self.vars.insert(i, (x, v)),
        }
    }
    /// An id used nowhere in the state.
    pub fn fresh(&self) -> Id {
        let mut m = 0;
        let mut see = |v: Val| {
            if let Some(i) = v.base() {
                m = m.max(i + 1);
            }
        };
        self.vars.iter().for_each(|p| see(p.1));
        for a in &self.atoms {
            a.addresses().for_each(|i| see(Val::Id(i)));
            a.values().into_iter().for_each(&mut see);
        }
        for &(a, b) in &self.neq {
            see(a);
            see(b);
        }
        m
    }
    /// The index of the atom allocating `i`.
    pub fn atom_at(&self, i: Id) -> Option<usize> {
        self.atoms
            .iter()
            .position(|a| a.addresses().any(|j| j == i))
    }
    /// Whether an atom allocates `i`.
    pub fn allocated(&self, i: Id) -> bool {
        self.atom_at(i).is_some()
    }
    /// Whether the state proves `a ≠ b` (both allocated, NULL and an allocated id, or
    /// a recorded disequality).
    pub fn distinct(&self, a: Val, b: Val) -> bool {
        match (a, b) {
            (Val::Unknown, _) | (_, Val::Unknown) => false,
            (Val::Int(x), Val::Int(y)) => x != y,
            (Val::Int(_), _) | (_, Val::Int(_)) => false,
            _ if a == b => false,
            (Val::Null, Val::Id(i)) | (Val::Id(i), Val::Null) => {
                self.allocated(i) || self.neq.contains(&ordered(a, b))
            }
            (Val::Id(i), Val::Id(j)) => {
                (self.allocated(i) && self.allocated(j)) || self.neq.contains(&ordered(a, b))
            }
            (Val::Null, Val::Null) => false,
            // a field of an allocated object is no NULL; fields of two distinct
            // allocated objects, or two fields of one object, differ
            (Val::Null, Val::Field(i, _)) | (Val::Field(i, _), Val::Null) => self.allocated(i),
            (Val::Field(i, f), Val::Field(j, g)) => {
                (i == j && f != g) || (i != j && self.allocated(i) && self.allocated(j))
            }
            (Val::Id(j), Val::Field(i, _)) | (Val::Field(i, _), Val::Id(j)) => {
                i != j && self.allocated(i) && self.allocated(j)
            }
        }
    }
    /// Replaces every occurrence of id `i` by `v` (an equality learned by an
    /// assumption); `None` when the result is contradictory (an allocated id equal to
    /// NULL or to another allocated id, a disequality between equal values).
    pub fn substitute(mut self, i: Id, v: Val) -> Option<SymHeap> {
        if let Val::Id(j) = v {
            if i == j {
                return Some(self);
            }
            if self.allocated(i) && self.allocated(j) {
                return None;
            }
        } else if self.allocated(i) {
            return None;
        }
        let mut f = |k: Id| if k == i { v } else { Val::Id(k) };
        for p in &mut self.vars {
            p.1 = p.1.map_id(&mut f);
        }
        self.vars.retain(|p| p.1 != Val::Unknown);
        for a in &mut self.atoms {
            a.rename(&mut f);
        }
        let mut neq = Vec::with_capacity(self.neq.len());
        for &(a, b) in &self.neq {
            let (a, b) = (subst_val(a, i, v), subst_val(b, i, v));
            if a == b {
                return None;
            }
            neq.push(ordered(a, b));
        }
        self.neq = neq;
        Some(self)
    }
    /// Records `a ≠ b` (no effect for unknown values); `None` if `a == b`.
    pub fn add_neq(mut self, a: Val, b: Val) -> Option<SymHeap> {
        if a == b {
            return None;
        }
        if a != Val::Unknown && b != Val::Unknown && !self.distinct(a, b) {
            self.neq.push(ordered(a, b));
        }
        Some(self)
    }

    /// Number of references to each id as a value (variables, fields, segment ends,
    /// disequalities); addresses do not count.
    pub fn refcounts(&self) -> HashMap<Id, usize> {
        let mut rc: HashMap<Id, usize> = HashMap::new();
        let mut see = |v: Val| {
            if let Some(i) = v.base() {
                *rc.entry(i).or_default() += 1;
            }
        };
        self.vars.iter().for_each(|p| see(p.1));
        for a in &self.atoms {
            a.values().into_iter().for_each(&mut see);
        }
        for &(a, b) in &self.neq {
            see(a);
            see(b);
        }
        rc
    }

    /// The canonical form: drops atoms no variable reaches, disequalities over ids
    /// used nowhere else and disequalities the atoms imply, turns ids that are
    /// referenced once and constrained by nothing into `Unknown`, and numbers the ids
    /// in the order a traversal from the variables (ascending) meets them. Isomorphic
    /// states get equal canonical forms.
    pub fn canonical(mut self) -> SymHeap {
        if self.top {
            return SymHeap::top();
        }
        for a in &mut self.atoms {
            match a {
                Atom::Pt { fields, data, .. } => normalize_pt(fields, data),
                Atom::Ls { data, order, .. } | Atom::Dls { data, order, .. } => {
                    order::normalize(data, order)
                }
                Atom::Block { .. } => {}
            }
        }
        // reachable atoms
        let mut seen_atom = vec![false; self.atoms.len()];
        let mut order: Vec<Id> = Vec::new();
        let mut named: HashMap<Id, Id> = HashMap::new();
        let mut queue = std::collections::VecDeque::new();
        let visit = |v: Val,
                     named: &mut HashMap<Id, Id>,
                     order: &mut Vec<Id>,
                     queue: &mut std::collections::VecDeque<Id>| {
            if let Some(i) = v.base() {
                if let std::collections::hash_map::Entry::Vacant(e) = named.entry(i) {
                    e.insert(order.len() as Id);
                    order.push(i);
                    queue.push_back(i);
                }
            }
        };
        let by_addr: HashMap<Id, usize> = self
            .atoms
            .iter()
            .enumerate()
            .flat_map(|(k, a)| a.addresses().map(move |i| (i, k)))
            .collect();
        for p in &self.vars {
            visit(p.1, &mut named, &mut order, &mut queue);
            while let Some(i) = queue.pop_front() {
                let Some(&k) = by_addr.get(&i) else {
                    continue;
                };
                if seen_atom[k] {
                    continue;
                }
                seen_atom[k] = true;
                let a = &self.atoms[k];
                for j in a.addresses() {
                    visit(Val::Id(j), &mut named, &mut order, &mut queue);
                }
                for v in a.values() {
                    visit(v, &mut named, &mut order, &mut queue);
                }
            }
        }
        let mut atoms: Vec<Atom> = std::mem::take(&mut self.atoms)
            .into_iter()
            .zip(seen_atom)
            .filter_map(|(a, s)| s.then_some(a))
            .collect();
        // ids referenced once, not allocated, in no disequality: any value
        self.atoms = atoms.clone();
        let rc = self.refcounts();
        let in_neq = |i: Id| {
            self.neq
                .iter()
                .any(|&(a, b)| a.base() == Some(i) || b.base() == Some(i))
        };
        let unknown: std::collections::HashSet<Id> = order
            .iter()
            .copied()
            .filter(|&i| rc.get(&i) == Some(&1) && !by_addr.contains_key(&i) && !in_neq(i))
            .collect();
        // dense numbers in traversal order, for the ids that stay
        let named: HashMap<Id, Id> = order
            .iter()
            .filter(|i| !unknown.contains(i))
            .enumerate()
            .map(|(n, &i)| (i, n as Id))
            .collect();
        let mut ren = |i: Id| -> Val {
            if unknown.contains(&i) {
                Val::Unknown
            } else {
                named.get(&i).map_or(Val::Unknown, |&j| Val::Id(j))
            }
        };
        for a in &mut atoms {
            a.rename(&mut ren);
        }
        let vars: Vec<(VarId, Val)> = self
            .vars
            .iter()
            .map(|&(x, v)| (x, v.map_id(&mut ren)))
            .filter(|p| p.1 != Val::Unknown)
            .collect();
        atoms.sort();
        let mut out = SymHeap {
            top: false,
            vars,
            atoms,
            neq: Vec::new(),
            counts: self.counts.take(),
        };
        out.renumber_columns();
        let mut neq: Vec<(Val, Val)> = Vec::new();
        for &(a, b) in &self.neq {
            let r = |v: Val| match v {
                Val::Id(i) if named.contains_key(&i) && !unknown.contains(&i) => {
                    Some(Val::Id(named[&i]))
                }
                Val::Field(i, f) if named.contains_key(&i) && !unknown.contains(&i) => {
                    Some(Val::Field(named[&i], f))
                }
                Val::Id(_) | Val::Field(..) | Val::Unknown | Val::Int(_) => None,
                Val::Null => Some(Val::Null),
            };
            if let (Some(a), Some(b)) = (r(a), r(b)) {
                if !out.distinct(a, b) {
                    neq.push(ordered(a, b));
                }
            }
        }
        neq.sort();
        neq.dedup();
        out.neq = neq;
        out
    }

    /// Checks that a state read from a certificate is well formed for `prog`: every
    /// variable a pointer, fields and links of the right struct and kind, every atom's
    /// addresses distinct. Returns the first problem.
    pub fn validate(&self, prog: &Program) -> Result<(), String> {
        let mut ids = self
            .vars
            .iter()
            .map(|p| p.1)
            .chain(self.neq.iter().flat_map(|p| [p.0, p.1]));
        if ids.any(|v| v.base().is_some_and(|i| i >= MAX_ID))
            || self.atoms.iter().any(|a| {
                a.addresses().any(|i| i >= MAX_ID)
                    || a.values()
                        .iter()
                        .any(|v| v.base().is_some_and(|i| i >= MAX_ID))
            })
        {
            return Err(format!("an id is not below {MAX_ID}"));
        }
        let mut last = None;
        for &(x, _) in &self.vars {
            let Some(var) = prog.vars.get(x) else {
                return Err(format!("variable {x} does not exist"));
            };
            let v = self.get(x);
            let int = matches!(v, Val::Int(_));
            if (var.ty.is_ptr() && int)
                || (var.ty.is_int() && !int)
                || !(var.ty.is_ptr() || var.ty.is_int())
            {
                return Err(format!(
                    "variable {} holds a value of another type",
                    var.name
                ));
            }
            if last.is_some_and(|l| l >= x) {
                return Err("variables not ascending".into());
            }
            last = Some(x);
        }
        let is_ptr_field = |s: StructId, f: usize| {
            prog.structs
                .get(s)
                .and_then(|d| d.fields.get(f))
                .is_some_and(|f| f.ty.pointee_struct() == Some(s))
        };
        let mut addrs = std::collections::HashSet::new();
        for a in &self.atoms {
            match a {
                Atom::Pt {
                    strukt,
                    fields,
                    data,
                    ..
                } => {
                    check_data(prog, *strukt, data)?;
                    let mut norm = (fields.clone(), data.clone());
                    normalize_pt(&mut norm.0, &mut norm.1);
                    if norm != (fields.clone(), data.clone()) {
                        return Err("an object's value set is not in normal form".into());
                    }
                    let Some(d) = prog.structs.get(*strukt) else {
                        return Err(format!("struct {strukt} does not exist"));
                    };
                    if fields.len() != d.fields.len() {
                        return Err(format!("struct {} has {} fields", d.name, d.fields.len()));
                    }
                    for (f, v) in d.fields.iter().zip(fields) {
                        let int = matches!(v, Val::Int(_));
                        if (f.ty.is_ptr() && int) || (!f.ty.is_ptr() && !int && *v != Val::Unknown)
                        {
                            return Err(format!("field {} holds a value of another type", f.name));
                        }
                    }
                }
                Atom::Block { .. } => {}
                Atom::Ls {
                    strukt,
                    link,
                    data,
                    cells,
                    order,
                    ..
                } => {
                    if !is_ptr_field(*strukt, *link) {
                        return Err("a segment's link is no field to its own struct".into());
                    }
                    check_data(prog, *strukt, data)?;
                    order::check(data, order)?;
                    cells::validate(prog, *strukt, &[*link], cells, 0)?;
                }
                Atom::Dls {
                    strukt,
                    next,
                    prev,
                    data,
                    by_field,
                    cells,
                    order,
                    ..
                } => {
                    let prev_ok = if *by_field {
                        fold::back_field_links(prog, *strukt).contains(prev)
                    } else {
                        is_ptr_field(*strukt, *prev)
                    };
                    if next == prev || !is_ptr_field(*strukt, *next) || !prev_ok {
                        return Err("a segment's links are no two fields to its own struct".into());
                    }
                    check_data(prog, *strukt, data)?;
                    order::check(data, order)?;
                    cells::validate(prog, *strukt, &[*next, *prev], cells, 0)?;
                }
            }
            for i in a.addresses() {
                if !addrs.insert(i) {
                    return Err(format!("id {i} is allocated twice"));
                }
            }
        }
        for &(a, b) in &self.neq {
            if a >= b || a == Val::Unknown || b == Val::Unknown {
                return Err("malformed disequality".into());
            }
        }
        counts::validate(prog, self)
    }

    /// A readable rendering (`x=#0 ; #0↦{next:#1} * ls[next](#1, NULL) ; #1≠NULL`).
    pub fn render(&self, prog: &Program) -> String {
        if self.top {
            return "⊤".into();
        }
        let v = |v: &Val| match v {
            Val::Null => "NULL".to_string(),
            Val::Unknown => "?".to_string(),
            Val::Id(i) => format!("#{i}"),
            Val::Field(i, f) => format!("&#{i}.{f}"),
            Val::Int(k) => k.to_string(),
        };
        let field = |s: StructId, f: usize| {
            prog.structs
                .get(s)
                .and_then(|d| d.fields.get(f))
                .map_or(format!("f{f}"), |d| d.name.clone())
        };
        let orders = |s: StructId, os: &order::Orders| {
            let r: Vec<String> = os.iter().map(|o| o.render(&field(s, o.field))).collect();
            if r.is_empty() {
                String::new()
            } else {
                format!("⟨{}⟩", r.join(","))
            }
        };
        let facts = |s: StructId, data: &Facts| {
            let fs: Vec<String> = data
                .iter()
                .map(|(f, ks)| {
                    let ks: Vec<String> = ks.iter().map(|k| k.to_string()).collect();
                    format!("{}∈{{{}}}", field(s, *f), ks.join(","))
                })
                .collect();
            if fs.is_empty() {
                String::new()
            } else {
                format!("[{}]", fs.join(","))
            }
        };
        let vars: Vec<String> = self
            .vars
            .iter()
            .map(|(x, val)| {
                let name = prog
                    .vars
                    .get(*x)
                    .map_or(format!("v{x}"), |d| d.name.clone());
                format!("{name}={}", v(val))
            })
            .collect();
        let atoms: Vec<String> = self
            .atoms
            .iter()
            .map(|a| match a {
                Atom::Pt {
                    at,
                    strukt,
                    fields,
                    heap,
                    data,
                } => {
                    let fs: Vec<String> = fields
                        .iter()
                        .enumerate()
                        .filter(|(_, x)| **x != Val::Unknown)
                        .map(|(f, x)| format!("{}:{}", field(*strukt, f), v(x)))
                        .collect();
                    let kind = if *heap { "" } else { "stack " };
                    format!("{kind}#{at}↦{{{}}}{}", fs.join(","), facts(*strukt, data))
                }
                Atom::Block { at, .. } => format!("#{at}↦□"),
                Atom::Ls {
                    strukt,
                    link,
                    from,
                    to,
                    data,
                    cells,
                    order,
                    ..
                } => format!(
                    "ls[{}](#{from},{}){}{}{}",
                    field(*strukt, *link),
                    v(to),
                    facts(*strukt, data),
                    orders(*strukt, order),
                    cells::render(prog, *strukt, cells)
                ),
                Atom::Dls {
                    strukt,
                    next,
                    prev,
                    first,
                    back,
                    last,
                    fwd,
                    data,
                    by_field,
                    cells,
                    order,
                    ..
                } => format!(
                    "dls[{},{}{}](#{first},{},#{last},{}){}{}{}",
                    field(*strukt, *next),
                    if *by_field { "&" } else { "" },
                    field(*strukt, *prev),
                    v(back),
                    v(fwd),
                    facts(*strukt, data),
                    orders(*strukt, order),
                    cells::render(prog, *strukt, cells)
                ),
            })
            .collect();
        let neq: Vec<String> = self
            .neq
            .iter()
            .map(|(a, b)| format!("{}≠{}", v(a), v(b)))
            .collect();
        format!(
            "{} ; {} ; {}{}",
            vars.join(" "),
            atoms.join(" * "),
            neq.join(" "),
            counts::render(prog, self)
        )
    }
}

/// An object's value sets in normal form: a set of one value is that value, and a
/// field with a known value or no values has no set.
pub fn normalize_pt(fields: &mut [Val], data: &mut Facts) {
    data.retain(|(f, ks)| match (fields.get(*f), ks.as_slice()) {
        (Some(Val::Unknown), [k]) => {
            fields[*f] = Val::Int(*k);
            false
        }
        (Some(Val::Unknown), ks) => !ks.is_empty(),
        _ => false,
    });
}

/// A segment's integer facts name integer fields of its struct, ascending, once.
fn check_data(prog: &Program, strukt: StructId, data: &Facts) -> Result<(), String> {
    let int_field = |f: usize| {
        prog.structs
            .get(strukt)
            .and_then(|d| d.fields.get(f))
            .is_some_and(|f| f.ty.is_int())
    };
    let sorted = |ks: &Vec<i64>| !ks.is_empty() && ks.windows(2).all(|w| w[0] < w[1]);
    if data.iter().any(|(f, ks)| !int_field(*f) || !sorted(ks))
        || data.windows(2).any(|w| w[0].0 >= w[1].0)
    {
        return Err("a segment's integer facts name no integer fields (ascending)".into());
    }
    Ok(())
}

/// The pair in ascending order.
pub fn ordered(a: Val, b: Val) -> (Val, Val) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

fn subst_val(x: Val, i: Id, v: Val) -> Val {
    x.map_id(&mut |k| if k == i { v } else { Val::Id(k) })
}
