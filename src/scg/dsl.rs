//! The SCG DSL: abstract syntax and its canonical printer.
//!
//! One DSL file describes one (or more) data structures. The printer emits the
//! canonical concrete syntax that [`super::parse::parse_dsl`] reads back:
//! `parse(print(s)) == s` for every well-formed [`StructureDef`] (positions are
//! metadata and ignored by equality). See `scg-library/README.md` for the language.

use crate::tvla::formula::{Formula, LVar, PredSym};
use std::fmt;

/// A 1-based source position (line, column in characters). Positions are metadata:
/// two positions always compare equal, so ASTs compare by content only.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl PartialEq for Pos {
    fn eq(&self, _: &Pos) -> bool {
        true
    }
}
impl Eq for Pos {}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// One data structure: its roles, the explicit-heap invariants that enable it,
/// the structures it refines, and its finest SCG as a list of predicate families.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructureDef {
    /// Name (`sll`, `tree-parent`, ...): letters, digits, `_` and `-`.
    pub name: String,
    /// Field roles (`next`, `prev`, ...), bound to real fields by recognition.
    pub roles: Vec<String>,
    /// Invariants that must all hold (with consistent role bindings) to enable it.
    pub requires: Vec<Requirement>,
    /// Coarser data structures this one refines.
    pub refines: Vec<Refinement>,
    /// The predicate families of the finest SCG; coarser SCGs are subsets.
    pub families: Vec<FamilyDef>,
    pub pos: Pos,
}

/// `requires inv(role, ...);`: the explicit-heap invariant `inv` holds with its
/// parameters (positionally) bound to the fields of the given roles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub invariant: String,
    pub roles: Vec<String>,
    pub pos: Pos,
}

/// `refines coarser (coarser_role = finer_role, ...);`: every SCG of this structure
/// with family set F is finer than the `coarser` SCG with the same-named families
/// F' ⊆ F under the role map. The library checks that every family of `coarser`
/// exists here with (after renaming roles) a superset of its predicates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refinement {
    pub coarser: String,
    /// Pairs (role of the coarser structure, role of this structure).
    pub role_map: Vec<(String, String)>,
    pub pos: Pos,
}

/// `family name for x, ... { pred ...; constraint ...; }`: a set of
/// instrumentation predicates chosen or dropped together. `pointers` are
/// placeholders for "each tracked pointer"; a predicate whose parameters mention a
/// placeholder is instantiated once per tracked pointer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyDef {
    pub name: String,
    /// `always family ...`: in every SCG of the structure (not a dimension of the
    /// lattice, never named in an [`super::Scg`]); for cheap predicates every proof
    /// may need, e.g. `nonabs` ones, which do not split nodes.
    pub always: bool,
    pub pointers: Vec<String>,
    pub preds: Vec<PredTemplate>,
    /// Closed integrity constraints, instantiated like the predicates.
    pub constraints: Vec<Constraint>,
    pub pos: Pos,
}

/// `pred sym(v) := f;` or `pred sym(v1, v2) := f;`: an instrumentation predicate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PredTemplate {
    pub sym: PredSym,
    /// `["v"]` (unary) or `["v1", "v2"]` (binary).
    pub vars: Vec<LVar>,
    pub def: Formula,
    /// `nonabs pred ...` (TVLA's `nonabs`): a unary predicate that is never an
    /// abstraction predicate. Nodes are not kept apart by its value (a summary node
    /// joins it), so it adds precision on nodes that other predicates single out (e.g.
    /// those a pointer points to) without multiplying the structures.
    pub nonabs: bool,
    pub pos: Pos,
}

impl PredTemplate {
    /// Arity (number of head variables).
    pub fn arity(&self) -> u8 {
        self.vars.len() as u8
    }
}

/// `constraint f;`: a closed formula every concrete heap satisfies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
    pub formula: Formula,
    pub pos: Pos,
}

impl StructureDef {
    /// The family with the given name.
    pub fn family(&self, name: &str) -> Option<&FamilyDef> {
        self.families.iter().find(|f| f.name == name)
    }
    /// The families an SCG chooses from (the lattice's dimensions): all but the
    /// `always` ones.
    pub fn optional_families(&self) -> impl Iterator<Item = &FamilyDef> {
        self.families.iter().filter(|f| !f.always)
    }
}

impl fmt::Display for StructureDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "structure {} {{", self.name)?;
        writeln!(f, "  roles {};", self.roles.join(", "))?;
        for r in &self.requires {
            writeln!(f, "  requires {}({});", r.invariant, r.roles.join(", "))?;
        }
        for r in &self.refines {
            let m: Vec<String> = r
                .role_map
                .iter()
                .map(|(c, fi)| format!("{c} = {fi}"))
                .collect();
            writeln!(f, "  refines {} ({});", r.coarser, m.join(", "))?;
        }
        for fam in &self.families {
            let always = if fam.always { "always " } else { "" };
            write!(f, "  {always}family {}", fam.name)?;
            if !fam.pointers.is_empty() {
                write!(f, " for {}", fam.pointers.join(", "))?;
            }
            writeln!(f, " {{")?;
            for p in &fam.preds {
                let na = if p.nonabs { "nonabs " } else { "" };
                writeln!(
                    f,
                    "    {na}pred {}({}) := {};",
                    p.sym,
                    p.vars.join(", "),
                    p.def
                )?;
            }
            for c in &fam.constraints {
                writeln!(f, "    constraint {};", c.formula)?;
            }
            writeln!(f, "  }}")?;
        }
        writeln!(f, "}}")
    }
}
