//! Lvalues: the address computation of an assigned or read expression (`Lv`), reads,
//! writes and field-by-field struct copies.

use super::cursor::strip_parens;
use super::{loc, unsup, Ctx, FnLower, R};
use crate::cfa::{Expr, FieldRef, Op, StructId, Ty, VarId};
use crate::frontend::clang::Cursor;
use crate::frontend::types::{is_array, CTy};
use clang_sys::*;

/// An lvalue after its address computation.
#[derive(Clone, Debug)]
pub(super) enum Lv {
    /// A scalar variable.
    Var(VarId),
    /// A scalar field `ptr->field`.
    Field(VarId, FieldRef),
    /// `*ptr` where `ptr` points to a scalar cell of the given type.
    Deref(VarId, Ty),
    /// A struct object (or embedded struct at `prefix`) that `ptr` points into.
    Obj(VarId, StructId, String),
    /// An array: its elements' lvalues in order (reaching any of them emits nothing).
    Arr(Vec<Lv>),
    /// The element of an array that the index in the variable selects (`a[i]`): its
    /// uses branch on the index (`lower::array`), one arm per element, in order.
    Switch(VarId, Vec<Lv>),
}

impl<'c, 't> FnLower<'c, 't> {
    /// Lowers the address computation of the lvalue `c`.
    pub(super) fn lv(&mut self, c: Cursor<'t>) -> R<Lv> {
        match c.kind() {
            CXCursor_ParenExpr => self.lv(self.only_child(c)?),
            CXCursor_UnexposedExpr => {
                let inner = self.only_child(c)?;
                if inner.ty().canonical().spelling() == c.ty().canonical().spelling() {
                    self.lv(inner)
                } else {
                    unsup(c, "cast used as lvalue")
                }
            }
            CXCursor_DeclRefExpr => {
                let Some(d) = c.referenced() else {
                    return unsup(c, "internal: unresolved reference");
                };
                if !matches!(d.kind(), CXCursor_VarDecl | CXCursor_ParmDecl) {
                    return unsup(c, "lvalue that is not a variable");
                }
                if is_array(d.ty()) {
                    return self.array_var(d, c);
                }
                let v = self.var_of(d, c)?;
                if let Some(t) = self.cx.cell_vars.get(&v) {
                    return Ok(Lv::Deref(v, t.clone()));
                }
                Ok(match self.cx.obj_vars.get(&v) {
                    Some(&s) => Lv::Obj(v, s, self.cx.obj_prefix(d.ty())),
                    None => Lv::Var(v),
                })
            }
            CXCursor_MemberRefExpr => {
                let Some(base) = c.expr_children().first().copied() else {
                    return unsup(c, "internal: member access without base");
                };
                let bt = base.ty().canonical();
                let Some(fd) = c.referenced() else {
                    return unsup(c, "internal: unresolved member");
                };
                if bt.kind() == CXType_Pointer {
                    let ty = self.ety(base)?;
                    let Some(s) = ty.pointee_struct() else {
                        return unsup(c, "member access through a non-struct pointer");
                    };
                    let e = self.rv(base)?;
                    let p = self.atom(e, ty, loc(base));
                    let prefix = self.cx.obj_prefix(bt.pointee());
                    self.member(c, fd, p, s, &prefix, false)
                } else {
                    let base = self.lv(base)?;
                    self.member_of(c, fd, base, false)
                }
            }
            CXCursor_UnaryOperator if c.unary_op() == CXUnaryOperator_Deref => {
                let inner = self.only_child(c)?;
                self.deref(c, inner)
            }
            CXCursor_ArraySubscriptExpr => self.subscript(c),
            _ => unsup(c, &format!("lvalue `{}`", c.kind_name())),
        }
    }

    /// Member `fd` (the member expression `c`) of the struct lvalue `base`; `in_arm`:
    /// `base` is an arm of a [`Lv::Switch`], where nothing may be emitted.
    fn member_of(&mut self, c: Cursor<'t>, fd: Cursor<'t>, base: Lv, in_arm: bool) -> R<Lv> {
        match base {
            Lv::Obj(p, s, prefix) => self.member(c, fd, p, s, &prefix, in_arm),
            Lv::Switch(i, arms) => {
                let arms = arms
                    .into_iter()
                    .map(|a| self.member_of(c, fd, a, true))
                    .collect::<R<Vec<_>>>()?;
                Ok(Lv::Switch(i, arms))
            }
            _ => unsup(c, "member access on a non-struct"),
        }
    }

