//! A concrete interpreter of the CFA: random simulation, replay of counterexamples.
//!
//! The heap is a real object model: every allocation is a fresh object with cells at
//! byte offsets (the flattened field layout), pointers are `(object, byte offset)`
//! pairs, so `&p->f`, `*pp = q` and embedded structs are exact. NULL dereference, use
//! after free, double free, invalid free and dereference of a garbage pointer are
//! detected and end the run with [`Outcome::MemError`]. Integers are 64-bit and wrap
//! to the width of the variable they are stored in.
//!
//! Guarantees:
//! - [`replay_path`] executes exactly the given steps or reports where the path and
//!   the program disagree ([`Outcome::Diverged`]); it reaches [`Outcome::Error`] only
//!   if the final location is an error location, so a counterexample that replays is
//!   a real execution of the CFA.
//! - [`run_random`] is deterministic in its seed.
//! - No input program makes the interpreter panic; unsupported situations end the run
//!   with [`Outcome::Stuck`] and a reason.

use crate::cfa::{
    Access, AllocKind, BinOp, EdgeId, Expr, Inputs, LocKind, Node, Op, Program, SrcLoc, Step, Ty,
    UnOp, VarId,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

mod heap_end;
pub use heap_end::{replay_to_end, run_random_to_end, violated_subproperty, HeapAtEnd};

/// Limits of one run.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Maximum number of steps before the run ends with [`Outcome::StepLimit`].
    pub max_steps: usize,
    /// Treat every heap allocation as successful.
    pub malloc_never_fails: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 100_000,
            malloc_never_fails: false,
        }
    }
}

/// A memory-safety violation found by the interpreter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MemErrorKind {
    NullDeref,
    UseAfterFree,
    DoubleFree,
    InvalidFree,
    /// Dereference of a pointer that points to no object (uninitialised garbage).
    InvalidDeref,
    /// Access outside the cells of the object (wrong offset or type).
    OutOfBounds,
    /// A call through a function pointer that is NULL or not the address of a
    /// function of its type (a [`LocKind::InvalidCall`] target).
    InvalidCall,
    /// Heap memory lost or left allocated at a leak check (a [`LocKind::MemLeak`]
    /// target reached by a replay; the violation of a memory property, not undefined
    /// behaviour).
    Leak,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// An error location was reached.
    Error { node: usize, src: SrcLoc },
    /// The program terminated normally (`main` returned, `exit`, `abort`).
    Exit,
    /// An `assume` (e.g. `__VERIFIER_assume`) blocked every continuation.
    Blocked { src: SrcLoc },
    /// A memory-safety violation.
    MemError { kind: MemErrorKind, src: SrcLoc },
    /// A division (`/` or `%`) by zero.
    DivByZero { src: SrcLoc },
    /// A call deeper than the recursion bound (a [`LocKind::RecursionBound`] target):
    /// the run is not followed further.
    RecursionBound { src: SrcLoc },
    /// A step the front end does not model (a [`LocKind::Unmodelled`] target): the run
    /// is not followed further.
    Unmodelled { src: SrcLoc },
    /// The step limit was hit.
    StepLimit,
    /// Replay only: the path does not match the program under the given inputs.
    Diverged { step: usize, reason: String },
    /// The interpreter cannot continue (e.g. division by zero, unsupported value).
    Stuck { src: SrcLoc, reason: String },
}

impl Outcome {
    /// True if the run reached an error location.
    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Error { .. })
    }
    /// True if the run ended in undefined behaviour (every [`MemErrorKind`]: invalid
    /// dereference, use after free, double or invalid free; division by zero), after
    /// which C allows anything, `reach_error()` included.
    pub fn is_undefined_behaviour(&self) -> bool {
        match self {
            Outcome::MemError { kind, .. } => *kind != MemErrorKind::Leak,
            Outcome::DivByZero { .. } => true,
            _ => false,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Error { src, .. } => write!(f, "error location reached at {src}"),
            Outcome::Exit => write!(f, "terminated normally"),
            Outcome::Blocked { src } => write!(f, "blocked by an assumption at {src}"),
            Outcome::MemError { kind, src } => write!(f, "memory error {kind:?} at {src}"),
            Outcome::DivByZero { src } => write!(f, "division by zero at {src}"),
            Outcome::RecursionBound { src } => {
                write!(f, "call deeper than the recursion bound at {src}")
            }
            Outcome::Unmodelled { src } => {
                write!(
                    f,
                    "a step outside the model (an array address out of range) at {src}"
                )
            }
            Outcome::StepLimit => write!(f, "step limit reached"),
            Outcome::Diverged { step, reason } => {
                write!(f, "replay diverged at step {step}: {reason}")
            }
            Outcome::Stuck { src, reason } => write!(f, "stuck at {src}: {reason}"),
        }
    }
}

/// The result of one run: how it ended, the steps taken, the nondeterministic choices
/// made (replayable with [`replay_path`]) and notes (values chosen, per step index).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Run {
    pub outcome: Outcome,
    pub trace: Vec<Step>,
    pub inputs: Inputs,
    /// (index into `trace`, text) for steps that made a choice or are worth showing.
    pub notes: Vec<(usize, String)>,
}

/// A concrete pointer: NULL, a place inside a live or dead object, or garbage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Ptr {
    Null,
    Obj {
        obj: u32,
        off: u64,
    },
    /// An arbitrary (uninitialised or nondeterministic) non-NULL pointer.
    Garbage(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    Int(i64),
    Ptr(Ptr),
}

