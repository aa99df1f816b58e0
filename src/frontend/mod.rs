//! The C front end: parses a C file with libclang and lowers it to a [`Program`] (CFA).
//!
//! The file is parsed for the ILP32 data model (`-m32`, as SV-COMP's heap categories
//! specify) with the system headers. Constructs outside the supported subset are
//! refused with [`FrontendError::Unsupported`] (never mistranslated); see `lower/mod.rs`
//! for the lowering conventions the analyses can rely on.

mod clang;
mod gnu;
mod intrusive;
mod lower;
mod types;

use crate::cfa::{FuncId, LocKind, Program};
use crate::diag::FrontendError;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Options of the front end.
#[derive(Clone, Debug, Default)]
pub struct FrontendOptions {
    /// Record in the program that `malloc`/`calloc` never return NULL.
    pub malloc_never_fails: bool,
    /// Extra arguments for clang (e.g. `-DFOO`, `-I dir`).
    pub clang_args: Vec<String>,
    /// The C semantics of the memory properties (`verify --property valid-memsafety`):
    /// a `reach_error()` the program defines is an ordinary call (its body runs) and
    /// the assert-failure functions (`__assert_fail`, ...) end the run like `abort()`,
    /// instead of both being error locations. `__VERIFIER_error()` and an undefined
    /// `reach_error()` stay error locations.
    pub error_calls_as_calls: bool,
    /// Keep every address-taken pointer local a stack cell (no
    /// [`crate::cfa::Program::unbox_pointer_cells`]): for tests that compare the two.
    pub keep_pointer_cells: bool,
}

/// Header directory of the multiarch x86_64 glibc headers (usable for i386 too, except
/// for `gnu/stubs-32.h`, which we provide in memory when the i386 headers are missing).
const X86_64_INCLUDE: &str = "/usr/include/x86_64-linux-gnu";
const I386_INCLUDE: &str = "/usr/include/i386-linux-gnu";

