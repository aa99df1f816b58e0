//! CEGAR: `ModelCheck` (paper Algorithm 1) over an [`Abstraction`], and the `verify` /
//! `check-certificate` commands.
//!
//! The loop: extend the ART (`art::build`); at an error node take the ART path and
//! analyse it with the SMT layer ([`crate::smt::refine_path`]):
//! - feasible: replay the model's inputs with the interpreter; UNSAFE only if the replay
//!   reaches the error location, otherwise UNKNOWN with the reason;
//! - infeasible: the (validated) sequence interpolants go to [`Abstraction::refine`],
//!   which returns the precision change and the first path position whose abstraction
//!   changed; the ART below that position is removed and the search continues. No
//!   change means the refinement failed (UNKNOWN, as in the paper);
//! - complete ART: a certificate is built and checked by an independent instance of the
//!   CPA ([`crate::cert::check`]); SAFE only if it is valid.
//!
//! Limits (deadline, refinements, ART nodes) end the loop with UNKNOWN and the reason.
//! The seam for the explicit-heap and shape domains is [`Abstraction`]: a domain brings
//! its CPA, its precision, its refinement from interpolants and (optionally) its
//! threshold handling; the loop does not change.

pub mod cli;
mod gate;
pub mod heap;
pub mod memsafety;
pub mod predicates;
pub mod symheap;

/// The compact body of heap certificates, under its former name.
pub use heap::cert as heap_cert;

use crate::art::{build, Art, ArtId, BuildOptions, BuildOutcome, Order};
use crate::cert::Certificate;
use crate::cfa::{LocKind, Node, Program, Step};
use crate::cpa::Cpa;
use crate::interp::{render_trace, replay_path, Limits};
use crate::simulate::Counterexample;
use crate::smt::{
    refine_path, timeout_until, Interpolants, InterpolationOptions, PathAnalysis, SmtOptions,
};
pub use gate::{safe_gate, SANITY_RUNS, SANITY_STEPS};
use serde::Serialize;
use std::time::{Duration, Instant};

/// The answer of the model checker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A complete ART whose certificate the checker accepted.
    Safe,
    /// A feasible error path that the interpreter replays.
    Unsafe,
    /// Anything else, with the reason.
    Unknown(String),
}

impl Verdict {
    /// The verdict line: `SAFE`, `UNSAFE` or `UNKNOWN: <reason>`.
    pub fn line(&self) -> String {
        match self {
            Verdict::Safe => "SAFE".into(),
            Verdict::Unsafe => "UNSAFE".into(),
            Verdict::Unknown(r) => format!("UNKNOWN: {r}"),
        }
    }
    /// Whether this is UNKNOWN because the run's time limit ended it.
    pub fn out_of_time(&self) -> bool {
        matches!(self, Verdict::Unknown(r) if r.contains("time limit"))
    }

    /// Whether this is UNKNOWN because a refinement learnt nothing.
    pub fn is_refinement_failure(&self) -> bool {
        matches!(self, Verdict::Unknown(r) if r.starts_with("refinement failed"))
    }

    /// The process exit code (0, 10, 20).
    pub fn exit_code(&self) -> i32 {
        match self {
            Verdict::Safe => crate::diag::exit::SAFE,
            Verdict::Unsafe => crate::diag::exit::UNSAFE,
            Verdict::Unknown(_) => crate::diag::exit::UNKNOWN,
        }
    }
}

/// Options of [`model_check`].
#[derive(Clone, Debug)]
pub struct CegarOptions {
    pub order: Order,
    /// Wall-clock budget of the whole run.
    pub timeout: Option<Duration>,
    pub max_refinements: usize,
    pub max_nodes: usize,
    /// Z3 timeout per query (ms) for path analysis.
    pub smt_timeout_ms: u32,
    /// Validate interpolant sequences with Z3 (never use an unchecked sequence).
    pub validate_interpolants: bool,
    /// Resident-memory budget in MiB (UNKNOWN when exceeded).
    pub memory_limit_mb: Option<u64>,
    /// Let `BuildART` merge states ([`crate::cpa::Cpa::merge`]; a domain without a
    /// merge operator is unaffected).
    pub merge: bool,
    /// Ends the run UNKNOWN ([`crate::art::CANCELLED`]) once set, without the random
    /// bug hunt of other UNKNOWN answers (a portfolio's other analysis answered).
    pub cancel: Option<crate::art::Cancel>,
    /// The property checked ([`memsafety`]: what a target means, what SAFE needs).
    pub property: crate::spec::Property,
}

impl Default for CegarOptions {
    fn default() -> Self {
        CegarOptions {
            order: Order::Bfs,
            timeout: None,
            max_refinements: 200,
            max_nodes: 200_000,
            smt_timeout_ms: 20_000,
            validate_interpolants: true,
            memory_limit_mb: None,
            merge: true,
            cancel: None,
            property: crate::spec::Property::UnreachCall,
        }
    }
}

/// What a refinement step learnt.
#[derive(Clone, Debug, Default)]
pub struct Refinement {
    /// The first path position (0 = root) whose abstraction changed; `None`: nothing
    /// new was learnt (the refinement failed).
    pub pivot: Option<usize>,
    /// Human-readable additions (`x < 10 @ main:4:5`).
    pub added: Vec<String>,
    /// Facts found in the interpolants that this abstraction does not handle yet
    /// (e.g. field assertions for the shape domain).
    pub unhandled: Vec<String>,
    /// Kind of refinement for statistics (`"pred"`, `"td"`, `"scg"`).
    pub kind: &'static str,
}

/// The infeasible error path handed to [`Abstraction::refine`]; `S` is the CPA's
/// state type.
pub struct RefineInput<'a, S = ()> {
    pub path: &'a [Step],
    /// ART nodes along the path (`path.len() + 1` of them, root first).
    pub nodes: &'a [ArtId],
    /// Their CFA locations.
    pub locs: &'a [Node],
    /// The validated sequence interpolants with atoms.
    pub interpolants: &'a Interpolants,
    /// Positions (indices into `nodes`) of the nodes whose states were merged
    /// ([`crate::art::ArtNode::merged`]), ascending.
    pub merged: &'a [usize],
    /// The states of those nodes, in the order of `merged`.
    pub merged_states: &'a [S],
}

