//! SSA encoding of an interprocedural path into per-step Z3 constraints.
//! The memory model is documented in the [module doc of `smt`](crate::smt).

use super::term::SymId;
use super::SmtError;
use crate::cfa::{
    Access, AllocKind, BinOp, EdgeId, Expr, FieldRef, FuncId, Node, Op, Program, Step, Ty, UnOp,
    VarId,
};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeSet;
use z3::ast::{Array, Bool, Dynamic, Int};
use z3::{FuncDecl, Sort};

/// Distance between the addresses of two consecutive allocations on a path; a field's
/// address is `object + field index`, so structs may have at most `STRIDE - 1` fields.
pub const STRIDE: i64 = 4096;

/// What an SSA symbol stands for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SymKind {
    /// Version `version` of a program variable (0 = value at the start of the path).
    Var { var: VarId, version: u32 },
    /// Version of the heap array of a struct field (address -> value).
    Field { field: FieldRef, version: u32 },
    /// Version of the `$valid` ghost array (address -> tag + 1, 0 = not a valid object).
    Valid { version: u32 },
    /// Version of the `$heap` ghost array (address -> allocated by malloc).
    Heap { version: u32 },
    /// Version of the `$cell` array holding scalar objects.
    Cell { version: u32 },
    /// The NULL outcome of the heap allocation at path step `step`.
    AllocNull { step: usize },
}

/// One SSA symbol: its Z3 name and meaning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymInfo {
    pub name: String,
    pub kind: SymKind,
}

/// All symbols of a path encoding, indexed by [`SymId`].
#[derive(Clone, Debug, Default)]
pub struct SymbolTable {
    pub syms: Vec<SymInfo>,
    pub by_name: FxHashMap<String, SymId>,
}

impl SymbolTable {
    /// The symbol's info.
    pub fn get(&self, id: SymId) -> &SymInfo {
        &self.syms[id as usize]
    }
}

/// The state symbols at one path position: current versions (innermost activation,
/// globals, heap arrays) and versions saved by enclosing activations (`Step::Enter`).
#[derive(Clone, Debug, Default)]
pub struct Live {
    pub current: FxHashSet<SymId>,
    pub saved: FxHashSet<SymId>,
}

impl Live {
    /// True if `s` is a state symbol at this position.
    pub fn contains(&self, s: SymId) -> bool {
        self.current.contains(&s) || self.saved.contains(&s)
    }
}

/// Why a guard is part of a step's conjunct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GuardKind {
    /// An `assume` condition.
    Assume,
    /// A memory-safety side condition (valid dereference / free).
    Memory,
    /// A non-zero divisor.
    DivByZero,
    /// The range of a nondeterministic or uninitialised value.
    Range,
}

/// The encoding of one path step: `A_i = ∧ guards ∧ ∧ (sym = term)`; `choices` are the
/// symbols the step picks nondeterministically (guards and definitions may mention them).
pub struct StepEnc {
    /// `(new version, term over older versions and choices)`.
    pub defs: Vec<(Dynamic, Dynamic)>,
    pub guards: Vec<(GuardKind, Bool)>,
    pub choices: Vec<Dynamic>,
    /// Indices of guards that are the first test (NULL check or dereference) of the
    /// result of a may-fail allocation. Interpolation keeps them even outside the unsat
    /// core: they cut the NULL case of the allocation right away, which keeps the
    /// case split over allocation outcomes linear instead of exponential.
    pub null_kill: Vec<usize>,
}

impl StepEnc {
    fn new() -> StepEnc {
        StepEnc {
            defs: Vec::new(),
            guards: Vec::new(),
            choices: Vec::new(),
            null_kill: Vec::new(),
        }
    }
    /// The whole conjunct `A_i`.
    pub fn conjunct(&self) -> Bool {
        let mut parts: Vec<Bool> = self.guards.iter().map(|(_, g)| g.clone()).collect();
        for (s, t) in &self.defs {
            parts.push(s.eq(t));
        }
        Bool::and(&parts)
    }
}

/// Where a nondeterministic input is consumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// A `Nondet` operation.
    Nondet,
    /// The first read of an uninitialised variable.
    Uninit,
}

/// One entry of [`crate::cfa::Inputs::nondet`], in path order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputSlot {
    pub step: usize,
    pub var: VarId,
    pub sym: SymId,
    pub kind: InputKind,
}

/// One allocation on the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocSlot {
    pub step: usize,
    pub var: VarId,
    /// The fixed address of the object.
    pub addr: i64,
    pub heap: bool,
    /// The NULL-outcome choice (`None`: never NULL).
    pub null_sym: Option<SymId>,
}

/// The SSA encoding of a path. Holds Z3 ASTs of the thread-local context (not `Send`).
pub struct PathEncoding {
    pub steps: Vec<StepEnc>,
    pub symbols: SymbolTable,
    /// Z3 constant of each symbol, indexed by [`SymId`].
    pub consts: Vec<Dynamic>,
    /// State symbols at positions `0..=steps.len()` (position i = after step i).
    pub live: Vec<Live>,
    /// Program location at positions `0..=steps.len()`.
    pub locs: Vec<Node>,
    pub inputs: Vec<InputSlot>,
    pub allocs: Vec<AllocSlot>,
    /// Each memory read (`Load`, `LoadIndirect`) as its step and the symbol of the
    /// value read: the model's value is what an uninitialised cell held on the path
    /// (`Inputs::uninit_loads`).
    pub loads: Vec<(usize, SymId)>,
}

