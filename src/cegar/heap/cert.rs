//! The body of a [`HeapCpa`] certificate: compact, and trusted for nothing semantic.
//!
//! A certificate file is a [`crate::cert::Header`] followed by a [`HeapBody`]:
//! - a **class table** of [`ClassRecipe`]s (SCG, tracking definition, flags, counters),
//!   never shape classes: the checker regenerates every class from the SCG library it
//!   loads itself (whose hash the header names), so integrity constraints, definitions
//!   and abstraction predicates cannot be forged;
//! - a **structure table**: each distinct three-valued structure once, as its node
//!   count and a dense string of values over the regenerated class's vocabulary;
//! - tables of explicit heaps and shape states, shared between the nodes that have
//!   them;
//! - the precision (classes by table index) and the nodes (tree links, coverings, the
//!   predicate cube and indices into the tables).
//!
//! [`decode`] validates everything against the program and the library before it
//! builds a single state (indices in range, names of existing variables, fields and
//! struct types, counts of the right width rebuilt through [`Affine::add_eq`],
//! structures canonicalised on insertion) and answers a reason, never a panic.
//! [`encode`] is its inverse for the classes a run generated; `verify`'s SAFE gate
//! checks the decoded form, so a written certificate is exactly what was checked.

use super::{HeapCpa, HeapPrec, HeapState, HEAP_CPA_NAME, HEAP_SPLIT_CPA_NAME};
use crate::affine::Affine;
use crate::cert::{CertNode, Certificate};
use crate::cfa::{FieldRef, Node, Program, Step, StructId, VarId};
use crate::explicit::CellTy;
use crate::explicit::{ExplicitPrec, ExplicitState};
use crate::predabs::{Cube, Precision};
use crate::scg::{Lattice, Scg, TrackingDef};
use crate::shape::{class_for, ShapeComp, ShapePrec, ShapeState};
use crate::tvla::formula::Kleene;
use crate::tvla::structure::Structure;
use crate::tvla::{ShapeClass, ShapeRegion};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// How a shape class is generated: the SCG applied to the tracking definition for one
/// struct type ([`class_for`]), then the region flags. The only way the heap
/// abstraction makes classes, so a certificate can name each class by its recipe.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassRecipe {
    /// The struct type the class describes.
    pub strukt: StructId,
    /// The shape-class generator.
    pub scg: Scg,
    /// The tracking definition D.
    pub d: TrackingDef,
    /// [`ShapeClass::partial_join`].
    pub partial_join: bool,
    /// Whether field equalities `f == k` of Φ that a range of Φ covers (`f >= lo`,
    /// `f <= hi`, lo ≤ k ≤ hi) are abstraction predicates, so that summaries are split
    /// by the values of `f`. Without, only the range and the other assertions name
    /// nodes; the equalities stay as non-abstraction values (a cell whose value is
    /// tested is told apart, a summary keeps its cells' common value or 1/2).
    #[serde(default = "yes")]
    pub value_names: bool,
    /// The per-cell `un[f]` predicates ([`crate::shape::with_uninit_preds`]).
    pub uninit: bool,
    /// [`ShapeClass::counters`].
    pub counters: Vec<String>,
}

impl ClassRecipe {
    /// The class this recipe generates with `lattice`'s library for `prog`.
    pub fn generate(&self, prog: &Program, lattice: &Lattice) -> ShapeClass {
        let mut c = class_for(prog, self.strukt, lattice, &self.scg, &self.d);
        c.partial_join = self.partial_join;
        if !self.value_names {
            let covered: Vec<String> = self
                .d
                .assertions()
                .iter()
                .filter(|a| crate::shape::covered_by_range(a, self.d.assertions()))
                .cloned()
                .collect();
            for a in covered {
                c.abs
                    .remove(&crate::tvla::PredSym::with("fd", &[a.as_str()]));
            }
        }
        if self.uninit {
            c = crate::shape::with_uninit_preds(c);
        }
        c.counters = self.counters.clone();
        c
    }