impl Val {
    fn truthy(self) -> bool {
        match self {
            Val::Int(n) => n != 0,
            Val::Ptr(p) => p != Ptr::Null,
        }
    }
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Int(n) => write!(f, "{n}"),
            Val::Ptr(Ptr::Null) => write!(f, "NULL"),
            Val::Ptr(Ptr::Obj { obj, off: 0 }) => write!(f, "&obj{obj}"),
            Val::Ptr(Ptr::Obj { obj, off }) => write!(f, "&obj{obj}+{off}"),
            Val::Ptr(Ptr::Garbage(n)) => write!(f, "garbage#{n}"),
        }
    }
}

struct Object {
    kind: AllocKind,
    /// The struct type it was allocated as (`None`: another pointee type).
    of: Option<crate::cfa::StructId>,
    live: bool,
    /// Cells by byte offset; a missing cell of a known offset is uninitialised.
    cells: BTreeMap<u64, Val>,
    /// Offsets and types of the cells this object has (its layout).
    layout: BTreeMap<u64, Ty>,
}

struct Frame {
    call: EdgeId,
    saved: Vec<(VarId, Val)>,
}

/// Where the next choice comes from.
enum Source<'a> {
    Random(SmallRng, BTreeMap<EdgeId, u32>),
    Given {
        inputs: &'a Inputs,
        nondet: usize,
        alloc: usize,
    },
    /// Values chosen by the caller per `Nondet` edge (`None`: a random one).
    Oracle(Oracle<'a>, SmallRng, BTreeMap<EdgeId, u32>),
}

/// The caller's choice for a `Nondet` edge of [`run_oracle`] (`None`: a random value).
pub type Oracle<'a> = &'a mut dyn FnMut(EdgeId) -> Option<i64>;

/// A random choice for `edge`: per call site biased like SV-COMP's validation harness
/// (a site returns non-zero with probability 25/50/75/95 %, chosen once per run).
fn random_choice(rng: &mut SmallRng, bias: &mut BTreeMap<EdgeId, u32>, edge: EdgeId) -> i64 {
    let pct = *bias
        .entry(edge)
        .or_insert_with(|| [25, 50, 75, 95][rng.gen_range(0..4)]);
    if rng.gen_range(0..100) >= pct {
        0
    } else if rng.gen_range(0..10) == 0 {
        rng.gen_range(-1000..1000)
    } else {
        rng.gen_range(1..=4)
    }
}

struct Machine<'a> {
    prog: &'a Program,
    limits: &'a Limits,
    vars: Vec<Val>,
    objects: Vec<Object>,
    stack: Vec<Frame>,
    node: Node,
    source: Source<'a>,
    run: Run,
    garbage: u32,
}

/// Why execution of a step could not complete.
enum Stop {
    Outcome(Outcome),
}

type Res<T> = Result<T, Stop>;

fn stop<T>(o: Outcome) -> Res<T> {
    Err(Stop::Outcome(o))
}

impl<'a> Machine<'a> {
    /// A machine taking its choices from `inputs`, from the first one on.
    pub(crate) fn given(prog: &'a Program, limits: &'a Limits, inputs: &'a Inputs) -> Self {
        Machine::new(
            prog,
            limits,
            Source::Given {
                inputs,
                nondet: 0,
                alloc: 0,
            },
        )
    }

    fn new(prog: &'a Program, limits: &'a Limits, source: Source<'a>) -> Self {
        let vars = prog
            .vars
            .iter()
            .map(|v| {
                if v.ty.is_ptr() {
                    Val::Ptr(Ptr::Null)
                } else {
                    Val::Int(0)
                }
            })
            .collect();
        Machine {
            prog,
            limits,
            vars,
            objects: Vec::new(),
            stack: Vec::new(),
            node: prog.entry,
            source,
            run: Run {
                outcome: Outcome::Exit,
                trace: Vec::new(),
                inputs: Inputs::default(),
                notes: Vec::new(),
            },
            garbage: 0,
        }
    }

    fn note(&mut self, text: String) {
        let idx = self.run.trace.len();
        self.run.notes.push((idx, text));
    }

    fn next_nondet(&mut self, edge: EdgeId, ty: &Ty) -> Res<i64> {
        let (lo, hi) = ty
            .int_range()
            .unwrap_or((i64::MIN as i128, i64::MAX as i128));
        let v = match &mut self.source {
            Source::Random(rng, bias) => random_choice(rng, bias, edge),
            Source::Oracle(f, rng, bias) => match f(edge) {
                Some(v) => v,
                None => random_choice(rng, bias, edge),
            },
            Source::Given { inputs, nondet, .. } => {
                let Some(v) = inputs.nondet.get(*nondet) else {
                    let step = self.run.trace.len();
                    return stop(Outcome::Diverged {
                        step,
                        reason: "nondeterministic inputs exhausted".into(),
                    });
                };
                *nondet += 1;
                *v
            }
        };
        let v = (v as i128).clamp(lo, hi) as i64;
        self.run.inputs.nondet.push(v);
        Ok(v)
    }

    fn next_alloc_null(&mut self) -> Res<bool> {
        let null = if self.limits.malloc_never_fails || self.prog.malloc_never_fails {
            false
        } else {
            match &mut self.source {
                Source::Random(rng, _) | Source::Oracle(_, rng, _) => rng.gen_range(0..100) < 2,
                Source::Given { inputs, alloc, .. } => {
                    let n = inputs.alloc_null.get(*alloc).copied().unwrap_or(false);
                    *alloc += 1;
                    n
                }
            }
        };
        self.run.inputs.alloc_null.push(null);
        Ok(null)
    }