/// An abstract domain under CEGAR: its CPA, its current precision, and how an infeasible
/// error path refines the precision. Implemented by predicate abstraction
/// ([`predicates::PredicateAbstraction`]); the explicit-heap and shape domains plug in
/// here.
pub trait Abstraction {
    type Cpa: Cpa;
    /// The CPA used for the search.
    fn cpa(&self) -> &Self::Cpa;
    /// A fresh instance for the independent certificate check (no caches).
    fn checker(&self) -> Self::Cpa;
    /// The current precision.
    fn precision(&self) -> &<Self::Cpa as Cpa>::Prec;
    /// Refines the precision from an infeasible path.
    fn refine(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, <Self::Cpa as Cpa>::State>,
    ) -> Refinement;
    /// The threshold of `BuildART` (case (c) of the paper) on a new uncovered node;
    /// never fires by default.
    fn threshold(&self, _node: &crate::art::ArtNode<<Self::Cpa as Cpa>::State>) -> bool {
        false
    }
    /// Called when the threshold fired on `node` (the paper's `Abstract`); may rewrite
    /// the ART. Default: give up with a reason.
    fn on_threshold(
        &mut self,
        _prog: &Program,
        _art: &mut Art<<Self::Cpa as Cpa>::State>,
        _node: ArtId,
    ) -> Result<(), String> {
        Err("threshold handling is not implemented for this abstraction".into())
    }
    /// Called when a path to a leak check ([`LocKind::MemLeak`]) is feasible but its
    /// replay does not leak: the domains could not decide the check. `input` is the
    /// path with its ART nodes (no interpolants: the path is feasible). Returns
    /// what changed in the precision, one line each (the ART is then rebuilt from the
    /// root); empty when nothing did (the search gives up), the default.
    fn refine_leak(
        &mut self,
        _prog: &Program,
        _input: &RefineInput<'_, <Self::Cpa as Cpa>::State>,
    ) -> Vec<String> {
        Vec::new()
    }
    /// Called once per build with the deadline (so domains can bound their own solver
    /// calls). Default: nothing.
    fn set_deadline(&self, _deadline: Option<Instant>) {}
    /// Turns a complete ART's certificate into the form `check-certificate` reads back
    /// (heap abstractions: every shape class regenerated from its recipe), so that the
    /// SAFE gate checks exactly what a user re-checks. Default: unchanged.
    #[allow(clippy::type_complexity)]
    fn seal(
        &self,
        _prog: &Program,
        cert: Certificate<<Self::Cpa as Cpa>::State, <Self::Cpa as Cpa>::Prec>,
    ) -> Result<Certificate<<Self::Cpa as Cpa>::State, <Self::Cpa as Cpa>::Prec>, String> {
        Ok(cert)
    }
    /// The final SCG (or tracking mode) per struct type, for statistics. Default: none.
    fn final_scg(&self, _prog: &Program) -> std::collections::BTreeMap<String, String> {
        Default::default()
    }
    /// Extra statistics of the domain (JSON object).
    fn stats(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

/// Statistics of one run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub iterations: usize,
    /// Predicate refinements.
    pub refinements_pred: usize,
    /// Tracking-definition refinements (shape domain; 0 for now).
    pub refinements_td: usize,
    /// SCG refinements (shape domain; 0 for now).
    pub refinements_scg: usize,
    /// Refinements that stopped merging at some locations (an error was reached only
    /// through merged states).
    pub refinements_merge: usize,
    /// Error paths through nodes computed under an older precision (rebuilt, no
    /// refinement needed).
    pub stale_rebuilds: usize,
    /// Alive ART nodes at the end.
    pub art_nodes: usize,
    /// Nodes ever created.
    pub art_nodes_created: usize,
    pub time_build_s: f64,
    /// Feasibility checks and interpolation of error paths.
    pub time_path_analysis_s: f64,
    pub time_replay_s: f64,
    /// Sealing the certificate of a complete ART and the SAFE gate ([`safe_gate`]:
    /// certificate check and random runs).
    pub time_cert_check_s: f64,
    pub time_total_s: f64,
    /// Domain statistics (e.g. Z3 time spent in abstract posts).
    pub domain: serde_json::Value,
    /// The final SCG per struct type (shape domain), or how the type is tracked
    /// (`explicit`).
    pub final_scg: std::collections::BTreeMap<String, String>,
    /// The CFA locations with the most alive ART nodes at the end, most first (at most
    /// [`BUSIEST_LOCATIONS`]): where a run that hit a limit spent its states.
    pub busiest_locations: Vec<LocCount>,
}

impl Stats {
    /// Refinements of every kind.
    pub fn refinements(&self) -> usize {
        self.refinements_pred + self.refinements_td + self.refinements_scg + self.refinements_merge
    }
}

/// How many alive ART nodes sit at one CFA location.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LocCount {
    /// `function:line:col (loc N)`.
    pub location: String,
    pub nodes: usize,
}

/// Number of entries in [`Stats::busiest_locations`].
pub const BUSIEST_LOCATIONS: usize = 5;

/// The [`BUSIEST_LOCATIONS`] locations of `art` with the most alive nodes.
fn busiest_locations<S>(prog: &Program, art: &Art<S>) -> Vec<LocCount> {
    let mut count: std::collections::BTreeMap<Node, usize> = Default::default();
    for n in art.nodes.iter().filter(|n| n.alive) {
        *count.entry(n.loc).or_default() += 1;
    }
    let mut v: Vec<(Node, usize)> = count.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.into_iter()
        .take(BUSIEST_LOCATIONS)
        .map(|(l, nodes)| LocCount {
            location: format!(
                "{}:{} (loc {})",
                prog.functions[prog.graph[l].func].name,
                prog.graph[l].src,
                l.index()
            ),
            nodes,
        })
        .collect()
}

/// The result of [`model_check`].
pub struct Outcome<S, P> {
    pub verdict: Verdict,
    pub stats: Stats,
    /// The checked certificate (SAFE only).
    pub certificate: Option<Certificate<S, P>>,
    /// The replayed counterexample (UNSAFE only).
    pub counterexample: Option<Counterexample>,
    /// One line per refinement (what was learnt where).
    pub log: Vec<String>,
    /// The violated subproperty of an UNSAFE answer under a memory property.
    pub violated: Option<crate::spec::Subproperty>,
}

type St<A> = <<A as Abstraction>::Cpa as Cpa>::State;
type Pr<A> = <<A as Abstraction>::Cpa as Cpa>::Prec;