    /// Checks that the recipe names only what exists: a struct type of `prog`, an SCG
    /// of the library binding pointer fields of that struct, field assertions of the
    /// form `field rel constant` on its fields, and integer variables as counters.
    pub fn validate(&self, prog: &Program, lattice: &Lattice) -> Result<(), String> {
        let Some(def) = prog.structs.get(self.strukt) else {
            return Err(format!(
                "class of struct type {}, which does not exist",
                self.strukt
            ));
        };
        lattice.validate(&self.scg)?;
        let field = |f: &str| def.fields.iter().find(|x| x.name == f);
        for f in self.scg.binding().into_iter().flat_map(|b| b.values()) {
            if !field(f).is_some_and(|x| x.ty.is_ptr()) {
                return Err(format!(
                    "SCG binds `{f}`, which is no pointer field of struct {}",
                    def.name
                ));
            }
        }
        for a in self.d.assertions() {
            let ok = crate::shape::assertion_field(a).is_some_and(|f| field(&f).is_some());
            if !ok {
                return Err(format!("malformed field assertion `{a}`"));
            }
        }
        let mut seen = BTreeSet::new();
        for c in &self.counters {
            if !seen.insert(c) || !prog.vars.iter().any(|v| &v.name == c && v.ty.is_int()) {
                return Err(format!("counter `{c}` is no (distinct) integer variable"));
            }
        }
        Ok(())
    }
}

/// Serde's default of [`ClassRecipe::value_names`] (certificates written before the flag).
fn yes() -> bool {
    true
}

/// Counts ([`crate::tvla::counts`]) as stored: the width is implied by the class's
/// counters and the structure's nodes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CountsRepr {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    bottom: bool,
    rows: Vec<Vec<i128>>,
}

/// A structure of the table: its class (table index), node count and values.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StructRepr {
    class: usize,
    nodes: usize,
    /// One character per value (`0`, `1`, `2` for 1/2): the nullary predicates, then
    /// each unary predicate over the nodes, then each binary predicate over the node
    /// pairs, in the order of the regenerated class's vocabulary.
    values: String,
}

/// One struct type's component of a shape state.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CompRepr {
    class: usize,
    /// Structure table indices, each with its counts (counting classes only).
    structs: Vec<(usize, Option<CountsRepr>)>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    wild_vars: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    wild_fields: BTreeSet<String>,
    /// [`ShapeComp::complete`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    complete: bool,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    uninit: BTreeSet<(String, String)>,
}

/// A shape state of the table.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShapeRepr {
    comps: BTreeMap<StructId, CompRepr>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    loaded: BTreeMap<VarId, (VarId, FieldRef)>,
}

/// The precision, classes by table index.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PrecRepr {
    pred: Precision,
    explicit: ExplicitPrec,
    shape_global: BTreeMap<StructId, usize>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    shape_at: BTreeMap<Node, BTreeMap<StructId, usize>>,
    merge_at: BTreeSet<Node>,
}

/// One ART node (its id is its position).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeRepr {
    loc: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    stack: Vec<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    step: Option<Step>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    covered_by: Option<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    covered_also: Vec<usize>,
    pred: Cube,
    explicit: usize,
    shape: usize,
}

/// The body of a heap certificate file (see the module documentation).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeapBody {
    classes: Vec<ClassRecipe>,
    structures: Vec<StructRepr>,
    explicit: Vec<ExplicitState>,
    shapes: Vec<ShapeRepr>,
    precision: PrecRepr,
    nodes: Vec<NodeRepr>,
}

