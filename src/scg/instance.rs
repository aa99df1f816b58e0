//! SCG application m(D): a structure's chosen families instantiated for a tracking
//! definition into a shape class (shared by the library's load-time checks, the
//! lattice and the bounded justification of constraints).

use super::dsl::{FamilyDef, StructureDef};
use super::TrackingDef;
use crate::tvla::class::{PredDef, ShapeClass};
use crate::tvla::formula::{Formula, PredSym};
use std::collections::{BTreeMap, BTreeSet};

/// Binding of roles to real (flattened) struct field names.
pub type RoleBinding = BTreeMap<String, String>;

/// Pointer placeholders of `fam` occurring as predicate parameters in `f`.
pub(super) fn placeholders_in(f: &Formula, fam: &FamilyDef) -> BTreeSet<String> {
    f.preds()
        .into_iter()
        .flat_map(|p| p.params)
        .filter(|x| fam.pointers.contains(x))
        .collect()
}

/// All assignments of `placeholders` to tracked pointers (cartesian product, sorted).
pub(super) fn assignments(
    placeholders: &[String],
    d: &TrackingDef,
) -> Vec<BTreeMap<String, String>> {
    let mut out = vec![BTreeMap::new()];
    for x in placeholders {
        let mut next = Vec::new();
        for a in &out {
            for p in d.tracked() {
                let mut b = a.clone();
                b.insert(x.clone(), p.clone());
                next.push(b);
            }
        }
        out = next;
    }
    out
}

/// The built-in `ptd(a)` ("some tracked pointer points to `a`") as the disjunction
/// of `pt[x](a)` over T, in T's order (the form `tvla::families::segment` builds).
pub(super) fn expand_ptd(f: &Formula, d: &TrackingDef) -> Formula {
    let ptrs: Vec<&str> = d.tracked().iter().map(|x| x.as_str()).collect();
    f.expand_pred("ptd", &|args| {
        crate::tvla::families::pointed(&ptrs, &args[0])
    })
}

/// Applies the SCG (structure `s`, chosen `families`, role `binding`) to `d`:
/// core = `sm`, `pt[x]` (x ∈ T), the bound role fields, `fd[φ]` (φ ∈ Φ);
/// instrumentation = the chosen families' predicates, a predicate with pointer
/// placeholders once per assignment of tracked pointers; abstraction = `pt[x]`
/// (x ∈ Ts), every `fd[φ]`, unary instrumentation predicates whose pointer
/// parameters are all separating (so unary predicates without pointer parameters,
/// like cyclicity and cancellation, always); constraints instantiated likewise.
/// Unknown families are ignored; unbound roles keep their role name.
pub fn instantiate(
    s: &StructureDef,
    families: &BTreeSet<String>,
    binding: &RoleBinding,
    d: &TrackingDef,
) -> ShapeClass {
    let mut c = ShapeClass::default();
    let mut seen: BTreeSet<PredSym> = BTreeSet::new();
    let mut push_core = |c: &mut ShapeClass, sym: PredSym, arity: u8| {
        if seen.insert(sym.clone()) {
            c.core.push(PredDef {
                sym,
                arity,
                def: None,
            });
        }
    };
    push_core(&mut c, PredSym::plain("sm"), 1);
    for x in d.tracked() {
        push_core(&mut c, PredSym::with("pt", &[x]), 1);
    }
    for r in &s.roles {
        let f = binding.get(r).cloned().unwrap_or(r.clone());
        push_core(&mut c, PredSym::plain(f), 2);
    }
    for a in d.assertions() {
        push_core(&mut c, PredSym::with("fd", &[a]), 1);
    }
    for x in d.separating() {
        c.abs.insert(PredSym::with("pt", &[x]));
    }
    for a in d.assertions() {
        c.abs.insert(PredSym::with("fd", &[a]));
    }
    let mut seen_instr: BTreeSet<PredSym> = c.core.iter().map(|p| p.sym.clone()).collect();
    for fam in s
        .families
        .iter()
        .filter(|f| f.always || families.contains(&f.name))
    {
        for t in &fam.preds {
            let ph: Vec<String> = fam
                .pointers
                .iter()
                .filter(|x| t.sym.params.contains(x))
                .cloned()
                .collect();
            for a in assignments(&ph, d) {
                let sub = |n: &str| a.get(n).or_else(|| binding.get(n)).cloned();
                let sym = PredSym {
                    name: t.sym.name.clone(),
                    params: t
                        .sym
                        .params
                        .iter()
                        .map(|p| sub(p).unwrap_or(p.clone()))
                        .collect(),
                };
                if !seen_instr.insert(sym.clone()) {
                    continue;
                }
                if t.arity() == 1 && !t.nonabs && a.values().all(|p| d.separating().contains(p)) {
                    c.abs.insert(sym.clone());
                }
                if t.arity() == 1 && t.nonabs {
                    c.pointed_only.insert(sym.clone());
                }
                c.instr.push(PredDef {
                    sym,
                    arity: t.arity(),
                    def: Some(expand_ptd(&t.def.subst_params(&sub), d)),
                });
            }
        }
        for k in &fam.constraints {
            let ph: Vec<String> = placeholders_in(&k.formula, fam).into_iter().collect();
            for a in assignments(&ph, d) {
                let sub = |n: &str| a.get(n).or_else(|| binding.get(n)).cloned();
                let f = expand_ptd(&k.formula.subst_params(&sub), d);
                if !c.constraints.contains(&f) {
                    c.constraints.push(f);
                }
            }
        }
    }
    c
}
