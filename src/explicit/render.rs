//! Output of `shapemc samples`: text (like the paper's Fig. 1(b)), DOT and JSON.

use super::infer::candidate_bindings;
use super::invariants::{check, CellScope, Verdict};
use super::sample::SampleReport;
use super::{CellTy, ExplicitState, Value};
use crate::cfa::Program;
use serde_json::json;
use std::fmt::Write as _;

/// Output formats of `shapemc samples`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Dot,
    Json,
}

fn struct_name(prog: &Program, s: usize) -> String {
    prog.structs
        .get(s)
        .map_or_else(|| format!("#{s}"), |d| d.name.clone())
}

fn var_name(prog: &Program, x: usize) -> String {
    prog.vars
        .get(x)
        .map_or_else(|| format!("v{x}"), |v| v.name.clone())
}

/// The invariants (with field names) one heap supports non-vacuously, per struct type
/// present in it: `struct node: acyclic_list(next=succ), ...`.
pub fn sample_invariants(prog: &Program, h: &ExplicitState) -> Vec<(usize, Vec<String>)> {
    let mut types: Vec<usize> = h.heap.values().filter_map(|c| c.strukt()).collect();
    types.sort();
    types.dedup();
    types
        .into_iter()
        .map(|t| {
            let list = candidate_bindings(prog, t)
                .into_iter()
                .filter(|(inv, b)| check(prog, h, *inv, b, CellScope::All) == Verdict::Holds)
                .map(|(inv, b)| pair_str(prog, inv, &b))
                .collect();
            (t, list)
        })
        .collect()
}

fn pair_str(prog: &Program, inv: super::Invariant, b: &super::Binding) -> String {
    let args: Vec<String> = inv
        .roles()
        .iter()
        .zip(b.field_names(prog))
        .map(|(r, f)| format!("{r}={f}"))
        .collect();
    format!("{}({})", inv.name(), args.join(", "))
}

/// Text rendering: every sample like Fig. 1(b), with the invariants it supports,
/// then per struct type the invariants that hold on all samples and the choice.
pub fn text(prog: &Program, r: &SampleReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} sample(s) from {} explored state(s){}",
        r.samples.len(),
        r.states,
        if r.budget_exhausted {
            " (state budget exhausted)"
        } else {
            ""
        }
    );
    for (i, s) in r.samples.iter().enumerate() {
        let _ = writeln!(
            o,
            "\nsample {} (location {}{}, depth {} from {}):",
            i + 1,
            s.node,
            prog.graph
                .node_weight(crate::cfa::Node::new(s.node))
                .map(|l| format!(
                    " at {}:{}",
                    prog.functions.get(l.func).map_or("?", |f| f.name.as_str()),
                    l.src
                ))
                .unwrap_or_default(),
            s.depth,
            var_name(prog, s.root)
        );
        let _ = write!(o, "{}", s.state.display(prog));
        for (t, invs) in sample_invariants(prog, &s.state) {
            let _ = writeln!(
                o,
                "  struct {} supports: {}",
                struct_name(prog, t),
                if invs.is_empty() {
                    "-".to_string()
                } else {
                    invs.join(", ")
                }
            );
        }
    }
    for c in &r.classifications {
        let _ = writeln!(
            o,
            "\nstruct {}: {} (cells per sample: {:?})",
            struct_name(prog, c.strukt),
            c.chosen.name(),
            c.sample_sizes
        );
        for p in c.pairs.iter().filter(|p| p.holds_mostly()) {
            let total = p.supported + p.vacuous + p.violated;
            let _ = writeln!(
                o,
                "  {}: {}  [non-vacuous in {} of {} samples{}]",
                if p.holds() { "holds" } else { "holds on most" },
                pair_str(prog, p.invariant, &p.binding),
                p.supported,
                total,
                if p.violated > 0 {
                    format!(", violated in {}", p.violated)
                } else {
                    String::new()
                }
            );
        }
    }
    o
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('{', "\\{")
        .replace('}', "\\}")
        .replace('|', "\\|")
        .replace('<', "\\<")
        .replace('>', "\\>")
}

