//! Algorithm 2 (`Abstract`): the explicit-heap samples taken at BuildART's threshold
//! are classified per struct type, E(σ) is restricted to the SCGs they support, and
//! the coarsest of them (anchored on the recognised structure) hands the type to the
//! shape domain; the ART is then rebuilt from the root.

use super::{own_ptr_fields, struct_name, HeapAbstraction, HeapState, PtrGroup, TypeMode};
use crate::art::{Art, ArtId};
use crate::cfa::{Program, StructId};
use crate::cpa::Cpa;
use crate::explicit::sample::SamplerConfig;
use crate::explicit::{classify, Classification, ExplicitState, SampleCollector, SampleThreshold};
use crate::scg::{Lattice, Scg, TrackingDef};
use std::collections::{BTreeMap, BTreeSet};

/// The roles of the recognised data structure bound to field names (`next` → `succ`),
/// to orient SCG bindings like the samples (a DLL's `next` is the field heads start
/// along).
fn chosen_roles(prog: &Program, ds: &crate::explicit::DataStructure) -> BTreeMap<String, String> {
    use crate::explicit::DataStructure as D;
    let names: &[&str] = match ds {
        D::Unknown => &[],
        D::Sll { .. } => &["next"],
        D::Dll { .. } | D::HeadedDll { .. } => &["next", "prev"],
        D::Tree { .. } => &["left", "right"],
        D::TreeParent { .. } => &["left", "right", "parent"],
        D::ListOfLists { .. } => &["next", "down", "sub_next"],
    };
    names
        .iter()
        .zip(ds.fields())
        .map(|(r, f)| (r.to_string(), prog.field(f).name.clone()))
        .collect()
}

/// How many roles of `m` are bound like in `roles`.
fn agreement(m: &Scg, roles: &BTreeMap<String, String>) -> usize {
    m.binding().map_or(0, |b| {
        b.iter().filter(|(r, f)| roles.get(*r) == Some(*f)).count()
    })
}

/// States the program sampler may explore for an abstraction before the threshold
/// ([`HeapAbstraction::abstract_early`]; about 0.15 s).
const EARLY_SAMPLE_BUDGET: usize = 20_000;

/// The threshold of the collector of samples taken elsewhere: 10 times as many.
pub(super) fn inner_threshold(th: SampleThreshold) -> SampleThreshold {
    SampleThreshold {
        samples: 10 * th.samples,
        ..th
    }
}

/// The classification of struct `s` among `found` (the program sampler's, run with
/// `cfg`); when the first deep heaps showed no `s` (they may all be deep in another
/// type: two lists of two types built in one loop), those of a sampler focused on `s`
/// (at most [`EARLY_SAMPLE_BUDGET`] states: a type may never be built deep), added to
/// `found`.
fn classification_of<'a>(
    prog: &Program,
    cfg: &SamplerConfig,
    found: &'a mut Vec<Classification>,
    s: StructId,
) -> Option<&'a Classification> {
    if !found.iter().any(|c| c.strukt == s) {
        let focused = SamplerConfig {
            focus: Some(s),
            state_budget: EARLY_SAMPLE_BUDGET.min(cfg.state_budget),
            ..cfg.clone()
        };
        let own = crate::explicit::sample_program(prog, &focused);
        found.extend(own.classifications.into_iter().filter(|c| c.strukt == s));
    }
    found.iter().find(|c| c.strukt == s)
}

