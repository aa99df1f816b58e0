//! Shape regions: sets of canonical structures of one shape class.
//!
//! Join is set union modulo isomorphism (structures are kept in canonical form, so
//! union is plain set union); subsumption is structure embedding, lifted to sets:
//! `R ⊑ R'` iff every structure of `R` embeds into some structure of `R'`, which
//! implies that every heap represented by `R` is represented by `R'` (ART coverage).

use super::class::ShapeClass;
use super::formula::{Kleene, PredSym};
use super::structure::{Structure, Vocab};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A set of shape graphs of one shape class (the paper's pair `(S, S_i)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeRegion {
    /// Shared: every region of an ART holds the same few classes.
    pub class: Arc<ShapeClass>,
    structs: BTreeSet<Structure>,
}

impl ShapeRegion {
    /// The empty region (no heap) of `class`.
    pub fn empty(class: impl Into<Arc<ShapeClass>>) -> ShapeRegion {
        ShapeRegion {
            class: class.into(),
            structs: BTreeSet::new(),
        }
    }

    /// A region of the given structures (each put into canonical form).
    pub fn from_structures(
        class: impl Into<Arc<ShapeClass>>,
        ss: impl IntoIterator<Item = Structure>,
    ) -> ShapeRegion {
        let mut r = ShapeRegion::empty(class);
        for s in ss {
            r.insert(s);
        }
        r
    }

    /// Adds a structure (canonicalised); returns whether the region changed. Under
    /// [`ShapeClass::partial_join`] a structure with the node names of one already in
    /// the region is joined into that one (so each set of names occurs at most once).
    pub fn insert(&mut self, s: Structure) -> bool {
        let s = s.canonical();
        if self.class.partial_join && !self.structs.contains(&s) {
            let hit = self
                .structs
                .iter()
                .find_map(|t| t.partial_join(&s).map(|j| (t.clone(), j)));
            if let Some((t, j)) = hit {
                if j == t {
                    return false;
                }
                self.structs.remove(&t);
                return self.structs.insert(j);
            }
        }
        self.structs.insert(s)
    }

    /// The structures, in a deterministic order.
    pub fn structures(&self) -> impl Iterator<Item = &Structure> {
        self.structs.iter()
    }

    /// True if `s` (in canonical form) is one of the structures.
    pub fn contains(&self, s: &Structure) -> bool {
        self.structs.contains(s)
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
        if self.class.partial_join {
            for s in &other.structs {
                r.insert(s.clone());
            }
        } else {
            r.structs.extend(other.structs.iter().cloned());
        }
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

impl Hash for ShapeRegion {
    /// Hashes the structures only (equal regions have equal structures).
    fn hash<H: Hasher>(&self, h: &mut H) {
        for s in &self.structs {
            s.hash(h);
        }
    }
}

/// One non-zero predicate value of a structure in the serialised form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactRepr {
    pub pred: PredSym,
    pub args: Vec<usize>,
    /// `1` or `1/2`.
    pub val: String,
}

/// The serialised form of a structure: node count and its non-zero facts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StructureRepr {
    pub nodes: usize,
    pub facts: Vec<FactRepr>,
}

/// The serialised form of a region: the class and its structures.
#[derive(Serialize, Deserialize)]
struct RegionRepr {
    class: ShapeClass,
    structures: Vec<StructureRepr>,
}

fn kleene_str(k: Kleene) -> &'static str {
    match k {
        Kleene::True => "1",
        Kleene::Half => "1/2",
        Kleene::False => "0",
    }
}

impl StructureRepr {
    /// The non-zero facts of `s` (every predicate, core and instrumentation).
    pub fn of(s: &Structure) -> StructureRepr {
        let voc = s.vocab();
        let mut facts = Vec::new();
        let mut push = |pred: &PredSym, args: Vec<usize>, k: Kleene| {
            if k != Kleene::False {
                facts.push(FactRepr {
                    pred: pred.clone(),
                    args,
                    val: kleene_str(k).into(),
                });
            }
        };
        for (i, p) in voc.nullary.iter().enumerate() {
            push(p, vec![], s.get0(i));
        }
        for (i, p) in voc.unary.iter().enumerate() {
            for u in 0..s.len() {
                push(p, vec![u], s.get1(i, u));
            }
        }
        for (i, p) in voc.binary.iter().enumerate() {
            for a in 0..s.len() {
                for b in 0..s.len() {
                    push(p, vec![a, b], s.get2(i, a, b));
                }
            }
        }
        StructureRepr {
            nodes: s.len(),
            facts,
        }
    }

