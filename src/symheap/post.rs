//! The transfer functions of [`SymHeap`]: rearrangement (unfolding a segment at the
//! object an access needs), then the operation's effect. What the domain cannot
//! follow (a write through a pointer it does not know, type punning, a dereference of
//! an id no atom allocates) makes the state ⊤, never a guess.

use super::{Atom, Facts, Id, SymHeap, Val};
use crate::cfa::{AllocKind, BinOp, Expr, FieldRef, Op, Program, Step, Ty, UnOp, VarId};

/// Whether `e` is pointer-valued (so its comparisons are the domain's business).
fn is_ptr_expr(prog: &Program, e: &Expr) -> bool {
    match e {
        Expr::Null => true,
        Expr::Var(x) => prog.vars.get(*x).is_some_and(|v| v.ty.is_ptr()),
        Expr::Cast(ty, inner) => ty.is_ptr() && is_ptr_expr(prog, inner),
        _ => false,
    }
}

/// The value of a pointer expression and the variable it reads, if it is one.
fn value_of(prog: &Program, h: &SymHeap, e: &Expr) -> (Val, Option<VarId>) {
    match e {
        Expr::Null | Expr::Int(0) => (Val::Null, None),
        Expr::Var(x) if prog.vars.get(*x).is_some_and(|v| v.ty.is_ptr()) => (h.get(*x), Some(*x)),
        Expr::Cast(ty, inner) if ty.is_ptr() => match inner.as_ref() {
            Expr::Int(0) => (Val::Null, None),
            i if is_ptr_expr(prog, i) => value_of(prog, h, i),
            _ => (Val::Unknown, None),
        },
        _ => (Val::Unknown, None),
    }
}

fn is_ptr_var(prog: &Program, x: VarId) -> bool {
    prog.vars.get(x).is_some_and(|v| v.ty.is_ptr())
}

fn is_int_var(prog: &Program, x: VarId) -> bool {
    prog.vars.get(x).is_some_and(|v| v.ty.is_int())
}

/// `v` as the value of an object of type `ty`: `Int` only when `ty` is an integer type
/// that holds `v` unchanged (C would convert any other value on the assignment; the
/// front end spells those conversions as casts, which [`eval_int`] checks, and this is
/// the same guard where a value is stored, in case a conversion is left implicit).
fn int_val(ty: Option<&Ty>, v: Option<i64>) -> Val {
    let (Some(Ty::Int { bits, signed }), Some(v)) = (ty, v) else {
        return Val::Unknown;
    };
    let bits = u32::from(*bits).min(63);
    let fits = match (*signed, bits) {
        (_, 0) => false,
        (true, b) => v >= -(1i64 << (b - 1)) && v < (1i64 << (b - 1)),
        (false, b) => v >= 0 && v < (1i64 << b),
    };
    if fits {
        Val::Int(v)
    } else {
        Val::Unknown
    }
}

fn var_ty(prog: &Program, x: VarId) -> Option<&Ty> {
    prog.vars.get(x).map(|v| &v.ty)
}

/// Known integer values stay in the signed 32-bit range (the analysis never wraps).
fn small(k: i128) -> Option<i64> {
    (i32::MIN as i128..=i32::MAX as i128)
        .contains(&k)
        .then_some(k as i64)
}

