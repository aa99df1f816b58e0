//! `shapemc verify` and `shapemc check-certificate` (predicate abstraction, or the
//! combined heap abstraction of [`super::heap`]).

use super::heap::{
    check_heap_certificate_until, HeapAbstraction, HeapCertificate, HeapOptions, HEAP_CPA_NAME,
    HEAP_SPLIT_CPA_NAME,
};
use super::predicates::PredicateAbstraction;
use super::{model_check, CegarOptions, Verdict};
use crate::art::Order;
use crate::cert::{check, Certificate, Header, ProgramVariant};
use crate::diag::exit;
use crate::predabs::{Cube, Precision, PredAbs, PredScope};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Options of `verify` owned by the CEGAR module.
#[derive(clap::Args, Debug, Clone)]
pub struct VerifyArgs {
    /// Extra clang arguments for reading the file (not a command-line option: the
    /// witness validator reads an instrumented copy with `-iquote` of the original's
    /// folder, so that its `#include "x.h"` finds the same headers).
    #[arg(skip)]
    pub clang_args: Vec<String>,
    /// Write the safety certificate (JSON) here when the verdict is SAFE.
    #[arg(long, value_name = "FILE")]
    pub certificate: Option<PathBuf>,
    /// Write the counterexample (JSON, replayable with `simulate --replay`) here when
    /// the verdict is UNSAFE.
    #[arg(long, value_name = "FILE")]
    pub cex: Option<PathBuf>,
    /// Exploration order of the ART.
    #[arg(long, value_enum, default_value = "bfs")]
    pub order: Order,
    /// Assume malloc/calloc never return NULL (SV-COMP's rules do; by default an
    /// allocation may fail, so an unchecked one that is dereferenced is a reachable NULL
    /// dereference).
    #[arg(long)]
    pub malloc_never_fails: bool,
    /// Wall-clock budget in seconds (UNKNOWN when exhausted).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Maximum number of refinements.
    #[arg(long, default_value_t = 200)]
    pub max_refinements: usize,
    /// Maximum number of ART nodes.
    #[arg(long, default_value_t = 200_000)]
    pub max_nodes: usize,
    /// Where refinement adds predicates.
    #[arg(long, value_enum, default_value = "location")]
    pub pred_scope: PredScope,
    /// Memory limit in MiB: the loop answers UNKNOWN when the resident set exceeds it.
    #[arg(long, value_name = "MB")]
    pub memory_limit: Option<u64>,
    /// Write statistics as a JSON object to FILE (`refinements_td`, `refinements_scg`,
    /// `refinements_pred`, ART sizes and timings, the verdict).
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// Shape-class generators: `refine` starts from the trivial SCG and refines
    /// (explicit heap analysis + FineTune); `maximal` enables the most precise SCGs for
    /// all pointers from the start (no SCG refinement).
    #[arg(long, value_enum, value_name = "MODE", default_value_t = crate::scg::ScgMode::Refine)]
    pub scg: crate::scg::ScgMode,
    /// Abstract domains: `heap` (default) = predicates × explicit heap (× shape), the
    /// paper's algorithm; `pred` = predicate abstraction only (regression baseline).
    #[arg(long, value_enum, default_value = "heap")]
    pub domains: Domains,
    /// The shape domain of `--domains heap`: `tvla`, three-valued shape structures
    /// refined by SCGs (the paper's algorithm); `symheap`, symbolic heaps with list
    /// segments (separation logic) beside predicate abstraction, for list programs
    /// (unreach-call only; no promotion, one thread); `auto` (default), symbolic heaps
    /// for half of `--timeout` (at most 10 s), then `tvla` in the time left.
    #[arg(long, value_enum, value_name = "DOMAIN", default_value = "auto")]
    pub shape_domain: ShapeDomain,
    /// Experiment: one joined region of shape structures per ART node from the start
    /// instead of one structure per node (by default a run switches to joined regions
    /// when most shape posts touch one of several independent structures).
    #[arg(long, help_heading = "Experiments", conflicts_with = "shape_split")]
    pub shape_joined: bool,
    /// Experiment: one shape structure per ART node for the whole run (no switch to
    /// joined regions).
    #[arg(long, help_heading = "Experiments")]
    pub shape_split: bool,
    /// Experiment: drop interpolant predicates over pointers the heap domains track
    /// (the shape domain alone decides their (dis)equalities).
    #[arg(long, help_heading = "Experiments")]
    pub no_heap_pointer_predicates: bool,
    /// Experiment: only the pointers interpolants mention are separating when shape
    /// tracking starts, refinement adds more (the paper's Ts); default: every
    /// `struct σ *` variable.
    #[arg(long, help_heading = "Experiments")]
    pub separate_mentioned_only: bool,
    /// Experiment: never join shape structures with equal node names (TVLA's partial
    /// join); by default regions use it until a refinement of the type fails with it.
    #[arg(long, help_heading = "Experiments")]
    pub no_partial_join: bool,
    /// Experiment: a finer SCG found by FineTune is kept only in the functions of the
    /// error path that need it (per-function classes); default: it applies to the
    /// whole program. Measured: more refinements and slower on the gdsl tasks
    /// (treep_rotate_left 8 s → time-out at 60 s, acyclic_list_remove 4.5 → 15 s).
    #[arg(long, help_heading = "Experiments")]
    pub local_scg: bool,
    /// Experiment: field equalities `f == k` that a range of the tracking definition
    /// covers (`f >= 0`, `f <= 1`) do not name summary nodes until a refinement needs
    /// them; default: they always do. Both ways are used without this flag: the
    /// portfolio (`--jobs` ≥ 2) analyses the program (the promoted program, when
    /// there is one) both ways; one thread runs a program with nothing to promote
    /// lazily, and the promoted program lazily first.
    #[arg(long, help_heading = "Experiments")]
    pub lazy_value_names: bool,
    /// Experiment: track possibly uninitialised or dangling fields with per-variable
    /// flags (when the variable dies the field becomes unknown in every cell) instead
    /// of the per-cell predicate `un[f]` (default). Measured: 9 fewer svcomp tasks
    /// correct.
    #[arg(long, help_heading = "Experiments")]
    pub per_variable_uninit: bool,
    /// Experiment: never merge ART nodes (merge-sep); by default a new node whose
    /// predicate cube and explicit heap equal those of an uncovered node at the same
    /// location is merged into it (shape regions joined, TVLA-style).
    #[arg(long, help_heading = "Experiments")]
    pub no_merge: bool,
    /// Experiment: a shape type whose refinement fails ends the run UNKNOWN
    /// ("refinement failed") instead of going back to explicit heaps, which prove only
    /// bounded structures. The first, short run on the program as written
    /// (`--promote auto`, one thread) always works this way, so that the promoted program
    /// gets the time.
    #[arg(long, help_heading = "Experiments")]
    pub no_explicit_fallback: bool,
    /// When to analyse the promoted program (`shapemc cfa --promote` shows it): pointers
    /// to pointer fields (`struct node **pprev`) split into one pointer per target
    /// field, then the objects of a struct type a run allocates at most 4 times (queue
    /// descriptors, list heads) promoted to global variables. Only a SAFE verdict of
    /// the promoted program is used; after any other, the program as written is
    /// analysed.
    #[arg(long, value_enum, default_value_t = Promote::Auto)]
    pub promote: Promote,
    /// Threads for one verification [default: the machine's cores]. With 2 or more
    /// and a program `--promote` can rewrite, the program as written and the promoted
    /// program are analysed at once (a portfolio): the first usable verdict wins and
    /// stops the other (a proof of either; a counterexample only of the program as
    /// written). No more threads are busy than N. With 1, `--promote` schedules the
    /// two one after the other.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// The property to check: `unreach-call` (default: no call of reach_error()),
    /// `valid-memsafety` (valid-free, valid-deref, valid-memtrack; an UNSAFE answer
    /// names the violated one, `UNSAFE (valid-deref)`) or `valid-memcleanup`; a short
    /// name or an SV-COMP property file (`unreach-call.prp`, read by its text).
    #[arg(long, value_name = "PROPERTY", default_value = "unreach-call", value_parser = crate::spec::Property::parse_arg)]
    pub property: crate::spec::Property,
}

