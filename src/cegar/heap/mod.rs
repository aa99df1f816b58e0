//! The heap part of the CEGAR loop (paper Algorithms 2 and 3): a combined abstraction
//! of predicate abstraction × explicit heap, refined from interpolants.
//!
//! - The CPA ([`HeapCpa`]) is the product of [`PredAbs`](crate::predabs::PredAbs) (integer and pointer
//!   (dis)equality predicates) and [`ExplicitCpa`](crate::explicit::ExplicitCpa) (explicit heaps, paper §2.2). States
//!   and precisions are serialisable, so a complete ART becomes a certificate that
//!   `check-certificate` re-checks with a fresh [`HeapCpa`] ([`check_heap_certificate`]).
//! - Refinement ([`HeapAbstraction::refine`], Algorithm 3 step 1 and the first branch
//!   of step 2): integer facts of the interpolants become predicates
//!   ([`refine_predicates`]); a pointer mentioned by an atom (as an operand, dereferenced,
//!   or as an alias) whose *pointer group* (its pointee struct type, or "other" for
//!   `void*`, `int*`, ...) is not tracked yet switches that group to explicit tracking.
//!   **Granularity**: Θ is refined per pointer group and globally (every location):
//!   a pointer variable tracked only at the interpolant's locations would be ⊤ where
//!   its value is computed (the list is built in another function, copied through
//!   front-end temporaries), so the explicit heap would never see the structure; this is
//!   the granularity at which Algorithm 2 switches a struct type from explicit to shape
//!   tracking ("remove all x from Θ(l) s.t. type(x) = type(p)"). The pivot of such a
//!   refinement is the root (the ART is rebuilt; it happens at most once per group).
//!   When neither new predicates nor new pointer groups are found, the integer variables
//!   of the atoms are tracked explicitly (values loaded from the heap are invisible to
//!   predicate abstraction, which havocs loads); only then does the refinement fail.
//! - Threshold (BuildART's condition (c)): 5 distinct explicit heaps of depth ≥ 4 at
//!   loop heads or in `main` (50 elsewhere). `Abstract` (Algorithm 2) classifies them,
//!   restricts E(σ), picks the coarsest SCG anchored on the recognised structure and
//!   hands the type to the shape domain (rebuilding the ART from the root). Without an
//!   SCG library the explicit analysis runs without threshold (fixed-size heaps
//!   complete; unbounded ones end at a limit → UNKNOWN, bugs are still found).
//! - Refinement of shape-tracked types: tracking definition first, then FineTune
//!   (oracle: the shape replay of the path); when neither applies the type falls back
//!   to explicit heaps without threshold.
//!
//! Soundness: SAFE and UNSAFE come only from [`super::model_check`], which checks the
//! certificate with a fresh CPA and replays counterexamples.
//!
//! Files: this one holds [`HeapAbstraction`] (its state, the precision bookkeeping and
//! the [`Abstraction`] impl); `cpa` the product CPA [`HeapCpa`]; `abstracting`
//! Algorithm 2 (threshold, samples → shape classes); `refine` Algorithm 3 (tracking
//! definitions, FineTune and its path-replay oracle, merge/join/counter refinements);
//! [`cert`] the compact certificate body and the validation of heap certificates.

mod abstracting;
pub mod cert;
mod cpa;
mod refine;

pub use cert::{
    check_heap_certificate, check_heap_certificate_until, validate_explicit, HeapCertificate,
};
pub use cpa::{HeapCpa, HeapPrec, HeapState, HEAP_CPA_NAME, HEAP_SPLIT_CPA_NAME};

