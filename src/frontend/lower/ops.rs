//! Operators: unary (`&`, `*`, `++`/`--`, `-`, `~`, `!`) and binary (arithmetic,
//! comparisons, `&&`/`||`, the comma, assignments and compound assignments).

use super::cursor::{has_side_effects, strip_noop};
use super::expr::{as_comparison, is_const};
use super::lvalue::Lv;
use super::{loc, unsup, FnLower, R};
use crate::cfa::{BinOp, Expr, LocKind, Op, Ty, UnOp};
use crate::frontend::clang::Cursor;
use crate::frontend::intrusive;
use crate::frontend::types::{is_fn_ptr, is_fn_type, promote, wrap_const, BOOL};
use clang_sys::*;

fn binop(k: CXBinaryOperatorKind) -> Option<BinOp> {
    Some(match k {
        CXBinaryOperator_Mul | CXBinaryOperator_MulAssign => BinOp::Mul,
        CXBinaryOperator_Div | CXBinaryOperator_DivAssign => BinOp::Div,
        CXBinaryOperator_Rem | CXBinaryOperator_RemAssign => BinOp::Rem,
        CXBinaryOperator_Add | CXBinaryOperator_AddAssign => BinOp::Add,
        CXBinaryOperator_Sub | CXBinaryOperator_SubAssign => BinOp::Sub,
        CXBinaryOperator_Shl | CXBinaryOperator_ShlAssign => BinOp::Shl,
        CXBinaryOperator_Shr | CXBinaryOperator_ShrAssign => BinOp::Shr,
        CXBinaryOperator_And | CXBinaryOperator_AndAssign => BinOp::BitAnd,
        CXBinaryOperator_Xor | CXBinaryOperator_XorAssign => BinOp::BitXor,
        CXBinaryOperator_Or | CXBinaryOperator_OrAssign => BinOp::BitOr,
        CXBinaryOperator_LT => BinOp::Lt,
        CXBinaryOperator_GT => BinOp::Gt,
        CXBinaryOperator_LE => BinOp::Le,
        CXBinaryOperator_GE => BinOp::Ge,
        CXBinaryOperator_EQ => BinOp::Eq,
        CXBinaryOperator_NE => BinOp::Ne,
        _ => return None,
    })
}

/// Wraps an arithmetic result into its (unsigned or narrow) type.
fn wrap_arith(op: BinOp, e: Expr, ty: &Ty) -> Expr {
    let wraps = matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl);
    match ty {
        Ty::Int {
            signed: false,
            bits,
        } if wraps && *bits > 1 => match e {
            Expr::Int(n) => Expr::Int(wrap_const(n, ty)),
            e => Expr::Cast(ty.clone(), Box::new(e)),
        },
        _ => e,
    }
}