impl HeapBody {
    /// Number of ART nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    /// True if the body has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

fn kleene_char(k: Kleene) -> char {
    match k {
        Kleene::False => '0',
        Kleene::True => '1',
        Kleene::Half => '2',
    }
}

/// The dense value string of `s` (see [`StructRepr::values`]).
fn encode_values(s: &Structure) -> String {
    let voc = s.vocab();
    let n = s.len();
    let mut out =
        String::with_capacity(voc.nullary.len() + voc.unary.len() * n + voc.binary.len() * n * n);
    for i in 0..voc.nullary.len() {
        out.push(kleene_char(s.get0(i)));
    }
    for i in 0..voc.unary.len() {
        for u in 0..n {
            out.push(kleene_char(s.get1(i, u)));
        }
    }
    for i in 0..voc.binary.len() {
        for a in 0..n {
            for b in 0..n {
                out.push(kleene_char(s.get2(i, a, b)));
            }
        }
    }
    out
}

/// Rebuilds a structure of `class` from [`encode_values`]'s string.
fn decode_values(class: &ShapeClass, nodes: usize, values: &str) -> Result<Structure, String> {
    let mut s = Structure::empty(class);
    let voc = s.vocab().clone();
    let expected = nodes
        .checked_mul(nodes)
        .and_then(|n2| n2.checked_mul(voc.binary.len()))
        .and_then(|b| b.checked_add(voc.unary.len().checked_mul(nodes)?))
        .and_then(|x| x.checked_add(voc.nullary.len()));
    if expected != Some(values.len()) {
        return Err(format!(
            "a structure of {nodes} nodes needs {} values, it has {}",
            expected.map_or("too many".into(), |e| e.to_string()),
            values.len()
        ));
    }
    let mut vals = values.bytes().map(|c| match c {
        b'0' => Ok(Kleene::False),
        b'1' => Ok(Kleene::True),
        b'2' => Ok(Kleene::Half),
        _ => Err(format!("bad structure value `{}`", c as char)),
    });
    let mut next = || vals.next().unwrap_or(Ok(Kleene::False));
    for _ in 0..nodes {
        s.add_node(Kleene::False);
    }
    for i in 0..voc.nullary.len() {
        s.set0(i, next()?);
    }
    for i in 0..voc.unary.len() {
        for u in 0..nodes {
            s.set1(i, u, next()?);
        }
    }
    for i in 0..voc.binary.len() {
        for a in 0..nodes {
            for b in 0..nodes {
                s.set2(i, a, b, next()?);
            }
        }
    }
    Ok(s)
}

/// Interns values into a table, by equality.
struct Table<'a, T: std::hash::Hash + Eq> {
    index: FxHashMap<&'a T, usize>,
}

impl<'a, T: std::hash::Hash + Eq> Table<'a, T> {
    fn new() -> Self {
        Table {
            index: FxHashMap::default(),
        }
    }
    /// The index of `t`, and whether it is new.
    fn intern(&mut self, t: &'a T) -> (usize, bool) {
        let n = self.index.len();
        match self.index.entry(t) {
            std::collections::hash_map::Entry::Occupied(e) => (*e.get(), false),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(n);
                (n, true)
            }
        }
    }
}

/// Names shape classes by the recipes (of a run) that generate them: the index of a
/// class in the table of recipes used so far.
struct ClassNamer<'a> {
    recipes: &'a [ClassRecipe],
    generated: Vec<ShapeClass>,
    /// Table index -> recipe index.
    used: Vec<usize>,
    /// Classes already named, by address (regions share their class).
    seen: Vec<(*const ShapeClass, usize)>,
}

impl<'a> ClassNamer<'a> {
    fn new(prog: &Program, lattice: &Lattice, recipes: &'a [ClassRecipe]) -> Self {
        ClassNamer {
            recipes,
            generated: recipes.iter().map(|r| r.generate(prog, lattice)).collect(),
            used: Vec::new(),
            seen: Vec::new(),
        }
    }

    /// The table index of `c` (a class of struct type `strukt`); an error when no
    /// recipe generates it.
    fn id(&mut self, c: &ShapeClass, strukt: StructId) -> Result<usize, String> {
        let p: *const ShapeClass = c;
        if let Some(&(_, i)) = self.seen.iter().find(|(q, _)| *q == p) {
            return Ok(i);
        }
        let r = (0..self.recipes.len())
            .find(|&i| self.recipes[i].strukt == strukt && self.generated[i] == *c)
            .ok_or_else(|| {
                format!(
                    "a shape class of struct type {strukt} is generated by no recipe of the run"
                )
            })?;
        let i = match self.used.iter().position(|&u| u == r) {
            Some(i) => i,
            None => {
                self.used.push(r);
                self.used.len() - 1
            }
        };
        self.seen.push((p, i));
        Ok(i)
    }

    /// The recipes of the table, in table order.
    fn table(&self) -> Vec<ClassRecipe> {
        self.used.iter().map(|&r| self.recipes[r].clone()).collect()
    }
}

