//! Leak tracking: how a run leaves the heap (valid-memtrack, valid-memcleanup).
//!
//! At the end of a run the live heap objects are divided into those some variable
//! still reaches (through the cells of live objects) and the *lost* ones. Variables
//! hold exactly the run's roots: the locals of a function that returned are back to
//! their values before the call (NULL / 0), so after `main` returns only globals are
//! roots, SV-COMP's convention (memory only `main`'s locals point to is lost when
//! `main` returns). An object that is unreachable stays unreachable (a program cannot
//! make a pointer to it again: no pointer arithmetic, no integer-to-pointer casts in
//! the supported C), so a lost object at the end of a run was lost while allocated.

use super::{Limits, Machine, MemErrorKind, Outcome, Ptr, Run, Source, Stop, Val};
use crate::cfa::{AllocKind, Inputs, LeakCheck, LocKind, Op, Program, Step, StructId};
use crate::spec::{Property, Subproperty};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::collections::BTreeMap;

/// The heap when a run ended normally or at `abort()`/`exit()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeapAtEnd {
    /// True when `main` returned (false: the run stopped at `abort()`/`exit()`, where
    /// the frames of the active functions still hold their pointers).
    pub main_returned: bool,
    /// Live heap objects (allocated and not freed).
    pub allocated: usize,
    /// Live heap objects that no variable reaches: memory lost while allocated.
    pub lost: usize,
}

/// The subproperty of `property` a memory error of kind `kind` violates (none for
/// unreach-call and valid-memcleanup, whose violations are not memory errors; none for
/// a call through an invalid function pointer).
pub fn violated_subproperty(property: Property, kind: MemErrorKind) -> Option<Subproperty> {
    if kind == MemErrorKind::Leak {
        return match property {
            Property::ValidMemsafety => Some(Subproperty::ValidMemtrack),
            Property::ValidMemcleanup => Some(Subproperty::ValidMemcleanup),
            Property::UnreachCall => None,
        };
    }
    if property != Property::ValidMemsafety {
        return None;
    }
    match kind {
        MemErrorKind::NullDeref
        | MemErrorKind::UseAfterFree
        | MemErrorKind::InvalidDeref
        | MemErrorKind::OutOfBounds => Some(Subproperty::ValidDeref),
        MemErrorKind::DoubleFree | MemErrorKind::InvalidFree => Some(Subproperty::ValidFree),
        MemErrorKind::InvalidCall | MemErrorKind::Leak => None,
    }
}

impl HeapAtEnd {
    /// The subproperty of `property` this heap violates (valid-memtrack under
    /// valid-memsafety, valid-memcleanup under valid-memcleanup).
    pub fn violated(&self, property: Property) -> Option<Subproperty> {
        match property {
            Property::ValidMemsafety if self.violates_memtrack() => {
                Some(Subproperty::ValidMemtrack)
            }
            Property::ValidMemcleanup if self.violates_memcleanup() => {
                Some(Subproperty::ValidMemcleanup)
            }
            _ => None,
        }
    }

    /// A valid-memtrack violation: some allocated object is unreachable.
    pub fn violates_memtrack(&self) -> bool {
        self.lost > 0
    }

    /// A valid-memcleanup violation: the program ended (`main` returned, or
    /// `abort()`/`exit()`) with memory still allocated. SV-COMP counts the end at
    /// `abort()` too: forester-heap sll-token-1 violates valid-memcleanup only on the
    /// runs that fail an assertion and abort.
    pub fn violates_memcleanup(&self) -> bool {
        self.allocated > 0
    }
}

impl Machine<'_> {
    /// The heap at the end of a run that stopped at the current location, `None` when
    /// the run did not end normally (a location with successors, inside a call).
    fn heap_at_end(&self) -> Option<HeapAtEnd> {
        let kind = self.prog.graph[self.node].kind;
        let ended = !self
            .prog
            .successors(self.node)
            .any(|(_, _, w)| !matches!(w.op, Op::AssumeLeak { .. }));
        let main_returned = ended && self.stack.is_empty() && kind != LocKind::Sink;
        if !(main_returned || kind == LocKind::Sink) {
            return None;
        }
        let (allocated, lost) = self.heap_counts(None);
        Some(HeapAtEnd {
            main_returned,
            allocated,
            lost,
        })
    }

    /// Whether the heap fails the leak check `check` for the objects allocated as `of`
    /// (a struct type, `None`: any other pointee type) now: some live heap object
    /// ([`LeakCheck::Unfreed`]), or one no variable reaches ([`LeakCheck::Unreachable`]).
    pub(super) fn leaks(&self, check: LeakCheck, of: Option<StructId>) -> bool {
        let (allocated, lost) = self.heap_counts(Some(of));
        match check {
            LeakCheck::Unfreed => allocated > 0,
            LeakCheck::Unreachable => lost > 0,
        }
    }

    /// The live heap objects (all, or those allocated as `only`) and how many of them
    /// no variable reaches.
    fn heap_counts(&self, only: Option<Option<StructId>>) -> (usize, usize) {
        let mut reached = vec![false; self.objects.len()];
        let mut todo: Vec<u32> = self.vars.iter().filter_map(|v| object_of(*v)).collect();
        while let Some(o) = todo.pop() {
            let Some(obj) = self.objects.get(o as usize) else {
                continue;
            };
            if reached[o as usize] || !obj.live {
                continue;
            }
            reached[o as usize] = true;
            todo.extend(obj.cells.values().filter_map(|v| object_of(*v)));
        }
        let heap = |(_, o): &(usize, &super::Object)| {
            o.live && matches!(o.kind, AllocKind::Heap { .. }) && only.is_none_or(|k| o.of == k)
        };
        let live: Vec<usize> = self
            .objects
            .iter()
            .enumerate()
            .filter(heap)
            .map(|(i, _)| i)
            .collect();
        (live.len(), live.iter().filter(|&&i| !reached[i]).count())
    }
}

