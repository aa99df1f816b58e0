//! The objects of link structs embedded in several places (`frontend::intrusive`):
//! allocated and freed with their container; the dummy containers `container_of` gives
//! for a link that is not in a container of the asked type (a list head).

use super::{unsup, FnLower, R};
use crate::cfa::{AllocKind, BinOp, Expr, FieldRef, Op, SrcLoc, StructId, Ty, VarId};
use crate::frontend::clang::Cursor;
use crate::frontend::intrusive::{record_key, Place};

impl<'c, 't> FnLower<'c, 't> {
    /// After `obj` was allocated as a struct `s` object of the given kind: when `s`
    /// embeds split link structs, a link object per place (`obj->$m = l`,
    /// `l->$own_T_m = obj`, its other owner fields NULL); when `s` is a split link
    /// struct (a stand-alone head), all its owner fields NULL. A NULL owner field gets
    /// a dummy container on the first `container_of` ([`Self::split_container_of`]).
    /// A heap allocation may have failed: the links are then made only when `obj` is
    /// not NULL, and a link object never fails (it is part of its container's memory).
    pub(super) fn embed_links(
        &mut self,
        obj: VarId,
        s: StructId,
        kind: AllocKind,
        at: Cursor<'t>,
        src: SrcLoc,
    ) -> R<()> {
        let hosted = self.cx.hosted_places(s);
        let head = self
            .cx
            .intrusive
            .splits
            .values()
            .find(|sp| self.cx.struct_ids.get(&record_key(sp.link)) == Some(&s))
            .map(|sp| sp.places.clone());
        if hosted.is_empty() && head.is_none() {
            return Ok(());
        }
        let join = self.node(src);
        if matches!(kind, AllocKind::Heap { .. }) {
            let cur = self.cur;
            let cond = Expr::bin(BinOp::Eq, Expr::Var(obj), Expr::Null);
            self.edge(cur, join, Op::Assume { cond }, src);
            let yes = self.node(src);
            let cond = Expr::bin(BinOp::Ne, Expr::Var(obj), Expr::Null);
            self.edge(cur, yes, Op::Assume { cond }, src);
            self.cur = yes;
        }
        for (link, place) in hosted {
            let l = self.cx.struct_id(link, at)?;
            let t = self.alloc_linked(l, kind, src);
            self.store_ptr(obj, s, &place.link_field(), Expr::Var(t), at, src)?;
            let places = self.cx.intrusive.splits[&record_key(link)].places.clone();
            for other in places {
                let owner = if other.owner_field() == place.owner_field() {
                    Expr::Var(obj)
                } else {
                    Expr::Null
                };
                self.store_ptr(t, l, &other.owner_field(), owner, at, src)?;
            }
        }
        for place in head.unwrap_or_default() {
            self.store_ptr(obj, s, &place.owner_field(), Expr::Null, at, src)?;
        }
        self.jump(join, src);
        self.cur = join;
        Ok(())
    }

    /// `container_of(p, T, m)` of a split link struct: `p->$own_T_m`, its container at
    /// that place; when that is NULL (a stand-alone head, or a link embedded at another
    /// place, for which C computes an address outside any `T`), a dummy `T` object
    /// allocated now and kept in `p->$own_T_m` (so the same address every time) whose
    /// `$m` is `p` (so `&pos->m` gives `p` back, as in C); its other fields stay
    /// uninitialised, as C has no object there.
    pub(super) fn split_container_of(
        &mut self,
        p: VarId,
        l: StructId,
        place: &Place<'t>,
        at: Cursor<'t>,
        src: SrcLoc,
    ) -> R<VarId> {
        let Some(idx) = self.cx.prog.structs[l].field_index(&place.owner_field()) else {
            return unsup(at, "internal: owner field not found");
        };
        let field = FieldRef {
            strukt: l,
            field: idx,
        };
        let c = self.cx.struct_id(place.container, at)?;
        let dst = self.tmp(Ty::Ptr(Box::new(Ty::Struct(c))));
        self.emit(Op::Load { dst, ptr: p, field }, src);
        let join = self.node(src);
        let cur = self.cur;
        let cond = Expr::bin(BinOp::Ne, Expr::Var(dst), Expr::Null);
        self.edge(cur, join, Op::Assume { cond }, src);
        let none = self.node(src);
        let cond = Expr::bin(BinOp::Eq, Expr::Var(dst), Expr::Null);
        self.edge(cur, none, Op::Assume { cond }, src);
        self.cur = none;
        let d = self.alloc_linked(c, AllocKind::Stack, src);
        self.store_ptr(d, c, &place.link_field(), Expr::Var(p), at, src)?;
        self.store_ptr(p, l, &place.owner_field(), Expr::Var(d), at, src)?;
        self.emit(
            Op::Assign {
                dst,
                src: Expr::Var(d),
            },
            src,
        );
        self.jump(join, src);
        self.cur = join;
        Ok(dst)
    }

    /// A fresh object of struct `s` that does not fail (see [`Self::embed_links`]).
    fn alloc_linked(&mut self, s: StructId, kind: AllocKind, src: SrcLoc) -> VarId {
        let t = self.tmp(Ty::Ptr(Box::new(Ty::Struct(s))));
        let bytes = self.cx.prog.structs[s].size;
        self.emit(
            Op::Alloc {
                dst: t,
                pointee: Ty::Struct(s),
                bytes: Some(bytes),
                kind,
            },
            src,
        );
        if matches!(kind, AllocKind::Heap { .. }) {
            let cond = Expr::bin(BinOp::Ne, Expr::Var(t), Expr::Null);
            self.emit(Op::Assume { cond }, src);
        }
        t
    }

    /// `ptr->field = val` for field `field` of struct `s`.
    fn store_ptr(
        &mut self,
        ptr: VarId,
        s: StructId,
        field: &str,
        val: Expr,
        at: Cursor<'t>,
        src: SrcLoc,
    ) -> R<()> {
        let Some(idx) = self.cx.prog.structs[s].field_index(field) else {
            return unsup(at, "internal: hidden link field not found");
        };
        let field = FieldRef {
            strukt: s,
            field: idx,
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

    /// Before `free(ptr)` of a struct `s` object: frees its link objects (when `ptr`
    /// is not NULL), as C frees them with the container's memory.
    pub(super) fn free_links(
        &mut self,
        ptr: VarId,
        s: StructId,
        at: Cursor<'t>,
        src: SrcLoc,
    ) -> R<()> {
        let hosted = self.cx.hosted_places(s);
        if hosted.is_empty() {
            return Ok(());
        }
        let join = self.node(src);
        let cur = self.cur;
        let cond = Expr::bin(BinOp::Eq, Expr::Var(ptr), Expr::Null);
        self.edge(cur, join, Op::Assume { cond }, src);
        let yes = self.node(src);
        let cond = Expr::bin(BinOp::Ne, Expr::Var(ptr), Expr::Null);
        self.edge(cur, yes, Op::Assume { cond }, src);
        self.cur = yes;
        for (link, place) in hosted {
            let l = self.cx.struct_id(link, at)?;
            let Some(idx) = self.cx.prog.structs[s].field_index(&place.link_field()) else {
                return unsup(at, "internal: hidden link field not found");
            };
            let t = self.tmp(Ty::Ptr(Box::new(Ty::Struct(l))));
            let field = FieldRef {
                strukt: s,
                field: idx,
            };
            self.emit(Op::Load { dst: t, ptr, field }, src);
            self.emit(Op::Free { ptr: t }, src);
        }
        self.jump(join, src);
        self.cur = join;
        Ok(())
    }
}
