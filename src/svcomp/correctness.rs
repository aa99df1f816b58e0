//! Correctness witnesses (format 2.0): one `invariant_set` entry for a SAFE verdict,
//! and their validation.
//!
//! Production: the entry's metadata and the loop invariants shapemc can state in C
//! ([`super::invariants`]: predicates and explicit values of the certificate's nodes
//! at each loop head), at the loop's keyword.
//!
//! Validation ([`validate`]): each `loop_invariant` is inserted as an assertion at its
//! loop head ([`instrument`]: the loop condition `c` of the `while`/`for` at the
//! invariant's location becomes `(INV) ? (c) : (reach_error(), 0)`, so the assertion
//! is checked every time the head is reached), and `verify` (SV-COMP conventions)
//! must prove the instrumented program SAFE. Invariants of other kinds or formats, or
//! at a location without a `while`/`for`, make the witness unconfirmed.

use super::conventions::{with_svcomp_args, DataModel};
use super::invariants::{loop_invariants, offset, NodeFacts};
use super::witness::{metadata, Entry, Invariant, InvariantItem, Location};
use crate::cegar::cli::{verify_file, VerifyArgs, VerifyReport};
use crate::cegar::Verdict;
use crate::cert::ProgramVariant;
use crate::cfa::{Node, SrcLoc};
use crate::diag::exit;
use crate::predabs::Precision;
use std::path::Path;
use std::time::Instant;

/// The loop invariants of a SAFE report on `input` ([`super::invariants`]), located
/// at the loop keywords (`while`, `for`) of `input` (from the predicate cubes of the
/// certificate, also of a symbolic-heap proof): none when the proof is of the
/// promoted program or has no certificate, or for a loop head without a keyword
/// shapemc can find (`do ... while`, loops made of `goto`).
pub fn invariants(
    input: &Path,
    malloc_never_fails: bool,
    rep: &VerifyReport,
) -> Result<Vec<Invariant>, String> {
    if rep.program != ProgramVariant::AsWritten {
        return Ok(Vec::new());
    }
    let prog = crate::cegar::cli::load_for_verification(input, malloc_never_fails)
        .map_err(|code| format!("cannot read {} again (exit {code})", input.display()))?;
    let text = String::from_utf8_lossy(
        &std::fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?,
    )
    .into_owned();
    let mut heads = Vec::new();
    let recursive = crate::cfa::recursion::unrolled_functions(&prog);
    for head in crate::explicit::sample::loop_heads(&prog) {
        // a loop of a recursive function runs in several activations, each with its
        // own copy of the function: no one copy's facts hold for all of them
        if recursive.contains(&prog.graph[head].func) {
            continue;
        }
        let src = &prog.graph[head].src;
        let Some(at) = offset(&text, src.line, src.col) else {
            continue;
        };
        if let Some((kw, _)) = loop_condition(&text, at) {
            heads.push((head, kw));
        }
    }
    let symheap = match &rep.certificate_file {
        Some(crate::cegar::cli::CertFile {
            body: crate::cegar::cli::CertBody::Symheap(c),
            ..
        }) => Some(c),
        _ => None,
    };
    let (prec, nodes): (Option<&Precision>, Vec<NodeFacts>) =
        match (&rep.heap_certificate, &rep.certificate) {
            (Some(c), _) => (
                Some(&c.precision.pred),
                c.nodes
                    .iter()
                    .map(|n| NodeFacts {
                        loc: Node::new(n.loc),
                        cube: Some(&n.state.pred),
                        explicit: Some(&n.state.explicit),
                    })
                    .collect(),
            ),
            (None, Some(c)) => (
                Some(&c.precision),
                c.nodes
                    .iter()
                    .map(|n| NodeFacts {
                        loc: Node::new(n.loc),
                        cube: Some(&n.state),
                        explicit: None,
                    })
                    .collect(),
            ),
            // the symbolic heaps' proof: the predicate cubes beside the heaps
            (None, None) => match symheap {
                Some(c) => (
                    Some(&c.precision.1),
                    c.nodes
                        .iter()
                        .map(|n| NodeFacts {
                            loc: Node::new(n.loc),
                            cube: Some(&n.state.1),
                            explicit: None,
                        })
                        .collect(),
                ),
                None => return Ok(Vec::new()),
            },
        };
    let file_name = input.display().to_string();
    Ok(loop_invariants(&prog, &text, &heads, prec, &nodes)
        .into_iter()
        .filter_map(|(head, value)| {
            let at = position(&text, heads.iter().find(|(h, _)| *h == head)?.1);
            Some(Invariant {
                kind: "loop_invariant".into(),
                location: Location {
                    file_name: file_name.clone(),
                    line: at.line,
                    column: Some(at.col),
                    function: Some(prog.functions[prog.graph[head].func].name.clone()),
                },
                value,
                format: "c_expression".into(),
            })
        })
        .collect())
}