use super::{Abstraction, RefineInput, Refinement};
use crate::art::{Art, ArtId};
use crate::cfa::{Node, Program, StructId, VarId};
use crate::explicit::{SampleCollector, SampleThreshold};
use crate::predabs::PredScope;
use crate::scg::{EnabledSets, Lattice, Scg, TrackingDef};
use crate::shape::ShapePrec;
use crate::tvla::ShapeClass;
use abstracting::inner_threshold;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Experiment switches of the heap abstraction (`verify --shape-joined`,
/// `--no-heap-pointer-predicates`, `--separate-mentioned-only`); the defaults are what measured
/// best on the gdsl benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapOptions {
    /// One joined region of shape structures per ART node instead of one structure
    /// per node (measured with merging on: same scoreboard verdicts, but
    /// gdsl/bintree_rotate_left does not finish: merged regions only join within the
    /// names they already have and keep many fat structures per node).
    pub shape_joined: bool,
    /// Keep one structure per ART node for the whole run: never switch to joined
    /// regions when most posts touch one of several independent structures
    /// ([`HeapAbstraction::join_regions_if_decomposed`]).
    pub shape_split: bool,
    /// Drop interpolant predicates over pointers the heap domains already track
    /// (the shape domain then decides their (dis)equalities alone).
    pub filter_heap_pointer_predicates: bool,
    /// Only the pointers the interpolants mentioned are separating when shape
    /// tracking starts (the paper's Ts, grown by tracking-definition refinement);
    /// default: every `struct σ *` variable (measured: the gdsl proofs need fewer
    /// refinements and no per-pointer reachability, e.g. treep_rotate_left 13 s with
    /// `tree-parent{cancel, share}` against a time-out with `{cancel, reach, share}`).
    pub separate_mentioned_only: bool,
    /// Keep every shape region a set of distinct structures (no partial join). By
    /// default regions join structures with equal node names
    /// ([`crate::tvla::ShapeClass::partial_join`]) until a refinement of the type fails.
    pub no_partial_join: bool,
    /// FineTune results go only to the functions of the error path that need them
    /// (per-function classes, see [`HeapAbstraction::fn_scg`]); default: everywhere.
    pub local_scg: bool,
    /// Field equalities covered by a range of Φ name summary nodes only once a
    /// refinement needs them ([`cert::ClassRecipe::value_names`],
    /// [`HeapAbstraction::value_named`]); default: always.
    pub lazy_value_names: bool,
    /// A shape type whose refinement fails is not sent back to explicit heaps: the
    /// refinement fails (`verify --no-explicit-fallback`).
    pub no_explicit_fallback: bool,
    /// Shape classes track possibly uninitialised or dangling fields with per-variable
    /// `uninit` flags (a field becomes unknown in every cell once the variable dies);
    /// default: the per-cell `un[f]` predicates ([`crate::shape::with_uninit_preds`]),
    /// measured 9 more correct svcomp tasks and no loss (scoreboard 81 against 72).
    pub per_variable_uninit: bool,
    /// When the samplers must stop (`--scg maximal`'s up-front sampling runs before the
    /// CEGAR loop's time limit is set): `verify`'s time limit.
    pub sample_deadline: Option<std::time::Instant>,
}

/// The group a pointer variable belongs to for tracking decisions: the struct type it
/// points to, or `Other` (pointers to scalars, `void*`, pointers to pointers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PtrGroup {
    Struct(StructId),
    Other,
}

impl PtrGroup {
    /// The group of variable `x`, or `None` if `x` is not a pointer (or does not exist).
    pub fn of(prog: &Program, x: VarId) -> Option<PtrGroup> {
        let v = prog.vars.get(x)?;
        if !v.ty.is_ptr() {
            return None;
        }
        Some(match v.ty.pointee_struct() {
            Some(s) => PtrGroup::Struct(s),
            None => PtrGroup::Other,
        })
    }
    /// `struct node` or `other pointers`.
    pub fn name(self, prog: &Program) -> String {
        match self {
            PtrGroup::Struct(s) => prog
                .structs
                .get(s)
                .map_or_else(|| format!("struct #{s}"), |d| format!("struct {}", d.name)),
            PtrGroup::Other => "other pointers".into(),
        }
    }
}

impl fmt::Display for PtrGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PtrGroup::Struct(s) => write!(f, "struct#{s}"),
            PtrGroup::Other => write!(f, "other"),
        }
    }
}

/// How the pointers of a struct type are tracked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeMode {
    /// On explicit heaps (sampling until the threshold).
    Explicit,
    /// On explicit heaps for good: no SCG is enabled by the samples.
    ExplicitFinal,
    /// By the shape domain with this SCG and tracking definition (shape type (σ, m, D)).
    Shape { scg: Scg, d: TrackingDef },
}

