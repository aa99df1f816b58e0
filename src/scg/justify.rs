//! Bounded justification of the DSL's `constraint` items.
//!
//! Coerce trusts a shape class's constraints: it sharpens values by them and drops
//! the structures that violate them. A constraint that some concrete heap falsifies
//! (`constraint 0;`, an acyclicity claim) makes the analysis unsound, so the loader
//! accepts a constraint only after it held on *every* concrete heap up to a small
//! bound: the cells `0..n` for each `n <= K` (K = 3 with at most two relevant roles,
//! 2 with more, lowered while the count exceeds [`HEAP_BUDGET`]), each relevant role
//! field of each cell NULL or any cell, and each of the tracked pointers [`TRACKED`]
//! NULL or any cell. Relevant are the roles the constraint reads, directly or through
//! the family's predicates; the pointers are there when the constraint has pointer
//! placeholders or reads `pt`/`ptd`, and its placeholders range over them. The
//! instrumentation predicates of the constraint's family are computed from their
//! definitions on each heap. This is a bounded check, not a proof: it catches wrong
//! constraints with small counterexamples.

use super::dsl::{Constraint, FamilyDef, StructureDef};
use super::instance::{assignments, expand_ptd, instantiate, placeholders_in, RoleBinding};
use super::TrackingDef;
use crate::tvla::eval::{Compiled, Evaluator};
use crate::tvla::formula::{Formula, Kleene};
use crate::tvla::structure::Structure;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The most heaps enumerated for one constraint; the bound K is lowered until the
/// count of heaps with at most K cells fits.
pub const HEAP_BUDGET: u64 = 300_000;

/// The tracked pointers the check instantiates pointer placeholders (and `ptd`) with.
pub const TRACKED: [&str; 2] = ["p1", "p2"];

/// What a successful check covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Justification {
    /// Heaps enumerated (all heaps with at most `max_cells` cells).
    pub heaps: u64,
    /// The bound K on the number of cells.
    pub max_cells: usize,
}

/// Number of heaps with `0..=k` cells, `roles` fields per cell and `ptrs` pointers,
/// each NULL or any cell (saturating).
pub fn heap_count(k: usize, roles: usize, ptrs: usize) -> u64 {
    (0..=k)
        .map(|n| {
            let choices = (n + 1) as u64;
            (0..n * roles + ptrs).fold(1u64, |a, _| a.saturating_mul(choices))
        })
        .fold(0u64, |a, b| a.saturating_add(b))
}

/// The bound K for `roles` relevant roles and `ptrs` pointers: 3 for at most two
/// roles, else 2, lowered (not below 1) while the heaps exceed [`HEAP_BUDGET`].
pub fn bound(roles: usize, ptrs: usize) -> usize {
    let mut k = if roles <= 2 { 3 } else { 2 };
    while k > 1 && heap_count(k, roles, ptrs) > HEAP_BUDGET {
        k -= 1;
    }
    k
}