/// The correctness witness of a SAFE `verify` run on `input`.
pub fn witness(
    input: &Path,
    data_model: DataModel,
    malloc_never_fails: bool,
    rep: &VerifyReport,
) -> Result<Entry, String> {
    let metadata = metadata(input, data_model)?;
    let content = invariants(input, malloc_never_fails, rep)?
        .into_iter()
        .map(|invariant| InvariantItem { invariant })
        .collect();
    Ok(Entry::InvariantSet { metadata, content })
}

/// The 1-based line and column of byte `off` of `text`.
fn position(text: &str, off: usize) -> SrcLoc {
    let before = &text[..off.min(text.len())];
    let line = before.matches('\n').count() as u32 + 1;
    let col = (off - before.rfind('\n').map_or(0, |i| i + 1)) as u32 + 1;
    SrcLoc { line, col }
}

/// The offset just after the parenthesis matching the one at `open`.
fn matching_paren(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in b.iter().enumerate().skip(open) {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The offset of the keyword of the `while`/`for` loop starting at or after `at` on
/// its line, and the byte range of its condition (for `for`, between the two `;` of
/// its head at depth 1; empty when the condition is).
fn loop_condition(text: &str, at: usize) -> Option<(usize, (usize, usize))> {
    let b = text.as_bytes();
    // `at` comes from a witness's column: it may be no character boundary
    let rest = text.get(at..)?;
    let seg = rest.split('\n').next().unwrap_or(rest);
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let kw = ["while", "for"].iter().find_map(|k| {
        let mut from = 0;
        while let Some(i) = seg[from..].find(k) {
            let s = at + from + i;
            let e = s + k.len();
            if (s == 0 || !is_word(b[s - 1])) && (e >= b.len() || !is_word(b[e])) {
                return Some((*k, s, e));
            }
            from += i + k.len();
        }
        None
    });
    let (kw, kw_at, end) = kw?;
    let open = end + text.get(end..)?.find('(')?;
    if !text.get(end..open)?.trim().is_empty() {
        return None;
    }
    let close = matching_paren(b, open)?;
    if kw == "while" {
        return Some((kw_at, (open + 1, close)));
    }
    let mut depth = 0usize;
    let mut semis = Vec::new();
    for (i, c) in b.iter().enumerate().take(close).skip(open + 1) {
        match c {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b';' if depth == 0 => semis.push(i),
            _ => {}
        }
    }
    match semis.as_slice() {
        [a, b2] => Some((kw_at, (a + 1, *b2))),
        _ => None,
    }
}

/// The program text with each invariant asserted at its loop head (see the module
/// docs). Errors for an invariant shapemc cannot insert.
pub fn instrument(text: &str, invariants: &[&Invariant]) -> Result<String, String> {
    let mut edits = Vec::new();
    for inv in invariants {
        if inv.kind != "loop_invariant" || inv.format != "c_expression" {
            return Err(format!(
                "invariant of type {} in format {} (only loop_invariant, c_expression)",
                inv.kind, inv.format
            ));
        }
        let loc = &inv.location;
        let at = offset(text, loc.line, loc.column.unwrap_or(1))
            .ok_or_else(|| format!("no line {} column {:?}", loc.line, loc.column))?;
        let (_, (s, e)) = loop_condition(text, at)
            .ok_or_else(|| format!("no while/for loop at line {}", loc.line))?;
        edits.push((s, e, inv.value.clone()));
    }
    // per loop condition (by its range) its invariants, all asserted in one condition
    let mut conds: std::collections::BTreeMap<(usize, usize), Vec<String>> = Default::default();
    for (s, e, inv) in edits {
        conds.entry((s, e)).or_default().push(inv);
    }
    let mut out = text.to_string();
    for ((s, e), invs) in conds.into_iter().rev() {
        let c = text[s..e].trim();
        let mut cond = if c.is_empty() {
            "1".to_string()
        } else {
            c.to_string()
        };
        for inv in invs {
            cond = format!("({inv}) ? ({cond}) : (reach_error(), 0)");
        }
        out.replace_range(s..e, &cond);
    }
    Ok(out)
}

/// Validates a correctness witness's invariants for `file` (see the module docs);
/// prints the verdict line and returns the exit code.
pub fn validate(file: &Path, content: &[InvariantItem], deadline: Option<Instant>) -> i32 {
    let invs: Vec<&Invariant> = content.iter().map(|i| &i.invariant).collect();
    let text = match std::fs::read(file) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            eprintln!("error: {}: {e}", file.display());
            return exit::USAGE_OR_PARSE;
        }
    };
    let instrumented = match instrument(&text, &invs) {
        Ok(t) => t,
        Err(e) => {
            println!("UNKNOWN: witness not confirmed: {e}");
            return exit::UNKNOWN;
        }
    };
    let dir = std::env::temp_dir().join(format!("shapemc-validate-{}", std::process::id()));
    let name = file
        .file_name()
        .map_or("program.c".into(), |n| n.to_os_string());
    let copy = dir.join(name);
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&copy, instrumented))
    {
        eprintln!("error: {}: {e}", copy.display());
        return exit::USAGE_OR_PARSE;
    }
    // the copy's `#include "x.h"` must find the headers beside the original
    let original_dir = match file.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => std::path::PathBuf::from("."),
    };
    let code = verify_instrumented(&copy, &original_dir, invs.len(), deadline);
    let _ = std::fs::remove_dir_all(&dir);
    code
}

