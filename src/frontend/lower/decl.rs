//! Declarations: variables (scalars, address-taken scalars in stack cells, struct
//! objects), their initialisers, and the stack cells of address-taken scalars.

use super::cursor::strip_parens;
use super::expr::zero;
use super::{loc, unsup, FnLower, Unsup, R};
use crate::cfa::{AllocKind, FieldRef, Op, SrcLoc, StructId, Ty, VarId};
use crate::frontend::clang::{Cursor, Type};
use crate::frontend::types::{is_array, CTy};
use clang_sys::*;

impl<'c, 't> FnLower<'c, 't> {
    /// The variable a reference at `at` to the declaration `decl` denotes (a local, or
    /// a global registered on first use).
    pub(super) fn var_of(&mut self, decl: Cursor<'t>, at: Cursor<'t>) -> R<VarId> {
        if is_array(decl.ty()) {
            return unsup(at, "array used as a pointer (array-to-pointer decay)");
        }
        let key = decl.canonical();
        if let Some(&v) = self.locals.get(&key) {
            return Ok(v);
        }
        let global = decl.kind() == CXCursor_VarDecl
            && (matches!(decl.storage_class(), CX_SC_Static | CX_SC_Extern)
                || decl
                    .semantic_parent()
                    .is_some_and(|p| p.kind() == CXCursor_TranslationUnit));
        if global {
            return self.cx.global_var(decl);
        }
        unsup(at, "internal: reference to an unknown variable")
    }

    /// Lowers a local variable declaration with its initialiser (static and extern
    /// ones are globals).
    pub(super) fn decl_var(&mut self, d: Cursor<'t>) -> R<()> {
        if matches!(d.storage_class(), CX_SC_Static | CX_SC_Extern) {
            if is_array(d.ty()) {
                self.cx.global_array(d)?;
            } else {
                self.cx.global_var(d)?;
            }
            return Ok(());
        }
        if is_array(d.ty()) {
            return self.decl_array(d);
        }
        let name = self.unique_name(&d.spelling());
        let taken = self.cx.addr_taken.contains(&d.canonical());
        self.local_object(d, &name, d.ty(), d.var_init(), false, taken, true)?;
        Ok(())
    }