/// Random runs tried before an UNKNOWN answer ([`hunt_error`]).
pub const HUNT_RUNS: u64 = 256;
/// Wall-clock budget of those runs.
const HUNT_BUDGET: Duration = Duration::from_secs(2);
/// Random runs tried under unreach-call before the first ART (the first seeds of
/// [`HUNT_RUNS`]; the hunt before an UNKNOWN answer goes on from the next one): a bug
/// that one run in a few reaches is then answered in well under a second instead of
/// after the abstraction gives up.
const EARLY_HUNT_RUNS: u64 = 64;
/// Wall-clock budget of those runs (their confirmation by Z3 included).
const EARLY_HUNT_BUDGET: Duration = Duration::from_millis(500);

/// The shortest random run of `seeds` that reaches an error location and is confirmed,
/// as a counterexample: its path must be feasible for Z3 and replay to the error with
/// Z3's model (the same evidence as an UNSAFE from the ART). The runs come first (until
/// all seeds ran or half the `budget` is spent; a run is cheap), then the error runs are
/// confirmed shortest first ([`MAX_HUNT_CANDIDATES`] of them; within the budget when
/// `confirm_in_budget`, else until shortly after the deadline): a path of 1,800 steps
/// that Z3 cannot decide in its time no longer hides one of 365 that it decides at once
/// (real/kl_lol_bug). Used before the first ART ([`EARLY_HUNT_RUNS`]) and when the
/// abstraction gives up, so that a bug a refinement cannot explain (data the domains do
/// not track, a limit) is still reported. Without one, the seeds whose run reached the
/// error but whose path Z3 could not decide in the time left, or was not asked about
/// (the hunt before UNKNOWN tries them again first).
fn hunt_error(
    prog: &Program,
    opts: &CegarOptions,
    deadline: Option<Instant>,
    seeds: impl IntoIterator<Item = u64>,
    budget: Duration,
    confirm_in_budget: bool,
) -> Result<(u64, Counterexample), Vec<u64>> {
    // past the deadline (a time limit ended the search) only a short look
    let now = Instant::now();
    let mut stop = now + budget;
    // Z3's confirmation of a run that reaches the error may take longer than the runs,
    // but not past the deadline (plus the short look)
    let hard_stop = deadline.map(|d| d.max(now) + budget / 4);
    if let Some(h) = hard_stop {
        stop = stop.min(h);
    }
    let confirm_by = if confirm_in_budget {
        Some(stop)
    } else {
        hard_stop
    };
    let limits = Limits {
        max_steps: SANITY_STEPS,
        malloc_never_fails: prog.malloc_never_fails,
    };
    let runs_until = now + (stop.saturating_duration_since(now)) / 2;
    let mut found: Vec<(u64, crate::interp::Run)> = Vec::new();
    let mut dropped = Vec::new();
    for seed in seeds {
        if Instant::now() >= runs_until {
            break;
        }
        let run = crate::interp::run_random(prog, seed, &limits);
        if run.outcome.is_error() {
            found.push((seed, run));
            // only the shortest traces are kept (each may be 100,000 steps long); the
            // seeds of the others stay unconfirmed
            if found.len() > 2 * MAX_HUNT_CANDIDATES {
                found.sort_by_key(|(seed, run)| (run.trace.len(), *seed));
                for (seed, _) in found.drain(MAX_HUNT_CANDIDATES..) {
                    dropped.push(seed);
                }
            }
        }
    }
    // shortest first (the seed breaks ties: deterministic)
    found.sort_by_key(|(seed, run)| (run.trace.len(), *seed));
    let mut unconfirmed = Vec::new();
    let mut candidates = found.into_iter();
    for (seed, run) in candidates.by_ref().take(MAX_HUNT_CANDIDATES) {
        if Instant::now() >= stop {
            unconfirmed.push(seed);
            break;
        }
        let Some(timeout_ms) = timeout_until(opts.smt_timeout_ms, confirm_by, Instant::now())
        else {
            unconfirmed.push(seed);
            break;
        };
        let smt = SmtOptions {
            timeout_ms,
            ..SmtOptions::default()
        };
        let model = match crate::smt::check_path_with(prog, &run.trace, &smt) {
            Ok(crate::smt::Feasibility::Feasible(m)) => m,
            Err(crate::smt::SmtError::Solver(why)) if Instant::now() >= stop => {
                tracing::debug!("random run {seed} reaches the error; Z3 ran out of time ({why})");
                unconfirmed.push(seed);
                break;
            }
            other => {
                tracing::warn!(
                    "random run {seed} reaches the error but its path is not feasible for Z3: {}",
                    match other {
                        Ok(_) => "infeasible".to_string(),
                        Err(e) => e.to_string(),
                    }
                );
                continue;
            }
        };
        let (inputs, replay) = replay_model(prog, &run.trace, &model);
        if !replay.outcome.is_error() {
            tracing::warn!(
                "random run {seed}: Z3's model does not replay ({})",
                replay.outcome
            );
            continue;
        }
        return Ok((seed, counterexample(prog, run.trace, inputs, &replay)));
    }
    unconfirmed.extend(candidates.map(|(seed, _)| seed));
    unconfirmed.extend(dropped);
    Err(unconfirmed)
}

/// The error runs of a hunt that Z3 is asked to confirm, shortest first
/// ([`hunt_error`]).
const MAX_HUNT_CANDIDATES: usize = 8;

/// Replays `path` with the inputs of Z3's `model` of its path formula.
fn replay_model(
    prog: &Program,
    path: &[Step],
    model: &crate::smt::Model,
) -> (crate::cfa::Inputs, crate::interp::Run) {
    let inputs = model.to_inputs();
    let limits = Limits {
        max_steps: path.len() + 10,
        malloc_never_fails: prog.malloc_never_fails,
    };
    let run = replay_path(prog, path, &inputs, &limits);
    (inputs, run)
}

/// The counterexample of a path whose replay `run` (with `inputs`) reached the error.
fn counterexample(
    prog: &Program,
    path: Vec<Step>,
    inputs: crate::cfa::Inputs,
    run: &crate::interp::Run,
) -> Counterexample {
    // of the model's loads, the values the replay read from uninitialised cells
    let mut inputs = inputs;
    inputs.uninit_loads = run.inputs.uninit_loads.clone();
    Counterexample {
        format: Counterexample::FORMAT.into(),
        file: prog.file.display().to_string(),
        path,
        inputs,
        trace: render_trace(prog, run)
            .lines()
            .map(|l| l.to_string())
            .collect(),
    }
}

