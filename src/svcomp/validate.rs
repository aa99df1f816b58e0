//! `shapemc validate-witness FILE.c W.yml`: confirms or refutes an SV-COMP witness
//! (format 2.0) of FILE, written by shapemc or by another tool.
//!
//! First the witness must be of FILE: its `input_file_hashes` must name FILE's SHA-256
//! (else it is rejected, UNKNOWN), and its data model must be ILP32 (else exit 3).
//!
//! A violation witness is confirmed (UNSAFE, exit 10) by a concrete run that follows
//! it: the interpreter takes the value of each `__VERIFIER_nondet_*()` call from the
//! witness's next `function_return` waypoint (`\result == v`) when the call is at that
//! waypoint's location, and a random value otherwise (a few seeds); the run must use
//! every such waypoint, in order, and end at the `reach_error()` call on the `target`
//! waypoint's line. Its path must then be feasible for Z3 and the interpreter must
//! replay it to the error with Z3's model: the evidence an UNSAFE of `verify` needs.
//! Other waypoints (`branching`, `assumption`, `function_enter`, and every `avoid`)
//! are not enforced, so a confirmation says that the program reaches the target the
//! witness names with the values it states.
//!
//! A correctness witness is confirmed (SAFE, exit 0) when `verify` proves the program
//! with each invariant inserted as an assertion at its loop head
//! ([`super::correctness::instrument`]).

use super::violation::{Source, NONDET_PREFIX};
use super::witness::{check_input, parse, Entry, Location, Segment};
use crate::cfa::{EdgeId, Program};
use crate::diag::exit;
use crate::interp::{replay_path, run_oracle, Limits};
use std::path::Path;
use std::time::{Duration, Instant};

/// Runs tried (seeds) for a violation witness.
const RUNS: u64 = 32;
/// Steps of one run.
const MAX_STEPS: usize = 200_000;

/// `validate-witness`: prints the verdict line and returns the exit code (0 the
/// correctness witness is confirmed, 10 the violation witness is confirmed, 20 not
/// confirmed or rejected, 2 unreadable input, 3 unsupported data model).
pub fn run_validate(file: &Path, witness: &Path, timeout: Option<f64>) -> i32 {
    let text = match std::fs::read_to_string(witness) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: {e}", witness.display());
            return exit::USAGE_OR_PARSE;
        }
    };
    let entries = match parse(&text) {
        Ok((entries, _)) => entries,
        Err(e) => {
            eprintln!("error: {}: {e}", witness.display());
            return exit::USAGE_OR_PARSE;
        }
    };
    let Some(entry) = entries.into_iter().next() else {
        eprintln!(
            "error: {}: no violation_sequence or invariant_set entry",
            witness.display()
        );
        return exit::USAGE_OR_PARSE;
    };
    let metadata = match &entry {
        Entry::ViolationSequence { metadata, .. } | Entry::InvariantSet { metadata, .. } => {
            metadata
        }
    };
    if let Err(e) = check_input(metadata, file) {
        println!("UNKNOWN: witness rejected: {e}");
        return exit::UNKNOWN;
    }
    let dm = metadata.task.data_model.as_str();
    if !matches!(dm, "ILP32" | "32bit") {
        eprintln!(
            "{}: unsupported: data model {dm} (the front end reads programs as ILP32 only)",
            witness.display()
        );
        return exit::UNSUPPORTED;
    }
    let deadline = timeout
        .filter(|t| t.is_finite() && *t > 0.0)
        .map(|t| Instant::now() + Duration::from_secs_f64(t));
    match entry {
        Entry::ViolationSequence { content, .. } => match validate_violation(file, &content) {
            Ok(how) => {
                println!("UNSAFE: witness confirmed: {how}");
                exit::UNSAFE
            }
            Err(Fail::Input(code)) => code,
            Err(Fail::Not(why)) => {
                println!("UNKNOWN: witness not confirmed: {why}");
                exit::UNKNOWN
            }
        },
        Entry::InvariantSet { content, .. } => {
            super::correctness::validate(file, &content, deadline)
        }
    }
}

