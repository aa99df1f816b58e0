//! Pointers to pointer fields as one pointer per target field (the coarse-grained
//! model of the overlapping-structures paper, as a program rewriting).
//!
//! A value of type `X **` whose only sources are NULL and `&p->f` (Linux's `pprev`:
//! `&prev->next` or `&head->first`) is determined by *which* field it points into and
//! the object holding that field. [`split_field_pointers`] gives every variable and
//! struct field of such a type `τ` one pointer per target field `(S, f)` of `τ` (the
//! fields whose address the program takes as a `τ`), named `x@S.f` and typed `S *`:
//! component `(S, f)` is `p` when `x == &p->f`, NULL otherwise.
//!
//! | operation on `τ` values | becomes |
//! |---|---|
//! | `x = &p->f` | `x@S.f = p`, every other component NULL |
//! | `x = y`, `x = NULL`, `x = p->g`, `p->g = x`, `x = nondet()` | the same per component |
//! | `y = *x` / `*x = e` | for each component `c` with target `(S, f)`: `assume(c != NULL); y = c->f` / `c->f = e` |
//! | `assume_invalid(*x)` | for each component `c`: `assume(c != NULL); assume_invalid(c)` (as `S`) |
//! | `x == y` / `x != y` / `!x` | all components equal / some component differs / all NULL |
//! | a `τ` argument | one argument per component |
//!
//! Struct fields of type `τ` keep their place for the first component; the others are
//! appended to the struct (which grows by a pointer each). The rewriting keeps every
//! run of the program (its values in one-to-one correspondence, at most one component
//! non-NULL), adding runs only where a `τ` is `nondet()` (an uninitialised pointer,
//! garbage in the original, may now point into a field). Its proofs are proofs of the
//! original; its counterexamples are not evidence (see [`crate::promote`], which applies
//! it before promoting). Afterwards no field address of type `τ` is taken, so the
//! objects holding the target fields may be promoted.
//!
//! The rewriting applies only when every `τ` value is made and used as listed: no
//! `τ` allocation (`malloc` of pointer cells, an address-taken pointer variable), no
//! cast, arithmetic or `free` on `τ`, no function returning `τ`, no `X ***`.

use crate::cfa::rewrite::{assign, assume, Chain};
use crate::cfa::{
    Access, BinOp, Edge, Expr, FieldDef, FieldRef, Node, Op, Program, Ty, UnOp, VarId,
};
use petgraph::visit::EdgeRef;
use std::collections::BTreeMap;

/// The split types with their targets, in order of first occurrence.
type Targets = Vec<(Ty, Vec<FieldRef>)>;

/// The targets of `ty`, if it is split.
fn lookup<'t>(t: &'t Targets, ty: &Ty) -> Option<&'t Vec<FieldRef>> {
    t.iter().find(|(x, _)| x == ty).map(|(_, v)| v)
}

/// Size of a pointer in bytes (ILP32, as the front end lays out structs).
const PTR_BYTES: u64 = 4;

/// One split type: `τ = X **` and the fields `(S, f)` of type `X *` whose address the
/// program takes, in a fixed order (component `i` points to an `S_i`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitType {
    pub ty: Ty,
    pub targets: Vec<FieldRef>,
}

impl SplitType {
    /// The target fields as `struct.field` (the struct's name as declared).
    pub fn target_names(&self, prog: &Program) -> Vec<String> {
        self.targets
            .iter()
            .map(|t| {
                let s = &prog.structs[t.strukt];
                format!("{}.{}", s.name, s.fields[t.field].name)
            })
            .collect()
    }
}

/// `Ptr(Ptr(_))`.
fn is_pp(ty: &Ty) -> bool {
    matches!(ty, Ty::Ptr(inner) if matches!(**inner, Ty::Ptr(_)))
}

/// `Ptr(Ptr(Ptr(_)))`.
fn is_ppp(ty: &Ty) -> bool {
    matches!(ty, Ty::Ptr(inner) if is_pp(inner))
}

