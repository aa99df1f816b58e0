//! Loop invariants as C expressions from a SAFE verdict's certificate.
//!
//! The certificate's node states form an inductive invariant: every reachable state at
//! a location lies in the state of some node there. So at a loop head the disjunction
//! over its nodes of any weakening of each node's state is an invariant. Each node
//! contributes the conjunction of what C can say of it over the program's own
//! variables in scope at the loop (the loop's function's parameters and locals
//! declared before the loop, globals; no front-end temporaries, struct or
//! address-taken variables):
//!
//! - its predicate literals that compare two such variables, or one with a constant in
//!   the variable's range or `NULL` (`len <= 1`, `!(p == 0)`);
//! - the explicit heap's values: `x == 5`, `p == 0`, `p != 0` and `p == q` for pointers
//!   into the same live object.
//!
//! A location whose disjunction is `1` (some node contributes nothing) gets no
//! invariant. Only certificates of the program as written are used (the promoted
//! program's variables are not C's).

use crate::cfa::{AllocKind, BinOp, Expr, Node, Op, Program, Scope, Ty, UnOp, VarId};
use crate::explicit::{ExplicitState, Value};
use crate::predabs::{Cube, Precision};
use std::collections::{BTreeMap, BTreeSet};

/// Byte offset of (1-based) `line`, `col` in `text`.
pub(crate) fn offset(text: &str, line: u32, col: u32) -> Option<usize> {
    let mut off = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line as usize {
            let c = (col as usize).saturating_sub(1);
            return (c <= l.len()).then_some(off + c);
        }
        off += l.len();
    }
    None
}

/// Whether the block (`{ ... }`) that encloses byte `decl` of `text` also encloses
/// byte `at`, i.e. a variable declared at `decl` is in scope at `at` (braces are
/// counted on the text; a declaration before `at` is assumed).
fn in_block_of(text: &str, decl: usize, at: usize) -> bool {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut open = None;
    for i in (0..decl.min(b.len())).rev() {
        match b[i] {
            b'}' => depth += 1,
            b'{' if depth == 0 => {
                open = Some(i);
                break;
            }
            b'{' => depth -= 1,
            _ => {}
        }
    }
    let Some(open) = open else { return true };
    let mut depth = 0usize;
    for (i, c) in b.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return at > open && at < i;
                }
            }
            _ => {}
        }
    }
    false
}

/// The C name of `v` if it may appear in an invariant of a loop in function `func`
/// whose loop keyword is at byte `at` of `text` (see the module docs); `stack` holds
/// the variables that are stack objects (struct or address-taken variables).
fn c_name(prog: &Program, v: VarId, sc: &Scope_) -> Option<String> {
    let var = prog.vars.get(v)?;
    if sc.stack.contains(&v) {
        return None;
    }
    let in_scope = |var: &crate::cfa::Var| {
        offset(sc.text, var.src.line, var.src.col)
            .is_some_and(|d| d < sc.at && in_block_of(sc.text, d, sc.at))
    };
    let name = match var.scope {
        Scope::Global => var.name.as_str(),
        Scope::Param(f) if f == sc.func => var.name.rsplit("::").next()?,
        Scope::Local(f) if f == sc.func && in_scope(var) => var.name.rsplit("::").next()?,
        _ => return None,
    };
    let ok = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__");
    // a variable of the same name in an inner block in scope here would shadow it
    let qualified = format!("{}::{name}#", prog.functions[sc.func].name);
    let shadowed = prog.vars.iter().any(|w| {
        w.name.starts_with(&qualified)
            && matches!(w.scope, Scope::Local(f) if f == sc.func)
            && in_scope(w)
    });
    (ok && !shadowed).then(|| name.to_string())
}

/// The variables that hold stack objects (`Alloc` of kind `Stack`): struct variables
/// and address-taken scalars, which C does not read as the CFA's pointers.
fn stack_vars(prog: &Program) -> BTreeSet<VarId> {
    prog.graph
        .edge_weights()
        .filter_map(|e| match &e.op {
            Op::Alloc {
                dst,
                kind: AllocKind::Stack,
                ..
            } => Some(*dst),
            _ => None,
        })
        .collect()
}

/// What a loop's invariants may mention: variables of `func` in scope at byte `at`
/// (the loop keyword) of the program text `text`.
struct Scope_<'a> {
    prog: &'a Program,
    func: usize,
    text: &'a str,
    at: usize,
    stack: &'a BTreeSet<VarId>,
}

