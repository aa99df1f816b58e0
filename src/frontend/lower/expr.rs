//! Expressions: rvalues (`rv`), expressions evaluated for their effects only
//! (`effect`), assignment of a value into a variable (`rhs_into`), conversions between
//! scalar types, and the checks of conversions of intrusive link structs.

use super::cursor::{
    direct_callee, has_side_effects, is_alloc_call, strip_casts, strip_noop, strip_parens,
};
use super::lvalue::Lv;
use super::{loc, unsup, FnLower, R};
use crate::cfa::{BinOp, Expr, Op, Ty, UnOp, VarId};
use crate::frontend::clang::{Cursor, Type};
use crate::frontend::intrusive;
use crate::frontend::types::{is_fn_ptr, is_fn_type, range_includes, wrap_const, CTy, BOOL};
use clang_sys::*;

/// The zero of type `t` (NULL for pointers).
pub(super) fn zero(t: &Ty) -> Expr {
    if t.is_ptr() {
        Expr::Null
    } else {
        Expr::Int(0)
    }
}

/// As a condition: a comparison (`e != 0` / `e != NULL` unless already one).
pub(super) fn as_comparison(e: Expr, ty: &Ty) -> Expr {
    match e {
        Expr::Binary(op, _, _) if op.is_comparison() => e,
        Expr::Unary(UnOp::Not, inner) => Expr::bin(BinOp::Eq, *inner, Expr::Int(0)),
        e => Expr::bin(BinOp::Ne, e, zero(ty)),
    }
}

/// Whether `e` is a constant (an integer or NULL).
pub(super) fn is_const(e: &Expr) -> bool {
    matches!(e, Expr::Int(_) | Expr::Null)
}

impl<'c, 't> FnLower<'c, 't> {
    /// `container_of(p, T, m)` (see `frontend::intrusive`): `p`, when the link struct `p`
    /// points to is identified with member `m` of `T`; `p->$own_T_m` (or a dummy `T`)
    /// when the link struct is split and `m` one of its places; refused otherwise.
    fn container_of(&mut self, c: Cursor<'t>) -> R<Option<Expr>> {
        let Some((p, target, k)) = intrusive::container_of(c) else {
            return Ok(None);
        };
        let link = p.ty().canonical().pointee().canonical().declaration();
        let key = intrusive::record_key(link);
        if let Some(split) = self.cx.intrusive.splits.get(&key) {
            // `p->$own_T_m`: the container of the link object, or a dummy `T` for a head
            // or a link embedded at another place (`lower::links`)
            let tkey = intrusive::record_key(target);
            let place = split
                .places
                .iter()
                .find(|pl| {
                    intrusive::record_key(pl.container) == tkey
                        && i64::try_from(pl.offset).ok() == Some(k)
                })
                .cloned();
            let Some(place) = place else {
                return unsup(c, &format!("pointer arithmetic on `struct {} *` other than container_of at one of the places it is embedded at", link.spelling()));
            };
            let pty = self.ety(p)?;
            let Some(l) = pty.pointee_struct() else {
                return unsup(c, "internal: link struct pointer");
            };
            let e = self.rv(p)?;
            let ptr = self.atom(e, pty, loc(p));
            let dst = self.split_container_of(ptr, l, &place, c, loc(c))?;
            return Ok(Some(Expr::Var(dst)));
        }
        let Some(a) = self.cx.intrusive.aliases.get(&key) else {
            let why = match self.cx.intrusive.refused.get(&key) {
                Some(places) => format!(
                    "container_of of `struct {}`, which is embedded in several places ({places})",
                    link.spelling()
                ),
                None => format!(
                    "container_of of `struct {}`, which is embedded in no struct",
                    link.spelling()
                ),
            };
            return unsup(c, &why);
        };
        let same_container = intrusive::record_key(target) == intrusive::record_key(a.container);
        if !same_container || u64::try_from(k).ok() != Some(a.offset) {
            return unsup(
                c,
                &format!(
                    "pointer arithmetic on `struct {} *` other than container_of(p, struct {}, {})",
                    link.spelling(),
                    a.container.spelling(),
                    a.member
                ),
            );
        }
        self.rv(p).map(Some)
    }

