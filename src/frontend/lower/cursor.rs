//! Helpers on clang cursors: stripping parentheses and casts, side effects, the direct
//! callee of a call, allocation calls, address-taken variables.

use crate::frontend::clang::Cursor;
use crate::frontend::types::is_fn_ptr;
use clang_sys::*;
use std::collections::HashSet;

/// Strips parentheses.
pub(super) fn strip_parens(mut c: Cursor<'_>) -> Cursor<'_> {
    while c.kind() == CXCursor_ParenExpr {
        match c.expr_children().first() {
            Some(&i) => c = i,
            None => break,
        }
    }
    c
}

/// Strips parentheses and casts (implicit and explicit).
pub(super) fn strip_casts(mut c: Cursor<'_>) -> Cursor<'_> {
    loop {
        let k = c.kind();
        if k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr || k == CXCursor_CStyleCastExpr {
            let ch = c.expr_children();
            if ch.len() == 1 {
                c = ch[0];
                continue;
            }
        }
        return c;
    }
}

/// Collects the variables whose address is taken (`&x`) below `c`.
pub(super) fn collect_addr_taken<'t>(c: Cursor<'t>, out: &mut HashSet<Cursor<'t>>) {
    for ch in c.children() {
        if ch.kind() == CXCursor_UnaryOperator && ch.unary_op() == CXUnaryOperator_AddrOf {
            if let Some(&inner) = ch.expr_children().first() {
                let inner = strip_parens(inner);
                if inner.kind() == CXCursor_DeclRefExpr {
                    if let Some(d) = inner.referenced() {
                        if matches!(d.kind(), CXCursor_VarDecl | CXCursor_ParmDecl) {
                            out.insert(d.canonical());
                        }
                    }
                }
            }
        }
        collect_addr_taken(ch, out);
    }
}

/// Strips parentheses and implicit conversions that do not change the type.
pub(super) fn strip_noop<'t>(mut c: Cursor<'t>) -> Cursor<'t> {
    loop {
        let k = c.kind();
        if k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr {
            let ch = c.expr_children();
            if ch.len() == 1
                && (k == CXCursor_ParenExpr
                    || ch[0].ty().canonical().spelling() == c.ty().canonical().spelling())
            {
                c = ch[0];
                continue;
            }
        }
        return c;
    }
}

/// True if evaluating the expression may modify a variable or memory.
pub(super) fn has_side_effects(c: Cursor<'_>) -> bool {
    match c.kind() {
        CXCursor_CallExpr | CXCursor_CompoundAssignOperator | CXCursor_StmtExpr => true,
        CXCursor_UnaryExpr => false, // sizeof/alignof: operand not evaluated
        CXCursor_BinaryOperator if c.binary_op() == CXBinaryOperator_Assign => true,
        CXCursor_UnaryOperator
            if matches!(
                c.unary_op(),
                CXUnaryOperator_PostInc
                    | CXUnaryOperator_PostDec
                    | CXUnaryOperator_PreInc
                    | CXUnaryOperator_PreDec
            ) =>
        {
            true
        }
        _ => c.children().into_iter().any(has_side_effects),
    }
}

/// The function a call expression calls directly (None for indirect calls, and for
/// calls of a function cast to another function type).
pub(super) fn direct_callee<'t>(call: Cursor<'t>) -> Option<Cursor<'t>> {
    let mut callee = *call.expr_children().first()?;
    let mut casts = Vec::new();
    while matches!(
        callee.kind(),
        CXCursor_ParenExpr | CXCursor_UnexposedExpr | CXCursor_CStyleCastExpr
    ) {
        let ch = callee.expr_children();
        if ch.len() != 1 {
            break;
        }
        if callee.kind() == CXCursor_CStyleCastExpr {
            casts.push(callee);
        }
        callee = ch[0];
    }
    if callee.kind() != CXCursor_DeclRefExpr {
        return None;
    }
    let d = callee.referenced()?;
    let same_type = |k: &Cursor<'t>| {
        is_fn_ptr(k.ty())
            && k.ty()
                .canonical()
                .pointee()
                .canonical()
                .equals(&callee.ty().canonical())
    };
    (d.kind() == CXCursor_FunctionDecl && casts.iter().all(same_type)).then_some(d)
}

/// Whether `c` is a direct call of `malloc`, `calloc` or `alloca`.
pub(super) fn is_alloc_call(c: Cursor<'_>) -> bool {
    c.kind() == CXCursor_CallExpr
        && direct_callee(c).is_some_and(|d| {
            matches!(
                d.spelling().as_str(),
                "malloc" | "calloc" | "alloca" | "__builtin_alloca"
            )
        })
}
