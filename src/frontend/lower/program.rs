//! Whole-program lowering: registering functions and globals, the start function that
//! initialises the globals and calls `main`, the branches of indirect calls, and the
//! assembly of the functions' local graphs into the program graph.

use super::expr::zero;
use super::{loc, unsup, Ctx, FnLower, GlobalInit, LocalGraph, R};
use crate::cfa::{AllocKind, BinOp, Expr, FuncId, Function, LocKind, Op, Scope, SrcLoc, Ty, VarId};
use crate::frontend::clang::Cursor;
use crate::frontend::types::CTy;
use clang_sys::*;
use petgraph::graph::NodeIndex;
use std::collections::VecDeque;

impl<'t> Ctx<'t> {
    /// Lowers the bodies of the queued functions (and of those they make reachable).
    pub(super) fn lower_queued(&mut self) -> R<()> {
        while let Some(f) = self.worklist.pop_front() {
            let g = FnLower::lower_function(self, f)?;
            self.bodies[f] = Some(g);
        }
        Ok(())
    }

    /// The value of the address of function `f` (a function pointer): `1 + f`.
    pub(super) fn fn_id_value(f: FuncId) -> Expr {
        Expr::Int(1 + f as i64)
    }

    /// Branches every indirect call over the functions whose address the program
    /// takes and whose type is the pointer's: `assume(ptr == id_f)` then a call of `f`,
    /// one after the other, and when the pointer is none of them (NULL, garbage, a
    /// function of another type) an edge to a [`LocKind::InvalidCall`] target.
    pub(super) fn resolve_indirect_calls(&mut self) {
        let calls = std::mem::take(&mut self.indirect_calls);
        let targets: Vec<FuncId> = self.fn_targets.iter().copied().collect();
        for ic in calls {
            let candidates: Vec<FuncId> = targets
                .iter()
                .copied()
                .filter(|&f| self.func_defs[f].ty().canonical().equals(&ic.fn_ty))
                .collect();
            let Some(g) = self.bodies[ic.func].as_mut() else {
                continue;
            };
            let node = |g: &mut LocalGraph, kind: LocKind| {
                g.nodes.push((ic.src, kind));
                g.nodes.len() - 1
            };
            let mut cur = ic.from;
            for f in candidates {
                let id = Ctx::fn_id_value(f);
                let (call, next) = (node(g, LocKind::Normal), node(g, LocKind::Normal));
                let is = Expr::bin(BinOp::Eq, Expr::Var(ic.ptr), id);
                let isnt = is.negate();
                g.edges.push((cur, call, Op::Assume { cond: is }, ic.src));
                g.edges.push((cur, next, Op::Assume { cond: isnt }, ic.src));
                let op = Op::Call {
                    callee: f,
                    args: ic.args.clone(),
                    ret: ic.ret,
                };
                g.edges.push((call, ic.to, op, ic.src));
                cur = next;
            }
            let target = node(g, LocKind::InvalidCall);
            // without candidates, an edge that names the pointer (messages name it)
            let op = if cur == ic.from {
                let p = Expr::Var(ic.ptr);
                Op::Assume {
                    cond: Expr::bin(BinOp::Eq, p.clone(), p),
                }
            } else {
                Op::Skip
            };
            g.edges.push((cur, target, op, ic.src));
        }
    }

    /// The FuncId of a function definition, registering it (and queueing its body).
    pub(super) fn func_id(&mut self, def: Cursor<'t>) -> R<FuncId> {
        let key = def.canonical();
        if let Some(&f) = self.funcs.get(&key) {
            return Ok(f);
        }
        if def.is_variadic() {
            return unsup(def, "variadic function definition");
        }
        let ret_ty = match self.conv(def.result_type(), def)? {
            CTy::Scalar(t) => t,
            CTy::Void => Ty::Void,
            CTy::Struct(_) => return unsup(def, "struct return value"),
        };
        let id = self.prog.functions.len();
        self.prog.functions.push(Function {
            name: def.spelling(),
            params: Vec::new(),
            locals: Vec::new(),
            ret: None,
            ret_ty,
            entry: NodeIndex::new(0),
            exit: NodeIndex::new(0),
            src: loc(def),
        });
        self.funcs.insert(key, id);
        self.func_defs.push(def);
        self.bodies.push(None);
        self.worklist.push_back(id);
        Ok(id)
    }