/// Checks that `recipes` generate every shape class `cert` uses (its precision's and
/// its states'), so that [`encode`] can write it and `check-certificate` regenerate it:
/// what `verify` checks when no certificate file is asked for.
pub fn check_recipes(
    prog: &Program,
    lattice: &Lattice,
    recipes: &[ClassRecipe],
    cert: &HeapCertificate,
) -> Result<(), String> {
    let mut names = ClassNamer::new(prog, lattice, recipes);
    let sp = &cert.precision.shape;
    for (s, c) in sp.global.iter().chain(sp.at.values().flatten()) {
        names.id(c, *s)?;
    }
    for n in &cert.nodes {
        for (s, c) in &n.state.shape.comps {
            names.id(&c.region.class, *s)?;
        }
    }
    Ok(())
}

/// Writes a certificate as a body, naming every shape class by the recipe (of
/// `recipes`) that generates it with `lattice`. Fails when a class has no recipe (a
/// bug of the caller: the certificate could not be re-checked).
pub fn encode(
    prog: &Program,
    lattice: &Lattice,
    recipes: &[ClassRecipe],
    cert: &HeapCertificate,
) -> Result<HeapBody, String> {
    let mut names = ClassNamer::new(prog, lattice, recipes);
    let mut class_id = |c: &ShapeClass, s: StructId| names.id(c, s);
    let sp = &cert.precision.shape;
    let mut shape_global = BTreeMap::new();
    for (s, c) in &sp.global {
        shape_global.insert(*s, class_id(c, *s)?);
    }
    let mut shape_at = BTreeMap::new();
    for (l, m) in &sp.at {
        let mut o = BTreeMap::new();
        for (s, c) in m {
            o.insert(*s, class_id(c, *s)?);
        }
        shape_at.insert(*l, o);
    }
    let mut structures = Vec::new();
    let mut struct_table: Table<Structure> = Table::new();
    let mut explicit = Vec::new();
    let mut explicit_table: Table<ExplicitState> = Table::new();
    let mut shapes = Vec::new();
    let mut shape_table: Table<ShapeState> = Table::new();
    let mut nodes = Vec::with_capacity(cert.nodes.len());
    for n in &cert.nodes {
        let (e, new) = explicit_table.intern(&n.state.explicit);
        if new {
            explicit.push(n.state.explicit.clone());
        }
        let (sh, new) = shape_table.intern(&n.state.shape);
        if new {
            let mut comps = BTreeMap::new();
            for (s, c) in &n.state.shape.comps {
                let class = class_id(&c.region.class, *s)?;
                let mut structs = Vec::with_capacity(c.region.len());
                for (st, counts) in c.region.entries() {
                    let (i, new) = struct_table.intern(st);
                    if new {
                        structures.push(StructRepr {
                            class,
                            nodes: st.len(),
                            values: encode_values(st),
                        });
                    }
                    let counts = counts.map(|a| CountsRepr {
                        bottom: a.is_bottom(),
                        rows: a.rows().to_vec(),
                    });
                    structs.push((i, counts));
                }
                comps.insert(
                    *s,
                    CompRepr {
                        class,
                        structs,
                        wild_vars: c.wild_vars.clone(),
                        wild_fields: c.wild_fields.clone(),
                        complete: c.complete,
                        uninit: c.uninit.clone(),
                    },
                );
            }
            shapes.push(ShapeRepr {
                comps,
                loaded: n.state.shape.loaded.clone(),
            });
        }
        nodes.push(NodeRepr {
            loc: n.loc,
            stack: n.stack.clone(),
            parent: n.parent,
            step: n.step,
            covered_by: n.covered_by,
            covered_also: n.covered_also.clone(),
            pred: n.state.pred.clone(),
            explicit: e,
            shape: sh,
        });
    }
    Ok(HeapBody {
        classes: names.table(),
        structures,
        explicit,
        shapes,
        precision: PrecRepr {
            pred: cert.precision.pred.clone(),
            explicit: cert.precision.explicit.clone(),
            shape_global,
            shape_at,
            merge_at: cert.precision.merge_at.clone(),
        },
        nodes,
    })
}