    fn eval(&self, e: &Expr, src: SrcLoc) -> Res<Val> {
        Ok(match e {
            Expr::Int(n) => Val::Int(*n),
            Expr::Null => Val::Ptr(Ptr::Null),
            Expr::Var(v) => self.vars[*v],
            Expr::Cast(ty, inner) => {
                let v = self.eval(inner, src)?;
                match (ty, v) {
                    (Ty::Int { .. }, Val::Int(n)) => Val::Int(wrap(n, ty)),
                    (Ty::Ptr(_), Val::Ptr(p)) => Val::Ptr(p),
                    (Ty::Ptr(_), Val::Int(0)) => Val::Ptr(Ptr::Null),
                    (Ty::Int { .. }, Val::Ptr(p)) => Val::Int((p != Ptr::Null) as i64),
                    _ => {
                        return stop(Outcome::Stuck {
                            src,
                            reason: "unsupported cast".into(),
                        })
                    }
                }
            }
            Expr::Unary(op, inner) => {
                let v = self.eval(inner, src)?;
                match (op, v) {
                    (UnOp::Not, v) => Val::Int(!v.truthy() as i64),
                    (UnOp::Neg, Val::Int(n)) => Val::Int(n.wrapping_neg()),
                    (UnOp::BitNot, Val::Int(n)) => Val::Int(!n),
                    _ => {
                        return stop(Outcome::Stuck {
                            src,
                            reason: "arithmetic on a pointer".into(),
                        })
                    }
                }
            }
            Expr::Binary(op, a, b) => {
                let (x, y) = (self.eval(a, src)?, self.eval(b, src)?);
                match (x, y) {
                    (Val::Int(x), Val::Int(y)) => Val::Int(int_binop(*op, x, y, src)?),
                    (x, y) => {
                        let (p, q) = (as_ptr(x), as_ptr(y));
                        let (Some(p), Some(q)) = (p, q) else {
                            return stop(Outcome::Stuck {
                                src,
                                reason: "pointer/integer mix".into(),
                            });
                        };
                        let r = match op {
                            BinOp::Eq => p == q,
                            BinOp::Ne => p != q,
                            BinOp::Lt => p < q,
                            BinOp::Le => p <= q,
                            BinOp::Gt => p > q,
                            BinOp::Ge => p >= q,
                            _ => {
                                return stop(Outcome::Stuck {
                                    src,
                                    reason: "pointer arithmetic".into(),
                                })
                            }
                        };
                        Val::Int(r as i64)
                    }
                }
            }
        })
    }

    fn assign(&mut self, dst: VarId, v: Val) {
        let ty = &self.prog.vars[dst].ty;
        self.vars[dst] = match (ty, v) {
            (Ty::Int { .. }, Val::Int(n)) => Val::Int(wrap(n, ty)),
            (Ty::Int { .. }, Val::Ptr(p)) => Val::Int((p != Ptr::Null) as i64),
            (_, Val::Int(0)) => Val::Ptr(Ptr::Null),
            (_, v) => v,
        };
    }

    /// The object and byte offset a pointer-typed access `p (+ field offset)` touches.
    fn cell(&self, p: Val, extra: u64, src: SrcLoc) -> Res<(usize, u64)> {
        match p {
            Val::Ptr(Ptr::Obj { obj, off }) => {
                let o = &self.objects[obj as usize];
                if !o.live {
                    return stop(Outcome::MemError {
                        kind: MemErrorKind::UseAfterFree,
                        src,
                    });
                }
                let at = off + extra;
                if !o.layout.contains_key(&at) {
                    return stop(Outcome::MemError {
                        kind: MemErrorKind::OutOfBounds,
                        src,
                    });
                }
                Ok((obj as usize, at))
            }
            Val::Ptr(Ptr::Null) | Val::Int(0) => stop(Outcome::MemError {
                kind: MemErrorKind::NullDeref,
                src,
            }),
            _ => stop(Outcome::MemError {
                kind: MemErrorKind::InvalidDeref,
                src,
            }),
        }
    }

    fn load(&mut self, obj: usize, at: u64) -> Val {
        match self.objects[obj].cells.get(&at) {
            Some(v) => *v,
            None => {
                // Uninitialised memory: the value the inputs give for this step (a
                // path model's), else zero (documented; sound for replay because a
                // replay that depends on another value diverges rather than lying)
                let step = self.run.trace.len().saturating_sub(1);
                let given = match &self.source {
                    Source::Given { inputs, .. } => inputs.uninit_loads.get(&step).copied(),
                    _ => None,
                };
                let v = given.unwrap_or(0);
                if given.is_some() {
                    self.run.inputs.uninit_loads.insert(step, v);
                }
                self.note(format!(
                    "read of uninitialised cell obj{obj}+{at} (taken as {v})"
                ));
                match &self.objects[obj].layout[&at] {
                    Ty::Ptr(_) if v == 0 => Val::Ptr(Ptr::Null),
                    Ty::Ptr(_) => {
                        self.garbage += 1;
                        Val::Ptr(Ptr::Garbage(self.garbage))
                    }
                    _ => Val::Int(v),
                }
            }
        }
    }