/// The schedule of [`VerifyArgs::promote`].
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Promote {
    /// The program as written for a short budget (a fifth of `--timeout`, at most
    /// 30 s), then the promoted program, then (if the first run ran out of time) the
    /// program as written again in the time left.
    #[default]
    Auto,
    /// The promoted program first, then the program as written in the time left.
    First,
    /// Never promote.
    Never,
}

/// The first run of [`Promote::Auto`] gets at most this many seconds.
const AUTO_FIRST_RUN_S: f64 = 30.0;

/// The abstract domains `verify` combines.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Domains {
    /// Predicate abstraction only.
    Pred,
    /// Predicate abstraction × explicit heap × shape (Algorithms 1-3).
    #[default]
    Heap,
}

/// The shape domain of the heap abstraction ([`VerifyArgs::shape_domain`]).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ShapeDomain {
    /// Three-valued shape structures (TVLA) with SCG refinement.
    Tvla,
    /// Symbolic heaps with list segments ([`crate::symheap`]).
    Symheap,
    /// Symbolic heaps first ([`AUTO_SYMHEAP_SHARE`] of the time, at most
    /// [`AUTO_SYMHEAP_S`]); when they prove nothing,
    /// three-valued structures in the time left (unreach-call; memory properties go
    /// to `tvla` directly).
    #[default]
    Auto,
}

/// The most seconds `--shape-domain auto` gives the symbolic-heap run (without
/// `--timeout`, this; with one, [`AUTO_SYMHEAP_SHARE`] of it, at most this).
/// Measured (session 42, `--timeout 20`): with counters the symbolic heaps prove
/// `seeds/five_lists_join` in 6.3 s, `real/fp_sorted_insert` and `real/ut_cdl_elem`
/// in 5.2 s, which the three-valued domain does not within the limit; of the tasks they
/// do not prove, all but three end UNKNOWN within 0.5 s.
pub const AUTO_SYMHEAP_S: f64 = 10.0;

/// The share of `--timeout` that `--shape-domain auto` gives the symbolic heaps first.
/// Session 43: 0.4 (8 s at 20 s) left `seeds/five_lists_join`, 6.2–8.3 s alone on a
/// slower machine, timing out in two scoreboards of two jobs; 0.5 costs 2 s more on
/// the three tasks whose symbolic-heap run ends only at its deadline.
pub const AUTO_SYMHEAP_SHARE: f64 = 0.5;

impl ShapeDomain {
    /// Whether `verify` runs the symbolic-heap abstraction for these arguments.
    pub fn is_symheap(args: &VerifyArgs) -> bool {
        args.domains == Domains::Heap && args.shape_domain == ShapeDomain::Symheap
    }
    /// Whether `verify` tries the symbolic heaps first for these arguments.
    pub fn is_auto(args: &VerifyArgs) -> bool {
        args.domains == Domains::Heap
            && args.shape_domain == ShapeDomain::Auto
            && !args.property.is_memory()
    }
}

impl Default for VerifyArgs {
    fn default() -> Self {
        VerifyArgs {
            clang_args: Vec::new(),
            certificate: None,
            cex: None,
            order: Order::Bfs,
            malloc_never_fails: false,
            timeout: None,
            max_refinements: 200,
            max_nodes: 200_000,
            pred_scope: PredScope::Location,
            memory_limit: None,
            stats_json: None,
            scg: crate::scg::ScgMode::Refine,
            domains: Domains::Heap,
            shape_domain: ShapeDomain::Auto,
            shape_joined: false,
            shape_split: false,
            no_heap_pointer_predicates: false,
            separate_mentioned_only: false,
            no_partial_join: false,
            local_scg: false,
            lazy_value_names: false,
            per_variable_uninit: false,
            no_merge: false,
            no_explicit_fallback: false,
            promote: Promote::Auto,
            jobs: None,
            property: crate::spec::Property::UnreachCall,
        }
    }
}

/// The certificate format of predicate abstraction.
pub type PredCertificate = Certificate<Cube, Precision>;

/// The result of [`verify_file`]: the verdict and details to print.
pub struct VerifyReport {
    pub verdict: Verdict,
    pub stats: super::Stats,
    /// The certificate of `--domains pred`.
    pub certificate: Option<PredCertificate>,
    /// The certificate of `--domains heap` (as checked: decoded from
    /// [`VerifyReport::certificate_file`]'s body).
    pub heap_certificate: Option<HeapCertificate>,
    /// What `--certificate` writes (SAFE only).
    pub certificate_file: Option<CertFile>,
    pub counterexample: Option<crate::simulate::Counterexample>,
    pub log: Vec<String>,
    /// The violated subproperty of an UNSAFE answer under a memory property.
    pub violated: Option<crate::spec::Subproperty>,
    /// Which program the verdict's evidence (certificate states, counterexample) is of.
    pub program: ProgramVariant,
}

impl VerifyReport {
    /// The verdict line: [`Verdict::line`], with the violated subproperty of a memory
    /// property (`UNSAFE (valid-memtrack)`).
    pub fn verdict_line(&self) -> String {
        match (&self.verdict, self.violated) {
            (Verdict::Unsafe, Some(sub)) => format!("UNSAFE ({sub})"),
            (v, _) => v.line(),
        }
    }
}

/// The program `verify` and `check-certificate` analyse: `file` parsed
/// ([`crate::frontend::load_for_cli`]) with the undefined-behaviour checks added
/// ([`crate::cfa::Program::add_undefined_behaviour_checks`]: NULL and invalid
/// dereferences, invalid frees, divisions by zero), so that a proof covers them.
pub fn load_for_verification(
    file: &Path,
    malloc_never_fails: bool,
) -> Result<crate::cfa::Program, i32> {
    load_for_property(file, malloc_never_fails, crate::spec::Property::UnreachCall)
}

