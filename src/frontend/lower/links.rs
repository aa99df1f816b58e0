//! The objects of link structs embedded in several places (`frontend::intrusive`):
//! allocated and freed with their container; the dummy containers `container_of` gives
//! for a link that is not in a container of the asked type (a list head).

use super::{unsup, Ctx, FnLower, R};
use crate::cfa::{
    AllocKind, BinOp, Edge, Expr, FieldRef, Loc, LocKind, Op, Scope, SrcLoc, StructId, Ty, VarId,
};
use crate::frontend::clang::{Cursor, Type};
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
            self.skip_if_null(obj, join, src);
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
        let ty = Ty::Ptr(Box::new(Ty::Struct(c)));
        let (owner, dst) = (self.tmp(ty.clone()), self.tmp(ty));
        self.emit(
            Op::Load {
                dst: owner,
                ptr: p,
                field,
            },
            src,
        );
        let join = self.node(src);
        let cur = self.cur;
        let cond = Expr::bin(BinOp::Ne, Expr::Var(owner), Expr::Null);
        let found = self.node(src);
        self.edge(cur, found, Op::Assume { cond }, src);
        let none = self.node(src);
        let cond = Expr::bin(BinOp::Eq, Expr::Var(owner), Expr::Null);
        self.edge(cur, none, Op::Assume { cond }, src);
        self.cur = found;
        self.emit(
            Op::Assign {
                dst,
                src: Expr::Var(owner),
            },
            src,
        );
        self.jump(join, src);
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

    /// Branches on `x`: to `join` when it is NULL; the lowering goes on where it is not.
    fn skip_if_null(&mut self, x: VarId, join: usize, src: SrcLoc) {
        let cur = self.cur;
        let cond = Expr::bin(BinOp::Eq, Expr::Var(x), Expr::Null);
        self.edge(cur, join, Op::Assume { cond }, src);
        let yes = self.node(src);
        let cond = Expr::bin(BinOp::Ne, Expr::Var(x), Expr::Null);
        self.edge(cur, yes, Op::Assume { cond }, src);
        self.cur = yes;
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
        self.skip_if_null(ptr, join, src);
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

impl<'t> Ctx<'t> {
    /// Records `v`, an object of struct `s` for a variable of C type `t`, when it stands
    /// for a stand-alone head of a link struct identified with its container `s`.
    pub(super) fn note_head(&mut self, v: VarId, s: StructId, t: Type<'t>) {
        let prefix = self.obj_prefix(t);
        if !prefix.is_empty() {
            self.head_objs.push((v, s, prefix));
        }
    }

    /// Beside every access (`Load`, `Store`, `FieldAddr`) of a field of a container
    /// struct outside its link member, an edge `assume(p == h)` to an `InvalidDeref`
    /// target for every stand-alone head `h` of that struct: in C a head has no
    /// container, so `list_entry(&head, T, m)->data` reads outside any object; the
    /// identification of the head with a container object would read a field of it.
    /// Not covered: heads allocated on the heap (`malloc(sizeof(struct list_head))`)
    /// and a function's local head reached from another function (its variable has no
    /// defined value outside its frame).
    pub(super) fn add_head_body_checks(&mut self) {
        if self.head_objs.is_empty() {
            return;
        }
        let mut checks = Vec::new();
        for e in self.prog.graph.edge_indices() {
            let (ptr, field) = match &self.prog.graph[e].op {
                Op::Load { ptr, field, .. }
                | Op::Store { ptr, field, .. }
                | Op::FieldAddr { ptr, field, .. } => (*ptr, *field),
                _ => continue,
            };
            let name = &self.prog.field(field).name;
            let Some((from, _)) = self.prog.graph.edge_endpoints(e) else {
                continue;
            };
            let func = self.prog.graph[from].func;
            for (h, s, prefix) in &self.head_objs {
                // a local head of another function has no defined value here (its
                // frame may not be active): only globals and the function's own heads
                let visible = match self.prog.vars[*h].scope {
                    Scope::Global => true,
                    Scope::Local(f) | Scope::Param(f) | Scope::Temp(f) => f == func,
                };
                if visible && *s == field.strukt && !name.starts_with(prefix.as_str()) && *h != ptr
                {
                    checks.push((from, ptr, *h, self.prog.graph[e].src));
                }
            }
        }
        for (from, ptr, h, src) in checks {
            let func = self.prog.graph[from].func;
            let target = self.prog.graph.add_node(Loc {
                func,
                src,
                kind: LocKind::InvalidDeref,
            });
            let cond = Expr::bin(BinOp::Eq, Expr::Var(ptr), Expr::Var(h));
            self.prog.graph.add_edge(
                from,
                target,
                Edge {
                    op: Op::Assume { cond },
                    src,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::interp::{run_random, run_random_to_end, Limits, Outcome};
    use crate::testutil::parse_c;

    /// A node on two lists (one `struct list_head` embedded twice) and a list head.
    const TWO_LINKS: &str = r#"
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
void reach_error(void);
struct list_head { struct list_head *next, *prev; };
#define container_of(p, T, m) ((T *)((char *)(p) - (unsigned long)(&((T *)0)->m)))
struct node { int data; struct list_head a; struct list_head b; };
static void init(struct list_head *h) { h->next = h; h->prev = h; }
static void add(struct list_head *n, struct list_head *h) {
  n->next = h->next; n->prev = h; h->next->prev = n; h->next = n;
}
int main(void) {
  struct list_head ha, hb;
  init(&ha); init(&hb);
  struct node *n = malloc(sizeof *n);
  if (!n) return 0;
  n->data = 7;
  add(&n->a, &ha); add(&n->b, &hb);
  CHECK
  free(n);
  return 0;
}
"#;

    /// The outcomes of 50 random runs of `TWO_LINKS` with `check` at `CHECK`.
    fn outcomes(check: &str) -> Vec<Outcome> {
        let prog = parse_c(&TWO_LINKS.replace("CHECK", check));
        let limits = Limits {
            max_steps: 10_000,
            malloc_never_fails: false,
        };
        (0..50)
            .map(|s| run_random(&prog, s, &limits).outcome)
            .collect()
    }

    #[test]
    fn two_embedded_links_of_one_object_stay_distinct() {
        let os = outcomes("if (&n->a == &n->b) reach_error();");
        assert!(os.iter().all(|o| *o == Outcome::Exit), "{os:?}");
        let os = outcomes("if (&n->a != &n->b) reach_error();");
        assert!(os.iter().any(Outcome::is_error), "{os:?}");
    }

    #[test]
    fn container_of_either_link_gives_the_node_back() {
        let ok = "if (container_of(ha.next, struct node, a) != n) reach_error();\n\
                  if (container_of(hb.next, struct node, b) != n) reach_error();\n\
                  if (container_of(ha.next, struct node, a)->data != 7) reach_error();";
        let os = outcomes(ok);
        assert!(os.iter().all(|o| *o == Outcome::Exit), "{os:?}");
        let bug = "if (container_of(ha.next, struct node, a) == n) reach_error();";
        assert!(outcomes(bug).iter().any(Outcome::is_error));
    }

    #[test]
    fn container_of_a_head_is_a_dummy_whose_link_is_the_head() {
        // `list_for_each_entry`'s stop test on an empty list: `&pos->m != head`; the
        // dummy is the same object every time, and no real node
        let ok = "struct node *d = container_of(ha.next->next, struct node, a);\n\
                  if (&d->a != &ha || d == n) reach_error();\n\
                  if (container_of(&ha, struct node, a) != d) reach_error();";
        let os = outcomes(ok);
        assert!(os.iter().all(|o| *o == Outcome::Exit), "{os:?}");
    }

    #[test]
    fn link_objects_are_freed_with_their_container() {
        let prog = parse_c(&TWO_LINKS.replace("CHECK", ""));
        let limits = Limits {
            max_steps: 10_000,
            malloc_never_fails: true,
        };
        let (run, heap) = run_random_to_end(&prog, 0, &limits);
        assert_eq!(run.outcome, Outcome::Exit);
        let heap = heap.unwrap_or_else(|| panic!("no heap at the end"));
        assert_eq!(heap.allocated, 0, "{heap:?}");
    }

    #[test]
    fn a_link_object_never_fails_alone() {
        // the links are allocated only when the node's allocation succeeded, and do
        // not fail themselves: no run dereferences NULL
        let os = outcomes("");
        assert!(os.iter().all(|o| *o == Outcome::Exit), "{os:?}");
    }
}
