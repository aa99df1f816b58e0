//! Field-role inference: which (invariant, binding) pairs hold on a set of samples,
//! and the most specific data structure they support (never by field names).
//!
//! For a struct type `A` the candidates are every binding of distinct pointer fields
//! of `A` to `A` to the roles of each invariant (`binary_tree`/`tree_parent` with
//! `left` before `right` in layout order, since they are symmetric in left/right),
//! and for `list_of_lists` a `down` field of `A` to any struct `B` with `sub_next` a
//! field of `B` to `B`. A pair *holds on the samples* if no sample violates it and at
//! least one sample supports it non-vacuously (see [`super::invariants`]).
//!
//! The chosen data structure is the most specific one whose invariants hold on most
//! samples ([`PairResult::holds_mostly`]: supported at least once, violated by fewer
//! than half of the samples, so that a sample taken in the middle of an update or
//! after a bug corrupted the structure does not hide it), in the
//! order tree with parent > tree > list of lists > doubly-linked list > headed
//! doubly-linked list (the first node's `prev` is the last node) > singly-linked list (cyclic when `cyclic_list(next)` holds and `acyclic_list(next)` does not);
//! among bindings of the same kind the one supported by most samples wins, then the
//! one with the smallest field indices (deterministic).

use super::invariants::{binding_ok, check, Binding, CellScope, Invariant, Verdict};
use super::ExplicitState;
use crate::cfa::{FieldRef, Program, StructId};
use serde::Serialize;
use std::fmt;

/// The data structure recognised for a struct type, with its role fields.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DataStructure {
    /// No invariant holds non-vacuously (or no samples).
    Unknown,
    /// Singly-linked list along `next`.
    Sll { next: FieldRef, cyclic: bool },
    /// Doubly-linked list.
    Dll {
        next: FieldRef,
        prev: FieldRef,
        cyclic: bool,
    },
    /// A NULL-terminated doubly-linked list whose first node's `prev` points to the
    /// last node (utlist's `DL_*` lists, `headed_dll`).
    HeadedDll { next: FieldRef, prev: FieldRef },
    /// Binary tree without (checked) parent pointers.
    Tree { left: FieldRef, right: FieldRef },
    /// Binary tree with parent pointers.
    TreeParent {
        left: FieldRef,
        right: FieldRef,
        parent: FieldRef,
    },
    /// A list whose nodes head sub-lists.
    ListOfLists {
        next: FieldRef,
        down: FieldRef,
        sub_next: FieldRef,
    },
}

impl DataStructure {
    /// A short stable name: `unknown`, `sll`, `cyclic_sll`, `dll`, `cyclic_dll`,
    /// `headed_dll`, `tree`, `tree_parent`, `list_of_lists`.
    pub fn name(&self) -> &'static str {
        match self {
            DataStructure::Unknown => "unknown",
            DataStructure::Sll { cyclic: false, .. } => "sll",
            DataStructure::Sll { cyclic: true, .. } => "cyclic_sll",
            DataStructure::Dll { cyclic: false, .. } => "dll",
            DataStructure::Dll { cyclic: true, .. } => "cyclic_dll",
            DataStructure::HeadedDll { .. } => "headed_dll",
            DataStructure::Tree { .. } => "tree",
            DataStructure::TreeParent { .. } => "tree_parent",
            DataStructure::ListOfLists { .. } => "list_of_lists",
        }
    }

    /// The explicit-heap invariant that characterises the structure (what SCG
    /// `requires` clauses name), None for `Unknown`.
    pub fn invariant(&self) -> Option<Invariant> {
        Some(match self {
            DataStructure::Unknown => return None,
            DataStructure::Sll { cyclic: false, .. } => Invariant::AcyclicList,
            DataStructure::Sll { cyclic: true, .. } => Invariant::CyclicList,
            DataStructure::Dll { .. } => Invariant::DoublyLinked,
            DataStructure::HeadedDll { .. } => Invariant::HeadedDll,
            DataStructure::Tree { .. } => Invariant::BinaryTree,
            DataStructure::TreeParent { .. } => Invariant::TreeParent,
            DataStructure::ListOfLists { .. } => Invariant::ListOfLists,
        })
    }

    /// The role fields, in role order.
    pub fn fields(&self) -> Vec<FieldRef> {
        match *self {
            DataStructure::Unknown => vec![],
            DataStructure::Sll { next, .. } => vec![next],
            DataStructure::Dll { next, prev, .. } | DataStructure::HeadedDll { next, prev } => {
                vec![next, prev]
            }
            DataStructure::Tree { left, right } => vec![left, right],
            DataStructure::TreeParent {
                left,
                right,
                parent,
            } => vec![left, right, parent],
            DataStructure::ListOfLists {
                next,
                down,
                sub_next,
            } => vec![next, down, sub_next],
        }
    }
}

