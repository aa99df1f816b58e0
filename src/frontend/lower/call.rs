//! Calls: the special functions (`__VERIFIER_*`, error and halt functions, `malloc` &
//! co., `free`, output functions), calls of functions with a body, indirect calls
//! through function pointers and the values and conversions of function pointers.

use super::cursor::{
    alloc_wrapper, direct_callee, has_side_effects, is_alloc_call, strip_casts, strip_parens,
    WrapperArg,
};
use super::expr::as_comparison;
use super::{loc, unsup, Ctx, FnLower, IndirectCall, R};
use crate::cfa::{AllocKind, Expr, LocKind, Op, SrcLoc, Ty, VarId};
use crate::frontend::clang::Cursor;
use crate::frontend::intrusive;
use crate::frontend::types::{is_fn_ptr, is_fn_type, CTy, BOOL, FN_PTR};
use clang_sys::*;

const ERROR_FNS: &[&str] = &[
    "reach_error",
    "__VERIFIER_error",
    "__assert_fail",
    "__assert_perror_fail",
    "__assert",
];
const HALT_FNS: &[&str] = &["abort", "exit", "_Exit"];
/// The error functions that stand for a failing `assert` (glibc's end in `abort()`).
const ASSERT_FAIL_FNS: &[&str] = &["__assert_fail", "__assert_perror_fail", "__assert"];
/// External functions without effect on program memory (result: nondet).
const PURE_EXTERNS: &[&str] = &["printf", "puts", "putchar"];

impl<'c, 't> FnLower<'c, 't> {
    /// Whether `name` is a function the lowering models itself (error, halt, output,
    /// nondet, assume and memory functions) rather than calling its body.
    pub(super) fn is_special(&self, name: &str) -> bool {
        ERROR_FNS.contains(&name)
            || HALT_FNS.contains(&name)
            || PURE_EXTERNS.contains(&name)
            || name.starts_with("__VERIFIER_nondet_")
            || matches!(
                name,
                "__VERIFIER_assume" | "malloc" | "calloc" | "free" | "alloca" | "__builtin_alloca"
            )
    }

    /// `dst = malloc/calloc/alloca(...)`; the pointee type comes from the innermost
    /// non-void pointer cast between `outer` and the call, else from `dst`'s type.
    pub(super) fn alloc(
        &mut self,
        call: Cursor<'t>,
        dst: VarId,
        outer: Option<Cursor<'t>>,
        hint: Option<Ty>,
    ) -> R<()> {
        let src = loc(call);
        let mut pointee = match &self.cx.prog.vars[dst].ty {
            Ty::Ptr(p) => (**p).clone(),
            _ => return unsup(call, "allocation into a non-pointer"),
        };
        let mut c = outer.unwrap_or(call);
        while c != call {
            if let CTy::Scalar(Ty::Ptr(p)) = self.cx.conv(c.ty(), c)? {
                if *p != Ty::Void {
                    pointee = *p;
                }
            }
            match c.expr_children().first() {
                Some(&n) => c = n,
                None => break,
            }
        }
        // the call's own type: an allocation wrapper returning `struct s *`
        if pointee == Ty::Void {
            if let CTy::Scalar(Ty::Ptr(p)) = self.cx.conv(call.ty(), call)? {
                pointee = *p;
            }
        }
        if pointee == Ty::Void {
            if let Some(h) = hint {
                pointee = h;
            }
        }
        let Some(d) = direct_callee(call) else {
            return unsup(call, "internal: allocation");
        };
        // the call's arguments: constants, or evaluated for their effects
        let mut outer = Vec::new();
        for i in 0..call.num_args().max(0) as u32 {
            let Some(a) = call.arg(i) else { continue };
            match a.eval_int() {
                Some(v) if !has_side_effects(a) => outer.push(Some(v)),
                _ => {
                    self.effect(a)?;
                    outer.push(None);
                }
            }
        }
        // an allocation wrapper's call is its allocation, with the wrapper's arguments
        let (name, sizes) = match d.definition().and_then(alloc_wrapper) {
            Some((inner, args)) if !self.is_special(&d.spelling()) => {
                let size = |a: &WrapperArg| match *a {
                    WrapperArg::Const(v) => Some(v),
                    WrapperArg::Param(p) => outer.get(p as usize).copied().flatten(),
                };
                (inner, args.iter().map(size).collect::<Vec<_>>())
            }
            _ => (d.spelling(), outer),
        };
        let n = sizes.len() as u32;
        let mut bytes = sizes
            .iter()
            .try_fold(1i64, |acc, s| s.map(|v| acc.saturating_mul(v)))
            .and_then(|b| u64::try_from(b).ok());
        // a stand-alone link struct is an object of its container (`frontend::intrusive`)
        if let Ty::Struct(s) = pointee {
            let size = self.cx.prog.structs[s].size;
            for a in self.cx.intrusive.aliases.values() {
                let key = intrusive::record_key(a.container);
                if self.cx.struct_ids.get(&key) == Some(&s) && bytes == Some(a.link_size) {
                    bytes = Some(size);
                }
            }
        }
        let kind = match name.as_str() {
            "malloc" => AllocKind::Heap { zeroed: false },
            "calloc" => AllocKind::Heap { zeroed: true },
            _ => AllocKind::Stack,
        };
        let expected = if name == "calloc" { 2 } else { 1 };
        if n != expected {
            return unsup(call, &format!("call to `{name}` with {n} arguments"));
        }
        let linked = pointee.clone();
        self.emit(
            Op::Alloc {
                dst,
                pointee,
                bytes,
                kind,
            },
            src,
        );
        if let Ty::Struct(s) = linked {
            self.embed_links(dst, s, kind, call, src)?;
        }
        Ok(())
    }

