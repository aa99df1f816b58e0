//! Address-taken pointer locals back to variables ([`Program::unbox_pointer_cells`]).
//!
//! `SLL s = create(); insert(&s, 1);` with `void insert(SLL *head, int d)` reading and
//! writing `*head` is the usual way C code lets a callee change a list's root. The
//! front end lowers `s` to a stack cell (`main::s = stack_alloc(struct node*)`,
//! `*main::s = ...`), so the root of the list lives in memory, not in a variable: the
//! shape domain, whose roots are pointer variables, then cannot see that the list is
//! still reachable from it (issue #32's "lists that hang off a stack cell"), and every
//! `*head` is an indirect access.
//!
//! The rewriting turns such a cell back into a variable when nothing but the cell's own
//! function and the callees it is passed to can reach it:
//!
//! | cell `v` (a local, `v = stack_alloc(T*)`) | becomes |
//! |---|---|
//! | `v = stack_alloc(T*)` | `v = nondet()` (`v` now has type `T*`: it holds the cell's content) |
//! | `x = *v` / `*v = e` | `x = v` / `v = e` |
//!
//! | parameter `p` of `f` (type `T**`, every caller passes a cell) | becomes |
//! |---|---|
//! | `x = *p` / `*p = e` | `x = f::*p` / `f::*p = e` (a global, `NULL` outside the calls of `f`) |
//! | the call `f(.., w, ..)` (`w` a cell or such a parameter) | `f::*p = c; c = NULL; f(.., NULL, ..); c = f::*p; f::*p = NULL` where `c` holds `w`'s content |
//!
//! The rewritten program has exactly the runs of the original (the same values,
//! allocations, frees and memory errors), with the content of each cell held by one
//! variable at a time: by the cell's variable while its function runs, by the callee's
//! copy during a call. That is exact because the cell can be reached only through the
//! variables rewritten: a candidate is used only by `*v` and `*p` accesses (always
//! valid: the cell lives in a frame that is active) and as an argument bound to another
//! candidate (directly, or through a front-end temporary that only carries the address
//! to the call, `arg_aliases`); no call passes one cell twice, so the cells of the
//! candidates of one frame are distinct; functions on a call cycle keep their cells.
//! Moving the content rather than copying it keeps reachability exact for the leak
//! checks: while `f` runs only `f::*p` holds it, and afterwards nothing does.

use super::rewrite::{assign, Chain};
use super::{AllocKind, Edge, Expr, FuncId, LocKind, Node, Op, Program, Scope, SrcLoc, Ty, VarId};
use petgraph::visit::EdgeRef;
use std::collections::{BTreeMap, BTreeSet};

impl Program {
    /// Rewrites the address-taken pointer locals that only their function and the
    /// callees they are passed to dereference into plain variables, with the
    /// parameters those callees receive them through (see the [module docs](self)).
    /// The runs are exactly those of the program before. Returns the number of cells
    /// and parameters rewritten.
    pub fn unbox_pointer_cells(&mut self) -> usize {
        let aliases = arg_aliases(self);
        let cands = candidates(self, &aliases);
        if cands.is_empty() {
            return 0;
        }
        rewrite(self, &cands, &aliases);
        cands.len()
    }
}

/// `T` for a variable of type `T**` with `T` a pointer type.
fn cell_content(ty: &Ty) -> Option<&Ty> {
    match ty {
        Ty::Ptr(inner) if inner.is_ptr() => Some(inner),
        _ => None,
    }
}

/// The functions that can call themselves (directly or through others).
fn recursive_functions(prog: &Program) -> BTreeSet<FuncId> {
    let mut calls: BTreeMap<FuncId, BTreeSet<FuncId>> = BTreeMap::new();
    for e in prog.graph.edge_references() {
        if let Op::Call { callee, .. } = e.weight().op {
            calls
                .entry(prog.graph[e.source()].func)
                .or_default()
                .insert(callee);
        }
    }
    (0..prog.functions.len())
        .filter(|&f| {
            let mut seen = BTreeSet::new();
            let mut todo: Vec<FuncId> = calls.get(&f).into_iter().flatten().copied().collect();
            while let Some(g) = todo.pop() {
                if g == f {
                    return true;
                }
                if seen.insert(g) {
                    todo.extend(calls.get(&g).into_iter().flatten().copied());
                }
            }
            false
        })
        .collect()
}