impl PathEncoding {
    /// Number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }
    /// True for the empty path.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// Encodes `path` (a sequence of steps of `prog`) into SSA form. Errors: `InvalidPath` for
/// step sequences that are not paths, `Unsupported` for constructs the memory model does
/// not represent exactly (see the module documentation of `smt`).
pub fn encode_path(prog: &Program, path: &[Step]) -> Result<PathEncoding, SmtError> {
    Encoder::new(prog, path)?.run(path)
}

struct Frame {
    func: FuncId,
    saved: Vec<(VarId, Option<SymId>)>,
}

struct Encoder<'p> {
    prog: &'p Program,
    symbols: SymbolTable,
    consts: Vec<Dynamic>,
    var_cur: Vec<Option<SymId>>,
    var_ver: Vec<u32>,
    uninit: FxHashSet<SymId>,
    fields: FxHashMap<FieldRef, SymId>,
    field_ver: FxHashMap<FieldRef, u32>,
    valid: Array,
    valid_sym: Option<SymId>,
    valid_ver: u32,
    heap: Option<(Array, Option<SymId>)>,
    heap_ver: u32,
    cell: Option<SymId>,
    cell_ver: u32,
    frames: Vec<Frame>,
    has_void_alloc: bool,
    /// Struct tags (and the scalar tag) allocated somewhere on the path.
    alloc_tags: BTreeSet<usize>,
    n_allocs: i64,
    inputs: Vec<InputSlot>,
    allocs: Vec<AllocSlot>,
    loads: Vec<(usize, SymId)>,
    ufs: FxHashMap<&'static str, FuncDecl>,
    /// Step being encoded.
    cur_step: usize,
    /// Results of may-fail allocations not yet tested by a guard.
    pending_null: Vec<SymId>,
    /// Version-0 symbols (values at the path start) with the step that first mentions
    /// them: they are state symbols at every earlier position too.
    initial: Vec<(SymId, usize)>,
}

fn int_sort_array() -> Sort {
    Sort::array(&Sort::int(), &Sort::int())
}