    /// Lowers a call; `want`: its value is used.
    pub(super) fn call(&mut self, c: Cursor<'t>, want: bool) -> R<Option<Expr>> {
        self.call_h(c, want, None)
    }

    /// `call` with an allocation type hint for `malloc` & co. (see `rv_h`).
    pub(super) fn call_h(
        &mut self,
        c: Cursor<'t>,
        want: bool,
        hint: Option<Ty>,
    ) -> R<Option<Expr>> {
        let src = loc(c);
        let Some(d) = direct_callee(c) else {
            return self.indirect_call(c, want);
        };
        let name = d.spelling();
        let nargs = c.num_args().max(0) as u32;
        let args: Vec<Cursor<'t>> = (0..nargs).filter_map(|i| c.arg(i)).collect();
        if name.starts_with("__VERIFIER_nondet_") {
            let rty = self.cx.conv(d.result_type(), c)?;
            let CTy::Scalar(ty) = rty else {
                return unsup(c, "nondet function without scalar result");
            };
            if !want {
                return Ok(None);
            }
            let t = self.tmp(ty);
            self.emit(Op::Nondet { dst: t }, src);
            return Ok(Some(Expr::Var(t)));
        }
        if name == "__builtin_expect" && args.len() == 2 {
            // branch-prediction hint: the value is the first argument
            if has_side_effects(args[1]) {
                return unsup(args[1], "__builtin_expect with side effects in the hint");
            }
            return if want {
                self.rv(args[0]).map(Some)
            } else {
                self.effect(args[0]).map(|_| None)
            };
        }
        if name == "__VERIFIER_assume" {
            let Some(&a) = args.first() else {
                return unsup(c, "__VERIFIER_assume without argument");
            };
            let next = self.node(src);
            self.cond(a, Some(next), None)?;
            self.cur = next;
            return Ok(want.then_some(Expr::Int(0)));
        }
        let is_error_fn = ERROR_FNS.contains(&name.as_str());
        // memory properties: a defined reach_error() is called like any function
        let as_call =
            self.cx.error_calls_as_calls && name == "reach_error" && d.definition().is_some();
        if !as_call && (is_error_fn || HALT_FNS.contains(&name.as_str())) {
            for a in &args {
                if has_side_effects(*a) {
                    self.effect(*a)?;
                }
            }
            let halts = self.cx.error_calls_as_calls && ASSERT_FAIL_FNS.contains(&name.as_str());
            if is_error_fn && !halts {
                self.terminate(Op::Error, LocKind::Error, src);
            } else {
                self.terminate(Op::Halt, LocKind::Sink, src);
            }
            return Ok(want.then_some(Expr::Int(0)));
        }
        match name.as_str() {
            "malloc" | "calloc" | "alloca" | "__builtin_alloca" => {
                let ty = self.ety(c)?;
                let t = self.tmp(ty);
                self.alloc(c, t, None, hint)?;
                return Ok(Some(Expr::Var(t)));
            }
            "free" => {
                let Some(&a) = args.first() else {
                    return unsup(c, "free without argument");
                };
                let mut a = a;
                while matches!(
                    a.kind(),
                    CXCursor_UnexposedExpr | CXCursor_CStyleCastExpr | CXCursor_ParenExpr
                ) && a.expr_children().len() == 1
                    && a.expr_children()[0].ty().canonical().kind() == CXType_Pointer
                    && intrusive::container_of(a).is_none()
                {
                    a = a.expr_children()[0];
                }
                if self.cx.split_of(a.ty().canonical().pointee()).is_some() {
                    return unsup(a, "free of a link struct embedded in several places");
                }
                let aty = self.ety(a)?;
                let e = self.rv(a)?;
                let p = self.atom(e, aty.clone(), src);
                if let Some(s) = aty.pointee_struct() {
                    self.free_links(p, s, a, src)?;
                }
                self.emit(Op::Free { ptr: p }, src);
                return Ok(None);
            }
            _ => {}
        }
        if PURE_EXTERNS.contains(&name.as_str()) && d.definition().is_none() {
            for a in &args {
                let s = strip_casts(*a);
                if s.kind() == CXCursor_StringLiteral {
                    if s.spelling().contains("%n") {
                        return unsup(*a, "printf with %n");
                    }
                    continue;
                }
                self.effect(*a)?;
            }
            if !want {
                return Ok(None);
            }
            let ty = self.ety(c)?;
            let t = self.tmp(ty);
            self.emit(Op::Nondet { dst: t }, src);
            return Ok(Some(Expr::Var(t)));
        }
        if d.definition().is_none() {
            return unsup(c, &format!("call to external function `{name}`"));
        }
        let ret = if want {
            match self.cx.conv(d.result_type(), c)? {
                CTy::Scalar(t) => Some(self.tmp(t)),
                CTy::Void => None,
                CTy::Struct(_) => return unsup(c, "struct return value"),
            }
        } else {
            None
        };
        self.user_call(c, d, ret)?;
        Ok(ret.map(Expr::Var))
    }