/// [`load_for_verification`] for `property`: under a memory property with the C
/// semantics of the error functions
/// ([`crate::frontend::FrontendOptions::error_calls_as_calls`]).
pub fn load_for_property(
    file: &Path,
    malloc_never_fails: bool,
    property: crate::spec::Property,
) -> Result<crate::cfa::Program, i32> {
    load_with_clang_args(file, malloc_never_fails, property, &[])
}

/// [`load_for_property`] with extra clang arguments (`VerifyArgs::clang_args`).
fn load_with_clang_args(
    file: &Path,
    malloc_never_fails: bool,
    property: crate::spec::Property,
    clang_args: &[String],
) -> Result<crate::cfa::Program, i32> {
    let opts = crate::frontend::FrontendOptions {
        malloc_never_fails,
        error_calls_as_calls: property.is_memory(),
        clang_args: clang_args.to_vec(),
        ..Default::default()
    };
    let mut prog = crate::frontend::parse_file(file, &opts).map_err(|e| {
        eprintln!("{e}");
        e.exit_code()
    })?;
    let (null, invalid, free, divs) = prog.add_undefined_behaviour_checks();
    // after the undefined-behaviour checks: their edges keep their numbers
    let leaks = prog.add_leak_checks(property);
    tracing::debug!(
        "{null} NULL-dereference, {invalid} invalid-dereference, {free} invalid-free, {divs} division-by-zero and {leaks} leak checks added"
    );
    Ok(prog)
}

/// Parses `file` and model-checks it. Front-end errors are returned as
/// `Err(exit code)` after printing the diagnostic to stderr.
///
/// With the heap domains, a program with pointers to pointer fields or boundedly
/// allocated struct types is also analysed promoted ([`crate::promote`]), as
/// `--promote` schedules it: a proof of the promoted program is a proof of the original
/// (it has all the original's runs). Any other verdict of it is no evidence: then the
/// verdict, counterexample and statistics of a run on the program as written are
/// reported (with `--promote auto`: of the first, short run, unless that one ran out of
/// time; then of a second run in the time left).
pub fn verify_file(file: &Path, args: &VerifyArgs) -> Result<VerifyReport, i32> {
    let prog = load_with_clang_args(
        file,
        args.malloc_never_fails,
        args.property,
        &args.clang_args,
    )?;
    let started = std::time::Instant::now();
    let budget = args.timeout.filter(|t| t.is_finite() && *t > 0.0);
    if ShapeDomain::is_symheap(args) {
        if args.property.is_memory() {
            eprintln!(
                "error: --shape-domain symheap checks unreach-call only, not {}",
                args.property
            );
            return Err(crate::diag::exit::USAGE_OR_PARSE);
        }
        return Ok(verify_program(
            &prog,
            args,
            budget,
            &[],
            ProgramVariant::AsWritten,
        ));
    }
    let mut auto_log = None;
    let budget = if ShapeDomain::is_auto(args) {
        let quick = VerifyArgs {
            shape_domain: ShapeDomain::Symheap,
            ..args.clone()
        };
        let short = budget.map_or(AUTO_SYMHEAP_S, |t| {
            (t * AUTO_SYMHEAP_SHARE).min(AUTO_SYMHEAP_S)
        });
        let mut rep = verify_program(&prog, &quick, Some(short), &[], ProgramVariant::AsWritten);
        if !matches!(rep.verdict, Verdict::Unknown(_)) {
            rep.log.insert(0, "shape domain: symbolic heaps".into());
            return Ok(rep);
        }
        auto_log = Some(format!(
            "shape domain: symbolic heaps first ({:.2} s): {}; then three-valued structures",
            started.elapsed().as_secs_f64(),
            rep.verdict.line()
        ));
        // what is left (a first phase that overran its share leaves a moment, so the
        // second one still has a deadline and ends UNKNOWN at once)
        budget.map(|t| (t - started.elapsed().as_secs_f64()).max(0.001))
    } else {
        budget
    };
    let mut rep = verify_tvla(&prog, args, budget, started)?;
    if let Some(line) = auto_log {
        rep.log.insert(0, line);
        rep.stats.time_total_s = started.elapsed().as_secs_f64();
    }
    Ok(rep)
}