/// Checks constraint `k` of family `fam` of structure `s` (which passed the local
/// checks) on every heap up to the bound; `Err` holds the message
/// `constraint does not hold on every heap: <heap>` with the smallest counterexample
/// found (fewest cells first).
pub fn justify(s: &StructureDef, fam: &FamilyDef, k: &Constraint) -> Result<Justification, String> {
    // the family predicates the constraint reads, transitively (by name, as the
    // reference check matches them)
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut todo: Vec<&Formula> = vec![&k.formula];
    while let Some(f) = todo.pop() {
        for p in f.preds() {
            if names.insert(p.name.clone()) {
                todo.extend(
                    fam.preds
                        .iter()
                        .filter(|t| t.sym.name == p.name)
                        .map(|t| &t.def),
                );
            }
        }
    }
    let roles: Vec<&String> = s.roles.iter().filter(|r| names.contains(*r)).collect();
    // the constraint's placeholders, instantiated with every tracked pointer
    let ph: Vec<String> = placeholders_in(&k.formula, fam).into_iter().collect();
    let ptrs: &[&str] = if !ph.is_empty() || names.contains("pt") || names.contains("ptd") {
        &TRACKED
    } else {
        &[]
    };
    let preds: Vec<_> = fam
        .preds
        .iter()
        .filter(|t| names.contains(&t.sym.name))
        .cloned()
        .collect();
    let only = StructureDef {
        name: s.name.clone(),
        roles: s.roles.clone(),
        requires: Vec::new(),
        refines: Vec::new(),
        families: vec![FamilyDef {
            name: fam.name.clone(),
            always: false,
            pointers: fam.pointers.clone(),
            preds,
            constraints: Vec::new(),
            pos: fam.pos,
        }],
        pos: s.pos,
    };
    let binding: RoleBinding = s.roles.iter().map(|r| (r.clone(), r.clone())).collect();
    let d = TrackingDef::new(ptrs.iter().copied(), ptrs.iter().copied(), []);
    let class = instantiate(&only, &[fam.name.clone()].into(), &binding, &d);
    // the constraint's instances, one per assignment of its placeholders
    let instances: Vec<(String, Formula)> = assignments(&ph, &d)
        .into_iter()
        .map(|a| {
            let shown = a
                .iter()
                .map(|(x, p)| format!("{x} = {p}"))
                .collect::<Vec<_>>()
                .join(", ");
            let sub = |n: &str| a.get(n).or_else(|| binding.get(n)).cloned();
            (shown, expand_ptd(&k.formula.subst_params(&sub), &d))
        })
        .collect();
    let max_cells = bound(roles.len(), ptrs.len());
    let mut heaps = 0u64;
    for n in 0..=max_cells {
        let mut base = Structure::empty(&class);
        for _ in 0..n {
            base.add_node(Kleene::False);
        }
        let voc = base.vocab().clone();
        let compiled: Vec<(&String, Compiled)> = instances
            .iter()
            .map(|(a, f)| (a, Compiled::new(&voc, f, &[])))
            .collect();
        let field_idx: Vec<usize> = roles
            .iter()
            .map(|r| {
                voc.field(r)
                    .unwrap_or_else(|| unreachable!("role `{r}` is a core field"))
            })
            .collect();
        let pt_idx: Vec<usize> = ptrs
            .iter()
            .map(|p| voc.pt(p).unwrap_or_else(|| unreachable!("pt[{p}] is core")))
            .collect();
        // odometer: slot `c * roles + i` is field i of cell c, then the pointers;
        // value n is NULL
        let nf = n * roles.len();
        let mut slots = vec![n; nf + ptrs.len()];
        loop {
            heaps += 1;
            let t = base.recompute_instr(None);
            let mut ev = Evaluator::new(&t);
            for (a, c) in &compiled {
                if c.eval(&mut ev, &[]) != Kleene::True {
                    let mut msg = format!(
                        "constraint does not hold on every heap: {}",
                        show_heap(n, &roles, ptrs, &slots)
                    );
                    if !a.is_empty() {
                        let _ = write!(msg, " (with {a})");
                    }
                    return Err(msg);
                }
            }
            // next heap
            let mut i = 0;
            loop {
                if i == slots.len() {
                    break;
                }
                let old = slots[i];
                let new = if old == n { 0 } else { old + 1 };
                let set = |b: &mut Structure, v: usize, k: Kleene| {
                    if v == n {
                        return;
                    }
                    if i < nf {
                        b.set2(field_idx[i % roles.len()], i / roles.len(), v, k);
                    } else {
                        b.set1(pt_idx[i - nf], v, k);
                    }
                };
                set(&mut base, old, Kleene::False);
                set(&mut base, new, Kleene::True);
                slots[i] = new;
                if new != n {
                    break;
                }
                i += 1;
            }
            if i == slots.len() {
                break;
            }
        }
    }
    Ok(Justification { heaps, max_cells })
}