impl<'p> Encoder<'p> {
    fn new(prog: &'p Program, path: &[Step]) -> Result<Encoder<'p>, SmtError> {
        let mut has_free = false;
        let mut has_void_alloc = false;
        let mut alloc_tags = BTreeSet::new();
        let scalar_tag = prog.structs.len();
        for s in path {
            let e = edge_of(prog, *s)?;
            match &prog.graph[e].op {
                Op::Free { .. }
                | Op::AssumeInvalid {
                    access: Access::Free,
                    ..
                } => has_free = true,
                Op::Alloc { pointee, .. } => match pointee {
                    Ty::Struct(s) => {
                        alloc_tags.insert(*s);
                    }
                    Ty::Void => has_void_alloc = true,
                    _ => {
                        alloc_tags.insert(scalar_tag);
                    }
                },
                _ => {}
            }
        }
        for sd in &prog.structs {
            if sd.fields.len() as i64 >= STRIDE {
                return Err(SmtError::Unsupported(format!(
                    "struct {} has more than {} fields",
                    sd.name,
                    STRIDE - 1
                )));
            }
        }
        let zero_arr = Array::const_array(&Sort::int(), &Int::from_i64(0));
        let heap = if has_free {
            Some((
                Array::const_array(&Sort::int(), &Bool::from_bool(false)),
                None,
            ))
        } else {
            None
        };
        Ok(Encoder {
            prog,
            symbols: SymbolTable::default(),
            consts: Vec::new(),
            var_cur: vec![None; prog.vars.len()],
            var_ver: vec![0; prog.vars.len()],
            uninit: FxHashSet::default(),
            fields: FxHashMap::default(),
            field_ver: FxHashMap::default(),
            valid: zero_arr,
            valid_sym: None,
            valid_ver: 0,
            heap,
            heap_ver: 0,
            cell: None,
            cell_ver: 0,
            frames: Vec::new(),
            has_void_alloc,
            alloc_tags,
            n_allocs: 0,
            inputs: Vec::new(),
            allocs: Vec::new(),
            loads: Vec::new(),
            ufs: FxHashMap::default(),
            cur_step: 0,
            pending_null: Vec::new(),
            initial: Vec::new(),
        })
    }

    fn new_sym(&mut self, name: String, kind: SymKind, sort: &Sort) -> (SymId, Dynamic) {
        let id = self.symbols.syms.len() as SymId;
        let c = Dynamic::new_const(name.as_str(), sort);
        self.symbols.by_name.insert(name.clone(), id);
        self.symbols.syms.push(SymInfo { name, kind });
        self.consts.push(c.clone());
        (id, c)
    }

    fn c(&self, s: SymId) -> &Dynamic {
        &self.consts[s as usize]
    }

    fn new_var_version(&mut self, v: VarId) -> (SymId, Dynamic) {
        self.var_ver[v] += 1;
        let ver = self.var_ver[v];
        let name = format!("{}@{}", self.prog.vars[v].name, ver);
        let (id, c) = self.new_sym(
            name,
            SymKind::Var {
                var: v,
                version: ver,
            },
            &Sort::int(),
        );
        self.var_cur[v] = Some(id);
        (id, c)
    }

    /// Reads variable `v` at step `step`, creating the initial version if needed and
    /// recording the read of an uninitialised value as an input.
    fn read_var(&mut self, v: VarId, step: usize, enc: &mut StepEnc) -> Int {
        let id = match self.var_cur[v] {
            Some(id) => id,
            None => {
                let name = format!("{}@0", self.prog.vars[v].name);
                let (id, _) = self.new_sym(name, SymKind::Var { var: v, version: 0 }, &Sort::int());
                self.initial.push((id, self.cur_step));
                self.var_cur[v] = Some(id);
                self.uninit.insert(id);
                id
            }
        };
        let c = int_of(self.c(id));
        if self.uninit.remove(&id) {
            self.inputs.push(InputSlot {
                step,
                var: v,
                sym: id,
                kind: InputKind::Uninit,
            });
            enc.guards
                .push((GuardKind::Range, range_of(&self.prog.vars[v].ty, &c)));
        }
        c
    }

    fn field_arr(&mut self, f: FieldRef) -> Array {
        let id = match self.fields.get(&f) {
            Some(id) => *id,
            None => {
                let name = format!("{}@0", self.field_name(f));
                let (id, _) = self.new_sym(
                    name,
                    SymKind::Field {
                        field: f,
                        version: 0,
                    },
                    &int_sort_array(),
                );
                self.initial.push((id, self.cur_step));
                self.fields.insert(f, id);
                self.field_ver.insert(f, 0);
                id
            }
        };
        array_of(self.c(id))
    }

    fn field_name(&self, f: FieldRef) -> String {
        format!(
            "{}.{}",
            self.prog.structs[f.strukt].name,
            self.prog.field(f).name
        )
    }

    fn def_field(&mut self, f: FieldRef, term: Array, enc: &mut StepEnc) {
        let _ = self.field_arr(f);
        let ver = self.field_ver.get(&f).copied().unwrap_or(0) + 1;
        self.field_ver.insert(f, ver);
        let name = format!("{}@{}", self.field_name(f), ver);
        let (id, c) = self.new_sym(
            name,
            SymKind::Field {
                field: f,
                version: ver,
            },
            &int_sort_array(),
        );
        self.fields.insert(f, id);
        enc.defs.push((c, Dynamic::from_ast(&term)));
    }

    fn def_valid(&mut self, term: Array, enc: &mut StepEnc) {
        self.valid_ver += 1;
        let (id, c) = self.new_sym(
            format!("$valid@{}", self.valid_ver),
            SymKind::Valid {
                version: self.valid_ver,
            },
            &int_sort_array(),
        );
        self.valid_sym = Some(id);
        self.valid = array_of(&c);
        enc.defs.push((c, Dynamic::from_ast(&term)));
    }

    fn def_heap(&mut self, term: Array, enc: &mut StepEnc) {
        self.heap_ver += 1;
        let (id, c) = self.new_sym(
            format!("$heap@{}", self.heap_ver),
            SymKind::Heap {
                version: self.heap_ver,
            },
            &Sort::array(&Sort::int(), &Sort::bool()),
        );
        self.heap = Some((array_of(&c), Some(id)));
        enc.defs.push((c, Dynamic::from_ast(&term)));
    }

    fn cell_arr(&mut self) -> Array {
        let id = match self.cell {
            Some(id) => id,
            None => {
                let (id, _) = self.new_sym(
                    "$cell@0".into(),
                    SymKind::Cell { version: 0 },
                    &int_sort_array(),
                );
                self.initial.push((id, self.cur_step));
                self.cell = Some(id);
                id
            }
        };
        array_of(self.c(id))
    }

    fn def_cell(&mut self, term: Array, enc: &mut StepEnc) {
        let _ = self.cell_arr();
        self.cell_ver += 1;
        let (id, c) = self.new_sym(
            format!("$cell@{}", self.cell_ver),
            SymKind::Cell {
                version: self.cell_ver,
            },
            &int_sort_array(),
        );
        self.cell = Some(id);
        enc.defs.push((c, Dynamic::from_ast(&term)));
    }

    fn def_var(&mut self, v: VarId, term: Int, enc: &mut StepEnc) {
        let (_, c) = self.new_var_version(v);
        enc.defs.push((c, Dynamic::from_ast(&term)));
    }

    fn uf_apply(&mut self, name: &'static str, x: &Int, y: &Int) -> Int {
        int_of(
            &self
                .ufs
                .entry(name)
                .or_insert_with(|| FuncDecl::new(name, &[&Sort::int(), &Sort::int()], &Sort::int()))
                .apply(&[x, y]),
        )
    }

    fn live(&self) -> Live {
        let mut current: FxHashSet<SymId> = self.var_cur.iter().flatten().copied().collect();
        current.extend(self.fields.values().copied());
        current.extend(self.valid_sym);
        if let Some((_, Some(h))) = &self.heap {
            current.insert(*h);
        }
        current.extend(self.cell);
        let mut saved = FxHashSet::default();
        for f in &self.frames {
            saved.extend(f.saved.iter().filter_map(|(_, s)| *s));
        }
        saved.retain(|s| !current.contains(s));
        Live { current, saved }
    }

    fn run(mut self, path: &[Step]) -> Result<PathEncoding, SmtError> {
        let mut steps = Vec::with_capacity(path.len());
        let mut live = Vec::with_capacity(path.len() + 1);
        let mut locs = Vec::with_capacity(path.len() + 1);
        live.push(self.live());
        if let Some(first) = path.first() {
            locs.push(self.source(*first)?);
        }
        for (i, s) in path.iter().enumerate() {
            let src = self.source(*s)?;
            if let Some(prev) = locs.last() {
                if *prev != src {
                    return Err(SmtError::InvalidPath(format!(
                        "step {i} starts at {src:?}, previous step ended at {prev:?}"
                    )));
                }
            }
            self.cur_step = i;
            let mut enc = self.step(i, *s)?;
            if !self.pending_null.is_empty() {
                for (j, (kind, g)) in enc.guards.iter().enumerate() {
                    if !matches!(kind, GuardKind::Assume | GuardKind::Memory) {
                        continue;
                    }
                    let names = super::term::const_names(&Dynamic::from_ast(g));
                    let before = self.pending_null.len();
                    let syms = &self.symbols;
                    self.pending_null
                        .retain(|s| !names.contains(&syms.get(*s).name));
                    if self.pending_null.len() != before {
                        enc.null_kill.push(j);
                    }
                }
            }
            steps.push(enc);
            live.push(self.live());
            locs.push(self.target(*s)?);
        }
        for (sym, step) in &self.initial {
            for l in live.iter_mut().take(step + 1) {
                l.current.insert(*sym);
            }
        }
        Ok(PathEncoding {
            steps,
            symbols: self.symbols,
            consts: self.consts,
            live,
            locs,
            inputs: self.inputs,
            allocs: self.allocs,
            loads: self.loads,
        })
    }

    fn source(&self, s: Step) -> Result<Node, SmtError> {
        let e = edge_of(self.prog, s)?;
        match s {
            Step::Edge(_) | Step::Enter(_) => self.prog.graph.edge_endpoints(e).map(|x| x.0),
            Step::Leave(_) => Some(self.prog.functions[callee_of(self.prog, e)?].exit),
        }
        .ok_or_else(|| SmtError::InvalidPath("dangling edge".into()))
    }

    fn target(&self, s: Step) -> Result<Node, SmtError> {
        let e = edge_of(self.prog, s)?;
        match s {
            Step::Edge(_) | Step::Leave(_) => self.prog.graph.edge_endpoints(e).map(|x| x.1),
            Step::Enter(_) => Some(self.prog.functions[callee_of(self.prog, e)?].entry),
        }
        .ok_or_else(|| SmtError::InvalidPath("dangling edge".into()))
    }

    fn step(&mut self, i: usize, s: Step) -> Result<StepEnc, SmtError> {
        let prog = self.prog;
        let mut enc = StepEnc::new();
        match s {
            Step::Edge(e) => {
                let op = &prog.graph[e].op;
                self.edge_op(i, op, &mut enc)?;
            }
            Step::Enter(e) => {
                let Op::Call { callee, args, .. } = &prog.graph[e].op else {
                    return Err(SmtError::InvalidPath(format!(
                        "Enter of non-call edge at step {i}"
                    )));
                };
                let f = &prog.functions[*callee];
                if f.params.len() != args.len() {
                    return Err(SmtError::Unsupported(format!(
                        "call of {} with {} arguments for {} parameters",
                        f.name,
                        args.len(),
                        f.params.len()
                    )));
                }
                let mut vals = Vec::with_capacity(args.len());
                for (a, p) in args.iter().zip(&f.params) {
                    let v = self.int_expr(a, i, &mut enc)?;
                    vals.push(self.convert(&prog.vars[*p].ty, a, v)?);
                }
                let mut vars: Vec<VarId> = f.params.clone();
                vars.extend(f.locals.iter().copied());
                vars.extend(f.ret);
                vars.sort_unstable();
                vars.dedup();
                let saved = vars.iter().map(|v| (*v, self.var_cur[*v])).collect();
                self.frames.push(Frame {
                    func: *callee,
                    saved,
                });
                for (p, v) in f.params.iter().zip(vals) {
                    self.def_var(*p, v, &mut enc);
                }
                for v in vars {
                    if f.params.contains(&v) {
                        continue;
                    }
                    let (id, c) = self.new_var_version(v);
                    self.uninit.insert(id);
                    enc.choices.push(c);
                }
            }
            Step::Leave(e) => {
                let Op::Call { callee, ret, .. } = &prog.graph[e].op else {
                    return Err(SmtError::InvalidPath(format!(
                        "Leave of non-call edge at step {i}"
                    )));
                };
                let f = &prog.functions[*callee];
                let val = match (ret, f.ret) {
                    (Some(_), Some(r)) => Some((self.read_var(r, i, &mut enc), r)),
                    (Some(_), None) => {
                        return Err(SmtError::InvalidPath(format!(
                            "call assigns the result of void function {}",
                            f.name
                        )))
                    }
                    _ => None,
                };
                match self.frames.pop() {
                    Some(fr) if fr.func == *callee => {
                        for (v, s) in fr.saved {
                            self.var_cur[v] = s;
                        }
                    }
                    Some(_) => {
                        return Err(SmtError::InvalidPath(format!(
                            "Leave of {} does not match the innermost Enter (step {i})",
                            f.name
                        )))
                    }
                    None => {}
                }
                if let (Some(dst), Some((v, r))) = (ret, val) {
                    let v = self.convert(&prog.vars[*dst].ty, &Expr::Var(r), v)?;
                    self.def_var(*dst, v, &mut enc);
                }
            }
        }
        Ok(enc)
    }

    fn edge_op(&mut self, i: usize, op: &Op, enc: &mut StepEnc) -> Result<(), SmtError> {
        let prog = self.prog;
        match op {
            // a leak check constrains nothing here: the replay of a model decides it
            Op::Skip | Op::Error | Op::Halt | Op::AssumeLeak { .. } => {}
            Op::Assign { dst, src } => {
                let dty = &prog.vars[*dst].ty;
                if dty.is_int() && self.is_ptr_expr(src) {
                    return Err(SmtError::Unsupported(
                        "pointer value assigned to an integer variable".into(),
                    ));
                }
                let v = self.int_expr(src, i, enc)?;
                let v = self.convert(dty, src, v)?;
                self.def_var(*dst, v, enc);
            }
            Op::Nondet { dst } => {
                let (id, c) = self.new_var_version(*dst);
                let ci = int_of(&c);
                let ty = &prog.vars[*dst].ty;
                let range = if ty.is_ptr() {
                    // NULL (input 0) or a garbage address distinct from every object
                    // (a negative number; objects live at positive addresses).
                    ci.ge(Int::from_i64(i32::MIN as i64)) & ci.le(Int::from_i64(0))
                } else {
                    range_of(ty, &ci)
                };
                enc.guards.push((GuardKind::Range, range));
                enc.choices.push(c);
                self.inputs.push(InputSlot {
                    step: i,
                    var: *dst,
                    sym: id,
                    kind: InputKind::Nondet,
                });
            }
            Op::Load { dst, ptr, field } => {
                let p = self.read_var(*ptr, i, enc);
                enc.guards
                    .push((GuardKind::Memory, self.tag_ok(&p, field.strukt)));
                let arr = self.field_arr(*field);
                let val = int_of(&arr.select(&p));
                let fty = prog.field(*field).ty.clone();
                let val = self.convert_ty(&prog.vars[*dst].ty, &fty, val);
                self.def_var(*dst, val, enc);
                self.record_load(i, *dst);
            }
            Op::Store { ptr, field, src } => {
                let p = self.read_var(*ptr, i, enc);
                let fty = prog.field(*field).ty.clone();
                if fty.is_int() && self.is_ptr_expr(src) {
                    return Err(SmtError::Unsupported(
                        "pointer value stored into an integer field".into(),
                    ));
                }
                let v = self.int_expr(src, i, enc)?;
                let v = self.convert(&fty, src, v)?;
                enc.guards
                    .push((GuardKind::Memory, self.tag_ok(&p, field.strukt)));
                let arr = self.field_arr(*field).store(&p, &v);
                self.def_field(*field, arr, enc);
            }
            Op::FieldAddr { dst, ptr, field } => {
                if let Ty::Ptr(inner) = &prog.vars[*dst].ty {
                    if matches!(**inner, Ty::Struct(_)) {
                        return Err(SmtError::Unsupported(
                            "pointer to an embedded struct (&p->inner)".into(),
                        ));
                    }
                }
                let p = self.read_var(*ptr, i, enc);
                // `&p->f` needs `p` to point to a valid object (C: `p->f` is an lvalue).
                enc.guards
                    .push((GuardKind::Memory, self.tag_ok(&p, field.strukt)));
                let v = p + Int::from_i64(field.field as i64);
                self.def_var(*dst, v, enc);
            }
            Op::LoadIndirect { dst, ptr } => self.load_indirect(i, *dst, *ptr, enc),
            Op::StoreIndirect { ptr, src } => self.store_indirect(i, *ptr, src, enc)?,
            Op::Alloc {
                dst, pointee, kind, ..
            } => self.alloc(i, *dst, pointee, kind, enc),
            Op::Free { ptr } => {
                let p = self.read_var(*ptr, i, enc);
                let isnull = p.eq(Int::from_i64(0));
                let okobj = self.live_heap_start(&p)?;
                enc.guards.push((GuardKind::Memory, isnull | okobj));
                let valid = self.valid.store(&p, &Int::from_i64(0));
                self.def_valid(valid, enc);
            }
            Op::Assume { cond } => {
                let c = self.bool_expr(cond, i, enc)?;
                enc.guards.push((GuardKind::Assume, c));
            }
            Op::AssumeInvalid { ptr, access } => {
                // neither NULL nor what the access needs: dangling or garbage
                let p = self.read_var(*ptr, i, enc);
                let ok = match access {
                    Access::Struct(strukt) => self.tag_ok(&p, *strukt),
                    Access::Cell => self.decode_cell(&p).0,
                    Access::Free => self.live_heap_start(&p)?,
                };
                let c = Bool::and(&[&p.eq(Int::from_i64(0)).not(), &ok.not()]);
                enc.guards.push((GuardKind::Assume, c));
            }
            Op::Call { .. } => {
                return Err(SmtError::InvalidPath(format!(
                    "step {i}: Step::Edge over a call edge (use Enter/Leave)"
                )))
            }
        }
        Ok(())
    }

    /// `dst = alloc(pointee)`: the next fixed address (or NULL, a choice, when the
    /// allocation may fail), tagged valid for `pointee`, zeroed for `calloc`.
    fn alloc(&mut self, i: usize, dst: VarId, pointee: &Ty, kind: &AllocKind, enc: &mut StepEnc) {
        let prog = self.prog;
        let tag = self.tag_of(pointee);
        let addr = (self.n_allocs + 1) * STRIDE;
        self.n_allocs += 1;
        let heap = matches!(kind, AllocKind::Heap { .. });
        let zeroed = matches!(kind, AllocKind::Heap { zeroed: true });
        let may_fail = heap && !prog.malloc_never_fails;
        let a = Int::from_i64(addr);
        let null = if may_fail {
            let (id, c) = self.new_sym(
                format!("$null#{i}"),
                SymKind::AllocNull { step: i },
                &Sort::bool(),
            );
            enc.choices.push(c.clone());
            Some((id, bool_of(&c)))
        } else {
            None
        };
        self.allocs.push(AllocSlot {
            step: i,
            var: dst,
            addr,
            heap,
            null_sym: null.as_ref().map(|(id, _)| *id),
        });
        let code = Int::from_i64(tag as i64 + 1);
        let (dv, vv) = match &null {
            Some((_, n)) => (
                n.ite(&Int::from_i64(0), &a),
                n.ite(&Int::from_i64(0), &code),
            ),
            None => (a.clone(), code),
        };
        let valid = self.valid.store(&a, &vv);
        self.def_valid(valid, enc);
        if heap {
            if let Some((h, _)) = self.heap.clone() {
                let hv = match &null {
                    Some((_, n)) => n.not(),
                    None => Bool::from_bool(true),
                };
                self.def_heap(h.store(&a, &hv), enc);
            }
        }
        if zeroed {
            match pointee {
                Ty::Struct(s) => {
                    for j in 0..prog.structs[*s].fields.len() {
                        let f = FieldRef {
                            strukt: *s,
                            field: j,
                        };
                        let arr = self.field_arr(f).store(&a, &Int::from_i64(0));
                        self.def_field(f, arr, enc);
                    }
                }
                Ty::Void => {}
                _ => {
                    let arr = self.cell_arr().store(&a, &Int::from_i64(0));
                    self.def_cell(arr, enc);
                }
            }
        }
        self.def_var(dst, dv, enc);
        if null.is_some() {
            self.pending_null.extend(self.var_cur[dst]);
        }
    }

    /// `dst = *ptr`: the value of the cell `ptr` decodes to (an ite over the
    /// candidate cells), guarded by the decoding.
    fn load_indirect(&mut self, i: usize, dst: VarId, ptr: VarId, enc: &mut StepEnc) {
        let prog = self.prog;
        let pp = self.read_var(ptr, i, enc);
        let (guard, cands) = self.decode_cell(&pp);
        enc.guards.push((GuardKind::Memory, guard));
        let base = base_of(&pp);
        // ite chain over the candidate cells; the last one is the default (the
        // guard makes one candidate true).
        let mut val: Option<Int> = None;
        for (cond, cell) in cands.into_iter().rev() {
            let arr = match cell {
                Cell::Field(f) => self.field_arr(f),
                Cell::Scalar => self.cell_arr(),
            };
            let x = int_of(&arr.select(&base));
            val = Some(match val {
                None => x,
                Some(rest) => cond.ite(&x, &rest),
            });
        }
        let val = val.unwrap_or_else(|| Int::from_i64(0));
        let dty = prog.vars[dst].ty.clone();
        let val = self.convert_ty(
            &dty,
            &Ty::Int {
                bits: 64,
                signed: true,
            },
            val,
        );
        self.def_var(dst, val, enc);
        self.record_load(i, dst);
    }

    /// Records the read at step `i` that defined `dst` ([`PathEncoding::loads`]).
    fn record_load(&mut self, i: usize, dst: VarId) {
        if let Some(id) = self.var_cur[dst] {
            self.loads.push((i, id));
        }
    }

    /// `*ptr = src`: every candidate cell of `ptr` is written where it is the one.
    fn store_indirect(
        &mut self,
        i: usize,
        ptr: VarId,
        src: &Expr,
        enc: &mut StepEnc,
    ) -> Result<(), SmtError> {
        let prog = self.prog;
        let pp = self.read_var(ptr, i, enc);
        let v = self.int_expr(src, i, enc)?;
        let (guard, cands) = self.decode_cell(&pp);
        enc.guards.push((GuardKind::Memory, guard));
        let base = base_of(&pp);
        for (cond, cell) in cands {
            let arr = match cell {
                Cell::Field(f) => self.field_arr(f),
                Cell::Scalar => self.cell_arr(),
            };
            let ty = match cell {
                Cell::Field(f) => prog.field(f).ty.clone(),
                Cell::Scalar => Ty::Int {
                    bits: 64,
                    signed: true,
                },
            };
            let cv = self.convert(&ty, src, v.clone())?;
            let old = int_of(&arr.select(&base));
            let new = arr.store(&base, &cond.ite(&cv, &old));
            match cell {
                Cell::Field(f) => self.def_field(f, new, enc),
                Cell::Scalar => self.def_cell(new, enc),
            }
        }
        Ok(())
    }

    fn tag_of(&self, pointee: &Ty) -> usize {
        match pointee {
            Ty::Struct(s) => *s,
            Ty::Void => self.prog.structs.len() + 1,
            _ => self.prog.structs.len(),
        }
    }

    /// `p` is the start of a live heap object (what `free(p)` needs of a non-NULL `p`).
    fn live_heap_start(&self, p: &Int) -> Result<Bool, SmtError> {
        let (h, _) = self
            .heap
            .clone()
            .ok_or_else(|| SmtError::InvalidPath("internal: no heap array".into()))?;
        Ok(int_of(&self.valid.select(p)).ne(Int::from_i64(0)) & bool_of(&h.select(p)))
    }

    /// `$valid[p]` holds an object of struct `s` (or an untyped `void` object).
    fn tag_ok(&self, p: &Int, s: usize) -> Bool {
        let c = int_of(&self.valid.select(p));
        let mut ok = c.eq(Int::from_i64(s as i64 + 1));
        if self.has_void_alloc {
            let v = self.prog.structs.len() as i64 + 2;
            ok |= c.eq(Int::from_i64(v));
        }
        ok
    }

    /// The cells `pp` may address: `(condition, cell)`, and the guard that one of them is hit.
    fn decode_cell(&self, pp: &Int) -> (Bool, Vec<(Bool, Cell)>) {
        let base = base_of(pp);
        let slot = pp.modulo(Int::from_i64(STRIDE));
        let code = int_of(&self.valid.select(&base));
        let scalar = self.prog.structs.len();
        let mut cands = Vec::new();
        for &t in &self.alloc_tags {
            if t == scalar {
                let cond = code.eq(Int::from_i64(t as i64 + 1)) & slot.eq(Int::from_i64(0));
                cands.push((cond, Cell::Scalar));
            } else {
                for j in 0..self.prog.structs[t].fields.len() {
                    let cond =
                        code.eq(Int::from_i64(t as i64 + 1)) & slot.eq(Int::from_i64(j as i64));
                    cands.push((
                        cond,
                        Cell::Field(FieldRef {
                            strukt: t,
                            field: j,
                        }),
                    ));
                }
            }
        }
        let guard = Bool::or(&cands.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>());
        (guard, cands)
    }

    fn is_ptr_expr(&self, e: &Expr) -> bool {
        match e {
            Expr::Null => true,
            Expr::Var(v) => self.prog.vars[*v].ty.is_ptr(),
            Expr::Cast(t, _) => t.is_ptr(),
            _ => false,
        }
    }

    /// Static value range of an expression (None if unknown).
    fn static_range(&self, e: &Expr) -> Option<(i128, i128)> {
        match e {
            Expr::Int(n) => Some((*n as i128, *n as i128)),
            Expr::Var(v) => self.prog.vars[*v].ty.int_range(),
            Expr::Cast(t, _) => t.int_range(),
            Expr::Unary(UnOp::Not, _) => Some((0, 1)),
            Expr::Binary(op, _, _) if op.is_comparison() => Some((0, 1)),
            _ => None,
        }
    }

    /// Converts the value `v` of expression `src` to type `ty` (assignment conversion).
    fn convert(&self, ty: &Ty, src: &Expr, v: Int) -> Result<Int, SmtError> {
        let Some((lo, hi)) = ty.int_range() else {
            return Ok(v);
        };
        if let Some((slo, shi)) = self.static_range(src) {
            if slo >= lo && shi <= hi {
                return Ok(v);
            }
        }
        Ok(assign_conv(ty, v))
    }

    fn convert_ty(&self, ty: &Ty, from: &Ty, v: Int) -> Int {
        match (ty.int_range(), from.int_range()) {
            (Some((lo, hi)), Some((flo, fhi))) if flo >= lo && fhi <= hi => v,
            (Some(_), Some(_)) => assign_conv(ty, v),
            _ => v,
        }
    }

    fn int_expr(&mut self, e: &Expr, i: usize, enc: &mut StepEnc) -> Result<Int, SmtError> {
        Ok(match e {
            Expr::Int(n) => Int::from_i64(*n),
            Expr::Null => Int::from_i64(0),
            Expr::Var(v) => self.read_var(*v, i, enc),
            Expr::Unary(op, a) => {
                if self.is_ptr_expr(a) && *op != UnOp::Not {
                    return Err(SmtError::Unsupported("arithmetic on a pointer".into()));
                }
                match op {
                    UnOp::Neg => -self.int_expr(a, i, enc)?,
                    UnOp::BitNot => -self.int_expr(a, i, enc)? - Int::from_i64(1),
                    UnOp::Not => {
                        let b = self.bool_expr(a, i, enc)?;
                        b.ite(&Int::from_i64(0), &Int::from_i64(1))
                    }
                }
            }
            Expr::Binary(op, a, b) => {
                if op.is_comparison() {
                    let c = self.bool_expr(e, i, enc)?;
                    return Ok(c.ite(&Int::from_i64(1), &Int::from_i64(0)));
                }
                if self.is_ptr_expr(a) || self.is_ptr_expr(b) {
                    return Err(SmtError::Unsupported(format!(
                        "pointer arithmetic ({})",
                        op.symbol()
                    )));
                }
                let x = self.int_expr(a, i, enc)?;
                let const_b = match **b {
                    Expr::Int(n) => Some(n),
                    _ => None,
                };
                let y = self.int_expr(b, i, enc)?;
                match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    BinOp::Div | BinOp::Rem => {
                        if const_b.is_none_or(|n| n == 0) {
                            enc.guards
                                .push((GuardKind::DivByZero, y.ne(Int::from_i64(0))));
                        }
                        let q = cdiv(&x, &y);
                        if *op == BinOp::Div {
                            q
                        } else {
                            x - y * q
                        }
                    }
                    BinOp::Shl => match const_b {
                        Some(k) if (0..63).contains(&k) => x * Int::from_i64(1i64 << k),
                        _ => self.uf_apply("$shl", &x, &y),
                    },
                    BinOp::Shr => match const_b {
                        Some(k) if (0..63).contains(&k) => x.div(Int::from_i64(1i64 << k)),
                        _ => self.uf_apply("$shr", &x, &y),
                    },
                    BinOp::BitAnd => self.uf_apply("$bvand", &x, &y),
                    BinOp::BitOr => self.uf_apply("$bvor", &x, &y),
                    BinOp::BitXor => self.uf_apply("$bvxor", &x, &y),
                    _ => unreachable!("comparisons handled above"),
                }
            }
            Expr::Cast(ty, a) => {
                let ap = self.is_ptr_expr(a);
                match (ty.is_ptr(), ap) {
                    (true, true) => self.int_expr(a, i, enc)?,
                    (true, false) => match **a {
                        Expr::Int(0) => Int::from_i64(0),
                        _ => return Err(SmtError::Unsupported("integer-to-pointer cast".into())),
                    },
                    (false, true) if matches!(ty, Ty::Int { bits: 1, .. }) => {
                        let p = self.int_expr(a, i, enc)?;
                        p.ne(Int::from_i64(0))
                            .ite(&Int::from_i64(1), &Int::from_i64(0))
                    }
                    (false, true) => {
                        return Err(SmtError::Unsupported("pointer-to-integer cast".into()))
                    }
                    (false, false) => {
                        let v = self.int_expr(a, i, enc)?;
                        match self.static_range(a) {
                            Some((lo, hi))
                                if ty
                                    .int_range()
                                    .is_some_and(|(tlo, thi)| lo >= tlo && hi <= thi) =>
                            {
                                v
                            }
                            _ => cast_conv(ty, v),
                        }
                    }
                }
            }
        })
    }

