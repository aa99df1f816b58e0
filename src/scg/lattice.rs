//! SCGs, the lattice M, shape-class generation and enabled sets E(σ).
//!
//! An [`Scg`] is either the trivial m0 (generates the empty shape class) or a data
//! structure of the library with a subset of its families and a binding of its roles
//! to real struct fields. The order is structural ([`Lattice::leq`]):
//! `(s, F, b) ⊑ (s', F', b')` iff `s` refines `s'` (reflexively-transitively) along a
//! role map ρ with `b' = b ∘ ρ`, and `F' ⊆ F` (families match by name); every SCG is
//! ⊑ m0. The library's load-time checks make this order sound for the paper's
//! semantic order `m ⊑ m'` iff `m(D) ≼ m'(D)` for all D (property-tested); SCGs that
//! generate equal classes without a declared relation stay incomparable.

use super::instance::instantiate;
pub use super::instance::RoleBinding;
use super::library::Library;
use super::TrackingDef;
use crate::tvla::class::ShapeClass;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A shape-class generator.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Scg {
    /// m0: generates (∅, ∅, ∅) for every D; the coarsest SCG.
    Trivial,
    /// A library structure with a subset of its families and a role binding.
    Gen {
        structure: String,
        families: BTreeSet<String>,
        binding: RoleBinding,
    },
}

impl Scg {
    /// The coarsest SCG m0.
    pub fn m0() -> Scg {
        Scg::Trivial
    }
    /// An SCG of `structure` with the given families and binding.
    pub fn new<S: Into<String>>(
        structure: impl Into<String>,
        families: impl IntoIterator<Item = S>,
        binding: RoleBinding,
    ) -> Scg {
        Scg::Gen {
            structure: structure.into(),
            families: families.into_iter().map(Into::into).collect(),
            binding,
        }
    }
    /// True for m0.
    pub fn is_m0(&self) -> bool {
        matches!(self, Scg::Trivial)
    }
    /// The structure name (None for m0).
    pub fn structure(&self) -> Option<&str> {
        match self {
            Scg::Trivial => None,
            Scg::Gen { structure, .. } => Some(structure),
        }
    }
    /// The chosen families (empty for m0).
    pub fn families(&self) -> impl Iterator<Item = &String> {
        match self {
            Scg::Trivial => None,
            Scg::Gen { families, .. } => Some(families.iter()),
        }
        .into_iter()
        .flatten()
    }
    /// The role binding (None for m0).
    pub fn binding(&self) -> Option<&RoleBinding> {
        match self {
            Scg::Trivial => None,
            Scg::Gen { binding, .. } => Some(binding),
        }
    }
}

impl fmt::Display for Scg {
    /// `m0` or `dll{cancel, reach}(next=succ, prev=pred)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scg::Trivial => write!(f, "m0"),
            Scg::Gen {
                structure,
                families,
                binding,
            } => {
                let fs: Vec<&str> = families.iter().map(|s| s.as_str()).collect();
                let bs: Vec<String> = binding.iter().map(|(r, x)| format!("{r}={x}")).collect();
                write!(f, "{structure}{{{}}}({})", fs.join(", "), bs.join(", "))
            }
        }
    }
}

/// An explicit-heap invariant that holds on the samples, with its parameters bound
/// positionally to real field names: `doubly_linked(succ, pred)` is
/// `HoldingInvariant { name: "doubly_linked", fields: ["succ", "pred"] }`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HoldingInvariant {
    pub name: String,
    pub fields: Vec<String>,
}

