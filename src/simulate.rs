//! `shapemc simulate`: random concrete runs of a C program, and replay of
//! counterexamples (`--replay CEX.json`).

use crate::cfa::{Inputs, Step};
use crate::diag::exit;
use crate::interp::{render_trace, replay_path, run_random, Limits, Outcome, Run};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A counterexample as written by `verify --cex` and read by `simulate --replay`:
/// the interprocedural path to the error location and the nondeterministic choices
/// that make it executable. `trace` is a human-readable rendering (not read back).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Counterexample {
    pub format: String,
    pub file: String,
    pub path: Vec<Step>,
    pub inputs: Inputs,
    #[serde(default)]
    pub trace: Vec<String>,
}

impl Counterexample {
    /// The format tag written into every counterexample file.
    pub const FORMAT: &'static str = "shapemc-counterexample-1";
}

/// Output format of `simulate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SimFormat {
    Text,
    Json,
}

/// Options of `shapemc simulate`.
#[derive(Clone, Debug)]
pub struct SimOptions {
    pub runs: u64,
    pub seed: u64,
    pub max_steps: usize,
    pub malloc_never_fails: bool,
    pub show_trace: bool,
    pub format: SimFormat,
    /// `--replay` under a memory property: the counterexample of `verify --property`
    /// must end in a violation of it (a memory error or a leak) instead of the error.
    pub property: crate::spec::Property,
}

#[derive(Serialize)]
struct Summary<'a> {
    file: String,
    runs: u64,
    error_runs: u64,
    first_error_seed: Option<u64>,
    outcomes: BTreeMap<&'a str, u64>,
}

fn outcome_kind(o: &Outcome) -> &'static str {
    match o {
        Outcome::Error { .. } => "error",
        Outcome::Exit => "exit",
        Outcome::Blocked { .. } => "blocked",
        Outcome::MemError { .. } => "memory-error",
        Outcome::DivByZero { .. } => "division-by-zero",
        Outcome::RecursionBound { .. } => "recursion-bound",
        Outcome::Unmodelled { .. } => "unmodelled",
        Outcome::StepLimit => "step-limit",
        Outcome::Diverged { .. } => "diverged",
        Outcome::Stuck { .. } => "stuck",
    }
}

use crate::frontend::load_for_cli as load;

/// `shapemc simulate FILE`: `runs` random runs with seeds `seed..seed+runs`. Prints a
/// summary (and the trace of the first run that reached the error); returns 10 if
/// some run reached the error location, 0 otherwise.
pub fn run_simulate(file: &Path, o: &SimOptions) -> i32 {
    let prog = match load(file, o.malloc_never_fails) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let limits = Limits {
        max_steps: o.max_steps,
        malloc_never_fails: o.malloc_never_fails,
    };
    let mut outcomes: BTreeMap<&str, u64> = BTreeMap::new();
    let mut first: Option<(u64, Run)> = None;
    let mut memory_errors = Vec::new();
    for seed in o.seed..o.seed.saturating_add(o.runs) {
        let run = run_random(&prog, seed, &limits);
        *outcomes.entry(outcome_kind(&run.outcome)).or_default() += 1;
        if let Outcome::MemError { .. } | Outcome::DivByZero { .. } | Outcome::Stuck { .. } =
            run.outcome
        {
            if memory_errors.len() < 3 {
                memory_errors.push(format!("seed {seed}: {}", run.outcome));
            }
        }
        if run.outcome.is_error() && first.is_none() {
            first = Some((seed, run));
        }
    }
    let errors = outcomes.get("error").copied().unwrap_or(0);
    match o.format {
        SimFormat::Json => {
            let s = Summary {
                file: file.display().to_string(),
                runs: o.runs,
                error_runs: errors,
                first_error_seed: first.as_ref().map(|(s, _)| *s),
                outcomes,
            };
            println!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
        }
        SimFormat::Text => {
            let kinds: Vec<String> = outcomes.iter().map(|(k, n)| format!("{k}: {n}")).collect();
            println!("{}: {} runs ({})", file.display(), o.runs, kinds.join(", "));
            for m in &memory_errors {
                println!("  {m}");
            }
            match &first {
                Some((seed, run)) => {
                    println!(
                        "error location reached in {errors}/{} runs (first with --seed {seed})",
                        o.runs
                    );
                    if o.show_trace {
                        print!("{}", render_trace(&prog, run));
                    }
                }
                None => println!("error location not reached"),
            }
        }
    }
    if errors > 0 {
        exit::UNSAFE
    } else {
        exit::SAFE
    }
}