/// `ModelCheck` (paper Algorithm 1) with abstraction `abs`. Never answers SAFE without a
/// valid certificate (and [`SANITY_RUNS`] random runs that miss the error and every
/// memory error: [`safe_gate`]), nor UNSAFE without a replayed counterexample; a
/// replayed path to a NULL-dereference target is recorded and the search goes on
/// (UNKNOWN at the end unless a real error path turns up).
pub fn model_check<A: Abstraction>(
    prog: &Program,
    abs: &mut A,
    opts: &CegarOptions,
) -> Outcome<St<A>, Pr<A>>
where
    St<A>: Clone,
    Pr<A>: Clone + Serialize,
{
    let mut search = Search::new(prog, abs, opts);
    // random runs first (cheap): under a memory property leaks are found by them
    // only (at most a few seconds); under unreach-call a shallow bug is answered at once
    // (at most half a second)
    if let Some(cex) = search.hunt_first() {
        return search.finish(Verdict::Unsafe, None, Some(cex));
    }
    loop {
        match search.iteration() {
            Next::Continue => {}
            Next::Done(verdict, certificate, counterexample) => {
                return search.finish(verdict, certificate, counterexample)
            }
            Next::GiveUp(why) => return search.give_up(why),
        }
    }
}

/// What an iteration of [`model_check`] leads to.
// built once per iteration and consumed at once: its size does not matter
#[allow(clippy::large_enum_variant)]
enum Next<S, P> {
    /// Build the ART again (after a refinement, an abstraction, a recorded undefined
    /// behaviour).
    Continue,
    /// The answer, with its evidence.
    Done(Verdict, Option<Certificate<S, P>>, Option<Counterexample>),
    /// UNKNOWN with this reason, unless the random bug hunt finds the error
    /// ([`Search::give_up`]).
    GiveUp(String),
}

/// The state of one [`model_check`] run.
struct Search<'a, A: Abstraction> {
    prog: &'a Program,
    abs: &'a mut A,
    opts: &'a CegarOptions,
    start: Instant,
    deadline: Option<Instant>,
    stats: Stats,
    /// One line per refinement (what was learnt where).
    log: Vec<String>,
    art: Art<St<A>>,
    bopts: BuildOptions,
    /// Undefined behaviour found reachable (replayed): never SAFE after one, but the
    /// search goes on, since a real error path still makes the answer UNSAFE.
    undefined: Vec<(LocKind, String)>,
    /// The violated subproperty of an UNSAFE answer under a memory property.
    violated: Option<crate::spec::Subproperty>,
    /// Seeds of the early hunt whose run reached the error but which Z3 did not decide
    /// in its budget ([`hunt_error`]).
    unconfirmed: Vec<u64>,
}

