//! The property a verification run checks (SV-COMP's specification files).
//!
//! [`Property`] is what `verify --property` selects and what a certificate records:
//! `unreach-call` (no call of `reach_error()`, the default), `valid-memsafety` (every
//! dereference and every `free` valid, no memory lost while allocated) and
//! `valid-memcleanup` (all allocated memory freed at exit). An `UNSAFE` answer under a
//! memory property names the violated [`Subproperty`] (`UNSAFE (valid-deref)`).
//!
//! A property is recognised from the text of a `.prp` file (`CHECK( init(main()),
//! LTL(G valid-free) ) ...`) or from a short name (`valid-memsafety`, `memsafety`);
//! [`Property::parse_arg`] accepts either, a path when it names an existing file.
//! [`DataModel`] is a task's other half of the specification (`options.data_model`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// A property `verify` checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Property {
    /// `G ! call(reach_error())`: no run calls `reach_error()` (memory errors are
    /// undefined behaviour on the way, see README "Undefined behaviour").
    #[default]
    UnreachCall,
    /// `G valid-free`, `G valid-deref`, `G valid-memtrack`: SV-COMP's memory safety.
    ValidMemsafety,
    /// `G valid-memcleanup`: every allocated object is freed when the program exits.
    ValidMemcleanup,
}

/// The part of a memory property a counterexample violates (SV-COMP's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Subproperty {
    /// `free(p)` of something that is not the start of a live heap object.
    ValidFree,
    /// A read or write through NULL, a dangling (freed) or a garbage pointer.
    ValidDeref,
    /// Memory that became unreachable while still allocated.
    ValidMemtrack,
    /// Memory still allocated when the program exits.
    ValidMemcleanup,
}

impl Property {
    /// Every property, in the order `--help` lists them.
    pub const ALL: [Property; 3] = [
        Property::UnreachCall,
        Property::ValidMemsafety,
        Property::ValidMemcleanup,
    ];