    /// Member `fd` of the struct (embedded at `prefix`) that `p` points to.
    fn member(
        &mut self,
        c: Cursor<'t>,
        fd: Cursor<'t>,
        p: VarId,
        s: StructId,
        prefix: &str,
        in_arm: bool,
    ) -> R<Lv> {
        if let Some(place) = self.cx.split_place(fd) {
            if in_arm {
                return unsup(
                    c,
                    "a link struct embedded in several places, in an array element selected by a variable index",
                );
            }
            return self.split_link(c, p, s, &format!("{prefix}{}", place.link_field()));
        }
        let name = format!("{prefix}{}", fd.spelling());
        if is_array(c.ty()) {
            return self.member_array(c, p, s, &name, c.ty());
        }
        match self.cx.conv(c.ty(), c)? {
            CTy::Struct(_) => Ok(Lv::Obj(p, s, format!("{name}."))),
            CTy::Scalar(_) => match self.cx.prog.structs[s].field_index(&name) {
                Some(idx) => Ok(Lv::Field(
                    p,
                    FieldRef {
                        strukt: s,
                        field: idx,
                    },
                )),
                None => unsup(c, "internal: unknown field"),
            },
            CTy::Void => unsup(c, "void member"),
        }
    }

    /// `*inner` (the expression `c`).
    pub(super) fn deref(&mut self, c: Cursor<'t>, inner: Cursor<'t>) -> R<Lv> {
        let pty = self.ety(inner)?;
        let prefix = self.cx.obj_prefix(inner.ty().canonical().pointee());
        let e = self.rv(inner)?;
        let p = self.atom(e, pty.clone(), loc(inner));
        match pty {
            Ty::Ptr(t) => match *t {
                Ty::Struct(s) => Ok(Lv::Obj(p, s, prefix)),
                Ty::Void => unsup(c, "dereference of a void pointer"),
                t => Ok(Lv::Deref(p, t)),
            },
            _ => unsup(c, "dereference of a non-pointer"),
        }
    }

    /// `p->m` of a split link struct (`frontend::intrusive`): the link object the
    /// hidden field `field` (`$m`) of struct `s` points to.
    fn split_link(&mut self, c: Cursor<'t>, p: VarId, s: StructId, field: &str) -> R<Lv> {
        let CTy::Struct(l) = self.cx.conv(c.ty(), c)? else {
            return unsup(c, "internal: link struct");
        };
        let Some(idx) = self.cx.prog.structs[s].field_index(field) else {
            return unsup(c, "internal: hidden link field not found");
        };
        let t = self.tmp(Ty::Ptr(Box::new(Ty::Struct(l))));
        let field = FieldRef {
            strukt: s,
            field: idx,
        };
        self.emit(
            Op::Load {
                dst: t,
                ptr: p,
                field,
            },
            loc(c),
        );
        Ok(Lv::Obj(t, l, String::new()))
    }

    /// The value of `lv` (a load into a temporary for memory).
    pub(super) fn read(&mut self, lv: Lv, at: Cursor<'t>) -> R<Expr> {
        let src = loc(at);
        match lv {
            Lv::Var(v) => Ok(Expr::Var(v)),
            Lv::Field(ptr, field) => {
                let ty = self.cx.prog.field(field).ty.clone();
                let t = self.tmp(ty);
                self.emit(Op::Load { dst: t, ptr, field }, src);
                Ok(Expr::Var(t))
            }
            Lv::Deref(ptr, ty) => {
                let t = self.tmp(ty);
                self.emit(Op::LoadIndirect { dst: t, ptr }, src);
                Ok(Expr::Var(t))
            }
            Lv::Obj(..) => unsup(at, "struct value (copy/pass/return by value)"),
            Lv::Arr(_) => unsup(at, "array used as a value (array-to-pointer decay)"),
            Lv::Switch(i, arms) => self.read_switch(i, arms, at),
        }
    }