    /// Initialises the struct (part at `prefix`) `ptr` points to from an initialiser
    /// list; missing initialisers (or `init == None` when `zero_rest`) store zero.
    pub(super) fn init_struct(
        &mut self,
        ptr: VarId,
        s: StructId,
        prefix: &str,
        init: Option<Cursor<'t>>,
        zero_rest: bool,
    ) -> R<()> {
        let items: Vec<Cursor<'t>> = match init {
            None => Vec::new(),
            Some(i) => {
                let i = strip_parens(i);
                if i.kind() != CXCursor_InitListExpr {
                    return unsup(i, "struct copy in initialiser");
                }
                i.expr_children()
            }
        };
        for it in &items {
            if it.children().iter().any(|c| c.kind() == CXCursor_MemberRef) {
                return unsup(*it, "designated initialiser");
            }
        }
        // the struct (or embedded struct) definition whose direct fields we walk
        let def = self.struct_def_at(s, prefix, init)?;
        let fields: Vec<Cursor<'t>> = def
            .children()
            .into_iter()
            .filter(|f| f.kind() == CXCursor_FieldDecl)
            .collect();
        if items.len() > fields.len() {
            return unsup(items[fields.len()], "excess initialiser");
        }
        for (i, f) in fields.iter().enumerate() {
            let item = items.get(i).copied();
            if item.is_none() && !zero_rest {
                continue;
            }
            let fname = format!("{prefix}{}", f.spelling());
            if let Some(place) = self.cx.split_place(*f) {
                // a split link struct (`frontend::intrusive`): initialise its own object
                if let Some(it) = item {
                    return unsup(
                        it,
                        "initialiser of a link struct embedded in several places",
                    );
                }
                let Some(idx) =
                    self.cx.prog.structs[s].field_index(&format!("{prefix}{}", place.link_field()))
                else {
                    return unsup(*f, "internal: hidden link field not found");
                };
                let CTy::Struct(l) = self.cx.conv(f.ty(), *f)? else {
                    return unsup(*f, "internal: link struct");
                };
                let t = self.tmp(Ty::Ptr(Box::new(Ty::Struct(l))));
                let field = FieldRef {
                    strukt: s,
                    field: idx,
                };
                let src = self.cx.prog.vars[ptr].src;
                self.emit(Op::Load { dst: t, ptr, field }, src);
                self.init_struct(t, l, "", None, zero_rest)?;
                continue;
            }
            self.init_member(ptr, s, &fname, f.ty(), item, zero_rest, *f)?;
        }
        Ok(())
    }

    /// Initialises the member `name` (C type `t`: a scalar, a struct or an array) of
    /// the struct `ptr` points to from the initialiser `item` (or zero, when `item` is
    /// `None` and `zero_rest`; else nothing).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn init_member(
        &mut self,
        ptr: VarId,
        s: StructId,
        name: &str,
        t: Type<'t>,
        item: Option<Cursor<'t>>,
        zero_rest: bool,
        at: Cursor<'t>,
    ) -> R<()> {
        if is_array(t) {
            return self.init_array_field(ptr, s, name, t, item, zero_rest, at);
        }
        match self.cx.conv(t, at)? {
            CTy::Struct(_) => {
                if let Some(it) = item {
                    if strip_parens(it).kind() != CXCursor_InitListExpr {
                        return unsup(it, "initialiser with brace elision or struct copy");
                    }
                }
                self.init_struct(ptr, s, &format!("{name}."), item, zero_rest)
            }
            CTy::Scalar(fty) => {
                let Some(idx) = self.cx.prog.structs[s].field_index(name) else {
                    return unsup(at, "internal: field not found");
                };
                let field = FieldRef {
                    strukt: s,
                    field: idx,
                };
                let (val, src) = match item {
                    Some(it) => {
                        let e = self.rv(it)?;
                        let ity = self.ety(it)?;
                        (self.convert(e, &ity, &fty, it)?, loc(it))
                    }
                    None => (zero(&fty), self.cx.prog.vars[ptr].src),
                };
                self.emit(
                    Op::Store {
                        ptr,
                        field,
                        src: val,
                    },
                    src,
                );
                Ok(())
            }
            CTy::Void => unsup(at, "void field"),
        }
    }

    /// The definition cursor of struct `s` or of its embedded struct at `prefix`.
    fn struct_def_at(
        &mut self,
        s: StructId,
        prefix: &str,
        at: Option<Cursor<'t>>,
    ) -> R<Cursor<'t>> {
        let Some(mut def) = self.cx.struct_defs.get(s).copied().flatten() else {
            return match at {
                Some(a) => unsup(a, "initialiser of an incomplete struct"),
                None => Err(Unsup {
                    file: None,
                    at: SrcLoc::default(),
                    construct: "internal: incomplete struct".into(),
                }),
            };
        };
        for part in prefix.split('.').filter(|p| !p.is_empty()) {
            // `m[k]`: an element of the array member `m` (`lower::array`)
            let (member, dims) = match part.find('[') {
                Some(i) => (&part[..i], part[i..].matches('[').count()),
                None => (part, 0),
            };
            let f = def
                .children()
                .into_iter()
                .find(|f| f.kind() == CXCursor_FieldDecl && f.spelling() == member);
            let elem =
                f.map(|f| (0..dims).fold(f.ty().canonical(), |t, _| t.array_element().canonical()));
            let Some(next) = elem.and_then(|t| t.declaration().definition()) else {
                return unsup(def, "internal: embedded struct not found");
            };
            def = next;
        }
        Ok(def)
    }

    /// Allocates the stack cell backing an address-taken scalar variable.
    pub(super) fn alloc_cell(&mut self, v: VarId, ty: Ty, src: SrcLoc) {
        let bytes = match &ty {
            Ty::Int { bits, .. } => u64::from(*bits).div_ceil(8),
            _ => 4,
        };
        self.emit(
            Op::Alloc {
                dst: v,
                pointee: ty,
                bytes: Some(bytes),
                kind: AllocKind::Stack,
            },
            src,
        );
    }
}
