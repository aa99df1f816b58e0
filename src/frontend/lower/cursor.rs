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
                let mut inner = strip_parens(inner);
                // `&a[i]` (also `&a[i][j]`) takes the address of an element of `a`
                while inner.kind() == CXCursor_ArraySubscriptExpr {
                    let base = inner.expr_children().into_iter().find(|b| {
                        let t = b.ty().canonical();
                        t.kind() == CXType_Pointer || crate::frontend::types::is_array(t)
                    });
                    let Some(base) = base else { break };
                    inner = strip_parens(strip_decay(base));
                }
                if inner.kind() == CXCursor_DeclRefExpr {
                    if let Some(d) = inner.referenced() {
                        if matches!(d.kind(), CXCursor_VarDecl | CXCursor_ParmDecl) {
                            out.insert(d.canonical());
                        }
                    }
                }
            }
        }
        // an array used as a pointer (decay, not as a subscript's base): its elements
        // need addresses
        if c.kind() != CXCursor_ArraySubscriptExpr && ch.kind() == CXCursor_UnexposedExpr {
            if let [inner] = ch.expr_children()[..] {
                let inner = strip_parens(inner);
                if inner.kind() == CXCursor_DeclRefExpr
                    && crate::frontend::types::is_array(inner.ty())
                {
                    if let Some(d) = inner.referenced() {
                        if d.kind() == CXCursor_VarDecl {
                            out.insert(d.canonical());
                        }
                    }
                }
            }
        }
        collect_addr_taken(ch, out);
    }
}

/// The array under an implicit array-to-pointer conversion (else `c` itself).
fn strip_decay(c: Cursor<'_>) -> Cursor<'_> {
    if c.kind() == CXCursor_UnexposedExpr {
        if let [inner] = c.expr_children()[..] {
            if crate::frontend::types::is_array(inner.ty()) {
                return inner;
            }
        }
    }
    c
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

/// Whether `c` is a direct call of `malloc`, `calloc` or `alloca`, or of an allocation
/// wrapper ([`alloc_wrapper`]).
pub(super) fn is_alloc_call(c: Cursor<'_>) -> bool {
    c.kind() == CXCursor_CallExpr
        && direct_callee(c).is_some_and(|d| {
            is_alloc_fn(&d.spelling()) || d.definition().is_some_and(|d| alloc_wrapper(d).is_some())
        })
}

fn is_alloc_fn(name: &str) -> bool {
    matches!(name, "malloc" | "calloc" | "alloca" | "__builtin_alloca")
}

/// An argument of the allocation call inside a wrapper: a constant or a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WrapperArg {
    Const(i64),
    Param(u32),
}

/// A function definition whose body is `return malloc(a)`, `return calloc(a, b)` (or
/// `alloca`), each argument a constant or one of its parameters, after statements
/// that only mention parameters (`(void) flags;`): an *allocation wrapper* such as the
/// Linux kernel's `kzalloc` or a test's `allocate_memory`. A call of one is the
/// allocation itself (the same runs: parameters are only read, nothing else happens),
/// lowered where the caller's pointer gives the type. Returns the allocation function's
/// name and its arguments.
pub(super) fn alloc_wrapper(def: Cursor<'_>) -> Option<(String, Vec<WrapperArg>)> {
    let body = def
        .children()
        .into_iter()
        .find(|c| c.kind() == CXCursor_CompoundStmt)?;
    let stmts = body.children();
    let (last, before) = stmts.split_last()?;
    let nparams = u32::try_from(def.num_args()).ok()?;
    let params: Vec<Cursor<'_>> = (0..nparams).filter_map(|i| def.arg(i)).collect();
    let param_of = |e: Cursor<'_>| -> Option<u32> {
        let e = strip_casts(e);
        if e.kind() != CXCursor_DeclRefExpr {
            return None;
        }
        let d = e.referenced()?;
        params.iter().position(|p| *p == d).map(|i| i as u32)
    };
    // `(void) p;` only
    let void_use = |s: &Cursor<'_>| {
        s.kind() == CXCursor_CStyleCastExpr
            && s.expr_children()
                .first()
                .is_some_and(|&e| param_of(e).is_some())
    };
    if !before.iter().all(void_use) || last.kind() != CXCursor_ReturnStmt {
        return None;
    }
    let call = strip_casts(*last.expr_children().first()?);
    if call.kind() != CXCursor_CallExpr {
        return None;
    }
    let name = direct_callee(call)?.spelling();
    if !is_alloc_fn(&name) {
        return None;
    }
    let n = u32::try_from(call.num_args()).ok()?;
    let mut args = Vec::new();
    for i in 0..n {
        let a = call.arg(i)?;
        if has_side_effects(a) {
            return None;
        }
        args.push(match (a.eval_int(), param_of(a)) {
            (Some(v), _) => WrapperArg::Const(v),
            (None, Some(p)) => WrapperArg::Param(p),
            _ => return None,
        });
    }
    Some((name, args))
}
