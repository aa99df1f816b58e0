//! Bounded recursion by cloning ([`unroll`]).
//!
//! The analyses keep one copy of each function's variables, so a function may not be
//! active twice on a call stack (the ART refuses such a call). Many programs recurse
//! only through a function pointer whose value ends the recursion after a level or
//! two (SV-COMP's `dll_of_dll`: a generic list constructor that takes the element
//! constructor, which builds the inner lists with the same generic constructor), or
//! recurse on data and fail after a few levels. [`unroll`] makes such programs
//! analysable: every function on a call-graph cycle gets `depth - 1` clones with
//! their own variables (`f@2`, `f@3`, …) on *levels* 2, 3, …: in a strongly
//! connected component of the call graph, a call to a function later in the
//! depth-first preorder from the entry stays on the caller's level, a call to an
//! earlier one (or to itself) goes to the next level, so a level holds at most one
//! activation of each function; a call past the last level goes to a
//! [`LocKind::RecursionBound`] target instead.
//!
//! Soundness: up to the bound the clones execute exactly the original program (the
//! same edges on renamed, disjoint variables, which is what a fresh activation record
//! is). Every run that calls deeper reaches the target, which `verify` treats like an
//! undefined-behaviour target: proved unreachable, or the run ends UNKNOWN ("recursion
//! deeper than …") unless an error is found first. So SAFE still covers every run,
//! and an UNSAFE path is a path of the original program.

use super::{Expr, FuncId, Function, LocKind, Node, Op, Program, Scope, VarId};
use petgraph::graph::DiGraph;
use std::collections::HashMap;

/// How many activations of one recursive function a call stack may hold: the
/// original and `RECURSION_DEPTH - 1` clones.
pub const RECURSION_DEPTH: usize = 3;

/// The functions on call-graph cycles, as their strongly connected components (each
/// sorted; a component of one function only if it calls itself).
pub fn recursive_components(prog: &Program) -> Vec<Vec<FuncId>> {
    let mut cg: DiGraph<FuncId, ()> = DiGraph::new();
    let ids: Vec<_> = (0..prog.functions.len()).map(|f| cg.add_node(f)).collect();
    let mut self_loop = vec![false; prog.functions.len()];
    for e in prog.graph.edge_indices() {
        if let (Op::Call { callee, .. }, Some((from, _))) =
            (&prog.graph[e].op, prog.graph.edge_endpoints(e))
        {
            let (caller, callee) = (prog.graph[from].func, *callee);
            if caller == callee {
                self_loop[caller] = true;
            }
            cg.add_edge(ids[caller], ids[callee], ());
        }
    }
    let mut out: Vec<Vec<FuncId>> = petgraph::algo::tarjan_scc(&cg)
        .into_iter()
        .map(|c| {
            let mut c: Vec<FuncId> = c.into_iter().map(|n| cg[n]).collect();
            c.sort_unstable();
            c
        })
        .filter(|c| c.len() > 1 || self_loop[c[0]])
        .collect();
    out.sort();
    out
}

/// The functions [`unroll`] cloned, and their clones (a clone is named `f@d`; C
/// names have no `@`).
pub fn unrolled_functions(prog: &Program) -> std::collections::BTreeSet<FuncId> {
    let bases: std::collections::BTreeSet<&str> = prog
        .functions
        .iter()
        .filter_map(|f| f.name.split_once('@').map(|(b, _)| b))
        .collect();
    (0..prog.functions.len())
        .filter(|&f| {
            let n = &prog.functions[f].name;
            n.contains('@') || bases.contains(n.as_str())
        })
        .collect()
}