/// Counts rebuilt through [`Affine::add_eq`] (so they are in canonical form) over
/// `dims` dimensions.
fn decode_counts(c: &CountsRepr, dims: usize) -> Result<Affine, String> {
    if c.bottom {
        return Ok(Affine::bottom(dims));
    }
    let mut a = Affine::top(dims);
    for r in &c.rows {
        let Some((constant, coeffs)) = r.split_last() else {
            return Err("an empty row of counts".into());
        };
        if coeffs.len() != dims {
            return Err(format!(
                "a row of counts has {} coefficients, the structure needs {dims}",
                coeffs.len()
            ));
        }
        a.add_eq(coeffs, *constant);
    }
    Ok(a)
}

/// Builds the certificate a body describes for `prog`, every class regenerated from
/// its recipe with `lattice`, after validating every index and name (see the module
/// documentation). `cpa` and `file` are taken from the checked header.
pub fn decode(
    prog: &Program,
    lattice: &Lattice,
    cpa: &str,
    body: &HeapBody,
) -> Result<HeapCertificate, String> {
    let ns = prog.structs.len();
    let nlocs = prog.graph.node_count();
    let mut classes: Vec<Arc<ShapeClass>> = Vec::with_capacity(body.classes.len());
    for (i, r) in body.classes.iter().enumerate() {
        r.validate(prog, lattice)
            .map_err(|e| format!("class {i}: {e}"))?;
        classes.push(Arc::new(r.generate(prog, lattice)));
    }
    let class_of = |i: usize, s: StructId, what: &str| -> Result<&Arc<ShapeClass>, String> {
        match (classes.get(i), body.classes.get(i)) {
            (Some(c), Some(r)) if r.strukt == s => Ok(c),
            (Some(_), _) => Err(format!("{what}: class {i} is of another struct type")),
            _ => Err(format!("{what}: class {i} does not exist")),
        }
    };
    // precision (its predicate and explicit parts are validated with the states by
    // `check_heap_certificate_until`)
    let p = &body.precision;
    if p.merge_at.iter().any(|l| l.index() >= nlocs) {
        return Err("precision names no location".into());
    }
    let mut shape = ShapePrec::new();
    for (s, c) in &p.shape_global {
        if *s >= ns {
            return Err("shape precision names no struct type".into());
        }
        shape.set_global(*s, (**class_of(*c, *s, "shape precision")?).clone());
    }
    for (l, m) in &p.shape_at {
        if l.index() >= nlocs {
            return Err("shape precision names no location".into());
        }
        for (s, c) in m {
            if *s >= ns {
                return Err("shape precision names no struct type".into());
            }
            shape.set_at(*l, *s, (**class_of(*c, *s, "shape precision")?).clone());
        }
    }
    let precision = HeapPrec {
        pred: p.pred.clone(),
        explicit: p.explicit.clone(),
        shape,
        merge_at: p.merge_at.clone(),
    };
    // structures, then shape states
    let mut structures = Vec::with_capacity(body.structures.len());
    for (i, s) in body.structures.iter().enumerate() {
        let c = classes
            .get(s.class)
            .ok_or_else(|| format!("structure {i}: class {} does not exist", s.class))?;
        structures
            .push(decode_values(c, s.nodes, &s.values).map_err(|e| format!("structure {i}: {e}"))?);
    }
    let mut shapes = Vec::with_capacity(body.shapes.len());
    for (i, sh) in body.shapes.iter().enumerate() {
        let what = format!("shape state {i}");
        let mut comps = BTreeMap::new();
        for (s, c) in &sh.comps {
            if *s >= ns {
                return Err(format!("{what}: component of no struct type"));
            }
            let class = class_of(c.class, *s, &what)?;
            let nv = class.counters.len();
            let mut region = ShapeRegion::empty(class.clone());
            for (k, counts) in &c.structs {
                let st = structures
                    .get(*k)
                    .ok_or_else(|| format!("{what}: structure {k} does not exist"))?;
                if body.structures[*k].class != c.class {
                    return Err(format!("{what}: structure {k} is of another class"));
                }
                let counts = match (counts, nv) {
                    (None, _) => None,
                    (Some(_), 0) => {
                        return Err(format!("{what}: counts in a class without counters"))
                    }
                    (Some(a), _) => {
                        Some(decode_counts(a, nv + st.len()).map_err(|e| format!("{what}: {e}"))?)
                    }
                };
                region.insert_counted(st.clone(), counts);
            }
            comps.insert(
                *s,
                ShapeComp {
                    region,
                    wild_vars: c.wild_vars.clone(),
                    wild_fields: c.wild_fields.clone(),
                    uninit: c.uninit.clone(),
                    complete: c.complete,
                },
            );
        }
        shapes.push(ShapeState {
            comps,
            loaded: sh.loaded.clone(),
        });
    }
    // nodes (links, steps, cubes and explicit heaps are validated by
    // `check_heap_certificate_until`)
    let mut nodes = Vec::with_capacity(body.nodes.len());
    for (id, n) in body.nodes.iter().enumerate() {
        let bad = |m: &str| Err(format!("node {id}: {m}"));
        if n.loc >= nlocs {
            return bad("location does not exist");
        }
        let (Some(explicit), Some(shape)) = (body.explicit.get(n.explicit), shapes.get(n.shape))
        else {
            return bad("explicit or shape state does not exist");
        };
        let l = Node::new(n.loc);
        nodes.push(CertNode {
            id,
            loc: n.loc,
            src: format!(
                "{}:{}",
                prog.functions
                    .get(prog.graph[l].func)
                    .map_or("?", |f| f.name.as_str()),
                prog.graph[l].src
            ),
            stack: n.stack.clone(),
            state: HeapState {
                pred: n.pred.clone(),
                explicit: explicit.clone(),
                shape: shape.clone(),
            },
            parent: n.parent,
            step: n.step,
            covered_by: n.covered_by,
            covered_also: n.covered_also.clone(),
        });
    }
    Ok(Certificate {
        format: crate::cert::FORMAT.into(),
        file: prog.file.display().to_string(),
        cpa: cpa.into(),
        precision,
        nodes,
    })
}