fn clang_args(opts: &FrontendOptions) -> (Vec<String>, Vec<(String, Vec<u8>)>) {
    // gcc only warns where clang 16+ stops with an error (SV-COMP's tasks are written
    // for gcc); the lowering then refuses what it cannot model (exit 3), never guesses
    let mut args: Vec<String> = [
        "-x",
        "c",
        "-std=gnu11",
        "-m32",
        "-fno-color-diagnostics",
        "-Wno-error=int-conversion",
        "-Wno-error=incompatible-function-pointer-types",
        "-Wno-error=implicit-function-declaration",
        "-Wno-error=implicit-int",
        "-Wno-error=return-type",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut unsaved = Vec::new();
    if !Path::new(I386_INCLUDE).exists() && Path::new(X86_64_INCLUDE).exists() {
        args.push("-isystem".into());
        args.push(X86_64_INCLUDE.into());
        let stubs = format!("{X86_64_INCLUDE}/gnu/stubs-32.h");
        if !Path::new(&stubs).exists() {
            unsaved.push((stubs, b"/* provided by shapemc */\n".to_vec()));
        }
    }
    args.extend(opts.clang_args.iter().cloned());
    (args, unsaved)
}

/// How many times [`parse_file`] parses a file again after repairing gcc-only input.
const MAX_REPARSES: usize = 8;

/// The forced include that declares gcc builtins clang does not know.
const BUILTINS_HEADER: &str = "/__shapemc__/gcc-builtins.h";

/// Repairs of gcc-only input (see `gnu.rs`) collected over the parses of one file.
#[derive(Default)]
struct Repairs {
    /// Contents with blanked attributes, per file name.
    files: HashMap<String, Vec<u8>>,
    /// Byte ranges already blanked, per file name.
    blanked: HashMap<String, Vec<Range<usize>>>,
    /// `-DNAME=TYPE` for gcc floating types.
    float_types: Vec<(String, &'static str)>,
    /// Unknown builtins declared in [`BUILTINS_HEADER`].
    builtins: Vec<String>,
    /// `file:line:col: warning: ...` for each repair.
    warnings: Vec<String>,
}

impl Repairs {
    fn any(&self) -> bool {
        !(self.files.is_empty() && self.float_types.is_empty() && self.builtins.is_empty())
    }

    /// Extra clang arguments and unsaved files.
    fn apply(&self, args: &mut Vec<String>, unsaved: &mut Vec<(String, Vec<u8>)>) {
        if self.any() {
            // report every error in one parse
            args.push("-ferror-limit=0".into());
        }
        for (name, ty) in &self.float_types {
            args.push(format!("-D{name}={ty}"));
        }
        if !self.builtins.is_empty() {
            let decls: String = self
                .builtins
                .iter()
                .map(|b| format!("int {b}();\n"))
                .collect();
            unsaved.push((BUILTINS_HEADER.into(), decls.into_bytes()));
            args.push("-include".into());
            args.push(BUILTINS_HEADER.into());
        }
        for (f, c) in &self.files {
            unsaved.push((f.clone(), c.clone()));
        }
    }

    /// Repairs what can be repaired of `errors`; false if nothing new was repaired.
    fn fix(&mut self, errors: &[clang::Diagnostic]) -> bool {
        let mut changed = false;
        for e in errors {
            let Some(at) = &e.at else { continue };
            let here = format!("{}:{}:{}", at.file, at.line, at.col);
            if let Some(name) = gnu::unknown_float_type(&e.message) {
                if !self.float_types.iter().any(|(n, _)| n == name) {
                    let ty = gnu::float_type_stand_in(name).unwrap_or("long double");
                    self.warnings.push(format!(
                        "{here}: warning: treating gcc's '{name}' as '{ty}' (floating point is not analysed)"
                    ));
                    self.float_types.push((name.to_string(), ty));
                    changed = true;
                }
                continue;
            }
            if let Some(name) = gnu::unknown_builtin(&e.message) {
                if !self.builtins.iter().any(|b| b == name) {
                    self.warnings.push(format!(
                        "{here}: warning: declaring gcc's '{name}' as an external function"
                    ));
                    self.builtins.push(name.to_string());
                    changed = true;
                }
                continue;
            }
            let off = at.offset as usize;
            let done = self.blanked.entry(at.file.clone()).or_default();
            if done.iter().any(|r| r.contains(&off)) {
                continue;
            }
            if !self.files.contains_key(&at.file) {
                let Ok(c) = std::fs::read(&at.file) else {
                    continue;
                };
                self.files.insert(at.file.clone(), c);
            }
            let Some(src) = self.files.get_mut(&at.file) else {
                continue;
            };
            let Some(item) = gnu::attribute_at(src, off) else {
                continue;
            };
            if !item.removable() {
                continue;
            }
            gnu::blank(src, item.blank.clone());
            done.push(item.blank);
            self.warnings.push(format!(
                "{here}: warning: ignoring attribute '{}' (clang: {})",
                item.name, e.message
            ));
            changed = true;
        }
        changed
    }
}

/// Parses and lowers a C file. Guarantees: `Ok` programs satisfy the invariants
/// documented in `cfa.rs`; clang errors give `Parse`, unsupported constructs
/// `Unsupported` with the position of the construct; never panics on user input.
/// Repairs of gcc-only input (`gnu.rs`) are reported as warnings on stderr.
pub fn parse_file(path: &Path, opts: &FrontendOptions) -> Result<Program, FrontendError> {
    let (prog, warnings) = parse_file_with_warnings(path, opts)?;
    for w in warnings {
        eprintln!("{w}");
    }
    Ok(prog)
}

/// [`parse_file`], returning the warnings (`file:line:col: warning: ...`, one per
/// repair of gcc-only input such as an attribute clang rejects) instead of printing
/// them.
pub fn parse_file_with_warnings(
    path: &Path,
    opts: &FrontendOptions,
) -> Result<(Program, Vec<String>), FrontendError> {
    clang::ensure_loaded().map_err(FrontendError::Libclang)?;
    if !path.is_file() {
        return Err(FrontendError::Parse {
            file: path.to_path_buf(),
            diagnostics: vec![format!("{}: error: no such file", path.display())],
        });
    }
    let (base_args, base_unsaved) = clang_args(opts);
    let index = clang::Index::new();
    let mut repairs = Repairs::default();
    for round in 0..=MAX_REPARSES {
        let (mut args, mut unsaved) = (base_args.clone(), base_unsaved.clone());
        repairs.apply(&mut args, &mut unsaved);
        let Some(tu) = index.parse(path, &args, &unsaved) else {
            return Err(FrontendError::Parse {
                file: path.to_path_buf(),
                diagnostics: vec![format!(
                    "{}: error: libclang could not parse the file",
                    path.display()
                )],
            });
        };
        let errors: Vec<clang::Diagnostic> = tu
            .diagnostics()
            .into_iter()
            .filter(|d| d.severity >= clang_sys::CXDiagnostic_Error)
            .collect();
        if !errors.is_empty() {
            if round < MAX_REPARSES && repairs.fix(&errors) {
                continue;
            }
            return Err(FrontendError::Parse {
                file: path.to_path_buf(),
                diagnostics: errors.into_iter().map(|d| d.text).collect(),
            });
        }
        let started = std::time::Instant::now();
        let result = lower::lower(&tu, path, opts);
        tracing::debug!("lowered {} in {:?}", path.display(), started.elapsed());
        return result
            .map(|p| (p, std::mem::take(&mut repairs.warnings)))
            .map_err(|u| FrontendError::Unsupported {
                file: u.file.unwrap_or_else(|| PathBuf::from(path)),
                at: u.at,
                construct: u.construct,
            });
    }
    Err(FrontendError::Parse {
        file: path.to_path_buf(),
        diagnostics: vec![format!("{}: error: could not parse", path.display())],
    })
}

/// The functions to render: all, or only `only`.
fn selected(p: &Program, only: Option<FuncId>) -> Vec<FuncId> {
    match only {
        Some(f) => vec![f],
        None => (0..p.functions.len()).collect(),
    }
}

/// Text form of the CFA: per function a header line, then one line per edge
/// `src_node -> dst_node [line:col] op`, edges ordered by source node.
pub fn program_to_text(p: &Program, only: Option<FuncId>) -> String {
    let mut s = String::new();
    for f in selected(p, only) {
        let func = &p.functions[f];
        let _ = writeln!(
            s,
            "function {} (entry {}, exit {})",
            func.name,
            func.entry.index(),
            func.exit.index()
        );
        let mut edges: Vec<_> = p
            .graph
            .edge_indices()
            .filter_map(|e| {
                let (a, b) = p.graph.edge_endpoints(e)?;
                (p.graph[a].func == f).then_some((a.index(), e.index(), b.index(), e))
            })
            .collect();
        edges.sort();
        for (a, _, b, e) in edges {
            let w = &p.graph[e];
            let tgt = p.graph[petgraph::graph::NodeIndex::new(b)].kind;
            let mark = match tgt {
                LocKind::Error => " (error)",
                LocKind::NullDeref => " (NULL dereference)",
                LocKind::DivByZero => " (division by zero)",
                LocKind::InvalidDeref => " (invalid dereference)",
                LocKind::InvalidFree => " (invalid free)",
                LocKind::InvalidCall => " (invalid call)",
                LocKind::RecursionBound => " (recursion bound)",
                LocKind::Unmodelled => " (unmodelled)",
                LocKind::Sink => " (sink)",
                _ => "",
            };
            let _ = writeln!(s, "{a} -> {b}{mark} [{}] {}", w.src, p.op_str(&w.op));
        }
    }
    s
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Graphviz form of the CFA (one cluster per function).
pub fn program_to_dot(p: &Program, only: Option<FuncId>) -> String {
    let mut s = String::from("digraph cfa {\n  node [shape=circle, fontsize=10];\n");
    for f in selected(p, only) {
        let func = &p.functions[f];
        let _ = writeln!(
            s,
            "  subgraph cluster_{f} {{\n    label=\"{}\";",
            dot_escape(&func.name)
        );
        for n in p.graph.node_indices().filter(|n| p.graph[*n].func == f) {
            let shape = match p.graph[n].kind {
                LocKind::Error => "doublecircle, color=red",
                LocKind::NullDeref
                | LocKind::DivByZero
                | LocKind::InvalidDeref
                | LocKind::InvalidFree
                | LocKind::InvalidCall
                | LocKind::MemLeak
                | LocKind::RecursionBound
                | LocKind::Unmodelled => "doublecircle, color=orange",
                LocKind::Sink => "box",
                LocKind::FuncEntry => "circle, style=bold",
                LocKind::FuncExit => "doublecircle",
                LocKind::Normal => "circle",
            };
            let _ = writeln!(
                s,
                "    n{} [label=\"{}\", shape={shape}];",
                n.index(),
                n.index()
            );
        }
        s.push_str("  }\n");
    }
    for e in p.graph.edge_indices() {
        let Some((a, b)) = p.graph.edge_endpoints(e) else {
            continue;
        };
        if only.is_some_and(|f| p.graph[a].func != f) {
            continue;
        }
        let _ = writeln!(
            s,
            "  n{} -> n{} [label=\"{}\"];",
            a.index(),
            b.index(),
            dot_escape(&p.op_str(&p.graph[e].op))
        );
    }
    s.push_str("}\n");
    s
}

/// Output formats of `shapemc cfa`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CfaFormat {
    Text,
    Dot,
    Json,
}

/// Parses `file` for a CLI command: on a front-end error prints the diagnostic
/// (`file:line:col: ...`) to stderr and returns the exit code (2 parse, 3 unsupported).
pub fn load_for_cli(file: &Path, malloc_never_fails: bool) -> Result<Program, i32> {
    parse_file(
        file,
        &FrontendOptions {
            malloc_never_fails,
            ..Default::default()
        },
    )
    .map_err(|e| {
        eprintln!("{e}");
        e.exit_code()
    })
}