/// `heap {c0.next = c1, c1.next = NULL; p1 = c0, p2 = NULL}` (`heap {}` when empty,
/// `heap {c0, c1}` without relevant fields or pointers).
fn show_heap(n: usize, roles: &[&String], ptrs: &[&str], slots: &[usize]) -> String {
    let cell = |v: usize| {
        if v == n {
            "NULL".to_string()
        } else {
            format!("c{v}")
        }
    };
    let nf = n * roles.len();
    let mut parts: Vec<String> = Vec::new();
    if roles.is_empty() {
        if n > 0 {
            parts.push(
                (0..n)
                    .map(|c| format!("c{c}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
    } else if n > 0 {
        parts.push(
            (0..nf)
                .map(|i| {
                    format!(
                        "c{}.{} = {}",
                        i / roles.len(),
                        roles[i % roles.len()],
                        cell(slots[i])
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    if !ptrs.is_empty() {
        parts.push(
            ptrs.iter()
                .enumerate()
                .map(|(j, p)| format!("{p} = {}", cell(slots[nf + j])))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    format!("heap {{{}}}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scg::parse::parse_dsl;

    fn check(fam_body: &str) -> Result<Justification, String> {
        let src = format!(
            "structure s {{\n  roles next, prev;\n  requires doubly_linked(next, prev);\n  family f for x {{\n    {fam_body}\n  }}\n}}\n"
        );
        let ss = parse_dsl(&src).unwrap_or_else(|e| panic!("{e}"));
        let s = &ss[0];
        let fam = &s.families[0];
        justify(s, fam, &fam.constraints[0])
    }

    #[test]
    fn bounds_and_counts() {
        assert_eq!(heap_count(0, 2, 2), 1);
        // one role, no pointers: 1 + 2 + 3^2 + 4^3
        assert_eq!(heap_count(3, 1, 0), 76);
        // two roles, two pointers: 1 + 2^4 + 3^6 + 4^8
        assert_eq!(heap_count(3, 2, 2), 66_282);
        assert_eq!(bound(1, 2), 3);
        assert_eq!(bound(2, 2), 3);
        assert_eq!(bound(3, 2), 2);
        // five roles with two pointers: 3^10 * 9 heaps of two cells exceed the budget
        assert_eq!(bound(5, 2), 1);
        assert!(heap_count(bound(8, 2), 8, 2) <= HEAP_BUDGET);
    }

    #[test]
    fn false_constraints_get_small_counterexamples() {
        assert_eq!(
            check("constraint 0;"),
            Err("constraint does not hold on every heap: heap {}".into())
        );
        assert_eq!(
            check("constraint A v. !sm(v) & 0;"),
            Err("constraint does not hold on every heap: heap {c0}".into())
        );
        // acyclicity along next: a one-cell cycle
        assert_eq!(
            check("constraint A v. !TC(a, b: next(a, b))(v, v);"),
            Err("constraint does not hold on every heap: heap {c0.next = c0}".into())
        );
        // placeholders name the instance
        let e = check("pred r[x, next](v) := E u. pt[x](u) & TC(a, b: next(a, b))(u, v);\n    constraint A v. !r[x, next](v);")
            .unwrap_err();
        assert!(e.ends_with("(with x = p1)"), "{e}");
        assert!(e.contains("p1 = c0"), "{e}");
        // a placeholder whose predicate ignores the pointer still gets instances
        assert_eq!(
            check("pred p[x](v) := sm(v);\n    constraint A v. p[x](v);"),
            Err(
                "constraint does not hold on every heap: heap {c0; p1 = NULL, p2 = NULL} (with x = p1)"
                    .into()
            )
        );
    }

    #[test]
    fn valid_constraints_are_justified() {
        // a shared cell has an incoming edge
        let j = check("pred is[next](v) := E a. E b. next(a, v) & next(b, v) & !(a == b);\n    constraint A v. is[next](v) -> (E a. next(a, v));")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(j.max_cells, 3);
        assert_eq!(j.heaps, heap_count(3, 1, 0));
        // fields are functions, and a pointer points to at most one cell
        let j = check("constraint A v. A w. A z. prev(v, w) & prev(v, z) -> w == z;")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(j.heaps, heap_count(3, 1, 0));
        let j = check("constraint A v. A w. pt[x](v) & pt[x](w) -> v == w;")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(j.heaps, heap_count(3, 0, 2));
        // both roles and the pointers
        let j = check("constraint A v. A w. next(v, w) & prev(w, v) & ptd(v) -> E u. next(v, u);")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(j.heaps, heap_count(3, 2, 2));
    }
}