/// The certificate format of the combined abstraction.
pub type HeapCertificate = Certificate<HeapState, HeapPrec>;

/// Checks that an explicit heap read from a certificate is well formed for `prog`
/// (one value per variable; every cell typed like a struct, scalar or opaque object of
/// the program, with the right number of fields).
pub fn validate_explicit(prog: &Program, s: &ExplicitState) -> Result<(), String> {
    if s.vars.len() != prog.vars.len() {
        return Err("explicit heap: wrong number of variables".into());
    }
    for (a, c) in &s.heap {
        if *a == 0 {
            return Err("explicit heap: a cell at address 0".into());
        }
        let n = match &c.ty {
            CellTy::Struct(st) => match prog.structs.get(*st) {
                Some(d) => d.fields.len(),
                None => return Err(format!("explicit heap: cell {a} of an unknown struct")),
            },
            CellTy::Scalar(_) => 1,
            CellTy::Opaque => 0,
        };
        if c.fields.len() != n {
            return Err(format!(
                "explicit heap: cell {a} has a wrong number of fields"
            ));
        }
    }
    Ok(())
}

/// Validates the precision and states of a certificate of [`HeapCpa`], then runs
/// [`crate::cert::check`] with a fresh [`HeapCpa`].
pub fn check_heap_certificate(prog: &Program, cert: &HeapCertificate) -> Result<(), String> {
    if cert.format != crate::cert::FORMAT {
        return Err(format!("unknown certificate format `{}`", cert.format));
    }
    let split = cert.cpa == HEAP_SPLIT_CPA_NAME;
    if cert.cpa != HEAP_CPA_NAME && !split {
        return Err(format!(
            "certificate of CPA `{}`, expected `{HEAP_CPA_NAME}` or `{HEAP_SPLIT_CPA_NAME}`",
            cert.cpa
        ));
    }
    check_heap_certificate_until(prog, cert, split, None, None).map_err(|e| e.to_string())
}