    /// The SV-COMP short name (`unreach-call`, `valid-memsafety`, `valid-memcleanup`),
    /// also the stem of its property file.
    pub fn name(self) -> &'static str {
        match self {
            Property::UnreachCall => "unreach-call",
            Property::ValidMemsafety => "valid-memsafety",
            Property::ValidMemcleanup => "valid-memcleanup",
        }
    }

    /// The property a short name denotes: an SV-COMP name, with or without the
    /// `valid-` prefix or a `.prp` suffix (`memsafety`, `valid-memsafety.prp`), or one
    /// of the subproperty names of memory safety (`valid-deref` → valid-memsafety).
    pub fn from_name(name: &str) -> Option<Property> {
        let n = name.trim().to_ascii_lowercase();
        let n = n.strip_suffix(".prp").unwrap_or(&n);
        let n = n.strip_prefix("valid-").unwrap_or(n);
        match n {
            "unreach-call" | "reach" | "reach-error" => Some(Property::UnreachCall),
            "memsafety" | "free" | "deref" | "memtrack" => Some(Property::ValidMemsafety),
            "memcleanup" => Some(Property::ValidMemcleanup),
            _ => None,
        }
    }

    /// The property of a `.prp` file's text: every `LTL(...)` formula names one
    /// (sub)property and all must belong to the same property; `None` for any other
    /// text (an unknown formula, `CHECK` without `LTL`, a mix of properties).
    pub fn from_prp_text(text: &str) -> Option<Property> {
        let mut found: Option<Property> = None;
        let mut rest = text;
        while let Some(i) = rest.find("LTL(") {
            let after = &rest[i + 4..];
            let end = after.find(')')?;
            // `G ! call(reach_error())`: the inner parentheses end early; look at the
            // text up to the first `)` and what it starts with
            let formula: String = after[..end]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let p = if formula.starts_with("G ! call(reach_error(")
                || formula.starts_with("G !call(reach_error(")
            {
                Property::UnreachCall
            } else {
                let f = formula.strip_prefix("G ")?.trim();
                match f {
                    "valid-free" | "valid-deref" | "valid-memtrack" => Property::ValidMemsafety,
                    "valid-memcleanup" => Property::ValidMemcleanup,
                    _ => return None,
                }
            };
            if found.is_some_and(|q| q != p) {
                return None;
            }
            found = Some(p);
            rest = &after[end..];
        }
        found
    }

    /// The property a property file states: from its text ([`Property::from_prp_text`]),
    /// else from its name ([`Property::from_name`] of the file stem) when the file
    /// cannot be read. `Err` names the file and what is wrong with it.
    pub fn from_prp_file(path: &Path) -> Result<Property, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => Property::from_prp_text(&text).ok_or_else(|| {
                format!(
                    "{}: not a property shapemc checks (supported: {})",
                    path.display(),
                    Property::names()
                )
            }),
            Err(e) => path
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(Property::from_name)
                .ok_or_else(|| format!("{}: {e}", path.display())),
        }
    }

    /// `verify --property ARG`: a path to an existing file is read as a property file,
    /// anything else is a short name.
    pub fn parse_arg(arg: &str) -> Result<Property, String> {
        let path = Path::new(arg);
        if path.is_file() {
            return Property::from_prp_file(path);
        }
        Property::from_name(arg).ok_or_else(|| {
            format!(
                "unknown property `{arg}` (neither a file nor one of {})",
                Property::names()
            )
        })
    }

    /// The supported names, comma-separated (for messages).
    fn names() -> String {
        Property::ALL
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether memory errors are the property's violations (valid-memsafety) rather
    /// than undefined behaviour on the way to `reach_error()`.
    pub fn is_memory(self) -> bool {
        self != Property::UnreachCall
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Subproperty {
    /// The SV-COMP name (`valid-free`, `valid-deref`, `valid-memtrack`,
    /// `valid-memcleanup`).
    pub fn name(self) -> &'static str {
        match self {
            Subproperty::ValidFree => "valid-free",
            Subproperty::ValidDeref => "valid-deref",
            Subproperty::ValidMemtrack => "valid-memtrack",
            Subproperty::ValidMemcleanup => "valid-memcleanup",
        }
    }

    /// The subproperty of an SV-COMP name (`valid-deref`, ...).
    pub fn from_name(name: &str) -> Option<Subproperty> {
        match name.trim() {
            "valid-free" => Some(Subproperty::ValidFree),
            "valid-deref" => Some(Subproperty::ValidDeref),
            "valid-memtrack" => Some(Subproperty::ValidMemtrack),
            "valid-memcleanup" => Some(Subproperty::ValidMemcleanup),
            _ => None,
        }
    }

    /// The property this subproperty is part of.
    pub fn property(self) -> Property {
        match self {
            Subproperty::ValidMemcleanup => Property::ValidMemcleanup,
            _ => Property::ValidMemsafety,
        }
    }
}

impl fmt::Display for Subproperty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The data model of a task (`options.data_model`): the sizes of `long` and of
/// pointers, and so the wrap-around of `long` arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataModel {
    /// 32-bit `int`, `long` and pointers: what the front end parses (`-m32`).
    Ilp32,
    /// 64-bit `long` and pointers. Not supported: the front end fixes ILP32.
    Lp64,
}

