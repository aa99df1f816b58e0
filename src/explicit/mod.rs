//! Explicit-heap analysis (paper §2.2): abstract states that store concrete
//! instances of data structures, with ⊤ for unknown values.
//!
//! An [`ExplicitState`] `H = (v, h)` maps every program variable to a [`Value`]
//! (an integer, a pointer, or ⊤) and every valid object address to a [`Cell`]
//! (one value per flattened scalar field). Pointers are `Ptr { obj, off }`: the
//! object address and a byte offset into it, so `&p->f` ([`crate::cfa::Op::FieldAddr`]),
//! `*q` ([`crate::cfa::Op::LoadIndirect`]) and `*q = e`
//! ([`crate::cfa::Op::StoreIndirect`]) are exact (Linux hlist `pprev` points to a
//! `next` field inside the previous node). NULL is the integer 0.
//!
//! - [`post`]: the abstract post for every [`crate::cfa::Op`] and [`crate::cfa::Step`]
//!   under a precision Θ (the set of tracked variables), with dereference errors as
//!   [`ExplicitError`] results;
//! - [`depth`]: `depth(H, a)`, `depth(H)` and the sample threshold of BuildART's
//!   condition (c);
//! - [`invariants`]: the data-structure invariants with stable names (table in
//!   `src/explicit/README.md`);
//! - [`infer`]: field-role inference and the choice of the data structure;
//! - [`sample`]: the sampler that explores a program explicitly and collects heaps;
//! - [`render`]: text / DOT / JSON output (`shapemc samples`);
//! - [`cpa`]: the domain as a [`crate::cpa::Cpa`] ([`ExplicitCpa`], precision Θ =
//!   [`ExplicitPrec`]) for the ART.
//!
//! States are kept in a canonical form (see [`ExplicitState::canonicalize`]): addresses
//! are renamed 1, 2, ... in BFS order from the variables and cells unreachable from
//! every variable are dropped, so `==` and `Hash` identify states up to address renaming.

pub mod cpa;
pub mod depth;
#[cfg(test)]
mod headed_tests;
pub mod infer;
pub mod invariants;
#[cfg(test)]
mod leak_tests;
pub mod post;
pub mod render;
pub mod sample;
pub mod vars;

pub use cpa::{ExplicitCpa, ExplicitPrec};
pub use depth::{SampleCollector, SampleThreshold};
pub use infer::{classify, Classification, DataStructure};
pub use invariants::{Binding, CellScope, Invariant, Verdict};
pub use post::{Domain, ExplicitError};
pub use sample::{sample_program, Sample, SampleReport, SamplerConfig};
pub use vars::Vars;

use crate::cfa::{FieldRef, Program, StructId, Ty, VarId};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;

/// An object address in an explicit heap (1, 2, ... in canonical form; never 0,
/// which is NULL).
pub type Addr = u32;

/// A value of a variable or a field: an integer (NULL is `Int(0)`), a pointer into
/// an object (`off` is a byte offset, 0 for a pointer to the object itself), or ⊤.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Value {
    /// Unknown (any value).
    Top,
    /// A known integer (also NULL = 0 for pointers).
    Int(i64),
    /// A pointer to byte `off` of object `obj` (`obj` may be freed: dangling).
    Ptr { obj: Addr, off: u32 },
}

impl Value {
    /// The null pointer (the integer 0).
    pub const NULL: Value = Value::Int(0);

    /// A pointer to the start of object `obj`.
    pub fn ptr(obj: Addr) -> Value {
        Value::Ptr { obj, off: 0 }
    }
    /// True for ⊤.
    pub fn is_top(self) -> bool {
        matches!(self, Value::Top)
    }
    /// True for NULL (`Int(0)`).
    pub fn is_null(self) -> bool {
        self == Value::NULL
    }
    /// The object this value points to the start of (`off == 0`), if any.
    pub fn obj(self) -> Option<Addr> {
        match self {
            Value::Ptr { obj, off: 0 } => Some(obj),
            _ => None,
        }
    }
    /// The object this value points into (any offset), if any.
    pub fn obj_any(self) -> Option<Addr> {
        match self {
            Value::Ptr { obj, .. } => Some(obj),
            _ => None,
        }
    }
    /// Renames the address of a pointer.
    fn map_addr(self, f: impl FnOnce(Addr) -> Addr) -> Value {
        match self {
            Value::Ptr { obj, off } => Value::Ptr { obj: f(obj), off },
            v => v,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Top => write!(f, "⊤"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Ptr { obj, off: 0 } => write!(f, "{obj}"),
            Value::Ptr { obj, off } => write!(f, "{obj}+{off}"),
        }
    }
}

/// The type of the object a cell stores.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CellTy {
    /// A struct: one value per flattened field of [`crate::cfa::StructDef::fields`].
    Struct(StructId),
    /// A single scalar (e.g. `malloc(sizeof(int))` or an address-taken scalar); one
    /// value at offset 0. The `Ty` is stored in [`crate::cfa::Program`] form.
    Scalar(ScalarTy),
    /// An object of unknown layout (`void`): no fields; every access is an error.
    Opaque,
}