impl<'c, 't> FnLower<'c, 't> {
    /// Lowers a unary operator; `want`: its value is used.
    pub(super) fn unary(&mut self, c: Cursor<'t>, want: bool) -> R<Option<Expr>> {
        let op = c.unary_op();
        let inner = self.only_child(c)?;
        match op {
            CXUnaryOperator_PostInc
            | CXUnaryOperator_PostDec
            | CXUnaryOperator_PreInc
            | CXUnaryOperator_PreDec => {
                let post = matches!(op, CXUnaryOperator_PostInc | CXUnaryOperator_PostDec);
                let bop = if matches!(op, CXUnaryOperator_PostInc | CXUnaryOperator_PreInc) {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                self.incdec(c, inner, bop, post, want).map(Some)
            }
            CXUnaryOperator_AddrOf => {
                if is_fn_type(inner.ty()) {
                    return self.fn_value(inner).map(Some);
                }
                let lv = self.lv(inner)?;
                self.addr_of(lv, c, inner).map(Some)
            }
            CXUnaryOperator_Deref => {
                if !want && c.ty().canonical().kind() == CXType_Record {
                    self.lv(c)?;
                    return Ok(None);
                }
                let lv = self.lv(c)?;
                self.read(lv, c).map(Some)
            }
            CXUnaryOperator_Plus | CXUnaryOperator_Extension => {
                if want {
                    self.rv(inner).map(Some)
                } else {
                    self.effect(inner).map(|_| None)
                }
            }
            CXUnaryOperator_Minus | CXUnaryOperator_Not => {
                let ty = self.ety(c)?;
                let e = self.rv(inner)?;
                let (uop, bop) = if op == CXUnaryOperator_Minus {
                    (UnOp::Neg, BinOp::Sub)
                } else {
                    (UnOp::BitNot, BinOp::Sub)
                };
                let e = Expr::Unary(uop, Box::new(e));
                Ok(Some(wrap_arith(bop, e, &ty)))
            }
            CXUnaryOperator_LNot => {
                let ity = self.ety(inner)?;
                let e = self.rv(inner)?;
                Ok(Some(match as_comparison(e, &ity) {
                    cmp @ Expr::Binary(..) => cmp.negate(),
                    other => Expr::Unary(UnOp::Not, Box::new(other)),
                }))
            }
            _ => unsup(c, "unary operator"),
        }
    }

    /// The address `&inner` (the expression `c`) of the lvalue `lv`.
    fn addr_of(&mut self, lv: Lv, c: Cursor<'t>, inner: Cursor<'t>) -> R<Expr> {
        let src = loc(c);
        match lv {
            Lv::Field(ptr, field) => {
                let fty = self.cx.prog.field(field).ty.clone();
                let t = self.tmp(Ty::Ptr(Box::new(fty)));
                self.emit(Op::FieldAddr { dst: t, ptr, field }, src);
                Ok(Expr::Var(t))
            }
            Lv::Obj(p, _, prefix) if prefix.is_empty() => Ok(Expr::Var(p)),
            // `&t->m` of the link struct identified with its container is `t`
            Lv::Obj(p, _, prefix) if prefix == self.cx.obj_prefix(inner.ty()) => Ok(Expr::Var(p)),
            Lv::Obj(..) => {
                let why = self
                    .cx
                    .intrusive
                    .refused
                    .get(&intrusive::record_key(inner.ty().canonical().declaration()))
                    .map(|places| format!(" (it is embedded in several places: {places}; container_of is supported for a struct embedded in one place only)"))
                    .unwrap_or_default();
                unsup(c, &format!("address of an embedded struct{why}"))
            }
            Lv::Deref(p, _) => Ok(Expr::Var(p)),
            Lv::Var(_) => unsup(c, "address of a scalar variable"),
            Lv::Arr(_) => unsup(c, "address of an array (a pointer to an array)"),
            Lv::Switch(i, arms) => {
                // `&a[i]`: an index out of `0..N` is not modelled (one past the end)
                let ty = self.ety(c)?;
                let t = self.tmp(ty);
                self.branch_on(i, arms, LocKind::Unmodelled, src, |fl, arm| {
                    let e = fl.addr_of(arm, c, inner)?;
                    fl.emit(Op::Assign { dst: t, src: e }, src);
                    Ok(())
                })?;
                Ok(Expr::Var(t))
            }
        }
    }

    fn incdec(
        &mut self,
        c: Cursor<'t>,
        inner: Cursor<'t>,
        bop: BinOp,
        post: bool,
        want: bool,
    ) -> R<Expr> {
        let src = loc(c);
        if is_fn_ptr(inner.ty()) {
            return unsup(c, "function pointer arithmetic");
        }
        let ty = self.ety(inner)?;
        if let Ty::Ptr(pointee) = &ty {
            // `p++` within an array
            if **pointee == Ty::Void {
                return unsup(c, "pointer arithmetic on a void pointer");
            }
            let pointee = (**pointee).clone();
            let lv = self.lv(inner)?;
            let old = self.read(lv.clone(), c)?;
            let old = self.snapshot(old, ty.clone(), src);
            let Expr::Var(pv) = old else {
                return unsup(c, "internal: pointer increment");
            };
            let step = Expr::Int(if bop == BinOp::Add { 1 } else { -1 });
            let new = self.shift(pv, &pointee, step, c)?;
            self.write(lv, new.clone(), c)?;
            return Ok(if post { Expr::Var(pv) } else { new });
        }
        if ty == BOOL {
            return unsup(c, "++/-- on _Bool");
        }
        let step = |e: Expr| -> Expr {
            let r = Expr::bin(bop, e, Expr::Int(1));
            match &ty {
                Ty::Int { bits, signed: true } if *bits >= 32 => r,
                t => Expr::Cast(t.clone(), Box::new(r)),
            }
        };
        let lv = self.lv(inner)?;
        if let Lv::Var(v) = lv {
            let old = if post && want {
                let t = self.tmp(ty.clone());
                self.emit(
                    Op::Assign {
                        dst: t,
                        src: Expr::Var(v),
                    },
                    src,
                );
                Some(Expr::Var(t))
            } else {
                None
            };
            let new = step(Expr::Var(v));
            self.emit(Op::Assign { dst: v, src: new }, src);
            return Ok(old.unwrap_or(Expr::Var(v)));
        }
        let old = self.read(lv.clone(), c)?;
        let new = step(old.clone());
        self.write(lv, new.clone(), c)?;
        Ok(if post { old } else { new })
    }

    /// Lowers a binary operator (assignments and compound assignments included); `want`:
    /// its value is used.
    pub(super) fn binary(&mut self, c: Cursor<'t>, want: bool) -> R<Option<Expr>> {
        let k = c.binary_op();
        let ch = c.expr_children();
        if ch.len() != 2 {
            return unsup(c, "internal: binary operator arity");
        }
        let (l, r) = (ch[0], ch[1]);
        let fn_ptrs = is_fn_ptr(l.ty()) || is_fn_ptr(r.ty());
        if fn_ptrs
            && !matches!(
                k,
                CXBinaryOperator_Comma
                    | CXBinaryOperator_LAnd
                    | CXBinaryOperator_LOr
                    | CXBinaryOperator_Assign
                    | CXBinaryOperator_EQ
                    | CXBinaryOperator_NE
            )
        {
            return unsup(c, "function pointer arithmetic or relational comparison");
        }
        match k {
            CXBinaryOperator_Comma => {
                self.effect(l)?;
                if want {
                    self.rv(r).map(Some)
                } else {
                    self.effect(r).map(|_| None)
                }
            }
            CXBinaryOperator_LAnd | CXBinaryOperator_LOr => self.logical(c, k, l, r, want),
            CXBinaryOperator_Assign => self.assign(c, l, r, want),
            CXBinaryOperator_MulAssign
            | CXBinaryOperator_DivAssign
            | CXBinaryOperator_RemAssign
            | CXBinaryOperator_AddAssign
            | CXBinaryOperator_SubAssign
            | CXBinaryOperator_ShlAssign
            | CXBinaryOperator_ShrAssign
            | CXBinaryOperator_AndAssign
            | CXBinaryOperator_XorAssign
            | CXBinaryOperator_OrAssign => self.compound_assign(c, k, l, r, want),
            _ => self.arith(c, k, l, r, fn_ptrs),
        }
    }

    /// `l && r` / `l || r`: as a value, a branch that assigns 1 or 0 to a temporary;
    /// for the effect only, `r` is lowered on the path where `l` does not decide.
    fn logical(
        &mut self,
        c: Cursor<'t>,
        k: CXBinaryOperatorKind,
        l: Cursor<'t>,
        r: Cursor<'t>,
        want: bool,
    ) -> R<Option<Expr>> {
        let src = loc(c);
        if want {
            let t = self.tmp(Ty::INT);
            let (nt, nf, join) = (self.node(src), self.node(src), self.node(src));
            self.cond(c, Some(nt), Some(nf))?;
            self.cur = nt;
            self.emit(
                Op::Assign {
                    dst: t,
                    src: Expr::Int(1),
                },
                src,
            );
            self.jump(join, src);
            self.cur = nf;
            self.emit(
                Op::Assign {
                    dst: t,
                    src: Expr::Int(0),
                },
                src,
            );
            self.jump(join, src);
            self.cur = join;
            Ok(Some(Expr::Var(t)))
        } else {
            let (m, join) = (self.node(src), self.node(src));
            if k == CXBinaryOperator_LAnd {
                self.cond(l, Some(m), Some(join))?;
            } else {
                self.cond(l, Some(join), Some(m))?;
            }
            self.cur = m;
            self.effect(r)?;
            self.jump(join, src);
            self.cur = join;
            Ok(None)
        }
    }

    /// `l = r`: a struct assignment is a field-by-field copy; a scalar variable receives
    /// `r` directly; otherwise the converted value is written (and kept in a temporary
    /// when the value of the assignment is wanted).
    fn assign(
        &mut self,
        c: Cursor<'t>,
        l: Cursor<'t>,
        r: Cursor<'t>,
        want: bool,
    ) -> R<Option<Expr>> {
        let src = loc(c);
        if c.ty().canonical().kind() == CXType_Record {
            if want {
                return unsup(c, "value of a struct assignment");
            }
            let from = self.lv(strip_noop(r))?;
            let to = self.lv(l)?;
            self.copy_struct(to, from, c)?;
            return Ok(None);
        }
        if let Some(v) = self.var_peek(l)? {
            self.rhs_into(r, v)?;
            return Ok(Some(Expr::Var(v)));
        }
        let e = self.rv(r)?;
        let lv = self.lv(l)?;
        let rty = self.ety(r)?;
        let Some(lty) = self.lv_ty(&lv) else {
            return unsup(c, "struct assignment");
        };
        let e = self.convert(e, &rty, &lty, c)?;
        let e = if want && !is_const(&e) && !matches!(lv, Lv::Var(_)) {
            // keep the stored value available without re-reading memory
            self.snapshot(e, lty, src)
        } else {
            e
        };
        self.write(lv, e.clone(), c)?;
        Ok(Some(e))
    }

    /// `l op= r`: the operation is done in the type of `r` (of the promoted `l` for
    /// shifts) and its result converted back to the type of `l`.
    fn compound_assign(
        &mut self,
        c: Cursor<'t>,
        k: CXBinaryOperatorKind,
        l: Cursor<'t>,
        r: Cursor<'t>,
        want: bool,
    ) -> R<Option<Expr>> {
        let src = loc(c);
        let Some(op) = binop(k) else {
            return unsup(c, "internal: compound operator");
        };
        let lty = self.ety(l)?;
        if let (Ty::Ptr(pointee), BinOp::Add | BinOp::Sub) = (&lty, op) {
            // `p += i` within an array
            if **pointee == Ty::Void || self.ety(r)?.is_ptr() {
                return unsup(c, "pointer arithmetic");
            }
            let pointee = (**pointee).clone();
            let re = self.rv(r)?;
            let re = if op == BinOp::Sub {
                Expr::bin(BinOp::Sub, Expr::Int(0), re)
            } else {
                re
            };
            let re = self.snapshot(re, Ty::INT, src);
            let lv = self.lv(l)?;
            let old = self.read(lv.clone(), c)?;
            let old = self.snapshot(old, lty.clone(), src);
            let Expr::Var(pv) = old else {
                return unsup(c, "internal: pointer arithmetic");
            };
            let new = self.shift(pv, &pointee, re, c)?;
            self.write(lv, new.clone(), c)?;
            return Ok(Some(new));
        }
        if lty.is_ptr() {
            return unsup(c, "pointer arithmetic");
        }
        let rty = self.ety(r)?;
        let comp = if matches!(op, BinOp::Shl | BinOp::Shr) {
            promote(&lty)
        } else {
            rty.clone()
        };
        let re = self.rv(r)?;
        let lv = self.lv(l)?;
        let old = self.read(lv.clone(), c)?;
        let old = self.convert(old, &lty, &comp, c)?;
        let res = wrap_arith(op, Expr::bin(op, old, re), &comp);
        let new = self.convert(res, &comp, &lty, c)?;
        let is_var = matches!(lv, Lv::Var(_));
        let new = if want && !is_var {
            self.snapshot(new, lty, src)
        } else {
            new
        };
        self.write(lv.clone(), new.clone(), c)?;
        Ok(Some(match lv {
            Lv::Var(v) => Expr::Var(v),
            _ => new,
        }))
    }

    /// `l op r` for the arithmetic, bitwise and comparison operators: `l` is kept in a
    /// temporary when `r` has side effects; pointers only in `==`/`!=`; function
    /// pointers (`fn_ptrs`) are compared as function ids.
    fn arith(
        &mut self,
        c: Cursor<'t>,
        k: CXBinaryOperatorKind,
        l: Cursor<'t>,
        r: Cursor<'t>,
        fn_ptrs: bool,
    ) -> R<Option<Expr>> {
        let src = loc(c);
        let Some(op) = binop(k) else {
            return unsup(c, "binary operator");
        };
        let lty = self.ety(l)?;
        let rty = self.ety(r)?;
        if !fn_ptrs && matches!(op, BinOp::Add | BinOp::Sub) {
            // `p + i`, `i + p`, `p - i`: pointer arithmetic within an array
            let (p, i, neg) = match (&lty, &rty) {
                (Ty::Ptr(_), Ty::Int { .. }) => (l, r, op == BinOp::Sub),
                (Ty::Int { .. }, Ty::Ptr(_)) if op == BinOp::Add => (r, l, false),
                _ => (l, r, true),
            };
            let pty = self.ety(p)?;
            if let (Ty::Ptr(pointee), false) = (&pty, self.ety(i)?.is_ptr()) {
                if **pointee != Ty::Void {
                    let pointee = (**pointee).clone();
                    let pe = self.rv(p)?;
                    let pv = self.atom(pe, pty.clone(), loc(p));
                    let ie = self.rv(i)?;
                    let ie = if neg {
                        Expr::bin(BinOp::Sub, Expr::Int(0), ie)
                    } else {
                        ie
                    };
                    return self.shift(pv, &pointee, ie, c).map(Some);
                }
            }
        }
        if (lty.is_ptr() || rty.is_ptr()) && !matches!(op, BinOp::Eq | BinOp::Ne) {
            return unsup(c, "pointer arithmetic or relational pointer comparison");
        }
        let mut le = self.rv(l)?;
        if has_side_effects(r) {
            le = self.snapshot(le, lty, src);
        }
        let mut re = self.rv(r)?;
        if fn_ptrs {
            // function ids: NULL is 0; a data pointer is never a function
            for (side, e) in [(l, &mut le), (r, &mut re)] {
                if *e == Expr::Null {
                    *e = Expr::Int(0);
                }
                if !is_fn_ptr(side.ty()) && *e != Expr::Int(0) {
                    return unsup(
                        c,
                        "comparison of a function pointer with a non-function pointer",
                    );
                }
            }
        }
        let ty = self.ety(c)?;
        Ok(Some(wrap_arith(op, Expr::bin(op, le, re), &ty)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_arithmetic_wraps() {
        let u32t = Ty::Int {
            bits: 32,
            signed: false,
        };
        let e = wrap_arith(BinOp::Add, Expr::Var(0), &u32t);
        assert_eq!(e, Expr::Cast(u32t.clone(), Box::new(Expr::Var(0))));
        assert_eq!(wrap_arith(BinOp::Add, Expr::Var(0), &Ty::INT), Expr::Var(0));
        assert_eq!(
            wrap_arith(BinOp::Sub, Expr::Int(-1), &u32t),
            Expr::Int(4294967295)
        );
    }
}