    /// Adds a variable; its name is made unique (`name#n`) if it is already taken.
    pub(super) fn new_var(&mut self, name: String, ty: Ty, scope: Scope, src: SrcLoc) -> VarId {
        let mut unique = name.clone();
        let mut n = 1;
        while self.var_names.contains(&unique) {
            unique = format!("{name}#{n}");
            n += 1;
        }
        self.var_names.insert(unique.clone());
        let v = self.prog.add_var(unique, ty, scope);
        self.prog.vars[v].src = src;
        v
    }

    /// Registers a global variable (file scope or static local) given any declaration.
    pub(super) fn global_var(&mut self, d: Cursor<'t>) -> R<VarId> {
        let key = d.canonical();
        if let Some(&v) = self.globals.get(&key) {
            return Ok(v);
        }
        let (def, name) = self.global_def(d)?;
        let mut cell = None;
        let (ty, strukt) = match self.conv(d.ty(), d)? {
            CTy::Scalar(t) if self.addr_taken.contains(&key) => {
                cell = Some(t.clone());
                (Ty::Ptr(Box::new(t)), None)
            }
            CTy::Scalar(t) => (t, None),
            CTy::Struct(s) => (Ty::Ptr(Box::new(Ty::Struct(s))), Some(s)),
            CTy::Void => return unsup(d, "void variable"),
        };
        let v = self.new_var(name, ty, Scope::Global, loc(def));
        if let Some(s) = strukt {
            self.obj_vars.insert(v, s);
            self.note_head(v, s, def.ty());
        }
        if let Some(t) = cell {
            self.cell_vars.insert(v, t);
        }
        self.globals.insert(key, v);
        self.global_inits.push(GlobalInit {
            var: v,
            decl: def,
            strukt,
            init: def.var_init(),
            ty: def.ty(),
        });
        Ok(v)
    }

    /// The defining declaration of the global (or static) variable `d` and the name of
    /// its variable (`f::x` for a static local of `f`); refused: a file-scope variable
    /// that could not be registered, `extern T x;` without a definition here.
    pub(super) fn global_def(&self, d: Cursor<'t>) -> R<(Cursor<'t>, String)> {
        if let Some(e) = self.deferred_globals.get(&d.canonical()) {
            return Err(e.clone());
        }
        let def = d.definition().unwrap_or(d);
        if def.storage_class() == CX_SC_Extern && !def.is_definition() {
            return unsup(d, "external variable without definition");
        }
        let name = match d.semantic_parent() {
            Some(p) if p.kind() == CXCursor_FunctionDecl => {
                format!("{}::{}", p.spelling(), d.spelling())
            }
            _ => d.spelling(),
        };
        Ok((def, name))
    }