/// The value of an integer expression when the state knows it exactly and no C
/// conversion can change it: constants and variables in the signed 32-bit range,
/// `+ - *` without overflow, comparisons and bit operations of non-negative values
/// (the same in every signedness), `!`, casts that keep the value. Else `None`.
pub fn eval_int(prog: &Program, h: &SymHeap, e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(k) => small(*k as i128),
        Expr::Var(x) if is_int_var(prog, *x) => match h.get(*x) {
            Val::Int(k) => small(k as i128),
            _ => None,
        },
        Expr::Cast(Ty::Int { bits, signed }, a) => {
            let v = eval_int(prog, h, a)?;
            let bits = u32::from(*bits).min(63);
            let fits = if *signed {
                bits >= 1 && v >= -(1i64 << (bits - 1)) && v < (1i64 << (bits - 1))
            } else {
                v >= 0 && v < (1i64 << bits)
            };
            (fits && bits >= 2).then_some(v)
        }
        Expr::Unary(UnOp::Neg, a) => small(-(eval_int(prog, h, a)? as i128)),
        Expr::Unary(UnOp::Not, a) => Some(i64::from(eval_int(prog, h, a)? == 0)),
        // a pointer comparison the state decides (`(p == NULL) != (q == NULL)`)
        Expr::Binary(op @ (BinOp::Eq | BinOp::Ne), a, b)
            if is_ptr_expr(prog, a) || is_ptr_expr(prog, b) =>
        {
            let (va, vb) = (value_of(prog, h, a).0, value_of(prog, h, b).0);
            let same = match (va, vb) {
                (Val::Unknown, _) | (_, Val::Unknown) => return None,
                _ if va == vb => true,
                _ if h.distinct(va, vb) => false,
                _ => return None,
            };
            Some(i64::from(same == (*op == BinOp::Eq)))
        }
        Expr::Binary(op, a, b) => {
            let (x, y) = (eval_int(prog, h, a)?, eval_int(prog, h, b)?);
            let (xi, yi) = (x as i128, y as i128);
            let nonneg = x >= 0 && y >= 0;
            match op {
                BinOp::Add => small(xi + yi),
                BinOp::Sub => small(xi - yi),
                BinOp::Mul => small(xi * yi),
                BinOp::Eq if nonneg => Some(i64::from(x == y)),
                BinOp::Ne if nonneg => Some(i64::from(x != y)),
                BinOp::Lt if nonneg => Some(i64::from(x < y)),
                BinOp::Le if nonneg => Some(i64::from(x <= y)),
                BinOp::Gt if nonneg => Some(i64::from(x > y)),
                BinOp::Ge if nonneg => Some(i64::from(x >= y)),
                BinOp::BitAnd if nonneg => Some(x & y),
                BinOp::BitOr if nonneg => Some(x | y),
                BinOp::BitXor if nonneg => Some(x ^ y),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The values `e` may have in `h` as far as the domain keeps them: its exact value
/// ([`eval_int`]); 0 and 1 for a comparison or `!` whose value is not known (C gives
/// an `int` that is one of them); else one unknown value (`None`).
pub fn int_choices(prog: &Program, h: &SymHeap, e: &Expr) -> Vec<Option<i64>> {
    if let Some(v) = eval_int(prog, h, e) {
        return vec![Some(v)];
    }
    let boolean = matches!(
        e,
        Expr::Unary(UnOp::Not, _)
            | Expr::Binary(
                BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge,
                _,
                _
            )
    );
    if boolean {
        vec![Some(0), Some(1)]
    } else {
        vec![None]
    }
}

/// The states in which id `i` is the address of a single-object atom (`Pt` or
/// `Block`): a segment starting (or, doubly linked, ending) at `i` is unfolded into
/// its first (last) object and the rest, one state for "the segment is this one
/// object (two, doubly linked)" and one for "longer". `None`: no atom allocates `i`.
pub fn focus(prog: &Program, h: &SymHeap, i: Id) -> Option<Vec<SymHeap>> {
    let k = h.atom_at(i)?;
    let atom = h.atoms[k].clone();
    let mut out = Vec::new();
    // an object of a segment: the segment's facts become its value sets
    let pt = |at: Id, strukt, mut fields: Vec<Val>, data: &Facts| {
        let mut data: Facts = data
            .iter()
            .filter(|(f, _)| *f < fields.len())
            .cloned()
            .collect();
        super::normalize_pt(&mut fields, &mut data);
        Atom::Pt {
            at,
            strukt,
            fields,
            heap: true,
            data,
        }
    };
    match atom {
        Atom::Pt { .. } | Atom::Block { .. } => out.push(h.clone()),
        Atom::Ls {
            strukt,
            link,
            from,
            to,
            data,
            len,
            cells,
            order,
        } => {
            let len = len as usize;
            let width = struct_width(prog, strukt).max(link + 1);
            let n = h.fresh();
            let base = vec![Val::Unknown; width];
            // exactly one object (its values both first and last)
            if let Some(d) = super::order::one_case(&data, &order) {
                let mut one = h.clone();
                let mut f = base.clone();
                f[link] = to;
                one.atoms[k] = pt(from, strukt, f, &d);
                one.add_count_eq(&[(len, 1)], 1);
                out.extend(super::cells::unpack(one, from, &cells));
            }
            // more: from ↦ n * ls(n, to), one state per value of the first object
            // where the segment keeps an order
            for (d, rest_order) in super::order::first_cases(&data, &order) {
                let mut more = h.clone();
                let mut f = base.clone();
                f[link] = Val::Id(n);
                more.atoms[k] = pt(from, strukt, f, &d);
                let rest = more.new_col();
                more.add_count_eq(&[(len, 1), (rest as usize, -1)], 1);
                more.atoms.push(Atom::Ls {
                    strukt,
                    link,
                    from: n,
                    to,
                    data: data.clone(),
                    len: rest,
                    cells: cells.clone(),
                    order: rest_order,
                });
                out.extend(super::cells::unpack(more, from, &cells));
            }
        }
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
            len,
            cells,
            order,
        } => {
            let len = len as usize;
            let width = struct_width(prog, strukt).max(next.max(prev) + 1);
            let cell = |n: Val, p: Val| {
                let mut f = vec![Val::Unknown; width];
                f[next] = n;
                f[prev] = p;
                f
            };
            let link = |x: Id| super::back_link(by_field, next, x);
            // exactly two objects
            for (d1, d2) in super::order::two_cases(&data, &order) {
                let mut two = h.clone();
                two.atoms[k] = pt(first, strukt, cell(Val::Id(last), back), &d1);
                two.atoms
                    .push(pt(last, strukt, cell(fwd, link(first)), &d2));
                two.add_count_eq(&[(len, 1)], 2);
                for t in super::cells::unpack(two, first, &cells) {
                    out.extend(super::cells::unpack(t, last, &cells));
                }
            }
            let n = h.fresh();
            let cases = if i == first {
                super::order::first_cases(&data, &order)
            } else {
                super::order::last_cases(&data, &order)
            };
            for (d, rest_order) in cases {
                let mut more = h.clone();
                let rest = more.new_col();
                more.add_count_eq(&[(len, 1), (rest as usize, -1)], 1);
                if i == first {
                    more.atoms[k] = pt(first, strukt, cell(Val::Id(n), back), &d);
                    more.atoms.push(Atom::Dls {
                        strukt,
                        next,
                        prev,
                        first: n,
                        back: link(first),
                        last,
                        fwd,
                        data: data.clone(),
                        by_field,
                        len: rest,
                        cells: cells.clone(),
                        order: rest_order,
                    });
                } else {
                    more.atoms[k] = pt(last, strukt, cell(fwd, link(n)), &d);
                    more.atoms.push(Atom::Dls {
                        strukt,
                        next,
                        prev,
                        first,
                        back,
                        last: n,
                        fwd: Val::Id(last),
                        data: data.clone(),
                        by_field,
                        len: rest,
                        cells: cells.clone(),
                        order: rest_order,
                    });
                }
                out.extend(super::cells::unpack(more, i, &cells));
            }
        }
    }
    Some(out)
}

/// The number of fields of `strukt`.
fn struct_width(prog: &Program, strukt: crate::cfa::StructId) -> usize {
    prog.structs.get(strukt).map_or(0, |d| d.fields.len())
}

/// Whether an access `access` through the address of one of `a`'s objects (its
/// first or last) is valid: the object is live, of the struct the access needs, and
/// for `free` allocated on the heap.
fn valid_for(prog: &Program, a: &Atom, access: crate::cfa::Access) -> bool {
    use crate::cfa::Access;
    match (a, access) {
        (Atom::Block { .. }, Access::Struct(_)) => false,
        (Atom::Block { .. }, Access::Cell) => true,
        (Atom::Block { heap, .. } | Atom::Pt { heap, .. }, Access::Free) => *heap,
        (_, Access::Free) => true,
        (_, Access::Struct(s)) => a.strukt() == Some(s),
        (_, Access::Cell) => a
            .strukt()
            .and_then(|s| prog.structs.get(s))
            .is_some_and(|d| !d.fields.is_empty()),
    }
}

/// The transfer functions over one program.
pub struct Post<'a> {
    pub prog: &'a Program,
    /// Integer fields whose loads narrow the object's value set to the value read
    /// (one state per value; the tracked fields); a load of another field gives the
    /// variable each value in a state of its own and leaves the object's set as it
    /// was.
    pub narrow: &'a std::collections::BTreeSet<FieldRef>,
}

impl Post<'_> {
    /// Successors of `h` along `step`; each still to be made canonical and folded.
    pub fn post(&self, h: &SymHeap, step: Step) -> Vec<SymHeap> {
        if h.top {
            return vec![h.clone()];
        }
        let prog = self.prog;
        match step {
            Step::Edge(e) => match prog.graph.edge_weight(e) {
                Some(edge) => self.op(h, &edge.op),
                None => vec![SymHeap::top()],
            },
            Step::Enter(e) => {
                let Some(Op::Call { callee, args, .. }) = prog.graph.edge_weight(e).map(|x| &x.op)
                else {
                    return vec![SymHeap::top()];
                };
                let Some(f) = prog.functions.get(*callee) else {
                    return vec![SymHeap::top()];
                };
                // each parameter's possible values (a comparison: 0 and 1)
                let vals: Vec<(VarId, Vec<Val>)> = f
                    .params
                    .iter()
                    .zip(args)
                    .map(|(p, a)| {
                        let v = if is_ptr_var(prog, *p) {
                            vec![value_of(prog, h, a).0]
                        } else if is_int_var(prog, *p) {
                            int_choices(prog, h, a)
                                .into_iter()
                                .map(|v| int_val(var_ty(prog, *p), v))
                                .collect()
                        } else {
                            vec![Val::Unknown]
                        };
                        (*p, v)
                    })
                    .collect();
                let mut base = h.clone();
                // a parameter without an argument (a variadic call) holds anything
                for &p in &f.params {
                    base.set(p, Val::Unknown);
                }
                let mut out = vec![base];
                for (p, vs) in vals {
                    out = out
                        .into_iter()
                        .flat_map(|s| {
                            vs.iter().map(move |v| {
                                let mut s = s.clone();
                                s.set(p, *v);
                                s
                            })
                        })
                        .collect();
                }
                // a counted parameter gets a linear argument as an equality, unless
                // the argument reads a parameter (recursion: already rebound here)
                for (p, a) in f.params.iter().zip(args) {
                    let mut read = Vec::new();
                    a.vars(&mut read);
                    if read.iter().any(|x| f.params.contains(x)) {
                        continue;
                    }
                    if let Some(col) = h.int_col(*p) {
                        for s in &mut out {
                            if let Some(t) = super::counts::assign(prog, s, col, a) {
                                *s = t;
                            }
                        }
                    }
                }
                out
            }
            Step::Leave(e) => {
                let Some(Op::Call { callee, ret, .. }) = prog.graph.edge_weight(e).map(|x| &x.op)
                else {
                    return vec![SymHeap::top()];
                };
                let Some(f) = prog.functions.get(*callee) else {
                    return vec![SymHeap::top()];
                };
                let mut out = h.clone();
                let v = f.ret.map_or(Val::Unknown, |r| h.get(r));
                // a counted result of a counted return variable: an equality
                let callee_vars = || f.params.iter().chain(&f.locals).chain(&f.ret);
                let mut related = false;
                if let (Some(r), Some(dst)) = (f.ret, ret) {
                    if let Some(col) = h.int_col(*dst).filter(|_| !callee_vars().any(|x| x == dst))
                    {
                        if let Some(t) = super::counts::assign(prog, h, col, &Expr::Var(r)) {
                            out = t;
                            related = true;
                        }
                    }
                }
                // the callee's variables are dead until it is entered again, where
                // they are written before they are read (or read uninitialised: any
                // value)
                for &x in f.params.iter().chain(&f.locals).chain(&f.ret) {
                    out.set(x, Val::Unknown);
                }
                if let Some(r) = ret.as_ref().filter(|_| !related) {
                    let v = match v {
                        Val::Int(k) => int_val(var_ty(prog, *r), Some(k)),
                        v if is_ptr_var(prog, *r) => v,
                        _ => Val::Unknown,
                    };
                    out.set(*r, v);
                }
                vec![out]
            }
        }
    }

    pub(crate) fn op(&self, h: &SymHeap, op: &Op) -> Vec<SymHeap> {
        let prog = self.prog;
        match op {
            Op::Skip | Op::Error | Op::Halt | Op::AssumeLeak { .. } => vec![h.clone()],
            Op::AssumeInvalid { ptr, access } => match h.get(*ptr) {
                Val::Null => Vec::new(),
                Val::Unknown | Val::Int(_) => vec![h.clone()],
                Val::Id(i) => match h.atom_at(i) {
                    Some(k) if valid_for(prog, &h.atoms[k], *access) => Vec::new(),
                    _ => vec![h.clone()],
                },
                // a field of a live object is a valid cell
                Val::Field(i, _) if *access == crate::cfa::Access::Cell && h.allocated(i) => {
                    Vec::new()
                }
                Val::Field(..) => vec![h.clone()],
            },
            Op::Assign { dst, src } => {
                let mut out = h.clone();
                if is_ptr_var(prog, *dst) {
                    out.set(*dst, value_of(prog, h, src).0);
                } else if is_int_var(prog, *dst) {
                    if let Some(col) = h.int_col(*dst) {
                        if let Some(out) = super::counts::assign(prog, h, col, src) {
                            return vec![out];
                        }
                    }
                    return int_choices(prog, h, src)
                        .into_iter()
                        .map(|v| {
                            let mut out = h.clone();
                            out.set(*dst, int_val(var_ty(prog, *dst), v));
                            out
                        })
                        .collect();
                }
                vec![out]
            }
            Op::Nondet { dst } => forget(h, *dst),
            // `dst = &ptr->field`: the field's address (of a known object), else any
            Op::FieldAddr { dst, ptr, field } => match h.get(*ptr) {
                Val::Id(i) if is_ptr_var(prog, *dst) && h.allocated(i) => {
                    let at = Val::Field(i, field.field as u32);
                    self.access(h, Val::Id(i), *field, |mut s, _| {
                        s.set(*dst, at);
                        vec![s]
                    })
                }
                _ => forget(h, *dst),
            },
            // `dst = *ptr` through a field address is a load of that field
            Op::LoadIndirect { dst, ptr } => match self.field_target(h, h.get(*ptr)) {
                Some((target, field)) => self.load(h, target, *dst, field),
                None => forget(h, *dst),
            },
            // `*ptr = src` through a field address is a store to that field; through
            // anything else it may write anywhere
            Op::StoreIndirect { ptr, src } => match self.field_target(h, h.get(*ptr)) {
                Some((target, field)) => self.store(h, target, field, src),
                None => vec![SymHeap::top()],
            },
            Op::Call { .. } => vec![SymHeap::top()],
            Op::Load { dst, ptr, field } => self.load(h, h.get(*ptr), *dst, *field),
            Op::Store { ptr, field, src } => self.store(h, h.get(*ptr), *field, src),
            Op::Alloc {
                dst, pointee, kind, ..
            } => {
                let mut ok = h.clone();
                let n = ok.fresh();
                let heap = matches!(kind, AllocKind::Heap { .. });
                let atom = match pointee {
                    Ty::Struct(s) => match prog.structs.get(*s) {
                        Some(d) => {
                            let zeroed = matches!(kind, AllocKind::Heap { zeroed: true });
                            let fields = d
                                .fields
                                .iter()
                                .map(|f| {
                                    if zeroed && f.ty.is_ptr() {
                                        Val::Null
                                    } else if zeroed && f.ty.is_int() {
                                        Val::Int(0)
                                    } else {
                                        Val::Unknown
                                    }
                                })
                                .collect();
                            Atom::Pt {
                                at: n,
                                strukt: *s,
                                fields,
                                heap,
                                data: Vec::new(),
                            }
                        }
                        None => return vec![SymHeap::top()],
                    },
                    _ => Atom::Block { at: n, heap },
                };
                ok.atoms.push(atom);
                if is_ptr_var(prog, *dst) {
                    ok.set(*dst, Val::Id(n));
                }
                let mut out = vec![ok];
                if matches!(kind, AllocKind::Heap { .. }) && !prog.malloc_never_fails {
                    let mut fail = h.clone();
                    fail.set(*dst, Val::Null);
                    out.push(fail);
                }
                out
            }
            Op::Free { ptr } => match h.get(*ptr) {
                Val::Null => vec![h.clone()],
                Val::Unknown | Val::Int(_) | Val::Field(..) => vec![SymHeap::top()],
                Val::Id(i) => match focus(prog, h, i) {
                    None => vec![SymHeap::top()],
                    Some(states) => states
                        .into_iter()
                        .map(|mut s| {
                            if let Some(k) = s.atom_at(i) {
                                s.atoms.remove(k);
                            }
                            s
                        })
                        .collect(),
                },
            },
            Op::Assume { cond } => assume(prog, h.clone(), cond, true),
        }
    }

    /// `dst = target->field`.
    fn load(&self, h: &SymHeap, target: Val, dst: VarId, field: FieldRef) -> Vec<SymHeap> {
        let prog = self.prog;
        let dst = &dst;
        self.access(h, target, field, |mut s, k| {
            let (v, set) = match &mut s.atoms[k] {
                Atom::Pt { fields, data, .. } => (
                    fields.get(field.field).copied(),
                    data.iter()
                        .find(|(f, _)| *f == field.field)
                        .map(|(_, ks)| ks.clone()),
                ),
                _ => (None, None),
            };
            if !is_ptr_var(prog, *dst) {
                if let Some(ks) = set {
                    // one state per value the object may hold (which it then
                    // holds, if the field narrows)
                    let narrow = self.narrow.contains(&field);
                    return ks
                        .into_iter()
                        .map(|x| {
                            let mut s = s.clone();
                            if let (true, Atom::Pt { fields, data, .. }) = (narrow, &mut s.atoms[k])
                            {
                                fields[field.field] = Val::Int(x);
                                data.retain(|(f, _)| *f != field.field);
                            }
                            s.set(*dst, int_val(var_ty(prog, *dst), Some(x)));
                            s
                        })
                        .collect();
                }
                let v = match v {
                    Some(Val::Int(x)) => int_val(var_ty(prog, *dst), Some(x)),
                    _ => Val::Unknown,
                };
                s.set(*dst, v);
                return vec![s];
            }
            let v = match v {
                // an unknown pointer read gets a name, so two reads agree
                Some(Val::Unknown) => {
                    let n = s.fresh();
                    if let Atom::Pt { fields, .. } = &mut s.atoms[k] {
                        fields[field.field] = Val::Id(n);
                    }
                    Val::Id(n)
                }
                Some(v) => v,
                None => Val::Unknown,
            };
            s.set(*dst, v);
            vec![s]
        })
    }

    /// `target->field = src`.
    fn store(&self, h: &SymHeap, target: Val, field: FieldRef, src: &Expr) -> Vec<SymHeap> {
        let prog = self.prog;
        let field = &field;
        let is_ptr_field = prog
            .structs
            .get(field.strukt)
            .and_then(|d| d.fields.get(field.field))
            .is_some_and(|f| f.ty.is_ptr());
        // the value stored, and the values it may be one of (a comparison
        // whose value is not known: 0 or 1)
        let (v, set): (Val, Option<Vec<i64>>) = if is_ptr_field {
            (value_of(prog, h, src).0, None)
        } else {
            let ty = prog
                .structs
                .get(field.strukt)
                .and_then(|d| d.fields.get(field.field))
                .map(|f| &f.ty);
            let vals: Vec<Val> = int_choices(prog, h, src)
                .into_iter()
                .map(|v| int_val(ty, v))
                .collect();
            match vals.as_slice() {
                [v] => (*v, None),
                vs => {
                    let ks: Option<Vec<i64>> = vs
                        .iter()
                        .map(|v| match v {
                            Val::Int(k) => Some(*k),
                            _ => None,
                        })
                        .collect();
                    (Val::Unknown, ks)
                }
            }
        };
        self.access(h, target, *field, |mut s, k| {
            if let Atom::Pt { fields, data, .. } = &mut s.atoms[k] {
                fields[field.field] = v;
                data.retain(|(f, _)| *f != field.field);
                if let Some(ks) = &set {
                    data.push((field.field, ks.clone()));
                    data.sort();
                    super::normalize_pt(fields, data);
                }
            }
            vec![s]
        })
    }

    /// The object and field a field address names: (the object's id, the field as a
    /// field of the object's struct), when an atom allocates the object.
    fn field_target(&self, h: &SymHeap, v: Val) -> Option<(Val, FieldRef)> {
        let Val::Field(i, f) = v else {
            return None;
        };
        let strukt = h.atoms.get(h.atom_at(i)?)?.strukt()?;
        Some((
            Val::Id(i),
            FieldRef {
                strukt,
                field: f as usize,
            },
        ))
    }

    /// Applies `f` to each state where the object `target` points to is a `Pt` atom
    /// (index given) of the field's struct: none when `target` is NULL (the access's
    /// own check edge leads to the error), ⊤ when the object is not known.
    fn access(
        &self,
        h: &SymHeap,
        target: Val,
        field: FieldRef,
        f: impl Fn(SymHeap, usize) -> Vec<SymHeap>,
    ) -> Vec<SymHeap> {
        let i = match target {
            Val::Null => return Vec::new(),
            Val::Unknown | Val::Int(_) | Val::Field(..) => return vec![SymHeap::top()],
            Val::Id(i) => i,
        };
        let Some(states) = focus(self.prog, h, i) else {
            return vec![SymHeap::top()];
        };
        let nfields = self
            .prog
            .structs
            .get(field.strukt)
            .map_or(0, |d| d.fields.len());
        let mut out = Vec::new();
        for mut s in states {
            let Some(k) = s.atom_at(i) else {
                return vec![SymHeap::top()];
            };
            match &mut s.atoms[k] {
                Atom::Pt { strukt, fields, .. }
                    if *strukt == field.strukt && field.field < nfields =>
                {
                    fields.resize(nfields, Val::Unknown);
                }
                _ => return vec![SymHeap::top()],
            }
            out.extend(f(s, k));
        }
        out
    }
}