    fn alloc(&mut self, pointee: &Ty, kind: AllocKind) -> Ptr {
        let mut layout = BTreeMap::new();
        match pointee {
            Ty::Struct(s) => {
                for f in &self.prog.structs[*s].fields {
                    layout.insert(f.offset, f.ty.clone());
                }
            }
            Ty::Int { .. } | Ty::Ptr(_) => {
                layout.insert(0, pointee.clone());
            }
            Ty::Void => {}
        }
        let mut cells = BTreeMap::new();
        if matches!(kind, AllocKind::Heap { zeroed: true }) {
            for (off, ty) in &layout {
                cells.insert(
                    *off,
                    if ty.is_ptr() {
                        Val::Ptr(Ptr::Null)
                    } else {
                        Val::Int(0)
                    },
                );
            }
        }
        self.objects.push(Object {
            kind,
            of: match pointee {
                Ty::Struct(s) => Some(*s),
                _ => None,
            },
            live: true,
            cells,
            layout,
        });
        Ptr::Obj {
            obj: (self.objects.len() - 1) as u32,
            off: 0,
        }
    }

    /// Executes the operation of an intraprocedural edge. Returns false if an `Assume`
    /// does not hold.
    fn exec_op(&mut self, edge: EdgeId, op: &Op, src: SrcLoc) -> Res<bool> {
        match op {
            Op::Skip | Op::Error | Op::Halt => {}
            Op::Assign { dst, src: e } => {
                let v = self.eval(e, src)?;
                self.assign(*dst, v);
            }
            Op::Nondet { dst } => {
                let ty = self.prog.vars[*dst].ty.clone();
                if ty.is_ptr() {
                    // A nondeterministic pointer: NULL or garbage, chosen by an int input.
                    let n = self.next_nondet(edge, &Ty::INT)?;
                    let v = if n == 0 {
                        Ptr::Null
                    } else {
                        self.garbage += 1;
                        Ptr::Garbage(self.garbage)
                    };
                    self.vars[*dst] = Val::Ptr(v);
                } else {
                    let n = self.next_nondet(edge, &ty)?;
                    self.assign(*dst, Val::Int(n));
                    self.note(format!("{} = {}", self.prog.vars[*dst].name, n));
                }
            }
            Op::Load { dst, ptr, field } => {
                let off = self.prog.field(*field).offset;
                let (o, at) = self.cell(self.vars[*ptr], off, src)?;
                let v = self.load(o, at);
                self.assign(*dst, v);
            }
            Op::Store { ptr, field, src: e } => {
                let off = self.prog.field(*field).offset;
                let v = self.eval(e, src)?;
                let (o, at) = self.cell(self.vars[*ptr], off, src)?;
                self.objects[o].cells.insert(at, v);
            }
            Op::FieldAddr { dst, ptr, field } => {
                let off = self.prog.field(*field).offset;
                // Computing &p->f requires p to point to a live object (C: p->f is an lvalue).
                let (o, at) = self.cell(self.vars[*ptr], off, src)?;
                self.vars[*dst] = Val::Ptr(Ptr::Obj {
                    obj: o as u32,
                    off: at,
                });
            }
            Op::LoadIndirect { dst, ptr } => {
                let (o, at) = self.cell(self.vars[*ptr], 0, src)?;
                let v = self.load(o, at);
                self.assign(*dst, v);
            }
            Op::StoreIndirect { ptr, src: e } => {
                let v = self.eval(e, src)?;
                let (o, at) = self.cell(self.vars[*ptr], 0, src)?;
                self.objects[o].cells.insert(at, v);
            }
            Op::Alloc {
                dst, pointee, kind, ..
            } => {
                let null = matches!(kind, AllocKind::Heap { .. }) && self.next_alloc_null()?;
                let p = if null {
                    Ptr::Null
                } else {
                    self.alloc(pointee, *kind)
                };
                self.vars[*dst] = Val::Ptr(p);
                self.note(format!("{} = {}", self.prog.vars[*dst].name, Val::Ptr(p)));
            }
            Op::Free { ptr } => match self.vars[*ptr] {
                Val::Ptr(Ptr::Null) | Val::Int(0) => {}
                Val::Ptr(Ptr::Obj { obj, off: 0 }) => {
                    let o = &mut self.objects[obj as usize];
                    if !matches!(o.kind, AllocKind::Heap { .. }) {
                        return stop(Outcome::MemError {
                            kind: MemErrorKind::InvalidFree,
                            src,
                        });
                    }
                    if !o.live {
                        return stop(Outcome::MemError {
                            kind: MemErrorKind::DoubleFree,
                            src,
                        });
                    }
                    o.live = false;
                }
                _ => {
                    return stop(Outcome::MemError {
                        kind: MemErrorKind::InvalidFree,
                        src,
                    })
                }
            },
            Op::Assume { cond } => return Ok(self.eval(cond, src)?.truthy()),
            // taken iff the heap leaks now (a free run never takes a leak check)
            Op::AssumeLeak { check, of } => return Ok(self.leaks(*check, *of)),
            // taken iff an access through `ptr` would not reach a live object: a
            // dangling (freed) or garbage pointer (NULL is the other check's)
            Op::AssumeInvalid { ptr, access } => {
                return Ok(match self.vars[*ptr] {
                    Val::Ptr(Ptr::Null) | Val::Int(0) => false,
                    Val::Ptr(Ptr::Obj { obj, off }) => {
                        let o = &self.objects[obj as usize];
                        let ok = o.live
                            && match access {
                                Access::Struct(_) => off == 0,
                                Access::Cell => o.layout.contains_key(&off),
                                Access::Free => {
                                    off == 0 && matches!(o.kind, AllocKind::Heap { .. })
                                }
                            };
                        !ok
                    }
                    Val::Ptr(Ptr::Garbage(_)) | Val::Int(_) => true,
                })
            }
            Op::Call { .. } => {
                return stop(Outcome::Stuck {
                    src,
                    reason: "call edge executed as a plain edge".into(),
                })
            }
        }
        Ok(true)
    }