    /// Refuses a conversion `c` of `inner` between a pointer to a link struct identified
    /// with a member at a nonzero offset and another pointer type (the addresses differ
    /// in C, not in the CFA); NULL and allocations are fine.
    fn check_link_conversion(&mut self, c: Cursor<'t>, inner: Cursor<'t>) -> R<()> {
        let (to, from) = (c.ty().canonical(), inner.ty().canonical());
        if to.kind() != CXType_Pointer || from.kind() != CXType_Pointer {
            return Ok(());
        }
        let key = |t: Type<'t>| {
            let p = t.pointee().canonical();
            (p.kind() == CXType_Record).then(|| intrusive::record_key(p.declaration()))
        };
        let (kt, kf) = (key(to), key(from));
        if kt == kf {
            return Ok(());
        }
        self.check_split_conversion(c, inner, &kt, &kf)?;
        let shifted = |k: &Option<String>| {
            k.as_ref()
                .and_then(|k| self.cx.intrusive.aliases.get(k))
                .is_some_and(|a| a.offset != 0)
        };
        if !(shifted(&kt) || shifted(&kf)) {
            return Ok(());
        }
        let stripped = strip_casts(inner);
        if is_alloc_call(stripped) || stripped.eval_int() == Some(0) {
            return Ok(());
        }
        unsup(
            c,
            &format!(
                "conversion from `{}` to `{}` (the link struct is embedded at a nonzero offset; only container_of is supported)",
                from.spelling(),
                to.spelling()
            ),
        )
    }

    /// Refuses a conversion `c` of `inner` from a pointer to record `kf` to one to
    /// record `kt` (keys) when either is a split link struct or a struct that embeds one
    /// (`frontend::intrusive`): those objects differ from C's, so only allocations, NULL
    /// and direct operands of `==`/`!=` are converted, and the latter not from or to a
    /// container that embeds a link at offset 0 (equal in C, not here).
    fn check_split_conversion(
        &mut self,
        c: Cursor<'t>,
        inner: Cursor<'t>,
        kt: &Option<String>,
        kf: &Option<String>,
    ) -> R<()> {
        let intr = &self.cx.intrusive;
        let hosts = |k: &str| {
            intr.splits
                .values()
                .flat_map(|s| s.places.iter())
                .any(|p| intrusive::record_key(p.container) == k)
        };
        let related = |k: &Option<String>| {
            k.as_deref()
                .is_some_and(|k| intr.splits.contains_key(k) || hosts(k))
        };
        if !related(kt) && !related(kf) {
            return Ok(());
        }
        let stripped = strip_casts(inner);
        if is_alloc_call(stripped) || stripped.eval_int() == Some(0) {
            return Ok(());
        }
        let at_zero = |l: &Option<String>, t: &Option<String>| {
            let (Some(l), Some(t)) = (l, t) else {
                return false;
            };
            intr.splits.get(l).is_some_and(|s| {
                s.places
                    .iter()
                    .any(|p| p.offset == 0 && intrusive::record_key(p.container) == *t)
            })
        };
        // a container with a link at offset 0 has that link's address, in C, which may
        // come as a pointer to one of the link's fields
        let host_at_zero = |k: &Option<String>| {
            k.as_deref().is_some_and(|k| {
                intr.splits
                    .values()
                    .flat_map(|s| s.places.iter())
                    .any(|p| p.offset == 0 && intrusive::record_key(p.container) == k)
            })
        };
        if intr.compared.contains(&c)
            && !at_zero(kt, kf)
            && !at_zero(kf, kt)
            && !host_at_zero(kt)
            && !host_at_zero(kf)
        {
            return Ok(());
        }
        unsup(
            c,
            &format!(
                "conversion from `{}` to `{}` (a link struct embedded in several places, and each struct embedding one, are objects of their own: only container_of, allocation and comparison are supported)",
                inner.ty().spelling(),
                c.ty().spelling()
            ),
        )
    }

    /// The value of `c` converted to `ty`.
    pub(super) fn rv_as(&mut self, c: Cursor<'t>, ty: &Ty) -> R<Expr> {
        let from = self.ety(c)?;
        let e = self.rv(c)?;
        self.convert(e, &from, ty, c)
    }

    // ----- conversions -----

    /// `e` of type `from` converted to `to` (wrapped, compared with zero for `_Bool`);
    /// conversions between integers and pointers are refused, but for 0 to NULL and a
    /// pointer to `_Bool`.
    pub(super) fn convert(&mut self, e: Expr, from: &Ty, to: &Ty, at: Cursor<'t>) -> R<Expr> {
        if from == to {
            return Ok(e);
        }
        match (from, to) {
            (Ty::Int { .. }, Ty::Int { .. }) => {
                if *to == BOOL {
                    return Ok(match e {
                        Expr::Int(n) => Expr::Int((n != 0) as i64),
                        e => as_comparison(e, from),
                    });
                }
                if range_includes(to, from) {
                    return Ok(e);
                }
                Ok(match e {
                    Expr::Int(n) => Expr::Int(wrap_const(n, to)),
                    e => Expr::Cast(to.clone(), Box::new(e)),
                })
            }
            (Ty::Ptr(_), Ty::Ptr(_)) => Ok(match e {
                Expr::Null => Expr::Null,
                e => Expr::Cast(to.clone(), Box::new(e)),
            }),
            (Ty::Int { .. }, Ty::Ptr(_)) => match e {
                Expr::Int(0) => Ok(Expr::Null),
                _ => unsup(at, "integer to pointer conversion"),
            },
            (Ty::Ptr(_), Ty::Int { .. }) if *to == BOOL => Ok(as_comparison(e, from)),
            (Ty::Ptr(_), Ty::Int { .. }) => unsup(at, "pointer to integer conversion"),
            _ => unsup(at, "conversion"),
        }
    }

    // ----- expressions -----

    /// Lowers an expression whose value is needed; returns a pure expression.
    pub(super) fn rv(&mut self, c: Cursor<'t>) -> R<Expr> {
        self.rv_h(c, None)
    }

    /// `rv` with the pointee type an allocation in value position should get when its
    /// own type is `void *` (from an enclosing pointer cast, e.g. through `?:`).
    fn rv_h(&mut self, c: Cursor<'t>, hint: Option<Ty>) -> R<Expr> {
        let k = c.kind();
        let src = loc(c);
        let cty = c.ty().canonical();
        let int_typed = !matches!(
            cty.kind(),
            CXType_Pointer | CXType_Record | CXType_Void | CXType_ConstantArray
        );
        if int_typed && k != CXCursor_DeclRefExpr && !has_side_effects(c) {
            if let Some(v) = c.eval_int() {
                if let CTy::Scalar(t @ Ty::Int { .. }) = self.cx.conv(c.ty(), c)? {
                    return Ok(Expr::Int(wrap_const(v, &t)));
                }
            }
        }
        match k {
            CXCursor_ParenExpr => self.rv_h(self.only_child(c)?, hint),
            CXCursor_UnexposedExpr | CXCursor_CStyleCastExpr => {
                if let Some(e) = self.container_of(c)? {
                    return Ok(e);
                }
                let inner = self.only_child(c)?;
                let to = self.cx.conv(c.ty(), c)?;
                if to == CTy::Void {
                    return unsup(c, "void value");
                }
                self.check_link_conversion(c, inner)?;
                let ik = inner.ty().canonical().kind();
                if is_fn_type(inner.ty()) || is_fn_ptr(inner.ty()) || is_fn_ptr(c.ty()) {
                    return self.fn_ptr_conversion(c, inner);
                }
                if matches!(ik, CXType_ConstantArray | CXType_IncompleteArray) {
                    return if strip_parens(inner).kind() == CXCursor_StringLiteral {
                        unsup(c, "string literal")
                    } else {
                        let lv = self.lv(strip_parens(inner))?;
                        self.decay(lv, c)
                    };
                }
                let CTy::Scalar(to) = to else {
                    // struct-typed no-op cast (e.g. lvalue-to-rvalue of a struct)
                    return unsup(c, "struct value (copy/pass/return by value)");
                };
                let h = match &to {
                    Ty::Ptr(p) if **p != Ty::Void => Some((**p).clone()),
                    Ty::Ptr(_) => hint,
                    _ => None,
                };
                let stripped = strip_casts(inner);
                if to.is_ptr() && is_alloc_call(stripped) {
                    let t = self.tmp(to.clone());
                    self.alloc(stripped, t, Some(c), h)?;
                    return Ok(Expr::Var(t));
                }
                let from = self.ety(inner)?;
                let e = self.rv_h(inner, h)?;
                self.convert(e, &from, &to, c)
            }
            CXCursor_IntegerLiteral | CXCursor_CharacterLiteral => {
                unsup(c, "integer literal that cannot be evaluated")
            }
            CXCursor_FloatingLiteral => unsup(c, "floating point"),
            CXCursor_StringLiteral => unsup(c, "string literal"),
            CXCursor_DeclRefExpr => {
                let Some(d) = c.referenced() else {
                    return unsup(c, "internal: unresolved reference");
                };
                match d.kind() {
                    CXCursor_VarDecl | CXCursor_ParmDecl => {
                        let v = self.var_of(d, c)?;
                        if self.cx.obj_vars.contains_key(&v) {
                            return unsup(c, "struct value (copy/pass/return by value)");
                        }
                        if let Some(t) = self.cx.cell_vars.get(&v).cloned() {
                            return self.read(Lv::Deref(v, t), c);
                        }
                        Ok(Expr::Var(v))
                    }
                    CXCursor_EnumConstantDecl => match c.eval_int() {
                        Some(v) => Ok(Expr::Int(v)),
                        None => unsup(c, "enum constant"),
                    },
                    CXCursor_FunctionDecl => self.fn_value(c),
                    _ => unsup(c, "reference"),
                }
            }
            CXCursor_MemberRefExpr => {
                let lv = self.lv(c)?;
                self.read(lv, c)
            }
            CXCursor_UnaryOperator => self.unary(c, true).map(|e| e.unwrap_or(Expr::Int(0))),
            CXCursor_BinaryOperator | CXCursor_CompoundAssignOperator => {
                self.binary(c, true).map(|e| e.unwrap_or(Expr::Int(0)))
            }
            CXCursor_ConditionalOperator => {
                let ch = c.expr_children();
                if ch.len() != 3 {
                    return unsup(c, "conditional operator without middle operand");
                }
                let ty = self.ety(c)?;
                let t = self.tmp(ty.clone());
                let (nt, nf, join) = (self.node(src), self.node(src), self.node(src));
                self.cond(ch[0], Some(nt), Some(nf))?;
                for (n, e) in [(nt, ch[1]), (nf, ch[2])] {
                    self.cur = n;
                    self.rhs_into_h(e, t, hint.clone())?;
                    self.jump(join, src);
                }
                self.cur = join;
                Ok(Expr::Var(t))
            }
            CXCursor_CallExpr => match self.call_h(c, true, hint)? {
                Some(e) => Ok(e),
                None => unsup(c, "use of a void value"),
            },
            CXCursor_UnaryExpr => match c.eval_int() {
                // sizeof/alignof: the operand is not evaluated
                Some(v) => Ok(Expr::Int(v)),
                None => unsup(c, "sizeof/alignof of a variable-length type"),
            },
            CXCursor_ArraySubscriptExpr => {
                let lv = self.lv(c)?;
                self.read(lv, c)
            }
            CXCursor_InitListExpr => unsup(c, "initialiser list"),
            CXCursor_CompoundLiteralExpr => unsup(c, "compound literal"),
            CXCursor_StmtExpr => {
                // GNU `({ s1; ...; e; })`: the value is that of the last expression statement
                let Some(body) = c
                    .children()
                    .into_iter()
                    .find(|x| x.kind() == CXCursor_CompoundStmt)
                else {
                    return unsup(c, "statement expression");
                };
                let stmts = body.children();
                let Some((&last, init)) = stmts.split_last() else {
                    return unsup(c, "statement expression without value");
                };
                if !last.is_expression() {
                    return unsup(c, "statement expression without value");
                }
                for s in init {
                    self.stmt(*s)?;
                }
                self.rv(last)
            }
            _ => unsup(c, &format!("expression `{}`", c.kind_name())),
        }
    }

    /// The operand of a cast or parenthesised expression `c`.
    pub(super) fn only_child(&self, c: Cursor<'t>) -> R<Cursor<'t>> {
        let ch = c.expr_children();
        if c.kind() == CXCursor_CStyleCastExpr && ch.len() == 2 {
            // `(__typeof__(*p) *) e`: the typeof operand (never evaluated) comes first
            return Ok(ch[1]);
        }
        if ch.len() != 1 {
            return unsup(c, &format!("expression `{}`", c.kind_name()));
        }
        Ok(ch[0])
    }

    /// Lowers an expression for its side effects only.
    pub(super) fn effect(&mut self, c: Cursor<'t>) -> R<()> {
        let src = loc(c);
        match c.kind() {
            CXCursor_ParenExpr => self.effect(self.only_child(c)?),
            CXCursor_UnexposedExpr | CXCursor_CStyleCastExpr => {
                let inner = self.only_child(c)?;
                if is_alloc_call(strip_casts(inner)) {
                    self.rv(c)?;
                    return Ok(());
                }
                self.effect(inner)
            }
            CXCursor_CallExpr => self.call(c, false).map(|_| ()),
            CXCursor_UnaryOperator => self.unary(c, false).map(|_| ()),
            CXCursor_BinaryOperator | CXCursor_CompoundAssignOperator => {
                self.binary(c, false).map(|_| ())
            }
            CXCursor_ConditionalOperator => {
                let ch = c.expr_children();
                if ch.len() != 3 {
                    return unsup(c, "conditional operator without middle operand");
                }
                let (nt, nf, join) = (self.node(src), self.node(src), self.node(src));
                self.cond(ch[0], Some(nt), Some(nf))?;
                for (n, e) in [(nt, ch[1]), (nf, ch[2])] {
                    self.cur = n;
                    self.effect(e)?;
                    self.jump(join, src);
                }
                self.cur = join;
                Ok(())
            }
            CXCursor_IntegerLiteral | CXCursor_CharacterLiteral | CXCursor_StringLiteral => Ok(()),
            CXCursor_StmtExpr => {
                match c
                    .children()
                    .into_iter()
                    .find(|x| x.kind() == CXCursor_CompoundStmt)
                {
                    Some(body) => self.stmt(body),
                    None => unsup(c, "statement expression"),
                }
            }
            CXCursor_UnaryExpr => Ok(()), // sizeof/alignof: operand not evaluated
            _ => {
                if c.ty().canonical().kind() == CXType_Void {
                    return unsup(c, &format!("expression `{}`", c.kind_name()));
                }
                if c.ty().canonical().kind() == CXType_Record {
                    // e.g. `s;` – evaluates an lvalue without reading it
                    self.lv(c)?;
                    return Ok(());
                }
                self.rv(c).map(|_| ())
            }
        }
    }

    /// `dst = c` (with the conversion to `dst`'s type).
    pub(super) fn rhs_into(&mut self, c: Cursor<'t>, dst: VarId) -> R<()> {
        self.rhs_into_h(c, dst, None)
    }

    /// `rhs_into` with an allocation type hint (see `rv_h`).
    fn rhs_into_h(&mut self, c: Cursor<'t>, dst: VarId, hint: Option<Ty>) -> R<()> {
        let src = loc(c);
        let dty = self.cx.prog.vars[dst].ty.clone();
        let s = strip_casts(c);
        if dty.is_ptr() && is_alloc_call(s) {
            return self.alloc(s, dst, Some(c), hint);
        }
        if s.kind() == CXCursor_CallExpr {
            if let Some(d) = direct_callee(s) {
                let name = d.spelling();
                let rty = self.cx.conv(d.result_type(), s)?;
                if rty == CTy::Scalar(dty.clone()) && self.cx.conv(c.ty(), c)? == rty {
                    if name.starts_with("__VERIFIER_nondet_") {
                        self.emit(Op::Nondet { dst }, src);
                        return Ok(());
                    }
                    if d.definition().is_some() && !self.is_special(&name) {
                        self.user_call(s, d, Some(dst))?;
                        return Ok(());
                    }
                }
            }
        }
        // `dst = p->f` / `dst = *p` with the same type: load directly into dst
        let n = strip_noop(c);
        let is_deref = n.kind() == CXCursor_UnaryOperator && n.unary_op() == CXUnaryOperator_Deref;
        let is_cell = n.kind() == CXCursor_DeclRefExpr
            && n.referenced().is_some_and(|d| {
                self.locals
                    .get(&d.canonical())
                    .or_else(|| self.cx.globals.get(&d.canonical()))
                    .is_some_and(|v| self.cx.cell_vars.contains_key(v))
            });
        if (n.kind() == CXCursor_MemberRefExpr || is_deref || is_cell)
            && self.cx.conv(n.ty(), n)? == CTy::Scalar(dty.clone())
        {
            match self.lv(n)? {
                Lv::Field(ptr, field) => {
                    self.emit(Op::Load { dst, ptr, field }, src);
                    return Ok(());
                }
                Lv::Deref(ptr, _) => {
                    self.emit(Op::LoadIndirect { dst, ptr }, src);
                    return Ok(());
                }
                lv => {
                    let e = self.read(lv, n)?;
                    self.emit(Op::Assign { dst, src: e }, src);
                    return Ok(());
                }
            }
        }
        let e = self.rv_h(c, hint)?;
        let from = self.ety(c)?;
        let e = self.convert(e, &from, &dty, c)?;
        self.emit(Op::Assign { dst, src: e }, src);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_comparison_makes_conditions_comparisons() {
        let e = as_comparison(Expr::Var(0), &Ty::INT);
        assert_eq!(e, Expr::bin(BinOp::Ne, Expr::Var(0), Expr::Int(0)));
        let p = as_comparison(Expr::Var(0), &Ty::Ptr(Box::new(Ty::Void)));
        assert_eq!(p, Expr::bin(BinOp::Ne, Expr::Var(0), Expr::Null));
        let c = Expr::bin(BinOp::Lt, Expr::Var(0), Expr::Int(1));
        assert_eq!(as_comparison(c.clone(), &Ty::INT), c);
    }
}