    /// Writes `e` into `lv`.
    pub(super) fn write(&mut self, lv: Lv, e: Expr, at: Cursor<'t>) -> R<()> {
        let src = loc(at);
        match lv {
            Lv::Var(dst) => self.emit(Op::Assign { dst, src: e }, src),
            Lv::Field(ptr, field) => self.emit(Op::Store { ptr, field, src: e }, src),
            Lv::Deref(ptr, _) => self.emit(Op::StoreIndirect { ptr, src: e }, src),
            Lv::Obj(..) => return unsup(at, "struct assignment"),
            Lv::Arr(_) => return unsup(at, "array assignment"),
            Lv::Switch(i, arms) => return self.write_switch(i, arms, e, at),
        }
        Ok(())
    }

    /// Copies a struct (or embedded struct) field by field: all source fields are
    /// loaded before any destination field is stored (the two may overlap).
    pub(super) fn copy_struct(&mut self, to: Lv, from: Lv, at: Cursor<'t>) -> R<()> {
        let (Lv::Obj(dp, ds, dpre), Lv::Obj(sp, ss, spre)) = (to, from) else {
            return unsup(at, "struct copy");
        };
        let sub = |cx: &Ctx<'t>, s: StructId, pre: &str| -> Vec<(usize, String, Ty)> {
            cx.prog.structs[s]
                .fields
                .iter()
                .enumerate()
                .filter_map(|(i, f)| {
                    f.name
                        .strip_prefix(pre)
                        .map(|rest| (i, rest.to_string(), f.ty.clone()))
                })
                .collect()
        };
        let dst_fields = sub(self.cx, ds, &dpre);
        let src_fields = sub(self.cx, ss, &spre);
        if dst_fields.iter().any(|f| f.1.contains('$')) {
            // hidden link or owner fields (`frontend::intrusive`) must not be shared
            return unsup(
                at,
                "copy of a struct that is or holds a link struct embedded in several places",
            );
        }
        let same = dst_fields.len() == src_fields.len()
            && dst_fields
                .iter()
                .zip(&src_fields)
                .all(|(a, b)| a.1 == b.1 && a.2 == b.2);
        if !same || dst_fields.is_empty() {
            return unsup(at, "struct copy between different struct types");
        }
        let src = loc(at);
        let mut vals = Vec::new();
        for (i, _, ty) in &src_fields {
            let t = self.tmp(ty.clone());
            let field = FieldRef {
                strukt: ss,
                field: *i,
            };
            self.emit(
                Op::Load {
                    dst: t,
                    ptr: sp,
                    field,
                },
                src,
            );
            vals.push(t);
        }
        for ((i, _, _), t) in dst_fields.iter().zip(vals) {
            let field = FieldRef {
                strukt: ds,
                field: *i,
            };
            self.emit(
                Op::Store {
                    ptr: dp,
                    field,
                    src: Expr::Var(t),
                },
                src,
            );
        }
        Ok(())
    }

    /// The scalar type of `lv` (None for a struct object).
    pub(super) fn lv_ty(&self, lv: &Lv) -> Option<Ty> {
        match lv {
            Lv::Var(v) => Some(self.cx.prog.vars[*v].ty.clone()),
            Lv::Field(_, f) => Some(self.cx.prog.field(*f).ty.clone()),
            Lv::Deref(_, t) => Some(t.clone()),
            Lv::Obj(..) | Lv::Arr(_) => None,
            Lv::Switch(_, arms) => arms.first().and_then(|a| self.lv_ty(a)),
        }
    }

    /// The scalar variable an lvalue expression denotes, if it is one (emits nothing).
    pub(super) fn var_peek(&mut self, l: Cursor<'t>) -> R<Option<VarId>> {
        let s = strip_parens(l);
        if s.kind() == CXCursor_DeclRefExpr {
            if let Some(d) = s.referenced() {
                if matches!(d.kind(), CXCursor_VarDecl | CXCursor_ParmDecl) {
                    let v = self.var_of(d, s)?;
                    if !self.cx.obj_vars.contains_key(&v) && !self.cx.cell_vars.contains_key(&v) {
                        return Ok(Some(v));
                    }
                }
            }
        }
        Ok(None)
    }
}