    fn enter(&mut self, edge: EdgeId) -> Res<()> {
        let e = &self.prog.graph[edge];
        let Op::Call { callee, args, .. } = &e.op else {
            return stop(Outcome::Stuck {
                src: e.src,
                reason: "enter on a non-call edge".into(),
            });
        };
        let f = &self.prog.functions[*callee];
        let vals = args
            .iter()
            .map(|a| self.eval(a, e.src))
            .collect::<Res<Vec<_>>>()?;
        let saved = f
            .params
            .iter()
            .chain(f.locals.iter())
            .map(|v| (*v, self.vars[*v]))
            .collect();
        self.stack.push(Frame { call: edge, saved });
        for (p, v) in f.params.iter().zip(vals) {
            self.assign(*p, v);
        }
        self.node = f.entry;
        Ok(())
    }

    fn leave(&mut self) -> Res<EdgeId> {
        let Some(frame) = self.stack.pop() else {
            return stop(Outcome::Exit);
        };
        let e = &self.prog.graph[frame.call];
        let Op::Call { callee, ret, .. } = &e.op else {
            unreachable!("frames are pushed for call edges")
        };
        let rv = self.prog.functions[*callee].ret.map(|r| self.vars[r]);
        for (v, val) in frame.saved {
            self.vars[v] = val;
        }
        if let (Some(dst), Some(v)) = (ret, rv) {
            self.assign(*dst, v);
        }
        let Some((_, target)) = self.prog.graph.edge_endpoints(frame.call) else {
            unreachable!("the call edge was indexed above")
        };
        self.node = target;
        Ok(frame.call)
    }

    /// Runs free (following the program) until it ends.
    fn run_free(&mut self) -> Outcome {
        match self.run_free_inner() {
            Ok(o) | Err(Stop::Outcome(o)) => o,
        }
    }

    fn run_free_inner(&mut self) -> Res<Outcome> {
        for _ in 0..self.limits.max_steps {
            let loc = &self.prog.graph[self.node];
            match loc.kind {
                LocKind::Error => {
                    return Ok(Outcome::Error {
                        node: self.node.index(),
                        src: loc.src,
                    })
                }
                LocKind::Sink => return Ok(Outcome::Exit),
                LocKind::NullDeref => {
                    return Ok(Outcome::MemError {
                        kind: MemErrorKind::NullDeref,
                        src: loc.src,
                    })
                }
                LocKind::DivByZero => return Ok(Outcome::DivByZero { src: loc.src }),
                LocKind::RecursionBound => return Ok(Outcome::RecursionBound { src: loc.src }),
                LocKind::Unmodelled => return Ok(Outcome::Unmodelled { src: loc.src }),
                LocKind::InvalidDeref => {
                    return Ok(Outcome::MemError {
                        kind: MemErrorKind::InvalidDeref,
                        src: loc.src,
                    })
                }
                LocKind::InvalidFree => {
                    return Ok(Outcome::MemError {
                        kind: MemErrorKind::InvalidFree,
                        src: loc.src,
                    })
                }
                LocKind::InvalidCall => {
                    return Ok(Outcome::MemError {
                        kind: MemErrorKind::InvalidCall,
                        src: loc.src,
                    })
                }
                _ => {}
            }
            // a run of its own never takes a leak check (no location's only way on)
            let edges: Vec<(EdgeId, Node)> = self
                .prog
                .successors(self.node)
                .filter(|(_, _, w)| !matches!(w.op, Op::AssumeLeak { .. }))
                .map(|(e, t, _)| (e, t))
                .collect();
            if edges.is_empty() {
                if self.stack.is_empty() {
                    return Ok(Outcome::Exit);
                }
                let call = self.leave()?;
                self.run.trace.push(Step::Leave(call));
                continue;
            }
            // petgraph lists edges newest first; take them in creation order.
            let mut taken = false;
            for (e, target) in edges.into_iter().rev() {
                let edge = &self.prog.graph[e];
                if let Op::Call { .. } = edge.op {
                    self.enter(e)?;
                    self.run.trace.push(Step::Enter(e));
                    taken = true;
                    break;
                }
                if let Op::Assume { cond } = &edge.op {
                    if !self.eval(cond, edge.src)?.truthy() {
                        continue;
                    }
                }
                let (op, src) = (edge.op.clone(), edge.src);
                self.run.trace.push(Step::Edge(e));
                self.exec_op(e, &op, src)?;
                self.node = target;
                taken = true;
                break;
            }
            if !taken {
                return Ok(Outcome::Blocked {
                    src: self.prog.graph[self.node].src,
                });
            }
        }
        Ok(Outcome::StepLimit)
    }

    fn replay(&mut self, path: &[Step]) -> Outcome {
        match self.replay_inner(path) {
            Ok(o) | Err(Stop::Outcome(o)) => o,
        }
    }