    fn bool_expr(&mut self, e: &Expr, i: usize, enc: &mut StepEnc) -> Result<Bool, SmtError> {
        Ok(match e {
            Expr::Binary(op, a, b) if op.is_comparison() => {
                let pa = self.is_ptr_expr(a);
                let pb = self.is_ptr_expr(b);
                if (pa || pb) && !matches!(op, BinOp::Eq | BinOp::Ne) {
                    return Err(SmtError::Unsupported(format!(
                        "relational pointer comparison ({})",
                        op.symbol()
                    )));
                }
                let x = self.int_expr(a, i, enc)?;
                let y = self.int_expr(b, i, enc)?;
                match op {
                    BinOp::Eq => x.eq(&y),
                    BinOp::Ne => x.ne(&y),
                    BinOp::Lt => x.lt(&y),
                    BinOp::Le => x.le(&y),
                    BinOp::Gt => x.gt(&y),
                    BinOp::Ge => x.ge(&y),
                    _ => unreachable!(),
                }
            }
            Expr::Unary(UnOp::Not, a) => self.bool_expr(a, i, enc)?.not(),
            Expr::Int(n) => Bool::from_bool(*n != 0),
            Expr::Null => Bool::from_bool(false),
            _ => self.int_expr(e, i, enc)?.ne(Int::from_i64(0)),
        })
    }
}