/// The program with its pointers to pointer fields split (see the module docs), and
/// the split types; `None` when the program takes no such address or uses one in a
/// way the rewriting does not keep exact.
pub fn split_field_pointers(prog: &Program) -> Option<(Program, Vec<SplitType>)> {
    let mut targets: Targets = Vec::new();
    for e in prog.graph.edge_weights() {
        if let Op::FieldAddr { dst, ptr, field } = &e.op {
            let ty = &prog.vars.get(*dst)?.ty;
            if is_pp(ty) {
                // the component holds `ptr`, which must be a pointer to the field's struct
                if prog.vars.get(*ptr)?.ty.pointee_struct() != Some(field.strukt) {
                    return None;
                }
                let k = match targets.iter().position(|(x, _)| x == ty) {
                    Some(k) => k,
                    None => {
                        targets.push((ty.clone(), Vec::new()));
                        targets.len() - 1
                    }
                };
                let t = &mut targets[k].1;
                if !t.contains(field) {
                    t.push(*field);
                }
            }
        }
    }
    if targets.is_empty() {
        return None;
    }
    for (_, t) in &mut targets {
        t.sort();
    }
    // every τ in the program has targets; no triple pointers; no τ returned
    let known = |ty: &Ty| !is_pp(ty) || lookup(&targets, ty).is_some();
    let all_types = prog.vars.iter().map(|v| &v.ty).chain(
        prog.structs
            .iter()
            .flat_map(|s| s.fields.iter().map(|f| &f.ty)),
    );
    for ty in all_types {
        if is_ppp(ty) || !known(ty) {
            return None;
        }
    }
    if prog.functions.iter().any(|f| is_pp(&f.ret_ty)) {
        return None;
    }
    let mut sp = Splitter::new(prog, targets)?;
    sp.rewrite()?;
    let types = sp
        .targets
        .iter()
        .map(|(ty, t)| SplitType {
            ty: ty.clone(),
            targets: t.clone(),
        })
        .collect();
    Some((sp.out, types))
}

struct Splitter<'a> {
    prog: &'a Program,
    out: Program,
    targets: Targets,
    /// Components of each split variable (the first is the variable itself, retyped).
    vars: BTreeMap<VarId, Vec<VarId>>,
    /// Components of each split field (field indices in the same struct).
    fields: BTreeMap<FieldRef, Vec<FieldRef>>,
    /// Old and new size of each struct that grew.
    grown: BTreeMap<usize, (u64, u64)>,
}