/// Clones the functions on call-graph cycles up to `depth` activations (module
/// docs). Returns the number of clones made (0: the program does not recurse, and
/// is unchanged). With `depth < 2` every recursive call goes to the bound target.
pub fn unroll(prog: &mut Program, depth: usize) -> usize {
    let comps = recursive_components(prog);
    if comps.is_empty() {
        return 0;
    }
    let depth = depth.max(1);
    // the order of the program as written decides which calls start a level
    let order = preorder(prog);
    // component of each recursive function
    let mut comp_of: HashMap<FuncId, usize> = HashMap::new();
    for (i, c) in comps.iter().enumerate() {
        for &f in c {
            comp_of.insert(f, i);
        }
    }
    // copies[f][d - 1]: the function at depth d (copies[f][0] == f)
    let mut copies: HashMap<FuncId, Vec<FuncId>> = comp_of.keys().map(|&f| (f, vec![f])).collect();
    let originals: Vec<FuncId> = {
        let mut v: Vec<FuncId> = comp_of.keys().copied().collect();
        v.sort_unstable();
        v
    };
    let mut made = 0;
    for d in 2..=depth {
        for &f in &originals {
            let c = clone_function(prog, f, d);
            copies.entry(f).or_default().push(c);
            made += 1;
        }
    }
    // redirect the calls inside each component to their level's copy, or the bound
    let call_edges: Vec<_> = prog
        .graph
        .edge_indices()
        .filter(|&e| matches!(prog.graph[e].op, Op::Call { .. }))
        .collect();
    let depth_of: HashMap<FuncId, (FuncId, usize)> = copies
        .iter()
        .flat_map(|(&f, cs)| cs.iter().enumerate().map(move |(i, &c)| (c, (f, i + 1))))
        .collect();
    for e in call_edges {
        let Some((from, _)) = prog.graph.edge_endpoints(e) else {
            continue;
        };
        let caller = prog.graph[from].func;
        let Some(&(orig_caller, d)) = depth_of.get(&caller) else {
            continue;
        };
        let Op::Call { callee, .. } = prog.graph[e].op else {
            continue;
        };
        if comp_of.get(&callee) != comp_of.get(&orig_caller) {
            continue;
        }
        // a call forward in the order stays on the level (no function twice on one
        // level), a call back to an earlier function (or itself) starts the next one
        let level = if order[&callee] > order[&orig_caller] {
            d
        } else {
            d + 1
        };
        if level <= depth {
            if let Op::Call { callee, .. } = &mut prog.graph[e].op {
                *callee = copies[&*callee][level - 1];
            }
        } else {
            // a further activation of some function: a dead edge, and the bound target
            let src = prog.graph[e].src;
            prog.graph[e].op = Op::Assume { cond: Expr::Int(0) };
            let target = prog.add_loc(caller, src, LocKind::RecursionBound);
            prog.add_edge(from, target, Op::Skip, src);
        }
    }
    made
}

/// The functions in depth-first preorder of the call graph from the program's entry
/// (callees in the order of their call edges), then the unreachable ones by id.
fn preorder(prog: &Program) -> HashMap<FuncId, usize> {
    let mut callees: Vec<Vec<FuncId>> = vec![Vec::new(); prog.functions.len()];
    let mut edges: Vec<_> = prog.graph.edge_indices().collect();
    edges.sort();
    for e in edges {
        if let (Op::Call { callee, .. }, Some((from, _))) =
            (&prog.graph[e].op, prog.graph.edge_endpoints(e))
        {
            callees[prog.graph[from].func].push(*callee);
        }
    }
    let mut order: HashMap<FuncId, usize> = HashMap::new();
    let start = prog.graph[prog.entry].func;
    let mut stack = vec![start];
    while let Some(f) = stack.pop() {
        if order.contains_key(&f) {
            continue;
        }
        order.insert(f, order.len());
        stack.extend(callees[f].iter().rev().copied());
    }
    for f in 0..prog.functions.len() {
        let n = order.len();
        order.entry(f).or_insert(n);
    }
    order
}

