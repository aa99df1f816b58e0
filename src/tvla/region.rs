//! Shape regions: sets of canonical structures of one shape class.
//!
//! Join is set union modulo isomorphism (structures are kept in canonical form, so
//! union is plain set union); subsumption is structure embedding, lifted to sets:
//! `R ⊑ R'` iff every structure of `R` embeds into some structure of `R'`, which
//! implies that every heap represented by `R` is represented by `R'` (ART coverage).

use super::class::ShapeClass;
use super::counts;
use super::formula::{Kleene, PredSym};
use super::structure::{Structure, Vocab};
use crate::affine::Affine;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A set of shape graphs of one shape class (the paper's pair `(S, S_i)`). Under a
/// class with [`ShapeClass::counters`] each structure carries its counts
/// ([`super::counts`]); otherwise `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeRegion {
    /// Shared: every region of an ART holds the same few classes.
    pub class: Arc<ShapeClass>,
    /// Shared between clones (an ART node's successor usually keeps most of its
    /// regions as they are) and copied on the first write ([`Arc::make_mut`]).
    structs: Arc<BTreeMap<Structure, Option<Affine>>>,
}

impl ShapeRegion {
    /// Replaces the class object by `class`, which must be an equal class (checked in
    /// debug builds), so that regions of one precision share one object and compare
    /// classes by address.
    pub fn share_class(&mut self, class: &Arc<ShapeClass>) {
        debug_assert!(*self.class == **class, "share_class with another class");
        self.class = class.clone();
    }
    /// The empty region (no heap) of `class`.
    pub fn empty(class: impl Into<Arc<ShapeClass>>) -> ShapeRegion {
        ShapeRegion {
            class: class.into(),
            structs: Arc::new(BTreeMap::new()),
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

    /// Adds a structure (canonicalised) with counts that know nothing about the
    /// counters; returns whether the region changed. See [`ShapeRegion::insert_counted`].
    pub fn insert(&mut self, s: Structure) -> bool {
        let c = counts::initial(&self.class, &s);
        self.insert_counted(s, c)
    }

    /// Adds a structure with its counts over its current node order (ignored when the
    /// class has no counters); returns whether the region changed. The structure is
    /// canonicalised (the counts follow its nodes); a structure already there gets the
    /// join of both counts. Under [`ShapeClass::partial_join`] a structure with the
    /// node names of one already in the region is joined into that one (so each set of
    /// names occurs at most once).
    pub fn insert_counted(&mut self, s: Structure, counts: Option<Affine>) -> bool {
        let nv = self.class.counters.len();
        let counting = nv > 0;
        let (s, counts) = if counting {
            let c = s.with_identity_origins().canonical();
            let a = counts.unwrap_or_else(|| Affine::top(nv + s.len()));
            let a = match c.node_permutation() {
                Some(h) => counts::through(&a, nv, &h, c.len()),
                None => Affine::top(nv + c.len()),
            };
            let a = counts::structural(&a, nv, &c);
            (c, Some(a))
        } else {
            (s.canonical(), None)
        };
        if counts
            .as_ref()
            .is_some_and(|a| counts::contradicts_nonempty_nodes(a, nv))
        {
            return false;
        }
        if let Some(old) = self.structs.get(&s) {
            let j = join_counts(old.as_ref(), counts.as_ref());
            if j == *old {
                return false;
            }
            Arc::make_mut(&mut self.structs).insert(s, j);
            return true;
        }
        if self.class.partial_join {
            let hit = self.structs.iter().find_map(|(t, ta)| {
                let j = if counting {
                    t.with_identity_origins().partial_join(&s)?
                } else {
                    t.partial_join(&s)?
                };
                Some((t.clone(), ta.clone(), j))
            });
            if let Some((t, ta, j)) = hit {
                let jc = if counting {
                    // t's nodes by origin, s's by name: both onto j's nodes
                    let ht = j.node_permutation();
                    let hs: Option<Vec<usize>> = (0..s.len())
                        .map(|u| (0..j.len()).find(|&v| j.name(v) == s.name(u)))
                        .collect();
                    match (ht, hs, ta.as_ref(), counts.as_ref()) {
                        (Some(ht), Some(hs), Some(a), Some(b)) => {
                            let a = counts::through(a, nv, &ht, j.len());
                            let b = counts::through(b, nv, &hs, j.len());
                            Some(counts::structural(&a.join(&b), nv, &j))
                        }
                        _ => counts::initial(&self.class, &j),
                    }
                } else {
                    None
                };
                if j == t && jc == ta {
                    return false;
                }
                let structs = Arc::make_mut(&mut self.structs);
                structs.remove(&t);
                structs.insert(j, jc);
                return true;
            }
        }
        Arc::make_mut(&mut self.structs).insert(s, counts).is_none()
    }

    /// The structures, in a deterministic order.
    pub fn structures(&self) -> impl Iterator<Item = &Structure> {
        self.structs.keys()
    }

    /// The structures with their counts (`None` without counters).
    pub fn entries(&self) -> impl Iterator<Item = (&Structure, Option<&Affine>)> {
        self.structs.iter().map(|(s, a)| (s, a.as_ref()))
    }

    /// True if `s` (in canonical form) is one of the structures.
    pub fn contains(&self, s: &Structure) -> bool {
        self.structs.contains_key(s)
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
        if !self.class.partial_join && self.class.counters.is_empty() {
            // canonical structures without counts: plain set union (no copy when
            // `other` adds nothing)
            if other.structs.keys().all(|s| self.structs.contains_key(s)) {
                return r;
            }
            Arc::make_mut(&mut r.structs).extend(other.structs.keys().map(|s| (s.clone(), None)));
            return r;
        }
        for (s, a) in other.structs.iter() {
            r.insert_counted(s.clone(), a.clone());
        }
        r
    }

    /// True if structure `s` with counts `a` is represented by structure `t` with
    /// counts `b`: `s` embeds into `t`, and the counts mapped along the embedding lie
    /// within `b`.
    pub fn entry_within(
        &self,
        s: &Structure,
        a: Option<&Affine>,
        t: &Structure,
        b: Option<&Affine>,
    ) -> bool {
        match b {
            // `embeds_into` tries equality itself, after cheaper tests
            None => s.embeds_into(t),
            Some(b) => {
                let Some(h) = s.embedding(t) else {
                    return false;
                };
                let nv = self.class.counters.len();
                match a {
                    Some(a) => counts::through(a, nv, &h, t.len()).leq(b),
                    None => Affine::top(b.dims()).leq(b),
                }
            }
        }
    }

    /// `self ⊑ other`: every structure of `self` (with its counts) is represented by
    /// one of `other` (reflexive and transitive).
    pub fn subsumed_by(&self, other: &ShapeRegion) -> bool {
        self.structs.iter().all(|(s, a)| other.holds(s, a.as_ref()))
    }

    /// True if structure `s` with counts `a` (of this region's class) is represented
    /// by some structure of `self`.
    pub fn holds(&self, s: &Structure, a: Option<&Affine>) -> bool {
        // an equal structure first (a search of the map), unless the map has one entry
        // (one structure per ART node, the default): the scan below tries it anyway,
        // and the map's ordering compares cost as much as the embedding test
        if self.structs.len() > 1 {
            if let Some(b) = self.structs.get(s) {
                if self.entry_within(s, a, s, b.as_ref()) {
                    return true;
                }
            }
        }
        self.structs
            .iter()
            .any(|(t, b)| self.entry_within(s, a, t, b.as_ref()))
    }

    /// Removes structures that another structure of the region represents (the region
    /// represents the same heaps afterwards).
    pub fn reduce(&mut self) {
        let v: Vec<(Structure, Option<Affine>)> = self
            .structs
            .iter()
            .map(|(s, a)| (s.clone(), a.clone()))
            .collect();
        let within = |i: usize, j: usize| {
            self.entry_within(&v[i].0, v[i].1.as_ref(), &v[j].0, v[j].1.as_ref())
        };
        let keep: BTreeMap<Structure, Option<Affine>> = (0..v.len())
            .filter(|&i| !(0..v.len()).any(|j| i != j && within(i, j) && !(within(j, i) && j > i)))
            .map(|i| v[i].clone())
            .collect();
        self.structs = Arc::new(keep);
    }
}

/// The join of two counts of one structure (`None` stays `None`).
fn join_counts(a: Option<&Affine>, b: Option<&Affine>) -> Option<Affine> {
    match (a, b) {
        (Some(a), Some(b)) if a.dims() == b.dims() => Some(a.join(b)),
        (Some(a), _) => Some(Affine::top(a.dims())),
        (None, _) => None,
    }
}

impl Hash for ShapeRegion {
    /// Hashes the structures only (equal regions have equal structures).
    fn hash<H: Hasher>(&self, h: &mut H) {
        for s in self.structs.keys() {
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
    /// The counts of each structure (counting classes only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    counts: Vec<Affine>,
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

    /// The most nodes [`StructureRepr::build`] accepts. Abstract structures are small
    /// (the bundled benchmarks' certificates have at most 9 nodes); a larger count in a
    /// certificate is damage, and building it (nodes are added one by one, quadratic each)
    /// would not end (fuzzing: `"nodes": 9223372036854775807` hung `check-certificate`).
    pub const MAX_NODES: usize = 256;

    /// Rebuilds the structure over `class` (values not listed are 0); fails on more than
    /// [`StructureRepr::MAX_NODES`] nodes, bad values, out-of-range nodes and unknown
    /// predicates.
    pub fn build(&self, class: &ShapeClass) -> Result<Structure, String> {
        if self.nodes > Self::MAX_NODES {
            return Err(format!(
                "a structure of {} nodes (at most {} are read)",
                self.nodes,
                Self::MAX_NODES
            ));
        }
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
            structures: self.structs.keys().map(StructureRepr::of).collect(),
            counts: self.structs.values().filter_map(|a| a.clone()).collect(),
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
        if !r.counts.is_empty() && r.counts.len() != r.structures.len() {
            return Err(serde::de::Error::custom("one count per structure expected"));
        }
        let nv = class.counters.len();
        if nv == 0 && !r.counts.is_empty() {
            return Err(serde::de::Error::custom(
                "counts in a class without counters",
            ));
        }
        for (i, s) in r.structures.iter().enumerate() {
            let t = s.build(&class).map_err(serde::de::Error::custom)?;
            let counts = r.counts.get(i).cloned();
            if counts.as_ref().is_some_and(|a| a.dims() != nv + t.len()) {
                return Err(serde::de::Error::custom(
                    "counts of a width other than the counters and nodes",
                ));
            }
            out.insert_counted(t, counts);
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

    /// A list of `n` cells from `x` along `next`, as a concrete structure of `c`.
    fn list_of(c: &ShapeClass, n: usize) -> Structure {
        let mut f = vec![Fact::Unary(PredSym::with("pt", &["x"]), 0)];
        for i in 0..n - 1 {
            f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
        }
        Structure::from_concrete(c, n, &f).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn join_and_subsumption() {
        let c = fam::simple_class(&["x"], &["next"], vec![fam::reach("x", &["next"])]);
        let list = |n: usize| list_of(&c, n);
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
    fn clones_share_their_structures_until_one_of_them_changes() {
        let c = fam::simple_class(&["x"], &["next"], vec![fam::reach("x", &["next"])]);
        let list = |n: usize| list_of(&c, n);
        let a = ShapeRegion::from_structures(c.clone(), [list(1)]);
        let mut b = a.clone();
        assert!(
            Arc::ptr_eq(&a.structs, &b.structs),
            "a clone shares the map"
        );
        // an insert that changes nothing does not copy
        assert!(!b.insert(list(1)));
        assert!(Arc::ptr_eq(&a.structs, &b.structs));
        // a real change copies, and the original keeps its value
        assert!(b.insert(list(2)));
        assert!(!Arc::ptr_eq(&a.structs, &b.structs));
        assert_eq!((a.len(), b.len()), (1, 2));
        assert!(a.subsumed_by(&b) && !b.subsumed_by(&a));
        let mut r = b.clone();
        r.reduce();
        assert_eq!(b.len(), 2, "reduce of a clone leaves the original");
        assert_eq!(a.join(&b), b);
        assert_eq!(a.len(), 1);
        // a join that adds nothing keeps sharing
        assert!(Arc::ptr_eq(&b.join(&a).structs, &b.structs));
    }

    #[test]
    fn a_read_structure_has_a_bounded_node_count() {
        // regression (fuzzing): a certificate's node count of 2^63 - 1 was added one by one
        let c = fam::simple_class(&["x"], &["next"], vec![fam::reach("x", &["next"])]);
        let repr = |nodes| StructureRepr {
            nodes,
            facts: Vec::new(),
        };
        assert_eq!(repr(3).build(&c).map(|s| s.len()), Ok(3));
        let max = StructureRepr::MAX_NODES;
        assert_eq!(repr(max).build(&c).map(|s| s.len()), Ok(max));
        for n in [max + 1, i64::MAX as usize, usize::MAX] {
            let e = repr(n).build(&c).err().unwrap_or_default();
            assert!(e.contains("at most 256"), "{n}: {e}");
        }
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
