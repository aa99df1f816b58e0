//! `shapemc scg list` and `shapemc scg check FILE`.

use super::library::{Library, LibraryError};
use super::location::locate;
use super::Lattice;
use crate::diag::exit;
use clap::Subcommand;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Subcommands of `shapemc scg`.
#[derive(Subcommand, Debug)]
pub enum ScgCommand {
    /// List the data structures of the SCG library: roles, required invariants,
    /// refinements, predicate families with their formulas, and the lattice size.
    List,
    /// Check a user DSL file (against the library, whose same-named entries it replaces).
    Check {
        /// The DSL file.
        file: PathBuf,
    },
}

/// Runs an `scg` subcommand, printing to stdout/stderr; returns the exit code
/// (0 ok, 2 on any library or file error).
pub fn run(cmd: ScgCommand) -> i32 {
    match cmd {
        ScgCommand::List => match Library::load(&locate(None)) {
            Ok(lib) => {
                print!("{}", list_text(&Lattice::new(lib)));
                exit::SAFE
            }
            Err(errs) => report(&errs),
        },
        ScgCommand::Check { file } => match check_file(&file, None) {
            Ok(summary) => {
                print!("{summary}");
                exit::SAFE
            }
            Err(errs) => report(&errs),
        },
    }
}

fn report(errs: &[LibraryError]) -> i32 {
    for e in errs {
        eprintln!("{e}");
    }
    exit::USAGE_OR_PARSE
}

/// The text of `shapemc scg list`.
pub fn list_text(lattice: &Lattice) -> String {
    let lib = lattice.library();
    let mut out = String::new();
    for s in lib.structures() {
        let file = lib
            .source_file(&s.name)
            .and_then(|f| f.file_name())
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let _ = writeln!(out, "{} ({file})", s.name);
        let _ = writeln!(out, "  roles: {}", s.roles.join(", "));
        for q in &s.requires {
            let _ = writeln!(out, "  requires: {}({})", q.invariant, q.roles.join(", "));
        }
        for r in &s.refines {
            let m: Vec<String> = r.role_map.iter().map(|(c, f)| format!("{c}={f}")).collect();
            let _ = writeln!(out, "  refines: {} ({})", r.coarser, m.join(", "));
        }
        let _ = writeln!(out, "  families ({}):", s.families.len());
        for fam in &s.families {
            let per = if fam.pointers.is_empty() {
                String::new()
            } else {
                format!(" (for each tracked pointer {})", fam.pointers.join(", "))
            };
            let always = if fam.always {
                " (always: in every SCG)"
            } else {
                ""
            };
            let _ = writeln!(out, "    {}{per}{always}", fam.name);
            for p in &fam.preds {
                let na = if p.nonabs { "nonabs " } else { "" };
                let _ = writeln!(
                    out,
                    "      {na}{}({}) := {}",
                    p.sym,
                    p.vars.join(", "),
                    p.def
                );
            }
            for k in &fam.constraints {
                let _ = writeln!(out, "      constraint {}", k.formula);
            }
        }
    }
    let _ = writeln!(
        out,
        "lattice: {} SCGs (m0 + family subsets of {} structures; role bindings not counted)",
        lattice.size(),
        lib.structures().count()
    );
    if !lib.origin().is_empty() {
        let _ = writeln!(out, "library: {}", lib.origin());
    }
    out
}

/// Checks `file` against the library in `lib_dir` (or the default one); returns a summary.
pub fn check_file(file: &Path, lib_dir: Option<&Path>) -> Result<String, Vec<LibraryError>> {
    let src = std::fs::read_to_string(file).map_err(|e| {
        vec![LibraryError {
            file: file.to_path_buf(),
            line: 0,
            col: 0,
            msg: format!("cannot read: {e}"),
        }]
    })?;
    let base = Library::load(&locate(lib_dir))?;
    let lib = base.with_file(file, &src)?;
    let mut out = String::new();
    let names: Vec<String> = lib
        .structures()
        .filter(|s| lib.source_file(&s.name) == Some(file))
        .map(|s| s.name.clone())
        .collect();
    if names.is_empty() {
        let _ = writeln!(out, "{}: ok (no structures)", file.display());
    }
    for n in names {
        let Some(s) = lib.structure(&n) else { continue };
        let preds: usize = s.families.iter().map(|f| f.preds.len()).sum();
        let replaced = if base.structure(&n).is_some() {
            " (replaces the library entry)"
        } else {
            ""
        };
        let refines: Vec<&str> = s.refines.iter().map(|r| r.coarser.as_str()).collect();
        let _ = writeln!(
            out,
            "{}: ok: structure {}{replaced}: {} roles, {} requires, {} families, {} predicates, {} SCGs per binding{}",
            file.display(),
            s.name,
            s.roles.len(),
            s.requires.len(),
            s.families.len(),
            preds,
            1u128 << s.optional_families().count().min(100),
            if refines.is_empty() {
                String::new()
            } else {
                format!(", refines {}", refines.join(", "))
            }
        );
    }
    Ok(out)
}