/// The variables to rewrite: cells (locals defined only by a stack allocation of a
/// pointer) and parameters of type `T**`, used only as the module docs allow, closed
/// under the call bindings (a candidate is passed only to candidates, a candidate
/// parameter receives only candidates).
fn candidates(prog: &Program, aliases: &BTreeMap<VarId, VarId>) -> BTreeSet<VarId> {
    let start = prog.graph[prog.entry].func;
    let recursive = recursive_functions(prog);
    let mut cands: BTreeSet<VarId> = (0..prog.vars.len())
        .filter(|&x| {
            let v = &prog.vars[x];
            cell_content(&v.ty).is_some()
                && match v.scope {
                    Scope::Local(f) | Scope::Temp(f) => !recursive.contains(&f),
                    Scope::Param(f) => f != start && f != prog.main && !recursive.contains(&f),
                    Scope::Global => false,
                }
        })
        .collect();
    let mut allocs: BTreeMap<VarId, usize> = BTreeMap::new();
    for e in prog.graph.edge_weights() {
        if is_alias_def(&e.op, aliases) {
            continue;
        }
        for x in misused(&resolved(&e.op, aliases), &mut allocs) {
            cands.remove(&x);
        }
    }
    // a cell has exactly one definition, its stack allocation; a parameter none
    cands.retain(|&x| {
        let n = allocs.get(&x).copied().unwrap_or(0);
        match prog.vars[x].scope {
            Scope::Param(_) => n == 0,
            _ => n == 1,
        }
    });
    let calls: Vec<(FuncId, Vec<Expr>)> = prog
        .graph
        .edge_weights()
        .filter_map(|e| match resolved(&e.op, aliases) {
            Op::Call { callee, args, .. } => Some((callee, args)),
            _ => None,
        })
        .collect();
    loop {
        let before = cands.len();
        for (callee, args) in &calls {
            let (callee, args) = (*callee, args.as_slice());
            let params = prog.functions.get(callee).map_or(&[][..], |f| &f.params);
            for (i, a) in args.iter().enumerate() {
                if let Expr::Var(w) = a {
                    if cands.contains(w) && params.get(i).is_none_or(|p| !cands.contains(p)) {
                        cands.remove(w);
                    }
                }
            }
            for (i, p) in params.iter().enumerate() {
                let ok = matches!(args.get(i), Some(Expr::Var(w)) if cands.contains(w));
                if !ok {
                    cands.remove(p);
                }
            }
        }
        // a parameter nobody passes a cell to
        cands.retain(|&x| match prog.vars[x].scope {
            Scope::Param(f) => calls.iter().any(|(c, _)| *c == f),
            _ => true,
        });
        if cands.len() == before {
            return cands;
        }
    }
}

/// The front end's temporaries that only carry a cell's address to a call (`t = &s;`
/// then `f(t, g())`, when another argument is evaluated first): `t ↦ s` for each
/// temporary of a `T **` type defined once, by a copy of another variable, and used
/// only as whole call arguments.
fn arg_aliases(prog: &Program) -> BTreeMap<VarId, VarId> {
    let mut defs: BTreeMap<VarId, Vec<Option<VarId>>> = BTreeMap::new();
    let mut other_use: BTreeSet<VarId> = BTreeSet::new();
    for e in prog.graph.edge_weights() {
        match &e.op {
            Op::Assign {
                dst,
                src: Expr::Var(v),
            } if dst != v => defs.entry(*dst).or_default().push(Some(*v)),
            Op::Call { args, ret, .. } => {
                if let Some(r) = ret {
                    defs.entry(*r).or_default().push(None);
                }
                for a in args {
                    if !matches!(a, Expr::Var(_)) {
                        let mut vs = Vec::new();
                        a.vars(&mut vs);
                        other_use.extend(vs);
                    }
                }
            }
            op => {
                let mut sink = BTreeMap::new();
                for x in misused(op, &mut sink) {
                    other_use.insert(x);
                }
                other_use.extend(sink.keys().copied());
                if let Op::LoadIndirect { ptr, .. } | Op::StoreIndirect { ptr, .. } = op {
                    other_use.insert(*ptr);
                }
            }
        }
    }
    defs.into_iter()
        .filter_map(|(t, d)| match d.as_slice() {
            [Some(v)] => Some((t, *v)),
            _ => None,
        })
        .filter(|(t, _)| {
            matches!(prog.vars[*t].scope, Scope::Temp(_))
                && cell_content(&prog.vars[*t].ty).is_some()
                && !other_use.contains(t)
        })
        .collect()
}