/// Why a violation witness was not confirmed.
#[derive(Debug)]
pub enum Fail {
    /// The C file could not be read (the front end printed why): this exit code.
    Input(i32),
    /// The reason.
    Not(String),
}

/// A `function_return` waypoint's value: `\result == v` (either side).
pub fn result_value(constraint: &str) -> Option<i64> {
    let (a, b) = constraint.split_once("==")?;
    let (a, b) = (a.trim(), b.trim());
    let v = if a == "\\result" {
        b
    } else if b == "\\result" {
        a
    } else {
        return None;
    };
    let v = v.trim_start_matches('(').trim_end_matches(')').trim();
    let v = v.trim_end_matches(['u', 'U', 'l', 'L']);
    v.parse::<i64>().ok()
}

/// Whether the `Nondet` edge `e` is the call a waypoint at `loc` names: a
/// `__VERIFIER_nondet_*()` call whose closing parenthesis is on the waypoint's line
/// and, if it gives a column, between the call's start and that parenthesis.
fn call_at(prog: &Program, src: &Source, e: EdgeId, loc: &Location) -> bool {
    let edge = &prog.graph[e];
    let Some((line, col)) = src.call_close_paren(&edge.src, NONDET_PREFIX) else {
        return false;
    };
    if loc.line != line && loc.line != edge.src.line {
        return false;
    }
    match loc.column {
        None => true,
        Some(c) if loc.line == line && edge.src.line == line => c >= edge.src.col && c <= col,
        Some(c) if loc.line == line => c <= col,
        Some(c) => c >= edge.src.col,
    }
}

/// Confirms a violation witness (see the module docs): `Ok` with how, or why not.
pub fn validate_violation(file: &Path, content: &[Segment]) -> Result<String, Fail> {
    let prog = crate::cegar::cli::load_for_verification(file, true).map_err(Fail::Input)?;
    let src = Source::read(file).map_err(Fail::Not)?;
    let follows: Vec<_> = content
        .iter()
        .flat_map(|s| s.segment.iter().map(|w| &w.waypoint))
        .filter(|w| w.action == "follow")
        .collect();
    let Some(target) = follows.last().filter(|w| w.kind == "target") else {
        return Err(Fail::Not(
            "the last waypoint to follow is not a target".into(),
        ));
    };
    let returns: Vec<(&Location, i64)> = follows
        .iter()
        .filter(|w| w.kind == "function_return")
        .filter_map(|w| Some((&w.location, result_value(&w.constraint.as_ref()?.value)?)))
        .collect();
    let limits = Limits {
        max_steps: MAX_STEPS,
        malloc_never_fails: true,
    };
    let mut last = String::from("no run tried");
    for seed in 0..RUNS {
        let mut used = 0usize;
        let mut oracle = |e: EdgeId| -> Option<i64> {
            let (loc, v) = returns.get(used)?;
            if call_at(&prog, &src, e, loc) {
                used += 1;
                Some(*v)
            } else {
                None
            }
        };
        let run = run_oracle(&prog, seed, &limits, &mut oracle);
        if !run.outcome.is_error() {
            last = format!("run {seed}: {}", run.outcome);
            continue;
        }
        if used < returns.len() {
            last = format!(
                "run {seed} reaches the error after {used} of the {} function_return waypoints",
                returns.len()
            );
            continue;
        }
        let at = run.trace.last().map(|s| match s {
            crate::cfa::Step::Edge(e) | crate::cfa::Step::Enter(e) | crate::cfa::Step::Leave(e) => {
                prog.graph[*e].src.line
            }
        });
        if at != Some(target.location.line) {
            last = format!(
                "run {seed} reaches an error at line {}, the target is at line {}",
                at.unwrap_or(0),
                target.location.line
            );
            continue;
        }
        return confirm(&prog, &run.trace, seed, returns.len());
    }
    Err(Fail::Not(last))
}