/// A copy of function `f` for activation depth `d`: its locations, edges (calls
/// unchanged) and variables, renamed `f@d::x`. Returns the new function's id.
fn clone_function(prog: &mut Program, f: FuncId, d: usize) -> FuncId {
    let new_id = prog.functions.len();
    let old: Function = prog.functions[f].clone();
    let name = format!("{}@{d}", old.name);
    let mut var_map: HashMap<VarId, VarId> = HashMap::new();
    let own =
        |s: &Scope| matches!(s, Scope::Param(g) | Scope::Local(g) | Scope::Temp(g) if *g == f);
    for x in 0..prog.vars.len() {
        if !own(&prog.vars[x].scope) {
            continue;
        }
        let mut v = prog.vars[x].clone();
        v.name = match v.name.strip_prefix(&format!("{}::", old.name)) {
            Some(rest) => format!("{name}::{rest}"),
            None => format!("{name}::{}", v.name),
        };
        v.scope = match v.scope {
            Scope::Param(_) => Scope::Param(new_id),
            Scope::Local(_) => Scope::Local(new_id),
            Scope::Temp(_) => Scope::Temp(new_id),
            Scope::Global => Scope::Global,
        };
        prog.vars.push(v);
        var_map.insert(x, prog.vars.len() - 1);
    }
    let mv = |x: VarId| var_map.get(&x).copied().unwrap_or(x);
    let mut loc_map: HashMap<Node, Node> = HashMap::new();
    let locs: Vec<Node> = prog
        .graph
        .node_indices()
        .filter(|&n| prog.graph[n].func == f)
        .collect();
    for &n in &locs {
        let l = prog.graph[n].clone();
        loc_map.insert(n, prog.add_loc(new_id, l.src, l.kind));
    }
    let edges: Vec<_> = prog
        .graph
        .edge_indices()
        .filter(|&e| {
            prog.graph
                .edge_endpoints(e)
                .is_some_and(|(a, _)| prog.graph[a].func == f)
        })
        .collect();
    for e in edges {
        let Some((a, b)) = prog.graph.edge_endpoints(e) else {
            continue;
        };
        let edge = prog.graph[e].clone();
        let to = loc_map.get(&b).copied().unwrap_or(b);
        prog.add_edge(loc_map[&a], to, map_op(&edge.op, &mv), edge.src);
    }
    prog.functions.push(Function {
        name,
        params: old.params.iter().map(|&x| mv(x)).collect(),
        locals: old.locals.iter().map(|&x| mv(x)).collect(),
        ret: old.ret.map(mv),
        ret_ty: old.ret_ty.clone(),
        entry: loc_map[&old.entry],
        exit: loc_map[&old.exit],
        src: old.src,
    });
    new_id
}

/// `e` with every variable renamed by `mv`.
fn map_expr(e: &Expr, mv: &impl Fn(VarId) -> VarId) -> Expr {
    match e {
        Expr::Int(_) | Expr::Null => e.clone(),
        Expr::Var(x) => Expr::Var(mv(*x)),
        Expr::Unary(op, a) => Expr::Unary(*op, Box::new(map_expr(a, mv))),
        Expr::Binary(op, a, b) => {
            Expr::Binary(*op, Box::new(map_expr(a, mv)), Box::new(map_expr(b, mv)))
        }
        Expr::Cast(t, a) => Expr::Cast(t.clone(), Box::new(map_expr(a, mv))),
    }
}

/// `op` with every variable renamed by `mv`.
fn map_op(op: &Op, mv: &impl Fn(VarId) -> VarId) -> Op {
    match op {
        Op::Skip | Op::Error | Op::Halt | Op::AssumeLeak { .. } => op.clone(),
        Op::Assign { dst, src } => Op::Assign {
            dst: mv(*dst),
            src: map_expr(src, mv),
        },
        Op::Nondet { dst } => Op::Nondet { dst: mv(*dst) },
        Op::Load { dst, ptr, field } => Op::Load {
            dst: mv(*dst),
            ptr: mv(*ptr),
            field: *field,
        },
        Op::Store { ptr, field, src } => Op::Store {
            ptr: mv(*ptr),
            field: *field,
            src: map_expr(src, mv),
        },
        Op::FieldAddr { dst, ptr, field } => Op::FieldAddr {
            dst: mv(*dst),
            ptr: mv(*ptr),
            field: *field,
        },
        Op::LoadIndirect { dst, ptr } => Op::LoadIndirect {
            dst: mv(*dst),
            ptr: mv(*ptr),
        },
        Op::StoreIndirect { ptr, src } => Op::StoreIndirect {
            ptr: mv(*ptr),
            src: map_expr(src, mv),
        },
        Op::Alloc {
            dst,
            pointee,
            bytes,
            kind,
        } => Op::Alloc {
            dst: mv(*dst),
            pointee: pointee.clone(),
            bytes: *bytes,
            kind: *kind,
        },
        Op::Free { ptr } => Op::Free { ptr: mv(*ptr) },
        Op::Assume { cond } => Op::Assume {
            cond: map_expr(cond, mv),
        },
        Op::AssumeInvalid { ptr, access } => Op::AssumeInvalid {
            ptr: mv(*ptr),
            access: *access,
        },
        Op::Call { callee, args, ret } => Op::Call {
            callee: *callee,
            args: args.iter().map(|a| map_expr(a, mv)).collect(),
            ret: ret.map(mv),
        },
    }
}