/// `t = v` for an alias `t ↦ v` of [`arg_aliases`].
fn is_alias_def(op: &Op, aliases: &BTreeMap<VarId, VarId>) -> bool {
    matches!(op, Op::Assign { dst, src: Expr::Var(v) } if aliases.get(dst) == Some(v))
}

/// `op` with each call argument that is an alias replaced by the variable it copies.
fn resolved(op: &Op, aliases: &BTreeMap<VarId, VarId>) -> Op {
    match op {
        Op::Call { callee, args, ret } => Op::Call {
            callee: *callee,
            args: args
                .iter()
                .map(|a| match a {
                    Expr::Var(t) => Expr::Var(aliases.get(t).copied().unwrap_or(*t)),
                    _ => a.clone(),
                })
                .collect(),
            ret: *ret,
        },
        op => op.clone(),
    }
}

/// The variables `op` uses in a way the rewriting does not allow (see the module
/// docs); counts the stack allocations of pointers in `allocs`.
fn misused(op: &Op, allocs: &mut BTreeMap<VarId, usize>) -> Vec<VarId> {
    let mut bad = Vec::new();
    let mention = |e: &Expr, bad: &mut Vec<VarId>| e.vars(bad);
    match op {
        Op::Skip | Op::Error | Op::Halt | Op::AssumeLeak { .. } => {}
        Op::Assign { dst, src } => {
            bad.push(*dst);
            mention(src, &mut bad);
        }
        Op::Nondet { dst } => bad.push(*dst),
        Op::Load { dst, ptr, .. } | Op::FieldAddr { dst, ptr, .. } => bad.extend([*dst, *ptr]),
        Op::Store { ptr, src, .. } => {
            bad.push(*ptr);
            mention(src, &mut bad);
        }
        Op::LoadIndirect { dst, .. } => bad.push(*dst),
        Op::StoreIndirect { src, .. } => mention(src, &mut bad),
        Op::Alloc {
            dst, kind, pointee, ..
        } => {
            if *kind == AllocKind::Stack && pointee.is_ptr() {
                *allocs.entry(*dst).or_default() += 1;
            } else {
                bad.push(*dst);
            }
        }
        Op::Free { ptr } | Op::AssumeInvalid { ptr, .. } => bad.push(*ptr),
        Op::Assume { cond } => mention(cond, &mut bad),
        Op::Call { args, ret, .. } => {
            bad.extend(ret.iter().copied());
            let mut seen = BTreeSet::new();
            for a in args {
                match a {
                    // passed twice in one call: two parameters alias
                    Expr::Var(w) if seen.insert(*w) => {}
                    _ => mention(a, &mut bad),
                }
            }
        }
    }
    bad
}

/// The content variable of every candidate: the cell itself (retyped) for a local,
/// a new global `f::*p` for a parameter.
fn content_vars(prog: &mut Program, cands: &BTreeSet<VarId>) -> BTreeMap<VarId, VarId> {
    let mut out = BTreeMap::new();
    for &x in cands {
        let Some(inner) = cell_content(&prog.vars[x].ty).cloned() else {
            continue;
        };
        let c = match prog.vars[x].scope {
            Scope::Param(f) => {
                let short = prog.vars[x].name.rsplit("::").next().unwrap_or("p");
                let name = format!("{}::*{short}", prog.functions[f].name);
                let c = prog.add_var(name, inner, Scope::Global);
                prog.vars[c].src = prog.vars[x].src;
                c
            }
            _ => {
                prog.vars[x].ty = inner;
                x
            }
        };
        out.insert(x, c);
    }
    out
}