    /// A call through a function pointer `fp(args)` (or `(*fp)(args)`): the pointer and
    /// the arguments are evaluated here, the branches over the candidate functions are
    /// added by [`Ctx::resolve_indirect_calls`] once every function is lowered. A
    /// callee that is a constant (`(&f)(x)`) is a direct call.
    fn indirect_call(&mut self, c: Cursor<'t>, want: bool) -> R<Option<Expr>> {
        let src = loc(c);
        let Some(&callee) = c.expr_children().first() else {
            return unsup(c, "internal: call without callee");
        };
        // a parameter declared as a function (`void f(void g(int))`) is a pointer,
        // though libclang types its uses as written
        let fn_ty = if is_fn_ptr(callee.ty()) {
            callee.ty().canonical().pointee().canonical()
        } else if is_fn_type(callee.ty()) {
            callee.ty().canonical()
        } else {
            return unsup(c, "indirect call");
        };
        if fn_ty.kind() == CXType_FunctionNoProto {
            return unsup(c, "call through a function pointer without prototype");
        }
        if fn_ty.is_variadic() {
            return unsup(c, "call through a pointer to a variadic function");
        }
        let Some(ptys) = fn_ty.arg_types() else {
            return unsup(c, "call through a function pointer without prototype");
        };
        let nargs = c.num_args().max(0) as u32;
        let args: Vec<Cursor<'t>> = (0..nargs).filter_map(|i| c.arg(i)).collect();
        if args.len() != ptys.len() {
            return unsup(c, "call with a wrong number of arguments");
        }
        let ret_ty = match self.cx.conv(fn_ty.result(), c)? {
            CTy::Scalar(t) => Some(t),
            CTy::Void => None,
            CTy::Struct(_) => return unsup(c, "struct return value"),
        };
        let fe = self.rv(callee)?;
        if let Expr::Int(k) = fe {
            if let Some(&def) = k
                .checked_sub(1)
                .and_then(|f| usize::try_from(f).ok())
                .and_then(|f| self.cx.func_defs.get(f))
            {
                let ret = if want {
                    ret_ty.map(|t| self.tmp(t))
                } else {
                    None
                };
                self.user_call(c, def, ret)?;
                return Ok(ret.map(Expr::Var));
            }
        }
        let fe = if args.iter().any(|a| has_side_effects(*a)) {
            self.snapshot(fe, FN_PTR, src)
        } else {
            fe
        };
        let mut vals = Vec::new();
        for (i, (a, pt)) in args.iter().zip(&ptys).enumerate() {
            let pty = self.cx.scalar(*pt, *a)?;
            vals.push(self.call_arg(&args, i, pty, src)?);
        }
        let ptr = self.atom(fe, FN_PTR, src);
        let ret = if want {
            ret_ty.map(|t| self.tmp(t))
        } else {
            None
        };
        let (from, to) = (self.cur, self.node(src));
        self.cx.indirect_calls.push(IndirectCall {
            func: self.fid,
            from,
            to,
            ptr,
            fn_ty,
            args: vals,
            ret,
            src,
        });
        self.cur = to;
        Ok(ret.map(Expr::Var))
    }