impl<'a> Splitter<'a> {
    /// Creates the component variables and fields.
    fn new(prog: &'a Program, targets: Targets) -> Option<Splitter<'a>> {
        let mut out = prog.clone();
        let comp_ty = |t: &FieldRef| Ty::Ptr(Box::new(Ty::Struct(t.strukt)));
        let suffix = |t: &FieldRef| {
            let s = &prog.structs[t.strukt];
            let short = s.name.strip_prefix("struct ").unwrap_or(&s.name);
            format!("@{short}.{}", s.fields[t.field].name)
        };
        let mut vars = BTreeMap::new();
        for (v, var) in prog.vars.iter().enumerate() {
            let Some(ts) = lookup(&targets, &var.ty) else {
                continue;
            };
            let mut comps = vec![v];
            out.vars[v].name = format!("{}{}", var.name, suffix(&ts[0]));
            out.vars[v].ty = comp_ty(&ts[0]);
            for t in &ts[1..] {
                let c = out.add_var(format!("{}{}", var.name, suffix(t)), comp_ty(t), var.scope);
                out.vars[c].src = var.src;
                comps.push(c);
            }
            vars.insert(v, comps);
        }
        // new variables join their function's parameters (right after the original) or locals
        for f in &mut out.functions {
            let mut params = Vec::new();
            for &p in &f.params {
                params.push(p);
                params.extend(vars.get(&p).map_or(&[][..], |c| &c[1..]));
            }
            f.params = params;
            let extra: Vec<VarId> = f
                .locals
                .iter()
                .filter_map(|l| vars.get(l))
                .flat_map(|c| c[1..].iter().copied())
                .collect();
            f.locals.extend(extra);
        }
        let mut fields = BTreeMap::new();
        let mut grown = BTreeMap::new();
        for (s, def) in prog.structs.iter().enumerate() {
            let mut size = def.size;
            for (i, fd) in def.fields.iter().enumerate() {
                let Some(ts) = lookup(&targets, &fd.ty) else {
                    continue;
                };
                let first = FieldRef {
                    strukt: s,
                    field: i,
                };
                out.structs[s].fields[i] = FieldDef {
                    name: format!("{}{}", fd.name, suffix(&ts[0])),
                    ty: comp_ty(&ts[0]),
                    offset: fd.offset,
                };
                let mut comps = vec![first];
                for t in &ts[1..] {
                    comps.push(FieldRef {
                        strukt: s,
                        field: out.structs[s].fields.len(),
                    });
                    out.structs[s].fields.push(FieldDef {
                        name: format!("{}{}", fd.name, suffix(t)),
                        ty: comp_ty(t),
                        offset: size,
                    });
                    size += PTR_BYTES;
                }
                fields.insert(first, comps);
            }
            if size != def.size {
                out.structs[s].size = size;
                grown.insert(s, (def.size, size));
            }
        }
        Some(Splitter {
            prog,
            out,
            targets,
            vars,
            fields,
            grown,
        })
    }

    fn split(&self, v: VarId) -> bool {
        self.vars.contains_key(&v)
    }

    /// Whether `e` reads a split variable.
    fn mentions(&self, e: &Expr) -> bool {
        let mut vs = Vec::new();
        e.vars(&mut vs);
        vs.iter().any(|v| self.split(*v))
    }

    /// The components of a `τ` operand (a split variable or NULL) for `n` components.
    fn operand(&self, e: &Expr, n: usize) -> Option<Vec<Expr>> {
        match e {
            Expr::Var(v) => Some(self.vars.get(v)?.iter().map(|&c| Expr::Var(c)).collect()),
            Expr::Null => Some(vec![Expr::Null; n]),
            Expr::Cast(_, inner) if **inner == Expr::Null => Some(vec![Expr::Null; n]),
            _ => None,
        }
    }

    /// The components of the value assigned to `dst` (split) from `src`.
    fn copy_ops(&self, dst: VarId, src: &Expr) -> Option<Vec<Op>> {
        let comps = self.vars.get(&dst)?;
        if let Expr::Var(w) = src {
            if self.prog.vars[*w].ty != self.prog.vars[dst].ty {
                return None;
            }
        }
        let vals = self.operand(src, comps.len())?;
        Some(comps.iter().zip(vals).map(|(&c, v)| assign(c, v)).collect())
    }

    /// A condition over `τ` operands as a conjunction (`true`) or disjunction (`false`)
    /// of comparisons; `None` if it uses them otherwise.
    fn condition(&self, cond: &Expr) -> Option<(bool, Vec<Expr>)> {
        let pair = |a: &Expr, b: &Expr| -> Option<(Vec<Expr>, Vec<Expr>)> {
            let (va, vb) = match (a, b) {
                (Expr::Var(x), Expr::Var(y)) => {
                    if self.prog.vars[*x].ty != self.prog.vars[*y].ty {
                        return None;
                    }
                    let n = self.vars.get(x)?.len();
                    (self.operand(a, n)?, self.operand(b, n)?)
                }
                (Expr::Var(x), _) => {
                    let n = self.vars.get(x)?.len();
                    (self.operand(a, n)?, self.operand(b, n)?)
                }
                (_, Expr::Var(y)) => {
                    let n = self.vars.get(y)?.len();
                    (self.operand(a, n)?, self.operand(b, n)?)
                }
                _ => return None,
            };
            Some((va, vb))
        };
        match cond {
            Expr::Binary(op @ (BinOp::Eq | BinOp::Ne), a, b) => {
                let (va, vb) = pair(a, b)?;
                let parts = va
                    .into_iter()
                    .zip(vb)
                    .map(|(x, y)| Expr::bin(*op, x, y))
                    .collect();
                Some((*op == BinOp::Eq, parts))
            }
            Expr::Unary(UnOp::Not, a) => {
                let (va, vb) = pair(a, &Expr::Null)?;
                let parts = va
                    .into_iter()
                    .zip(vb)
                    .map(|(x, y)| Expr::bin(BinOp::Eq, x, y))
                    .collect();
                Some((true, parts))
            }
            _ => None,
        }
    }

    /// An access through the split `ptr`: for each component `c` with target field `t`,
    /// the path `assume(c != NULL); op(c, t)` (a NULL `ptr` has no successor here, the
    /// NULL check beside the access takes it).
    fn per_component(
        &self,
        ptr: VarId,
        op: impl Fn(VarId, FieldRef) -> Op,
    ) -> Option<Vec<Vec<Op>>> {
        let ts = lookup(&self.targets, &self.prog.vars[ptr].ty)?;
        Some(
            self.vars[&ptr]
                .iter()
                .zip(ts)
                .map(|(&c, &t)| vec![assume(BinOp::Ne, Expr::Var(c), Expr::Null), op(c, t)])
                .collect(),
        )
    }

    /// Rewrites every edge; `None` if one uses a `τ` value in a way not listed.
    fn rewrite(&mut self) -> Option<()> {
        let edges: Vec<(Node, Node, Edge)> = self
            .prog
            .graph
            .edge_references()
            .map(|e| (e.source(), e.target(), e.weight().clone()))
            .collect();
        let mut g = self.prog.graph.clone();
        g.clear_edges();
        self.out.graph = g;
        for (from, to, edge) in edges {
            let ops: Vec<Vec<Op>> = self.edge(&edge.op)?;
            let mut b = Chain {
                prog: &mut self.out,
                src: edge.src,
            };
            for path in ops {
                b.path(from, to, path);
            }
        }
        Some(())
    }

    /// The rewriting of one operation: parallel paths of operations.
    fn edge(&self, op: &Op) -> Option<Vec<Vec<Op>>> {
        let one = |ops: Vec<Op>| Some(vec![ops]);
        let same = || Some(vec![vec![op.clone()]]);
        let clean = |e: &Expr| !self.mentions(e);
        let targets_of = |v: VarId| lookup(&self.targets, &self.prog.vars[v].ty);
        match op {
            Op::Assign { dst, src } if self.split(*dst) => one(self.copy_ops(*dst, src)?),
            Op::Assign { src, .. } => clean(src).then(|| vec![vec![op.clone()]]),
            Op::Nondet { dst } if self.split(*dst) => one(self.vars[dst]
                .iter()
                .map(|&c| Op::Nondet { dst: c })
                .collect()),
            Op::Load { dst, ptr, field } if self.split(*dst) => {
                let fs = self.fields.get(field)?;
                let cs = &self.vars[dst];
                one(cs
                    .iter()
                    .zip(fs)
                    .map(|(&c, &f)| Op::Load {
                        dst: c,
                        ptr: *ptr,
                        field: f,
                    })
                    .collect())
            }
            Op::Store { ptr, field, src } if self.fields.contains_key(field) => {
                self.store_split_field(*ptr, *field, src)
            }
            Op::Store { src, .. } => clean(src).then(|| vec![vec![op.clone()]]),
            Op::FieldAddr { dst, ptr, field } if self.split(*dst) => {
                let ts = targets_of(*dst)?;
                let j = ts.iter().position(|t| t == field)?;
                one(self.vars[dst]
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| assign(c, if i == j { Expr::Var(*ptr) } else { Expr::Null }))
                    .collect())
            }
            Op::LoadIndirect { dst, ptr } if self.split(*ptr) => {
                if self.split(*dst) {
                    return None;
                }
                self.per_component(*ptr, |c, t| Op::Load {
                    dst: *dst,
                    ptr: c,
                    field: t,
                })
            }
            Op::StoreIndirect { ptr, src } if self.split(*ptr) => {
                if !clean(src) {
                    return None;
                }
                self.per_component(*ptr, |c, t| Op::Store {
                    ptr: c,
                    field: t,
                    src: src.clone(),
                })
            }
            Op::StoreIndirect { src, .. } => clean(src).then(|| vec![vec![op.clone()]]),
            Op::AssumeInvalid { ptr, access } if self.split(*ptr) => {
                if *access != Access::Cell {
                    return None;
                }
                self.per_component(*ptr, |c, t| Op::AssumeInvalid {
                    ptr: c,
                    access: Access::Struct(t.strukt),
                })
            }
            Op::Assume { cond } if self.mentions(cond) => {
                let (conj, parts) = self.condition(cond)?;
                let assumes = parts.into_iter().map(|c| Op::Assume { cond: c });
                if conj {
                    one(assumes.collect())
                } else {
                    Some(assumes.map(|a| vec![a]).collect())
                }
            }
            Op::Free { ptr } if self.split(*ptr) => None,
            Op::Alloc { dst, .. } if self.split(*dst) => None,
            Op::Alloc {
                dst,
                pointee: Ty::Struct(s),
                bytes: Some(n),
                kind,
            } if self.grown.contains_key(s) => {
                let (old, new) = self.grown[s];
                // an array of such structs would need its elements moved: not handled
                (*n == old).then(|| {
                    vec![vec![Op::Alloc {
                        dst: *dst,
                        pointee: Ty::Struct(*s),
                        bytes: Some(new),
                        kind: *kind,
                    }]]
                })
            }
            Op::Call { callee, args, ret } => self.call(*callee, args, *ret),
            // a `τ` read from a cell of another kind (an `X ***`, refused above anyway)
            Op::LoadIndirect { dst, .. } if self.split(*dst) => None,
            // no split variable is written or read by the rest (the cases above)
            Op::Alloc { .. }
            | Op::Assume { .. }
            | Op::Nondet { .. }
            | Op::Load { .. }
            | Op::FieldAddr { .. }
            | Op::LoadIndirect { .. }
            | Op::AssumeInvalid { .. }
            | Op::Free { .. }
            | Op::Skip
            | Op::Error
            | Op::Halt
            | Op::AssumeLeak { .. } => same(),
        }
    }