/// Rewrites the candidates' edges (in their old order) and sets the parameters'
/// content variables to `NULL` at the start.
fn rewrite(prog: &mut Program, cands: &BTreeSet<VarId>, aliases: &BTreeMap<VarId, VarId>) {
    let content = content_vars(prog, cands);
    // only the aliases of rewritten cells (another variable's copy may be stale)
    let aliases: BTreeMap<VarId, VarId> = aliases
        .iter()
        .filter(|(_, v)| content.contains_key(v))
        .map(|(t, v)| (*t, *v))
        .collect();
    let aliases = &aliases;
    let edges: Vec<(Node, Node, Edge)> = prog
        .graph
        .edge_references()
        .map(|e| (e.source(), e.target(), e.weight().clone()))
        .collect();
    prog.graph.clear_edges();
    for (from, to, edge) in edges {
        let mut b = Chain {
            prog: &mut *prog,
            src: edge.src,
        };
        // a temporary that carried a rewritten cell's address is dead
        let op = match edge.op {
            Op::Assign {
                dst,
                src: Expr::Var(v),
            } if aliases.get(&dst) == Some(&v) => Op::Skip,
            op => resolved(&op, aliases),
        };
        match op {
            Op::Alloc { dst, .. } if content.contains_key(&dst) => {
                b.step(from, Some(to), Op::Nondet { dst });
            }
            Op::LoadIndirect { dst, ptr } if content.contains_key(&ptr) => {
                b.step(from, Some(to), assign(dst, Expr::Var(content[&ptr])));
            }
            Op::StoreIndirect { ptr, src } if content.contains_key(&ptr) => {
                b.step(from, Some(to), assign(content[&ptr], src));
            }
            Op::Call {
                callee,
                mut args,
                ret,
            } => {
                // (caller's content, callee's content) per candidate argument
                let mut moved = Vec::new();
                let params = b
                    .prog
                    .functions
                    .get(callee)
                    .map(|f| f.params.clone())
                    .unwrap_or_default();
                for (a, p) in args.iter_mut().zip(&params) {
                    if let Expr::Var(w) = a {
                        if let (Some(&cw), Some(&cp)) = (content.get(w), content.get(p)) {
                            moved.push((cw, cp));
                            *a = Expr::Null;
                        }
                    }
                }
                let mut before = Vec::new();
                let mut after = Vec::new();
                for &(cw, cp) in &moved {
                    before.extend([assign(cp, Expr::Var(cw)), assign(cw, Expr::Null)]);
                    after.extend([assign(cw, Expr::Var(cp)), assign(cp, Expr::Null)]);
                }
                let call = Op::Call { callee, args, ret };
                if moved.is_empty() {
                    b.step(from, Some(to), call);
                } else {
                    let mid = b.node(from);
                    b.path(from, mid, before);
                    let back = b.step(mid, None, call);
                    b.path(back, to, after);
                }
            }
            op => {
                b.step(from, Some(to), op);
            }
        }
    }
    let globals: Vec<VarId> = content
        .iter()
        .filter(|(x, c)| x != c)
        .map(|(_, c)| *c)
        .collect();
    if !globals.is_empty() {
        init_null(prog, &globals);
    }
}

/// A new entry of the start function that sets `vars` to `NULL` (before the start
/// function's first edge).
fn init_null(prog: &mut Program, vars: &[VarId]) {
    let old = prog.entry;
    let start = prog.graph[old].func;
    let first = prog.add_loc(start, SrcLoc::default(), LocKind::FuncEntry);
    prog.graph[old].kind = LocKind::Normal;
    let init = vars.iter().map(|&c| assign(c, Expr::Null)).collect();
    Chain {
        prog: &mut *prog,
        src: SrcLoc::default(),
    }
    .path(first, old, init);
    prog.entry = first;
    prog.functions[start].entry = first;
}

#[cfg(test)]
mod tests {
    use crate::frontend::program_to_text;
    use crate::testutil::parse_c;

    const INSERT: &str = "#include <stdlib.h>
struct node { struct node *next; };
void push(struct node **head) {
  struct node *n = malloc(sizeof(struct node));
  if (!n) abort();
  n->next = *head;
  *head = n;
}
void push2(struct node **h) { push(h); push(h); }
int main(void) {
  struct node *s = 0;
  push(&s);
  push2(&s);
  return s == 0;
}";

    #[test]
    fn a_cell_passed_to_callees_becomes_a_variable() {
        let p = parse_c(INSERT);
        let text = program_to_text(&p, None);
        assert!(!text.contains("stack_alloc"), "{text}");
        assert!(!text.contains("*main::s"), "{text}");
        // moved in, the caller's copy cleared, moved back out
        for op in [
            "push::*head = main::s",
            "main::s = NULL",
            "main::s = push::*head",
            "push::*head = NULL",
            "push2::*h = main::s",
            "push::*head = push2::*h",
            "push2::*h = push::*head",
            "push::__t0 = push::*head",
            "push::*head = push::n",
        ] {
            assert!(text.contains(op), "{op}: {text}");
        }
        // the parameters' copies are NULL outside their calls, from the start
        let start = &p.functions[p.graph[p.entry].func];
        let first: Vec<String> = p
            .successors(start.entry)
            .map(|(_, _, e)| p.op_str(&e.op))
            .collect();
        assert_eq!(first.len(), 1);
        assert!(first[0].ends_with("= NULL"), "{first:?}");
    }