/// `h` with `dst` holding any value.
fn forget(h: &SymHeap, dst: VarId) -> Vec<SymHeap> {
    let mut out = h.clone();
    out.set(dst, Val::Unknown);
    vec![out]
}

/// The states of `h` in which `cond` has truth value `truth`: pointer comparisons
/// (`==`, `!=`, a pointer as a truth value, `!`) refine the state or rule it out;
/// any other condition leaves it unchanged.
pub fn assume(prog: &Program, h: SymHeap, cond: &Expr, truth: bool) -> Vec<SymHeap> {
    if let Some(v) = eval_int(prog, &h, cond) {
        return if (v != 0) == truth {
            vec![h]
        } else {
            Vec::new()
        };
    }
    if h.counts.is_some() {
        // a comparison of counters and lengths
        let zero = Expr::Int(0);
        let cmp = match cond {
            Expr::Binary(op, a, b) => Some((*op, a.as_ref(), b.as_ref())),
            Expr::Var(x) if is_int_var(prog, *x) => Some((BinOp::Ne, cond, &zero)),
            _ => None,
        };
        if let Some((op, a, b)) = cmp {
            if !is_ptr_expr(prog, a) && !is_ptr_expr(prog, b) {
                if let Some(out) = super::counts::assume(prog, &h, op, a, b, truth) {
                    return out;
                }
            }
        }
    }
    match cond {
        Expr::Unary(UnOp::Not, e) => assume(prog, h, e, !truth),
        Expr::Binary(op @ (BinOp::Eq | BinOp::Ne), a, b)
            if is_ptr_expr(prog, a) || is_ptr_expr(prog, b) =>
        {
            let eq = (*op == BinOp::Eq) == truth;
            let (va, xa) = value_of(prog, &h, a);
            let (vb, xb) = value_of(prog, &h, b);
            assume_eq(h, (va, xa), (vb, xb), eq)
        }
        Expr::Var(x) if is_ptr_var(prog, *x) => {
            let v = h.get(*x);
            assume_eq(h, (v, Some(*x)), (Val::Null, None), !truth)
        }
        Expr::Cast(_, e) if is_ptr_expr(prog, e) => assume(prog, h, e, truth),
        // `x == k` with `x` unknown: x is k where the condition holds
        Expr::Binary(op @ (BinOp::Eq | BinOp::Ne), a, b) if (*op == BinOp::Eq) == truth => {
            let mut h = h;
            match (a.as_ref(), b.as_ref()) {
                (Expr::Var(x), e) | (e, Expr::Var(x))
                    if is_int_var(prog, *x) && h.get(*x) == Val::Unknown =>
                {
                    if let Some(k) = eval_int(prog, &h, e) {
                        h.set(*x, int_val(var_ty(prog, *x), Some(k)));
                    }
                }
                _ => {}
            }
            vec![h]
        }
        _ => vec![h],
    }
}