    /// The value of a function designator (an expression of function type): the
    /// function's id (`1 + FuncId`); the function becomes address-taken and reachable.
    pub(super) fn fn_value(&mut self, c: Cursor<'t>) -> R<Expr> {
        let s = strip_parens(c);
        match s.kind() {
            CXCursor_DeclRefExpr => {
                let Some(d) = s.referenced().filter(|d| d.kind() == CXCursor_FunctionDecl) else {
                    return unsup(c, "function designator");
                };
                let Some(def) = d.definition() else {
                    return unsup(
                        c,
                        &format!("address of external function `{}`", d.spelling()),
                    );
                };
                let f = self.cx.func_id(def)?;
                self.cx.fn_targets.insert(f);
                Ok(Ctx::fn_id_value(f))
            }
            // `*fp` designates the function `fp` points to
            CXCursor_UnaryOperator if s.unary_op() == CXUnaryOperator_Deref => {
                let inner = self.only_child(s)?;
                if !is_fn_ptr(inner.ty()) {
                    return unsup(c, "function designator");
                }
                self.rv(inner)
            }
            _ => unsup(c, "function designator"),
        }
    }

    /// A conversion `c` of `inner` from or to a function pointer: the decay of a
    /// function designator to its address, a copy between identical function pointer
    /// types, NULL to a function pointer, a function pointer to `_Bool`. Any other
    /// (to another function type, to or from integers and data pointers) is refused.
    pub(super) fn fn_ptr_conversion(&mut self, c: Cursor<'t>, inner: Cursor<'t>) -> R<Expr> {
        let to = c.ty().canonical();
        let from = inner.ty().canonical();
        if is_fn_type(from) {
            // a parameter declared as a function holds a pointer (libclang types its
            // uses as written): its value
            let s = strip_parens(inner);
            let param = s.kind() == CXCursor_DeclRefExpr
                && s.referenced()
                    .is_some_and(|d| d.kind() == CXCursor_ParmDecl);
            if param && (is_fn_ptr(to) || is_fn_type(to)) {
                return self.rv(inner);
            }
            if is_fn_ptr(to) && to.pointee().canonical().equals(&from) {
                return self.fn_value(inner);
            }
            return unsup(c, "function pointer cast");
        }
        if is_fn_ptr(from) {
            if is_fn_ptr(to) {
                if to.pointee().canonical().equals(&from.pointee().canonical()) {
                    return self.rv(inner);
                }
                return unsup(c, "cast between function pointer types");
            }
            if self.ety(c)? == BOOL {
                let e = self.rv(inner)?;
                return Ok(as_comparison(e, &FN_PTR));
            }
            return unsup(c, "function pointer cast");
        }
        // to a function pointer: only from a null pointer constant
        match self.rv(inner)? {
            Expr::Null | Expr::Int(0) => Ok(Expr::Int(0)),
            _ => unsup(c, "conversion to a function pointer"),
        }
    }

    /// The value of call argument `args[i]` for a parameter of type `pty`, for direct
    /// and indirect calls alike: an allocation call is lowered into a temporary, other
    /// values are converted; the value is snapshotted when a later argument has side
    /// effects.
    fn call_arg(&mut self, args: &[Cursor<'t>], i: usize, pty: Ty, src: SrcLoc) -> R<Expr> {
        let a = args[i];
        let aty = self.ety(a)?;
        let e = if pty.is_ptr() && is_alloc_call(strip_casts(a)) {
            let t = self.tmp(pty.clone());
            self.alloc(strip_casts(a), t, Some(a), None)?;
            Expr::Var(t)
        } else {
            let e = self.rv(a)?;
            self.convert(e, &aty, &pty, a)?
        };
        let later_effects = args[i + 1..].iter().any(|b| has_side_effects(*b));
        Ok(if later_effects {
            self.snapshot(e, pty, src)
        } else {
            e
        })
    }

    /// A call of a function with a body; `ret` receives the result (same type).
    pub(super) fn user_call(&mut self, c: Cursor<'t>, d: Cursor<'t>, ret: Option<VarId>) -> R<()> {
        let src = loc(c);
        let Some(def) = d.definition() else {
            return unsup(c, "internal: call without definition");
        };
        let callee = self.cx.func_id(def)?;
        let nargs = c.num_args().max(0) as u32;
        let args: Vec<Cursor<'t>> = (0..nargs).filter_map(|i| c.arg(i)).collect();
        let nparams = def.num_args().max(0) as usize;
        if args.len() != nparams {
            return unsup(c, "call with a wrong number of arguments");
        }
        let mut vals = Vec::new();
        for i in 0..args.len() {
            let Some(p) = def.arg(i as u32) else {
                return unsup(c, "internal: parameter");
            };
            let pty = super::param_ty(self.cx, p)?;
            vals.push(self.call_arg(&args, i, pty, src)?);
        }
        self.emit(
            Op::Call {
                callee,
                args: vals,
                ret,
            },
            src,
        );
        Ok(())
    }
}
