//! Arrays of constant length (`T a[N]`), modelled without pointer arithmetic.
//!
//! Every element is a place of its own: an element of an array variable is a variable
//! (`a[k]`: a scalar, a stack cell when the address of an element is taken, a stack or
//! static object for a struct), an element of an array member is a field (`m[k]`,
//! `m[k].g`, flattened by `types::array_fields`). An array lvalue is the list of its
//! elements' lvalues ([`Lv::Arr`]); `a[k]` with a constant `k` is one of them, and
//! `a[i]` with a computed index is [`Lv::Switch`]: every read, write or address of it
//! branches on `i`, one arm per element. An index out of `0..N` goes to an
//! `InvalidDeref` target for an access (undefined behaviour, valid-deref) and to an
//! `Unmodelled` target for `&a[i]` (one past the end is valid C, but no object is
//! there in this model). So every run of the C program is a run of the CFA with the
//! same values, as long as what stays refused is refused (exit 3): an array used as a
//! pointer (decay: `p = a`, `f(a)`, `a + 1`), subscripts of pointers other than
//! `p[0]` (which is `*p`), arrays of variable or unknown length, more than
//! `types::MAX_ARRAY_ELEMS` elements, designated or brace-elided initialisers.

use super::cursor::{has_side_effects, strip_noop, strip_parens};
use super::expr::zero;
use super::lvalue::Lv;
use super::{loc, unsup, Ctx, FnLower, GlobalInit, R};
use crate::cfa::{BinOp, Expr, FieldRef, LocKind, Op, Scope, SrcLoc, StructId, Ty, VarId};
use crate::frontend::clang::{Cursor, Type};
use crate::frontend::types::{check_len, is_array, CTy};
use clang_sys::*;

/// The elements of `lv`, an array, at index `k` (distributed over a [`Lv::Switch`]).
fn select(lv: &Lv, k: usize) -> Option<Lv> {
    match lv {
        Lv::Arr(elems) => elems.get(k).cloned(),
        Lv::Switch(i, arms) => arms
            .iter()
            .map(|a| select(a, k))
            .collect::<Option<Vec<_>>>()
            .map(|arms| Lv::Switch(*i, arms)),
        _ => None,
    }
}