    /// Rebuilds the structure over `class` (values not listed are 0).
    pub fn build(&self, class: &ShapeClass) -> Result<Structure, String> {
        let voc = Vocab::of(class);
        let mut s = Structure::empty(class);
        for _ in 0..self.nodes {
            s.add_node(Kleene::False);
        }
        for f in &self.facts {
            let k = match f.val.as_str() {
                "1" => Kleene::True,
                "1/2" => Kleene::Half,
                "0" => Kleene::False,
                v => return Err(format!("bad value {v}")),
            };
            if f.args.iter().any(|a| *a >= self.nodes) {
                return Err(format!("node out of range in {}", f.pred));
            }
            match (voc.lookup(&f.pred), f.args.as_slice()) {
                (Some((0, i)), []) => s.set0(i, k),
                (Some((1, i)), [u]) => s.set1(i, *u, k),
                (Some((2, i)), [a, b]) => s.set2(i, *a, *b, k),
                _ => return Err(format!("unknown predicate or arity: {}", f.pred)),
            }
        }
        Ok(s)
    }
}

impl Serialize for ShapeRegion {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        RegionRepr {
            class: (*self.class).clone(),
            structures: self.structs.iter().map(StructureRepr::of).collect(),
        }
        .serialize(ser)
    }
}

thread_local! {
    /// Classes read recently on this thread: a certificate repeats its few classes in
    /// every region, and sharing them keeps a read certificate as small as the ART.
    static READ_CLASSES: std::cell::RefCell<Vec<Arc<ShapeClass>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The shared copy of `c` if one was read recently (equal classes only).
fn intern(c: ShapeClass) -> Arc<ShapeClass> {
    READ_CLASSES.with(|seen| {
        let mut seen = seen.borrow_mut();
        if let Some(a) = seen.iter().find(|a| ***a == c) {
            return a.clone();
        }
        let a = Arc::new(c);
        if seen.len() >= 16 {
            seen.remove(0);
        }
        seen.push(a.clone());
        a
    })
}

impl<'de> Deserialize<'de> for ShapeRegion {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let r = RegionRepr::deserialize(de)?;
        let class = intern(r.class);
        let mut out = ShapeRegion::empty(class.clone());
        for s in &r.structures {
            let t = s.build(&class).map_err(serde::de::Error::custom)?;
            out.insert(t);
        }
        Ok(out)
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
        // serde round trip
        let json = serde_json::to_string(&k).unwrap_or_default();
        let back: ShapeRegion = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, k);
    }

    #[test]
    fn partial_join_keeps_one_structure_per_set_of_names() {
        let mut c = fam::simple_class(&["x", "y"], &["next"], vec![]);
        let two = |c: &ShapeClass, a: usize, b: usize| {
            let f = [
                Fact::Unary(PredSym::with("pt", &["x"]), 0),
                Fact::Unary(PredSym::with("pt", &["y"]), 1),
                Fact::Binary(PredSym::plain("next"), a, b),
            ];
            Structure::from_concrete(c, 2, &f).unwrap_or_else(|e| panic!("{e}"))
        };
        let sets = ShapeRegion::from_structures(c.clone(), [two(&c, 0, 1), two(&c, 1, 0)]);
        assert_eq!(sets.len(), 2);
        c.partial_join = true;
        let (a, b) = (two(&c, 0, 1), two(&c, 1, 0));
        let mut r = ShapeRegion::from_structures(c.clone(), [a.clone()]);
        assert!(r.insert(b.clone()));
        assert_eq!(r.len(), 1);
        assert!(!r.insert(a.clone()), "already covered by the join");
        for s in [&a, &b] {
            assert!(ShapeRegion::from_structures(c.clone(), [s.clone()]).subsumed_by(&r));
        }
        let ra = ShapeRegion::from_structures(c.clone(), [a]);
        let rb = ShapeRegion::from_structures(c.clone(), [b]);
        assert_eq!(ra.join(&rb), rb.join(&ra));
        assert_eq!(ra.join(&rb), r);
        // the flag survives a serde round trip
        let json = serde_json::to_string(&r).unwrap_or_default();
        let back: ShapeRegion = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert!(back.class.partial_join);
        assert_eq!(back, r);
    }
}