/// The combined abstraction under CEGAR (see the module documentation).
#[derive(Debug)]
pub struct HeapAbstraction {
    pub cpa: HeapCpa,
    pub prec: HeapPrec,
    pub scope: PredScope,
    /// Z3 timeout per abstraction query (ms).
    pub timeout_ms: u32,
    /// Experiment switches.
    pub options: HeapOptions,
    /// Upper bound on atoms taken from one interpolant.
    pub max_atoms: usize,
    /// Pointer groups tracked on explicit heaps.
    pub explicit_groups: BTreeSet<PtrGroup>,
    /// Integer variables tracked explicitly (fallback refinement).
    pub explicit_ints: BTreeSet<VarId>,
    /// Integer variables known to take few values, tracked explicitly from the start
    /// ([`HeapAbstraction::track_ints_explicitly`]); they never become counters.
    pub finite_ints: BTreeSet<VarId>,
    /// How SCGs are chosen once the shape domain takes over.
    pub scg_mode: crate::scg::ScgMode,
    /// The mode of each struct type whose pointers are tracked.
    pub types: BTreeMap<StructId, TypeMode>,
    /// Shape-tracked types whose regions no longer use the partial join (a refinement
    /// failed with it).
    pub unjoined: BTreeSet<StructId>,
    /// [`crate::tvla::transfer::frame_counts`] when the run started (the share of
    /// framed posts is measured over the run).
    pub frame_seen: (u64, u64),
    /// Shape-tracked types whose field equalities `f == k` that a range of Φ covers
    /// are abstraction predicates after all ([`cert::ClassRecipe::value_names`]): a
    /// refinement found that the path needs cells told apart by their values.
    pub value_named: BTreeSet<StructId>,
    /// The first SCG each type was shape-tracked with (where a restart with
    /// [`HeapAbstraction::value_named`] begins).
    pub first_scg: BTreeMap<StructId, Scg>,
    /// Counters of the shape-tracked struct types (see `shape::numeric`): program
    /// integers whose relation to the number of cells a proof needs. Added by a
    /// "count" refinement.
    pub counters: BTreeMap<StructId, Vec<String>>,
    /// Per-function SCGs of shape-tracked types, each finer than the type's SCG in
    /// [`TypeMode::Shape`]: FineTune's result is kept only in the functions of the error
    /// path that need it (the paper's precision is per location, Ψ(l)); every location
    /// of such a function gets the finer class as a [`ShapePrec::set_at`] override.
    pub fn_scg: BTreeMap<StructId, BTreeMap<crate::cfa::FuncId, Scg>>,
    /// The SCG lattice M (None: the library did not load; no shape analysis).
    pub lattice: Option<Lattice>,
    /// E(σ), by struct name.
    pub enabled: EnabledSets,
    /// Pointer variables mentioned by interpolants so far (candidates for Ts).
    pub mentioned: BTreeSet<VarId>,
    /// Fields mentioned by interpolants so far (to choose among the coarsest SCGs).
    pub mentioned_fields: BTreeMap<String, usize>,
    /// How often the program reads each pointer field (`x = y->f`): the field a program
    /// walks along is the `next` of its lists (orientation of SCG bindings).
    pub field_reads: BTreeMap<String, usize>,
    /// BuildART's condition (c).
    pub sample_threshold: SampleThreshold,
    collector: RefCell<SampleCollector>,
    /// Samples taken elsewhere (see [`Abstraction::threshold`]).
    inner_collector: RefCell<SampleCollector>,
    /// Loop heads of the program (targets of DFS back edges from function entries).
    loop_heads: BTreeSet<Node>,
    /// Locations between two source statements ([`statement_starts`]).
    statement_starts: BTreeSet<Node>,
    /// The wall-clock deadline of the run (FineTune stops asking its oracle after it).
    deadline: std::cell::Cell<Option<std::time::Instant>>,
    /// The body of the last certificate [`Abstraction::seal`] produced (what `verify`
    /// writes): taken with [`HeapAbstraction::take_sealed`].
    sealed: RefCell<Option<cert::HeapBody>>,
    /// Whether a SAFE verdict keeps its certificate body (`verify --certificate`);
    /// default true.
    pub keep_certificate: bool,
    /// Counters for the report.
    pub abstractions: usize,
    pub fine_tune_calls: usize,
    pub fine_tune_oracle_calls: usize,
}

/// The shape precision `base` with the class of `recipe` (its type and SCG)
/// everywhere except in the functions of `local`, whose locations get the recipe with
/// their own SCG.
fn shape_prec_for(
    prog: &Program,
    lat: &Lattice,
    base: &ShapePrec,
    recipe: &cert::ClassRecipe,
    local: &BTreeMap<crate::cfa::FuncId, Scg>,
) -> ShapePrec {
    let (s, m) = (recipe.strukt, &recipe.scg);
    let class = |m: &Scg| {
        cert::ClassRecipe {
            scg: m.clone(),
            ..recipe.clone()
        }
        .generate(prog, lat)
    };
    let mut p = base.clone();
    p.set_global(s, class(m));
    for o in p.at.values_mut() {
        o.remove(&s);
    }
    p.at.retain(|_, o| !o.is_empty());
    let classes: BTreeMap<crate::cfa::FuncId, ShapeClass> =
        local.iter().map(|(f, c)| (*f, class(c))).collect();
    for n in prog.graph.node_indices() {
        if let Some(c) = classes.get(&prog.graph[n].func) {
            p.set_at(n, s, c.clone());
        }
    }
    p
}

/// The pointer fields of struct `s` that point to `s` (the fields SCG roles bind to).
fn own_ptr_fields(prog: &Program, s: StructId) -> Vec<String> {
    prog.structs.get(s).map_or(vec![], |d| {
        d.fields
            .iter()
            .filter(|f| f.ty.pointee_struct() == Some(s))
            .map(|f| f.name.clone())
            .collect()
    })
}

/// The loop heads of `prog`: targets of back edges of a depth-first search from every
/// function entry (intraprocedural edges).
fn loop_heads(prog: &Program) -> BTreeSet<Node> {
    use petgraph::visit::{depth_first_search, DfsEvent};
    let entries: Vec<Node> = prog
        .graph
        .node_indices()
        .filter(|&n| prog.graph[n].kind == crate::cfa::LocKind::FuncEntry)
        .collect();
    let mut out = BTreeSet::new();
    depth_first_search(&prog.graph, entries, |e| {
        if let DfsEvent::BackEdge(_, to) = e {
            out.insert(to);
        }
    });
    out
}