impl<'a, A: Abstraction> Search<'a, A>
where
    St<A>: Clone,
    Pr<A>: Clone + Serialize,
{
    fn new(prog: &'a Program, abs: &'a mut A, opts: &'a CegarOptions) -> Self {
        let start = Instant::now();
        let deadline = opts.timeout.map(|t| start + t);
        let init = abs.cpa().initial(prog, abs.precision());
        let art = Art::new(prog, init);
        let bopts = BuildOptions {
            order: opts.order,
            max_nodes: opts.max_nodes,
            deadline,
            memory_limit_mb: opts.memory_limit_mb,
            reached: Vec::new(),
            merge: opts.merge,
            cancel: opts.cancel.clone(),
        };
        Search {
            prog,
            abs,
            opts,
            start,
            deadline,
            stats: Stats::default(),
            log: Vec::new(),
            art,
            bopts,
            undefined: Vec::new(),
            violated: None,
            unconfirmed: Vec::new(),
        }
    }

    /// The outcome with the final statistics.
    fn finish(
        mut self,
        verdict: Verdict,
        certificate: Option<Certificate<St<A>, Pr<A>>>,
        counterexample: Option<Counterexample>,
    ) -> Outcome<St<A>, Pr<A>> {
        let (prog, art) = (self.prog, &self.art);
        self.stats.art_nodes = art.size();
        self.stats.art_nodes_created = art.nodes.len();
        self.stats.time_total_s = self.start.elapsed().as_secs_f64();
        self.stats.domain = self.abs.stats();
        self.stats.final_scg = self.abs.final_scg(prog);
        self.stats.busiest_locations = busiest_locations(prog, art);
        Outcome {
            verdict,
            stats: self.stats,
            certificate,
            counterexample,
            log: self.log,
            violated: self.violated,
        }
    }

    /// Ends the run with UNKNOWN and the reason (no certificate, no counterexample),
    /// unless a random run finds an error path that Z3 and the replay confirm.
    fn give_up(mut self, mut why: String) -> Outcome<St<A>, Pr<A>> {
        if self.cancelled() {
            return self.finish(Verdict::Unknown(crate::art::CANCELLED.into()), None, None);
        }
        if self.opts.property.is_memory() {
            if let Some(f) = self.hunt_memory() {
                let cex = self.record_violation(&format!("the abstraction gave up ({why}); "), f);
                return self.finish(Verdict::Unsafe, None, Some(cex));
            }
            match self.undefined.first() {
                Some((_, first)) if !why.contains(first.as_str()) => {
                    why.push_str(&format!("; no proof: {first}"));
                }
                _ => {}
            }
            return self.finish(Verdict::Unknown(why), None, None);
        }
        let t = Instant::now();
        let seeds: Vec<u64> = std::mem::take(&mut self.unconfirmed)
            .into_iter()
            .chain(EARLY_HUNT_RUNS..HUNT_RUNS)
            .collect();
        let hunt = hunt_error(
            self.prog,
            self.opts,
            self.deadline,
            seeds,
            HUNT_BUDGET,
            false,
        )
        .ok();
        self.stats.time_replay_s += t.elapsed().as_secs_f64();
        if let Some((seed, cex)) = hunt {
            let line = format!(
                "the abstraction gave up ({why}); random run {seed} reaches the error, a path of {} steps that Z3 finds feasible and that replays",
                cex.path.len()
            );
            tracing::info!("{line}");
            self.log.push(line);
            return self.finish(Verdict::Unsafe, None, Some(cex));
        }
        if let Some((_, first)) = self.undefined.first() {
            why.push_str(&format!("; undefined behaviour is reachable: {first}"));
        }
        self.finish(Verdict::Unknown(why), None, None)
    }

    /// Under a memory property, the random hunt for a violation before any ART is
    /// built ([`memsafety::hunt_memory_violation`]): the counterexample of a confirmed
    /// one (its subproperty recorded).
    fn hunt_first(&mut self) -> Option<Counterexample> {
        if !self.opts.property.is_memory() {
            let t = Instant::now();
            let hunt = hunt_error(
                self.prog,
                self.opts,
                self.deadline,
                0..EARLY_HUNT_RUNS,
                EARLY_HUNT_BUDGET,
                true,
            );
            self.stats.time_replay_s += t.elapsed().as_secs_f64();
            let (seed, cex) = match hunt {
                Ok(found) => found,
                Err(unconfirmed) => {
                    self.unconfirmed = unconfirmed;
                    return None;
                }
            };
            let line = format!(
                "random run {seed} reaches the error, a path of {} steps that Z3 finds feasible and that replays",
                cex.path.len()
            );
            tracing::info!("{line}");
            self.log.push(line);
            return Some(cex);
        }
        let found = self.hunt_memory()?;
        Some(self.record_violation("", found))
    }

    /// [`memsafety::hunt_memory_violation`] for this run, its time counted as replay.
    fn hunt_memory(&mut self) -> Option<memsafety::Found> {
        let t = Instant::now();
        let found = memsafety::hunt_memory_violation(
            self.prog,
            self.opts.property,
            self.opts,
            self.deadline,
        );
        self.stats.time_replay_s += t.elapsed().as_secs_f64();
        found
    }

    /// Logs a confirmed memory violation a random run found (after `prefix`), records
    /// its subproperty and returns its counterexample.
    fn record_violation(&mut self, prefix: &str, f: memsafety::Found) -> Counterexample {
        let line = format!(
            "{prefix}random run {} violates {}, a path of {} steps that Z3 finds feasible and that replays",
            f.seed,
            f.violated,
            f.counterexample.path.len()
        );
        tracing::info!("{line}");
        self.log.push(line);
        self.violated = Some(f.violated);
        f.counterexample
    }

    fn cancelled(&self) -> bool {
        self.opts
            .cancel
            .as_ref()
            .is_some_and(crate::art::Cancel::is_cancelled)
    }

    /// One BuildART call and what its outcome leads to.
    fn iteration(&mut self) -> Next<St<A>, Pr<A>> {
        self.stats.iterations += 1;
        if self.cancelled() {
            return Next::GiveUp(crate::art::CANCELLED.into());
        }
        self.abs.set_deadline(self.deadline);
        let t = Instant::now();
        let out = {
            let abs = &*self.abs;
            let mut th = |n: &crate::art::ArtNode<St<A>>| abs.threshold(n);
            build(
                abs.cpa(),
                self.prog,
                &mut self.art,
                abs.precision(),
                &self.bopts,
                &mut th,
            )
        };
        self.stats.time_build_s += t.elapsed().as_secs_f64();
        tracing::info!(
            "iteration {}: ART {} nodes ({} created), {:?}",
            self.stats.iterations,
            self.art.size(),
            self.art.nodes.len(),
            short(&out)
        );
        match out {
            BuildOutcome::Limit(r) => Next::GiveUp(r),
            BuildOutcome::Threshold(n) => {
                match self.abs.on_threshold(self.prog, &mut self.art, n) {
                    Ok(()) => Next::Continue,
                    Err(r) => Next::GiveUp(r),
                }
            }
            // a memory property: random runs may still find a violation
            BuildOutcome::Complete
                if !self.undefined.is_empty() && self.opts.property.is_memory() =>
            {
                Next::GiveUp(self.undefined_reason())
            }
            BuildOutcome::Complete if !self.undefined.is_empty() => {
                Next::Done(Verdict::Unknown(self.undefined_reason()), None, None)
            }
            BuildOutcome::Complete => self.complete(),
            BuildOutcome::Error(n) => self.error_path(n),
        }
    }

    /// The reason of the UNKNOWN answer of a complete ART after undefined behaviour was
    /// found reachable.
    fn undefined_reason(&self) -> String {
        let count = |kind: LocKind, one: &str, many: &str| {
            let n = self.undefined.iter().filter(|(k, _)| *k == kind).count();
            (n > 0).then(|| format!("{n} {}", if n == 1 { one } else { many }))
        };
        let counts: Vec<String> = [
            count(LocKind::NullDeref, "NULL dereference", "NULL dereferences"),
            count(LocKind::DivByZero, "division by zero", "divisions by zero"),
            count(
                LocKind::InvalidDeref,
                "invalid dereference",
                "invalid dereferences",
            ),
            count(LocKind::InvalidFree, "invalid free", "invalid frees"),
            count(
                LocKind::InvalidCall,
                "call through an invalid function pointer",
                "calls through invalid function pointers",
            ),
            count(LocKind::Error, "reach_error() call", "reach_error() calls"),
            count(LocKind::MemLeak, "leak", "leaks"),
            count(
                LocKind::RecursionBound,
                "call deeper than the recursion bound",
                "calls deeper than the recursion bound",
            ),
            count(
                LocKind::Unmodelled,
                "array address out of range",
                "array addresses out of range",
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        if self.opts.property.is_memory() {
            return format!(
                "no proof of {}: reachable ({}), after which the program is not analysed: {}",
                self.opts.property,
                counts.join(", "),
                self.undefined[0].1
            );
        }
        if self
            .undefined
            .iter()
            .all(|(k, _)| *k == LocKind::RecursionBound)
        {
            return format!(
                "no path to an error location was found, but runs that recurse deeper than {} activations were not analysed ({}): {}",
                crate::cfa::recursion::RECURSION_DEPTH,
                counts.join(", "),
                self.undefined[0].1
            );
        }
        if self
            .undefined
            .iter()
            .all(|(k, _)| matches!(*k, LocKind::RecursionBound | LocKind::Unmodelled))
        {
            return format!(
                "no path to an error location was found, but runs past a step this analysis does not model were not analysed ({}): {}",
                counts.join(", "),
                self.undefined[0].1
            );
        }
        format!(
            "undefined behaviour is reachable ({}), after which C allows anything, reach_error() included; no path to an error location was found: {}",
            counts.join(", "),
            self.undefined[0].1
        )
    }

    /// A complete ART: its certificate (sealed as `check-certificate` reads it) through
    /// the [`safe_gate`].
    fn complete(&mut self) -> Next<St<A>, Pr<A>> {
        let (prog, opts) = (self.prog, self.opts);
        if let Err(why) = memsafety::memory_proof_obligation(prog, opts.property) {
            return Next::GiveUp(why);
        }
        let t = Instant::now();
        if let (Some(l), Some(m)) = (opts.memory_limit_mb, crate::diag::resident_mib()) {
            // the check recomputes every uncovered node's successors: leave room
            if 4 * m > 3 * l {
                return Next::GiveUp(format!(
                    "memory limit ({l} MiB) too small to check the certificate of a complete ART ({} nodes, {m} MiB resident)",
                    self.art.size()
                ));
            }
        }
        // moved, not copied: a complete ART can be several GiB
        let abs = &*self.abs;
        let placeholder = abs.cpa().initial(prog, abs.precision());
        let cert = Certificate::take_from_art(
            abs.cpa(),
            prog,
            &mut self.art,
            abs.precision(),
            &placeholder,
        );
        let cert = match abs.seal(prog, cert) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!("bug: the certificate of a complete ART cannot be sealed: {e}");
                return Next::GiveUp(format!("certificate could not be written: {e}"));
            }
        };
        let checker = abs.checker();
        let gate = safe_gate(&checker, prog, &cert, self.deadline, opts.memory_limit_mb);
        self.stats.time_cert_check_s += t.elapsed().as_secs_f64();
        match gate {
            Ok(()) => Next::Done(Verdict::Safe, Some(cert), None),
            Err(why) => Next::GiveUp(why),
        }
    }

    /// An ART path to the error node `n`: replayed when feasible (UNSAFE, or undefined
    /// behaviour recorded), a refinement when not.
    fn error_path(&mut self, n: ArtId) -> Next<St<A>, Pr<A>> {
        let (prog, opts) = (self.prog, self.opts);
        let path = self.art.path_to(n);
        let t = Instant::now();
        let mut smt = SmtOptions {
            timeout_ms: opts.smt_timeout_ms,
            ..SmtOptions::default()
        };
        match timeout_until(smt.timeout_ms, self.deadline, Instant::now()) {
            Some(ms) => smt.timeout_ms = ms,
            None => return Next::GiveUp("time limit reached".into()),
        }
        let iopts = InterpolationOptions {
            validate: opts.validate_interpolants,
            smt,
            ..Default::default()
        };
        // every check of the analysis ends by the run's deadline
        let analysis =
            crate::smt::limit::within_deadline(self.deadline, || refine_path(prog, &path, &iopts));
        self.stats.time_path_analysis_s += t.elapsed().as_secs_f64();
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Next::GiveUp("time limit reached".into());
        }
        match analysis {
            Err(e) => Next::GiveUp(format!(
                "analysis of an error path of {} steps failed: {e}",
                path.len()
            )),
            Ok(PathAnalysis::Feasible(model)) => self.feasible_path(n, path, &model),
            Ok(PathAnalysis::Infeasible(itps)) => self.refine(n, &path, &itps),
        }
    }

    /// A feasible error path to node `n`: UNSAFE when the replay of Z3's `model`
    /// reaches the error, recorded undefined behaviour when it reaches the target's
    /// memory error, UNKNOWN otherwise.
    fn feasible_path(
        &mut self,
        n: ArtId,
        path: Vec<Step>,
        model: &crate::smt::Model,
    ) -> Next<St<A>, Pr<A>> {
        let prog = self.prog;
        let t = Instant::now();
        let (inputs, run) = replay_model(prog, &path, model);
        self.stats.time_replay_s += t.elapsed().as_secs_f64();
        let at = self.art.nodes[n].loc;
        let kind = prog.graph[at].kind;
        if self.opts.property.is_memory() {
            return self.feasible_memory_path(n, path, inputs, &run);
        }
        if replays_target(kind, &run.outcome) {
            let what = undefined_str(prog, at, path.last().copied());
            let line = format!("{what} (a replayed path of {} steps)", path.len());
            tracing::info!("undefined behaviour: {line}");
            self.log.push(format!("undefined behaviour: {line}"));
            self.undefined.push((kind, line));
            self.bopts.reached.push(at);
            return Next::Continue;
        }
        if run.outcome.is_error() {
            let cex = counterexample(prog, path, inputs, &run);
            return Next::Done(Verdict::Unsafe, None, Some(cex));
        }
        Next::GiveUp(format!(
            "an error path of {} steps is feasible in the path formula but its replay did not reach the error ({})",
            path.len(),
            run.outcome
        ))
    }

    /// [`Search::feasible_path`] under a memory property: a replayed path to a target
    /// that is a violation ([`memsafety::target_meaning`]) is UNSAFE with its
    /// subproperty; one to any other target (`reach_error()` included) is recorded.
    fn feasible_memory_path(
        &mut self,
        n: ArtId,
        path: Vec<Step>,
        inputs: crate::cfa::Inputs,
        run: &crate::interp::Run,
    ) -> Next<St<A>, Pr<A>> {
        let prog = self.prog;
        let at = self.art.nodes[n].loc;
        let kind = prog.graph[at].kind;
        let reached = replays_target(kind, &run.outcome)
            || (kind == LocKind::Error && run.outcome.is_error());
        if !reached && kind == LocKind::MemLeak {
            return self.spurious_leak(n, &path);
        }
        if !reached {
            return Next::GiveUp(format!(
                "a path of {} steps to a target is feasible in the path formula but its replay did not reach it ({})",
                path.len(),
                run.outcome
            ));
        }
        match memsafety::target_meaning(self.opts.property, kind) {
            memsafety::TargetMeaning::Violation(sub) => {
                self.violated = sub;
                let cex = counterexample(prog, path, inputs, run);
                Next::Done(Verdict::Unsafe, None, Some(cex))
            }
            memsafety::TargetMeaning::NoProof => {
                let what = if kind == LocKind::Error {
                    format!(
                        "{}:{}: reach_error() is called (what follows the call is not analysed)",
                        prog.file.display(),
                        prog.graph[at].src
                    )
                } else {
                    undefined_str(prog, at, path.last().copied())
                };
                let line = format!("{what} (a replayed path of {} steps)", path.len());
                tracing::info!("no proof: {line}");
                self.log.push(format!("no proof: {line}"));
                self.undefined.push((kind, line));
                self.bopts.reached.push(at);
                Next::Continue
            }
        }
    }

    /// The ART nodes from the root to `n`, their locations, and the positions and
    /// states of the merged ones (the parts of a [`RefineInput`] besides the path).
    #[allow(clippy::type_complexity)]
    fn path_nodes(&self, n: ArtId) -> (Vec<ArtId>, Vec<Node>, Vec<usize>, Vec<St<A>>) {
        let nodes = self.art.nodes_to(n);
        let locs: Vec<Node> = nodes.iter().map(|&m| self.art.nodes[m].loc).collect();
        let merged: Vec<usize> = (0..nodes.len())
            .filter(|&i| self.art.nodes[nodes[i]].merged)
            .collect();
        let merged_states = merged
            .iter()
            .map(|&i| self.art.nodes[nodes[i]].state.clone())
            .collect();
        (nodes, locs, merged, merged_states)
    }

    /// A feasible path to a leak check whose replay does not leak: the abstraction
    /// tracks more ([`Abstraction::refine_leak`]) and the ART restarts from the root,
    /// or the search gives up.
    fn spurious_leak(&mut self, n: ArtId, path: &[Step]) -> Next<St<A>, Pr<A>> {
        let prog = self.prog;
        tracing::debug!(
            "feasible path of {} steps to a leak check that does not replay:\n{}",
            path.len(),
            crate::interp::render_path(prog, path)
        );
        let (nodes, locs, merged, merged_states) = self.path_nodes(n);
        let none = Interpolants::default();
        let input = RefineInput {
            path,
            nodes: &nodes,
            locs: &locs,
            interpolants: &none,
            merged: &merged,
            merged_states: &merged_states,
        };
        let added = self.abs.refine_leak(prog, &input);
        if added.is_empty() {
            let at = path.last().map(|s| prog.step_edge(*s).src);
            return Next::GiveUp(format!(
                "no proof of {}: a possible leak at {} (a feasible path of {} steps whose replay does not leak) that the abstraction cannot rule out",
                self.opts.property,
                at.map_or_else(|| "?".to_string(), |s| s.to_string()),
                path.len()
            ));
        }
        self.stats.refinements_pred += 1;
        let line = format!(
            "refinement {}: a possible leak (path of {} steps) that does not replay: {}",
            self.stats.refinements(),
            path.len(),
            added.join(", ")
        );
        tracing::info!("{line}");
        self.log.push(line);
        let abs = &*self.abs;
        self.art = Art::new(prog, abs.cpa().initial(prog, abs.precision()));
        if self.stats.refinements() >= self.opts.max_refinements {
            return Next::GiveUp(format!(
                "refinement limit ({}) reached",
                self.opts.max_refinements
            ));
        }
        Next::Continue
    }

    /// An infeasible error path to node `n`: the abstraction refines from the
    /// interpolants `itps`, and the ART is cut at the pivot.
    fn refine(&mut self, n: ArtId, path: &[Step], itps: &Interpolants) -> Next<St<A>, Pr<A>> {
        let (prog, opts) = (self.prog, self.opts);
        tracing::debug!(
            "infeasible error path of {} steps:\n{}",
            path.len(),
            crate::interp::render_path(prog, path)
        );
        if opts.validate_interpolants && !itps.validated {
            return Next::GiveUp("interpolants were not validated".into());
        }
        let (nodes, locs, merged, merged_states) = self.path_nodes(n);
        let input = RefineInput {
            path,
            nodes: &nodes,
            locs: &locs,
            interpolants: itps,
            merged: &merged,
            merged_states: &merged_states,
        };
        let r = self.abs.refine(prog, &input);
        for u in &r.unhandled {
            tracing::info!("not handled yet: {u}");
        }
        // Nodes computed under an older precision may lie on the path (refinement only
        // rebuilds below the pivot of earlier paths): the first node whose state the
        // current precision recomputes differently is a pivot too.
        let stale = first_stale(prog, &*self.abs, &self.art, path, &nodes);
        if let Some(st) = stale {
            if r.pivot.is_none_or(|p| st < p) {
                tracing::info!("stale ART node at path position {st}");
            }
        }
        let pivot = match (r.pivot, stale) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let Some(pivot) = pivot else {
            return Next::GiveUp(refinement_failed(prog, path, &r));
        };
        self.count_refinement(&r);
        let line = format!(
            "refinement {}: path of {} steps, pivot at position {pivot}: {}",
            self.stats.refinements(),
            path.len(),
            r.added.join(", ")
        );
        tracing::info!("{line}");
        self.log.push(line);
        // Remove the subtrees whose states the new precision changes: all children of
        // the node before the pivot (they are re-expanded). Pivot 0: the initial state
        // itself may change (e.g. a new shape class), so the ART restarts from a fresh
        // root.
        if pivot == 0 {
            let abs = &*self.abs;
            self.art = Art::new(prog, abs.cpa().initial(prog, abs.precision()));
        } else {
            let parent = nodes[pivot.min(nodes.len() - 1) - 1];
            let children = self.art.nodes[parent].children.clone();
            for c in children {
                self.art.remove_subtree(c);
            }
        }
        if self.stats.refinements() >= opts.max_refinements {
            return Next::GiveUp(format!(
                "refinement limit ({}) reached",
                opts.max_refinements
            ));
        }
        Next::Continue
    }

    /// Counts a refinement that changed something in [`Stats`] by its kind.
    fn count_refinement(&mut self, r: &Refinement) {
        if r.pivot.is_none() {
            self.stats.stale_rebuilds += 1;
            return;
        }
        match r.kind {
            "td" => self.stats.refinements_td += 1,
            "scg" => self.stats.refinements_scg += 1,
            "merge" => self.stats.refinements_merge += 1,
            _ => self.stats.refinements_pred += 1,
        }
    }
}