    fn replay_inner(&mut self, path: &[Step]) -> Res<Outcome> {
        self.replay_steps(path)?;
        let loc = &self.prog.graph[self.node];
        Ok(if loc.kind == LocKind::Error {
            Outcome::Error {
                node: self.node.index(),
                src: loc.src,
            }
        } else if loc.kind == LocKind::NullDeref {
            Outcome::MemError {
                kind: MemErrorKind::NullDeref,
                src: loc.src,
            }
        } else if loc.kind == LocKind::DivByZero {
            Outcome::DivByZero { src: loc.src }
        } else if loc.kind == LocKind::RecursionBound {
            Outcome::RecursionBound { src: loc.src }
        } else if loc.kind == LocKind::Unmodelled {
            Outcome::Unmodelled { src: loc.src }
        } else if loc.kind == LocKind::InvalidDeref {
            Outcome::MemError {
                kind: MemErrorKind::InvalidDeref,
                src: loc.src,
            }
        } else if loc.kind == LocKind::InvalidFree {
            Outcome::MemError {
                kind: MemErrorKind::InvalidFree,
                src: loc.src,
            }
        } else if loc.kind == LocKind::InvalidCall {
            Outcome::MemError {
                kind: MemErrorKind::InvalidCall,
                src: loc.src,
            }
        } else if loc.kind == LocKind::MemLeak {
            // the path's last step, the leak check, held
            Outcome::MemError {
                kind: MemErrorKind::Leak,
                src: loc.src,
            }
        } else {
            Outcome::Diverged {
                step: path.len(),
                reason: "path ends outside an error location".into(),
            }
        })
    }

    /// Executes exactly the steps of `path` (a divergence or an error of a step stops).
    fn replay_steps(&mut self, path: &[Step]) -> Res<()> {
        let diverged = |step: usize, reason: &str| {
            stop(Outcome::Diverged {
                step,
                reason: reason.into(),
            })
        };
        for (i, step) in path.iter().enumerate() {
            let edge = match step {
                Step::Edge(e) | Step::Enter(e) => *e,
                Step::Leave(_) => {
                    if self.prog.successors(self.node).next().is_some() {
                        return diverged(i, "leave before the callee's exit");
                    }
                    let call = self.leave()?;
                    if Step::Leave(call) != *step {
                        return diverged(i, "leave does not match the call stack");
                    }
                    self.run.trace.push(*step);
                    continue;
                }
            };
            let Some((from, to)) = self.prog.graph.edge_endpoints(edge) else {
                return diverged(i, "no such edge");
            };
            if from != self.node {
                return diverged(i, "edge does not start at the current location");
            }
            let e = &self.prog.graph[edge];
            let is_call = matches!(e.op, Op::Call { .. });
            match (step, is_call) {
                (Step::Enter(_), true) => {
                    self.enter(edge)?;
                    self.run.trace.push(*step);
                }
                (Step::Edge(_), false) => {
                    let (op, src) = (e.op.clone(), e.src);
                    self.run.trace.push(*step);
                    if !self.exec_op(edge, &op, src)? {
                        return diverged(i, "assumption does not hold");
                    }
                    self.node = to;
                }
                _ => return diverged(i, "step kind does not match the edge"),
            }
        }
        Ok(())
    }
}

fn as_ptr(v: Val) -> Option<Ptr> {
    match v {
        Val::Ptr(p) => Some(p),
        Val::Int(0) => Some(Ptr::Null),
        Val::Int(_) => None,
    }
}

fn int_binop(op: BinOp, x: i64, y: i64, src: SrcLoc) -> Res<i64> {
    use BinOp::*;
    Ok(match op {
        Add => x.wrapping_add(y),
        Sub => x.wrapping_sub(y),
        Mul => x.wrapping_mul(y),
        Div | Rem if y == 0 => return stop(Outcome::DivByZero { src }),
        Div => x.wrapping_div(y),
        Rem => x.wrapping_rem(y),
        Shl => x.wrapping_shl(y as u32),
        Shr => x.wrapping_shr(y as u32),
        BitAnd => x & y,
        BitOr => x | y,
        BitXor => x ^ y,
        Eq => (x == y) as i64,
        Ne => (x != y) as i64,
        Lt => (x < y) as i64,
        Le => (x <= y) as i64,
        Gt => (x > y) as i64,
        Ge => (x >= y) as i64,
    })
}

/// Wraps an integer to the width and signedness of `ty` (two's complement).
fn wrap(n: i64, ty: &Ty) -> i64 {
    match *ty {
        Ty::Int { bits, signed } if bits < 64 => {
            if bits == 1 {
                return (n != 0) as i64;
            }
            let m = (1i128 << bits) - 1;
            let u = (n as i128) & m;
            if signed && u >= (1i128 << (bits - 1)) {
                (u - (1i128 << bits)) as i64
            } else {
                u as i64
            }
        }
        _ => n,
    }
}

fn finish(mut m: Machine<'_>, outcome: Outcome) -> Run {
    m.run.outcome = outcome;
    m.run
}

/// Runs the program from [`Program::entry`] with random nondeterministic choices
/// (deterministic in `seed`).
pub fn run_random(prog: &Program, seed: u64, limits: &Limits) -> Run {
    let mut m = Machine::new(
        prog,
        limits,
        Source::Random(SmallRng::seed_from_u64(seed), BTreeMap::new()),
    );
    let o = m.run_free();
    finish(m, o)
}

/// The first of `runs` random runs (seeds `0..runs`, see [`run_random`]) that reaches
/// an error location, with its seed. A cheap cross-check of a proof: such a run
/// contradicts SAFE whatever the abstraction says.
pub fn find_error_run(prog: &Program, runs: u64, limits: &Limits) -> Option<(u64, Run)> {
    find_run(prog, runs, limits, Outcome::is_error)
}

/// The first of `runs` random runs (seeds `0..runs`) whose outcome satisfies `pred`.
pub fn find_run(
    prog: &Program,
    runs: u64,
    limits: &Limits,
    pred: impl Fn(&Outcome) -> bool,
) -> Option<(u64, Run)> {
    (0..runs)
        .map(|seed| (seed, run_random(prog, seed, limits)))
        .find(|(_, r)| pred(&r.outcome))
}