/// The locations between two source statements: every edge into the location comes
/// from another source position than every edge out of it. The steps a statement is
/// lowered to (temporaries, the statements of a macro expansion, which all carry the
/// position of the macro's use) share one position, so the locations inside them are
/// excluded: a data structure there is often in the middle of an update.
fn statement_starts(prog: &Program) -> BTreeSet<Node> {
    use petgraph::Direction::{Incoming, Outgoing};
    prog.graph
        .node_indices()
        .filter(|&n| {
            prog.graph.edges_directed(n, Incoming).all(|i| {
                prog.graph
                    .edges_directed(n, Outgoing)
                    .all(|o| i.weight().src != o.weight().src)
            })
        })
        .collect()
}

fn struct_name(prog: &Program, s: StructId) -> String {
    prog.structs
        .get(s)
        .map_or_else(|| format!("#{s}"), |d| d.name.clone())
}

impl HeapAbstraction {
    /// The initial abstraction: no predicates, Θ = ∅, every struct type untracked
    /// (`--scg refine`), or every recursive struct type shape-tracked with the finest SCG
    /// its samples enable (`--scg maximal`, Table 1's first column). `lattice` is the
    /// SCG library (None disables shape analysis: explicit heaps only).
    pub fn new(
        prog: &Program,
        scope: PredScope,
        timeout_ms: u32,
        scg_mode: crate::scg::ScgMode,
        lattice: Option<Lattice>,
        options: HeapOptions,
    ) -> Self {
        let th = SampleThreshold::default();
        let mut a = HeapAbstraction {
            cpa: HeapCpa::new(prog, timeout_ms, !options.shape_joined),
            prec: HeapPrec {
                merge_at: loop_heads(prog),
                ..Default::default()
            },
            scope,
            timeout_ms,
            options,
            max_atoms: 64,
            explicit_groups: BTreeSet::new(),
            explicit_ints: BTreeSet::new(),
            finite_ints: BTreeSet::new(),
            scg_mode,
            types: BTreeMap::new(),
            unjoined: BTreeSet::new(),
            frame_seen: crate::tvla::transfer::frame_counts(),
            value_named: BTreeSet::new(),
            first_scg: BTreeMap::new(),
            counters: BTreeMap::new(),
            fn_scg: BTreeMap::new(),
            lattice,
            enabled: EnabledSets::new(),
            mentioned: BTreeSet::new(),
            mentioned_fields: BTreeMap::new(),
            field_reads: prog
                .graph
                .edge_weights()
                .filter_map(|e| match &e.op {
                    crate::cfa::Op::Load { field, .. } => Some(prog.field(*field).name.clone()),
                    _ => None,
                })
                .fold(BTreeMap::new(), |mut m, f| {
                    *m.entry(f).or_insert(0usize) += 1;
                    m
                }),
            sample_threshold: th,
            collector: RefCell::new(SampleCollector::new(th)),
            inner_collector: RefCell::new(SampleCollector::new(inner_threshold(th))),
            loop_heads: loop_heads(prog),
            statement_starts: statement_starts(prog),
            deadline: std::cell::Cell::new(None),
            sealed: RefCell::new(None),
            keep_certificate: true,
            abstractions: 0,
            fine_tune_calls: 0,
            fine_tune_oracle_calls: 0,
        };
        if scg_mode == crate::scg::ScgMode::Maximal {
            a.start_maximal(prog);
        }
        a
    }

    /// The tracking definition a struct type starts shape tracking with: T = every
    /// pointer variable of type `struct σ *` (front-end temporaries included: the
    /// shape domain only sees values held by tracked pointers), Ts = T, or the pointers
    /// the interpolants mentioned so far with [`HeapOptions::separate_mentioned_only`]
    /// (except under `--scg maximal`).
    fn initial_td(&self, prog: &Program, s: StructId) -> TrackingDef {
        let all = crate::shape::pointer_vars(prog, s);
        let sep: Vec<String> = if self.scg_mode == crate::scg::ScgMode::Maximal
            || !self.options.separate_mentioned_only
        {
            all.clone()
        } else {
            self.mentioned
                .iter()
                .filter(|&&x| PtrGroup::of(prog, x) == Some(PtrGroup::Struct(s)))
                .map(|&x| prog.vars[x].name.clone())
                .collect()
        };
        TrackingDef::new(all, sep, Vec::<String>::new())
    }