/// Whether a replay that ended in `outcome` reached the undefined behaviour of the
/// target kind `kind` (the memory error or division by zero it stands for).
fn replays_target(kind: LocKind, outcome: &crate::interp::Outcome) -> bool {
    use crate::interp::{MemErrorKind as M, Outcome as O};
    matches!(
        (kind, outcome),
        (
            LocKind::NullDeref,
            O::MemError {
                kind: M::NullDeref,
                ..
            },
        ) | (LocKind::DivByZero, O::DivByZero { .. })
            | (LocKind::RecursionBound, O::RecursionBound { .. })
            | (LocKind::Unmodelled, O::Unmodelled { .. })
            | (
                LocKind::InvalidDeref,
                O::MemError {
                    kind: M::InvalidDeref,
                    ..
                },
            )
            | (
                LocKind::InvalidFree,
                O::MemError {
                    kind: M::InvalidFree,
                    ..
                },
            )
            | (
                LocKind::InvalidCall,
                O::MemError {
                    kind: M::InvalidCall,
                    ..
                },
            )
            | (LocKind::MemLeak, O::MemError { kind: M::Leak, .. },)
    )
}

/// The reason of the UNKNOWN answer when refinement `r` of `path` learnt nothing.
fn refinement_failed(prog: &Program, path: &[Step], r: &Refinement) -> String {
    let mut why = format!("refinement failed on path: {}", describe_path(prog, path));
    if !r.unhandled.is_empty() {
        let mut u = r.unhandled.clone();
        u.truncate(5);
        why.push_str(&format!(
            " (interpolants need facts this analysis does not track: {})",
            u.join("; ")
        ));
    }
    why
}