/// The Z3 check and the replay of a run that follows the witness.
fn confirm(
    prog: &Program,
    path: &[crate::cfa::Step],
    seed: u64,
    used: usize,
) -> Result<String, Fail> {
    let smt = crate::smt::SmtOptions::default();
    let model = match crate::smt::check_path_with(prog, path, &smt) {
        Ok(crate::smt::Feasibility::Feasible(m)) => m,
        Ok(_) => return Err(Fail::Not("Z3 finds the run's path infeasible".into())),
        Err(e) => return Err(Fail::Not(format!("Z3: {e}"))),
    };
    let inputs = model.to_inputs();
    let limits = Limits {
        max_steps: path.len() + 10,
        malloc_never_fails: true,
    };
    let replay = replay_path(prog, path, &inputs, &limits);
    if !replay.outcome.is_error() {
        return Err(Fail::Not(format!(
            "Z3's model of the run's path does not replay ({})",
            replay.outcome
        )));
    }
    Ok(format!(
        "a run of {} steps (seed {seed}) follows its {used} function_return waypoints to the target; Z3 finds the path feasible and the interpreter replays it"
        , path.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::svcomp::witness::{Constraint, Waypoint, WaypointItem};

    fn segment(kind: &str, line: u32, col: u32, value: Option<&str>) -> Segment {
        Segment {
            segment: vec![WaypointItem {
                waypoint: Waypoint {
                    kind: kind.into(),
                    action: "follow".into(),
                    constraint: value.map(|v| Constraint {
                        value: v.into(),
                        format: Some("acsl_expression".into()),
                    }),
                    location: Location {
                        file_name: "p.c".into(),
                        line,
                        column: Some(col),
                        function: Some("main".into()),
                    },
                },
            }],
        }
    }

    /// The values of the function_return waypoints drive the run (`run_oracle`): the
    /// error needs x == 7 and y == -3, which random runs practically never choose.
    #[test]
    fn follows_function_return_values_to_the_target() {
        let d = tempfile::tempdir().unwrap();
        let c = d.path().join("p.c");
        std::fs::write(
            &c,
            "extern void abort(void);\nvoid reach_error() { abort(); }\nextern int __VERIFIER_nondet_int(void);\nint main() {\n  int x = __VERIFIER_nondet_int();\n  int y = __VERIFIER_nondet_int();\n  if (x == 7 && y == -3)\n    reach_error();\n  return 0;\n}\n",
        )
        .unwrap();
        let good = [
            segment("function_return", 5, 33, Some("\\result == 7")),
            segment("function_return", 6, 33, Some("\\result == -3")),
            segment("target", 8, 5, None),
        ];
        let how = validate_violation(&c, &good).unwrap();
        assert!(how.contains("2 function_return waypoints"), "{how}");
        let wrong_value = [
            segment("function_return", 5, 33, Some("\\result == 7")),
            segment("function_return", 6, 33, Some("\\result == 3")),
            segment("target", 8, 5, None),
        ];
        assert!(matches!(
            validate_violation(&c, &wrong_value),
            Err(Fail::Not(_))
        ));
        let wrong_target = [
            segment("function_return", 5, 33, Some("\\result == 7")),
            segment("function_return", 6, 33, Some("\\result == -3")),
            segment("target", 9, 3, None),
        ];
        assert!(matches!(
            validate_violation(&c, &wrong_target),
            Err(Fail::Not(_))
        ));
        let no_target = &good[..2];
        assert!(matches!(
            validate_violation(&c, no_target),
            Err(Fail::Not(_))
        ));
    }

    #[test]
    fn reads_result_constraints() {
        assert_eq!(result_value("\\result == 10"), Some(10));
        assert_eq!(result_value("\\result==-3"), Some(-3));
        assert_eq!(result_value("7 == \\result"), Some(7));
        assert_eq!(result_value("\\result == (4294967295U)"), Some(4294967295));
        assert_eq!(result_value("x == 1"), None);
        assert_eq!(result_value("\\result > 1"), None);
    }
}