    /// A store of a `τ` value into the split `field`: one store per component; `None`
    /// if the value is not a `τ` operand of the field's type.
    fn store_split_field(&self, ptr: VarId, field: FieldRef, src: &Expr) -> Option<Vec<Vec<Op>>> {
        let fs = &self.fields[&field];
        if let Expr::Var(w) = src {
            if self.prog.vars[*w].ty != self.prog.field(field).ty {
                return None;
            }
        }
        let vals = self.operand(src, fs.len())?;
        Some(vec![fs
            .iter()
            .zip(vals)
            .map(|(&f, v)| Op::Store {
                ptr,
                field: f,
                src: v,
            })
            .collect()])
    }

    /// A call: the argument of a split parameter becomes one argument per component;
    /// `None` if a `τ` value is returned or passed otherwise.
    fn call(
        &self,
        callee: crate::cfa::FuncId,
        args: &[Expr],
        ret: Option<VarId>,
    ) -> Option<Vec<Vec<Op>>> {
        if ret.is_some_and(|r| self.split(r)) {
            return None;
        }
        let f = self.prog.functions.get(callee)?;
        if f.params.len() != args.len() {
            return None;
        }
        let mut new_args = Vec::new();
        for (&p, a) in f.params.iter().zip(args) {
            if let Some(cs) = self.vars.get(&p) {
                if let Expr::Var(w) = a {
                    if self.prog.vars[*w].ty != self.prog.vars[p].ty {
                        return None;
                    }
                }
                new_args.extend(self.operand(a, cs.len())?);
            } else if self.mentions(a) {
                return None;
            } else {
                new_args.push(a.clone());
            }
        }
        Some(vec![vec![Op::Call {
            callee,
            args: new_args,
            ret,
        }]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::promote::tests::load;

    #[test]
    fn hlist_pprev_becomes_a_node_and_a_head_pointer() {
        let Some(prog) = load(
            "fieldptr::tests::hlist_pprev_becomes_a_node_and_a_head_pointer",
            "hlist_del.c",
        ) else {
            return;
        };
        let (out, types) = split_field_pointers(&prog).expect("pprev is split");
        assert_eq!(types.len(), 1);
        let names = types[0].target_names(&prog);
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.iter().any(|n| n.ends_with("node.next")), "{names:?}");
        assert!(names.iter().any(|n| n.ends_with("head.first")), "{names:?}");
        // no pointer to a pointer and no field address is left
        assert!(out.vars.iter().all(|v| !is_pp(&v.ty)));
        assert!(out
            .structs
            .iter()
            .all(|s| s.fields.iter().all(|f| !is_pp(&f.ty))));
        for e in out.graph.edge_weights() {
            assert!(!matches!(
                e.op,
                Op::FieldAddr { .. } | Op::LoadIndirect { .. } | Op::StoreIndirect { .. }
            ));
        }
        // struct node grew by one pointer, and its allocation with it
        let node = prog
            .structs
            .iter()
            .position(|s| s.name.ends_with("node"))
            .unwrap();
        assert_eq!(out.structs[node].size, prog.structs[node].size + PTR_BYTES);
        assert!(out.graph.edge_weights().any(|e| matches!(
            e.op,
            Op::Alloc { pointee: Ty::Struct(s), bytes: Some(n), .. }
                if s == node && n == out.structs[node].size
        )));
    }

    #[test]
    fn programs_without_field_addresses_stay() {
        let test = "fieldptr::tests::programs_without_field_addresses_stay";
        let Some(queues) = load(test, "two_queues.c") else {
            return;
        };
        assert!(split_field_pointers(&queues).is_none());
        let Some(dll) = load(test, "dll_concat.c") else {
            return;
        };
        assert!(split_field_pointers(&dll).is_none());
    }
}