impl HeapAbstraction {
    /// Algorithm 2's per-type step: restricts E(σ) to the SCGs the classification `c`
    /// supports and puts σ under shape tracking with the coarsest of them (anchored on
    /// the recognised structure). Returns that SCG; with none enabled, σ stays explicit
    /// for good (`ExplicitFinal`).
    fn abstract_type(&mut self, prog: &Program, lat: &Lattice, c: &Classification) -> Option<Scg> {
        let s = c.strukt;
        let holding = c.holding_invariants(prog);
        tracing::debug!("Abstract: holding invariants {holding:?}");
        if tracing::enabled!(tracing::Level::DEBUG) {
            for p in c.pairs.iter().filter(|p| !p.holds()) {
                tracing::debug!(
                    "Abstract: {:?} {:?}: {} supporting, {} vacuous, {} violating samples",
                    p.invariant,
                    p.binding,
                    p.supported,
                    p.vacuous,
                    p.violated
                );
            }
        }
        let name = struct_name(prog, s);
        let e: Vec<Scg> = self
            .enabled
            .restrict(&name, lat, &holding)
            .iter()
            .cloned()
            .collect();
        let d = self.initial_td(prog, s);
        let recognised = c.chosen.invariant().map(|i| i.name());
        match self.choose_coarsest(lat, &e, &d, &chosen_roles(prog, &c.chosen), recognised) {
            Some(m) => {
                tracing::info!(
                    "Abstract: struct {name} is a {} {:?}, fields in interpolants {:?} → {m}",
                    c.chosen,
                    chosen_roles(prog, &c.chosen),
                    self.mentioned_fields
                );
                self.set_shape(prog, s, m.clone(), d);
                Some(m)
            }
            None => {
                tracing::info!(
                    "Abstract: no SCG enabled for struct {name} ({}); stays explicit",
                    c.chosen
                );
                self.types.insert(s, TypeMode::ExplicitFinal);
                None
            }
        }
    }

    /// Abstract before the threshold: struct types of `groups` still on explicit heaps
    /// whose refinement learned nothing (the interpolants need field facts, which only
    /// the shape domain's field assertions track, and the ART found the error before
    /// BuildART's sampling threshold) are classified on the samples of the program
    /// sampler (`shapemc samples`, as `--scg maximal` does) and handed to the shape
    /// domain (not under `--scg maximal`). Returns what changed.
    pub(super) fn abstract_early(
        &mut self,
        prog: &Program,
        groups: &BTreeSet<PtrGroup>,
    ) -> Vec<String> {
        // `--scg maximal` chose its classes up front (Table 1's first column)
        if self.scg_mode == crate::scg::ScgMode::Maximal {
            return Vec::new();
        }
        let Some(lat) = self.lattice.clone() else {
            return Vec::new();
        };
        let pending: Vec<StructId> = self
            .types
            .iter()
            .filter(|(s, m)| **m == TypeMode::Explicit && groups.contains(&PtrGroup::Struct(**s)))
            .map(|(s, _)| *s)
            .collect();
        if pending.is_empty() {
            return Vec::new();
        }
        let report = self.program_samples(prog);
        let mut classifications = report.classifications;
        let cfg = self.sampler_config();
        let mut out = Vec::new();
        for s in pending {
            let Some(c) = classification_of(prog, &cfg, &mut classifications, s) else {
                continue;
            };
            self.abstractions += 1;
            if let Some(m) = self.abstract_type(prog, &lat, c) {
                out.push(format!(
                    "struct {}: abstracted before the sampling threshold → {m}",
                    struct_name(prog, s)
                ));
            }
        }
        out
    }

    /// The program sampler's report (`shapemc samples`) within a tenth of its default
    /// budget ([`EARLY_SAMPLE_BUDGET`]) and the run's deadline: it runs on a failing
    /// refinement or a sampling threshold, often of a program whose nondeterministic
    /// data keeps structures shallow.
    fn program_samples(&self, prog: &Program) -> crate::explicit::SampleReport {
        crate::explicit::sample_program(prog, &self.sampler_config())
    }

    /// The configuration of [`Self::program_samples`].
    fn sampler_config(&self) -> SamplerConfig {
        SamplerConfig {
            state_budget: EARLY_SAMPLE_BUDGET,
            deadline: self.deadline.get(),
            ..Default::default()
        }
    }

