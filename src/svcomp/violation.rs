//! Violation witnesses (format 2.0) from `verify`'s counterexamples.
//!
//! The counterexample is a path that Z3 found feasible and the interpreter replayed
//! with its inputs. The witness states those inputs where the program makes them:
//! one segment per `__VERIFIER_nondet_*()` call on the path whose value the program
//! uses, a `function_return` waypoint at the call's closing parenthesis with the
//! constraint `\result == v` (`acsl_expression`), in the order of the run; the last
//! segment is the `target` waypoint at the `reach_error()` call. Together they fix
//! the run for a validator (choices the program makes otherwise, such as reads of
//! uninitialised variables, are not stated).

use super::conventions::DataModel;
use super::witness::{metadata, Constraint, Entry, Location, Segment, Waypoint, WaypointItem};
use crate::cfa::{Op, Program, SrcLoc, Step};
use crate::simulate::Counterexample;
use std::path::Path;

/// The source text of a program, for positions inside statements.
pub struct Source {
    lines: Vec<String>,
}

impl Source {
    /// Reads `file`.
    pub fn read(file: &Path) -> Result<Source, String> {
        let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        Ok(Source {
            lines: text.lines().map(|l| l.to_string()).collect(),
        })
    }

    /// A source from text (tests).
    pub fn from_text(text: &str) -> Source {
        Source {
            lines: text.lines().map(|l| l.to_string()).collect(),
        }
    }

    /// If a call of a function whose name starts with `prefix` begins at or after
    /// `at` on its line (after casts and parentheses), the position of its closing
    /// parenthesis (1-based line and column); `None` otherwise.
    pub fn call_close_paren(&self, at: &SrcLoc, prefix: &str) -> Option<(u32, u32)> {
        let li = (at.line as usize).checked_sub(1)?;
        let line = self.lines.get(li)?;
        let start = (at.col as usize).saturating_sub(1).min(line.len());
        let rest = line.get(start..)?;
        let pos = rest.find(prefix)? + start;
        // what lies between `at` and the name may only be casts and parentheses
        let between = line.get(start..pos)?;
        if between.contains(';') || between.contains('"') {
            return None;
        }
        let after = line.get(pos..)?;
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let mut li = li;
        let mut col = pos + name_len;
        let mut depth = 0usize;
        let mut opened = false;
        loop {
            let l = self.lines.get(li)?.as_bytes();
            while col < l.len() {
                match l[col] {
                    b'(' => {
                        depth += 1;
                        opened = true;
                    }
                    b')' if opened => {
                        depth -= 1;
                        if depth == 0 {
                            return Some((li as u32 + 1, col as u32 + 1));
                        }
                    }
                    b' ' | b'\t' => {}
                    _ if !opened => return None,
                    _ => {}
                }
                col += 1;
            }
            li += 1;
            col = 0;
            if li > at.line as usize + 20 {
                return None;
            }
        }
    }
}

/// The C function a step's edge belongs to (its source location's; a clone `f@2`
/// of a recursive function, [`crate::cfa::recursion`], is `f`).
pub fn step_function(prog: &Program, edge: crate::cfa::EdgeId) -> String {
    prog.graph
        .edge_endpoints(edge)
        .map(|(from, _)| {
            let name = &prog.functions[prog.graph[from].func].name;
            name.split_once('@')
                .map_or(name.as_str(), |(b, _)| b)
                .to_string()
        })
        .unwrap_or_default()
}

/// The `__VERIFIER_nondet_*` prefix of the calls whose results a witness states.
pub const NONDET_PREFIX: &str = "__VERIFIER_nondet_";

/// The waypoints of a counterexample of `prog` (its path and the inputs it was
/// replayed with), located in `src`, the text of `file_name`.
pub fn waypoints(
    prog: &Program,
    cex: &Counterexample,
    src: &Source,
    file_name: &str,
) -> Result<Vec<Waypoint>, String> {
    let mut out = Vec::new();
    let mut nondet = cex.inputs.nondet.iter();
    let loc = |line: u32, col: u32, function: String| Location {
        file_name: file_name.to_string(),
        line,
        column: Some(col),
        function: Some(function),
    };
    for step in &cex.path {
        let Step::Edge(e) = step else { continue };
        let edge = &prog.graph[*e];
        match &edge.op {
            Op::Nondet { dst } => {
                let v = *nondet
                    .next()
                    .ok_or("the counterexample has fewer inputs than its path needs")?;
                let Some((line, col)) = src.call_close_paren(&edge.src, NONDET_PREFIX) else {
                    continue;
                };
                if prog.vars[*dst].ty.is_ptr() && v != 0 {
                    continue; // a non-NULL garbage pointer has no C value to state
                }
                out.push(Waypoint {
                    kind: "function_return".into(),
                    action: "follow".into(),
                    constraint: Some(Constraint {
                        value: format!("\\result == {v}"),
                        format: Some("acsl_expression".into()),
                    }),
                    location: loc(line, col, step_function(prog, *e)),
                });
            }
            Op::Error => out.push(Waypoint {
                kind: "target".into(),
                action: "follow".into(),
                constraint: None,
                location: loc(edge.src.line, edge.src.col, step_function(prog, *e)),
            }),
            _ => {}
        }
    }
    match out.last() {
        Some(w) if w.kind == "target" => Ok(out),
        _ => Err("the counterexample does not end with a reach_error() call".into()),
    }
}

/// The violation witness of `cex`, a counterexample of `verify` on `input` (analysed
/// with `malloc_never_fails` as given): one `violation_sequence` entry.
pub fn witness(
    input: &Path,
    cex: &Counterexample,
    data_model: DataModel,
    malloc_never_fails: bool,
) -> Result<Entry, String> {
    let prog = crate::cegar::cli::load_for_verification(input, malloc_never_fails)
        .map_err(|code| format!("cannot read {} again (exit {code})", input.display()))?;
    let src = Source::read(input)?;
    let metadata = metadata(input, data_model)?;
    let name = metadata
        .task
        .input_files
        .first()
        .cloned()
        .unwrap_or_default();
    let content = waypoints(&prog, cex, &src, &name)?
        .into_iter()
        .map(|waypoint| Segment {
            segment: vec![WaypointItem { waypoint }],
        })
        .collect();
    Ok(Entry::ViolationSequence { metadata, content })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_closing_parenthesis_of_a_call() {
        let s = Source::from_text(
            "int main() {\n    int x = __VERIFIER_nondet_int();\n  y = (unsigned)__VERIFIER_nondet_uint( \n );\n  int z;\n}\n",
        );
        let at = |line, col| SrcLoc { line, col };
        assert_eq!(s.call_close_paren(&at(2, 13), NONDET_PREFIX), Some((2, 35)));
        assert_eq!(s.call_close_paren(&at(2, 5), NONDET_PREFIX), Some((2, 35)));
        assert_eq!(s.call_close_paren(&at(3, 7), NONDET_PREFIX), Some((4, 2)));
        assert_eq!(s.call_close_paren(&at(5, 3), NONDET_PREFIX), None);
        assert_eq!(s.call_close_paren(&at(99, 1), NONDET_PREFIX), None);
    }
}