    /// Puts struct type `s` under shape tracking with SCG `m` and tracking definition
    /// `d` (global class), removing its pointers from the explicit abstraction.
    fn set_shape(&mut self, prog: &Program, s: StructId, m: Scg, d: TrackingDef) -> bool {
        let Some(lat) = &self.lattice else {
            return false;
        };
        self.first_scg.entry(s).or_insert_with(|| m.clone());
        let local = self.fn_scg.get(&s).cloned().unwrap_or_default();
        let p = shape_prec_for(prog, lat, &self.prec.shape, &self.recipe(s, &m, &d), &local);
        let changed = self.prec.shape != p;
        self.prec.shape = p;
        if changed {
            // a new class changes what a merge loses: every loop head may merge again
            // (the ART restarts; bounded, since classes only get finer)
            self.prec.merge_at = self.loop_heads.clone();
        }
        for x in 0..prog.vars.len() {
            if PtrGroup::of(prog, x) == Some(PtrGroup::Struct(s)) {
                self.prec.explicit.remove_everywhere(x);
            }
        }
        self.explicit_groups.remove(&PtrGroup::Struct(s));
        let old = self.types.insert(s, TypeMode::Shape { scg: m, d });
        changed || !matches!(old, Some(TypeMode::Shape { .. }))
    }