/// The array-typed expression under an implicit array-to-pointer conversion, if `c`
/// is one (or is itself of array type).
fn decayed_array(c: Cursor<'_>) -> Option<Cursor<'_>> {
    let c = strip_parens(c);
    if is_array(c.ty()) {
        return Some(c);
    }
    if c.kind() == CXCursor_UnexposedExpr {
        if let [inner] = c.expr_children()[..] {
            let inner = strip_parens(inner);
            if is_array(inner.ty()) {
                return Some(inner);
            }
        }
    }
    None
}

impl<'t> Ctx<'t> {
    /// The items of an array initialiser `init` for an array of length `n`, one per
    /// element (`None`: no item, the element is zero). Refused: an initialiser that is
    /// not a list (a string literal), designators, more items than elements.
    pub(super) fn init_items(
        &self,
        init: Option<Cursor<'t>>,
        n: u64,
        at: Cursor<'t>,
    ) -> R<Vec<Option<Cursor<'t>>>> {
        let mut out = vec![None; n as usize];
        let Some(i) = init else {
            return Ok(out);
        };
        let i = strip_parens(i);
        if i.kind() != CXCursor_InitListExpr {
            return unsup(
                i,
                "array initialiser that is not a list (a string literal or a copy)",
            );
        }
        // a designator (`[k] =`, `.f =`) starts an item at brace depth 1
        let mut depth = 0;
        let mut item_start = false;
        for (tok, _) in self.tu.tokens(i) {
            match tok.as_str() {
                "{" => {
                    depth += 1;
                    item_start = depth == 1;
                    continue;
                }
                "}" => depth -= 1,
                "," if depth == 1 => {
                    item_start = true;
                    continue;
                }
                "[" | "." if depth == 1 && item_start => {
                    return unsup(i, "designated initialiser");
                }
                _ => {}
            }
            item_start = false;
        }
        let items = i.expr_children();
        if items.len() as u64 > n {
            return unsup(items[n as usize], "excess initialiser");
        }
        for (k, it) in items.into_iter().enumerate() {
            out[k] = Some(it);
        }
        let _ = at;
        Ok(out)
    }

    /// Registers a one-dimensional array whose elements have addresses (cells or
    /// objects) as a candidate of pointer arithmetic.
    fn register_addressable(&mut self, lv: &Lv) {
        let Lv::Arr(elems) = lv else { return };
        let mut ty = None;
        let mut vars = Vec::with_capacity(elems.len());
        for e in elems {
            let (v, t) = match e {
                Lv::Deref(v, t) => (*v, t.clone()),
                Lv::Obj(v, s, _) => (*v, Ty::Struct(*s)),
                _ => return,
            };
            if ty.get_or_insert_with(|| t.clone()) != &t {
                return;
            }
            vars.push(v);
        }
        if let Some(t) = ty {
            self.addr_arrays.push((t, vars));
        }
    }

    /// The lvalue of the global (or static) array `d`, registering its elements as
    /// globals on first use: `a[k]` each, zero or initialised by the start function.
    pub(super) fn global_array(&mut self, d: Cursor<'t>) -> R<Lv> {
        let key = d.canonical();
        if let Some(lv) = self.global_arrays.get(&key) {
            return Ok(lv.clone());
        }
        let (def, name) = self.global_def(d)?;
        let taken = self.addr_taken.contains(&key);
        let lv = self.global_elems(def, &name, def.ty(), def.var_init(), taken)?;
        self.register_addressable(&lv);
        self.global_arrays.insert(key, lv.clone());
        Ok(lv)
    }

    fn global_elems(
        &mut self,
        def: Cursor<'t>,
        name: &str,
        t: Type<'t>,
        init: Option<Cursor<'t>>,
        taken: bool,
    ) -> R<Lv> {
        if is_array(t) {
            let (elem, n) = check_len(t, def)?;
            let items = self.init_items(init, n, def)?;
            let mut elems = Vec::with_capacity(n as usize);
            for (k, item) in items.into_iter().enumerate() {
                elems.push(self.global_elems(def, &format!("{name}[{k}]"), elem, item, taken)?);
            }
            return Ok(Lv::Arr(elems));
        }
        let src = loc(def);
        let (v, lv, strukt) = match self.conv(t, def)? {
            CTy::Scalar(ty) if taken => {
                let v = self.new_var(
                    name.into(),
                    Ty::Ptr(Box::new(ty.clone())),
                    Scope::Global,
                    src,
                );
                self.cell_vars.insert(v, ty.clone());
                (v, Lv::Deref(v, ty), None)
            }
            CTy::Scalar(ty) => {
                let v = self.new_var(name.into(), ty, Scope::Global, src);
                (v, Lv::Var(v), None)
            }
            CTy::Struct(s) => {
                let v = self.new_var(
                    name.into(),
                    Ty::Ptr(Box::new(Ty::Struct(s))),
                    Scope::Global,
                    src,
                );
                self.obj_vars.insert(v, s);
                self.note_head(v, s, t);
                (v, Lv::Obj(v, s, self.obj_prefix(t)), Some(s))
            }
            CTy::Void => return unsup(def, "array of void"),
        };
        self.global_inits.push(GlobalInit {
            var: v,
            decl: def,
            strukt,
            init,
            ty: t,
        });
        Ok(lv)
    }
}

impl<'c, 't> FnLower<'c, 't> {
    /// The lvalue of the array variable `d` referenced at `at`.
    pub(super) fn array_var(&mut self, d: Cursor<'t>, at: Cursor<'t>) -> R<Lv> {
        if let Some(lv) = self.arrays.get(&d.canonical()) {
            return Ok(lv.clone());
        }
        let global = d.kind() == CXCursor_VarDecl
            && (matches!(d.storage_class(), CX_SC_Static | CX_SC_Extern)
                || d.semantic_parent()
                    .is_some_and(|p| p.kind() == CXCursor_TranslationUnit));
        if global {
            return self.cx.global_array(d);
        }
        if d.kind() == CXCursor_ParmDecl {
            return unsup(at, "internal: array parameter");
        }
        unsup(at, "internal: reference to an unknown array")
    }

