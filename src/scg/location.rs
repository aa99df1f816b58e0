//! Where the SCG library is found at run time ([`locate`]), in this order:
//! 1. the `--scg-library DIR` option ([`set_cli_dir`]);
//! 2. `$SHAPEMC_SCG_LIBRARY`;
//! 3. `scg-library/` next to the binary;
//! 4. `../share/shapemc/scg-library/` from the binary's folder (an installation);
//! 5. the source tree's `scg-library/`, for a binary inside the tree it was built
//!    from (`target/...`), so that edits of the library take effect without a rebuild;
//! 6. the copy built into the binary ([`EMBEDDED`]), so a moved or installed binary
//!    never runs without shape analysis.
//!
//! A location named explicitly (1, 2) must be a directory ([`check_explicit`]); the
//! others are only taken when they exist. The library's hash does not depend on where
//! it was read from (file names and contents only), so a certificate written with the
//! embedded copy checks with the source tree's library and vice versa.

use super::library::{Library, LibraryError};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The library files built into the binary: (file name, text), sorted by file name as
/// [`Library::load_dir`] reads a directory.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "cyclic-dll.scg",
        include_str!("../../scg-library/cyclic-dll.scg"),
    ),
    (
        "cyclic-sll.scg",
        include_str!("../../scg-library/cyclic-sll.scg"),
    ),
    ("dll.scg", include_str!("../../scg-library/dll.scg")),
    (
        "headed-dll.scg",
        include_str!("../../scg-library/headed-dll.scg"),
    ),
    (
        "list-of-lists.scg",
        include_str!("../../scg-library/list-of-lists.scg"),
    ),
    ("sll.scg", include_str!("../../scg-library/sll.scg")),
    (
        "tree-parent.scg",
        include_str!("../../scg-library/tree-parent.scg"),
    ),
    ("tree.scg", include_str!("../../scg-library/tree.scg")),
];

/// How a library directory was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// `--scg-library DIR`.
    Option,
    /// `$SHAPEMC_SCG_LIBRARY`.
    Env,
    /// `scg-library/` next to the binary.
    BesideBinary,
    /// `../share/shapemc/scg-library/` from the binary's folder.
    Installed,
    /// The source tree the binary was built from.
    SourceTree,
}

/// Where the SCG library comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LibraryLocation {
    /// The `*.scg` files of a directory.
    Dir(PathBuf, Found),
    /// The copy built into the binary ([`EMBEDDED`]).
    Embedded,
}

impl fmt::Display for LibraryLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LibraryLocation::Dir(d, how) => {
                let how = match how {
                    Found::Option => "--scg-library",
                    Found::Env => "$SHAPEMC_SCG_LIBRARY",
                    Found::BesideBinary => "next to the binary",
                    Found::Installed => "installed",
                    Found::SourceTree => "source tree",
                };
                write!(f, "{} ({how})", d.display())
            }
            LibraryLocation::Embedded => write!(f, "embedded (built into the binary)"),
        }
    }
}

/// The `--scg-library` directory of this process (set once by the command line).
static CLI_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Records the `--scg-library DIR` option for every later [`locate`] of the process.
pub fn set_cli_dir(dir: PathBuf) {
    if CLI_DIR.set(dir).is_err() {
        tracing::warn!("--scg-library given twice; the first one stays");
    }
}

/// The library to load: `cli_dir` if given, else the first of the module's list.
pub fn locate(cli_dir: Option<&Path>) -> LibraryLocation {
    if let Some(d) = cli_dir.or(CLI_DIR.get().map(PathBuf::as_path)) {
        return LibraryLocation::Dir(d.to_path_buf(), Found::Option);
    }
    match std::env::var_os("SHAPEMC_SCG_LIBRARY") {
        Some(d) if !d.is_empty() => return LibraryLocation::Dir(PathBuf::from(d), Found::Env),
        _ => {}
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(l) = beside(&exe) {
            return l;
        }
    }
    LibraryLocation::Embedded
}

/// The library found from the binary's path `exe`: next to it, installed beside its
/// folder, or in the source tree it lives in.
fn beside(exe: &Path) -> Option<LibraryLocation> {
    let bin = exe.parent()?;
    let next_to = bin.join("scg-library");
    if next_to.is_dir() {
        return Some(LibraryLocation::Dir(next_to, Found::BesideBinary));
    }
    if let Some(prefix) = bin.parent() {
        let share = prefix.join("share").join("shapemc").join("scg-library");
        if share.is_dir() {
            return Some(LibraryLocation::Dir(share, Found::Installed));
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tree = src.join("scg-library");
    (exe.starts_with(src) && tree.is_dir()).then_some(LibraryLocation::Dir(tree, Found::SourceTree))
}

/// An error when the location was named explicitly (option or environment) but is not
/// a directory: running on without the library the user asked for would be a
/// different analysis.
pub fn check_explicit(loc: &LibraryLocation) -> Result<(), String> {
    match loc {
        LibraryLocation::Dir(d, how @ (Found::Option | Found::Env)) if !d.is_dir() => Err(format!(
            "cannot read the SCG library directory {}: not a directory",
            LibraryLocation::Dir(d.clone(), *how)
        )),
        _ => Ok(()),
    }
}

impl Library {
    /// Loads the library at `loc` (see [`Library::origin`]).
    pub fn load(loc: &LibraryLocation) -> Result<Library, Vec<LibraryError>> {
        let lib = match loc {
            LibraryLocation::Dir(d, _) => Library::load_dir(d)?,
            LibraryLocation::Embedded => Library::from_sources(
                EMBEDDED
                    .iter()
                    .map(|(name, text)| (PathBuf::from(name), text.to_string())),
            )?,
        };
        Ok(lib.with_origin(loc.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_copy_is_the_source_trees_library() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scg-library");
        let on_disk = Library::load_dir(&dir).expect("the library loads");
        let embedded = Library::load(&LibraryLocation::Embedded).expect("the copy loads");
        // same files, same contents: a new .scg file must be added to EMBEDDED
        assert_eq!(embedded.sha256(), on_disk.sha256());
        assert_eq!(embedded.origin(), "embedded (built into the binary)");
    }

    #[test]
    fn the_library_is_found_from_the_binarys_folder() {
        let d = tempfile::tempdir().expect("temp dir");
        let bin = d.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        let exe = bin.join("shapemc");
        // nothing there (and not in the source tree): the embedded copy
        assert_eq!(beside(&exe), None);
        let share = d.path().join("share/shapemc/scg-library");
        std::fs::create_dir_all(&share).expect("mkdir");
        assert_eq!(
            beside(&exe),
            Some(LibraryLocation::Dir(share, Found::Installed))
        );
        let next_to = bin.join("scg-library");
        std::fs::create_dir_all(&next_to).expect("mkdir");
        assert_eq!(
            beside(&exe),
            Some(LibraryLocation::Dir(next_to, Found::BesideBinary))
        );
        // a binary of the source tree
        let src = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(
            beside(&src.join("target/nowhere/shapemc")),
            Some(LibraryLocation::Dir(
                src.join("scg-library"),
                Found::SourceTree
            ))
        );
        let missing = LibraryLocation::Dir(d.path().join("nope"), Found::Env);
        let err = check_explicit(&missing).expect_err("not a directory");
        assert!(
            err.contains("($SHAPEMC_SCG_LIBRARY): not a directory"),
            "{err}"
        );
        assert_eq!(check_explicit(&LibraryLocation::Embedded), Ok(()));
    }
}
