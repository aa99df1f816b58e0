//! HeapToShape (paper Alg. 2): the canonical abstraction of an explicit heap for a
//! shape class.

use super::ops::parse_assertion_pub as parse_assertion;
use super::{tracked_fields, tracked_vars, ShapeComp, ShapeState};
use crate::cfa::{Program, StructId};
use crate::explicit::{Addr, ExplicitState, Value};
use crate::tvla::{Kleene, PredSym, ShapeClass, ShapeRegion, Structure};
use std::collections::{BTreeMap, BTreeSet};

/// The shape component that abstracts the explicit heap `h` for struct type `strukt`
/// under `class`: one individual per valid cell of type `strukt`, `pt[x]` from the
/// variables, field predicates from the pointer fields, `fd[φ]` evaluated on the data
/// fields, instrumentation predicates from their definitions, then coerce and canonical
/// abstraction (a region with at most one structure; empty only if the heap violates
/// the class's integrity constraints).
///
/// ⊤ values are sound: a ⊤ variable gets `pt[x] = 1/2` on every node and is wild; a ⊤
/// pointer field is 1/2 towards every node and the field is wild; a ⊤ data field makes
/// its `fd` predicates 1/2. Pointers to freed cells, into the middle of a cell, or to
/// cells of another type are outside values (NULL in the structure, variable or field
/// wild). Cells the explicit heap does not hold (it keeps only cells reachable from
/// variables) are outside the universe, reachable only through wild values.
pub fn heap_to_shape(
    prog: &Program,
    h: &ExplicitState,
    strukt: StructId,
    class: &ShapeClass,
) -> ShapeComp {
    let cells = h.all_cells_of_type(strukt);
    let index: BTreeMap<Addr, usize> = cells
        .iter()
        .enumerate()
        .map(|(i, (a, _))| (*a, i))
        .collect();
    let n = cells.len();
    let mut s = Structure::empty(class);
    for _ in 0..n {
        s.add_node(Kleene::False);
    }
    let voc = s.vocab().clone();
    let mut wild_vars = BTreeSet::new();
    let mut wild_fields = BTreeSet::new();
    // where a pointer value lands: Some(node) in the universe, None = NULL, Err = outside
    let land = |v: Value| -> Result<Option<usize>, ()> {
        match v {
            Value::Int(0) => Ok(None),
            Value::Ptr { obj, off: 0 } => index.get(&obj).map(|i| Some(*i)).ok_or(()),
            _ => Err(()),
        }
    };
    for x in tracked_vars(class) {
        let Some(px) = voc.pt(&x) else { continue };
        let var = prog.vars.iter().position(|v| v.name == x);
        let val = var.map_or(Value::Top, |v| h.var(v));
        match val {
            Value::Top => {
                for u in 0..n {
                    s.set1(px, u, Kleene::Half);
                }
                wild_vars.insert(x.clone());
            }
            v => match land(v) {
                Ok(Some(u)) => s.set1(px, u, Kleene::True),
                Ok(None) => {}
                Err(()) => {
                    wild_vars.insert(x.clone());
                }
            },
        }
    }
    let sd = prog.structs.get(strukt);
    for f in tracked_fields(class) {
        let Some(pf) = voc.field(&f) else { continue };
        let Some(fi) = sd.and_then(|d| d.field_index(&f)) else {
            // not a field of the struct: unknown
            for a in 0..n {
                for b in 0..n {
                    s.set2(pf, a, b, Kleene::Half);
                }
            }
            wild_fields.insert(f.clone());
            continue;
        };
        // an unknown field value (uninitialised after malloc) is per cell when the
        // class has `un[f]`: no f-edge, `un[f]` = 1 (a read gives an unknown value)
        let un = match voc.lookup(&PredSym::with("un", &[f.as_str()])) {
            Some((1, i)) => Some(i),
            _ => None,
        };
        for (a, (_, cell)) in cells.iter().enumerate() {
            let v = cell.fields.get(fi).copied().unwrap_or(Value::Top);
            match v {
                Value::Top if un.is_some() => {
                    if let Some(i) = un {
                        s.set1(i, a, Kleene::True);
                    }
                }
                Value::Top => {
                    for b in 0..n {
                        s.set2(pf, a, b, Kleene::Half);
                    }
                    wild_fields.insert(f.clone());
                }
                v => match land(v) {
                    Ok(Some(b)) => s.set2(pf, a, b, Kleene::True),
                    Ok(None) => {}
                    Err(()) => {
                        wild_fields.insert(f.clone());
                    }
                },
            }
        }
    }
    for p in &class.core {
        if p.sym.name != "fd" || p.sym.params.len() != 1 {
            continue;
        }
        let Some((1, pi)) = voc.lookup(&p.sym) else {
            continue;
        };
        let parsed = parse_assertion(&p.sym.params[0]);
        for (u, (_, cell)) in cells.iter().enumerate() {
            let k = match &parsed {
                Some((f, set)) => {
                    let v = sd
                        .and_then(|d| d.field_index(f))
                        .and_then(|i| cell.fields.get(i).copied())
                        .unwrap_or(Value::Top);
                    match v {
                        Value::Int(k) => super::ops::holds(k as i128, *set),
                        Value::Ptr { .. } => super::ops::holds_nonzero(*set),
                        Value::Top => Kleene::Half,
                    }
                }
                None => Kleene::Half,
            };
            s.set1(pi, u, k);
        }
    }
    let s = s.recompute_instr(None);
    let mut region = ShapeRegion::empty(class.clone());
    if let Some(t) = crate::tvla::coerce::coerce(s) {
        region.insert(t.blur());
    } else {
        tracing::warn!("heap_to_shape: the explicit heap violates the class constraints");
    }
    ShapeComp {
        region,
        wild_vars,
        wild_fields,
        uninit: BTreeSet::new(),
        // the explicit heap's cells only: no claim about the others
        complete: false,
    }
}

/// [`heap_to_shape`] for every struct type of `classes` (HeapToShape(H, Ψ(l))).
pub fn heap_to_shape_state(
    prog: &Program,
    h: &ExplicitState,
    classes: &BTreeMap<StructId, &ShapeClass>,
) -> ShapeState {
    ShapeState {
        comps: classes
            .iter()
            .map(|(k, c)| (*k, heap_to_shape(prog, h, *k, c)))
            .collect(),
        loaded: BTreeMap::new(),
    }
}