/// DOT rendering: one cluster per sample, cells as records with one port per field.
pub fn dot(prog: &Program, r: &SampleReport) -> String {
    let mut o = String::from("digraph samples {\n  node [shape=record];\n");
    for (i, s) in r.samples.iter().enumerate() {
        let _ = writeln!(
            o,
            "  subgraph cluster_{i} {{\n    label=\"sample {}\";",
            i + 1
        );
        for (x, v) in s.state.vars.iter().enumerate() {
            if let Some(a) = v.obj_any() {
                let _ = writeln!(
                    o,
                    "    s{i}_v{x} [shape=plaintext,label=\"{}\"];\n    s{i}_v{x} -> s{i}_c{a};",
                    dot_escape(&var_name(prog, x))
                );
            }
        }
        for (a, c) in &s.state.heap {
            let names: Vec<String> = match c.ty {
                CellTy::Struct(t) => prog
                    .structs
                    .get(t)
                    .map(|d| d.fields.iter().map(|f| f.name.clone()).collect())
                    .unwrap_or_default(),
                _ => vec!["*".into(); c.fields.len()],
            };
            let ports: Vec<String> = c
                .fields
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    let shown = match v {
                        Value::Ptr { .. } => String::new(),
                        v => format!(": {v}"),
                    };
                    let n = names.get(k).map_or("?", |s| s.as_str());
                    format!("<f{k}> {}", dot_escape(&format!("{n}{shown}")))
                })
                .collect();
            let _ = writeln!(o, "    s{i}_c{a} [label=\"{a}|{}\"];", ports.join("|"));
            for (k, v) in c.fields.iter().enumerate() {
                if let Some(b) = v.obj_any() {
                    let _ = writeln!(o, "    s{i}_c{a}:f{k} -> s{i}_c{b};");
                }
            }
        }
        o.push_str("  }\n");
    }
    o.push_str("}\n");
    o
}

/// JSON rendering: per struct type the samples' sizes, the invariants that hold on all
/// samples with the fields they were checked on (`invariants`), those that hold on
/// most but not all (`invariants_on_most_samples`), and the chosen data structure.
pub fn json(prog: &Program, r: &SampleReport) -> serde_json::Value {
    let structs: Vec<serde_json::Value> = r
        .classifications
        .iter()
        .map(|c| {
            let entry = |p: &super::infer::PairResult| {
                json!({
                    "name": p.invariant.name(),
                    "roles": p.invariant.roles(),
                    "fields": p.binding.field_names(prog),
                    "supported": p.supported,
                    "vacuous": p.vacuous,
                    "violated": p.violated,
                })
            };
            let inv: Vec<serde_json::Value> = c.holding().map(entry).collect();
            let most: Vec<serde_json::Value> = c
                .pairs
                .iter()
                .filter(|p| p.holds_mostly() && !p.holds())
                .map(entry)
                .collect();
            let fields: Vec<String> = c
                .chosen
                .fields()
                .iter()
                .map(|f| {
                    prog.structs
                        .get(f.strukt)
                        .and_then(|s| s.fields.get(f.field))
                        .map_or_else(|| "?".into(), |d| d.name.clone())
                })
                .collect();
            json!({
                "struct": struct_name(prog, c.strukt),
                "sample_sizes": c.sample_sizes,
                "invariants": inv,
                "invariants_on_most_samples": most,
                "data_structure": { "kind": c.chosen.name(), "fields": fields },
            })
        })
        .collect();
    json!({
        "file": prog.file.display().to_string(),
        "samples": r.samples.len(),
        "sample_depths": r.samples.iter().map(|s| s.depth).collect::<Vec<_>>(),
        "states": r.states,
        "budget_exhausted": r.budget_exhausted,
        "errors": r.errors,
        "error_locations_reached": r.error_locations,
        "structs": structs,
    })
}

/// Renders a report in the given format.
pub fn render(prog: &Program, r: &SampleReport, format: Format) -> String {
    match format {
        Format::Text => text(prog, r),
        Format::Dot => dot(prog, r),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&json(prog, r)).unwrap_or_default();
            s.push('\n');
            s
        }
    }
}
