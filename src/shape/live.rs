//! Live variables per location (intraprocedural, backward): the shape domain sets dead
//! local pointer variables to NULL so that they stop distinguishing heap nodes. This
//! is sound for reachability: a dead variable is written before it is read again.

use crate::cfa::{Expr, Node, Op, Program, Scope, VarId};
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