impl fmt::Display for DataStructure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of checking one (invariant, binding) pair on all samples.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PairResult {
    /// The invariant.
    pub invariant: Invariant,
    /// Its role -> field binding.
    pub binding: Binding,
    /// Samples on which it holds non-vacuously / vacuously / is violated.
    pub supported: usize,
    pub vacuous: usize,
    pub violated: usize,
    /// For `doubly_linked(next, prev)`: how often program variables point to a list
    /// head (`next` a link, `prev` NULL) minus how often to a tail; used to orient a
    /// DLL (which of two symmetric fields is `next`) without looking at names. 0 for
    /// other invariants.
    pub head_score: i64,
}

impl PairResult {
    /// No sample violates it and at least one supports it.
    pub fn holds(&self) -> bool {
        self.violated == 0 && self.supported > 0
    }
    /// At least one sample supports it and fewer than half of the samples violate it
    /// (what the data-structure choice uses: robust to a few samples taken in the
    /// middle of an update or after a bug corrupted the structure).
    pub fn holds_mostly(&self) -> bool {
        self.supported > 0 && 2 * self.violated < self.supported + self.vacuous + self.violated
    }
}

/// The classification of one struct type from samples.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Classification {
    /// The classified struct type.
    pub strukt: StructId,
    /// Number of cells of the type in each sample (samples without any are skipped).
    pub sample_sizes: Vec<usize>,
    /// Every candidate pair with its counts.
    pub pairs: Vec<PairResult>,
    /// The most specific data structure supported.
    pub chosen: DataStructure,
}

