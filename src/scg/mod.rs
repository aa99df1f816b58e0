//! Shape-class generators (SCGs), paper §2.3, §3.3 and §4.
//!
//! - [`TrackingDef`] D = (T, Ts, Φ) with its refinement order;
//! - the SCG DSL ([`dsl`], [`parse`]) and the library of data structures loaded
//!   from `scg-library/` ([`library`]), found at run time or built in ([`location`]);
//! - [`Scg`] (structure + family subset + role binding, or the trivial m0), the
//!   lattice M with its order and shape-class generation ([`lattice`]);
//! - enabled sets E(σ) from explicit-heap invariants and [`fine_tune`] (§3.3);
//! - shape types and shape-abstraction specifications ([`ShapeType`], [`ShapeSpec`]).

pub mod cli;
pub mod dsl;
pub mod finetune;
pub mod instance;
pub mod justify;
pub mod lattice;
pub mod library;
pub mod location;
pub mod parse;

pub use finetune::fine_tune;
pub use lattice::{EnabledSets, HoldingInvariant, Lattice, RoleBinding, Scg};
pub use library::{Library, LibraryError};

use crate::tvla::class::ShapeClass;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// How shape-class generators are chosen (`shapemc verify --scg`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ScgMode {
    /// Refinement: trivial SCG first, refined along spurious counterexamples.
    #[default]
    Refine,
    /// The maximal SCGs for all pointers from the start, no SCG refinement.
    Maximal,
}

/// A tracking definition D = (T, Ts, Φ): tracked pointers T (program variable names),
/// separating pointers Ts ⊆ T, and field assertions Φ (assertion texts such as
/// `data == 0`). The invariant Ts ⊆ T is maintained by every constructor and method.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TrackingDef {
    tracked: BTreeSet<String>,
    separating: BTreeSet<String>,
    assertions: BTreeSet<String>,
}

impl TrackingDef {
    /// D0 = (∅, ∅, ∅), the coarsest tracking definition.
    pub fn d0() -> TrackingDef {
        TrackingDef::default()
    }
    /// Builds (T ∪ Ts, Ts, Φ): separating pointers are always tracked.
    pub fn new<S: Into<String>>(
        tracked: impl IntoIterator<Item = S>,
        separating: impl IntoIterator<Item = S>,
        assertions: impl IntoIterator<Item = S>,
    ) -> TrackingDef {
        let mut d = TrackingDef::default();
        tracked.into_iter().for_each(|p| {
            d.track(p);
        });
        separating.into_iter().for_each(|p| {
            d.separate(p);
        });
        assertions.into_iter().for_each(|a| {
            d.add_assertion(a);
        });
        d
    }
    /// T.
    pub fn tracked(&self) -> &BTreeSet<String> {
        &self.tracked
    }
    /// Ts (⊆ T).
    pub fn separating(&self) -> &BTreeSet<String> {
        &self.separating
    }
    /// Φ.
    pub fn assertions(&self) -> &BTreeSet<String> {
        &self.assertions
    }
    /// Adds `p` to T; returns whether D changed.
    pub fn track(&mut self, p: impl Into<String>) -> bool {
        self.tracked.insert(p.into())
    }
    /// Adds `p` to Ts (and to T); returns whether D changed.
    pub fn separate(&mut self, p: impl Into<String>) -> bool {
        let p = p.into();
        let a = self.tracked.insert(p.clone());
        self.separating.insert(p) || a
    }
    /// Adds a field assertion to Φ; returns whether D changed.
    pub fn add_assertion(&mut self, a: impl Into<String>) -> bool {
        self.assertions.insert(a.into())
    }
    /// `self ≼ other`: self refines other (componentwise superset).
    pub fn refines(&self, other: &TrackingDef) -> bool {
        other.tracked.is_subset(&self.tracked)
            && other.separating.is_subset(&self.separating)
            && other.assertions.is_subset(&self.assertions)
    }
    /// Componentwise union (the coarsest common refinement).
    pub fn join(&self, other: &TrackingDef) -> TrackingDef {
        TrackingDef {
            tracked: self.tracked.union(&other.tracked).cloned().collect(),
            separating: self.separating.union(&other.separating).cloned().collect(),
            assertions: self.assertions.union(&other.assertions).cloned().collect(),
        }
    }
}