/// `verify` on the instrumented copy: the verdict line and exit code of [`validate`].
fn verify_instrumented(
    copy: &Path,
    original_dir: &Path,
    n: usize,
    deadline: Option<Instant>,
) -> i32 {
    let Ok(mut args) = with_svcomp_args(VerifyArgs::default()) else {
        return exit::USAGE_OR_PARSE;
    };
    args.clang_args = vec!["-iquote".into(), original_dir.display().to_string()];
    args.timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()).as_secs_f64());
    let rep = match verify_file(copy, &args) {
        Ok(r) => r,
        Err(code) => {
            println!("UNKNOWN: witness not confirmed: the instrumented program could not be read (exit {code})");
            return exit::UNKNOWN;
        }
    };
    match rep.verdict {
        Verdict::Safe => {
            println!(
                "SAFE: witness confirmed: verify proves the program with its {n} invariant(s) asserted"
            );
            exit::SAFE
        }
        Verdict::Unsafe => {
            println!("UNKNOWN: witness refuted: an invariant (or the property) is violated");
            exit::UNKNOWN
        }
        Verdict::Unknown(r) => {
            println!("UNKNOWN: witness not confirmed: {r}");
            exit::UNKNOWN
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(line: u32, col: Option<u32>, value: &str) -> Invariant {
        Invariant {
            kind: "loop_invariant".into(),
            location: Location {
                file_name: "f.c".into(),
                line,
                column: col,
                function: Some("main".into()),
            },
            value: value.into(),
            format: "c_expression".into(),
        }
    }

    #[test]
    fn instruments_loop_heads() {
        let text = "int main() {\n  int i = 0;\n  while (i < 10) i++;\n  for (i = 0; ; i++) { if (f(i)) break; }\n}\n";
        let a = inv(3, Some(3), "i >= 0");
        let b = inv(4, None, "i <= 10");
        let c = inv(3, None, "i <= 10");
        let out = instrument(text, &[&a, &b, &c]).unwrap();
        assert!(
            out.contains(
                "while ((i <= 10) ? ((i >= 0) ? (i < 10) : (reach_error(), 0)) : (reach_error(), 0)) i++;"
            ),
            "{out}"
        );
        assert!(
            out.contains("for (i = 0;(i <= 10) ? (1) : (reach_error(), 0); i++)"),
            "{out}"
        );
        assert!(instrument(text, &[&inv(2, None, "1")]).is_err());
        // a column inside a multi-byte character is refused, not a panic
        let utf = "int main() {\n  /* é */ while (1) {}\n}\n";
        assert!(instrument(utf, &[&inv(2, Some(7), "1")]).is_err());
        assert!(instrument(utf, &[&inv(2, Some(9), "1")]).is_ok());
        let mut d = inv(3, None, "1");
        d.format = "acsl_expression".into();
        assert!(instrument(text, &[&d]).is_err());
    }
}
