//! Algorithm 3 (`Refine`) of the heap abstraction: predicates from the interpolants,
//! explicit tracking of newly mentioned pointer groups, and for shape-tracked types the
//! tracking definition (step 1), FineTune of the SCG with a path-replay oracle (step 2),
//! the merge, partial-join and counter refinements and the last resort.

use super::cert;
use super::cpa::{field_constants, known_facts};
use super::{
    own_ptr_fields, shape_prec_for, struct_name, HeapAbstraction, HeapPrec, HeapState, PtrGroup,
    TypeMode,
};
use crate::cegar::predicates::refine_predicates;
use crate::cegar::{RefineInput, Refinement};
use crate::cfa::{FieldRef, Node, Program, Step, StructId, VarId};
use crate::cpa::Cpa;
use crate::scg::{fine_tune, Lattice, Scg, TrackingDef};
use crate::shape::{Known, ShapeCpa, ShapePrec, ShapeState};
use crate::smt::atoms::{Operand, Rel};
use crate::tvla::ShapeClass;
use std::collections::{BTreeMap, BTreeSet};

/// Most abstract states [`HeapAbstraction::product_rules_out`] keeps at one step.
const PRODUCT_REPLAY_STATES: usize = 64;

/// An error path prepared for replay in the shape domain alone
/// ([`HeapAbstraction::path_replay`]).
struct PathReplay {
    shape: ShapeCpa,
    steps: Vec<(Step, Node)>,
    /// Per step: what the explicit domain and the predicate cubes along the path know
    /// (of the integer stored into a field, of the integers an assume compares).
    stored: Vec<Known>,
    /// Replay only the steps from this position on, starting in this state (converted
    /// into the candidate classes); from the initial state at the root when None.
    start: Option<(usize, ShapeState)>,
}

impl PathReplay {
    /// True if the path's shape post is empty with `class` for type `s` (the other
    /// types keep their classes in `base`): the class rules the path out.
    fn rules_out(&self, prog: &Program, base: &ShapePrec, s: StructId, class: ShapeClass) -> bool {
        let mut p = base.clone();
        p.set_global(s, class);
        for m in p.at.values_mut() {
            m.remove(&s);
        }
        self.rules_out_with(prog, &p)
    }

    /// True if the path's shape post is empty under precision `p`.
    fn rules_out_with(&self, prog: &Program, p: &ShapePrec) -> bool {
        let (from, init) = match &self.start {
            // the CPA's initial state: with leak tracking where the program has leak
            // checks (a replay from a state without it never rules out a leak check)
            None => (0, self.shape.initial(prog, p)),
            Some((i, st)) => {
                let at = if *i == 0 {
                    prog.entry
                } else {
                    self.steps.get(i - 1).map_or(prog.entry, |&(_, to)| to)
                };
                (*i, st.converted(p, at))
            }
        };
        let stored_at = |i: usize| {
            self.stored
                .get(from + i)
                .unwrap_or(&crate::shape::NOTHING_KNOWN)
        };
        let steps = self.steps.get(from..).unwrap_or(&[]);
        self.shape
            .path_post(prog, &init, steps, p, &stored_at)
            .is_none()
    }
}

/// [`HeapAbstraction::place_scg`]'s search: the per-function SCGs (`local` updated in
/// the path's functions) under which the path is ruled out, or None.
#[allow(clippy::too_many_arguments)]
fn localise(
    abs: &HeapAbstraction,
    prog: &Program,
    lat: &Lattice,
    s: StructId,
    m: &Scg,
    m2: &Scg,
    d: &TrackingDef,
    local: &BTreeMap<crate::cfa::FuncId, Scg>,
    input: &RefineInput<'_, HeapState>,
) -> Option<BTreeMap<crate::cfa::FuncId, Scg>> {
    let mut funcs: Vec<crate::cfa::FuncId> = Vec::new();
    for l in input.locs {
        let f = prog.graph.node_weight(*l)?.func;
        if !funcs.contains(&f) {
            funcs.push(f);
        }
    }
    // a change of structure or binding (which fields are tracked) is the type's
    if m.structure() != m2.structure() || m.binding() != m2.binding() {
        return None;
    }
    // only families instantiated per pointer (`family f for x`, e.g. reachability from
    // each variable) are placed per function: they multiply the structures of every
    // walk; the others (cancellation, sharing, acyclicity) cost little and are needed
    // wherever the structure is updated, so they go everywhere at once
    let st = lat.library().structure(m2.structure()?)?;
    let per_pointer = |f: &String| {
        st.families
            .iter()
            .find(|x| &x.name == f)
            .is_some_and(|x| !x.pointers.is_empty())
    };
    if !m2
        .families()
        .filter(|f| !m.families().any(|g| g == *f))
        .all(per_pointer)
    {
        return None;
    }
    let mut cand = local.clone();
    for &f in &funcs {
        let cur = local.get(&f).unwrap_or(m);
        cand.insert(f, lat.join(cur, m2)?);
    }
    let base = &abs.prec.shape;
    let recipe = abs.recipe(s, m, d);
    let replay = abs.path_replay(prog, input);
    let rules_out = |c: &BTreeMap<crate::cfa::FuncId, Scg>| {
        replay.rules_out_with(prog, &shape_prec_for(prog, lat, base, &recipe, c))
    };
    if !rules_out(&cand) {
        return None;
    }
    // the error's function first: checks at the end of a path are often walks whose
    // states multiply with every predicate, while the updates before them need them
    for &f in funcs.iter().rev() {
        let was = cand.clone();
        match local.get(&f) {
            Some(c) => cand.insert(f, c.clone()),
            None => cand.remove(&f),
        };
        if cand == was {
            continue;
        }
        if !rules_out(&cand) {
            cand = was;
        }
    }
    cand.retain(|_, c| c != m);
    Some(cand)
}

