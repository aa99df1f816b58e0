//! A repeated read of an integer field reuses the first one ([`Program::reuse_loaded_ints`]).
//!
//! `if (p->data != 0 && p->data != 1)` reads `p->data` twice; the front end lowers each
//! read to its own `Load` into a temporary. A heap abstraction that keeps a cell's value
//! only as a range (`0 ≤ data ≤ 1`) then cannot tell that the second read gives the
//! value the first was compared with, and needs one predicate per value (`data == 0`,
//! `data == 1`), which split list summaries by value. After the rewriting the second
//! read is a copy of the first temporary, and the comparison is between integers.
//!
//! The rewriting is an available-expressions analysis per function. A fact `t = p->f`
//! holds after the `Load` `t = p->f` (`t ≠ p`) and until `t` or `p` is assigned, or any
//! memory is written (`Store`, `StoreIndirect`, `free`, a call: aliasing and callees are
//! not tracked, so every write kills every fact); at joins only facts of every
//! incoming edge hold. A later `Load` `t2 = p->f` of an integer field where `t = p->f`
//! holds becomes `t2 = t`: the same value in every run, since nothing wrote the cell
//! and `p` still points to it. The check of the second access (NULL, dangling) is
//! implied by the first's, which every run passed before.

use super::{Expr, FieldRef, LocKind, Op, Program, VarId};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use std::collections::BTreeSet;

/// `dst = ptr->field` holds.
type Fact = (VarId, VarId, FieldRef);

impl Program {
    /// Rewrites each `Load` of an integer field that repeats an available load of the
    /// same field through the same, unchanged pointer with no memory write in between
    /// into a copy of the earlier temporary (see the module docs). The runs are the
    /// same, value for value. Returns the number of loads rewritten.
    pub fn reuse_loaded_ints(&mut self) -> usize {
        let n = self.graph.node_count();
        let mut facts: Vec<Option<BTreeSet<Fact>>> = vec![None; n];
        let mut work: Vec<NodeIndex> = Vec::new();
        for v in self.graph.node_indices() {
            let entry = self.graph[v].kind == LocKind::FuncEntry
                || self
                    .graph
                    .edges_directed(v, Direction::Incoming)
                    .next()
                    .is_none();
            if entry {
                facts[v.index()] = Some(BTreeSet::new());
                work.push(v);
            }
        }
        while let Some(v) = work.pop() {
            let Some(here) = facts[v.index()].clone() else {
                continue;
            };
            for e in self.graph.edges(v) {
                let out = transfer(&here, &e.weight().op);
                let t = e.target().index();
                let merged = match &facts[t] {
                    None => out,
                    Some(old) => old.intersection(&out).copied().collect(),
                };
                if facts[t].as_ref() != Some(&merged) {
                    facts[t] = Some(merged);
                    work.push(e.target());
                }
            }
        }
        let mut rewrites = Vec::new();
        for e in self.graph.edge_indices() {
            let Op::Load { dst, ptr, field } = self.graph[e].op else {
                continue;
            };
            let Some((from, _)) = self.graph.edge_endpoints(e) else {
                continue;
            };
            let Some(here) = &facts[from.index()] else {
                continue;
            };
            if !self.field(field).ty.is_int() {
                continue;
            }
            let earlier = here.iter().find(|&&(t, p, f)| {
                p == ptr && f == field && t != dst && self.vars[t].ty == self.vars[dst].ty
            });
            if let Some(&(t, _, _)) = earlier {
                rewrites.push((e, dst, t));
            }
        }
        for &(e, dst, t) in &rewrites {
            self.graph[e].op = Op::Assign {
                dst,
                src: Expr::Var(t),
            };
        }
        rewrites.len()
    }
}

/// The facts after `op` from `facts` before it.
fn transfer(facts: &BTreeSet<Fact>, op: &Op) -> BTreeSet<Fact> {
    let kill_var = |x: VarId| -> BTreeSet<Fact> {
        facts
            .iter()
            .filter(|&&(t, p, _)| t != x && p != x)
            .copied()
            .collect()
    };
    match op {
        Op::Skip
        | Op::Assume { .. }
        | Op::AssumeInvalid { .. }
        | Op::AssumeLeak { .. }
        | Op::Error
        | Op::Halt => facts.clone(),
        Op::Assign { dst, .. }
        | Op::Nondet { dst }
        | Op::FieldAddr { dst, .. }
        | Op::LoadIndirect { dst, .. }
        | Op::Alloc { dst, .. } => kill_var(*dst),
        Op::Load { dst, ptr, field } => {
            let mut out = kill_var(*dst);
            if dst != ptr {
                out.insert((*dst, *ptr, *field));
            }
            out
        }
        Op::Store { .. } | Op::StoreIndirect { .. } | Op::Free { .. } | Op::Call { .. } => {
            BTreeSet::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cfa::Op;
    use crate::testutil::parse_c;

    /// The loads of integer fields left in the program of `src` (parsed as `verify`
    /// does, so rewritten).
    fn int_loads(src: &str) -> usize {
        let p = parse_c(src);
        p.graph
            .edge_weights()
            .filter(|e| matches!(e.op, Op::Load { field, .. } if p.field(field).ty.is_int()))
            .count()
    }

    #[test]
    fn a_field_read_twice_in_one_condition_is_read_once() {
        let n = int_loads(
            "struct node { int data; struct node *next; };
             extern void reach_error(void);
             void check(struct node *p) { if (p->data != 0 && p->data != 1) reach_error(); }
             int main(void) { struct node n; n.data = 0; check(&n); return 0; }",
        );
        assert_eq!(n, 1);
    }

    #[test]
    fn a_store_or_a_changed_pointer_in_between_keeps_the_second_read() {
        let n = int_loads(
            "struct node { int data; struct node *next; };
             extern void reach_error(void);
             extern void *malloc(unsigned long);
             void f(struct node *p, struct node *q) {
               int a = p->data; q->data = 5; int b = p->data;
               if (a != b) reach_error();
               int c = p->data; p = p->next; int d = p->data;
               if (c != d) reach_error();
             }
             int main(void) {
               struct node *p = malloc(sizeof(struct node));
               f(p, p);
               return 0;
             }",
        );
        // `b` follows a store, `d` a change of `p`; `c` repeats `b`
        assert_eq!(n, 3);
    }

    #[test]
    fn a_read_on_one_branch_only_is_not_available_after_the_join() {
        let n = int_loads(
            "struct node { int data; };
             extern int __VERIFIER_nondet_int(void);
             extern void reach_error(void);
             extern void *malloc(unsigned long);
             void f(struct node *p) {
               int a = 0;
               if (__VERIFIER_nondet_int()) a = p->data;
               int b = p->data;
               if (a > b) reach_error();
             }
             int main(void) { f(malloc(sizeof(struct node))); return 0; }",
        );
        assert_eq!(n, 2);
    }
}