/// A scalar type of a [`CellTy::Scalar`] cell: an integer or a pointer.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ScalarTy {
    Int { bits: u8, signed: bool },
    Ptr,
}

/// Where an object was allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CellKind {
    /// `malloc`/`calloc`: may be freed.
    Heap,
    /// A stack or static object: `free` on it is an error.
    Stack,
}

/// A structure cell: the memory content of one valid object.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Cell {
    /// What the object is.
    pub ty: CellTy,
    /// Where it was allocated.
    pub kind: CellKind,
    /// One value per field (for structs, in the order of `StructDef::fields`).
    pub fields: Vec<Value>,
}

impl Cell {
    /// The struct type of the cell, if it is a struct.
    pub fn strukt(&self) -> Option<StructId> {
        match self.ty {
            CellTy::Struct(s) => Some(s),
            _ => None,
        }
    }
}

/// An explicit heap `H = (v, h)`: one value per program variable and a finite map
/// from valid addresses to cells. Produced by [`Domain`]; always canonical there.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ExplicitState {
    /// `v`: indexed by [`VarId`] (shared copy-on-write, see [`Vars`]).
    pub vars: Vars,
    /// `h`: the valid objects.
    pub heap: BTreeMap<Addr, Cell>,
    /// Leak tracking (only in the states of [`ExplicitCpa`] for a program with leak
    /// checks, [`crate::cfa::Program::add_leak_checks`]; `None` everywhere else): a
    /// mask of the kinds of heap objects ([`leak_bit`]) that may have escaped; for a
    /// kind whose bit is clear, every live heap object of that kind in the represented
    /// concrete states is a [`CellKind::Heap`] cell of `heap` and none became
    /// unreachable. A bit is set when a heap cell of the kind is dropped by
    /// [`ExplicitState::canonicalize`] or one is allocated into an untracked variable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leak: Option<u64>,
}

impl ExplicitState {
    /// `H0`: every variable ⊤, empty heap (represents all program states).
    pub fn initial(prog: &Program) -> ExplicitState {
        ExplicitState {
            vars: Vars::new(vec![Value::Top; prog.vars.len()]),
            heap: BTreeMap::new(),
            leak: None,
        }
    }

    /// Records that a live heap object allocated as `of` may no longer be represented
    /// (see [`ExplicitState::leak`]).
    pub fn lose_heap(&mut self, of: Option<StructId>) {
        if let Some(l) = &mut self.leak {
            *l |= leak_bit(of);
        }
    }

    /// Whether this state proves that no concrete state it represents fails the leak
    /// check `check`: every live heap object is a cell here (`leak == Some(false)`),
    /// and there is none ([`LeakCheck::Unfreed`]) or none is unreachable (canonical
    /// states hold only reachable cells, and known pointer values are exact).
    pub fn proves_no_leak(&self, check: crate::cfa::LeakCheck, of: Option<StructId>) -> bool {
        if self.leak.is_none_or(|m| m & leak_bit(of) != 0) {
            return false;
        }
        let of_kind = |c: &Cell| c.kind == CellKind::Heap && leak_bit(c.strukt()) == leak_bit(of);
        match check {
            crate::cfa::LeakCheck::Unfreed => !self.heap.values().any(of_kind),
            crate::cfa::LeakCheck::Unreachable => {
                let roots: Vec<VarId> = (0..self.vars.len()).collect();
                let reached: std::collections::BTreeSet<Addr> =
                    self.reachable_from(&roots).into_iter().collect();
                self.heap
                    .iter()
                    .all(|(a, c)| !of_kind(c) || reached.contains(a))
            }
        }
    }

    /// The value of a variable (⊤ for an out-of-range id).
    pub fn var(&self, x: VarId) -> Value {
        self.vars.get(x).copied().unwrap_or(Value::Top)
    }