    /// Builds `__shapemc_start`: allocate struct globals, initialise all globals, call main.
    pub(super) fn start_function(&mut self, main: FuncId) -> R<FuncId> {
        let id = self.prog.functions.len();
        self.prog.functions.push(Function {
            name: "__shapemc_start".into(),
            params: Vec::new(),
            locals: Vec::new(),
            ret: None,
            ret_ty: Ty::Void,
            entry: NodeIndex::new(0),
            exit: NodeIndex::new(0),
            src: SrcLoc::default(),
        });
        self.bodies.push(None);
        let main_def = self.func_defs[main];
        self.func_defs.push(main_def);
        let inits = std::mem::take(&mut self.global_inits);
        let mut fl = FnLower::new(self, id);
        for g in &inits {
            let src = fl.cx.prog.vars[g.var].src;
            if let Some(s) = g.strukt {
                let bytes = fl.cx.prog.structs[s].size;
                fl.emit(
                    Op::Alloc {
                        dst: g.var,
                        pointee: Ty::Struct(s),
                        bytes: Some(bytes),
                        kind: AllocKind::Stack,
                    },
                    src,
                );
                fl.embed_links(g.var, s, AllocKind::Stack, g.decl, src)?;
            }
            if let Some(t) = fl.cx.cell_vars.get(&g.var).cloned() {
                fl.alloc_cell(g.var, t, src);
            }
        }
        for g in &inits {
            let src = fl.cx.prog.vars[g.var].src;
            let init = g.init;
            if let Some(t) = fl.cx.cell_vars.get(&g.var).cloned() {
                let e = match init {
                    Some(i) => fl.rv_as(i, &t)?,
                    None => zero(&t),
                };
                fl.emit(Op::StoreIndirect { ptr: g.var, src: e }, src);
                continue;
            }
            let prefix = fl.cx.obj_prefix(g.ty);
            match (g.strukt, init) {
                (Some(s), Some(i)) => fl.init_struct(g.var, s, &prefix, Some(i), true)?,
                (Some(s), None) => fl.init_struct(g.var, s, &prefix, None, true)?,
                (None, Some(i)) => fl.rhs_into(i, g.var)?,
                (None, None) => {
                    let z = zero(&fl.cx.prog.vars[g.var].ty);
                    fl.emit(Op::Assign { dst: g.var, src: z }, src);
                }
            }
        }
        // call main with nondeterministic arguments
        let mut args = Vec::new();
        for i in 0..main_def.num_args().max(0) as u32 {
            let Some(p) = main_def.arg(i) else { continue };
            let ty = fl.cx.scalar(p.ty(), p)?;
            let t = fl.tmp(ty);
            fl.emit(Op::Nondet { dst: t }, loc(main_def));
            args.push(Expr::Var(t));
        }
        fl.emit(
            Op::Call {
                callee: main,
                args,
                ret: None,
            },
            loc(main_def),
        );
        let exit = fl.g.exit;
        fl.jump(exit, SrcLoc::default());
        let g = fl.finish();
        self.bodies[id] = Some(g);
        Ok(id)
    }

    /// Copies every function's local graph into the program graph (BFS order from
    /// the entry; unreachable nodes are dropped, the exit node is always kept).
    pub(super) fn assemble(&mut self) {
        let bodies = std::mem::take(&mut self.bodies);
        for (fid, body) in bodies.into_iter().enumerate() {
            let Some(g) = body else { continue };
            let g = contract(g);
            // adjacency in edge order
            let mut out: Vec<Vec<usize>> = vec![Vec::new(); g.nodes.len()];
            for (i, e) in g.edges.iter().enumerate() {
                out[e.0].push(i);
            }
            let mut order = Vec::new();
            let mut seen = vec![false; g.nodes.len()];
            let mut q = VecDeque::from([g.entry]);
            seen[g.entry] = true;
            while let Some(n) = q.pop_front() {
                order.push(n);
                for &e in &out[n] {
                    let t = g.edges[e].1;
                    if !seen[t] {
                        seen[t] = true;
                        q.push_back(t);
                    }
                }
            }
            if !seen[g.exit] {
                seen[g.exit] = true;
                order.push(g.exit);
            }
            let mut map = vec![None; g.nodes.len()];
            for &n in &order {
                let (src, kind) = g.nodes[n];
                map[n] = Some(self.prog.add_loc(fid, src, kind));
            }
            for &n in &order {
                for &e in &out[n] {
                    let (a, b, ref op, src) = g.edges[e];
                    if let (Some(a), Some(b)) = (map[a], map[b]) {
                        self.prog.add_edge(a, b, op.clone(), src);
                    }
                }
            }
            if let (Some(en), Some(ex)) = (map[g.entry], map[g.exit]) {
                self.prog.functions[fid].entry = en;
                self.prog.functions[fid].exit = ex;
            }
        }
    }
}