/// Runs the program from [`Program::entry`], taking the value of each `Nondet` edge's
/// choice from `oracle` (a random one, deterministic in `seed`, where it has none).
pub fn run_oracle(prog: &Program, seed: u64, limits: &Limits, oracle: Oracle<'_>) -> Run {
    let mut m = Machine::new(
        prog,
        limits,
        Source::Oracle(oracle, SmallRng::seed_from_u64(seed), BTreeMap::new()),
    );
    let o = m.run_free();
    finish(m, o)
}

/// Runs the program from [`Program::entry`] following its control flow, taking the
/// nondeterministic choices from `inputs` (ends with `Diverged` if they run out).
pub fn run_inputs(prog: &Program, inputs: &Inputs, limits: &Limits) -> Run {
    let mut m = Machine::given(prog, limits, inputs);
    let o = m.run_free();
    finish(m, o)
}

/// Replays `path` from [`Program::entry`] with the choices in `inputs`. Ends with
/// [`Outcome::Error`] iff every step executes as given and the path ends at an error
/// location, with [`Outcome::MemError`] of kind [`MemErrorKind::NullDeref`] at the
/// target of a NULL-dereference check ([`Program::add_null_deref_checks`]) and with
/// [`Outcome::DivByZero`] at that of a division-by-zero check
/// ([`Program::add_div_by_zero_checks`]); otherwise
/// says where it diverged (or the memory error it hit).
pub fn replay_path(prog: &Program, path: &[Step], inputs: &Inputs, limits: &Limits) -> Run {
    let mut m = Machine::given(prog, limits, inputs);
    let o = m.replay(path);
    finish(m, o)
}

/// One step as `line:col op` (a call as `call f(..)`, a return as `return from ..`).
pub fn render_step(prog: &Program, step: &Step) -> String {
    let (e, prefix) = match step {
        Step::Edge(e) => (*e, ""),
        Step::Enter(e) => (*e, "call "),
        Step::Leave(e) => (*e, "return from "),
    };
    let edge = &prog.graph[e];
    format!(
        "{:>5}:{:<3} {}{}",
        edge.src.line,
        edge.src.col,
        prefix,
        prog.op_str(&edge.op)
    )
}