/// The states of `h` where `a == b` (`eq`) or `a != b`: an unknown variable takes the
/// other side's value on `==`; two ids that may be equal are identified.
fn assume_eq(
    mut h: SymHeap,
    (a, xa): (Val, Option<VarId>),
    (b, xb): (Val, Option<VarId>),
    eq: bool,
) -> Vec<SymHeap> {
    if eq {
        match (a, b) {
            (Val::Unknown, Val::Unknown) => vec![h],
            (Val::Unknown, v) | (v, Val::Unknown) => {
                let x = if a == Val::Unknown { xa } else { xb };
                if let Some(x) = x {
                    h.set(x, v);
                }
                vec![h]
            }
            _ if a == b => vec![h],
            _ if h.distinct(a, b) => Vec::new(),
            // a field address is not substituted for an id (nor the other way)
            (Val::Field(..), _) | (_, Val::Field(..)) => vec![h],
            (Val::Id(i), v) | (v, Val::Id(i)) => {
                // keep an allocated id (the other is not allocated: not distinct)
                let (i, v) = if h.allocated(i) {
                    (v.id().unwrap_or(i), Val::Id(i))
                } else {
                    (i, v)
                };
                h.substitute(i, v).into_iter().collect()
            }
            _ => vec![h],
        }
    } else {
        match (a, b) {
            (Val::Unknown, _) | (_, Val::Unknown) => vec![h],
            _ => h.add_neq(a, b).into_iter().collect(),
        }
    }
}
