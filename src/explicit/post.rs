//! The abstract post of the explicit-heap domain for every CFA operation and
//! interprocedural step.
//!
//! Semantics (all results are canonical, see [`ExplicitState::canonicalize`]):
//! - reads of ⊤ give ⊤; arithmetic on known integers is exact in `i64` and wrapped
//!   to the destination's [`Ty::Int`] width on assignment (and at `Cast`s); anything
//!   involving ⊤ gives ⊤; division by zero and out-of-range shifts give ⊤;
//! - pointer comparisons are exact (distinct valid objects have distinct addresses; a
//!   pointer is never NULL), except that a dangling pointer compared with a pointer to
//!   another object gives ⊤ (the address may have been reused); ordering comparisons
//!   between different objects and integer arithmetic on pointers give ⊤;
//! - `Assume` on a known condition keeps or kills the state; on ⊤ it keeps the state
//!   (both directions are feasible), refining `x == c` / `!x` to `x := c` / `x := 0`
//!   when `x` is tracked;
//! - `Alloc` gives a fresh address; a heap allocation (unless `malloc_never_fails`)
//!   has a second successor in which the destination is NULL (order: non-NULL first);
//!   `malloc` fields are ⊤, `calloc` fields 0, stack objects ⊤;
//! - `free` removes the cell; `free(NULL)` is a no-op; `free` through a ⊤ pointer
//!   keeps the state (an over-approximation for reachability: later accesses through
//!   our pointers to the freed object are undefined behaviour anyway);
//! - a store through a ⊤ pointer havocs (sets to ⊤) the stored field in every cell of
//!   that struct type and the same-named embedded field (`outer.name`) of other structs
//!   (`StoreIndirect`: every scalar of the pointee type), because the pointer may alias
//!   any of them;
//! - a dereference of NULL, of a non-pointer integer, of a freed object, or at an
//!   offset without a field is an [`ExplicitError`], never a panic;
//! - precision Θ: a variable that is not tracked is set to ⊤ whenever it is assigned.

use super::{cell_ty_of, Addr, Cell, CellKind, CellTy, ExplicitState, ScalarTy, Value};
use crate::cfa::{
    Access, AllocKind, BinOp, EdgeId, Expr, FieldRef, Op, Program, Step, Ty, UnOp, VarId,
};
use serde::Serialize;
use std::fmt;

/// Why an explicit post could not be computed: the operation is undefined behaviour
/// on this state (or not an operation the domain can execute directly).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ExplicitError {
    /// Dereference (load/store/field address) of NULL through variable `ptr`.
    NullDeref { ptr: VarId },
    /// Dereference through `ptr`, whose value is an integer other than NULL.
    NotAPointer { ptr: VarId },
    /// Dereference of a freed object through `ptr`.
    UseAfterFree { ptr: VarId },
    /// Access through `ptr` at a byte offset where the object has no field of a
    /// fitting type (type confusion, opaque object).
    BadAccess { ptr: VarId, offset: u64 },
    /// `free(ptr)` on an object that was already freed.
    DoubleFree { ptr: VarId },
    /// `free(ptr)` on a non-heap object, an interior pointer or a non-pointer integer.
    InvalidFree { ptr: VarId },
    /// The edge or step cannot be executed as given (a `Call` edge must be executed as
    /// `Step::Enter`/`Step::Leave`; an `Enter`/`Leave` step needs a `Call` edge; an
    /// unknown edge id).
    BadStep(String),
}

impl fmt::Display for ExplicitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExplicitError::NullDeref { ptr } => write!(f, "NULL dereference through var {ptr}"),
            ExplicitError::NotAPointer { ptr } => {
                write!(f, "dereference of a non-pointer integer through var {ptr}")
            }
            ExplicitError::UseAfterFree { ptr } => write!(f, "use after free through var {ptr}"),
            ExplicitError::BadAccess { ptr, offset } => {
                write!(
                    f,
                    "no field at offset {offset} of the object var {ptr} points to"
                )
            }
            ExplicitError::DoubleFree { ptr } => write!(f, "double free through var {ptr}"),
            ExplicitError::InvalidFree { ptr } => write!(f, "invalid free through var {ptr}"),
            ExplicitError::BadStep(s) => write!(f, "bad step: {s}"),
        }
    }
}

impl std::error::Error for ExplicitError {}