/// A path, one [`render_step`] per line (for logs of error paths).
pub fn render_path(prog: &Program, path: &[Step]) -> String {
    path.iter()
        .map(|s| render_step(prog, s))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Renders a run's trace, one line per step: `line:col  op  [notes]`.
pub fn render_trace(prog: &Program, run: &Run) -> String {
    let mut out = String::new();
    let mut notes = run.notes.iter().peekable();
    for (i, step) in run.trace.iter().enumerate() {
        let mut line = render_step(prog, step);
        while let Some((j, text)) = notes.peek() {
            if *j > i + 1 {
                break;
            }
            line.push_str(&format!("   [{text}]"));
            notes.next();
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfa::{FieldDef, FieldRef, Function, LocKind, Scope, StructDef};

    /// struct node { int data; struct node *next; } and a `main` built by `body`.
    fn program(body: impl FnOnce(&mut Program, Node, Node, VarId, VarId)) -> Program {
        let mut p = Program::new("test.c");
        let node_ptr = Ty::Ptr(Box::new(Ty::Struct(0)));
        p.structs.push(StructDef {
            name: "node".into(),
            fields: vec![
                FieldDef {
                    name: "data".into(),
                    ty: Ty::INT,
                    offset: 0,
                },
                FieldDef {
                    name: "next".into(),
                    ty: node_ptr.clone(),
                    offset: 4,
                },
            ],
            size: 8,
        });
        let x = p.add_var("main::x", node_ptr.clone(), Scope::Local(0));
        let y = p.add_var("main::y", node_ptr, Scope::Local(0));
        let entry = p.add_loc(0, SrcLoc::default(), LocKind::FuncEntry);
        let exit = p.add_loc(0, SrcLoc::default(), LocKind::FuncExit);
        p.functions.push(Function {
            name: "main".into(),
            params: vec![],
            locals: vec![x, y],
            ret: None,
            ret_ty: Ty::Void,
            entry,
            exit,
            src: SrcLoc::default(),
        });
        p.entry = entry;
        body(&mut p, entry, exit, x, y);
        p
    }

    const NEXT: FieldRef = FieldRef {
        strukt: 0,
        field: 1,
    };

    fn chain(p: &mut Program, from: Node, ops: Vec<Op>) -> Node {
        let mut cur = from;
        for (i, op) in ops.into_iter().enumerate() {
            let n = p.add_loc(
                0,
                SrcLoc {
                    line: i as u32 + 1,
                    col: 1,
                },
                LocKind::Normal,
            );
            p.add_edge(
                cur,
                n,
                op,
                SrcLoc {
                    line: i as u32 + 1,
                    col: 1,
                },
            );
            cur = n;
        }
        cur
    }

    fn malloc(dst: VarId) -> Op {
        Op::Alloc {
            dst,
            pointee: Ty::Struct(0),
            bytes: Some(8),
            kind: AllocKind::Heap { zeroed: false },
        }
    }

    #[test]
    fn reaches_error_and_replays() {
        let prog = program(|p, entry, _exit, x, y| {
            let n = chain(
                p,
                entry,
                vec![
                    malloc(x),
                    Op::Store {
                        ptr: x,
                        field: NEXT,
                        src: Expr::Null,
                    },
                    Op::Load {
                        dst: y,
                        ptr: x,
                        field: NEXT,
                    },
                    Op::Assume {
                        cond: Expr::bin(BinOp::Eq, Expr::Var(y), Expr::Null),
                    },
                ],
            );
            let err = p.add_loc(0, SrcLoc { line: 9, col: 1 }, LocKind::Error);
            p.add_edge(n, err, Op::Error, SrcLoc { line: 9, col: 1 });
        });
        let limits = Limits {
            malloc_never_fails: true,
            ..Limits::default()
        };
        let run = run_random(&prog, 1, &limits);
        assert!(run.outcome.is_error(), "{:?}", run.outcome);
        let again = replay_path(&prog, &run.trace, &run.inputs, &limits);
        assert!(again.outcome.is_error(), "{:?}", again.outcome);
        // A truncated path does not end at the error location.
        let short = replay_path(&prog, &run.trace[..2], &run.inputs, &limits);
        assert!(matches!(short.outcome, Outcome::Diverged { .. }));
        assert!(render_trace(&prog, &run).contains("main::y = main::x->next"));
    }

    #[test]
    fn detects_memory_errors() {
        let cases: Vec<(Vec<Op>, MemErrorKind)> = vec![
            (
                vec![
                    Op::Assign {
                        dst: 0,
                        src: Expr::Null,
                    },
                    Op::Load {
                        dst: 1,
                        ptr: 0,
                        field: NEXT,
                    },
                ],
                MemErrorKind::NullDeref,
            ),
            (
                vec![malloc(0), Op::Free { ptr: 0 }, Op::Free { ptr: 0 }],
                MemErrorKind::DoubleFree,
            ),
            (
                vec![
                    malloc(0),
                    Op::Free { ptr: 0 },
                    Op::Load {
                        dst: 1,
                        ptr: 0,
                        field: NEXT,
                    },
                ],
                MemErrorKind::UseAfterFree,
            ),
            (
                vec![
                    Op::Nondet { dst: 0 },
                    Op::Assume {
                        cond: Expr::bin(BinOp::Ne, Expr::Var(0), Expr::Null),
                    },
                    Op::Store {
                        ptr: 0,
                        field: NEXT,
                        src: Expr::Null,
                    },
                ],
                MemErrorKind::InvalidDeref,
            ),
        ];
        for (ops, kind) in cases {
            let prog = program(|p, entry, _, _, _| {
                chain(p, entry, ops.clone());
            });
            let limits = Limits {
                malloc_never_fails: true,
                ..Limits::default()
            };
            let mut seen = false;
            for seed in 0..20 {
                if let Outcome::MemError { kind: k, .. } = run_random(&prog, seed, &limits).outcome
                {
                    assert_eq!(k, kind);
                    seen = true;
                }
            }
            assert!(seen, "{kind:?} not detected");
        }
    }

    #[test]
    fn malloc_may_fail_unless_told_otherwise() {
        let prog = program(|p, entry, _, x, _| {
            chain(
                p,
                entry,
                vec![
                    malloc(x),
                    Op::Store {
                        ptr: x,
                        field: NEXT,
                        src: Expr::Null,
                    },
                ],
            );
        });
        let nulls = (0..500)
            .filter(|s| {
                matches!(
                    run_random(&prog, *s, &Limits::default()).outcome,
                    Outcome::MemError {
                        kind: MemErrorKind::NullDeref,
                        ..
                    }
                )
            })
            .count();
        assert!(nulls > 0 && nulls < 50, "{nulls}");
        let never = Limits {
            malloc_never_fails: true,
            ..Limits::default()
        };
        assert!((0..200).all(|s| run_random(&prog, s, &never).outcome == Outcome::Exit));
    }

    #[test]
    fn field_addresses_and_indirect_stores_are_exact() {
        // pp = &x->next; *pp = x; y = x->next; assume(y == x) must hold.
        let prog = program(|p, entry, _, x, y| {
            let pp = p.add_var(
                "main::pp",
                Ty::Ptr(Box::new(Ty::Ptr(Box::new(Ty::Struct(0))))),
                Scope::Local(0),
            );
            let n = chain(
                p,
                entry,
                vec![
                    malloc(x),
                    Op::FieldAddr {
                        dst: pp,
                        ptr: x,
                        field: NEXT,
                    },
                    Op::StoreIndirect {
                        ptr: pp,
                        src: Expr::Var(x),
                    },
                    Op::Load {
                        dst: y,
                        ptr: x,
                        field: NEXT,
                    },
                    Op::Assume {
                        cond: Expr::bin(BinOp::Eq, Expr::Var(y), Expr::Var(x)),
                    },
                ],
            );
            let err = p.add_loc(0, SrcLoc::default(), LocKind::Error);
            p.add_edge(n, err, Op::Error, SrcLoc::default());
        });
        let limits = Limits {
            malloc_never_fails: true,
            ..Limits::default()
        };
        assert!(run_random(&prog, 3, &limits).outcome.is_error());
    }

    #[test]
    fn integers_wrap_to_their_type() {
        assert_eq!(
            wrap(
                256,
                &Ty::Int {
                    bits: 8,
                    signed: false
                }
            ),
            0
        );
        assert_eq!(
            wrap(
                128,
                &Ty::Int {
                    bits: 8,
                    signed: true
                }
            ),
            -128
        );
        assert_eq!(
            wrap(
                -1,
                &Ty::Int {
                    bits: 32,
                    signed: false
                }
            ),
            4294967295
        );
        assert_eq!(
            wrap(
                7,
                &Ty::Int {
                    bits: 1,
                    signed: false
                }
            ),
            1
        );
    }
}