#[derive(Clone, Copy)]
enum Cell {
    Field(FieldRef),
    Scalar,
}

fn base_of(pp: &Int) -> Int {
    pp - pp.modulo(Int::from_i64(STRIDE))
}

/// C division (truncation toward zero) from SMT-LIB floor/Euclidean division.
fn cdiv(x: &Int, y: &Int) -> Int {
    let zero = Int::from_i64(0);
    x.ge(&zero).ite(&x.div(y), &(-((-x.clone()).div(y))))
}

/// Range constraint of a value of type `ty` (pointers: the `i64` range, so that models
/// convert to [`crate::cfa::Inputs`]).
fn range_of(ty: &Ty, v: &Int) -> Bool {
    let (lo, hi) = ty
        .int_range()
        .unwrap_or((i64::MIN as i128, i64::MAX as i128));
    v.ge(Int::from_i128(lo)) & v.le(Int::from_i128(hi))
}

/// Assignment conversion: unsigned and `_Bool` destinations wrap/normalise exactly;
/// signed destinations keep the value (signed overflow is not modelled).
fn assign_conv(ty: &Ty, v: Int) -> Int {
    match ty {
        Ty::Int { bits: 1, .. } => v
            .ne(Int::from_i64(0))
            .ite(&Int::from_i64(1), &Int::from_i64(0)),
        Ty::Int {
            bits,
            signed: false,
        } if *bits < 127 => v.modulo(Int::from_i128(1i128 << *bits)),
        _ => v,
    }
}