    /// `--scg maximal`: classify every struct type on explicit samples of the program
    /// (the sampler of `shapemc samples`), enable the SCGs the samples support and
    /// shape-track every pointer of the type with the finest of them.
    pub(super) fn start_maximal(&mut self, prog: &Program) {
        let Some(lat) = &self.lattice else { return };
        let cfg = SamplerConfig {
            deadline: self.options.sample_deadline,
            ..Default::default()
        };
        let report = crate::explicit::sample_program(prog, &cfg);
        let mut classifications = report.classifications;
        if !report.budget_exhausted {
            for s in 0..prog.structs.len() {
                if !own_ptr_fields(prog, s).is_empty() {
                    classification_of(prog, &cfg, &mut classifications, s);
                }
            }
        }
        let mut chosen = Vec::new();
        for c in &classifications {
            let s = c.strukt;
            if own_ptr_fields(prog, s).is_empty() {
                continue;
            }
            let holding = c.holding_invariants(prog);
            let e: Vec<Scg> = self
                .enabled
                .restrict(&struct_name(prog, s), lat, &holding)
                .iter()
                .cloned()
                .collect();
            // the finest: most roles, then most families, then most predicates
            let d = self.initial_td(prog, s);
            let roles = chosen_roles(prog, &c.chosen);
            let best = e.into_iter().max_by_key(|m| {
                (
                    m.binding().map_or(0, |b| b.len()),
                    m.binding().map_or(vec![], |b| {
                        b.values()
                            .map(|f| self.field_reads.get(f).copied().unwrap_or(0))
                            .collect::<Vec<_>>()
                    }),
                    agreement(m, &roles),
                    m.families().count(),
                    lat.generate(m, &d).num_preds(),
                    std::cmp::Reverse(m.clone()),
                )
            });
            if let Some(m) = best {
                chosen.push((s, m, d));
            }
        }
        for (s, m, d) in chosen {
            self.set_shape(prog, s, m, d);
        }
    }

    /// Among the coarsest SCGs of `e` (no families), the one binding most fields the
    /// interpolants mentioned, then the fewest roles, then oriented by how often the
    /// interpolants use each bound field, then by how often the program reads it, then
    /// like the recognised data structure
    /// (`roles`), then the fewest predicates.
    ///
    /// Anchoring: when the samples were recognised as a data structure whose invariant
    /// some enabled SCG `requires`, only SCGs at least as coarse as one of those are
    /// candidates. Otherwise a coarser SCG of an unrelated structure (an sll along a
    /// tree's parent field) could be picked, from which FineTune never reaches the
    /// recognised structure's SCGs (they are not finer in the lattice).
    fn choose_coarsest(
        &self,
        lat: &Lattice,
        e: &[Scg],
        d: &TrackingDef,
        roles: &BTreeMap<String, String>,
        recognised: Option<&str>,
    ) -> Option<Scg> {
        let anchors: Vec<&Scg> = match recognised {
            Some(inv) => e
                .iter()
                .filter(|c| {
                    c.structure()
                        .and_then(|n| lat.library().structure(n))
                        .is_some_and(|st| st.requires.iter().any(|r| r.invariant == inv))
                })
                .collect(),
            None => Vec::new(),
        };
        let e: Vec<Scg> = if anchors.is_empty() {
            e.to_vec()
        } else {
            e.iter()
                .filter(|m| anchors.iter().any(|c| lat.leq(c, m)))
                .cloned()
                .collect()
        };
        let cands: Vec<&Scg> = e.iter().filter(|m| m.families().count() == 0).collect();
        let cands: Vec<&Scg> = if cands.is_empty() {
            e.iter().collect()
        } else {
            cands
        };
        cands
            .into_iter()
            .max_by_key(|m| {
                let b = m.binding().cloned().unwrap_or_default();
                let hits = b
                    .values()
                    .filter(|f| self.mentioned_fields.contains_key(*f))
                    .count();
                // orientation: the role bound to the field the interpolants use most
                let freq: Vec<usize> = b
                    .values()
                    .map(|f| self.mentioned_fields.get(f).copied().unwrap_or(0))
                    .collect();
                (
                    hits,
                    std::cmp::Reverse(b.len()),
                    freq,
                    b.values()
                        .map(|f| self.field_reads.get(f).copied().unwrap_or(0))
                        .collect::<Vec<_>>(),
                    agreement(m, roles),
                    std::cmp::Reverse(lat.generate(m, d).num_preds()),
                    std::cmp::Reverse((*m).clone()),
                )
            })
            .cloned()
    }