/// The first position `i >= 1` of the path whose ART node's state differs from what
/// the CPA computes now (current precision) from its parent's state (for a node with
/// merged states: does not cover it as a merge would, [`crate::cpa::Cpa::merged_covers`]).
fn first_stale<A: Abstraction>(
    prog: &Program,
    abs: &A,
    art: &Art<St<A>>,
    path: &[Step],
    nodes: &[ArtId],
) -> Option<usize> {
    let cpa = abs.cpa();
    let prec = abs.precision();
    (1..nodes.len()).find(|&i| {
        let parent = &art.nodes[nodes[i - 1]];
        let node = &art.nodes[nodes[i]];
        // a merged node holds more than its parent's successor: it is current if it
        // covers one
        let merged = node.merged;
        !cpa.post(prog, &parent.state, path[i - 1], node.loc, prec)
            .into_iter()
            .map(|s| cpa.adjust(s, node.loc, prec))
            .any(|s| s == node.state || (merged && cpa.merged_covers(&node.state, &s)))
    })
}

/// `file:line:col: NULL dereference of `p`` (or `division by zero: `d` is 0`) for the
/// last step of a path to an undefined-behaviour target (its `assume(p == NULL)` or
/// `assume(d == 0)` edge).
fn undefined_str(prog: &Program, at: Node, last: Option<Step>) -> String {
    let Some(step) = last else {
        return "undefined behaviour".into();
    };
    let e = prog.step_edge(step);
    let operand = match &e.op {
        crate::cfa::Op::Assume {
            cond: crate::cfa::Expr::Binary(_, a, _),
        } => Some(prog.expr_str(a)),
        crate::cfa::Op::AssumeInvalid { ptr, .. } => Some(prog.vars[*ptr].name.clone()),
        _ => None,
    };
    // the front end's checks: an array index, `assume(i < 0)` / `assume(i >= N)`, and
    // a container field through a list head, `assume(p == head)`
    let (index_check, head) = match &e.op {
        crate::cfa::Op::Assume {
            cond: crate::cfa::Expr::Binary(crate::cfa::BinOp::Eq, _, h),
        } => (false, Some(prog.expr_str(h))),
        crate::cfa::Op::Assume { .. } => (true, None),
        _ => (false, None),
    };
    let what = match (prog.graph[at].kind, operand) {
        (LocKind::InvalidDeref, Some(p)) if head.is_some() => format!(
            "access of a container field through `{p}`, which is the list head `{}` (a head has no container: list_entry/container_of of the head)",
            head.unwrap_or_default()
        ),
        (LocKind::InvalidDeref, Some(i)) if index_check => {
            format!("array access out of bounds (index `{i}`)")
        }
        (LocKind::InvalidDeref, Some(p)) => {
            format!("dereference of `{p}`, a dangling (freed) or garbage pointer")
        }
        (LocKind::InvalidDeref, None) => "dereference of a dangling pointer".into(),
        (LocKind::InvalidFree, Some(p)) => {
            format!("free of `{p}`, which is not a live heap object (double or invalid free)")
        }
        (LocKind::InvalidFree, None) => "double or invalid free".into(),
        (LocKind::DivByZero, Some(d)) => format!("division by zero (`{d}` is 0)"),
        (LocKind::DivByZero, None) => "division by zero".into(),
        (LocKind::InvalidCall, Some(f)) => format!(
            "call through `{f}`, which is NULL or not the address of a function of its type"
        ),
        (LocKind::InvalidCall, None) => "call through an invalid function pointer".into(),
        (LocKind::Unmodelled, _) => {
            "the address of an array element out of range (not modelled; one past the end is valid C, anything else undefined)".into()
        }
        (LocKind::RecursionBound, _) => {
            let callee = match prog.graph[at].func {
                f if f < prog.functions.len() => prog.functions[f].name.clone(),
                _ => "a function".into(),
            };
            format!(
                "a call in `{callee}` deeper than the recursion bound ({} activations of a recursive function)",
                crate::cfa::recursion::RECURSION_DEPTH
            )
        }
        (LocKind::MemLeak, _) => match e.op {
            crate::cfa::Op::AssumeLeak {
                check: crate::cfa::LeakCheck::Unfreed,
                ..
            } => "heap memory still allocated where the run ends".into(),
            _ => "heap memory unreachable while allocated".into(),
        },
        (_, Some(p)) => format!("NULL dereference of `{p}`"),
        (_, None) => "NULL dereference of a pointer".into(),
    };
    format!("{}:{}: {what}", prog.file.display(), e.src)
}

fn short(o: &BuildOutcome) -> String {
    match o {
        BuildOutcome::Error(n) => format!("error node {n}"),
        BuildOutcome::Complete => "complete".into(),
        BuildOutcome::Threshold(n) => format!("threshold at node {n}"),
        BuildOutcome::Limit(r) => format!("limit: {r}"),
    }
}

/// A short description of a path: its length and the source lines of its assumptions.
pub fn describe_path(prog: &Program, path: &[Step]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for s in path {
        let e = prog.step_edge(*s);
        if let crate::cfa::Op::Assume { .. } = e.op {
            let l = format!("{}", e.src.line);
            if lines.last() != Some(&l) {
                lines.push(l);
            }
        }
    }
    let n = lines.len();
    if n > 12 {
        lines.drain(4..n - 6);
        lines.insert(4, "...".into());
    }
    format!(
        "{} steps, branches at lines {}",
        path.len(),
        if lines.is_empty() {
            "-".into()
        } else {
            lines.join(",")
        }
    )
}
