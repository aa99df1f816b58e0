//! Shape regions: sets of canonical structures of one shape class.
//!
//! Join is set union modulo isomorphism (structures are kept in canonical form, so
//! union is plain set union); subsumption is structure embedding, lifted to sets:
//! `R ⊑ R'` iff every structure of `R` embeds into some structure of `R'`, which
//! implies that every heap represented by `R` is represented by `R'` (ART coverage).

use super::class::ShapeClass;
use super::structure::Structure;
use std::collections::BTreeSet;

/// A set of shape graphs of one shape class (the paper's pair `(S, S_i)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeRegion {
    pub class: ShapeClass,
    structs: BTreeSet<Structure>,
}

impl ShapeRegion {
    /// The empty region (no heap) of `class`.
    pub fn empty(class: ShapeClass) -> ShapeRegion {
        ShapeRegion {
            class,
            structs: BTreeSet::new(),
        }
    }

    /// A region of the given structures (each put into canonical form).
    pub fn from_structures(
        class: ShapeClass,
        ss: impl IntoIterator<Item = Structure>,
    ) -> ShapeRegion {
        let mut r = ShapeRegion::empty(class);
        for s in ss {
            r.insert(s);
        }
        r
    }

    /// Adds a structure (canonicalised); returns whether it was new.
    pub fn insert(&mut self, s: Structure) -> bool {
        self.structs.insert(s.canonical())
    }

    /// The structures, in a deterministic order.
    pub fn structures(&self) -> impl Iterator<Item = &Structure> {
        self.structs.iter()
    }

    /// Number of structures.
    pub fn len(&self) -> usize {
        self.structs.len()
    }

    /// True for the empty region (represents no heap: the location is unreachable).
    pub fn is_empty(&self) -> bool {
        self.structs.is_empty()
    }

    /// Union modulo isomorphism (idempotent, commutative, associative).
    pub fn join(&self, other: &ShapeRegion) -> ShapeRegion {
        let mut r = self.clone();
        r.structs.extend(other.structs.iter().cloned());
        r
    }

    /// `self ⊑ other`: every structure of `self` embeds into one of `other`
    /// (reflexive and transitive).
    pub fn subsumed_by(&self, other: &ShapeRegion) -> bool {
        self.structs
            .iter()
            .all(|s| other.structs.contains(s) || other.structs.iter().any(|t| s.embeds_into(t)))
    }

    /// Removes structures that embed into another structure of the region (the region
    /// represents the same heaps afterwards).
    pub fn reduce(&mut self) {
        let v: Vec<Structure> = self.structs.iter().cloned().collect();
        let keep: BTreeSet<Structure> = v
            .iter()
            .enumerate()
            .filter(|(i, s)| {
                !v.iter()
                    .enumerate()
                    .any(|(j, t)| *i != j && s.embeds_into(t) && !(t.embeds_into(s) && j > *i))
            })
            .map(|(_, s)| s.clone())
            .collect();
        self.structs = keep;
    }
}

#[cfg(test)]
mod tests {
    use super::super::families as fam;
    use super::super::formula::PredSym;
    use super::super::structure::Fact;
    use super::*;

    #[test]
    fn join_and_subsumption() {
        let c = fam::simple_class(&["x"], &["next"], vec![fam::reach("x", &["next"])]);
        let list = |n: usize| {
            let mut f = vec![Fact::Unary(PredSym::with("pt", &["x"]), 0)];
            for i in 0..n - 1 {
                f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
            }
            Structure::from_concrete(&c, n, &f).unwrap_or_else(|e| panic!("{e}"))
        };
        let r1 = ShapeRegion::from_structures(c.clone(), [list(1)]);
        let r2 = ShapeRegion::from_structures(c.clone(), [list(2)]);
        let r5 = ShapeRegion::from_structures(c.clone(), [list(5).blur()]);
        assert!(r2.subsumed_by(&r2));
        // a summary node stands for one or more cells
        assert!(r2.subsumed_by(&r5));
        assert!(!r5.subsumed_by(&r2));
        // x with no successor is not represented by x followed by a summary tail
        assert!(!r1.subsumed_by(&r5));
        let j = r1.join(&r5);
        assert_eq!(j.len(), 2);
        assert_eq!(j, r5.join(&r1));
        assert_eq!(j.join(&j), j);
        let mut k = j.join(&ShapeRegion::from_structures(c.clone(), [list(4)]));
        assert_eq!(k.len(), 3);
        k.reduce();
        assert_eq!(k.len(), 2);
        assert!(k.subsumed_by(&j) && j.subsumed_by(&k));
        assert!(ShapeRegion::empty(c).subsumed_by(&r2));
    }
}