/// Successor states of one post (0 when an `Assume` is infeasible, 2 for a heap
/// allocation that may fail: non-NULL first, then NULL).
pub type Successors = Vec<ExplicitState>;

/// The explicit-heap domain for one program.
#[derive(Clone, Copy, Debug)]
pub struct Domain<'p> {
    /// The program whose variables and structs the states describe.
    pub prog: &'p Program,
    /// When true, heap allocations never return NULL (`--malloc-never-fails`).
    pub malloc_never_fails: bool,
}

impl<'p> Domain<'p> {
    /// The domain for `prog`.
    pub fn new(prog: &'p Program, malloc_never_fails: bool) -> Domain<'p> {
        Domain {
            prog,
            malloc_never_fails,
        }
    }

    /// The domain for `prog` with `malloc_never_fails` taken from the program.
    pub fn for_program(prog: &'p Program) -> Domain<'p> {
        Domain::new(prog, prog.malloc_never_fails)
    }

    /// `H0`: all variables ⊤, empty heap.
    pub fn initial(&self) -> ExplicitState {
        ExplicitState::initial(self.prog)
    }

    /// Evaluates a pure expression (⊤ if it reads ⊤ or is not exactly computable).
    pub fn eval(&self, s: &ExplicitState, e: &Expr) -> Value {
        eval(s, e)
    }

    /// The abstract post of one step of an interprocedural path: `Edge` executes an
    /// intraprocedural edge, `Enter` binds the callee's parameters to the arguments
    /// (and resets the callee's locals to ⊤), `Leave` assigns the callee's
    /// `Function::ret` to the call's `ret` and resets the callee's variables to ⊤.
    /// The call stack is kept by the caller of this function.
    pub fn post_step(
        &self,
        s: &ExplicitState,
        step: Step,
        tracked: &dyn Fn(VarId) -> bool,
    ) -> Result<Successors, ExplicitError> {
        let edge_op = |e: EdgeId| {
            self.prog
                .graph
                .edge_weight(e)
                .map(|w| &w.op)
                .ok_or_else(|| ExplicitError::BadStep(format!("unknown edge {}", e.index())))
        };
        match step {
            Step::Edge(e) => self.post_op(s, edge_op(e)?, tracked),
            Step::Enter(e) | Step::Leave(e) => {
                let Op::Call { callee, args, ret } = edge_op(e)? else {
                    return Err(ExplicitError::BadStep(format!(
                        "edge {} is not a call",
                        e.index()
                    )));
                };
                let Some(f) = self.prog.functions.get(*callee) else {
                    return Err(ExplicitError::BadStep(format!("unknown callee {callee}")));
                };
                let mut t = s.clone();
                if matches!(step, Step::Enter(_)) {
                    let vals: Vec<Value> = args.iter().map(|a| eval(s, a)).collect();
                    for &x in f.params.iter().chain(&f.locals) {
                        set_top(&mut t, x);
                    }
                    if let Some(r) = f.ret {
                        set_top(&mut t, r);
                    }
                    let mut split = Vec::new();
                    for ((&p, &v), a) in f.params.iter().zip(&vals).zip(args) {
                        if v == Value::Top && a.is_boolean() && tracked(p) {
                            split.push(p);
                        }
                        self.assign(&mut t, p, v, tracked);
                    }
                    let mut out = vec![t];
                    for p in split {
                        out = out.into_iter().flat_map(|u| split_boolean(u, p)).collect();
                    }
                    return Ok(out);
                } else {
                    let v = f.ret.map_or(Value::Top, |r| s.var(r));
                    for &x in f.params.iter().chain(&f.locals) {
                        set_top(&mut t, x);
                    }
                    if let Some(r) = f.ret {
                        set_top(&mut t, r);
                    }
                    if let Some(r) = ret {
                        self.assign(&mut t, *r, v, tracked);
                    }
                }
                t.canonicalize();
                Ok(vec![t])
            }
        }
    }

    /// [`Domain::post_step`] without errors, for reachability analyses (a CPA): a
    /// NULL dereference ends the path (no successor; `&NULL->f` gives ⊤ instead), a
    /// dereference of a dangling, non-pointer or ill-typed pointer is executed as if
    /// the pointer were ⊤ (which also becomes ⊤), an invalid or double `free` keeps the
    /// state, and an ill-formed step has no successor (logged). Sound
    /// over-approximation of the concrete post in every case.
    pub fn post_sound(
        &self,
        s: &ExplicitState,
        step: Step,
        tracked: &dyn Fn(VarId) -> bool,
    ) -> Successors {
        match self.post_step(s, step, tracked) {
            Ok(v) => v,
            Err(ExplicitError::NullDeref { .. }) => {
                let op = match step {
                    Step::Edge(e) => self.prog.graph.edge_weight(e).map(|w| &w.op),
                    _ => None,
                };
                match op {
                    Some(Op::FieldAddr { dst, .. }) => {
                        let mut t = s.clone();
                        set_top(&mut t, *dst);
                        t.canonicalize();
                        vec![t]
                    }
                    _ => vec![],
                }
            }
            Err(
                ExplicitError::NotAPointer { ptr }
                | ExplicitError::UseAfterFree { ptr }
                | ExplicitError::BadAccess { ptr, .. },
            ) => {
                let mut t = s.clone();
                set_top(&mut t, ptr);
                self.post_step(&t, step, tracked).unwrap_or_else(|e| {
                    tracing::warn!("explicit post failed twice: {e}");
                    vec![]
                })
            }
            Err(ExplicitError::DoubleFree { .. } | ExplicitError::InvalidFree { .. }) => {
                vec![s.clone()]
            }
            Err(e @ ExplicitError::BadStep(_)) => {
                tracing::error!("explicit post: {e}");
                vec![]
            }
        }
    }

    /// The abstract post of one intraprocedural operation under precision `tracked`
    /// (Θ(l) of the target location: untracked destinations become ⊤).
    pub fn post_op(
        &self,
        s: &ExplicitState,
        op: &Op,
        tracked: &dyn Fn(VarId) -> bool,
    ) -> Result<Successors, ExplicitError> {
        let mut t = s.clone();
        match op {
            Op::Skip | Op::Error | Op::Halt => {}
            Op::Assign { dst, src } => {
                let v = eval(s, src);
                if v == Value::Top && src.is_boolean() && tracked(*dst) {
                    return Ok(split_boolean(t, *dst));
                }
                self.assign(&mut t, *dst, v, tracked);
            }
            Op::Nondet { dst } => set_top(&mut t, *dst),
            // taken iff the access through `ptr` would not find what it needs (a live
            // object of the struct, a live scalar cell, the start of a live heap
            // object): dangling, garbage; NULL is the other check's
            Op::AssumeInvalid { ptr, access } => {
                if self.valid_access(s, *ptr, access) {
                    return Ok(vec![]);
                }
            }
            // taken unless the state proves that no heap memory leaks
            Op::AssumeLeak { check, of } => {
                if s.proves_no_leak(*check, *of) {
                    return Ok(vec![]);
                }
            }
            Op::Load { dst, ptr, field } => {
                let v = match self.locate(s, *ptr, Some(*field))? {
                    None => Value::Top,
                    Some((a, i)) => s.heap[&a].fields[i],
                };
                self.assign(&mut t, *dst, v, tracked);
            }
            Op::Store { ptr, field, src } => {
                let v = eval(s, src);
                let fty = self.field_def(*field)?.ty.clone();
                match self.locate(s, *ptr, Some(*field))? {
                    Some((a, i)) => {
                        if let Some(c) = t.heap.get_mut(&a) {
                            c.fields[i] = normalize(v, &fty);
                        }
                    }
                    None => self.havoc_field_aliases(&mut t, *field, &fty)?,
                }
            }
            Op::FieldAddr { dst, ptr, field } => {
                let off = self.field_def(*field)?.offset;
                let v = match s.var(*ptr) {
                    Value::Top => Value::Top,
                    Value::Int(0) => return Err(ExplicitError::NullDeref { ptr: *ptr }),
                    Value::Int(_) => return Err(ExplicitError::NotAPointer { ptr: *ptr }),
                    Value::Ptr { obj, off: o } => match u32::try_from(o as u64 + off) {
                        Ok(off) => Value::Ptr { obj, off },
                        Err(_) => Value::Top,
                    },
                };
                self.assign(&mut t, *dst, v, tracked);
            }
            Op::LoadIndirect { dst, ptr } => {
                let v = match self.locate(s, *ptr, None)? {
                    None => Value::Top,
                    Some((a, i)) => s.heap[&a].fields[i],
                };
                self.assign(&mut t, *dst, v, tracked);
            }
            Op::StoreIndirect { ptr, src } => {
                let v = eval(s, src);
                match self.locate(s, *ptr, None)? {
                    Some((a, i)) => {
                        let fty = self.scalar_ty(&s.heap[&a], i);
                        if let Some(c) = t.heap.get_mut(&a) {
                            c.fields[i] = match fty {
                                Some(ty) => normalize(v, &ty),
                                None => v,
                            };
                        }
                    }
                    None => self.havoc_indirect(&mut t, *ptr),
                }
            }
            Op::Alloc {
                dst, pointee, kind, ..
            } => return Ok(self.alloc(s, t, *dst, pointee, kind, tracked)),
            Op::Free { ptr } => match s.var(*ptr) {
                Value::Top | Value::Int(0) => {}
                Value::Int(_) => return Err(ExplicitError::InvalidFree { ptr: *ptr }),
                Value::Ptr { obj, off } => match s.heap.get(&obj) {
                    None => return Err(ExplicitError::DoubleFree { ptr: *ptr }),
                    Some(c) if off != 0 || c.kind != CellKind::Heap => {
                        return Err(ExplicitError::InvalidFree { ptr: *ptr })
                    }
                    Some(_) => {
                        t.heap.remove(&obj);
                    }
                },
            },
            Op::Assume { cond } => match truth(eval(s, cond)) {
                Some(true) => {}
                Some(false) => return Ok(vec![]),
                None => refine(&mut t, cond, tracked),
            },
            Op::Call { .. } => {
                return Err(ExplicitError::BadStep(
                    "a Call edge is executed as Step::Enter / Step::Leave".into(),
                ))
            }
        }
        t.canonicalize();
        Ok(vec![t])
    }

    /// Whether the access `access` through `ptr` finds what it needs in `s` (a live
    /// object of the struct, a live scalar cell, the start of a live heap object); NULL
    /// counts as valid (the NULL check is another target's).
    fn valid_access(&self, s: &ExplicitState, ptr: VarId, access: &Access) -> bool {
        match s.var(ptr) {
            Value::Top | Value::Int(1..) | Value::Int(..0) => false,
            Value::Int(0) => true,
            Value::Ptr { obj, off } => match access {
                Access::Struct(strukt) => s
                    .heap
                    .get(&obj)
                    .is_some_and(|c| off == 0 && c.ty == CellTy::Struct(*strukt)),
                Access::Cell => matches!(self.locate(s, ptr, None), Ok(Some(_))),
                Access::Free => s
                    .heap
                    .get(&obj)
                    .is_some_and(|c| off == 0 && c.kind == CellKind::Heap),
            },
        }
    }

    /// A store to `field` through an unknown pointer: the field becomes ⊤ in every cell
    /// of its struct and in every struct embedding that struct (flattened as
    /// `outer.name`).
    fn havoc_field_aliases(
        &self,
        t: &mut ExplicitState,
        field: FieldRef,
        fty: &Ty,
    ) -> Result<(), ExplicitError> {
        let fname = self.field_def(field)?.name.clone();
        let suffix = format!(".{fname}");
        for c in t.heap.values_mut() {
            match c.ty {
                CellTy::Struct(s) if s == field.strukt => {
                    if let Some(x) = c.fields.get_mut(field.field) {
                        *x = Value::Top;
                    }
                }
                CellTy::Struct(s) => {
                    let Some(def) = self.prog.structs.get(s) else {
                        continue;
                    };
                    for (i, fd) in def.fields.iter().enumerate() {
                        if fd.name.ends_with(&suffix) && same_scalar(&fd.ty, fty) {
                            if let Some(x) = c.fields.get_mut(i) {
                                *x = Value::Top;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A store through an unknown `ptr`: every cell of the scalar type it points to
    /// (every cell, when that is unknown) becomes ⊤.
    fn havoc_indirect(&self, t: &mut ExplicitState, ptr: VarId) {
        let target = match &self.prog.vars.get(ptr).map(|v| &v.ty) {
            Some(Ty::Ptr(inner)) => Some((**inner).clone()),
            _ => None,
        };
        for c in t.heap.values_mut() {
            for i in 0..c.fields.len() {
                let fty = self.scalar_ty(c, i);
                let hit = match (&target, &fty) {
                    (Some(tt), Some(ft)) => same_scalar(tt, ft),
                    _ => true,
                };
                if hit {
                    c.fields[i] = Value::Top;
                }
            }
        }
    }

    /// `dst = alloc(pointee)` from `s` (`t` is `s`'s copy): a fresh cell (NULL-filled
    /// for `calloc`, ⊤ otherwise), and NULL as a second successor when a heap
    /// allocation may fail; ⊤ when `dst` is not tracked.
    fn alloc(
        &self,
        s: &ExplicitState,
        mut t: ExplicitState,
        dst: VarId,
        pointee: &Ty,
        kind: &AllocKind,
        tracked: &dyn Fn(VarId) -> bool,
    ) -> Successors {
        let a = s.fresh_addr();
        let (ckind, init) = match kind {
            AllocKind::Heap { zeroed: true } => (CellKind::Heap, Value::NULL),
            AllocKind::Heap { zeroed: false } => (CellKind::Heap, Value::Top),
            AllocKind::Stack => (CellKind::Stack, Value::Top),
        };
        let ty = cell_ty_of(pointee);
        let n = match &ty {
            CellTy::Struct(sid) => self.prog.structs.get(*sid).map_or(0, |d| d.fields.len()),
            CellTy::Scalar(_) => 1,
            CellTy::Opaque => 0,
        };
        if !tracked(dst) || dst >= t.vars.len() {
            if matches!(kind, AllocKind::Heap { .. }) {
                // an object no cell represents
                t.lose_heap(match pointee {
                    Ty::Struct(s) => Some(*s),
                    _ => None,
                });
            }
            set_top(&mut t, dst);
            t.canonicalize();
            return vec![t];
        }
        let mut nul = t.clone();
        t.heap.insert(
            a,
            Cell {
                ty,
                kind: ckind,
                fields: vec![init; n],
            },
        );
        t.vars.set(dst, Value::ptr(a));
        t.canonicalize();
        let mut out = vec![t];
        if matches!(kind, AllocKind::Heap { .. }) && !self.malloc_never_fails {
            nul.vars.set(dst, Value::NULL);
            nul.canonicalize();
            out.push(nul);
        }
        out
    }

    /// Assigns `v` (converted to the variable's type) to `x`, or ⊤ if `x` is not
    /// tracked.
    fn assign(&self, t: &mut ExplicitState, x: VarId, v: Value, tracked: &dyn Fn(VarId) -> bool) {
        if x >= t.vars.len() {
            return;
        }
        let v = if tracked(x) {
            match self.prog.vars.get(x) {
                Some(var) => normalize(v, &var.ty),
                None => Value::Top,
            }
        } else {
            Value::Top
        };
        t.vars.set(x, v);
    }

    /// The cell and field index a dereference of `ptr` (with `field`, or a scalar
    /// access for `None`) touches; `Ok(None)` when `ptr` is ⊤.
    fn locate(
        &self,
        s: &ExplicitState,
        ptr: VarId,
        field: Option<FieldRef>,
    ) -> Result<Option<(Addr, usize)>, ExplicitError> {
        let (obj, off) = match s.var(ptr) {
            Value::Top => return Ok(None),
            Value::Int(0) => return Err(ExplicitError::NullDeref { ptr }),
            Value::Int(_) => return Err(ExplicitError::NotAPointer { ptr }),
            Value::Ptr { obj, off } => (obj, off as u64),
        };
        let Some(c) = s.heap.get(&obj) else {
            return Err(ExplicitError::UseAfterFree { ptr });
        };
        if let Some(f) = field {
            if off == 0 && c.ty == CellTy::Struct(f.strukt) && f.field < c.fields.len() {
                return Ok(Some((obj, f.field)));
            }
        }
        let target = off
            + field
                .and_then(|f| self.prog.structs.get(f.strukt)?.fields.get(f.field))
                .map_or(0, |d| d.offset);
        let idx = match &c.ty {
            CellTy::Struct(sid) => self
                .prog
                .structs
                .get(*sid)
                .and_then(|d| d.fields.iter().position(|fd| fd.offset == target)),
            CellTy::Scalar(_) if target == 0 => Some(0),
            _ => None,
        };
        match idx {
            Some(i) if i < c.fields.len() => Ok(Some((obj, i))),
            _ => Err(ExplicitError::BadAccess {
                ptr,
                offset: target,
            }),
        }
    }

    /// The definition of a field (an error for a [`FieldRef`] the program lacks).
    fn field_def(&self, f: FieldRef) -> Result<&crate::cfa::FieldDef, ExplicitError> {
        self.prog
            .structs
            .get(f.strukt)
            .and_then(|s| s.fields.get(f.field))
            .ok_or_else(|| ExplicitError::BadStep(format!("no field {}.{}", f.strukt, f.field)))
    }

    /// The scalar type of field `i` of a cell.
    fn scalar_ty(&self, c: &Cell, i: usize) -> Option<Ty> {
        match &c.ty {
            CellTy::Struct(sid) => Some(self.prog.structs.get(*sid)?.fields.get(i)?.ty.clone()),
            CellTy::Scalar(ScalarTy::Int { bits, signed }) => Some(Ty::Int {
                bits: *bits,
                signed: *signed,
            }),
            CellTy::Scalar(ScalarTy::Ptr) => Some(Ty::Ptr(Box::new(Ty::Void))),
            CellTy::Opaque => None,
        }
    }
}

/// Sets a variable to ⊤ (ignores out-of-range ids).
fn set_top(t: &mut ExplicitState, x: VarId) {
    t.vars.set(x, Value::Top);
}

/// True if two scalar types may describe the same memory (ints of the same width,
/// or any two pointers).
fn same_scalar(a: &Ty, b: &Ty) -> bool {
    match (a, b) {
        (Ty::Ptr(_), Ty::Ptr(_)) => true,
        (Ty::Int { bits: x, .. }, Ty::Int { bits: y, .. }) => x == y,
        (Ty::Int { .. }, Ty::Ptr(_)) | (Ty::Ptr(_), Ty::Int { .. }) => false,
        _ => true,
    }
}

/// Wraps an integer to an integer type (C conversion semantics; `_Bool` is != 0).
pub fn wrap_int(n: i64, bits: u8, signed: bool) -> i64 {
    if bits == 1 {
        return (n != 0) as i64;
    }
    if bits >= 64 {
        return n;
    }
    let mask = (1u64 << bits) - 1;
    let u = (n as u64) & mask;
    if signed && (u >> (bits - 1)) & 1 == 1 {
        (u | !mask) as i64
    } else {
        u as i64
    }
}

/// Converts a value to be stored in a location of type `ty`: integers are wrapped to
/// the width of an integer type, pointers stored in integers become ⊤ (their numeric
/// value is unknown), anything stored in a pointer is kept.
pub fn normalize(v: Value, ty: &Ty) -> Value {
    match (ty, v) {
        (Ty::Int { bits, signed }, Value::Int(n)) => Value::Int(wrap_int(n, *bits, *signed)),
        (Ty::Int { .. }, Value::Ptr { .. }) => Value::Top,
        _ => v,
    }
}

/// The truth value of a condition value (⊤: unknown; a pointer is non-zero).
pub fn truth(v: Value) -> Option<bool> {
    match v {
        Value::Top => None,
        Value::Int(n) => Some(n != 0),
        Value::Ptr { .. } => Some(true),
    }
}

/// `t` with the tracked variable `x` set to 0 and to 1: the exact post of assigning
/// `x` a comparison whose value the state does not know (two successors instead of
/// one with `x` ⊤, so that a later `p->data = x` stores a known value).
fn split_boolean(t: ExplicitState, x: VarId) -> Successors {
    [0, 1]
        .into_iter()
        .map(|b| {
            let mut u = t.clone();
            u.vars.set(x, Value::Int(b));
            u.canonicalize();
            u
        })
        .collect()
}

/// Evaluates a pure expression on a state.
pub fn eval(s: &ExplicitState, e: &Expr) -> Value {
    match e {
        Expr::Int(n) => Value::Int(*n),
        Expr::Null => Value::NULL,
        Expr::Var(x) => s.var(*x),
        Expr::Cast(ty, e) => {
            let v = eval(s, e);
            match ty {
                Ty::Int { .. } => normalize(v, ty),
                _ => v,
            }
        }
        Expr::Unary(op, e) => match (op, eval(s, e)) {
            (_, Value::Top) => Value::Top,
            (UnOp::Neg, Value::Int(n)) => Value::Int(n.wrapping_neg()),
            (UnOp::BitNot, Value::Int(n)) => Value::Int(!n),
            (UnOp::Not, v) => match truth(v) {
                Some(b) => Value::Int((!b) as i64),
                None => Value::Top,
            },
            (_, Value::Ptr { .. }) => Value::Top,
        },
        Expr::Binary(op, a, b) => {
            let (x, y) = (eval(s, a), eval(s, b));
            // A freed address may be reused by a later allocation: comparing a dangling
            // pointer with a pointer to another object is unknown.
            if let (Value::Ptr { obj: o1, .. }, Value::Ptr { obj: o2, .. }) = (x, y) {
                if o1 != o2 && (!s.heap.contains_key(&o1) || !s.heap.contains_key(&o2)) {
                    return Value::Top;
                }
            }
            binop(*op, x, y)
        }
    }
}

/// A binary operation on two values.
fn binop(op: BinOp, a: Value, b: Value) -> Value {
    use BinOp::*;
    let bool_v = |b: bool| Value::Int(b as i64);
    match (a, b) {
        (Value::Top, _) | (_, Value::Top) => Value::Top,
        (Value::Int(x), Value::Int(y)) => match op {
            Add => Value::Int(x.wrapping_add(y)),
            Sub => Value::Int(x.wrapping_sub(y)),
            Mul => Value::Int(x.wrapping_mul(y)),
            Div => x.checked_div(y).map_or(Value::Top, Value::Int),
            Rem => x.checked_rem(y).map_or(Value::Top, Value::Int),
            Shl => match u32::try_from(y) {
                Ok(k) if k < 64 => Value::Int(x.wrapping_shl(k)),
                _ => Value::Top,
            },
            Shr => match u32::try_from(y) {
                Ok(k) if k < 64 => Value::Int(x >> k),
                _ => Value::Top,
            },
            BitAnd => Value::Int(x & y),
            BitOr => Value::Int(x | y),
            BitXor => Value::Int(x ^ y),
            Eq => bool_v(x == y),
            Ne => bool_v(x != y),
            Lt => bool_v(x < y),
            Le => bool_v(x <= y),
            Gt => bool_v(x > y),
            Ge => bool_v(x >= y),
        },
        (Value::Ptr { obj: o1, off: f1 }, Value::Ptr { obj: o2, off: f2 }) => match op {
            Eq => bool_v(o1 == o2 && f1 == f2),
            Ne => bool_v(o1 != o2 || f1 != f2),
            Lt | Le | Gt | Ge if o1 == o2 => match op {
                Lt => bool_v(f1 < f2),
                Le => bool_v(f1 <= f2),
                Gt => bool_v(f1 > f2),
                _ => bool_v(f1 >= f2),
            },
            _ => Value::Top,
        },
        (Value::Ptr { .. }, Value::Int(0)) | (Value::Int(0), Value::Ptr { .. }) => match op {
            Eq => bool_v(false),
            Ne => bool_v(true),
            _ => Value::Top,
        },
        _ => Value::Top,
    }
}

/// Refines a state on which `cond` evaluated to ⊤ and is assumed true:
/// `x == e` (either side) with `e` known sets a tracked ⊤ `x` to `e`; `!x` sets it to 0.
fn refine(t: &mut ExplicitState, cond: &Expr, tracked: &dyn Fn(VarId) -> bool) {
    let strip = |e: &Expr| -> Expr {
        let mut e = e;
        while let Expr::Cast(Ty::Ptr(_), inner) = e {
            e = inner;
        }
        e.clone()
    };
    match cond {
        Expr::Binary(BinOp::Eq, a, b) => {
            let (a, b) = (strip(a), strip(b));
            for (x, e) in [(&a, &b), (&b, &a)] {
                if let Expr::Var(x) = x {
                    let v = eval(t, e);
                    if t.var(*x).is_top() && !v.is_top() && tracked(*x) {
                        t.vars.set(*x, v);
                        return;
                    }
                }
            }
        }
        Expr::Unary(UnOp::Not, a) => {
            if let Expr::Var(x) = strip(a) {
                if t.var(x).is_top() && tracked(x) {
                    t.vars.set(x, Value::NULL);
                }
            }
        }
        _ => {}
    }
}