/// Removes `Skip` edges: a normal node whose only outgoing edge is a `Skip` to another
/// node is merged into its successor.
fn contract(g: LocalGraph) -> LocalGraph {
    let n = g.nodes.len();
    let mut out_count = vec![0usize; n];
    let mut skip_to: Vec<Option<usize>> = vec![None; n];
    for e in &g.edges {
        out_count[e.0] += 1;
        if e.2 == Op::Skip && e.0 != e.1 {
            skip_to[e.0] = Some(e.1);
        }
    }
    let contractible = |i: usize| {
        out_count[i] == 1 && skip_to[i].is_some() && g.nodes[i].1 == LocKind::Normal && i != g.entry
    };
    // an all-skip cycle keeps one of its nodes (the loop must not disappear)
    let mut kept = vec![false; n];
    let mut stamp = vec![usize::MAX; n];
    for i in 0..n {
        let mut cur = i;
        while contractible(cur) && !kept[cur] {
            if stamp[cur] == i {
                kept[cur] = true;
                break;
            }
            stamp[cur] = i;
            match skip_to[cur] {
                Some(t) => cur = t,
                None => break,
            }
        }
    }
    let mut repr: Vec<usize> = (0..n).collect();
    for (i, r) in repr.iter_mut().enumerate() {
        let mut cur = i;
        while contractible(cur) && !kept[cur] {
            match skip_to[cur] {
                Some(t) => cur = t,
                None => break,
            }
        }
        *r = cur;
    }
    let mut edges = Vec::new();
    for (a, b, op, src) in g.edges {
        if repr[a] != a {
            continue; // contracted node: its only edge is the skip
        }
        edges.push((a, repr[b], op, src));
    }
    LocalGraph {
        nodes: g.nodes,
        edges,
        entry: g.entry,
        exit: repr[g.exit],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(nodes: usize, edges: &[(usize, usize, Op)]) -> LocalGraph {
        let mut g = LocalGraph {
            nodes: vec![(SrcLoc::default(), LocKind::Normal); nodes],
            edges: edges
                .iter()
                .map(|(a, b, op)| (*a, *b, op.clone(), SrcLoc::default()))
                .collect(),
            entry: 0,
            exit: 1,
        };
        g.nodes[0].1 = LocKind::FuncEntry;
        g.nodes[1].1 = LocKind::FuncExit;
        g
    }

    #[test]
    fn contract_removes_skip_chains() {
        let halt = Op::Halt;
        // 0 -halt-> 2 -skip-> 3 -skip-> 1
        let g = contract(graph(
            4,
            &[(0, 2, halt.clone()), (2, 3, Op::Skip), (3, 1, Op::Skip)],
        ));
        assert_eq!(g.edges.len(), 1);
        assert_eq!((g.edges[0].0, g.edges[0].1), (0, 1));
    }

    #[test]
    fn contract_keeps_skip_cycles() {
        // 0 -halt-> 2 -skip-> 3 -skip-> 2 (an empty infinite loop must stay a loop)
        let g = contract(graph(
            4,
            &[(0, 2, Op::Halt), (2, 3, Op::Skip), (3, 2, Op::Skip)],
        ));
        let from0: Vec<_> = g.edges.iter().filter(|e| e.0 == 0).collect();
        assert_eq!(from0.len(), 1);
        let t = from0[0].1;
        // the target has a successor path that returns to itself
        let succ: Vec<_> = g.edges.iter().filter(|e| e.0 == t).collect();
        assert_eq!(succ.len(), 1);
        assert_eq!(succ[0].1, t);
    }
}
