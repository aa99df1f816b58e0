//! Live variables per location (intraprocedural, backward): the shape domains set dead
//! local pointer variables to NULL so that they stop distinguishing heap nodes. This
//! is sound for reachability: a dead variable is written before it is read again.

use crate::cfa::{AllocKind, Expr, Node, Op, Program, Scope, StructId, Ty, VarId};
use std::collections::{BTreeSet, HashMap, VecDeque};

fn expr_vars(e: &Expr, out: &mut BTreeSet<VarId>) {
    let mut v = Vec::new();
    e.vars(&mut v);
    out.extend(v);
}

/// (uses, defs) of an operation.
fn use_def(op: &Op) -> (BTreeSet<VarId>, BTreeSet<VarId>) {
    let mut u = BTreeSet::new();
    let mut d = BTreeSet::new();
    match op {
        Op::Skip | Op::Error | Op::Halt | Op::AssumeLeak { .. } => {}
        Op::Assign { dst, src } => {
            expr_vars(src, &mut u);
            d.insert(*dst);
        }
        Op::Nondet { dst } => {
            d.insert(*dst);
        }
        Op::Load { dst, ptr, .. }
        | Op::FieldAddr { dst, ptr, .. }
        | Op::LoadIndirect { dst, ptr } => {
            u.insert(*ptr);
            d.insert(*dst);
        }
        Op::Store { ptr, src, .. } | Op::StoreIndirect { ptr, src } => {
            u.insert(*ptr);
            expr_vars(src, &mut u);
        }
        Op::Alloc { dst, .. } => {
            d.insert(*dst);
        }
        Op::Free { ptr } | Op::AssumeInvalid { ptr, .. } => {
            u.insert(*ptr);
        }
        Op::Assume { cond } => expr_vars(cond, &mut u),
        Op::Call { args, ret, .. } => {
            for a in args {
                expr_vars(a, &mut u);
            }
            if let Some(r) = ret {
                d.insert(*r);
            }
        }
    }
    (u, d)
}

/// The variables that only ever hold the address of a stack or static struct object:
/// every definition of the variable is an `Alloc` of [`AllocKind::Stack`] with a struct
/// pointee (a struct local or global whose address the front end takes, `x =
/// stack_alloc(struct s)`), and it is no parameter. A node such a variable points to
/// (definitely) is no heap object, so the leak checks do not count it.
pub fn stack_address_vars(prog: &Program) -> BTreeSet<VarId> {
    let mut stack = BTreeSet::new();
    let mut other = BTreeSet::new();
    for e in prog.graph.edge_weights() {
        match &e.op {
            Op::Alloc {
                dst,
                pointee: Ty::Struct(_),
                kind: AllocKind::Stack,
                ..
            } => {
                stack.insert(*dst);
            }
            op => other.extend(use_def(op).1),
        }
    }
    stack
        .into_iter()
        .filter(|v| {
            !other.contains(v)
                && !matches!(
                    prog.vars.get(*v).map(|x| x.scope),
                    Some(Scope::Param(_)) | None
                )
        })
        .collect()
}

/// The struct types all of whose stack objects stay definitely identified by their
/// variables in a program run: every `stack_alloc` of the type writes one of `vars`
/// ([`stack_address_vars`]) and runs at most once (it lies on no cycle of its
/// function, and that function is the start function or is called from one call
/// site, in the start function and on no cycle). While such a variable is not
/// overwritten (never: it has no other definition) and not set to NULL (never, in a
/// program with leak checks, [`super::ShapeCpa::stack_vars`]), every stack object of
/// the type is the node of one of them.
pub fn stack_exact_structs(prog: &Program, vars: &BTreeSet<VarId>) -> BTreeSet<StructId> {
    use petgraph::algo::has_path_connecting;
    let start = prog.graph.node_weight(prog.entry).map(|l| l.func);
    let on_cycle = |e| {
        prog.graph
            .edge_endpoints(e)
            .is_none_or(|(a, b)| has_path_connecting(&prog.graph, b, a, None))
    };
    let once = |f: crate::cfa::FuncId| {
        if Some(f) == start {
            return true;
        }
        let calls: Vec<_> = prog
            .graph
            .edge_indices()
            .filter(|&e| matches!(prog.graph[e].op, Op::Call { callee, .. } if callee == f))
            .collect();
        calls.len() == 1
            && calls.iter().all(|&e| {
                !on_cycle(e)
                    && prog
                        .graph
                        .edge_endpoints(e)
                        .is_some_and(|(a, _)| Some(prog.graph[a].func) == start)
            })
    };
    let mut ok = BTreeSet::new();
    let mut bad = BTreeSet::new();
    for e in prog.graph.edge_indices() {
        if let Op::Alloc {
            dst,
            pointee: Ty::Struct(k),
            kind: AllocKind::Stack,
            ..
        } = &prog.graph[e].op
        {
            let func = prog
                .graph
                .edge_endpoints(e)
                .map(|(a, _)| prog.graph[a].func);
            if vars.contains(dst) && !on_cycle(e) && func.is_some_and(once) {
                ok.insert(*k);
            } else {
                bad.insert(*k);
            }
        }
    }
    ok.difference(&bad).copied().collect()
}