impl Classification {
    /// The pairs that hold on the samples.
    pub fn holding(&self) -> impl Iterator<Item = &PairResult> {
        self.pairs.iter().filter(|p| p.holds())
    }
    /// The invariants for `SCGsFromExplicit` ([`crate::scg::Lattice::enabled`]): every
    /// pair that holds on most samples ([`PairResult::holds_mostly`], the rule the
    /// data-structure choice uses), bound to real field names; `binary_tree` and
    /// `tree_parent` are also given with `left`/`right` swapped (they are symmetric).
    pub fn holding_invariants(&self, prog: &Program) -> Vec<crate::scg::HoldingInvariant> {
        let mut out = Vec::new();
        for p in self.pairs.iter().filter(|p| p.holds_mostly()) {
            let names = p.binding.field_names(prog);
            out.push(crate::scg::HoldingInvariant {
                name: p.invariant.name().to_string(),
                fields: names.clone(),
            });
            if matches!(p.invariant, Invariant::BinaryTree | Invariant::TreeParent) {
                let mut sw = names;
                sw.swap(0, 1);
                out.push(crate::scg::HoldingInvariant {
                    name: p.invariant.name().to_string(),
                    fields: sw,
                });
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// True if `inv` holds with exactly this binding.
    pub fn holds(&self, inv: Invariant, fields: &[FieldRef]) -> bool {
        self.holding()
            .any(|p| p.invariant == inv && p.binding.fields == fields)
    }
}

/// Pointer fields of struct `s` (as [`FieldRef`]s) pointing to struct `target`.
fn ptr_fields(prog: &Program, s: StructId, target: StructId) -> Vec<FieldRef> {
    prog.structs.get(s).map_or(vec![], |d| {
        d.fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.ty.pointee_struct() == Some(target))
            .map(|(i, _)| FieldRef {
                strukt: s,
                field: i,
            })
            .collect()
    })
}

/// Every well-formed candidate (invariant, binding) for struct type `s`.
pub fn candidate_bindings(prog: &Program, s: StructId) -> Vec<(Invariant, Binding)> {
    let own = ptr_fields(prog, s, s);
    let mut out = Vec::new();
    let mut push = |inv: Invariant, f: Vec<FieldRef>| {
        let b = Binding::new(f);
        if binding_ok(prog, inv, &b) {
            out.push((inv, b));
        }
    };
    for &n in &own {
        push(Invariant::AcyclicList, vec![n]);
        push(Invariant::CyclicList, vec![n]);
    }
    for &a in &own {
        for &b in &own {
            if a != b {
                push(Invariant::DoublyLinked, vec![a, b]);
                push(Invariant::HeadedDll, vec![a, b]);
                if a < b {
                    push(Invariant::BinaryTree, vec![a, b]);
                    for &p in &own {
                        if p != a && p != b {
                            push(Invariant::TreeParent, vec![a, b, p]);
                        }
                    }
                }
            }
        }
    }
    // list_of_lists: next in A->A, down A->B, sub_next B->B.
    if let Some(d) = prog.structs.get(s) {
        for (di, df) in d.fields.iter().enumerate() {
            let Some(bt) = df.ty.pointee_struct() else {
                continue;
            };
            let down = FieldRef {
                strukt: s,
                field: di,
            };
            for &n in &own {
                for sub in ptr_fields(prog, bt, bt) {
                    if n != down && sub != down {
                        push(Invariant::ListOfLists, vec![n, down, sub]);
                    }
                }
            }
        }
    }
    out
}

/// Classifies struct type `s` on the given samples (each checked on all its cells of
/// the type, [`CellScope::All`]); samples without a cell of type `s` are ignored.
pub fn classify(prog: &Program, s: StructId, samples: &[&ExplicitState]) -> Classification {
    let relevant: Vec<&ExplicitState> = samples
        .iter()
        .copied()
        .filter(|h| !h.all_cells_of_type(s).is_empty())
        .collect();
    let sample_sizes = relevant
        .iter()
        .map(|h| h.all_cells_of_type(s).len())
        .collect();
    let pairs: Vec<PairResult> = candidate_bindings(prog, s)
        .into_iter()
        .map(|(inv, b)| {
            let mut r = PairResult {
                invariant: inv,
                binding: b,
                supported: 0,
                vacuous: 0,
                violated: 0,
                head_score: 0,
            };
            if inv == Invariant::DoublyLinked {
                r.head_score = relevant
                    .iter()
                    .map(|h| head_score(h, r.binding.fields[0], r.binding.fields[1]))
                    .sum();
            }
            for h in &relevant {
                match check(prog, h, inv, &r.binding, CellScope::All) {
                    Verdict::Holds => r.supported += 1,
                    Verdict::Vacuous => r.vacuous += 1,
                    Verdict::Violated => r.violated += 1,
                }
            }
            r
        })
        .collect();
    let chosen = choose(&pairs);
    Classification {
        strukt: s,
        sample_sizes,
        pairs,
        chosen,
    }
}

/// The most specific data structure among holding pairs (see module docs).
pub fn choose(pairs: &[PairResult]) -> DataStructure {
    let best = |inv: Invariant| -> Option<&PairResult> {
        let mut cands: Vec<&PairResult> = pairs
            .iter()
            .filter(|p| p.invariant == inv && p.holds())
            .collect();
        // Most supporting samples first, then smallest fields (stable sort keeps
        // candidate order, which is by field index).
        cands.sort_by(|a, b| {
            b.supported
                .cmp(&a.supported)
                .then(a.binding.cmp(&b.binding))
        });
        cands.first().copied()
    };
    let holds = |inv: Invariant, f: &[FieldRef]| {
        pairs
            .iter()
            .any(|p| p.invariant == inv && p.binding.fields == f && p.holds_mostly())
    };
    let cyclic =
        |n: FieldRef| holds(Invariant::CyclicList, &[n]) && !holds(Invariant::AcyclicList, &[n]);
    let listy =
        |n: FieldRef| holds(Invariant::CyclicList, &[n]) || holds(Invariant::AcyclicList, &[n]);
    if let Some(p) = best(Invariant::TreeParent) {
        let f = &p.binding.fields;
        return DataStructure::TreeParent {
            left: f[0],
            right: f[1],
            parent: f[2],
        };
    }
    if let Some(p) = best(Invariant::BinaryTree) {
        let f = &p.binding.fields;
        return DataStructure::Tree {
            left: f[0],
            right: f[1],
        };
    }
    if let Some(p) = best(Invariant::ListOfLists) {
        let f = &p.binding.fields;
        return DataStructure::ListOfLists {
            next: f[0],
            down: f[1],
            sub_next: f[2],
        };
    }
    // DLL: doubly_linked(next, prev) with next and prev both lists of the same kind.
    let mut dlls: Vec<&PairResult> = pairs
        .iter()
        .filter(|p| p.invariant == Invariant::DoublyLinked && p.holds_mostly())
        .filter(|p| listy(p.binding.fields[0]) && listy(p.binding.fields[1]))
        .collect();
    dlls.sort_by(|a, b| {
        b.supported
            .cmp(&a.supported)
            .then(b.head_score.cmp(&a.head_score))
            .then(a.binding.cmp(&b.binding))
    });
    if let Some(p) = dlls.first() {
        let f = &p.binding.fields;
        return DataStructure::Dll {
            next: f[0],
            prev: f[1],
            cyclic: cyclic(f[0]),
        };
    }
    // utlist's DL: the first node's prev closes a cycle along prev, not along next
    let headed = pairs
        .iter()
        .filter(|p| p.invariant == Invariant::HeadedDll && p.holds_mostly())
        .filter(|p| holds(Invariant::AcyclicList, &[p.binding.fields[0]]))
        .min_by(|a, b| {
            b.supported
                .cmp(&a.supported)
                .then(a.binding.cmp(&b.binding))
        });
    if let Some(p) = headed {
        let f = &p.binding.fields;
        return DataStructure::HeadedDll {
            next: f[0],
            prev: f[1],
        };
    }
    let mut slls: Vec<&PairResult> = pairs
        .iter()
        .filter(|p| {
            matches!(p.invariant, Invariant::AcyclicList | Invariant::CyclicList) && p.holds()
        })
        .collect();
    slls.sort_by(|a, b| {
        b.supported
            .cmp(&a.supported)
            .then(a.binding.cmp(&b.binding))
            .then(a.invariant.cmp(&b.invariant))
    });
    if let Some(p) = slls.first() {
        let n = p.binding.fields[0];
        return DataStructure::Sll {
            next: n,
            cyclic: cyclic(n),
        };
    }
    DataStructure::Unknown
}

/// Variables pointing to a cell with `next` non-NULL and `prev` NULL (a head), minus
/// those pointing to a cell with `next` NULL and `prev` non-NULL (a tail).
fn head_score(h: &ExplicitState, next: FieldRef, prev: FieldRef) -> i64 {
    let mut score = 0;
    for v in &h.vars {
        let Some(a) = v.obj() else { continue };
        let (Some(n), Some(p)) = (h.field(a, next), h.field(a, prev)) else {
            continue;
        };
        let link = |x: super::Value| x.obj().is_some();
        if link(n) && p.is_null() {
            score += 1;
        } else if n.is_null() && link(p) {
            score -= 1;
        }
    }
    score
}