    /// The object variable `x` points to the start of, if it is valid (allocated).
    pub fn points_to(&self, x: VarId) -> Option<Addr> {
        self.var(x).obj().filter(|a| self.heap.contains_key(a))
    }

    /// The value of field `field` of the cell at `a`, if `a` is a valid object of
    /// struct type `field.strukt`.
    pub fn field(&self, a: Addr, field: FieldRef) -> Option<Value> {
        let c = self.heap.get(&a)?;
        if c.ty != CellTy::Struct(field.strukt) {
            return None;
        }
        c.fields.get(field.field).copied()
    }

    /// Addresses (valid objects) an object's fields point into, in field order.
    pub fn successors(&self, a: Addr) -> impl Iterator<Item = Addr> + '_ {
        self.heap
            .get(&a)
            .into_iter()
            .flat_map(|c| c.fields.iter())
            .filter_map(|v| v.obj_any())
            .filter(|b| self.heap.contains_key(b))
    }

    /// Valid objects reachable from the given variables along any pointer field
    /// (including the objects the variables point to), in BFS order.
    pub fn reachable_from(&self, roots: &[VarId]) -> Vec<Addr> {
        let mut seen = std::collections::BTreeSet::new();
        let mut order = Vec::new();
        let mut q = VecDeque::new();
        for &x in roots {
            if let Some(a) = self.var(x).obj_any() {
                if self.heap.contains_key(&a) && seen.insert(a) {
                    q.push_back(a);
                }
            }
        }
        while let Some(a) = q.pop_front() {
            order.push(a);
            for b in self.successors(a) {
                if seen.insert(b) {
                    q.push_back(b);
                }
            }
        }
        order
    }

    /// Cells of struct type `s` reachable from the given variables, with their
    /// addresses, in BFS order (what `HeapToShape` iterates over: one individual per
    /// cell, field values via [`Cell::fields`] / [`ExplicitState::field`]).
    pub fn cells_of_type(&self, s: StructId, roots: &[VarId]) -> Vec<(Addr, &Cell)> {
        self.reachable_from(roots)
            .into_iter()
            .filter_map(|a| self.heap.get(&a).map(|c| (a, c)))
            .filter(|(_, c)| c.ty == CellTy::Struct(s))
            .collect()
    }

    /// All cells of struct type `s`, in address order.
    pub fn all_cells_of_type(&self, s: StructId) -> Vec<(Addr, &Cell)> {
        self.heap
            .iter()
            .filter(|(_, c)| c.ty == CellTy::Struct(s))
            .map(|(a, c)| (*a, c))
            .collect()
    }

    /// Sets every variable not tracked by `tracked` to ⊤ (abstraction to a precision
    /// Θ(l)) and returns the canonical result.
    pub fn restrict(&self, tracked: &dyn Fn(VarId) -> bool) -> ExplicitState {
        let mut s = self.clone();
        s.vars
            .update(|x, v| if tracked(x) { v } else { Value::Top });
        s.canonicalize();
        s
    }

    /// Puts the state in canonical form: addresses renamed 1, 2, ... in BFS order
    /// from the variables (in [`VarId`] order, fields in layout order), dangling
    /// addresses included; cells unreachable from every variable are dropped (no
    /// later operation can observe them except through ⊤ pointers, which the post
    /// handles by havoc). Two states are equal up to address renaming iff their
    /// canonical forms are `==`.
    pub fn canonicalize(&mut self) {
        let mut map: HashMap<Addr, Addr> = HashMap::new();
        let mut q = VecDeque::new();
        let visit = |v: Value, map: &mut HashMap<Addr, Addr>, q: &mut VecDeque<Addr>| {
            if let Some(a) = v.obj_any() {
                if !map.contains_key(&a) {
                    let n = map.len() as Addr + 1;
                    map.insert(a, n);
                    q.push_back(a);
                }
            }
        };
        for &v in &self.vars {
            visit(v, &mut map, &mut q);
            while let Some(a) = q.pop_front() {
                if let Some(c) = self.heap.get(&a) {
                    for &fv in &c.fields {
                        visit(fv, &mut map, &mut q);
                    }
                }
            }
        }
        let rename = |v: Value| v.map_addr(|a| map[&a]);
        let mut heap = BTreeMap::new();
        let mut lost = Vec::new();
        for (a, c) in std::mem::take(&mut self.heap) {
            if c.kind == CellKind::Heap && !map.contains_key(&a) {
                lost.push(c.strukt());
            }
            if let Some(&n) = map.get(&a) {
                let fields = c.fields.iter().map(|&v| rename(v)).collect();
                heap.insert(
                    n,
                    Cell {
                        ty: c.ty,
                        kind: c.kind,
                        fields,
                    },
                );
            }
        }
        self.vars.update(|_, v| rename(v));
        self.heap = heap;
        for of in lost {
            self.lose_heap(of);
        }
    }

    /// A canonical copy (see [`ExplicitState::canonicalize`]).
    pub fn canonical(&self) -> ExplicitState {
        let mut s = self.clone();
        s.canonicalize();
        s
    }

    /// A fresh address: larger than every address in the heap or in any value.
    pub fn fresh_addr(&self) -> Addr {
        let mut m = self.heap.keys().next_back().copied().unwrap_or(0);
        let vals = self
            .vars
            .iter()
            .chain(self.heap.values().flat_map(|c| c.fields.iter()));
        for v in vals {
            if let Some(a) = v.obj_any() {
                m = m.max(a);
            }
        }
        m + 1
    }

    /// The coverage order `H ⊑ H'` (`self ⊑ other`): every concrete state of `self`
    /// is one of `other`. Decided by unification: there must be an injective renaming
    /// σ of the addresses `other` constrains (those reachable from its variables) into
    /// addresses of `self` such that every variable and every field of every reachable
    /// cell of `other` is ⊤ or equal (modulo σ) to the corresponding value in `self`,
    /// cells have the same type and kind, and valid/dangling addresses correspond.
    /// Sound; exact for states whose constrained part is fully known.
    pub fn leq(&self, other: &ExplicitState) -> bool {
        // the signatures first: they lie beside the pointers, the values behind them
        if !self.vars.may_be_below(&other.vars)
            || !leak_leq(self.leak, other.leak)
            || self.vars.len() != other.vars.len()
        {
            return false;
        }
        // equal states (the common case when explicit tracking is off or settled) need
        // no renaming: a comparison of the plain data decides
        if self == other {
            return true;
        }
        // a first pass without the maps: most pairs differ in a variable's integer
        // value or kind (the ART's covering check calls this for every pair at a
        // location); with as many ⊤ on both sides the signatures already compared the
        // keys, and the walk below checks them again
        let kinds_fit = self.vars.tops() == other.vars.tops()
            || self
                .vars
                .iter()
                .zip(&other.vars)
                .all(|(s, o)| match (s, o) {
                    (_, Value::Top) => true,
                    (Value::Int(a), Value::Int(b)) => a == b,
                    (Value::Ptr { off: a, .. }, Value::Ptr { off: b, .. }) => a == b,
                    _ => false,
                });
        if !kinds_fit {
            return false;
        }
        let mut fwd: FxHashMap<Addr, Addr> = FxHashMap::default(); // other -> self
        let mut bwd: FxHashMap<Addr, Addr> = FxHashMap::default(); // self -> other
        let mut q: VecDeque<(Addr, Addr)> = VecDeque::new();
        // Matches a value of `other` (o) against one of `self` (s).
        fn unify(
            s: Value,
            o: Value,
            fwd: &mut FxHashMap<Addr, Addr>,
            bwd: &mut FxHashMap<Addr, Addr>,
            q: &mut VecDeque<(Addr, Addr)>,
        ) -> bool {
            match (s, o) {
                (_, Value::Top) => true,
                (Value::Int(a), Value::Int(b)) => a == b,
                (Value::Ptr { obj: a, off: oa }, Value::Ptr { obj: b, off: ob }) => {
                    if oa != ob {
                        return false;
                    }
                    match (fwd.get(&b), bwd.get(&a)) {
                        (Some(&x), _) => x == a,
                        (None, Some(_)) => false,
                        (None, None) => {
                            fwd.insert(b, a);
                            bwd.insert(a, b);
                            q.push_back((b, a));
                            true
                        }
                    }
                }
                _ => false,
            }
        }
        for (&s, &o) in self.vars.iter().zip(&other.vars) {
            if !unify(s, o, &mut fwd, &mut bwd, &mut q) {
                return false;
            }
        }
        while let Some((b, a)) = q.pop_front() {
            match (self.heap.get(&a), other.heap.get(&b)) {
                (None, None) => {}
                (Some(cs), Some(co)) => {
                    if cs.ty != co.ty || cs.kind != co.kind || cs.fields.len() != co.fields.len() {
                        return false;
                    }
                    for (&s, &o) in cs.fields.iter().zip(&co.fields) {
                        if !unify(s, o, &mut fwd, &mut bwd, &mut q) {
                            return false;
                        }
                    }
                }
                _ => return false,
            }
        }
        // `other` claims every live heap object of a kind whose bit is clear is one of
        // its cells: so must every such heap cell of `self` be one it was matched with
        let Some(m) = other.leak else { return true };
        self.heap.iter().all(|(a, c)| {
            c.kind != CellKind::Heap || m & leak_bit(c.strukt()) != 0 || bwd.contains_key(a)
        })
    }

    /// Renders the state like the paper's Fig. 1(b): variables with known values,
    /// then one line per cell `addr: {field: value, ...}`.
    pub fn display<'a>(&'a self, prog: &'a Program) -> StateDisplay<'a> {
        StateDisplay { s: self, prog }
    }
}