/// A shape type (σ, m, D): a struct type name, an SCG and a tracking definition.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ShapeType {
    pub struct_type: String,
    pub scg: Scg,
    pub d: TrackingDef,
}

impl ShapeType {
    /// (σ, m0, D0), the initial shape type of a struct type.
    pub fn initial(struct_type: impl Into<String>) -> ShapeType {
        ShapeType {
            struct_type: struct_type.into(),
            scg: Scg::m0(),
            d: TrackingDef::d0(),
        }
    }
    /// The shape class m(D).
    pub fn shape_class(&self, lattice: &Lattice) -> ShapeClass {
        lattice.generate(&self.scg, &self.d)
    }
}

/// A shape-abstraction specification Ψ̂: for each location a list of shape types (one
/// per struct type). Locations without an entry use the initial specification Ψ̂0
/// (`(σ, m0, D0)` for every struct type given to [`ShapeSpec::initial`]).
/// `K` is the location key, normally [`crate::cfa::Node`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeSpec<K: Ord = crate::cfa::Node> {
    initial: Vec<ShapeType>,
    at: BTreeMap<K, Vec<ShapeType>>,
}

impl<K: Ord + Clone> ShapeSpec<K> {
    /// Ψ̂0 for the given struct types.
    pub fn initial<S: Into<String>>(struct_types: impl IntoIterator<Item = S>) -> Self {
        ShapeSpec {
            initial: struct_types.into_iter().map(ShapeType::initial).collect(),
            at: BTreeMap::new(),
        }
    }
    /// Ψ̂(l).
    pub fn get(&self, loc: &K) -> &[ShapeType] {
        self.at
            .get(loc)
            .map(|v| v.as_slice())
            .unwrap_or(&self.initial)
    }
    /// The shape type for struct type σ at `loc`.
    pub fn shape_type(&self, loc: &K, struct_type: &str) -> Option<&ShapeType> {
        self.get(loc).iter().find(|t| t.struct_type == struct_type)
    }
    /// Replaces (or adds) the shape type of `t.struct_type` at `loc`; returns whether Ψ̂ changed.
    pub fn set(&mut self, loc: K, t: ShapeType) -> bool {
        let entry = self.at.entry(loc).or_insert_with(|| self.initial.clone());
        match entry.iter_mut().find(|x| x.struct_type == t.struct_type) {
            Some(x) if *x == t => false,
            Some(x) => {
                *x = t;
                true
            }
            None => {
                entry.push(t);
                true
            }
        }
    }
    /// Ψ(l): the shape classes of all shape types at `loc`, with their struct type.
    pub fn shape_classes(&self, loc: &K, lattice: &Lattice) -> Vec<(String, ShapeClass)> {
        self.get(loc)
            .iter()
            .map(|t| (t.struct_type.clone(), t.shape_class(lattice)))
            .collect()
    }
    /// Locations with an explicit (non-initial) entry.
    pub fn locations(&self) -> impl Iterator<Item = &K> {
        self.at.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separating_are_tracked_and_order() {
        let mut d = TrackingDef::d0();
        assert!(d.separate("p"));
        assert!(d.tracked().contains("p"));
        let e = TrackingDef::new(["p", "q"], ["p"], ["data == 0"]);
        assert!(e.refines(&d));
        assert!(!d.refines(&e));
        assert!(e.refines(&TrackingDef::d0()));
        assert_eq!(d.join(&e), e);
    }

    #[test]
    fn spec_defaults_to_initial() {
        let mut s: ShapeSpec<u32> = ShapeSpec::initial(["node"]);
        assert_eq!(s.get(&3).len(), 1);
        assert_eq!(s.get(&3)[0].scg, Scg::m0());
        let mut t = ShapeType::initial("node");
        t.d.separate("p");
        assert!(s.set(3, t.clone()));
        assert!(!s.set(3, t.clone()));
        assert_eq!(s.shape_type(&3, "node"), Some(&t));
        assert_eq!(s.get(&4)[0], ShapeType::initial("node"));
    }
}