impl DataModel {
    /// The name task files and witnesses use (`ILP32`, `LP64`).
    pub fn name(self) -> &'static str {
        match self {
            DataModel::Ilp32 => "ILP32",
            DataModel::Lp64 => "LP64",
        }
    }

    /// Reads `options.data_model`; an absent one is SV-COMP's ILP32 (the heap
    /// categories' model). Errors for a name that is neither.
    pub fn from_task(name: Option<&str>) -> Result<DataModel, String> {
        match name.map(str::trim) {
            None | Some("ILP32") => Ok(DataModel::Ilp32),
            Some("LP64") => Ok(DataModel::Lp64),
            Some(other) => Err(format!("unknown data model `{other}` (ILP32 or LP64)")),
        }
    }

    /// Whether the front end translates programs of this model exactly. Only ILP32:
    /// clang parses every file with `-m32`, and reading an LP64 task that way would
    /// silently change the sizes of `long` and pointers (and so wrap-around).
    pub fn supported(self) -> bool {
        self == DataModel::Ilp32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNREACH: &str = "CHECK( init(main()), LTL(G ! call(reach_error())) )\n";
    const MEMSAFETY: &str = "CHECK( init(main()), LTL(G valid-free) )\nCHECK( init(main()), LTL(G valid-deref) )\nCHECK( init(main()), LTL(G valid-memtrack) )\n";
    const MEMCLEANUP: &str = "CHECK( init(main()), LTL(G valid-memcleanup) )\n";

    #[test]
    fn recognises_the_svcomp_property_files() {
        assert_eq!(
            Property::from_prp_text(UNREACH),
            Some(Property::UnreachCall)
        );
        assert_eq!(
            Property::from_prp_text(MEMSAFETY),
            Some(Property::ValidMemsafety)
        );
        assert_eq!(
            Property::from_prp_text(MEMCLEANUP),
            Some(Property::ValidMemcleanup)
        );
    }

    #[test]
    fn refuses_other_and_mixed_property_texts() {
        assert_eq!(Property::from_prp_text(""), None);
        assert_eq!(
            Property::from_prp_text("CHECK( init(main()), LTL(G ! overflow) )"),
            None
        );
        assert_eq!(
            Property::from_prp_text("CHECK( init(main()), LTL(F end) )"),
            None
        );
        assert_eq!(
            Property::from_prp_text(&format!("{UNREACH}{MEMCLEANUP}")),
            None
        );
        assert_eq!(Property::from_prp_text("LTL(G valid-free"), None);
    }

    #[test]
    fn short_names() {
        for p in Property::ALL {
            assert_eq!(Property::from_name(p.name()), Some(p));
            assert_eq!(Property::from_name(&format!("{p}.prp")), Some(p));
        }
        assert_eq!(
            Property::from_name("memsafety"),
            Some(Property::ValidMemsafety)
        );
        assert_eq!(
            Property::from_name("valid-deref"),
            Some(Property::ValidMemsafety)
        );
        assert_eq!(Property::from_name("overflow"), None);
        assert_eq!(Property::default(), Property::UnreachCall);
    }

    #[test]
    fn parse_arg_reads_files_first() {
        let dir = std::env::temp_dir().join(format!("shapemc-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // a file named like one property but stating another: the text decides
        let f = dir.join("unreach-call.prp");
        std::fs::write(&f, MEMCLEANUP).unwrap();
        assert_eq!(
            Property::parse_arg(f.to_str().unwrap()),
            Ok(Property::ValidMemcleanup)
        );
        let g = dir.join("other.prp");
        std::fs::write(&g, "CHECK( init(main()), LTL(G ! overflow) )").unwrap();
        assert!(Property::parse_arg(g.to_str().unwrap()).is_err());
        assert_eq!(
            Property::parse_arg("valid-memsafety"),
            Ok(Property::ValidMemsafety)
        );
        assert!(Property::parse_arg("no-such-property").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn subproperties_belong_to_their_property() {
        for s in [
            Subproperty::ValidFree,
            Subproperty::ValidDeref,
            Subproperty::ValidMemtrack,
            Subproperty::ValidMemcleanup,
        ] {
            assert_eq!(Subproperty::from_name(s.name()), Some(s));
        }
        assert_eq!(
            Subproperty::ValidMemtrack.property(),
            Property::ValidMemsafety
        );
        assert_eq!(
            Subproperty::ValidMemcleanup.property(),
            Property::ValidMemcleanup
        );
        assert_eq!(
            serde_json::to_string(&Property::ValidMemsafety).unwrap(),
            "\"valid-memsafety\""
        );
    }
}