    /// Samples are preferred where data structures are consistent. Heaps inside a
    /// statement (`statement_starts` in `cegar::heap`: the steps of one statement,
    /// e.g. of a list macro's expansion, share its position) are never taken: the
    /// first deep heap a breadth-first search meets is mostly one whose newest node is
    /// half linked. Heaps at loop heads and in the entry function (call stack of at
    /// most `main`'s frame) go to the main collector, which fires at 5 samples; heaps
    /// elsewhere (often in the middle of an update: a node whose parent pointer is set
    /// but that is not linked yet breaks `tree_parent`) only count when 10 times as
    /// many were seen.
    pub(super) fn threshold_reached(&self, node: &crate::art::ArtNode<HeapState>) -> bool {
        if !self.undecided_explicit() {
            return false;
        }
        let loop_head = self.loop_heads.contains(&node.loc);
        if !loop_head && !self.statement_starts.contains(&node.loc) {
            return false;
        }
        let stable = loop_head || node.stack.len() <= 1;
        if stable {
            self.collector.borrow_mut().offer(&node.state.explicit);
        } else {
            self.inner_collector
                .borrow_mut()
                .offer(&node.state.explicit);
        }
        self.collector.borrow().done() || self.inner_collector.borrow().done()
    }

    /// Algorithm 2 (`Abstract`). Variant: instead of replacing explicit heaps by
    /// HeapToShape results in place, the ART is rebuilt from the root under the new
    /// precision (simpler and sound; the shape regions are then computed by the shape
    /// post from the start).
    pub(super) fn abstract_samples(
        &mut self,
        prog: &Program,
        art: &mut Art<HeapState>,
        _node: ArtId,
    ) -> Result<(), String> {
        let Some(lat) = self.lattice.clone() else {
            return Err("explicit heap threshold without an SCG library".into());
        };
        self.abstractions += 1;
        let stable = self.collector.borrow();
        let inner = self.inner_collector.borrow();
        let samples: Vec<ExplicitState> = if stable.done() {
            stable.kept.iter().map(|(h, _, _)| h.clone()).collect()
        } else {
            stable
                .kept
                .iter()
                .chain(&inner.kept)
                .map(|(h, _, _)| h.clone())
                .collect()
        };
        tracing::info!(
            "Abstract: {} samples ({} at loop heads or in main, {} elsewhere; {} loop heads)",
            samples.len(),
            stable.kept.len(),
            samples.len() - stable.kept.len().min(samples.len()),
            self.loop_heads.len()
        );
        drop((stable, inner));
        for h in &samples {
            tracing::trace!("Abstract: sample {}", h.display(prog));
        }
        let refs: Vec<&ExplicitState> = samples.iter().collect();
        let pending: Vec<StructId> = self
            .types
            .iter()
            .filter(|(_, m)| **m == TypeMode::Explicit)
            .map(|(s, _)| *s)
            .collect();
        let mut switched = false;
        let mut program_samples = None;
        for s in pending {
            if !refs.iter().any(|h| !h.all_cells_of_type(s).is_empty()) {
                continue;
            }
            let mut c = classify(prog, s, &refs);
            if c.chosen == crate::explicit::DataStructure::Unknown {
                // the ART's samples hold only the fields its precision tracks (⊤
                // elsewhere), which may break every invariant: the program sampler's
                // concrete samples then tell the structure, as before the threshold
                let report = program_samples.get_or_insert_with(|| self.program_samples(prog));
                if let Some(d) = report
                    .classifications
                    .iter()
                    .find(|d| d.strukt == s && d.chosen != crate::explicit::DataStructure::Unknown)
                {
                    tracing::info!(
                        "Abstract: the ART's samples show no data structure, the program's: {}",
                        d.chosen
                    );
                    c = d.clone();
                }
            }
            switched |= self.abstract_type(prog, &lat, &c).is_some();
        }
        if !switched {
            // Nothing to abstract (e.g. the deep heap is of a type without SCGs): stop
            // sampling those types.
            for m in self.types.values_mut() {
                if *m == TypeMode::Explicit {
                    *m = TypeMode::ExplicitFinal;
                }
            }
        }
        *self.collector.borrow_mut() = SampleCollector::new(self.sample_threshold);
        *self.inner_collector.borrow_mut() =
            SampleCollector::new(inner_threshold(self.sample_threshold));
        *art = Art::new(prog, self.cpa.initial(prog, &self.prec));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::scg::HoldingInvariant;

    fn library() -> Lattice {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scg-library");
        Lattice::new(crate::scg::Library::load_dir(&dir).expect("library loads"))
    }

    #[test]
    fn the_coarsest_choice_is_anchored_on_the_recognised_structure() {
        // gdsl/treep_rotate_left: a tree with parent pointers whose interpolants only
        // mention `father`; without the anchor the sll along `father` won (bug fix).
        let prog = Program::new("t.c");
        let lat = library();
        let holding = [
            HoldingInvariant::new("acyclic_list", &["father"]),
            HoldingInvariant::new("acyclic_list", &["l"]),
            HoldingInvariant::new("binary_tree", &["l", "r"]),
            HoldingInvariant::new("tree_parent", &["l", "r", "father"]),
        ];
        let e = lat.enabled(&holding);
        let mut a = HeapAbstraction::new(
            &prog,
            PredScope::Location,
            1000,
            crate::scg::ScgMode::Refine,
            Some(lat.clone()),
            HeapOptions::default(),
        );
        a.mentioned_fields.insert("father".into(), 15);
        let d = TrackingDef::new(["p"], ["p"], Vec::<&str>::new());
        let roles = BTreeMap::new();
        let free = a.choose_coarsest(&lat, &e, &d, &roles, None).unwrap();
        assert_eq!(free.to_string(), "sll{}(next=father)");
        let anchored = a
            .choose_coarsest(&lat, &e, &d, &roles, Some("tree_parent"))
            .unwrap();
        assert!(
            anchored.structure() == Some("tree") || anchored.structure() == Some("tree-parent"),
            "{anchored}"
        );
        // every tree-parent SCG is reachable from it by FineTune (finer or equal)
        assert!(e
            .iter()
            .filter(|m| m.structure() == Some("tree-parent"))
            .any(|m| lat.leq(m, &anchored)));
    }

    #[test]
    fn the_statements_of_a_macro_expansion_have_no_statement_start_between_them() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.c");
        std::fs::write(
            &f,
            "#define LINK(a, b) do { (a)->next = (b); (b)->prev = (a); } while (0)\n\
             struct n { struct n *next, *prev; };\n\
             int main(void) {\n\
               struct n x, y;\n\
               x.next = 0;\n\
               LINK(&x, &y);\n\
               y.next = 0;\n\
               return 0;\n\
             }\n",
        )
        .unwrap();
        let prog = crate::frontend::parse_file(&f, &Default::default()).expect("parses");
        let starts = statement_starts(&prog);
        let at_line = |l: u32| -> Vec<crate::cfa::Node> {
            prog.graph
                .node_indices()
                .filter(|&n| {
                    prog.graph
                        .edges_directed(n, petgraph::Direction::Outgoing)
                        .any(|e| e.weight().src.line == l)
                        && prog
                            .graph
                            .edges_directed(n, petgraph::Direction::Incoming)
                            .any(|e| e.weight().src.line == l)
                })
                .collect()
        };
        // between the two stores of LINK (line 6): not a statement start
        let inside = at_line(6);
        assert!(!inside.is_empty());
        assert!(inside.iter().all(|n| !starts.contains(n)));
        // the location where LINK begins (after line 5's store) is one
        assert!(prog.graph.node_indices().any(|n| {
            starts.contains(&n)
                && prog
                    .graph
                    .edges_directed(n, petgraph::Direction::Outgoing)
                    .any(|e| e.weight().src.line == 6)
        }));
    }

    #[test]
    fn loop_heads_are_the_targets_of_back_edges() {
        let f =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/shape/sll_reverse.c");
        let prog = crate::frontend::parse_file(&f, &Default::default()).expect("parses");
        let heads = loop_heads(&prog);
        assert!(!heads.is_empty());
        let src = std::fs::read_to_string(&f).unwrap();
        let while_lines: BTreeSet<u32> = src
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("while") || l.contains("for ("))
            .map(|(i, _)| i as u32 + 1)
            .collect();
        for h in &heads {
            assert!(
                while_lines.contains(&prog.graph[*h].src.line),
                "loop head at line {} is not a loop",
                prog.graph[*h].src.line
            );
        }
    }
}