/// Replays `cex` on `prog` (the run's step limit at least the path's length); a step
/// that names no edge of `prog` is a usage error (exit 2, reported against `cex_file`).
fn replay_checked(
    prog: &crate::cfa::Program,
    cex_file: &Path,
    cex: &Counterexample,
    o: &SimOptions,
) -> Result<Run, i32> {
    if let Some(bad) = cex.path.iter().find(|s| {
        let (Step::Edge(e) | Step::Enter(e) | Step::Leave(e)) = **s;
        e.index() >= prog.graph.edge_count()
    }) {
        eprintln!(
            "{}: error: step {bad:?} names no edge of this program",
            cex_file.display()
        );
        return Err(exit::USAGE_OR_PARSE);
    }
    Ok(replay_path(
        prog,
        &cex.path,
        &cex.inputs,
        &replay_limits(cex, o),
    ))
}

/// The limits of a replay: `o`'s, with room for the whole path.
fn replay_limits(cex: &Counterexample, o: &SimOptions) -> Limits {
    Limits {
        max_steps: o.max_steps.max(cex.path.len() + 1),
        malloc_never_fails: o.malloc_never_fails,
    }
}

/// [`run_replay`] of a counterexample of `verify --property P` for a memory property:
/// the program is read as `verify` reads it under P (the error functions as calls, the
/// undefined-behaviour checks added); exit 10 when the replay ends in a violation of P
/// (the memory error at the path's target, or memory lost / left allocated at its
/// end), 20 otherwise.
fn replay_memory(file: &Path, cex_file: &Path, cex: &Counterexample, o: &SimOptions) -> i32 {
    let opts = crate::frontend::FrontendOptions {
        malloc_never_fails: o.malloc_never_fails,
        error_calls_as_calls: true,
        ..Default::default()
    };
    let mut prog = match crate::frontend::parse_file(file, &opts) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return e.exit_code();
        }
    };
    prog.add_undefined_behaviour_checks();
    prog.add_leak_checks(o.property);
    let run = match replay_checked(&prog, cex_file, cex, o) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let mut violated = match &run.outcome {
        Outcome::MemError { kind, .. } => crate::interp::violated_subproperty(o.property, *kind),
        _ => None,
    };
    let mut shown = run;
    if violated.is_none() {
        let (end, heap) =
            crate::interp::replay_to_end(&prog, &cex.path, &cex.inputs, &replay_limits(cex, o));
        violated = heap.and_then(|h| h.violated(o.property));
        shown = end;
    }
    if o.show_trace || violated.is_none() {
        print!("{}", render_trace(&prog, &shown));
    }
    match violated {
        Some(s) => {
            println!("replay: {} ({s} violated)", shown.outcome);
            exit::UNSAFE
        }
        None => {
            println!("replay: {} (no {} violation)", shown.outcome, o.property);
            exit::UNKNOWN
        }
    }
}

/// `shapemc simulate FILE --replay CEX`: replays a counterexample; returns 10 if it
/// reaches the error location, 20 if it does not (the counterexample is not valid for
/// this program), 2 if the counterexample file cannot be read.
pub fn run_replay(file: &Path, cex_file: &Path, o: &SimOptions) -> i32 {
    let cex: Counterexample = match std::fs::read_to_string(cex_file)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "{}: error: cannot read counterexample: {e}",
                cex_file.display()
            );
            return exit::USAGE_OR_PARSE;
        }
    };
    if o.property.is_memory() {
        return replay_memory(file, cex_file, &cex, o);
    }
    let prog = match load(file, o.malloc_never_fails) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let run = match replay_checked(&prog, cex_file, &cex, o) {
        Ok(r) => r,
        Err(code) => return code,
    };
    if o.show_trace || !run.outcome.is_error() {
        print!("{}", render_trace(&prog, &run));
    }
    println!("replay: {}", run.outcome);
    if run.outcome.is_error() {
        exit::UNSAFE
    } else {
        exit::UNKNOWN
    }
}