fn object_of(v: Val) -> Option<u32> {
    match v {
        Val::Ptr(Ptr::Obj { obj, .. }) => Some(obj),
        _ => None,
    }
}

/// [`super::run_random`] with the heap at its end when it ended normally
/// ([`Outcome::Exit`]: `main` returned, or `abort()`/`exit()`).
pub fn run_random_to_end(prog: &Program, seed: u64, limits: &Limits) -> (Run, Option<HeapAtEnd>) {
    let mut m = Machine::new(
        prog,
        limits,
        Source::Random(SmallRng::seed_from_u64(seed), BTreeMap::new()),
    );
    let o = m.run_free();
    let heap = (o == Outcome::Exit).then(|| m.heap_at_end()).flatten();
    (super::finish(m, o), heap)
}

/// Replays `path` exactly (as [`super::replay_path`]) with the choices in `inputs`;
/// the path must end where the run ends (`main`'s return through the start function,
/// or a sink after `abort()`/`exit()`). Then the outcome is [`Outcome::Exit`] and the
/// heap is described; otherwise the outcome says where the replay diverged or the
/// error it hit, and there is no heap.
pub fn replay_to_end(
    prog: &Program,
    path: &[Step],
    inputs: &Inputs,
    limits: &Limits,
) -> (Run, Option<HeapAtEnd>) {
    let mut m = Machine::given(prog, limits, inputs);
    let (o, heap) = match m.replay_steps(path) {
        Err(Stop::Outcome(o)) => (o, None),
        Ok(()) => match m.heap_at_end() {
            Some(h) => (Outcome::Exit, Some(h)),
            None => (
                Outcome::Diverged {
                    step: path.len(),
                    reason: "path ends before the run ends".into(),
                },
                None,
            ),
        },
    };
    (super::finish(m, o), heap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::parse_c;

    fn heap_of(src: &str, seed: u64) -> Option<HeapAtEnd> {
        let prog = parse_c(src);
        let limits = Limits {
            max_steps: 10_000,
            malloc_never_fails: true,
        };
        let (run, heap) = run_random_to_end(&prog, seed, &limits);
        // the replay of the run's own path and choices describes the same heap
        let (again, heap2) = replay_to_end(&prog, &run.trace, &run.inputs, &limits);
        assert_eq!(again.outcome, run.outcome, "{:?}", again.outcome);
        assert_eq!(heap2, heap);
        heap
    }

    const NODE: &str = "#include <stdlib.h>\nstruct n { struct n *next; };\n";

    #[test]
    fn memory_only_main_points_to_is_lost_when_main_returns() {
        let h = heap_of(&format!("{NODE}int main(void) {{ struct n *p = malloc(sizeof(struct n)); p->next = malloc(sizeof(struct n)); return 0; }}"), 0).unwrap();
        assert_eq!(
            h,
            HeapAtEnd {
                main_returned: true,
                allocated: 2,
                lost: 2
            }
        );
        assert!(h.violates_memtrack() && h.violates_memcleanup());
    }

    #[test]
    fn memory_a_global_reaches_is_not_lost_but_not_cleaned_up() {
        let h = heap_of(&format!("{NODE}struct n *g;\nint main(void) {{ g = malloc(sizeof(struct n)); g->next = malloc(sizeof(struct n)); return 0; }}"), 0).unwrap();
        assert_eq!((h.allocated, h.lost), (2, 0));
        assert!(!h.violates_memtrack() && h.violates_memcleanup());
    }

    #[test]
    fn freed_memory_is_neither() {
        let h = heap_of(&format!("{NODE}int main(void) {{ struct n *p = malloc(sizeof(struct n)); struct n *q = malloc(sizeof(struct n)); p->next = q; free(q); free(p); return 0; }}"), 0).unwrap();
        assert_eq!((h.allocated, h.lost), (0, 0));
        assert!(!h.violates_memtrack() && !h.violates_memcleanup());
    }

    #[test]
    fn a_pointer_overwritten_loses_its_object_even_before_abort() {
        let src = format!("{NODE}void abort(void);\nint main(void) {{ struct n *p = malloc(sizeof(struct n)); struct n *q = malloc(sizeof(struct n)); p = q; abort(); return 0; }}");
        let h = heap_of(&src, 0).unwrap();
        assert!(!h.main_returned);
        assert_eq!((h.allocated, h.lost), (2, 1));
        assert!(h.violates_memtrack() && h.violates_memcleanup());
    }

    #[test]
    fn a_path_that_stops_early_has_no_heap() {
        let prog = parse_c(&format!(
            "{NODE}int main(void) {{ struct n *p = malloc(sizeof(struct n)); free(p); return 0; }}"
        ));
        let limits = Limits {
            max_steps: 10_000,
            malloc_never_fails: true,
        };
        let (run, _) = run_random_to_end(&prog, 0, &limits);
        let (again, heap) = replay_to_end(&prog, &run.trace[..1], &run.inputs, &limits);
        assert!(matches!(again.outcome, Outcome::Diverged { .. }));
        assert_eq!(heap, None);
    }
}