/// Live non-global variables at every location (a variable of another function is
/// never reported: only the function's own locals, parameters and temporaries).
pub fn live_vars(prog: &Program) -> HashMap<Node, BTreeSet<VarId>> {
    let local = |v: VarId| {
        !matches!(
            prog.vars.get(v).map(|x| x.scope),
            Some(Scope::Global) | None
        )
    };
    let mut live: HashMap<Node, BTreeSet<VarId>> = HashMap::new();
    for f in &prog.functions {
        if let Some(r) = f.ret {
            live.entry(f.exit).or_default().insert(r);
        }
    }
    let mut work: VecDeque<Node> = prog.graph.node_indices().collect();
    let mut queued: BTreeSet<Node> = work.iter().copied().collect();
    while let Some(n) = work.pop_front() {
        queued.remove(&n);
        let mut l: BTreeSet<VarId> = live.get(&n).cloned().unwrap_or_default();
        let before = l.len();
        for (_, m, e) in prog.successors(n) {
            let (u, d) = use_def(&e.op);
            l.extend(u.into_iter().filter(|v| local(*v)));
            if let Some(lm) = live.get(&m) {
                l.extend(lm.iter().filter(|v| !d.contains(v)).copied());
            }
        }
        if l.len() != before || !live.contains_key(&n) {
            live.insert(n, l);
            for p in prog
                .graph
                .neighbors_directed(n, petgraph::Direction::Incoming)
            {
                if queued.insert(p) {
                    work.push_back(p);
                }
            }
        }
    }
    live
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::parse_c;

    /// Issue #32: the variables of struct locals whose address is taken hold only stack
    /// addresses; a pointer that may also hold a heap address is none of them.
    #[test]
    fn stack_address_vars_are_the_stack_struct_objects() {
        let p = parse_c("#include <stdlib.h>\nstruct n { struct n *next; };\nint main(void) { struct n s; s.next = 0; struct n *q = &s; q = malloc(sizeof(struct n)); s.next = q; free(q); return 0; }");
        let names: Vec<&str> = stack_address_vars(&p)
            .into_iter()
            .filter_map(|v| p.vars.get(v).map(|x| x.name.as_str()))
            .collect();
        assert_eq!(names, vec!["main::s"]);
    }

    /// Issue #32: the stack objects of a struct type stay the nodes of their variables
    /// only when each `stack_alloc` of it runs once.
    #[test]
    fn stack_exact_types_allocate_each_stack_object_once() {
        let once = parse_c("struct n { struct n *next; };\nint main(void) { struct n s; s.next = 0; struct n *q = &s; q->next = 0; return 0; }");
        let vars = stack_address_vars(&once);
        assert_eq!(stack_exact_structs(&once, &vars).len(), 1);
        assert!(stack_exact_structs(&once, &BTreeSet::new()).is_empty());
        let looped = parse_c("extern int __VERIFIER_nondet_int(void);\nstruct n { struct n *next; };\nint main(void) { while (__VERIFIER_nondet_int()) { struct n s; s.next = 0; struct n *q = &s; q->next = 0; } return 0; }");
        let vars = stack_address_vars(&looped);
        assert_eq!(vars.len(), 1);
        assert!(stack_exact_structs(&looped, &vars).is_empty());
        let twice = parse_c("struct n { struct n *next; };\nvoid f(void) { struct n s; s.next = 0; struct n *q = &s; q->next = 0; }\nint main(void) { f(); f(); return 0; }");
        let vars = stack_address_vars(&twice);
        assert_eq!(vars.len(), 1);
        assert!(stack_exact_structs(&twice, &vars).is_empty());
    }
}
