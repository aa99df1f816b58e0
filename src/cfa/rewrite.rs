//! Helpers of the program rewritings ([`crate::fieldptr`], [`crate::promote`]):
//! chains of new edges and the ops they are made of.

use super::{BinOp, Expr, LocKind, Node, Op, Program, SrcLoc, VarId};

/// `dst = src`.
pub(crate) fn assign(dst: VarId, src: Expr) -> Op {
    Op::Assign { dst, src }
}

/// `assume(a rel b)`.
pub(crate) fn assume(rel: BinOp, a: Expr, b: Expr) -> Op {
    Op::Assume {
        cond: Expr::bin(rel, a, b),
    }
}

/// Appends chains of edges to a program (the rewritings of [`crate::fieldptr`] and [`crate::promote`]).
pub(crate) struct Chain<'a> {
    pub(crate) prog: &'a mut Program,
    pub(crate) src: SrcLoc,
}

impl Chain<'_> {
    /// A new normal location in `like`'s function, at this chain's source position.
    pub(crate) fn node(&mut self, like: Node) -> Node {
        let f = self.prog.graph[like].func;
        self.prog.add_loc(f, self.src, LocKind::Normal)
    }

    /// One edge from `from` to `to` (a new location if `None`); returns its target.
    pub(crate) fn step(&mut self, from: Node, to: Option<Node>, op: Op) -> Node {
        let to = to.unwrap_or_else(|| self.node(from));
        self.prog.add_edge(from, to, op, self.src);
        to
    }

    /// A path `from → … → to` through new locations, one edge per operation.
    pub(crate) fn path(&mut self, from: Node, to: Node, ops: Vec<Op>) {
        let n = ops.len();
        let mut at = from;
        for (k, op) in ops.into_iter().enumerate() {
            let next = (k + 1 == n).then_some(to);
            at = self.step(at, next, op);
        }
        if n == 0 {
            self.prog.add_edge(from, to, Op::Skip, self.src);
        }
    }
}