    /// The array member `name` (of C type `t`) of the struct `p` points to.
    pub(super) fn member_array(
        &mut self,
        c: Cursor<'t>,
        p: VarId,
        s: StructId,
        name: &str,
        t: Type<'t>,
    ) -> R<Lv> {
        let (elem, n) = check_len(t, c)?;
        let mut elems = Vec::with_capacity(n as usize);
        for k in 0..n {
            let ename = format!("{name}[{k}]");
            if is_array(elem) {
                elems.push(self.member_array(c, p, s, &ename, elem)?);
                continue;
            }
            elems.push(match self.cx.conv(elem, c)? {
                CTy::Struct(_) => Lv::Obj(p, s, format!("{ename}.")),
                CTy::Scalar(_) => match self.cx.prog.structs[s].field_index(&ename) {
                    Some(field) => Lv::Field(p, FieldRef { strukt: s, field }),
                    None => return unsup(c, "internal: unknown array element field"),
                },
                CTy::Void => return unsup(c, "array of void"),
            });
        }
        Ok(Lv::Arr(elems))
    }

    /// `base[index]` (either operand order, as C allows).
    pub(super) fn subscript(&mut self, c: Cursor<'t>) -> R<Lv> {
        let ch = c.expr_children();
        let [a, b] = ch[..] else {
            return unsup(c, "internal: subscript arity");
        };
        let is_base = |x: Cursor<'_>| {
            let t = x.ty().canonical();
            t.kind() == CXType_Pointer || is_array(t)
        };
        let (base, index) = if is_base(a) { (a, b) } else { (b, a) };
        let Some(arr) = decayed_array(base) else {
            // a pointer: `p[0]` is `*p`; `p[i]` is `*(p + i)`
            if !has_side_effects(index) && index.eval_int() == Some(0) {
                return self.deref(c, base);
            }
            let pty = self.ety(base)?;
            let Some(pointee) = (match &pty {
                Ty::Ptr(t) if **t != Ty::Void => Some((**t).clone()),
                _ => None,
            }) else {
                return unsup(c, "subscript of a pointer (pointer arithmetic)");
            };
            let prefix = self.cx.obj_prefix(base.ty().canonical().pointee());
            let pe = self.rv(base)?;
            let p = self.atom(pe, pty, loc(base));
            let ie = self.rv(index)?;
            let Expr::Var(r) = self.shift(p, &pointee, ie, c)? else {
                return unsup(c, "internal: pointer arithmetic");
            };
            return Ok(match pointee {
                Ty::Struct(s) => Lv::Obj(r, s, prefix),
                t => Lv::Deref(r, t),
            });
        };
        let (_, n) = check_len(arr.ty(), c)?;
        let lv = self.lv(arr)?;
        let src = loc(index);
        let k = if has_side_effects(index) {
            None
        } else {
            index.eval_int()
        };
        if let Some(k) = k.filter(|k| (0..n as i64).contains(k)) {
            return match select(&lv, k as usize) {
                Some(lv) => Ok(lv),
                None => unsup(c, "internal: subscript of a non-array"),
            };
        }
        let ity = self.ety(index)?;
        if !ity.is_int() {
            return unsup(index, "array index that is not an integer");
        }
        // the index in a variable: a plain variable as it is (every use of the switch
        // follows right after, with no assignment in between), else a temporary
        let i = match self.rv(index)? {
            Expr::Var(v) => v,
            e => {
                let i = self.tmp(ity);
                self.emit(Op::Assign { dst: i, src: e }, src);
                i
            }
        };
        let arms = (0..n as usize)
            .map(|k| select(&lv, k))
            .collect::<Option<Vec<_>>>();
        match arms {
            Some(arms) => Ok(Lv::Switch(i, arms)),
            None => unsup(c, "internal: subscript of a non-array"),
        }
    }

    /// The address of the first element of the array lvalue `lv` (an array used as a
    /// pointer, C's decay), at `at`.
    pub(super) fn decay(&mut self, lv: Lv, at: Cursor<'t>) -> R<Expr> {
        let Lv::Arr(elems) = lv else {
            return unsup(at, "array used as a pointer (array-to-pointer decay)");
        };
        match elems.into_iter().next() {
            Some(Lv::Deref(v, _)) | Some(Lv::Obj(v, _, _)) => Ok(Expr::Var(v)),
            Some(Lv::Field(ptr, field)) => {
                let fty = self.cx.prog.field(field).ty.clone();
                let t = self.tmp(Ty::Ptr(Box::new(fty)));
                self.emit(Op::FieldAddr { dst: t, ptr, field }, loc(at));
                Ok(Expr::Var(t))
            }
            _ => unsup(at, "array used as a pointer (array-to-pointer decay)"),
        }
    }

    /// `p + i` for a pointer `p` to `pointee` (C's pointer arithmetic), modelled for
    /// pointers to elements of the arrays registered so far (`Ctx::addr_arrays`): a
    /// branch finds which element `p` is, another the element `i` further. A result
    /// outside the array (one past the end included) and a `p` that is no such element
    /// (a pointer into `malloc`'d memory, an array not registered yet) go to an
    /// `Unmodelled` target: UNKNOWN when reachable. Without any candidate array it is
    /// refused (exit 3), as before.
    pub(super) fn shift(&mut self, p: VarId, pointee: &Ty, i: Expr, at: Cursor<'t>) -> R<Expr> {
        let cands: Vec<Vec<VarId>> = self
            .cx
            .addr_arrays
            .iter()
            .filter(|(t, _)| t == pointee)
            .map(|(_, vs)| vs.clone())
            .collect();
        if cands.is_empty() {
            return unsup(at, "pointer arithmetic outside an array");
        }
        let src = loc(at);
        let (w, t) = (self.tmp(Ty::INT), self.tmp(Ty::INT));
        let from = self.cur;
        let found = self.node(src);
        let mut miss = from;
        for (a, vs) in cands.iter().enumerate() {
            for (k, &v) in vs.iter().enumerate() {
                let n = self.node(src);
                let hit = Expr::bin(BinOp::Eq, Expr::Var(p), Expr::Var(v));
                self.edge(from, n, Op::Assume { cond: hit.clone() }, src);
                self.cur = n;
                self.emit(
                    Op::Assign {
                        dst: w,
                        src: Expr::Int(a as i64),
                    },
                    src,
                );
                self.emit(
                    Op::Assign {
                        dst: t,
                        src: Expr::Int(k as i64),
                    },
                    src,
                );
                self.jump(found, src);
                let m = self.node(src);
                self.edge(miss, m, Op::Assume { cond: hit.negate() }, src);
                miss = m;
            }
        }
        self.cur = miss;
        self.terminate(Op::Skip, LocKind::Unmodelled, src);
        self.cur = found;
        let sum = Expr::bin(BinOp::Add, Expr::Var(t), i);
        self.emit(Op::Assign { dst: t, src: sum }, src);
        let r = self.tmp(Ty::Ptr(Box::new(pointee.clone())));
        let from = self.cur;
        let done = self.node(src);
        for (a, vs) in cands.into_iter().enumerate() {
            let n = self.node(src);
            let cond = Expr::bin(BinOp::Eq, Expr::Var(w), Expr::Int(a as i64));
            self.edge(from, n, Op::Assume { cond }, src);
            self.cur = n;
            let arms = vs.into_iter().map(Lv::Var).collect();
            self.branch_on(t, arms, LocKind::Unmodelled, src, |fl, arm| {
                if let Lv::Var(v) = arm {
                    fl.emit(
                        Op::Assign {
                            dst: r,
                            src: Expr::Var(v),
                        },
                        src,
                    );
                }
                Ok(())
            })?;
            self.jump(done, src);
        }
        self.cur = done;
        Ok(Expr::Var(r))
    }

    /// Branches on the index in `i`: for each element `k` an edge `assume(i == k)` to
    /// `f(arm k)`, all joined afterwards; an index out of range goes to a new target of
    /// kind `oob`. The current location is the join afterwards.
    pub(super) fn branch_on(
        &mut self,
        i: VarId,
        arms: Vec<Lv>,
        oob: LocKind,
        src: SrcLoc,
        mut f: impl FnMut(&mut Self, Lv) -> R<()>,
    ) -> R<()> {
        let from = self.cur;
        let join = self.node(src);
        let n = arms.len() as i64;
        for (k, arm) in arms.into_iter().enumerate() {
            let at = self.node(src);
            let cond = Expr::bin(BinOp::Eq, Expr::Var(i), Expr::Int(k as i64));
            self.edge(from, at, Op::Assume { cond }, src);
            self.cur = at;
            f(self, arm)?;
            self.jump(join, src);
        }
        self.g.nodes.push((src, oob));
        let target = self.g.nodes.len() - 1;
        for cond in [
            Expr::bin(BinOp::Lt, Expr::Var(i), Expr::Int(0)),
            Expr::bin(BinOp::Ge, Expr::Var(i), Expr::Int(n)),
        ] {
            self.edge(from, target, Op::Assume { cond }, src);
        }
        self.cur = join;
        Ok(())
    }

    /// The value of the element selected by `i` (an access: out of range is an
    /// invalid dereference).
    pub(super) fn read_switch(&mut self, i: VarId, arms: Vec<Lv>, at: Cursor<'t>) -> R<Expr> {
        let Some(ty) = arms.first().and_then(|a| self.lv_ty(a)) else {
            return unsup(at, "struct or array value (copy/pass/return by value)");
        };
        let t = self.tmp(ty);
        let src = loc(at);
        self.branch_on(i, arms, LocKind::InvalidDeref, src, |fl, arm| {
            match arm {
                Lv::Field(ptr, field) => fl.emit(Op::Load { dst: t, ptr, field }, src),
                Lv::Deref(ptr, _) => fl.emit(Op::LoadIndirect { dst: t, ptr }, src),
                arm => {
                    let e = fl.read(arm, at)?;
                    fl.emit(Op::Assign { dst: t, src: e }, src);
                }
            }
            Ok(())
        })?;
        Ok(Expr::Var(t))
    }

    /// Writes `e` (pure) into the element selected by `i`.
    pub(super) fn write_switch(
        &mut self,
        i: VarId,
        arms: Vec<Lv>,
        e: Expr,
        at: Cursor<'t>,
    ) -> R<()> {
        let src = loc(at);
        self.branch_on(i, arms, LocKind::InvalidDeref, src, |fl, arm| {
            fl.write(arm, e.clone(), at)
        })
    }

    /// Declares the local array `d`: one variable per element, named `a[k]`, each
    /// declared like a variable of the element type (a scalar; a stack cell when the
    /// address of an element is taken; a stack object for a struct), initialised from
    /// the initialiser list (elements without an item are zero) or uninitialised.
    pub(super) fn decl_array(&mut self, d: Cursor<'t>) -> R<()> {
        let name = self.unique_name(&d.spelling());
        let taken = self.cx.addr_taken.contains(&d.canonical());
        let init = d.var_init();
        let lv = self.local_object(d, &name, d.ty(), init, init.is_some(), taken, false)?;
        self.cx.register_addressable(&lv);
        self.arrays.insert(d.canonical(), lv);
        Ok(())
    }

    /// Declares the local `name` of C type `t` (an array: one variable per element,
    /// recursively) at the declaration `d`: a scalar variable, a stack cell when `taken`
    /// (its address is taken), a stack object for a struct; initialised from `init`,
    /// else zero when `zeroed`, else uninitialised (a scalar variable gets `nondet()`).
    /// `var`: `d` declares this very variable (not an array element), which is then
    /// registered as soon as it exists (its initialiser may take its address) and may
    /// be initialised by a struct copy.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn local_object(
        &mut self,
        d: Cursor<'t>,
        name: &str,
        t: Type<'t>,
        init: Option<Cursor<'t>>,
        zeroed: bool,
        taken: bool,
        var: bool,
    ) -> R<Lv> {
        if is_array(t) {
            let (elem, n) = check_len(t, d)?;
            let items = self.cx.init_items(init, n, d)?;
            let mut elems = Vec::with_capacity(n as usize);
            for (k, item) in items.into_iter().enumerate() {
                let ename = format!("{name}[{k}]");
                elems.push(self.local_object(d, &ename, elem, item, zeroed, taken, false)?);
            }
            return Ok(Lv::Arr(elems));
        }
        let src = loc(d);
        let scope = Scope::Local(self.fid);
        Ok(match self.cx.conv(t, d)? {
            CTy::Scalar(ty) if taken => {
                let v = self
                    .cx
                    .new_var(name.into(), Ty::Ptr(Box::new(ty.clone())), scope, src);
                self.cx.prog.functions[self.fid].locals.push(v);
                self.cx.cell_vars.insert(v, ty.clone());
                self.register_local(d, v, var);
                self.alloc_cell(v, ty.clone(), src);
                // without initialiser the cell stays uninitialised, like a stack
                // struct's fields: its reads are indeterminate in every domain and in
                // the path encoding (an unconstrained cell, no quantified value for the
                // interpolants), and a replay takes the model's value
                let e = match init {
                    Some(i) => Some(self.rv_as(i, &ty)?),
                    None => zeroed.then(|| zero(&ty)),
                };
                if let Some(e) = e {
                    self.emit(Op::StoreIndirect { ptr: v, src: e }, src);
                }
                Lv::Deref(v, ty)
            }
            CTy::Scalar(ty) => {
                let v = self.cx.new_var(name.into(), ty.clone(), scope, src);
                self.cx.prog.functions[self.fid].locals.push(v);
                self.register_local(d, v, var);
                match init {
                    Some(i) => self.rhs_into(i, v)?,
                    None if zeroed => self.emit(
                        Op::Assign {
                            dst: v,
                            src: zero(&ty),
                        },
                        src,
                    ),
                    None => self.emit(Op::Nondet { dst: v }, src),
                }
                Lv::Var(v)
            }
            CTy::Struct(s) => {
                let v = self
                    .cx
                    .new_var(name.into(), Ty::Ptr(Box::new(Ty::Struct(s))), scope, src);
                self.cx.prog.functions[self.fid].locals.push(v);
                self.cx.obj_vars.insert(v, s);
                self.cx.note_head(v, s, t);
                self.register_local(d, v, var);
                let bytes = self.cx.prog.structs[s].size;
                self.emit(
                    Op::Alloc {
                        dst: v,
                        pointee: Ty::Struct(s),
                        bytes: Some(bytes),
                        kind: crate::cfa::AllocKind::Stack,
                    },
                    src,
                );
                self.embed_links(v, s, crate::cfa::AllocKind::Stack, d, src)?;
                let prefix = self.cx.obj_prefix(t);
                match init {
                    Some(i) if strip_parens(i).kind() == CXCursor_InitListExpr => {
                        self.init_struct(v, s, &prefix, Some(i), true)?
                    }
                    Some(i) if var => {
                        let from = self.lv(strip_noop(i))?;
                        self.copy_struct(Lv::Obj(v, s, prefix.clone()), from, i)?
                    }
                    Some(i) => return unsup(i, "struct copy in an array initialiser"),
                    None if zeroed => self.init_struct(v, s, &prefix, None, true)?,
                    None => {}
                }
                Lv::Obj(v, s, prefix)
            }
            CTy::Void if var => return unsup(d, "void variable"),
            CTy::Void => return unsup(d, "array of void"),
        })
    }

    /// Registers `v` as the variable of the declaration `d` when `var`.
    fn register_local(&mut self, d: Cursor<'t>, v: VarId, var: bool) {
        if var {
            self.locals.insert(d.canonical(), v);
        }
    }

    /// Initialises the array member `name` (C type `t`) of the struct `ptr` points to
    /// from the initialiser `item` (missing items, or all when `item` is `None` and
    /// `zero_rest`, are zero).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn init_array_field(
        &mut self,
        ptr: VarId,
        s: StructId,
        name: &str,
        t: Type<'t>,
        item: Option<Cursor<'t>>,
        zero_rest: bool,
        at: Cursor<'t>,
    ) -> R<()> {
        let (elem, n) = check_len(t, at)?;
        let items = self.cx.init_items(item, n, at)?;
        for (k, it) in items.into_iter().enumerate() {
            if it.is_none() && !zero_rest {
                continue;
            }
            let ename = format!("{name}[{k}]");
            self.init_member(ptr, s, &ename, elem, it, zero_rest, at)?;
        }
        Ok(())
    }
}