impl Scope_<'_> {
    fn name(&self, v: VarId) -> Option<String> {
        c_name(self.prog, v, self)
    }

    fn ty(&self, v: VarId) -> &Ty {
        &self.prog.vars[v].ty
    }

    /// `k` as a constant of `v`'s type, if it lies in its range.
    fn constant(&self, v: VarId, k: i64) -> Option<String> {
        match self.ty(v) {
            Ty::Ptr(_) if k == 0 => Some("0".into()),
            t => {
                let (lo, hi) = t.int_range()?;
                (lo..=hi).contains(&(k as i128)).then(|| k.to_string())
            }
        }
    }

    /// A predicate as C: a comparison of two variables of one type, or of a variable
    /// and a constant of its type; `None` for anything else.
    fn pred(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::Unary(UnOp::Not, inner) => Some(format!("!({})", self.pred(inner)?)),
            Expr::Binary(op, a, b)
                if matches!(
                    op,
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
                ) =>
            {
                let (l, r) = match (&**a, &**b) {
                    (Expr::Var(x), Expr::Var(y)) if self.ty(*x) == self.ty(*y) => {
                        (self.name(*x)?, self.name(*y)?)
                    }
                    (Expr::Var(x), Expr::Int(k)) => (self.name(*x)?, self.constant(*x, *k)?),
                    (Expr::Int(k), Expr::Var(x)) => (self.constant(*x, *k)?, self.name(*x)?),
                    (Expr::Var(x), Expr::Null) if self.ty(*x).is_ptr() => {
                        (self.name(*x)?, "0".into())
                    }
                    (Expr::Null, Expr::Var(x)) if self.ty(*x).is_ptr() => {
                        ("0".into(), self.name(*x)?)
                    }
                    _ => return None,
                };
                Some(format!("{l} {} {r}", op.symbol()))
            }
            _ => None,
        }
    }

    /// The facts of an explicit heap (see the module docs), sorted.
    fn explicit(&self, s: &ExplicitState) -> Vec<String> {
        let mut out = Vec::new();
        let mut targets: BTreeMap<(crate::explicit::Addr, u32), Vec<String>> = BTreeMap::new();
        for (v, val) in s.vars.iter().enumerate() {
            let Some(name) = self.name(v) else { continue };
            match val {
                Value::Top => {}
                Value::Int(k) => {
                    if let Some(c) = self.constant(v, *k) {
                        out.push(format!("{name} == {c}"));
                    }
                }
                Value::Ptr { obj, off } => {
                    if s.heap.contains_key(obj) && self.ty(v).is_ptr() {
                        out.push(format!("{name} != 0"));
                        targets.entry((*obj, *off)).or_default().push(name);
                    }
                }
            }
        }
        for names in targets.values() {
            for w in names.windows(2) {
                out.push(format!("{} == {}", w[0], w[1]));
            }
        }
        out
    }
}

/// One node's state at a loop head: its predicate cube (with the precision that names
/// the predicates) and its explicit heap, if the domains have them.
pub struct NodeFacts<'a> {
    /// CFA location.
    pub loc: Node,
    /// The predicate cube.
    pub cube: Option<&'a Cube>,
    /// The explicit heap.
    pub explicit: Option<&'a ExplicitState>,
}

/// The invariant (a C expression) at each loop head of `prog` (given with the byte
/// offset of its loop keyword in `text`, the program's source) that the nodes' facts
/// give; see the module docs.
pub fn loop_invariants(
    prog: &Program,
    text: &str,
    heads: &[(Node, usize)],
    prec: Option<&Precision>,
    nodes: &[NodeFacts],
) -> Vec<(Node, String)> {
    let stack = stack_vars(prog);
    let mut out = Vec::new();
    for (head, at) in heads {
        let scope = Scope_ {
            prog,
            func: prog.graph[*head].func,
            text,
            at: *at,
            stack: &stack,
        };
        let mut disjuncts: BTreeSet<String> = BTreeSet::new();
        let mut trivial = false;
        let mut any = false;
        for n in nodes.iter().filter(|n| n.loc == *head) {
            any = true;
            let mut conj: BTreeSet<String> = BTreeSet::new();
            // a variable the explicit heap knows needs no predicate
            let known = |v: &VarId| {
                n.explicit
                    .is_some_and(|s| matches!(s.vars.get(*v), Some(Value::Int(_))))
            };
            if let (Some(cube), Some(prec)) = (n.cube, prec) {
                for (id, pos) in &cube.0 {
                    let Some(p) = prec.preds.get(*id as usize) else {
                        continue;
                    };
                    let mut vs = Vec::new();
                    p.expr.vars(&mut vs);
                    if vs.iter().all(known) {
                        continue;
                    }
                    if let Some(c) = scope.pred(&p.expr) {
                        conj.insert(if *pos { c } else { format!("!({c})") });
                    }
                }
            }
            if let Some(s) = n.explicit {
                conj.extend(scope.explicit(s));
            }
            if conj.is_empty() {
                trivial = true;
                break;
            }
            disjuncts.insert(conj.into_iter().collect::<Vec<_>>().join(" && "));
        }
        if trivial || !any {
            continue;
        }
        let inv = if disjuncts.len() == 1 {
            disjuncts.into_iter().collect::<String>()
        } else {
            disjuncts
                .into_iter()
                .map(|d| format!("({d})"))
                .collect::<Vec<_>>()
                .join(" || ")
        };
        out.push((*head, inv));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_scopes() {
        let t = "int g;\nint main() {\n  int a;\n  { int b; }\n  while (a) { int c; }\n}\n";
        let at = |s: &str| t.find(s).unwrap();
        let kw = at("while");
        assert!(in_block_of(t, at("a;"), kw), "a is in main's block");
        assert!(!in_block_of(t, at("b;"), kw), "b's block ended");
        assert!(in_block_of(t, at("g;"), kw), "g is global");
        assert_eq!(offset(t, 3, 3), Some(at("int a")));
        assert_eq!(offset(t, 99, 1), None);
    }
}