/// [`check_heap_certificate`] with the CPA variant given (`split`: one shape structure
/// per state) and [`crate::cert::check_until`]'s limits.
pub fn check_heap_certificate_until(
    prog: &Program,
    cert: &HeapCertificate,
    split: bool,
    deadline: Option<std::time::Instant>,
    memory_limit_mb: Option<u64>,
) -> Result<(), crate::cert::CertError> {
    validate_heap_certificate(prog, cert).map_err(crate::cert::CertError::Malformed)?;
    crate::cert::check_until(
        &HeapCpa::new(prog, 10_000, split),
        prog,
        cert,
        deadline,
        memory_limit_mb,
    )
}

/// The well-formedness checks of [`check_heap_certificate`] (indices and names).
fn validate_heap_certificate(prog: &Program, cert: &HeapCertificate) -> Result<(), String> {
    cert.precision.pred.validate(prog)?;
    let ep = &cert.precision.explicit;
    if ep
        .everywhere
        .iter()
        .chain(ep.at.values().flatten())
        .any(|&x| x >= prog.vars.len())
    {
        return Err("explicit precision names no variable".into());
    }
    if ep.at.keys().any(|&l| l >= prog.graph.node_count()) {
        return Err("explicit precision names no location".into());
    }
    let n = cert.precision.pred.preds.len() as u32;
    for node in &cert.nodes {
        if !node.state.pred.is_normal() || node.state.pred.0.iter().any(|(i, _)| *i >= n) {
            return Err(format!("node {}: malformed predicate state", node.id));
        }
        validate_explicit(prog, &node.state.explicit)
            .map_err(|e| format!("node {}: {e}", node.id))?;
        if node.stack.iter().any(|&e| e >= prog.graph.edge_count()) {
            return Err(format!("node {}: call stack names no edge", node.id));
        }
        if let Some(s) = node.step {
            let (Step::Edge(e) | Step::Enter(e) | Step::Leave(e)) = s;
            if e.index() >= prog.graph.edge_count() {
                return Err(format!("node {}: step names no edge", node.id));
            }
        }
    }
    validate_shape(prog, cert)
}