/// The bit of the kind of heap object allocated as `of` in [`ExplicitState::leak`]:
/// struct types 0..63 have their own, all other kinds share bit 63.
pub fn leak_bit(of: Option<StructId>) -> u64 {
    match of {
        Some(s) if s < 63 => 1 << s,
        _ => 1 << 63,
    }
}

/// The order of the leak masks ([`ExplicitState::leak`]): subsets, all below `None`
/// (not tracked).
fn leak_leq(a: Option<u64>, b: Option<u64>) -> bool {
    match (a, b) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(a), Some(b)) => a & !b == 0,
    }
}

/// Display helper returned by [`ExplicitState::display`].
pub struct StateDisplay<'a> {
    s: &'a ExplicitState,
    prog: &'a Program,
}

impl fmt::Display for StateDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<String> = self
            .s
            .vars
            .iter()
            .enumerate()
            .filter(|(_, v)| !v.is_top())
            .map(|(x, v)| {
                let name = self.prog.vars.get(x).map_or("?", |v| v.name.as_str());
                format!("{name} = {}", value_str(self.prog, self.s, *v))
            })
            .collect();
        writeln!(f, "v: {{{}}}", known.join(", "))?;
        for (a, c) in &self.s.heap {
            writeln!(f, "{a}: {}", cell_str(self.prog, self.s, c))?;
        }
        Ok(())
    }
}