    /// The recipe of every shape class the current precision uses (per struct type,
    /// the type's SCG and, under `--local-scg`, each per-function SCG), which
    /// certificates name classes by ([`cert`]).
    pub fn class_recipes(&self) -> Vec<cert::ClassRecipe> {
        let mut out = Vec::new();
        for (s, m) in &self.types {
            let TypeMode::Shape { scg, d } = m else {
                continue;
            };
            let local = self.fn_scg.get(s).into_iter().flat_map(|f| f.values());
            for m in std::iter::once(scg).chain(local) {
                let r = self.recipe(*s, m, d);
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        out
    }

    /// The body of the certificate the last SAFE verdict checked (see
    /// [`cert`]), once.
    pub fn take_sealed(&self) -> Option<cert::HeapBody> {
        self.sealed.take()
    }

    /// SHA-256 of the SCG library the classes come from (None: no library).
    pub fn library_sha256(&self) -> Option<String> {
        self.lattice
            .as_ref()
            .map(|l| l.library().sha256().to_string())
    }

    /// Where the SCG library the classes come from was read from (None: no library).
    pub fn library_origin(&self) -> Option<String> {
        self.lattice
            .as_ref()
            .map(|l| l.library().origin().to_string())
    }

    /// The recipe of type `s`'s class at SCG `m` and tracking definition `d` under the
    /// current flags (partial join, value names, `un[f]` predicates, counters).
    pub(super) fn recipe(&self, s: StructId, m: &Scg, d: &TrackingDef) -> cert::ClassRecipe {
        cert::ClassRecipe {
            strukt: s,
            scg: m.clone(),
            d: d.clone(),
            partial_join: self.joins(s),
            value_names: !self.options.lazy_value_names || self.value_named.contains(&s),
            uninit: !self.options.per_variable_uninit,
            counters: self.counters.get(&s).cloned().unwrap_or_default(),
        }
    }

    /// Whether the regions of type `s` use the partial join: by default under SCG
    /// refinement, until a refinement of `s` fails with it; never under `--scg maximal`.
    fn joins(&self, s: StructId) -> bool {
        !self.options.no_partial_join
            && self.scg_mode != crate::scg::ScgMode::Maximal
            && !self.unjoined.contains(&s)
    }

    /// Switches pointer group `g` to explicit tracking: every pointer variable of the
    /// group is tracked at every location. Returns whether Θ changed.
    pub fn track_group(&mut self, prog: &Program, g: PtrGroup) -> bool {
        if let PtrGroup::Struct(s) = g {
            if self.types.contains_key(&s) {
                return false;
            }
            self.types.insert(s, TypeMode::Explicit);
        }
        if !self.explicit_groups.insert(g) {
            return false;
        }
        let mut changed = false;
        for x in 0..prog.vars.len() {
            if PtrGroup::of(prog, x) == Some(g) {
                changed |= self.prec.explicit.everywhere.insert(x);
            }
        }
        // Pointers of other groups may carry values of this group (casts from void*):
        // they are tracked with the group `Other`.
        if g != PtrGroup::Other {
            changed |= self.track_group(prog, PtrGroup::Other);
        }
        changed
    }

    /// The pointer groups the atoms of the interpolants mention (operands, dereferenced
    /// pointers, aliases, and the struct types of the fields they read); records the
    /// mentioned pointers and fields.
    fn mentioned_groups(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
    ) -> BTreeSet<PtrGroup> {
        let mut out = BTreeSet::new();
        for item in &input.interpolants.items {
            for a in &item.atoms {
                for &x in a.pointers.iter().chain(&a.dereferenced) {
                    if let Some(g) = PtrGroup::of(prog, x) {
                        out.insert(g);
                        self.mentioned.insert(x);
                    }
                }
                for f in &a.fields {
                    out.insert(PtrGroup::Struct(f.strukt));
                    *self
                        .mentioned_fields
                        .entry(prog.field(*f).name.clone())
                        .or_default() += 1;
                }
            }
            for &(x, y) in &item.aliases {
                for z in [x, y] {
                    if let Some(g) = PtrGroup::of(prog, z) {
                        out.insert(g);
                        self.mentioned.insert(z);
                    }
                }
            }
        }
        out
    }

    /// Tracks the integer variables `vars` explicitly everywhere from now on (variables
    /// of other types are ignored). For variables known to take few values, e.g. the
    /// object numbers of [`crate::promote`].
    pub fn track_ints_explicitly(&mut self, prog: &Program, vars: &[VarId]) {
        for &x in vars {
            if prog.vars.get(x).is_some_and(|v| v.ty.is_int()) {
                self.explicit_ints.insert(x);
                self.finite_ints.insert(x);
                self.prec.explicit.everywhere.insert(x);
            }
        }
    }

    /// Integer variables the atoms mention that are not tracked explicitly yet.
    fn mentioned_ints(
        &self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
    ) -> BTreeSet<VarId> {
        let mut out = BTreeSet::new();
        for item in &input.interpolants.items {
            for a in &item.atoms {
                for &x in &a.vars {
                    if prog.vars.get(x).is_some_and(|v| v.ty.is_int())
                        && !self.explicit_ints.contains(&x)
                    {
                        out.insert(x);
                    }
                }
            }
        }
        // an element of an array (`a[k]`, `frontend::lower::array`) brings its siblings:
        // an access with a computed index reads every element on some path, and
        // tracking them one refinement at a time costs a refinement per element
        let keys: BTreeSet<String> = out
            .iter()
            .filter_map(|&x| array_key(&prog.vars[x].name))
            .collect();
        if !keys.is_empty() {
            for (x, v) in prog.vars.iter().enumerate() {
                if v.ty.is_int()
                    && !self.explicit_ints.contains(&x)
                    && array_key(&v.name).is_some_and(|k| keys.contains(&k))
                {
                    out.insert(x);
                }
            }
        }
        out
    }

    /// The shape-tracked types among `groups`, with their SCG and tracking definition.
    fn shape_types_in(&self, groups: &BTreeSet<PtrGroup>) -> Vec<(StructId, Scg, TrackingDef)> {
        self.types
            .iter()
            .filter_map(|(s, m)| match m {
                TypeMode::Shape { scg, d } if groups.contains(&PtrGroup::Struct(*s)) => {
                    Some((*s, scg.clone(), d.clone()))
                }
                _ => None,
            })
            .collect()
    }

    fn undecided_explicit(&self) -> bool {
        self.lattice.is_some() && self.types.values().any(|m| *m == TypeMode::Explicit)
    }
}

impl Abstraction for HeapAbstraction {
    type Cpa = HeapCpa;

    fn cpa(&self) -> &HeapCpa {
        &self.cpa
    }

    fn checker(&self) -> HeapCpa {
        self.cpa.fresh(self.timeout_ms)
    }

    fn precision(&self) -> &HeapPrec {
        &self.prec
    }

    fn set_deadline(&self, deadline: Option<std::time::Instant>) {
        self.deadline.set(deadline);
        self.cpa.pred.set_deadline(deadline);
    }

    /// With [`HeapAbstraction::keep_certificate`]: encodes the certificate with the
    /// class recipes of the run and decodes it as `check-certificate` does (every class
    /// regenerated from the library), keeping the body for
    /// [`HeapAbstraction::take_sealed`]. Without: only checks that every class has a
    /// recipe (the round trip costs about 10% of the check on gdsl
    /// treep_rotate_left_right).
    fn seal(&self, prog: &Program, cert: HeapCertificate) -> Result<HeapCertificate, String> {
        let empty;
        let lat = match &self.lattice {
            Some(l) => l,
            None => {
                empty = Lattice::new(crate::scg::Library::default());
                &empty
            }
        };
        if !self.keep_certificate {
            // nothing is written: that every class has a recipe is what the checker
            // would rely on; the round trip is left to runs that write the file
            cert::check_recipes(prog, lat, &self.class_recipes(), &cert)?;
            return Ok(cert);
        }
        let body = cert::encode(prog, lat, &self.class_recipes(), &cert)?;
        let cpa = cert.cpa.clone();
        drop(cert);
        let back = cert::decode(prog, lat, &cpa, &body)?;
        self.sealed.replace(Some(body));
        Ok(back)
    }

    fn final_scg(&self, prog: &Program) -> BTreeMap<String, String> {
        self.types
            .iter()
            .map(|(s, m)| {
                let v = match m {
                    TypeMode::Explicit | TypeMode::ExplicitFinal => "explicit".to_string(),
                    TypeMode::Shape { scg, .. } => {
                        // finer SCGs of single functions: `; in f, g: m'`
                        let mut by: BTreeMap<&Scg, Vec<&str>> = BTreeMap::new();
                        for (f, c) in self.fn_scg.get(s).into_iter().flatten() {
                            by.entry(c).or_default().push(&prog.functions[*f].name);
                        }
                        let mut v = scg.to_string();
                        for (c, fs) in by {
                            v.push_str(&format!("; in {}: {c}", fs.join(", ")));
                        }
                        v
                    }
                };
                (format!("struct {}", struct_name(prog, *s)), v)
            })
            .collect()
    }

    fn stats(&self) -> serde_json::Value {
        let s = self.cpa.pred.stats();
        serde_json::json!({
            "predicates": self.prec.pred.preds.len(),
            "precision_size": self.prec.pred.size(),
            "explicit_groups": self.explicit_groups.iter().map(|g| g.to_string()).collect::<Vec<_>>(),
            "explicit_vars": self.prec.explicit.everywhere.len(),
            "explicit_ints": self.explicit_ints.len(),
            "abstractions": self.abstractions,
            "fine_tune_calls": self.fine_tune_calls,
            "fine_tune_oracle_calls": self.fine_tune_oracle_calls,
            "posts": s.posts,
            "post_cache_hits": s.cache_hits,
            "z3_queries": s.z3_queries,
            "z3_checks_skipped": s.z3_checks_skipped,
            "time_abstraction_z3_s": s.z3_time.as_secs_f64(),
            "scg_library": self.library_origin(),
            "scg_library_sha256": self.library_sha256(),
        })
    }

    /// See [`HeapAbstraction::threshold_reached`].
    fn threshold(&self, node: &crate::art::ArtNode<HeapState>) -> bool {
        self.threshold_reached(node)
    }

    /// See [`HeapAbstraction::abstract_samples`].
    fn on_threshold(
        &mut self,
        prog: &Program,
        art: &mut Art<HeapState>,
        node: ArtId,
    ) -> Result<(), String> {
        self.abstract_samples(prog, art, node)
    }

    /// Every pointer group tracked on explicit heaps (struct types the shape domain
    /// already tracks stay there): the explicit heap decides the leak checks once it
    /// sees every allocated object ([`crate::explicit::ExplicitState::leak`]). When
    /// nothing changes there, FineTune along the path for each shape-tracked type (the
    /// coarsest enabled SCG whose shape replay proves the check); when that finds
    /// nothing either, the shape-tracked types get every family of their
    /// structure (the finest SCG of their binding: the shape domain tells reachable
    /// nodes from lost ones with `r[x, f]`, [`crate::shape::ShapeComp::proves_no_leak`],
    /// which needs the list's other facts to stay definite). Returns what changed.
    fn refine_leak(&mut self, prog: &Program, input: &RefineInput<'_, HeapState>) -> Vec<String> {
        let groups: BTreeSet<PtrGroup> = (0..prog.vars.len())
            .filter_map(|x| PtrGroup::of(prog, x))
            .collect();
        let mut added = Vec::new();
        for g in groups {
            if self.track_group(prog, g) {
                added.push(format!("track {} explicitly", g.name(prog)));
            }
        }
        if !added.is_empty() {
            return added;
        }
        // FineTune along the path: the coarsest SCG (of any enabled structure) under
        // which the shape replay of the path proves its leak check
        let shaped: Vec<(StructId, Scg, TrackingDef)> = self
            .types
            .iter()
            .filter_map(|(s, m)| match m {
                TypeMode::Shape { scg, d } => Some((*s, scg.clone(), d.clone())),
                _ => None,
            })
            .collect();
        for (s, m, d) in shaped {
            if let Some(m2) = self.fine_tune_type(prog, s, &m, &d, input, None) {
                let line = format!("struct {}: SCG {m} → {m2}", struct_name(prog, s));
                if self.set_shape(prog, s, m2, d) {
                    added.push(line);
                }
            }
        }
        if !added.is_empty() {
            return added;
        }
        let Some(lat) = &self.lattice else {
            return added;
        };
        let finest: Vec<(StructId, Scg, TrackingDef)> = self
            .types
            .iter()
            .filter_map(|(s, m)| match m {
                TypeMode::Shape { scg, d } => {
                    let st = lat.library().structure(scg.structure()?)?;
                    let fams: Vec<String> =
                        st.optional_families().map(|f| f.name.clone()).collect();
                    let m = Scg::new(scg.structure()?, fams, scg.binding()?.clone());
                    let finer = m != *scg && lat.validate(&m).is_ok();
                    finer.then(|| (*s, m, d.clone()))
                }
                _ => None,
            })
            .collect();
        for (s, m, d) in finest {
            let line = format!(
                "struct {}: the finest SCG of its structure, {m}",
                struct_name(prog, s)
            );
            if self.set_shape(prog, s, m, d) {
                added.push(line);
            }
        }
        added
    }

    /// See [`HeapAbstraction::refine_path`].
    fn refine(&mut self, prog: &Program, input: &RefineInput<'_, HeapState>) -> Refinement {
        self.refine_path(prog, input)
    }
}

/// The name of an array element variable (`main::a[3]`, `g[1][2]`) with its indices
/// erased (`main::a[]`, `g[][]`): elements of one array share it; `None` for other
/// variables.
fn array_key(name: &str) -> Option<String> {
    if !name.contains('[') {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut in_index = false;
    for c in name.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push('[');
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            c if in_index && !c.is_ascii_digit() => return None,
            _ if in_index => {}
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_keys_erase_indices_of_element_variables_only() {
        assert_eq!(array_key("main::a[3]").as_deref(), Some("main::a[]"));
        assert_eq!(array_key("g[1][12]").as_deref(), Some("g[][]"));
        assert_eq!(array_key("main::i"), None);
        // a clone of a recursive function (`f@2`) is no array; `[` without digits neither
        assert_eq!(array_key("f@2::x"), None);
        assert_eq!(array_key("odd[x]"), None);
    }
    use crate::cfa::{FieldDef, Scope, StructDef, Ty};
    use crate::cpa::Cpa;
    use crate::explicit::{CellTy, ExplicitState};

    fn prog() -> Program {
        let mut p = Program::new("t.c");
        p.structs.push(StructDef {
            name: "node".into(),
            fields: vec![
                FieldDef {
                    name: "next".into(),
                    ty: Ty::Ptr(Box::new(Ty::Struct(0))),
                    offset: 0,
                },
                FieldDef {
                    name: "data".into(),
                    ty: Ty::INT,
                    offset: 4,
                },
            ],
            size: 8,
        });
        p.add_var("main::p", Ty::Ptr(Box::new(Ty::Struct(0))), Scope::Local(0));
        p.add_var("main::q", Ty::Ptr(Box::new(Ty::Void)), Scope::Local(0));
        p.add_var("main::x", Ty::INT, Scope::Local(0));
        p
    }

    #[test]
    fn pointer_groups_and_explicit_tracking() {
        let prog = prog();
        assert_eq!(PtrGroup::of(&prog, 0), Some(PtrGroup::Struct(0)));
        assert_eq!(PtrGroup::of(&prog, 1), Some(PtrGroup::Other));
        assert_eq!(PtrGroup::of(&prog, 2), None);
        assert_eq!(PtrGroup::of(&prog, 7), None);
        assert_eq!(own_ptr_fields(&prog, 0), ["next"]);
        let mut a = HeapAbstraction::new(
            &prog,
            PredScope::Location,
            1000,
            crate::scg::ScgMode::Refine,
            None,
            HeapOptions::default(),
        );
        assert!(a.track_group(&prog, PtrGroup::Struct(0)));
        // the struct's pointers and the `void*` ones, never the integers
        assert_eq!(
            a.prec
                .explicit
                .everywhere
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            [0, 1]
        );
        assert!(!a.track_group(&prog, PtrGroup::Struct(0)));
        assert_eq!(a.types.get(&0), Some(&TypeMode::Explicit));
        // without an SCG library the threshold never fires
        assert!(!a.undecided_explicit());
    }

    #[test]
    fn merges_keep_cube_and_explicit_heap_and_only_at_merge_points() {
        let prog = prog();
        let cpa = HeapCpa::new(&prog, 1000, true);
        let mut prec = HeapPrec::default();
        let at = prog.entry;
        let s = cpa.initial(&prog, &prec);
        // identical states: nothing to merge; an unlisted location never merges
        assert_eq!(cpa.merge(&s, &s, at, &prec), None);
        prec.merge_at.insert(at);
        assert_eq!(cpa.merge(&s, &s, at, &prec), None);
        // a different cube: no merge
        let mut t = s.clone();
        t.pred = crate::predabs::Cube(vec![(0, true)]);
        assert_eq!(cpa.merge(&s, &t, at, &prec), None);
        // a merged state is current for a successor only with the same cube and
        // explicit heap (a coarser, older cube covers a finer one but is stale)
        assert!(cpa.merged_covers(&s, &s));
        assert!(cpa.covers(&s, &t) && !cpa.merged_covers(&s, &t));
    }

    #[test]
    fn malformed_explicit_heaps_are_rejected() {
        let prog = prog();
        let mut h = ExplicitState::initial(&prog);
        assert_eq!(validate_explicit(&prog, &h), Ok(()));
        h.heap.insert(
            1,
            crate::explicit::Cell {
                ty: CellTy::Struct(0),
                kind: crate::explicit::CellKind::Heap,
                fields: vec![crate::explicit::Value::NULL],
            },
        );
        assert!(validate_explicit(&prog, &h).is_err());
        h.vars.with_mut(|vs| vs.pop());
        assert!(validate_explicit(&prog, &h).is_err());
    }
}