impl HoldingInvariant {
    /// `name(fields...)`.
    pub fn new(name: impl Into<String>, fields: &[&str]) -> HoldingInvariant {
        HoldingInvariant {
            name: name.into(),
            fields: fields.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// The lattice M of SCGs over a library.
#[derive(Clone, Debug)]
pub struct Lattice {
    lib: Library,
}

impl Lattice {
    /// Loads the library found by [`super::location::locate`]`(cli_dir)` (the
    /// `--scg-library` option, `$SHAPEMC_SCG_LIBRARY`, next to the binary, installed,
    /// the source tree, else the copy built into the binary) and builds its lattice.
    pub fn load(cli_dir: Option<&std::path::Path>) -> Result<Lattice, Vec<super::LibraryError>> {
        Library::load(&super::location::locate(cli_dir)).map(Lattice::new)
    }
    /// The lattice of all SCGs of `lib`.
    pub fn new(lib: Library) -> Lattice {
        Lattice { lib }
    }
    /// The underlying library.
    pub fn library(&self) -> &Library {
        &self.lib
    }
    /// |M| counted as 1 (m0) + Σ over structures of 2^|optional families| (role bindings
    /// not counted; `always` families are in every SCG of their structure).
    pub fn size(&self) -> u128 {
        1 + self
            .lib
            .structures()
            .map(|s| 1u128 << s.optional_families().count().min(100))
            .sum::<u128>()
    }
    /// `Ok` if `m` is m0 or names a library structure, only its families, and binds
    /// exactly its roles.
    pub fn validate(&self, m: &Scg) -> Result<(), String> {
        let Scg::Gen {
            structure,
            families,
            binding,
        } = m
        else {
            return Ok(());
        };
        let s = self
            .lib
            .structure(structure)
            .ok_or_else(|| format!("unknown structure `{structure}`"))?;
        if let Some(f) = families.iter().find(|f| s.family(f).is_none()) {
            return Err(format!("`{structure}` has no family `{f}`"));
        }
        if let Some(f) = families
            .iter()
            .find(|f| s.family(f).is_some_and(|d| d.always))
        {
            return Err(format!(
                "family `{f}` of `{structure}` is in every SCG (`always`), never chosen"
            ));
        }
        let roles: BTreeSet<&String> = s.roles.iter().collect();
        let bound: BTreeSet<&String> = binding.keys().collect();
        if roles != bound {
            return Err(format!(
                "binding must bind exactly the roles of `{structure}`"
            ));
        }
        Ok(())
    }
    /// m(D): the shape class the SCG generates for the tracking definition (see
    /// [`super::instance::instantiate`]); m0 and unknown structures give the empty class.
    pub fn generate(&self, m: &Scg, d: &TrackingDef) -> ShapeClass {
        match m {
            Scg::Trivial => ShapeClass::default(),
            Scg::Gen {
                structure,
                families,
                binding,
            } => match self.lib.structure(structure) {
                Some(s) => instantiate(s, families, binding, d),
                None => ShapeClass::default(),
            },
        }
    }
    /// `m ⊑ m2`: m refines (is finer than or equal to) m2.
    pub fn leq(&self, m: &Scg, m2: &Scg) -> bool {
        match (m, m2) {
            (_, Scg::Trivial) => true,
            (Scg::Trivial, Scg::Gen { .. }) => false,
            (
                Scg::Gen {
                    structure: s,
                    families: f,
                    binding: b,
                },
                Scg::Gen {
                    structure: s2,
                    families: f2,
                    binding: b2,
                },
            ) => {
                if !f2.is_subset(f) {
                    return false;
                }
                if s == s2 {
                    return b == b2;
                }
                self.lib.strict_role_maps(s, s2).iter().any(|rho| {
                    rho.len() == b2.len()
                        && rho
                            .iter()
                            .all(|(cr, fr)| b2.get(cr).is_some() && b2.get(cr) == b.get(fr))
                })
            }
        }
    }
    /// The least upper bound in refinement of `a` and `b` (the coarsest SCG finer than
    /// both): one of them if they are ordered, the union of the families for equal
    /// structure and binding, else none.
    pub fn join(&self, a: &Scg, b: &Scg) -> Option<Scg> {
        if self.leq(a, b) {
            return Some(a.clone());
        }
        if self.leq(b, a) {
            return Some(b.clone());
        }
        match (a, b) {
            (
                Scg::Gen {
                    structure: s1,
                    families: f1,
                    binding: b1,
                },
                Scg::Gen {
                    structure: s2,
                    families: f2,
                    binding: b2,
                },
            ) if s1 == s2 && b1 == b2 => {
                Some(Scg::new(s1.clone(), f1.union(f2).cloned(), b1.clone()))
            }
            _ => None,
        }
    }
    /// `m ⊏ m2`: strictly finer.
    pub fn lt(&self, m: &Scg, m2: &Scg) -> bool {
        m != m2 && self.leq(m, m2)
    }
    /// All SCGs of `structure` with the given binding (every family subset), coarsest first.
    pub fn scgs_for(&self, structure: &str, binding: &RoleBinding) -> Vec<Scg> {
        let Some(s) = self.lib.structure(structure) else {
            return Vec::new();
        };
        let names: Vec<&String> = s.optional_families().map(|f| &f.name).collect();
        let n = names.len().min(super::library::MAX_FAMILIES);
        let mut out: Vec<Scg> = (0u32..(1u32 << n))
            .map(|mask| Scg::Gen {
                structure: s.name.clone(),
                families: (0..n)
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| names[i].clone())
                    .collect(),
                binding: binding.clone(),
            })
            .collect();
        out.sort_by_key(|m| m.families().count());
        out
    }
    /// Role bindings of each structure under which all its `requires` clauses hold
    /// (consistently and injectively), given the invariants that hold on the samples.
    pub fn bindings(&self, holding: &[HoldingInvariant]) -> Vec<(String, RoleBinding)> {
        let mut out = Vec::new();
        for s in self.lib.structures() {
            let mut partial: Vec<RoleBinding> = vec![RoleBinding::new()];
            for q in &s.requires {
                let mut next = Vec::new();
                for b in &partial {
                    for h in holding
                        .iter()
                        .filter(|h| h.name == q.invariant && h.fields.len() == q.roles.len())
                    {
                        let mut b2 = b.clone();
                        let ok = q.roles.iter().zip(&h.fields).all(|(r, f)| match b2.get(r) {
                            Some(g) => g == f,
                            None => {
                                if b2.values().any(|g| g == f) {
                                    return false;
                                }
                                b2.insert(r.clone(), f.clone());
                                true
                            }
                        });
                        if ok && !next.contains(&b2) {
                            next.push(b2);
                        }
                    }
                }
                partial = next;
            }
            for b in partial {
                if b.len() == s.roles.len() {
                    out.push((s.name.clone(), b));
                }
            }
        }
        out
    }
    /// SCGsFromExplicit: every non-trivial SCG whose structure's invariants hold
    /// (all family subsets, every consistent binding). m0 is not included.
    pub fn enabled(&self, holding: &[HoldingInvariant]) -> Vec<Scg> {
        self.bindings(holding)
            .iter()
            .flat_map(|(s, b)| self.scgs_for(s, b))
            .collect()
    }
    /// Every non-trivial SCG whose roles bind injectively to the given fields (the part
    /// of M relevant to a struct type with these pointer fields).
    pub fn universe(&self, fields: &[String]) -> Vec<Scg> {
        let mut out = Vec::new();
        for s in self.lib.structures() {
            let mut bs: Vec<RoleBinding> = vec![RoleBinding::new()];
            for r in &s.roles {
                let mut next = Vec::new();
                for b in &bs {
                    for f in fields {
                        if !b.values().any(|g| g == f) {
                            let mut b2 = b.clone();
                            b2.insert(r.clone(), f.clone());
                            next.push(b2);
                        }
                    }
                }
                bs = next;
            }
            for b in bs {
                out.extend(self.scgs_for(&s.name, &b));
            }
        }
        out
    }
    /// The coarsest elements of `set` (those with no strictly coarser element in `set`).
    pub fn coarsest(&self, set: &[Scg]) -> Vec<Scg> {
        set.iter()
            .filter(|m| !set.iter().any(|m2| self.lt(m, m2)))
            .cloned()
            .collect()
    }
}

/// The enabled sets E(σ) per struct type name. A struct type without an entry has
/// not been restricted yet (E(σ) = M).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnabledSets {
    map: BTreeMap<String, BTreeSet<Scg>>,
}

impl EnabledSets {
    /// No struct type restricted.
    pub fn new() -> EnabledSets {
        EnabledSets::default()
    }
    /// E(σ), or None if σ is unrestricted.
    pub fn get(&self, struct_type: &str) -> Option<&BTreeSet<Scg>> {
        self.map.get(struct_type)
    }
    /// E(σ) as a vector (empty if unrestricted or empty).
    pub fn to_vec(&self, struct_type: &str) -> Vec<Scg> {
        self.get(struct_type)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }
    /// E(σ) := E(σ) ∩ SCGsFromExplicit(holding) (Alg. 2); returns the new E(σ).
    pub fn restrict(
        &mut self,
        struct_type: &str,
        lattice: &Lattice,
        holding: &[HoldingInvariant],
    ) -> &BTreeSet<Scg> {
        let from: BTreeSet<Scg> = lattice.enabled(holding).into_iter().collect();
        let e = self
            .map
            .entry(struct_type.to_string())
            .or_insert_with(|| from.clone());
        e.retain(|m| from.contains(m));
        e
    }
    /// Adds to E(σ) every m'' of `universe` with `current ⋢ m''` (Alg. 3, when
    /// FineTune fails); returns the number of added SCGs.
    pub fn extend_not_coarser(
        &mut self,
        struct_type: &str,
        lattice: &Lattice,
        current: &Scg,
        universe: &[Scg],
    ) -> usize {
        let e = self.map.entry(struct_type.to_string()).or_default();
        let before = e.len();
        for m in universe {
            if !lattice.leq(current, m) {
                e.insert(m.clone());
            }
        }
        e.len() - before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn lat() -> Lattice {
        Lattice::new(
            Library::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scg-library"))
                .expect("library loads"),
        )
    }

    #[test]
    fn bindings_are_consistent_and_injective() {
        let l = lat();
        let h = [
            HoldingInvariant::new("doubly_linked", &["a", "a"]),
            HoldingInvariant::new("doubly_linked", &["a", "b"]),
            HoldingInvariant::new("binary_tree", &["a", "b"]),
            HoldingInvariant::new("binary_tree", &["b", "a"]),
            HoldingInvariant::new("doubly_linked", &["a"]),
        ];
        let bs = l.bindings(&h);
        let names: Vec<String> = bs.iter().map(|(s, b)| format!("{s}{b:?}")).collect();
        assert_eq!(
            names,
            [
                r#"dll{"next": "a", "prev": "b"}"#,
                r#"tree{"left": "a", "right": "b"}"#,
                r#"tree{"left": "b", "right": "a"}"#,
            ]
        );
        assert!(l.bindings(&[]).is_empty());
        assert!(l.enabled(&[]).is_empty());
    }

    #[test]
    fn enabled_sets_restrict_and_extend() {
        let l = lat();
        let mut e = EnabledSets::new();
        assert!(e.get("node").is_none());
        let h = [
            HoldingInvariant::new("acyclic_list", &["succ"]),
            HoldingInvariant::new("doubly_linked", &["succ", "pred"]),
        ];
        assert_eq!(e.restrict("node", &l, &h).len(), 8 + 16);
        // a later sample without doubly_linked shrinks E(σ) to sll
        assert_eq!(e.restrict("node", &l, &h[..1]).len(), 8);
        let cur = e.to_vec("node")[0].clone();
        assert_eq!(cur.to_string(), "sll{}(next=succ)");
        let universe = l.universe(&["succ".to_string(), "pred".to_string()]);
        let added = e.extend_not_coarser("node", &l, &cur, &universe);
        // everything except the SCGs coarser than or equal to sll{}(next=succ): itself and m0 (not in universe)
        assert_eq!(added, universe.len() - 8);
        assert!(e.get("node").unwrap().contains(&cur));
        assert!(l.coarsest(&e.to_vec("node")).len() >= 2);
    }

    #[test]
    fn lattice_join_is_the_coarsest_common_refinement() {
        let lat = lat();
        let b: RoleBinding = [("next", "n"), ("prev", "p")]
            .iter()
            .map(|(r, f)| (r.to_string(), f.to_string()))
            .collect();
        let a = Scg::new("dll", ["cancel"], b.clone());
        let c = Scg::new("dll", ["share"], b.clone());
        let j = lat.join(&a, &c).expect("same structure and binding");
        assert_eq!(j, Scg::new("dll", ["cancel", "share"], b.clone()));
        assert_eq!(lat.join(&c, &a), Some(j.clone()));
        assert!(lat.leq(&j, &a) && lat.leq(&j, &c));
        // ordered: the finer one; m0 is the unit
        assert_eq!(lat.join(&j, &a), Some(j.clone()));
        assert_eq!(lat.join(&Scg::m0(), &a), Some(a.clone()));
        // another binding of the same structure: no join in the lattice
        let b2: RoleBinding = [("next", "p"), ("prev", "n")]
            .iter()
            .map(|(r, f)| (r.to_string(), f.to_string()))
            .collect();
        assert_eq!(lat.join(&a, &Scg::new("dll", ["share"], b2)), None);
    }

    #[test]
    fn display_and_validate() {
        let l = lat();
        let b: RoleBinding = [("next", "succ"), ("prev", "pred")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let m = Scg::new("dll", ["reach", "cancel"], b.clone());
        assert_eq!(m.to_string(), "dll{cancel, reach}(next=succ, prev=pred)");
        assert!(l.validate(&m).is_ok());
        assert!(l.validate(&Scg::new("dll", ["nope"], b.clone())).is_err());
        assert!(l
            .validate(&Scg::new("sll", Vec::<String>::new(), b))
            .is_err());
        assert!(l
            .validate(&Scg::new("zzz", Vec::<String>::new(), RoleBinding::new()))
            .is_err());
        assert_eq!(Scg::m0().to_string(), "m0");
        // m0, then 2^families per structure: sll, dll, cyclic-sll, tree, tree-parent,
        // list-of-lists, cyclic-dll, headed-dll
        assert_eq!(l.size(), 1 + 8 + 16 + 64 + 128 + 256 + 32 + 64 + 64);
    }
}