    /// `put(&s, mk())`: the front end copies `&s` into a temporary before it calls
    /// `mk()`; the temporary only carries the address to the call.
    #[test]
    fn an_address_carried_by_a_temporary_is_followed() {
        let src = "#include <stdlib.h>
struct node { struct node *next; };
struct node *mk(void) { struct node *n = malloc(sizeof(struct node)); if (!n) abort(); n->next = 0; return n; }
void put(struct node **h, struct node *n) { n->next = *h; *h = n; }
int main(void) { struct node *s = 0; put(&s, mk()); put(&s, mk()); return s == 0; }";
        let text = program_to_text(&parse_c(src), None);
        assert!(!text.contains("stack_alloc"), "{text}");
        assert!(text.contains("put::*h = main::s"), "{text}");
        assert!(text.contains("put(NULL, "), "{text}");
    }

    /// The rewriting keeps the runs: random runs with and without it end the same
    /// ways (outcomes, and whether heap objects are left allocated, none, some or all of
    /// them lost, at the end), on
    /// programs whose lists hang off a local passed as `&s`, leaking or not.
    #[test]
    fn random_runs_end_alike_with_and_without_the_rewriting() {
        use crate::interp::{run_random_to_end, Limits};
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/memsafety");
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let insert = dir.path().join("insert.c");
        std::fs::write(&insert, INSERT).unwrap_or_else(|e| panic!("{e}"));
        for file in [
            insert,
            root.join("mem_cell_root.c"),
            root.join("mem_cell_root_bug.c"),
        ] {
            let parse = |keep: bool| {
                let opts = crate::frontend::FrontendOptions {
                    keep_pointer_cells: keep,
                    ..Default::default()
                };
                crate::frontend::parse_file(&file, &opts).unwrap_or_else(|e| panic!("{e}"))
            };
            let (cells, vars) = (parse(true), parse(false));
            assert!(program_to_text(&cells, None).contains("stack_alloc"));
            assert!(!program_to_text(&vars, None).contains("stack_alloc"));
            let ends = |p: &crate::cfa::Program| {
                (0..200u64)
                    .map(|seed| {
                        let (run, heap) = run_random_to_end(p, seed, &Limits::default());
                        // the lists' lengths follow the random choices, which the
                        // rewriting's `nondet()` for the cell shifts by one
                        let heap = heap.map(|h| {
                            let (any, lost) = (h.allocated > 0, h.lost);
                            (h.main_returned, any, lost == 0, lost == h.allocated)
                        });
                        (format!("{:?}", run.outcome), heap)
                    })
                    .collect::<std::collections::BTreeSet<_>>()
            };
            assert_eq!(ends(&cells), ends(&vars), "{}", file.display());
        }
    }

    /// Each of these uses lets something else reach the cell (or compares its
    /// address): the cell stays in memory.
    #[test]
    fn a_cell_reached_otherwise_stays_a_cell() {
        let head = "#include <stdlib.h>\nstruct node { struct node *next; };\n";
        for (callee, call) in [
            // the parameter is compared
            ("void f(struct node **h) { if (h) *h = 0; }", "f(&s);"),
            // the parameter is copied
            (
                "struct node **g; void f(struct node **h) { g = h; }",
                "f(&s);",
            ),
            // one cell passed twice: the parameters alias
            (
                "void f(struct node **a, struct node **b) { *a = *b; }",
                "f(&s, &s);",
            ),
            // the address is freed (an invalid free the rewriting would hide)
            ("void f(void) {}", "free(&s);"),
        ] {
            let src = format!(
                "{head}{callee}\nint main(void) {{ struct node *s = 0; {call} return s == 0; }}"
            );
            let text = program_to_text(&parse_c(&src), None);
            assert!(text.contains("main::s = stack_alloc"), "{call}: {text}");
        }
        // a global's cell: any function may name it
        let src = format!("{head}struct node *g; void f(struct node **h) {{ *h = 0; }}\nint main(void) {{ f(&g); return g == 0; }}");
        let text = program_to_text(&parse_c(&src), None);
        assert!(text.contains("stack_alloc"), "{text}");
    }
}