/// The heap abstraction with three-valued structures (and promotion as `--promote`
/// schedules it), or predicate abstraction alone: the rest of [`verify_file`], with
/// `budget` seconds from now (the run as a whole started at `started`, which the
/// reported total time counts from).
fn verify_tvla(
    prog: &crate::cfa::Program,
    args: &VerifyArgs,
    budget: Option<f64>,
    started: std::time::Instant,
) -> Result<VerifyReport, i32> {
    // promotion turns heap objects into globals: it would hide leaks and frees
    let promoted = match (args.domains, args.promote) {
        _ if args.property.is_memory() => None,
        (Domains::Heap, Promote::Auto | Promote::First) => crate::promote::promote(prog),
        _ => None,
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let Some(promoted) = promoted else {
        return Ok(verify_unpromoted(prog, args, budget, jobs));
    };
    let now = std::time::Instant::now();
    let left = || budget.map(|t| t - now.elapsed().as_secs_f64());
    let mut what: Vec<String> = promoted
        .split
        .iter()
        .map(|s| format!("{} split per target field", prog.ty_str(&s.ty)))
        .collect();
    what.extend(
        promoted
            .types
            .iter()
            .map(|t| format!("{} ({} objects) to globals", t.name, t.objects)),
    );
    let note = format!("promoted: {}", what.join(", "));
    if jobs >= 2 {
        return Ok(verify_portfolio(prog, promoted, args, budget, note, jobs));
    }
    let mut log = Vec::new();
    // Auto: a verdict of the first, short run stands; an UNKNOWN other than its time
    // limit is reported if the promoted program does not prove the program either
    let mut first = None;
    if args.promote == Promote::Auto {
        let short = budget.map_or(AUTO_FIRST_RUN_S, |t| (t / 5.0).min(AUTO_FIRST_RUN_S));
        let quick = VerifyArgs {
            no_explicit_fallback: true,
            ..args.clone()
        };
        let rep = verify_program(prog, &quick, Some(short), &[], ProgramVariant::AsWritten);
        if !matches!(rep.verdict, Verdict::Unknown(_)) {
            return Ok(rep);
        }
        let line = format!("the program as written: {}", rep.verdict.line());
        tracing::info!("{line}; {note}");
        log.push(line);
        // a failed shape refinement (no explicit fallback in this run): the run on the
        // program as written after the promoted one may still find a bug on small heaps
        if !rep.verdict.out_of_time()
            && (args.no_explicit_fallback || !rep.verdict.is_refinement_failure())
        {
            first = Some(rep);
        }
    }
    tracing::info!("{note}");
    // the promoted program with lazy value names (a third of the time left), then with
    // value names: which of them proves a program depends on the route of its
    // refinements (ARCHITECTURE.md, "Value names"); the lazy run first, since its
    // proofs are the quick ones measured (benchmarks/real/q_stailq_queue: 3.6 s)
    let lazy = !args.lazy_value_names && has_int_fields(&promoted.program);
    let mut rep = None;
    if lazy {
        let lazy_args = VerifyArgs {
            lazy_value_names: true,
            ..args.clone()
        };
        let r = verify_program(
            &promoted.program,
            &lazy_args,
            left().map(|t| t / 3.0),
            &promoted.finite_vars,
            ProgramVariant::Promoted,
        );
        if r.verdict == Verdict::Safe {
            rep = Some(r);
        } else {
            let line = outcome_line(&format!("{note} (lazy value names)"), &r);
            log.push(line);
        }
    }
    let rep = match rep {
        Some(r) => r,
        None => verify_program(
            &promoted.program,
            args,
            left(),
            &promoted.finite_vars,
            ProgramVariant::Promoted,
        ),
    };
    if rep.verdict == Verdict::Safe || left().is_some_and(|t| t <= 0.0) {
        log.push(note);
        let mut rep = only_proofs_of_promoted(rep);
        rep.log.splice(0..0, log);
        rep.stats.time_total_s = started.elapsed().as_secs_f64();
        return Ok(rep);
    }
    log.push(outcome_line(&note, &rep));
    let mut last = match first {
        Some(rep) => rep,
        None => verify_program(prog, args, left(), &[], ProgramVariant::AsWritten),
    };
    last.log.splice(0..0, log);
    last.stats.time_total_s = started.elapsed().as_secs_f64();
    Ok(last)
}

/// A program with nothing to promote. Where value names can matter (the heap domains
/// and a struct with an integer field, not asked for `--lazy-value-names` already), it
/// is analysed with lazy value names: on one thread alone (they name summaries by
/// field values where a refinement needs it, and start over with the names when the
/// shape refinement is stuck, ARCHITECTURE.md, "Value names"), on two or more threads
/// beside the run with value names ([`verify_pair`]). Otherwise as asked.
fn verify_unpromoted(
    prog: &crate::cfa::Program,
    args: &VerifyArgs,
    budget: Option<f64>,
    jobs: usize,
) -> VerifyReport {
    let lazy = args.domains == Domains::Heap && !args.lazy_value_names && has_int_fields(prog);
    if !lazy {
        return verify_program(prog, args, budget, &[], ProgramVariant::AsWritten);
    }
    if jobs >= 2 {
        return verify_pair(prog, args, budget);
    }
    let lazy_args = VerifyArgs {
        lazy_value_names: true,
        ..args.clone()
    };
    verify_program(prog, &lazy_args, budget, &[], ProgramVariant::AsWritten)
}

/// The program analysed with and without lazy value names at once, on two threads:
/// the first verdict but UNKNOWN (each is checked as any run's: a certificate, a
/// replayed counterexample) ends the pair and cancels the other thread; when both are
/// UNKNOWN, the report of the run with value names, the other's outcome logged.
fn verify_pair(prog: &crate::cfa::Program, args: &VerifyArgs, budget: Option<f64>) -> VerifyReport {
    let started = std::time::Instant::now();
    let (tx, rx) = crossbeam::channel::bounded::<(Side, VerifyReport)>(2);
    let cancel = [crate::art::Cancel::default(), crate::art::Cancel::default()];
    spawn_side(
        &tx,
        Side::AsWritten,
        prog.clone(),
        args,
        budget,
        Vec::new(),
        cancel[0].clone(),
    );
    spawn_side(
        &tx,
        Side::AsWrittenLazy,
        prog.clone(),
        args,
        budget,
        Vec::new(),
        cancel[1].clone(),
    );
    drop(tx);
    let mut named: Option<VerifyReport> = None;
    let mut lazy_line: Option<String> = None;
    let mut log =
        vec!["portfolio: the program with and without lazy value names at once".to_string()];
    while let Ok((side, rep)) = rx.recv() {
        if !matches!(rep.verdict, Verdict::Unknown(_)) {
            cancel.iter().for_each(|c| c.cancel());
            if side == Side::AsWrittenLazy {
                log.push("the answer: lazy value names".into());
            }
            log.push(wait_for_cancelled(&rx));
            let mut rep = rep;
            rep.log.splice(0..0, log);
            rep.stats.time_total_s = started.elapsed().as_secs_f64();
            return rep;
        }
        match side {
            Side::AsWrittenLazy => lazy_line = Some(outcome_line("lazy value names", &rep)),
            _ => named = Some(rep),
        }
        if named.is_some() && lazy_line.is_some() {
            break;
        }
    }
    cancel.iter().for_each(|c| c.cancel());
    let stopped = wait_for_cancelled(&rx);
    let mut rep = named.unwrap_or_else(no_answer_report);
    log.extend(lazy_line);
    log.push(stopped);
    rep.log.splice(0..0, log);
    rep.stats.time_total_s = started.elapsed().as_secs_f64();
    rep
}

/// The report when no analysis thread answered (none could start).
fn no_answer_report() -> VerifyReport {
    VerifyReport {
        verdict: Verdict::Unknown("internal error: no analysis thread answered".into()),
        stats: Default::default(),
        certificate: None,
        heap_certificate: None,
        certificate_file: None,
        counterexample: None,
        log: Vec::new(),
        violated: None,
        program: ProgramVariant::AsWritten,
    }
}

/// Starts the analysis of `side` (the program `prog`, `explicit` tracked from the
/// start) on a thread of its own, which sends its report on `tx` and stops early once
/// `cancel` is set. A thread that cannot start leaves its side unanswered (logged).
fn spawn_side(
    tx: &crossbeam::channel::Sender<(Side, VerifyReport)>,
    side: Side,
    prog: crate::cfa::Program,
    args: &VerifyArgs,
    budget: Option<f64>,
    explicit: Vec<crate::cfa::VarId>,
    cancel: crate::art::Cancel,
) {
    spawn_sequence(tx, &[(side, 1.0)], prog, args, budget, explicit, cancel);
}

/// [`spawn_side`] for several sides one after the other on one thread (named after the
/// first): each `(side, share)` runs with `share` of the time left of `budget` and sends
/// its report; the sequence stops after a SAFE verdict or once `cancel` is set.
fn spawn_sequence(
    tx: &crossbeam::channel::Sender<(Side, VerifyReport)>,
    steps: &[(Side, f64)],
    prog: crate::cfa::Program,
    args: &VerifyArgs,
    budget: Option<f64>,
    explicit: Vec<crate::cfa::VarId>,
    cancel: crate::art::Cancel,
) {
    let tx = tx.clone();
    let args = args.clone();
    let steps = steps.to_vec();
    let parent = tracing::Span::current();
    let first = steps
        .first()
        .map_or("none", |&(side, _)| side_setup(side).0);
    let spawned = std::thread::Builder::new()
        .name(format!("verify-{first}"))
        .spawn(move || {
            let started = std::time::Instant::now();
            for (side, share) in steps {
                if cancel.is_cancelled() {
                    return;
                }
                let (name, variant, lazy) = side_setup(side);
                let _span =
                    tracing::info_span!(parent: &parent, "portfolio", side = name).entered();
                let args = VerifyArgs {
                    lazy_value_names: args.lazy_value_names || lazy,
                    ..args.clone()
                };
                let left = budget.map(|t| (t - started.elapsed().as_secs_f64()) * share);
                let rep = verify_program_cancellable(
                    &prog,
                    &args,
                    left,
                    &explicit,
                    variant,
                    Some(cancel.clone()),
                );
                let safe = rep.verdict == Verdict::Safe;
                // the receiver may be gone (another side decided): nothing to do then
                if tx.send((side, rep)).is_err() || safe {
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the {first} analysis thread: {e}");
    }
}

/// The thread name, the program variant and whether value names are lazy, of `side`.
fn side_setup(side: Side) -> (&'static str, ProgramVariant, bool) {
    match side {
        Side::AsWritten => ("as-written", ProgramVariant::AsWritten, false),
        Side::AsWrittenLazy => ("as-written-lazy", ProgramVariant::AsWritten, true),
        Side::Promoted => ("promoted", ProgramVariant::Promoted, false),
        Side::PromotedLazy => ("promoted-lazy", ProgramVariant::Promoted, true),
    }
}

/// "`what`: VERDICT after N s", logged at info level: how a run that did not decide
/// the answer ended.
fn outcome_line(what: &str, rep: &VerifyReport) -> String {
    let line = format!(
        "{what}: {} after {:.2} s",
        rep.verdict.line(),
        rep.stats.time_total_s
    );
    tracing::info!("{line}");
    line
}

/// Whether some struct of `prog` has an integer field (field assertions, and so value
/// names, are only ever about those).
fn has_int_fields(prog: &crate::cfa::Program) -> bool {
    prog.structs
        .iter()
        .any(|s| s.fields.iter().any(|f| f.ty.is_int()))
}

/// Which program a portfolio thread analyses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    AsWritten,
    /// The program as written with `--lazy-value-names` ([`verify_pair`]).
    AsWrittenLazy,
    Promoted,
    /// The promoted program with `--lazy-value-names`.
    PromotedLazy,
}

/// The program as written and the promoted program analysed at once, on two threads
/// (`--jobs` ≥ 2): a proof of either or a counterexample (or any verdict but a time
/// limit) of the program as written ends the portfolio and cancels the other thread
/// ([`crate::art::Cancel`]); a non-proof of the promoted program waits for the other.
/// The promoted program's two runs (lazy value names and not) get threads of their own
/// with `jobs` ≥ 3 and share one ([`spawn_sequence`]) with 2, so that no more threads
/// are busy than `jobs`. The verdict does not depend on which thread finishes first, only the report's
/// statistics do (a program both prove SAFE reports the first proof).
fn verify_portfolio(
    prog: &crate::cfa::Program,
    promoted: crate::promote::Promotion,
    args: &VerifyArgs,
    budget: Option<f64>,
    note: String,
    jobs: usize,
) -> VerifyReport {
    let started = std::time::Instant::now();
    let (tx, rx) = crossbeam::channel::bounded::<(Side, VerifyReport)>(3);
    let cancel = [
        crate::art::Cancel::default(),
        crate::art::Cancel::default(),
        crate::art::Cancel::default(),
    ];
    let spawn = |side: Side,
                 prog: crate::cfa::Program,
                 explicit: Vec<crate::cfa::VarId>,
                 cancel: crate::art::Cancel| {
        spawn_side(&tx, side, prog, args, budget, explicit, cancel);
    };
    spawn(Side::AsWritten, prog.clone(), Vec::new(), cancel[0].clone());
    // the promoted program twice, with and without field values naming summaries
    // from the start: neither is coarser, and which one proves a program depends on
    // the route its refinements take (benchmarks/README.md, session 25)
    let lazy = !args.lazy_value_names && has_int_fields(&promoted.program);
    if lazy && jobs < 3 {
        // two cores: one thread for the program as written, one for the promoted
        // program as one thread does it (lazily for a third of the time, then with
        // value names); three threads on two cores slowed each to two thirds
        // (`seeds/two_queues`: 13.1 s on one thread, 22-26 s as a third thread)
        spawn_sequence(
            &tx,
            &[(Side::PromotedLazy, 1.0 / 3.0), (Side::Promoted, 1.0)],
            promoted.program,
            args,
            budget,
            promoted.finite_vars,
            cancel[1].clone(),
        );
    } else {
        if lazy {
            spawn(
                Side::PromotedLazy,
                promoted.program.clone(),
                promoted.finite_vars.clone(),
                cancel[2].clone(),
            );
        }
        spawn(
            Side::Promoted,
            promoted.program,
            promoted.finite_vars,
            cancel[1].clone(),
        );
    }
    drop(tx);
    let mut log = vec![format!(
        "portfolio: the program as written and the promoted one at once ({note})"
    )];
    if lazy && jobs < 3 {
        log.push(
            "portfolio: the promoted program lazily, then with value names, on one thread".into(),
        );
    }
    let mut as_written: Option<VerifyReport> = None;
    let mut promoted_line: Option<String> = None;
    let mut promoted_left = if lazy { 2 } else { 1 };
    let cancel_all = || cancel.iter().for_each(|c| c.cancel());
    while let Ok((side, rep)) = rx.recv() {
        match side {
            Side::Promoted | Side::PromotedLazy if rep.verdict == Verdict::Safe => {
                cancel_all();
                log.push(match side {
                    Side::PromotedLazy => format!("{note} (lazy value names)"),
                    _ => note.clone(),
                });
                log.push(wait_for_cancelled(&rx));
                let mut rep = rep;
                rep.log.splice(0..0, log);
                rep.stats.time_total_s = started.elapsed().as_secs_f64();
                return rep;
            }
            Side::Promoted | Side::PromotedLazy => {
                let line = match side {
                    Side::PromotedLazy => outcome_line(&format!("{note} (lazy value names)"), &rep),
                    _ => outcome_line(&note, &rep),
                };
                promoted_line = Some(match promoted_line {
                    Some(l) => format!("{l}; {line}"),
                    None => line,
                });
                promoted_left -= 1;
                if as_written.is_some() && promoted_left == 0 {
                    break;
                }
            }
            Side::AsWritten | Side::AsWrittenLazy => {
                let decided = !matches!(rep.verdict, Verdict::Unknown(_)) || promoted_left == 0;
                as_written = Some(rep);
                if decided {
                    break;
                }
                // an UNKNOWN of the program as written: the promoted one may still prove it
            }
        }
    }
    cancel_all();
    let stopped = wait_for_cancelled(&rx);
    let mut rep = as_written.unwrap_or_else(no_answer_report);
    if let Some(line) = promoted_line {
        log.push(line);
    } else {
        log.push(format!(
            "{note}: stopped, the program as written answered first"
        ));
    }
    log.push(stopped);
    rep.log.splice(0..0, log);
    rep.stats.time_total_s = started.elapsed().as_secs_f64();
    rep
}

/// How long a decided portfolio waits for its cancelled thread to stop. The analyses
/// check their [`crate::art::Cancel`] between ART nodes and refinement steps, so this is
/// only reached inside one long Z3 query; the process then ends through `_exit`
/// (`main`), which runs no exit handler under that thread's feet.
const CANCEL_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Waits until every portfolio thread has ended (the channel is disconnected: each
/// thread drops its sender when it ends) or [`CANCEL_WAIT`] has passed, and says which.
/// A thread still running when the process ends could be inside libz3 while its static
/// destructors run, which crashed a run that had already printed its verdict.
fn wait_for_cancelled(rx: &crossbeam::channel::Receiver<(Side, VerifyReport)>) -> String {
    let start = std::time::Instant::now();
    let deadline = start + CANCEL_WAIT;
    loop {
        match rx.recv_deadline(deadline) {
            Ok(_) => continue,
            Err(crossbeam::channel::RecvTimeoutError::Disconnected) => {
                return format!(
                    "portfolio: the other analysis stopped {:.2} s after the answer",
                    start.elapsed().as_secs_f64()
                )
            }
            Err(crossbeam::channel::RecvTimeoutError::Timeout) => {
                return format!(
                    "portfolio: the other analysis was still running {:.0} s after the answer",
                    CANCEL_WAIT.as_secs_f64()
                )
            }
        }
    }
}

/// The report of a run on a promoted program as one on the original: a proof carries
/// over, any other verdict becomes UNKNOWN (a counterexample of the promoted program
/// is not one of the original: it may take a `nondet()` pointer to be an object).
fn only_proofs_of_promoted(mut rep: VerifyReport) -> VerifyReport {
    if rep.verdict != Verdict::Safe {
        rep.verdict = Verdict::Unknown(format!(
            "time limit reached (the program with promoted objects: {})",
            rep.verdict.line()
        ));
        rep.counterexample = None;
    }
    rep
}

/// Model-checks `prog` (the `variant` of the input file) with the domains and options
/// of `args` within `timeout` seconds; the heap domains track the integer variables
/// `explicit` explicitly from the start.
fn verify_program(
    prog: &crate::cfa::Program,
    args: &VerifyArgs,
    timeout: Option<f64>,
    explicit: &[crate::cfa::VarId],
    variant: ProgramVariant,
) -> VerifyReport {
    verify_program_cancellable(prog, args, timeout, explicit, variant, None)
}

/// [`verify_program`] that stops (UNKNOWN, [`crate::art::CANCELLED`]) once `cancel`
/// is set.
fn verify_program_cancellable(
    prog: &crate::cfa::Program,
    args: &VerifyArgs,
    timeout: Option<f64>,
    explicit: &[crate::cfa::VarId],
    variant: ProgramVariant,
    cancel: Option<crate::art::Cancel>,
) -> VerifyReport {
    let start = std::time::Instant::now();
    let prog = prog.clone();
    let mut opts = CegarOptions {
        order: args.order,
        timeout: timeout
            .filter(|t| t.is_finite() && *t > 0.0)
            .map(Duration::from_secs_f64),
        max_refinements: args.max_refinements,
        max_nodes: args.max_nodes,
        memory_limit_mb: args.memory_limit,
        merge: !args.no_merge,
        cancel,
        property: args.property,
        ..Default::default()
    };
    if ShapeDomain::is_symheap(args) {
        let mut abs = super::symheap::SymHeapAbstraction::new(&prog, args.pred_scope, 10_000);
        let out = model_check(&prog, &mut abs, &opts);
        let file = out.certificate.as_ref().and_then(|c| {
            let h = Header::new(&c.cpa, &prog, variant, None, c.nodes.len())
                .map(|h| h.with_property(args.property));
            cert_file(h, CertBody::Symheap(c.clone()))
        });
        // the predicate part, for the loop invariants of correctness witnesses
        let certificate = out.certificate.map(|c| Certificate {
            format: c.format,
            file: c.file,
            cpa: c.cpa,
            precision: c.precision.1,
            nodes: c
                .nodes
                .into_iter()
                .map(|n| crate::cert::CertNode {
                    state: n.state.1,
                    id: n.id,
                    loc: n.loc,
                    src: n.src,
                    stack: n.stack,
                    parent: n.parent,
                    step: n.step,
                    covered_by: n.covered_by,
                    covered_also: n.covered_also,
                })
                .collect(),
        });
        return VerifyReport {
            verdict: out.verdict,
            stats: out.stats,
            certificate,
            heap_certificate: None,
            certificate_file: file,
            counterexample: out.counterexample,
            log: out.log,
            violated: out.violated,
            program: variant,
        };
    }
    if args.domains == Domains::Pred {
        let mut abs = PredicateAbstraction::new(args.pred_scope, 10_000);
        let out = model_check(&prog, &mut abs, &opts);
        let file = out.certificate.as_ref().and_then(|c| {
            let h = Header::new("predabs", &prog, variant, None, c.nodes.len())
                .map(|h| h.with_property(args.property));
            cert_file(h, CertBody::Pred(c.clone()))
        });
        return VerifyReport {
            verdict: out.verdict,
            stats: out.stats,
            certificate: out.certificate,
            heap_certificate: None,
            certificate_file: file,
            counterexample: out.counterexample,
            log: out.log,
            violated: out.violated,
            program: variant,
        };
    }
    let lattice = match crate::scg::Lattice::load(None) {
        Ok(l) => Some(l),
        Err(es) => {
            for e in &es {
                eprintln!("warning: SCG library: {e}");
            }
            eprintln!("warning: no SCG library: shape analysis disabled (explicit heaps only)");
            None
        }
    };
    let options = HeapOptions {
        shape_joined: args.shape_joined,
        shape_split: args.shape_split,
        filter_heap_pointer_predicates: args.no_heap_pointer_predicates,
        separate_mentioned_only: args.separate_mentioned_only,
        no_partial_join: args.no_partial_join,
        local_scg: args.local_scg,
        lazy_value_names: args.lazy_value_names,
        no_explicit_fallback: args.no_explicit_fallback,
        per_variable_uninit: args.per_variable_uninit,
        sample_deadline: opts.timeout.map(|t| start + t),
    };
    let mut abs = HeapAbstraction::new(&prog, args.pred_scope, 10_000, args.scg, lattice, options);
    abs.keep_certificate = args.certificate.is_some();
    abs.track_ints_explicitly(&prog, explicit);
    // the set-up (`--scg maximal` samples the program) counts against the time limit
    opts.timeout = opts.timeout.map(|t| t.saturating_sub(start.elapsed()));
    let out = model_check(&prog, &mut abs, &opts);
    let file = match (&out.certificate, abs.take_sealed()) {
        (Some(c), Some(body)) => {
            let h =
                Header::new(&c.cpa, &prog, variant, abs.library_sha256(), c.nodes.len()).map(|h| {
                    h.with_scg_library(abs.library_origin())
                        .with_property(args.property)
                });
            cert_file(h, CertBody::Heap(body))
        }
        _ => None,
    };
    VerifyReport {
        verdict: out.verdict,
        stats: out.stats,
        certificate: None,
        heap_certificate: out.certificate,
        certificate_file: file,
        counterexample: out.counterexample,
        log: out.log,
        violated: out.violated,
        program: variant,
    }
}

/// The body of a certificate file.
pub enum CertBody {
    /// `--domains pred`: the generic certificate.
    Pred(PredCertificate),
    /// The heap abstraction's compact body ([`super::heap_cert`]).
    Heap(super::heap_cert::HeapBody),
    /// `--shape-domain symheap`: the generic certificate.
    Symheap(super::symheap::SymHeapCertificate),
}

/// A certificate ready to be written: header and body.
pub struct CertFile {
    pub header: Header,
    pub body: CertBody,
}

impl CertFile {
    /// Writes the file ([`crate::cert::write_file`]: zstd-compressed when the name
    /// ends in `.zst`).
    pub fn write(&self, path: &Path) -> Result<(), String> {
        match &self.body {
            CertBody::Pred(b) => crate::cert::write_file(path, &self.header, b),
            CertBody::Heap(b) => crate::cert::write_file(path, &self.header, b),
            CertBody::Symheap(b) => crate::cert::write_file(path, &self.header, b),
        }
    }
}

/// The certificate file of a header (logged and dropped when the input cannot be
/// hashed: the verdict stands, only the file is missing).
fn cert_file(header: Result<Header, String>, body: CertBody) -> Option<CertFile> {
    match header {
        Ok(header) => Some(CertFile { header, body }),
        Err(e) => {
            tracing::warn!("no certificate file: {e}");
            None
        }
    }
}

fn write_json<T: serde::Serialize>(path: &Path, v: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `shapemc verify FILE`: prints the verdict line first (`SAFE`, `UNSAFE`,
/// `UNKNOWN: <reason>`), then details; writes the certificate / counterexample if asked,
/// before printing anything.
/// Returns the exit code (0, 10, 20; 2/3 for front-end errors).
pub fn run_verify(file: &Path, args: &VerifyArgs) -> i32 {
    run_verify_with(file, args, &|_| None).0
}

/// Evidence a caller derives from the report and writes before anything is printed
/// (an SV-COMP witness): what it is, where it went and whether the write succeeded;
/// `None` when there is nothing to write for this verdict.
pub type ExtraEvidence<'a> =
    &'a dyn Fn(&VerifyReport) -> Option<(String, PathBuf, Result<(), String>)>;

/// [`run_verify`] with `extra` evidence written next to the certificate and the
/// counterexample. Returns the exit code and the verdict line (empty when the front
/// end refused the file; it printed why).
pub fn run_verify_with(file: &Path, args: &VerifyArgs, extra: ExtraEvidence) -> (i32, String) {
    let rep = match verify_file(file, args) {
        Ok(r) => r,
        Err(code) => return (code, String::new()),
    };
    let s = &rep.stats;
    // the files first: output piped into a reader that stops early (`| head -1`) ends
    // the process at the next print (SIGPIPE), and the evidence must exist by then
    let mut code = rep.verdict.exit_code();
    if let Some(path) = &args.stats_json {
        let mut v = serde_json::to_value(s).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("verdict".into(), rep.verdict_line().into());
        }
        if let Err(e) = write_json(path, &v) {
            eprintln!("error: cannot write the statistics: {e}");
        }
    }
    let cert = match (&args.certificate, &rep.certificate_file) {
        (Some(path), Some(c)) => Some((path, c.write(path))),
        (Some(path), None) if rep.verdict == Verdict::Safe => Some((
            path,
            Err("the certificate was not kept (see the log)".to_string()),
        )),
        _ => None,
    };
    let cex = match (&args.cex, &rep.counterexample) {
        (Some(path), Some(c)) => Some((path, write_json(path, c))),
        _ => None,
    };
    let extra = extra(&rep);
    println!("{}", rep.verdict_line());
    println!(
        "refinements: {} (predicates), {} td, {} scg, {} merge, ART: {} nodes ({} created), time: {:.2} s (build {:.2} s, path analysis {:.2} s)",
        s.refinements_pred,
        s.refinements_td,
        s.refinements_scg,
        s.refinements_merge,
        s.art_nodes,
        s.art_nodes_created,
        s.time_total_s,
        s.time_build_s,
        s.time_path_analysis_s
    );
    for l in &rep.log {
        println!("  {l}");
    }
    for (t, scg) in &s.final_scg {
        println!("  final SCG of {t}: {scg}");
    }
    if matches!(rep.verdict, Verdict::Unknown(_)) && !s.busiest_locations.is_empty() {
        let b: Vec<String> = s
            .busiest_locations
            .iter()
            .map(|c| format!("{} at {}", c.nodes, c.location))
            .collect();
        println!("  most ART nodes: {}", b.join(", "));
    }
    if !report_written("certificate", cert) {
        code = exit::USAGE_OR_PARSE;
    }
    if let Some(c) = &rep.counterexample {
        println!("counterexample ({} steps):", c.path.len());
        for l in &c.trace {
            println!("  {l}");
        }
    }
    if !report_written("counterexample", cex) {
        code = exit::USAGE_OR_PARSE;
    }
    if let Some((what, path, result)) = &extra {
        if !report_written(what, Some((path, result.clone()))) {
            code = exit::USAGE_OR_PARSE;
        }
    }
    (code, rep.verdict_line())
}

/// Says where `what` was written, or why it could not be; false on a write error.
fn report_written(what: &str, written: Option<(&PathBuf, Result<(), String>)>) -> bool {
    match written {
        Some((path, Ok(()))) => println!("{what} written to {}", path.display()),
        Some((_, Err(e))) => {
            eprintln!("error: cannot write the {what}: {e}");
            return false;
        }
        None => {}
    }
    true
}

/// Options of `check-certificate`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CheckArgs {
    /// Only for scripts written for older versions: the certificate's header says
    /// whether allocation may fail; a flag that disagrees with it is refused.
    #[arg(long)]
    pub malloc_never_fails: bool,
    /// Wall-clock budget in seconds (UNKNOWN, exit 20, when exhausted).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Memory limit in MiB (UNKNOWN, exit 20, when exceeded).
    #[arg(long, value_name = "MB")]
    pub memory_limit: Option<u64>,
    /// The property the certificate must prove (as `verify --property`); a
    /// certificate of another property is INVALID.
    #[arg(long, value_name = "PROPERTY", default_value = "unreach-call", value_parser = crate::spec::Property::parse_arg)]
    pub property: crate::spec::Property,
}

/// The answer of `check-certificate`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    /// The certificate proves the file safe.
    Valid,
    /// The certificate is rejected, with the reason.
    Invalid(String),
    /// No answer within the time or memory limit.
    Unknown(String),
}

/// Checks a certificate (any CPA) against `file` from scratch: every semantic option
/// comes from the certificate's header, which must name this file's content; heap
/// certificates are decoded with the SCG library this checker loads
/// ([`super::heap_cert::decode`]). Front-end errors are `Err(exit code)`.
pub fn check_certificate(
    file: &Path,
    cert_file: &Path,
    args: &CheckArgs,
) -> Result<CheckOutcome, i32> {
    let started = std::time::Instant::now();
    let deadline = args
        .timeout
        .filter(|t| t.is_finite() && *t > 0.0)
        .map(|t| started + Duration::from_secs_f64(t));
    let invalid = |e: String| Ok(CheckOutcome::Invalid(e));
    let reader = match crate::cert::Reader::open(cert_file) {
        Ok(r) => r,
        Err(e) => return invalid(e),
    };
    let h = reader.header.clone();
    if let Err(e) = h.check_input(file) {
        return invalid(e);
    }
    if args.malloc_never_fails && !h.malloc_never_fails {
        return invalid(
            "--malloc-never-fails was given, but the certificate was written without it (allocation may fail)"
                .into(),
        );
    }
    if let Err(e) = h.check_property(args.property) {
        return invalid(e);
    }
    let prog = load_for_property(file, h.malloc_never_fails, h.property)?;
    if let Err(e) = super::memsafety::memory_proof_obligation(&prog, h.property) {
        return invalid(format!("no proof of {}: {e}", h.property));
    }
    let prog = match h.program {
        ProgramVariant::AsWritten => prog,
        ProgramVariant::Promoted => match crate::promote::promote(&prog) {
            Some(p) => p.program,
            None => return invalid(
                "the certificate is of the promoted program, but this file has nothing to promote"
                    .into(),
            ),
        },
    };
    let limit = |e: crate::cert::CertError| match e {
        crate::cert::CertError::Timeout | crate::cert::CertError::OutOfMemory => {
            CheckOutcome::Unknown(e.to_string())
        }
        e => CheckOutcome::Invalid(e.to_string()),
    };
    let split = h.cpa == HEAP_SPLIT_CPA_NAME;
    if h.cpa == HEAP_CPA_NAME || split {
        let lattice = match crate::scg::Lattice::load(None) {
            Ok(l) => l,
            Err(es) => {
                let es: Vec<String> = es.iter().map(|e| e.to_string()).collect();
                return invalid(format!("the SCG library does not load: {}", es.join("; ")));
            }
        };
        let ours = lattice.library().sha256();
        if h.scg_library_sha256.as_deref() != Some(ours) {
            return invalid(format!(
                "the certificate was written with another SCG library (SHA-256 {}; this checker has {ours})",
                h.scg_library_sha256.as_deref().unwrap_or("none")
            ));
        }
        let body: super::heap_cert::HeapBody = match reader.body() {
            Ok(b) => b,
            Err(e) => return invalid(e),
        };
        if body.len() != h.nodes {
            return invalid(format!(
                "the header announces {} nodes, the body has {}",
                h.nodes,
                body.len()
            ));
        }
        let cert = match super::heap_cert::decode(&prog, &lattice, &h.cpa, &body) {
            Ok(c) => c,
            Err(e) => return invalid(e),
        };
        drop(body);
        return Ok(
            match check_heap_certificate_until(&prog, &cert, split, deadline, args.memory_limit) {
                Ok(()) => CheckOutcome::Valid,
                Err(e) => limit(e),
            },
        );
    }
    if h.cpa == super::symheap::SYMHEAP_CPA_NAME {
        let cert: super::symheap::SymHeapCertificate = match reader.body() {
            Ok(c) => c,
            Err(e) => return invalid(e),
        };
        return Ok(
            match super::symheap::check_certificate(&prog, &cert, deadline, args.memory_limit) {
                Ok(()) => CheckOutcome::Valid,
                Err(e) => limit(e),
            },
        );
    }
    if h.cpa != "predabs" {
        return invalid(format!("certificate of an unknown CPA `{}`", h.cpa));
    }
    let cert: PredCertificate = match reader.body() {
        Ok(c) => c,
        Err(e) => return invalid(e),
    };
    Ok(match check_parsed(&prog, &cert) {
        Ok(()) => CheckOutcome::Valid,
        Err(e) => CheckOutcome::Invalid(e),
    })
}

/// Validates the format, precision and states of a certificate, then runs
/// [`crate::cert::check`] with a fresh [`PredAbs`].
pub fn check_parsed(prog: &crate::cfa::Program, cert: &PredCertificate) -> Result<(), String> {
    if cert.format != crate::cert::FORMAT {
        return Err(format!("unknown certificate format `{}`", cert.format));
    }
    if cert.cpa != "predabs" {
        return Err(format!(
            "certificate of CPA `{}`, expected `predabs`",
            cert.cpa
        ));
    }
    cert.precision.validate(prog)?;
    let n = cert.precision.preds.len() as u32;
    for node in &cert.nodes {
        if !node.state.is_normal() || node.state.0.iter().any(|(i, _)| *i >= n) {
            return Err(format!("node {}: malformed state", node.id));
        }
        if node.stack.iter().any(|&e| e >= prog.graph.edge_count()) {
            return Err(format!("node {}: call stack names no edge", node.id));
        }
        if let Some(s) = node.step {
            let (crate::cfa::Step::Edge(e)
            | crate::cfa::Step::Enter(e)
            | crate::cfa::Step::Leave(e)) = s;
            if e.index() >= prog.graph.edge_count() {
                return Err(format!("node {}: step names no edge", node.id));
            }
        }
    }
    check(&PredAbs::new(10_000), prog, cert).map_err(|e| e.to_string())
}

/// `shapemc check-certificate FILE CERT`: prints `VALID` (exit 0), `INVALID: reason`
/// (exit 1) or `UNKNOWN: reason` (exit 20, a limit); front-end errors exit 2/3.
pub fn run_check_certificate(file: &Path, cert_file: &Path, args: &CheckArgs) -> i32 {
    match check_certificate(file, cert_file, args) {
        Err(code) => code,
        Ok(CheckOutcome::Valid) => {
            println!("VALID");
            0
        }
        Ok(CheckOutcome::Invalid(e)) => {
            println!("INVALID: {e}");
            1
        }
        Ok(CheckOutcome::Unknown(e)) => {
            println!("UNKNOWN: {e}");
            exit::UNKNOWN
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(verdict: Verdict) -> VerifyReport {
        VerifyReport {
            verdict,
            stats: Default::default(),
            certificate: None,
            heap_certificate: None,
            certificate_file: None,
            counterexample: Some(crate::simulate::Counterexample {
                format: crate::simulate::Counterexample::FORMAT.into(),
                file: "x.c".into(),
                path: Vec::new(),
                inputs: Default::default(),
                trace: Vec::new(),
            }),
            log: Vec::new(),
            violated: None,
            program: ProgramVariant::AsWritten,
        }
    }

    #[test]
    fn only_a_proof_of_the_promoted_program_is_reported() {
        // a counterexample of the promoted program is no evidence for the original
        let r = only_proofs_of_promoted(report(Verdict::Unsafe));
        assert!(matches!(&r.verdict, Verdict::Unknown(m) if m.contains("UNSAFE")));
        assert!(r.counterexample.is_none());
        assert!(r.verdict.out_of_time());
        let r = only_proofs_of_promoted(report(Verdict::Safe));
        assert_eq!(r.verdict, Verdict::Safe);
    }
}
