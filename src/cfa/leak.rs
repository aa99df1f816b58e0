//! The leak checks of the memory properties ([`Program::add_leak_checks`]).
//!
//! A run leaks under valid-memcleanup when heap memory is still allocated where it
//! ends, and under valid-memtrack when an allocated object becomes unreachable. Runs
//! end at the start function's exit (after `main` returned) and at `abort()`/`exit()`
//! (the edge into a [`LocKind::Sink`]); a run that never ends passes some loop head
//! infinitely often, and an object once unreachable stays unreachable (no pointer
//! arithmetic or integer-to-pointer casts in the supported C), so for valid-memtrack
//! the loop heads are checked too. Each check is an [`Op::AssumeLeak`] edge to a new
//! [`LocKind::MemLeak`] target; the analyses prove these targets unreachable like the
//! undefined-behaviour targets.

use super::{AllocKind, LeakCheck, LocKind, Node, Op, Program, StructId, Ty};
use crate::spec::Property;
use std::collections::BTreeSet;

impl Program {
    /// Adds the leak checks of `property` (none for unreach-call): an
    /// [`Op::AssumeLeak`] edge to a new [`LocKind::MemLeak`] target from the start
    /// function's exit and beside every `abort()`/`exit()` edge, one per kind of
    /// allocated object ([`Program::allocated_kinds`]); under valid-memsafety
    /// ([`LeakCheck::Unreachable`]) also from every loop head, under valid-memcleanup
    /// ([`LeakCheck::Unfreed`]) only where runs end. Only appends nodes and edges, each
    /// check after the edges already there (the interpreter never takes a check edge in
    /// a run of its own). Returns the number of checks added.
    pub fn add_leak_checks(&mut self, property: Property) -> usize {
        let check = match property {
            Property::UnreachCall => return 0,
            Property::ValidMemsafety => LeakCheck::Unreachable,
            Property::ValidMemcleanup => LeakCheck::Unfreed,
        };
        let mut at: BTreeSet<Node> = BTreeSet::new();
        if let Some(f) = self.functions.get(self.graph[self.entry].func) {
            at.insert(f.exit);
        }
        for e in self.graph.edge_indices() {
            if self.graph[e].op == Op::Halt {
                if let Some((from, _)) = self.graph.edge_endpoints(e) {
                    at.insert(from);
                }
            }
        }
        if check == LeakCheck::Unreachable {
            at.extend(self.loop_heads());
        }
        let kinds = self.allocated_kinds();
        for &n in &at {
            let src = self.graph[n].src;
            for &of in &kinds {
                self.add_target(n, LocKind::MemLeak, Op::AssumeLeak { check, of }, src);
            }
        }
        at.len() * kinds.len()
    }

    /// The kinds of heap objects the program allocates, as [`Op::AssumeLeak`] names
    /// them: each struct type `malloc`ed, and `None` for every other pointee type.
    pub fn allocated_kinds(&self) -> BTreeSet<Option<StructId>> {
        self.graph
            .edge_weights()
            .filter_map(|e| match &e.op {
                Op::Alloc {
                    pointee,
                    kind: AllocKind::Heap { .. },
                    ..
                } => Some(match pointee {
                    Ty::Struct(s) => Some(*s),
                    _ => None,
                }),
                _ => None,
            })
            .collect()
    }

    /// True if the program has leak checks ([`Program::add_leak_checks`]).
    pub fn has_leak_checks(&self) -> bool {
        self.graph
            .edge_weights()
            .any(|e| matches!(e.op, Op::AssumeLeak { .. }))
    }

    /// True if the program allocates heap memory (`malloc`/`calloc`).
    pub fn allocates(&self) -> bool {
        !self.allocated_kinds().is_empty()
    }

    /// The loop heads: the targets of back edges of a depth-first search from every
    /// function entry (every cycle of the CFA passes one).
    pub fn loop_heads(&self) -> BTreeSet<Node> {
        use petgraph::visit::{depth_first_search, DfsEvent};
        let entries: Vec<Node> = self
            .graph
            .node_indices()
            .filter(|&n| self.graph[n].kind == LocKind::FuncEntry)
            .collect();
        let mut out = BTreeSet::new();
        depth_first_search(&self.graph, entries, |e| {
            if let DfsEvent::BackEdge(_, to) = e {
                out.insert(to);
            }
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::parse_c;

    const SRC: &str = "#include <stdlib.h>\nstruct n { struct n *next; };\nextern int __VERIFIER_nondet_int(void);\nint main(void) { struct n *p = 0; while (__VERIFIER_nondet_int()) { struct n *q = malloc(sizeof(struct n)); if (!q) abort(); q->next = p; p = q; } return 0; }";

    fn checks(p: &Program) -> Vec<(Node, LeakCheck)> {
        p.graph
            .edge_indices()
            .filter_map(|e| match p.graph[e].op {
                Op::AssumeLeak { check, of } => {
                    assert_eq!(of, Some(0));
                    let (from, to) = p.graph.edge_endpoints(e)?;
                    assert_eq!(p.graph[to].kind, LocKind::MemLeak);
                    assert!(p.successors(to).next().is_none());
                    Some((from, check))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn checks_stand_where_runs_end_and_for_memtrack_at_loop_heads() {
        let mut p = parse_c(SRC);
        assert_eq!(p.add_leak_checks(Property::UnreachCall), 0);
        assert!(!p.has_leak_checks() && p.allocates());
        let heads = p.loop_heads();
        assert_eq!(heads.len(), 1);
        let start_exit = p.functions[p.graph[p.entry].func].exit;

        let mut m = p.clone();
        let n = m.add_leak_checks(Property::ValidMemsafety);
        let c = checks(&m);
        assert_eq!(n, c.len());
        // the start's exit, the abort() and the loop head
        assert_eq!(n, 3);
        assert!(c.iter().all(|(_, k)| *k == LeakCheck::Unreachable));
        assert!(c.iter().any(|(f, _)| *f == start_exit));
        assert!(c.iter().any(|(f, _)| heads.contains(f)));

        let mut m = p.clone();
        assert_eq!(m.add_leak_checks(Property::ValidMemcleanup), 2);
        let c = checks(&m);
        assert!(c.iter().all(|(_, k)| *k == LeakCheck::Unfreed));
        assert!(!c.iter().any(|(f, _)| heads.contains(f)));
        assert!(m.has_leak_checks());
    }
}