impl HeapAbstraction {
    /// Places FineTune's result `m2` (finer than the type's SCG `m`) for type `s`: in
    /// the functions of the error path, each keeps its SCG if the path is still ruled
    /// out without `m2` there, else gets its SCG joined with `m2` (functions are tried
    /// from the path's end, each check a replay of the path). Only under `--local-scg`
    /// and for an `m2` of `m`'s structure and binding that adds only families
    /// instantiated per pointer; otherwise, or when the joins do not rule the path
    /// out, `m2` becomes the type's SCG everywhere (finer per-function SCGs are joined
    /// with it). Returns where `m2` went.
    fn place_scg(
        &mut self,
        prog: &Program,
        s: StructId,
        m: Scg,
        m2: Scg,
        d: TrackingDef,
        input: &RefineInput<'_, HeapState>,
    ) -> String {
        let local = self.fn_scg.get(&s).cloned().unwrap_or_default();
        let localised = match &self.lattice {
            Some(lat) if self.options.local_scg => {
                localise(self, prog, lat, s, &m, &m2, &d, &local, input)
            }
            _ => None,
        };
        let name = struct_name(prog, s);
        match localised {
            Some(cand) => {
                let funcs: Vec<&str> = cand
                    .iter()
                    .filter(|(f, c)| local.get(f) != Some(c))
                    .map(|(f, _)| prog.functions[*f].name.as_str())
                    .collect();
                let msg = format!("struct {name}: SCG {m2} in {}", funcs.join(", "));
                self.fn_scg.insert(s, cand);
                self.set_shape(prog, s, m, d);
                msg
            }
            None => {
                let lat = self.lattice.as_ref();
                let joined: BTreeMap<crate::cfa::FuncId, Scg> = local
                    .iter()
                    .filter_map(|(f, c)| lat.and_then(|l| l.join(c, &m2)).map(|j| (*f, j)))
                    .filter(|(_, j)| *j != m2)
                    .collect();
                self.fn_scg.insert(s, joined);
                self.set_shape(prog, s, m2.clone(), d);
                format!("struct {name}: SCG {m} → {m2}")
            }
        }
    }