/// Checks the shape parts of a certificate name existing struct types, variables and
/// locations (the shape operations index the program by them).
fn validate_shape(prog: &Program, cert: &HeapCertificate) -> Result<(), String> {
    let ns = prog.structs.len();
    let sp = &cert.precision.shape;
    if sp.global.keys().any(|&s| s >= ns)
        || sp
            .at
            .iter()
            .any(|(l, m)| l.index() >= prog.graph.node_count() || m.keys().any(|&s| s >= ns))
    {
        return Err("shape precision names no struct type or location".into());
    }
    for node in &cert.nodes {
        let sh = &node.state.shape;
        if sh.comps.keys().any(|&s| s >= ns) {
            return Err(format!(
                "node {}: shape component of no struct type",
                node.id
            ));
        }
        for (x, (p, f)) in &sh.loaded {
            let bad_field = prog
                .structs
                .get(f.strukt)
                .is_none_or(|d| f.field >= d.fields.len());
            if *x >= prog.vars.len() || *p >= prog.vars.len() || bad_field {
                return Err(format!("node {}: malformed load provenance", node.id));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_value_names_covered_equalities_are_values_not_names() {
        use crate::explicit::testutil::{fig1b, heap, pv};
        use crate::explicit::Value;
        use crate::tvla::PredSym;
        let (prog, _) = fig1b();
        let lattice = Lattice::load(None).unwrap_or_else(|e| panic!("{e:?}"));
        let binding: crate::scg::RoleBinding = [("next", "succ"), ("prev", "pred")]
            .iter()
            .map(|(r, f)| (r.to_string(), f.to_string()))
            .collect();
        let vars = crate::shape::pointer_vars(&prog, 0);
        let phi = [
            "data == 0",
            "data == 1",
            "data >= 0",
            "data <= 1",
            "data == 2",
        ];
        let recipe = |value_names| ClassRecipe {
            strukt: 0,
            scg: Scg::new("dll", ["cancel"], binding.clone()),
            d: TrackingDef::new(vars.clone(), vars.clone(), phi.map(String::from)),
            partial_join: true,
            value_names,
            uninit: false,
            counters: Vec::new(),
        };
        let (named, lean) = (
            recipe(true).generate(&prog, &lattice),
            recipe(false).generate(&prog, &lattice),
        );
        let fd = |a: &str| PredSym::with("fd", &[a]);
        for a in phi {
            assert!(named.abs.contains(&fd(a)), "{a}");
            assert!(lean.core.iter().any(|p| p.sym == fd(a)), "{a}");
        }
        // `data == 2` lies outside the range: it still names nodes
        for (a, names) in [
            ("data == 0", false),
            ("data == 1", false),
            ("data >= 0", true),
            ("data == 2", true),
        ] {
            assert_eq!(lean.abs.contains(&fd(a)), names, "{a}");
        }
        // a list whose values interleave: 0 1 0 1 0 from x0
        let int = Value::Int;
        let h = heap(
            &prog,
            &[(0, pv(1))],
            &[
                (1, vec![int(0), pv(2), pv(0)]),
                (2, vec![int(1), pv(3), pv(1)]),
                (3, vec![int(0), pv(4), pv(2)]),
                (4, vec![int(1), pv(5), pv(3)]),
                (5, vec![int(0), pv(0), pv(4)]),
            ],
        );
        let shape = |c: &ShapeClass| {
            let comp = crate::shape::heap_to_shape(&prog, &h, 0, c);
            let s = comp.region.structures().next().cloned();
            s.unwrap_or_else(|| panic!("no structure"))
        };
        // named: the head, a summary of the 1s and one of the other 0s
        assert_eq!(shape(&named).len(), 3, "{}", shape(&named));
        // lean: the head and one summary, where `data == 0` is 1/2 and the range holds
        let s = shape(&lean);
        assert_eq!(s.len(), 2, "{s}");
        let sm = (0..2)
            .find(|&u| s.is_summary(u))
            .unwrap_or_else(|| panic!("{s}"));
        assert_eq!(s.value(&fd("data == 0"), &[sm]), Kleene::Half, "{s}");
        assert_eq!(s.value(&fd("data >= 0"), &[sm]), Kleene::True, "{s}");
        assert_eq!(s.value(&fd("data <= 1"), &[sm]), Kleene::True, "{s}");
    }

    #[test]
    fn counts_of_the_wrong_width_are_refused_not_a_panic() {
        let c = CountsRepr {
            bottom: false,
            rows: vec![vec![1, 2, 3]],
        };
        let e = decode_counts(&c, 5).expect_err("refused");
        assert_eq!(
            e,
            "a row of counts has 2 coefficients, the structure needs 5"
        );
        let empty = CountsRepr {
            bottom: false,
            rows: vec![vec![]],
        };
        let e = decode_counts(&empty, 0).expect_err("refused");
        assert_eq!(e, "an empty row of counts");
        let a = decode_counts(&c, 2).unwrap_or_else(|e| panic!("{e}"));
        assert!(a.implies(&[1, 2], 3));
    }

    #[test]
    fn structure_values_round_trip_and_bad_lengths_are_refused() {
        use crate::tvla::families as fam;
        use crate::tvla::formula::PredSym;
        use crate::tvla::structure::Fact;
        let c = fam::simple_class(&["x"], &["next"], vec![fam::reach("x", &["next"])]);
        let f = vec![
            Fact::Unary(PredSym::with("pt", &["x"]), 0),
            Fact::Binary(PredSym::plain("next"), 0, 1),
        ];
        let s = Structure::from_concrete(&c, 3, &f)
            .unwrap_or_else(|e| panic!("{e}"))
            .blur();
        let v = encode_values(&s);
        let back = decode_values(&c, s.len(), &v).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.canonical(), s.canonical());
        let e = decode_values(&c, s.len() + 1, &v).expect_err("refused");
        assert!(e.contains("values, it has"), "{e}");
        let e = decode_values(&c, usize::MAX, &v).expect_err("refused");
        assert!(e.contains("needs too many values"), "{e}");
        let mut bad = v.clone();
        bad.replace_range(0..1, "7");
        let e = decode_values(&c, s.len(), &bad).expect_err("refused");
        assert_eq!(e, "bad structure value `7`");
    }
}
