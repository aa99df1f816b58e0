//! Conditions: branching on a C expression (short-circuit operators, `?:` and `!`
//! become control flow; every `Assume` condition is a comparison).

use super::cursor::{has_side_effects, is_alloc_call, strip_casts};
use super::expr::as_comparison;
use super::{loc, FnLower, R};
use crate::cfa::Op;
use crate::frontend::clang::Cursor;
use crate::frontend::types::{range_includes, CTy, BOOL};
use clang_sys::*;

impl<'c, 't> FnLower<'c, 't> {
    /// Branches on `c`: to `t` if true, to `f` if false (`None`: that branch is cut).
    /// Afterwards the current location is unreachable.
    pub(super) fn cond(&mut self, c: Cursor<'t>, t: Option<usize>, f: Option<usize>) -> R<()> {
        let src = loc(c);
        match c.kind() {
            CXCursor_ParenExpr => return self.cond(self.only_child(c)?, t, f),
            CXCursor_UnexposedExpr => {
                let inner = self.only_child(c)?;
                let to = self.cx.conv(c.ty(), c)?;
                let from = self.cx.conv(inner.ty(), inner)?;
                let transparent = match (&from, &to) {
                    (_, CTy::Scalar(t)) if *t == BOOL => true,
                    (CTy::Scalar(a), CTy::Scalar(b)) => a == b || range_includes(b, a),
                    _ => false,
                };
                if transparent && !is_alloc_call(strip_casts(inner)) {
                    return self.cond(inner, t, f);
                }
            }
            CXCursor_UnaryOperator if c.unary_op() == CXUnaryOperator_LNot => {
                return self.cond(self.only_child(c)?, f, t);
            }
            CXCursor_BinaryOperator => {
                let ch = c.expr_children();
                if ch.len() == 2 {
                    match c.binary_op() {
                        CXBinaryOperator_LAnd => {
                            let m = self.node(src);
                            self.cond(ch[0], Some(m), f)?;
                            self.cur = m;
                            return self.cond(ch[1], t, f);
                        }
                        CXBinaryOperator_LOr => {
                            let m = self.node(src);
                            self.cond(ch[0], t, Some(m))?;
                            self.cur = m;
                            return self.cond(ch[1], t, f);
                        }
                        CXBinaryOperator_Comma => {
                            self.effect(ch[0])?;
                            return self.cond(ch[1], t, f);
                        }
                        _ => {}
                    }
                }
            }
            CXCursor_ConditionalOperator => {
                let ch = c.expr_children();
                if ch.len() == 3 {
                    let (m1, m2) = (self.node(src), self.node(src));
                    self.cond(ch[0], Some(m1), Some(m2))?;
                    self.cur = m1;
                    self.cond(ch[1], t, f)?;
                    self.cur = m2;
                    return self.cond(ch[2], t, f);
                }
            }
            _ => {}
        }
        let ty = self.ety(c)?;
        if ty.is_int() && !has_side_effects(c) {
            if let Some(v) = c.eval_int() {
                let target = if v != 0 { t } else { f };
                match target {
                    Some(n) => self.jump(n, src),
                    None => self.cur = self.node(src),
                }
                return Ok(());
            }
        }
        let e = self.rv(c)?;
        let e = as_comparison(e, &ty);
        let from = self.cur;
        if let Some(t) = t {
            self.edge(from, t, Op::Assume { cond: e.clone() }, src);
        }
        if let Some(f) = f {
            self.edge(from, f, Op::Assume { cond: e.negate() }, src);
        }
        self.cur = self.node(src);
        Ok(())
    }
}