    /// The "count" refinement: for each shape-tracked type of `groups`, the counters
    /// (see `shape::numeric`) made of the signed `int` variables the interpolants
    /// mention or that are tracked explicitly, closed under the copies the path makes
    /// between them (`x = y ± k`, parameters), when with them the type's current class
    /// rules the path out. They leave the explicit abstraction (their values
    /// would make every iteration a new state). Returns what was added, or None.
    fn refine_counters(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
        groups: &BTreeSet<PtrGroup>,
    ) -> Option<Vec<String>> {
        use crate::shape::numeric::counter_type;
        let mut ints: BTreeSet<VarId> = self.explicit_ints.clone();
        for item in &input.interpolants.items {
            for a in &item.atoms {
                ints.extend(a.vars.iter().copied());
            }
        }
        ints.retain(|&x| counter_type(prog, x) && !self.finite_ints.contains(&x));
        if ints.is_empty() {
            return None;
        }
        // copies along the path
        let copy_of = |e: &crate::cfa::Expr| -> Option<VarId> {
            use crate::cfa::{BinOp, Expr};
            match e {
                Expr::Var(y) => Some(*y),
                Expr::Binary(BinOp::Add | BinOp::Sub, a, b) => match (&**a, &**b) {
                    (Expr::Var(y), Expr::Int(_)) | (Expr::Int(_), Expr::Var(y)) => Some(*y),
                    _ => None,
                },
                _ => None,
            }
        };
        let mut pairs: Vec<(VarId, VarId)> = Vec::new();
        for st in input.path {
            match (st, &prog.step_edge(*st).op) {
                (Step::Edge(_), crate::cfa::Op::Assign { dst, src }) => {
                    if let Some(y) = copy_of(src) {
                        pairs.push((*dst, y));
                    }
                }
                (Step::Enter(_), crate::cfa::Op::Call { callee, args, .. }) => {
                    if let Some(f) = prog.functions.get(*callee) {
                        for (p, a) in f.params.iter().zip(args) {
                            if let Some(y) = copy_of(a) {
                                pairs.push((*p, y));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let counter = |x: VarId| counter_type(prog, x) && !self.finite_ints.contains(&x);
        pairs.retain(|(x, y)| counter(*x) && counter(*y));
        loop {
            let before = ints.len();
            for &(x, y) in &pairs {
                if ints.contains(&x) || ints.contains(&y) {
                    ints.insert(x);
                    ints.insert(y);
                }
            }
            if ints.len() == before {
                break;
            }
        }
        let names: Vec<String> = ints.iter().map(|&x| prog.vars[x].name.clone()).collect();
        let candidates = self.shape_types_in(groups);
        let replay = self.path_replay(prog, input);
        let mut msgs = Vec::new();
        for (s, m, d) in candidates {
            let mut counters: Vec<String> = self.counters.get(&s).cloned().unwrap_or_default();
            for n in &names {
                if !counters.contains(n) {
                    counters.push(n.clone());
                }
            }
            if Some(&counters) == self.counters.get(&s) {
                continue;
            }
            let Some(class) = self.prec.shape.global.get(&s) else {
                continue;
            };
            let mut class = (**class).clone();
            class.counters = counters.clone();
            tracing::debug!(
                "count refinement: struct {} with counters {}?",
                struct_name(prog, s),
                counters.join(", ")
            );
            let old = self.counters.insert(s, counters.clone());
            let msg = format!(
                "struct {}: count cells with {}",
                struct_name(prog, s),
                counters.join(", ")
            );
            if replay.rules_out(prog, &self.prec.shape, s, class) {
                msgs.push(msg);
                self.set_shape(prog, s, m, d);
                continue;
            }
            // counting may need a finer class (e.g. reachability from the walking
            // pointer, which separates the counted cells from the others)
            if let Some(m2) = self.fine_tune_type(prog, s, &m, &d, input, None) {
                msgs.push(msg);
                msgs.push(self.place_scg(prog, s, m, m2, d, input));
                continue;
            }
            match old {
                Some(o) => self.counters.insert(s, o),
                None => self.counters.remove(&s),
            };
        }
        if msgs.is_empty() {
            return None;
        }
        for &x in &ints {
            if self.explicit_ints.remove(&x) {
                self.prec.explicit.remove_everywhere(x);
            }
        }
        Some(msgs)
    }

    /// Algorithm 3, step 1 for a shape-tracked struct type: the pointers of the type the
    /// atoms mention become separating, integer field assertions on its cells (`data ==
    /// 0`, `key < 5`) join Φ. Returns the refined D (None: no change) and, where the
    /// atoms compare a field with consecutive constants (`data == 0`, `data == 1`), a
    /// coarser D with their range instead (`data >= 0`, `data <= 1`).
    fn refine_td(
        &self,
        prog: &Program,
        s: StructId,
        d: &TrackingDef,
        input: &RefineInput<'_, HeapState>,
    ) -> Option<(TrackingDef, Option<TrackingDef>)> {
        let mut d2 = d.clone();
        let mut changed = false;
        let mut equalities: BTreeMap<FieldRef, BTreeSet<i128>> = BTreeMap::new();
        for item in &input.interpolants.items {
            for a in &item.atoms {
                for &x in a.pointers.iter().chain(&a.dereferenced) {
                    if PtrGroup::of(prog, x) == Some(PtrGroup::Struct(s)) {
                        changed |= d2.separate(prog.vars[x].name.clone());
                    }
                }
                // `p->f - q->f <= 0`, `up->data + -1 * 0 >= 0`, `p->f <= p->next->f`: an
                // integer field of `s` read in any other form than `p->f rel k` is told
                // apart by the constants the program stores into it (as `x <= p->f`
                // below); comparisons of two cells' values (sortedness) then follow from
                // their value names
                let plain = a
                    .field_assertion
                    .as_ref()
                    .filter(|fa| matches!(fa.rhs, Operand::Int(_)))
                    .map(|fa| fa.field);
                for &f in &a.fields {
                    if f.strukt == s && prog.field(f).ty.is_int() && Some(f) != plain {
                        let name = &prog.field(f).name;
                        for k in field_constants(prog, f, &[]) {
                            changed |= d2.add_assertion(format!("{name} == {k}"));
                        }
                    }
                }
                if let Some(fa) = &a.field_assertion {
                    let fty = &prog.field(fa.field).ty;
                    if fa.field.strukt != s || !fty.is_int() {
                        continue;
                    }
                    match fa.rhs {
                        Operand::Int(k) if matches!(fa.rel, Rel::Eq | Rel::Ne) => {
                            let text = format!("{} == {k}", prog.field(fa.field).name);
                            if !d.assertions().contains(&text) {
                                equalities.entry(fa.field).or_default().insert(k);
                            }
                        }
                        Operand::Int(_) => changed |= d2.add_assertion(fa.field_text(prog)),
                        // `x <= p->f`: the field is told apart by the constants the
                        // program stores into it (`f == k` for each); the product then
                        // compares a loaded value with what the explicit domain knows
                        // of `x` (see `HeapCpa::post`)
                        Operand::Var(_) | Operand::Field { .. } => {
                            let name = &prog.field(fa.field).name;
                            let also = match fa.rhs {
                                Operand::Var(x) => vec![x],
                                _ => Vec::new(),
                            };
                            for k in field_constants(prog, fa.field, &also) {
                                changed |= d2.add_assertion(format!("{name} == {k}"));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        // equalities `f == k` with consecutive constants: the coarser D has only their
        // range (`f >= lo`, `f <= hi`), which is what `p->f != 0 && p->f != 1` needs
        let mut coarse = d2.clone();
        for (f, ks) in &equalities {
            let name = &prog.field(*f).name;
            for k in ks {
                changed |= d2.add_assertion(format!("{name} == {k}"));
            }
            let ks: Vec<i128> = ks.iter().copied().collect();
            match consecutive_range(&ks) {
                Some((lo, hi)) => {
                    coarse.add_assertion(format!("{name} >= {lo}"));
                    coarse.add_assertion(format!("{name} <= {hi}"));
                }
                None => {
                    for k in ks {
                        coarse.add_assertion(format!("{name} == {k}"));
                    }
                }
            }
        }
        changed |= add_range_assertions(&mut d2);
        add_range_assertions(&mut coarse);
        if !changed {
            return None;
        }
        // (equal to `d2` when no field's constants made a range)
        let coarse = (coarse != *d && coarse != d2).then_some(coarse);
        Some((d2, coarse))
    }

    /// What FineTune's oracle needs to replay the error path in the shape domain: the
    /// steps with their target locations and the integers the explicit domain knows
    /// are stored into fields along the path (the product's strengthening, replayed).
    fn path_replay(&self, prog: &Program, input: &RefineInput<'_, HeapState>) -> PathReplay {
        let steps: Vec<(Step, Node)> = input
            .path
            .iter()
            .copied()
            .zip(input.locs.iter().skip(1).copied())
            .collect();
        let mut stored: Vec<Known> = Vec::with_capacity(steps.len());
        let mut ex = Some(self.cpa.explicit.initial(prog, &self.prec.explicit));
        let pprec = &self.prec.pred;
        let mut cube = Some(self.cpa.pred.initial(prog, pprec));
        for &(step, to) in &steps {
            stored.push(ex.as_ref().map_or(Known::NONE, |e| {
                known_facts(prog, e, cube.as_ref().map(|c| (c, pprec)), step)
            }));
            ex = ex.and_then(|e| {
                let mut next = self
                    .cpa
                    .explicit
                    .post(prog, &e, step, to, &self.prec.explicit);
                (next.len() == 1).then(|| next.remove(0))
            });
            cube = cube.and_then(|c| {
                let mut next = self.cpa.pred.post(prog, &c, step, to, pprec);
                (next.len() == 1).then(|| next.remove(0))
            });
        }
        PathReplay {
            shape: ShapeCpa::new(prog).joined(),
            steps,
            stored,
            start: None,
        }
    }

    /// True unless the error path replays in the whole product (predicates, explicit
    /// heaps, shapes) under the current precision: then a refinement that only added
    /// predicates would rebuild the ART into the same error. The replay keeps every
    /// abstract successor (as the ART does); past [`PRODUCT_REPLAY_STATES`] states at
    /// one step, or past the deadline, it gives up and answers true (the predicates
    /// are trusted, as without the check).
    fn product_rules_out(&self, prog: &Program, input: &RefineInput<'_, HeapState>) -> bool {
        self.product_rules_out_with(prog, input, &self.prec)
    }

    /// [`Self::product_rules_out`] under the precision `prec`.
    fn product_rules_out_with(
        &self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
        prec: &HeapPrec,
    ) -> bool {
        let cpa = &self.cpa;
        let deadline = self.deadline.get();
        let mut cur = vec![cpa.adjust(cpa.initial(prog, prec), prog.entry, prec)];
        for (&step, &to) in input.path.iter().zip(input.locs.iter().skip(1)) {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return true;
            }
            let mut next: Vec<HeapState> = Vec::new();
            for s in &cur {
                for t in cpa.post(prog, s, step, to, prec) {
                    let t = cpa.adjust(t, to, prec);
                    if !next.contains(&t) {
                        next.push(t);
                    }
                }
            }
            if next.is_empty() || next.len() > PRODUCT_REPLAY_STATES {
                return true;
            }
            cur = next;
        }
        false
    }

    /// Before blaming the merges of an error path that the replay from the root rules
    /// out: FineTune the counting shape types the interpolants mention with an oracle
    /// that replays the path only from the last merged node's state. A replay from the
    /// root keeps exact counts along the unrolled loops (a list of 3 cells built,
    /// counted and walked), so it rules out every such path whatever the class;
    /// from the merged state it asks whether the *class* loses what the rest of the
    /// path needs (a walk that does not tell visited from unvisited cells without
    /// `reach[p]`). A class found this way is taken (an "scg" refinement, merges stay);
    /// None leaves the merges to be blamed. Types without counters are left to the
    /// merge refinement: there a class found this way was often the dearer fix
    /// (benchmarks/dll_remove: `reach` over a dll, 48 s, against 19 s with merging off
    /// at five loop heads).
    fn refine_class_past_merge(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
        groups: &BTreeSet<PtrGroup>,
    ) -> Option<Refinement> {
        if self.scg_mode == crate::scg::ScgMode::Maximal {
            return None;
        }
        let (&pos, state) = input.merged.last().zip(input.merged_states.last())?;
        let mut added = Vec::new();
        let at = input.locs.get(pos).map(|&l| prog.graph[l].src);
        for (s, m, d) in self.shape_types_in(groups) {
            if self.counters.get(&s).is_none_or(|c| c.is_empty()) {
                continue;
            }
            let from = Some((pos, state.shape.clone()));
            if let Some(m2) = self.fine_tune_type(prog, s, &m, &d, input, from) {
                let msg = self.place_scg(prog, s, m, m2, d, input);
                added.push(match at {
                    Some(at) => format!("{msg} (replayed from the merge at {at})"),
                    None => msg,
                });
            }
        }
        (!added.is_empty()).then(|| Refinement {
            kind: "scg",
            pivot: Some(0),
            added,
            ..Default::default()
        })
    }

    /// FineTune (§3.3) for struct type `s` along the path: the coarsest enabled SCG
    /// finer than `m` whose shape post along the path is empty; when none is found the
    /// enabled set is widened to every SCG not coarser than `m` and the search repeated.
    /// With `from` (a position into the path's nodes and a shape state there, see
    /// [`PathReplay::start`]) the oracle replays the path only from there, and the
    /// enabled set is not widened.
    pub(super) fn fine_tune_type(
        &mut self,
        prog: &Program,
        s: StructId,
        m: &Scg,
        d: &TrackingDef,
        input: &RefineInput<'_, HeapState>,
        from: Option<(usize, ShapeState)>,
    ) -> Option<Scg> {
        let lat = self.lattice.as_ref()?;
        self.fine_tune_calls += 1;
        let base = self.prec.shape.clone();
        let widen = from.is_none();
        let replay = PathReplay {
            start: from,
            ..self.path_replay(prog, input)
        };
        let mut calls = 0usize;
        let deadline = self.deadline.get();
        let recipe = self.recipe(s, m, d);
        let mut oracle = |cand: &Scg| -> bool {
            // past the deadline nothing is asked: "does not rule out" is the answer
            // that never makes FineTune pick a class (the run ends at the next build)
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return false;
            }
            calls += 1;
            tracing::trace!(target: "shapemc::shape::path", "FineTune candidate {cand}");
            let c = cert::ClassRecipe {
                scg: cand.clone(),
                ..recipe.clone()
            }
            .generate(prog, lat);
            replay.rules_out(prog, &base, s, c)
        };
        let name = struct_name(prog, s);
        let mut enabled = self.enabled.to_vec(&name);
        if self.enabled.get(&name).is_none() {
            enabled = lat.universe(&own_ptr_fields(prog, s));
        }
        let mut m2 = fine_tune(m, &enabled, lat, d, &mut oracle);
        // (a search from a merged state is only a first try: it does not widen E)
        if &m2 == m && widen {
            let universe = lat.universe(&own_ptr_fields(prog, s));
            let added = self.enabled.extend_not_coarser(&name, lat, m, &universe);
            if added > 0 {
                let enabled = self.enabled.to_vec(&name);
                m2 = fine_tune(m, &enabled, lat, d, &mut oracle);
            }
        }
        self.fine_tune_oracle_calls += calls;
        (&m2 != m).then_some(m2)
    }

    /// Algorithm 3 (`Refine`) on an infeasible error path, in this order, the first
    /// that learns something wins: merges the path depends on ([`Self::refine_merges`]);
    /// new pointer groups on explicit heaps, predicates, and for the shape-tracked types
    /// the interpolants mention their tracking definition or FineTune
    /// ([`Self::refine_shape_types`]); integers tracked explicitly; the partial join
    /// switched off ([`Self::refine_joins`]); counters ([`Self::refine_counters`]); an
    /// early abstraction ([`Self::abstract_early`]); and as the last resort the stuck
    /// shape types back to explicit heaps ([`Self::back_to_explicit`]).
    pub(super) fn refine_path(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
    ) -> Refinement {
        // An error path through merged nodes that does not replay step by step under
        // the current precision was reached only thanks to a merge: merging stops at
        // those locations (the coarsest fix; the states along the path are exact).
        if let Some(r) = self.join_regions_if_decomposed() {
            return r;
        }
        let groups = self.mentioned_groups(prog, input);
        if !input.merged.is_empty() && self.product_rules_out(prog, input) {
            if let Some(r) = self.refine_merges(prog, input, &groups) {
                return r;
            }
        }
        // Pointers seen for the first time are tracked on explicit heaps (Algorithm 3,
        // step 2, first case); under `--scg maximal` recursive types are shape-tracked
        // from the start, so this only concerns the others.
        let mut new_groups = Vec::new();
        for &g in &groups {
            let known = match g {
                PtrGroup::Struct(s) => self.types.contains_key(&s),
                PtrGroup::Other => self.explicit_groups.contains(&g),
            };
            if !known && self.track_group(prog, g) {
                new_groups.push(g);
            }
        }
        let mut r = self.refine_with_predicates(prog, input);
        let (td, scg) = self.refine_shape_types(prog, input, &groups, &mut r);
        if !new_groups.is_empty() || td || scg {
            for g in &new_groups {
                r.added.push(format!("track {} explicitly", g.name(prog)));
            }
            r.kind = if scg && new_groups.is_empty() && !td {
                "scg"
            } else {
                "td"
            };
            return restart(r);
        }
        if r.pivot.is_some() {
            return r;
        }
        // Fallback: integer variables whose values predicate abstraction cannot see
        // (loaded from the heap) are tracked explicitly.
        let ints = self.mentioned_ints(prog, input);
        if !ints.is_empty() {
            for &x in &ints {
                self.explicit_ints.insert(x);
                self.prec.explicit.everywhere.insert(x);
                r.added
                    .push(format!("track {} explicitly", prog.vars[x].name));
            }
            r.pivot = Some(0);
            return r;
        }
        if let Some(msgs) = self.refine_joins(prog, input, &groups) {
            r.added.extend(msgs);
            r.kind = "scg";
            return restart(r);
        }
        // Counting: the path may need the relation between integer counters and the
        // number of cells (`len == length of the list`); counters that rule it out on
        // the path replay join the type's class.
        if let Some(msgs) = self.refine_counters(prog, input, &groups) {
            r.added.extend(msgs);
            r.kind = "td";
            return restart(r);
        }
        // Last resort (not in the paper): shape types the path mentions whose SCG and
        // tracking definition cannot be refined go back to explicit heaps, without
        // threshold (finds bugs on small heaps; a proof then needs the heaps to be
        // bounded, otherwise the run ends at a limit with UNKNOWN).
        let stuck: Vec<StructId> = self
            .types
            .iter()
            .filter(|(s, m)| {
                matches!(m, TypeMode::Shape { .. }) && groups.contains(&PtrGroup::Struct(**s))
            })
            .map(|(s, _)| *s)
            .collect();
        let early = self.abstract_early(prog, &groups);
        if !early.is_empty() {
            r.added.extend(early);
            r.kind = "td";
            return restart(r);
        }
        let renamed = self.restart_with_value_names(prog, &stuck);
        if !renamed.is_empty() {
            r.added.extend(renamed);
            r.kind = "scg";
            return restart(r);
        }
        if !stuck.is_empty() && !self.options.no_explicit_fallback {
            r.added.extend(self.back_to_explicit(prog, input, stuck));
            r.kind = "td";
            r = restart(r);
        }
        r
    }

    /// The merge refinement of a path the product does not replay step by step: a
    /// class found past the last merge ([`Self::refine_class_past_merge`]), else no
    /// more merging at the path's merged locations. None: no merged location left.
    fn refine_merges(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
        groups: &BTreeSet<PtrGroup>,
    ) -> Option<Refinement> {
        if let Some(r) = self.refine_class_past_merge(prog, input, groups) {
            return Some(r);
        }
        let mut r = Refinement {
            kind: "merge",
            ..Default::default()
        };
        for &i in input.merged {
            if let Some(&l) = input.locs.get(i) {
                if self.prec.merge_at.remove(&l) {
                    r.added.push(format!(
                        "no merge at {} (loc {})",
                        prog.graph[l].src,
                        l.index()
                    ));
                    r.pivot = Some(r.pivot.map_or(i, |p: usize| p.min(i)));
                }
            }
        }
        r.pivot.is_some().then_some(r)
    }

    /// Integer facts (and pointer facts of untracked groups) of the interpolants become
    /// predicates.
    fn refine_with_predicates(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
    ) -> Refinement {
        let heap_tracked = |x: VarId| match PtrGroup::of(prog, x) {
            Some(PtrGroup::Struct(s)) => self.types.contains_key(&s),
            Some(g) => self.explicit_groups.contains(&g),
            None => false,
        };
        // (Measured: keeping predicates over heap-tracked pointers makes the gdsl proofs
        // faster, they split the ART along NULL tests the shape domain would also make;
        // so the filter is off unless `--no-heap-pointer-predicates` is given.)
        let filter = self.options.filter_heap_pointer_predicates;
        let keep = |e: &crate::cfa::Expr| {
            if !filter {
                return true;
            }
            let mut vs = Vec::new();
            e.vars(&mut vs);
            !vs.into_iter().any(heap_tracked)
        };
        refine_predicates(
            prog,
            &mut self.prec.pred,
            self.scope,
            self.max_atoms,
            input,
            &keep,
        )
    }

    /// Shape-tracked types of `groups`: refine D (step 1), else FineTune the SCG (step
    /// 2), unless the new predicates of `r` already rule the path out in the product.
    /// Adds what changed to `r`; returns whether a D and whether an SCG changed.
    fn refine_shape_types(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
        groups: &BTreeSet<PtrGroup>,
        r: &mut Refinement,
    ) -> (bool, bool) {
        let mut preds_rule_out: Option<bool> = None;
        let mut td = false;
        let mut scg = false;
        let shape_types = self.shape_types_in(groups);
        for (s, m, d) in shape_types {
            let name = struct_name(prog, s);
            if let Some((fine, coarse)) = self.refine_td(prog, s, &d, input) {
                let d2 = match coarse {
                    Some(c) => self.coarsest_td(prog, s, &m, c, fine, input),
                    None => fine,
                };
                r.added.push(format!("struct {name}: D = {d2:?}"));
                self.set_shape(prog, s, m, d2);
                td = true;
                continue;
            }
            if self.scg_mode == crate::scg::ScgMode::Maximal {
                continue;
            }
            // New predicates that still let the product reach the end of the path would
            // cost an ART rebuild that ends at the same error: FineTune now as well.
            if r.pivot.is_some()
                && *preds_rule_out.get_or_insert_with(|| self.product_rules_out(prog, input))
            {
                continue;
            }
            if let Some(m2) = self.fine_tune_type(prog, s, &m, &d, input, None) {
                let msg = self.place_scg(prog, s, m, m2, d, input);
                r.added.push(msg);
                scg = true;
            } else if let Some(msg) = self.refine_value_names(prog, s, &m, &d, input) {
                r.added.push(msg);
                scg = true;
            }
        }
        (td, scg)
    }

    /// Of two refined tracking definitions for type `s`, `coarse` (value ranges where
    /// `fine` has the equalities in them): `coarse` unless the product with it does not
    /// rule the path out (the explicit domain may tell the values of a range apart,
    /// [`ShapeState::split_field_value`]) while the shape domain with `fine` does, each
    /// with the current SCG and a replay of the path. Value equalities
    /// split summaries by value, which multiplies the structures of lists whose values
    /// interleave (measured: benchmarks/real/q_tailq_insert).
    fn coarsest_td(
        &self,
        prog: &Program,
        s: StructId,
        m: &Scg,
        coarse: TrackingDef,
        fine: TrackingDef,
        input: &RefineInput<'_, HeapState>,
    ) -> TrackingDef {
        let coarse_rules_out = self.lattice.as_ref().is_some_and(|lat| {
            let local = self.fn_scg.get(&s).cloned().unwrap_or_default();
            let recipe = self.recipe(s, m, &coarse);
            let prec = HeapPrec {
                shape: shape_prec_for(prog, lat, &self.prec.shape, &recipe, &local),
                ..self.prec.clone()
            };
            self.product_rules_out_with(prog, input, &prec)
        });
        if !coarse_rules_out && self.td_rules_out(prog, s, m, &fine, input) {
            fine
        } else {
            coarse
        }
    }

    /// Whether type `s` with SCG `m` and tracking definition `d` rules the path out (a
    /// replay of the path in the shape domain; false without a lattice).
    fn td_rules_out(
        &self,
        prog: &Program,
        s: StructId,
        m: &Scg,
        d: &TrackingDef,
        input: &RefineInput<'_, HeapState>,
    ) -> bool {
        let Some(lat) = self.lattice.as_ref() else {
            return false;
        };
        let c = self.recipe(s, m, d).generate(prog, lat);
        self.path_replay(prog, input)
            .rules_out(prog, &self.prec.shape, s, c)
    }

    /// When FineTune finds nothing for type `s` and its field equalities covered by a
    /// range of Φ are not abstraction predicates yet ([`cert::ClassRecipe::value_names`]):
    /// if they rule the path out as abstraction predicates, with the current SCG or
    /// with one FineTune then finds, they become abstraction predicates (and the SCG
    /// that one). They are off until then: summaries split by data values multiply the
    /// structures of lists whose values interleave (measured: benchmarks/real
    /// q_stailq_queue and ut_dl_ops time out with them), while lists partitioned by
    /// value (sorted or red-black lists) need them. Returns what changed.
    fn refine_value_names(
        &mut self,
        prog: &Program,
        s: StructId,
        m: &Scg,
        d: &TrackingDef,
        input: &RefineInput<'_, HeapState>,
    ) -> Option<String> {
        let covered = crate::shape::has_covered_equalities(d.assertions());
        if !self.options.lazy_value_names || self.value_named.contains(&s) || !covered {
            return None;
        }
        let lat = self.lattice.as_ref()?;
        self.value_named.insert(s);
        let c = self.recipe(s, m, d).generate(prog, lat);
        let name = struct_name(prog, s);
        if self
            .path_replay(prog, input)
            .rules_out(prog, &self.prec.shape, s, c)
        {
            self.set_shape(prog, s, m.clone(), d.clone());
            return Some(format!(
                "struct {name}: cells told apart by their field values"
            ));
        }
        let Some(m2) = self.fine_tune_type(prog, s, m, d, input, None) else {
            self.value_named.remove(&s);
            return None;
        };
        let msg = self.place_scg(prog, s, m.clone(), m2, d.clone(), input);
        Some(format!("{msg}, cells told apart by their field values"))
    }

    /// Before the last resort: the `stuck` types whose covered field equalities were
    /// never abstraction predicates ([`Self::refine_value_names`]) start over from their
    /// first SCG with them. The refinements without them took another route through
    /// the lattice, which can end where no class rules the path out while the route
    /// with them does not (measured: benchmarks/real/ut_dl_concat and q_list_remove).
    /// Returns what changed.
    fn restart_with_value_names(&mut self, prog: &Program, stuck: &[StructId]) -> Vec<String> {
        let mut out = Vec::new();
        if !self.options.lazy_value_names {
            return out;
        }
        for &s in stuck {
            let Some(TypeMode::Shape { d, .. }) = self.types.get(&s).cloned() else {
                continue;
            };
            let covered = crate::shape::has_covered_equalities(d.assertions());
            let Some(first) = self.first_scg.get(&s).cloned() else {
                continue;
            };
            if !covered || !self.value_named.insert(s) {
                continue;
            }
            out.push(format!(
                "struct {}: cells told apart by their field values, from {first} again",
                struct_name(prog, s)
            ));
            self.set_shape(prog, s, first, d);
        }
        out
    }

    /// Shape types the path mentions whose SCG and tracking definition cannot be
    /// refined, whose regions use the partial join, and whose current class without
    /// the join rules the path out: the join goes for them. Returns what changed, or
    /// None.
    fn refine_joins(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
        groups: &BTreeSet<PtrGroup>,
    ) -> Option<Vec<String>> {
        let mut replay: Option<PathReplay> = None;
        let joined: Vec<(StructId, Scg, TrackingDef)> = self
            .types
            .iter()
            .filter(|(s, _)| groups.contains(&PtrGroup::Struct(**s)) && self.joins(**s))
            .filter_map(|(s, m)| match (m, self.prec.shape.global.get(s)) {
                (TypeMode::Shape { scg, d }, Some(c)) => Some((*s, scg, d, c)),
                _ => None,
            })
            .filter(|(s, _, _, c)| {
                let mut c = (***c).clone();
                c.partial_join = false;
                replay
                    .get_or_insert_with(|| self.path_replay(prog, input))
                    .rules_out(prog, &self.prec.shape, *s, c)
            })
            .map(|(s, m, d, _)| (s, m.clone(), d.clone()))
            .collect();
        if joined.is_empty() {
            return None;
        }
        let mut added = Vec::new();
        for (s, m, d) in joined {
            self.unjoined.insert(s);
            self.set_shape(prog, s, m, d);
            added.push(format!(
                "struct {}: no partial join of shape structures",
                struct_name(prog, s)
            ));
        }
        Some(added)
    }

    /// The last resort: the `stuck` shape types go back to explicit heaps for good.
    /// Returns what changed.
    fn back_to_explicit(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
        stuck: Vec<StructId>,
    ) -> Vec<String> {
        tracing::debug!(
            "shape refinement failed on: {}",
            input
                .path
                .iter()
                .map(|st| {
                    let e = prog.step_edge(*st);
                    format!("{}: {:?}", e.src.line, e.op)
                })
                .collect::<Vec<_>>()
                .join("\n")
        );
        let mut added = Vec::new();
        for s in stuck {
            self.fn_scg.remove(&s);
            self.prec.shape.global.remove(&s);
            for m in self.prec.shape.at.values_mut() {
                m.remove(&s);
            }
            self.types.insert(s, TypeMode::ExplicitFinal);
            self.explicit_groups.insert(PtrGroup::Struct(s));
            for x in 0..prog.vars.len() {
                if PtrGroup::of(prog, x) == Some(PtrGroup::Struct(s)) {
                    self.prec.explicit.everywhere.insert(x);
                }
            }
            added.push(format!(
                "struct {}: shape refinement failed, back to explicit heaps",
                struct_name(prog, s)
            ));
        }
        if !added.is_empty() {
            added.extend(self.track_predicate_ints_explicitly(prog));
        }
        added
    }

    /// The integer variables the predicates compare become explicit too: explicit heaps
    /// prove only bounded structures, and a structure is bounded by the loop that builds
    /// it, whose counter the predicates may know only too coarsely to stop it
    /// (list-ext3-properties/dll_circular_traversal-2, an unseen SV-COMP task: with
    /// `len <= 5` but not `len <= 4` at the loop head, `while (len > 1)` built lists of
    /// every length, over 50 cells, and the run timed out). A counter the program does
    /// not bound makes the explicit ART unbounded either way.
    fn track_predicate_ints_explicitly(&mut self, prog: &Program) -> Vec<String> {
        let mut vars = Vec::new();
        for p in &self.prec.pred.preds {
            p.expr.vars(&mut vars);
        }
        vars.sort_unstable();
        vars.dedup();
        let mut added = Vec::new();
        for x in vars {
            let Some(v) = prog.vars.get(x).filter(|v| v.ty.is_int()) else {
                continue;
            };
            let name = &v.name;
            let counter = self.counters.values().any(|c| c.contains(name));
            if !counter && self.explicit_ints.insert(x) {
                self.prec.explicit.everywhere.insert(x);
                added.push(format!("track {name} explicitly"));
            }
        }
        added
    }
}

/// `r` as a refinement that restarts the ART from the root (pivot 0), with nothing
/// left unhandled.
/// The share of a run's shape posts (all so far) that must leave an
/// untouched structure out ([`crate::tvla::transfer::frame_counts`]) for
/// [`HeapAbstraction::join_regions_if_decomposed`], and the posts it needs.
/// Measured (20 s runs, one structure per node): 0.39 to 0.84 on the tasks where
/// joined regions were faster or the only proof (real/kl_queue, kl_lru, kl_splice,
/// fp_sorted_insert, seeds/two_queues), 0.20 to 0.34 where they were slower
/// (gdsl/bintree_rotate_left/right, real/ut_cdl_ops, ut_cdl_reverse,
/// seeds/cyclic_dll_sentinel).
const JOIN_SHARE: f64 = 0.38;
const JOIN_MIN_POSTS: u64 = 5_000;

impl HeapAbstraction {
    /// Switches to one joined region per ART node (and rebuilds the ART from its
    /// root) when, over the run so far, at least [`JOIN_SHARE`] of the shape posts
    /// touched only part of their structure (one ART's share varies: 0.44 in one of
    /// real/ut_cdl_reverse's, 0.20 over its run): statements act on one of several
    /// independent structures, whose shapes the split ART multiplies node by node
    /// (two lists of 252 and 12 shapes: 3,024 nodes at one location) while a joined
    /// region keeps them in one node and the frame rule posts each shape once. Both
    /// modes are sound; only the merge of the shape domain changes, the precision
    /// stays. Never under `--shape-joined` (already joined) or `--shape-split`.
    pub(super) fn join_regions_if_decomposed(&mut self) -> Option<Refinement> {
        let now = crate::tvla::transfer::frame_counts();
        // the counts are per thread: saturating, should the run have moved threads
        let tried = now.0.saturating_sub(self.frame_seen.0);
        let framed = now.1.saturating_sub(self.frame_seen.1);
        tracing::debug!("{framed} of {tried} shape posts left a frame out");
        if !self.cpa.is_split()
            || self.options.shape_split
            || tried < JOIN_MIN_POSTS
            || (framed as f64) < JOIN_SHARE * tried as f64
        {
            return None;
        }
        self.cpa.join_regions();
        Some(Refinement {
            pivot: Some(0),
            added: vec![format!(
                "shape regions joined per node: {framed} of {tried} posts touched one of several independent structures"
            )],
            unhandled: Vec::new(),
            kind: "merge",
        })
    }
}

fn restart(mut r: Refinement) -> Refinement {
    r.pivot = Some(0);
    r.unhandled.clear();
    r
}

/// For a field with assertions `f == k` for two or more consecutive constants (`data
/// == 0`, `data == 1`: a flag stored as `nondet() != 0`), also `f >= min` and `f <= max`:
/// a summary node whose cells hold different ones of those values keeps the range
/// (each `f == k` is 1/2 there), so a walk can still prove `f == 0 || f == 1`. Returns
/// whether `d` changed.
fn add_range_assertions(d: &mut TrackingDef) -> bool {
    let mut eq: std::collections::BTreeMap<String, Vec<i64>> = Default::default();
    for a in d.assertions() {
        let mut parts = a.split(" == ");
        if let (Some(f), Some(k), None) = (parts.next(), parts.next(), parts.next()) {
            if let Ok(k) = k.trim().parse::<i64>() {
                eq.entry(f.trim().to_string()).or_default().push(k);
            }
        }
    }
    let mut changed = false;
    for (f, mut ks) in eq {
        ks.sort_unstable();
        ks.dedup();
        let ks: Vec<i128> = ks.into_iter().map(i128::from).collect();
        if let Some((lo, hi)) = consecutive_range(&ks) {
            changed |= d.add_assertion(format!("{f} >= {lo}"));
            changed |= d.add_assertion(format!("{f} <= {hi}"));
        }
    }
    changed
}

/// `(lo, hi)` when the sorted, distinct constants `ks` are at least two and consecutive
/// (`lo, lo + 1, …, hi`).
fn consecutive_range(ks: &[i128]) -> Option<(i128, i128)> {
    let consecutive = ks.windows(2).all(|w| w[1] == w[0] + 1);
    match (ks.first(), ks.last()) {
        (Some(&lo), Some(&hi)) if ks.len() >= 2 && consecutive => Some((lo, hi)),
        _ => None,
    }
}
