//! The witness of a `verify` run (`--witness`): a violation witness for UNSAFE, a
//! correctness witness for SAFE, nothing for UNKNOWN.

use super::conventions::DataModel;
use super::witness::to_yaml;
use crate::cegar::cli::VerifyReport;
use crate::cegar::Verdict;
use crate::spec::Property;
use std::path::{Path, PathBuf};

/// Writes the witness of a `verify` run: the violation witness of its counterexample
/// (UNSAFE) or the correctness witness of its proof (SAFE) to `witness`, if asked.
pub struct EvidenceWriter<'a> {
    /// The C file `verify` analysed (named in the witness as given).
    pub input: &'a Path,
    /// Where the witness goes (`--witness`); nothing is written without it.
    pub witness: Option<&'a Path>,
    /// The data model the witness names.
    pub data_model: DataModel,
    /// Whether `verify` assumed that `malloc` never fails (the program the
    /// counterexample's path runs in depends on it).
    pub malloc_never_fails: bool,
    /// The property `verify` checked: witnesses are written for unreach-call only.
    pub property: Property,
}

impl EvidenceWriter<'_> {
    /// Builds and writes the witness for `rep` (see [`crate::cegar::cli::ExtraEvidence`]):
    /// `None` without `--witness`, for UNKNOWN, or for a memory property (whose
    /// witnesses shapemc does not write: a warning says so, the verdict stands).
    pub fn write(&self, rep: &VerifyReport) -> Option<(String, PathBuf, Result<(), String>)> {
        let path = self.witness?;
        if self.property != Property::UnreachCall {
            eprintln!(
                "warning: {}: no witness written to {} (shapemc writes witnesses for unreach-call only)",
                self.property,
                path.display()
            );
            return None;
        }
        let (what, entry) = match (&rep.verdict, &rep.counterexample) {
            (Verdict::Unsafe, Some(cex)) => (
                "violation witness",
                super::violation::witness(
                    self.input,
                    cex,
                    self.data_model,
                    self.malloc_never_fails,
                ),
            ),
            (Verdict::Safe, _) => (
                "correctness witness",
                super::correctness::witness(
                    self.input,
                    self.data_model,
                    self.malloc_never_fails,
                    rep,
                ),
            ),
            _ => return None,
        };
        let result = entry.and_then(|e| to_yaml(&[e])).and_then(|text| {
            std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
        });
        Some((what.to_string(), path.to_path_buf(), result))
    }
}