/// Renders a value; a pointer into a field of a valid struct cell is shown as
/// `&addr.field` (e.g. hlist `pprev: &2.next`), other values as by `Display`.
pub fn value_str(prog: &Program, h: &ExplicitState, v: Value) -> String {
    if let Value::Ptr { obj, off } = v {
        if off != 0 {
            let name = h
                .heap
                .get(&obj)
                .and_then(|c| c.strukt())
                .and_then(|s| prog.structs.get(s))
                .and_then(|d| d.fields.iter().find(|f| f.offset == off as u64));
            if let Some(fd) = name {
                return format!("&{obj}.{}", fd.name);
            }
        }
    }
    v.to_string()
}

/// Renders one cell of `h` as `{field: value, ...}`.
pub fn cell_str(prog: &Program, h: &ExplicitState, c: &Cell) -> String {
    let names: Vec<String> = match c.ty {
        CellTy::Struct(s) => prog
            .structs
            .get(s)
            .map(|d| d.fields.iter().map(|f| f.name.clone()).collect())
            .unwrap_or_default(),
        _ => vec!["*".to_string(); c.fields.len()],
    };
    let body: Vec<String> = c
        .fields
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let n = names.get(i).map_or("?", |s| s.as_str());
            format!("{n}: {}", value_str(prog, h, *v))
        })
        .collect();
    format!("{{{}}}", body.join(", "))
}

/// The cell type for an allocation of `pointee`.
pub(crate) fn cell_ty_of(pointee: &Ty) -> CellTy {
    match pointee {
        Ty::Struct(s) => CellTy::Struct(*s),
        Ty::Int { bits, signed } => CellTy::Scalar(ScalarTy::Int {
            bits: *bits,
            signed: *signed,
        }),
        Ty::Ptr(_) => CellTy::Scalar(ScalarTy::Ptr),
        Ty::Void => CellTy::Opaque,
    }
}

#[cfg(test)]
pub(crate) mod testutil;

#[cfg(test)]
mod tests;
