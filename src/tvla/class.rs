//! Shape classes: the vocabulary a three-valued structure is built over.
//!
//! Naming conventions shared by the TVLA core, the SCG DSL and the refinement:
//! - `sm` (unary): summary-node predicate, always present;
//! - `pt[x]` (unary): program pointer variable `x` points to the node;
//! - `<field>` (binary, e.g. `succ(u, v)`): the pointer field `field` of `u` points to `v`;
//!   the name is the real (flattened) struct field name, never a role;
//! - `fd[<assertion>]` (unary, e.g. `fd[data == 0]`): the field assertion holds for
//!   every cell the node represents;
//! - anything else is an instrumentation predicate with a defining formula.

use super::formula::{Formula, PredSym};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A predicate of a shape class with its arity and, for instrumentation predicates,
/// its defining formula (free variables `v` for unary, `v1, v2` for binary).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PredDef {
    pub sym: PredSym,
    pub arity: u8,
    /// The defining formula (instrumentation predicates only).
    pub def: Option<Formula>,
}

/// A shape class S = (P_core, P_instr, P_abs) plus integrity constraints
/// (closed formulas that every concrete heap satisfies; coerce uses them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShapeClass {
    pub core: Vec<PredDef>,
    pub instr: Vec<PredDef>,
    /// Abstraction predicates (unary predicates among core ∪ instr).
    pub abs: BTreeSet<PredSym>,
    pub constraints: Vec<Formula>,
    /// Regions of this class keep one structure per set of node names: a structure
    /// whose nodes have the same names as one already there is joined into it
    /// ([`super::structure::Structure::partial_join`], TVLA's partial join). Coarser
    /// (fewer structures per region), never unsound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial_join: bool,
    /// Unary instrumentation predicates that describe only nodes a pointer variable
    /// points to (the SCG DSL's `nonabs`, e.g. `nn[f]`): canonical abstraction forgets
    /// them (1/2) on every other node ([`super::structure::Structure::blur`]), so their
    /// values there, which no proof reads, do not tell structures apart.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub pointed_only: BTreeSet<PredSym>,
    /// Program integer variables related to node cardinalities (counting; see
    /// [`super::counts`]): each structure of a region of this class carries affine
    /// equalities over these variables and its nodes' cardinalities. Empty: no counting.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<String>,
}

impl ShapeClass {
    /// `self ≼ other`: self refines other (componentwise superset), the paper's order.
    pub fn refines(&self, other: &ShapeClass) -> bool {
        let syms = |v: &Vec<PredDef>| v.iter().map(|p| p.sym.clone()).collect::<BTreeSet<_>>();
        syms(&other.core).is_subset(&syms(&self.core))
            && syms(&other.instr).is_subset(&syms(&self.instr))
            && other.abs.is_subset(&self.abs)
    }
    /// Number of predicates (core + instrumentation), the measure FineTune minimises.
    pub fn num_preds(&self) -> usize {
        self.core.len() + self.instr.len()
    }
}