/// Explicit cast: exact two's-complement wrap to the target width.
fn cast_conv(ty: &Ty, v: Int) -> Int {
    match ty {
        Ty::Int { bits: 1, .. } => v
            .ne(Int::from_i64(0))
            .ite(&Int::from_i64(1), &Int::from_i64(0)),
        Ty::Int { bits, signed } if *bits < 127 => {
            let m = Int::from_i128(1i128 << *bits);
            if *signed {
                let h = Int::from_i128(1i128 << (*bits - 1));
                (v + &h).modulo(&m) - h
            } else {
                v.modulo(m)
            }
        }
        _ => v,
    }
}

fn edge_of(prog: &Program, s: Step) -> Result<EdgeId, SmtError> {
    let e = match s {
        Step::Edge(e) | Step::Enter(e) | Step::Leave(e) => e,
    };
    if prog.graph.edge_weight(e).is_none() {
        return Err(SmtError::InvalidPath(format!("no edge {}", e.index())));
    }
    Ok(e)
}

fn callee_of(prog: &Program, e: EdgeId) -> Result<FuncId, SmtError> {
    match &prog.graph[e].op {
        Op::Call { callee, .. } => Ok(*callee),
        _ => Err(SmtError::InvalidPath(
            "Enter/Leave over a non-call edge".into(),
        )),
    }
}

/// `d` as an integer term. Every cast in this module is of a term it built with the
/// sort it casts to (a symbol declared with it, a `select` from an array of it), so
/// z3's check cannot fail.
#[allow(clippy::expect_used)] // the sort is this module's own, see above
fn int_of(d: &Dynamic) -> Int {
    d.as_int().expect("a term of sort Int")
}

/// `d` as an array term (see [`int_of`]).
#[allow(clippy::expect_used)] // the sort is this module's own
fn array_of(d: &Dynamic) -> Array {
    d.as_array().expect("a term of an array sort")
}

/// `d` as a Boolean term (see [`int_of`]).
#[allow(clippy::expect_used)] // the sort is this module's own
fn bool_of(d: &Dynamic) -> Bool {
    d.as_bool().expect("a term of sort Bool")
}
