//! Hand-built straight-line programs and a tiny concrete evaluator for the SMT tests.
#![allow(dead_code)]

use shapemc::cfa::*;
use std::collections::HashMap;

/// `struct node { int data; struct node *succ, *pred; }` and helpers to build one function
/// `main` as a straight line of edges ending in an error location.
pub struct Builder {
    pub prog: Program,
    pub cur: Node,
    pub path: Vec<Step>,
    pub func: FuncId,
}

pub const DATA: FieldRef = FieldRef {
    strukt: 0,
    field: 0,
};
pub const SUCC: FieldRef = FieldRef {
    strukt: 0,
    field: 1,
};
pub const PRED: FieldRef = FieldRef {
    strukt: 0,
    field: 2,
};

pub fn node_ptr() -> Ty {
    Ty::Ptr(Box::new(Ty::Struct(0)))
}

impl Builder {
    pub fn new() -> Builder {
        let mut prog = Program::new("test.c");
        prog.structs.push(StructDef {
            name: "node".into(),
            fields: vec![
                FieldDef {
                    name: "data".into(),
                    ty: Ty::INT,
                    offset: 0,
                },
                FieldDef {
                    name: "succ".into(),
                    ty: node_ptr(),
                    offset: 4,
                },
                FieldDef {
                    name: "pred".into(),
                    ty: node_ptr(),
                    offset: 8,
                },
            ],
            size: 12,
        });
        let entry = prog.add_loc(0, SrcLoc::default(), LocKind::FuncEntry);
        let exit = prog.add_loc(0, SrcLoc::default(), LocKind::FuncExit);
        prog.functions.push(Function {
            name: "main".into(),
            params: vec![],
            locals: vec![],
            ret: None,
            ret_ty: Ty::Void,
            entry,
            exit,
            src: SrcLoc::default(),
        });
        prog.entry = entry;
        Builder {
            prog,
            cur: entry,
            path: vec![],
            func: 0,
        }
    }

    pub fn var(&mut self, name: &str, ty: Ty) -> VarId {
        let v = self.prog.add_var(name, ty, Scope::Local(self.func));
        self.prog.functions[self.func].locals.push(v);
        v
    }

    pub fn op(&mut self, op: Op) -> &mut Self {
        let n = self
            .prog
            .add_loc(self.func, SrcLoc::default(), LocKind::Normal);
        let e = self.prog.add_edge(self.cur, n, op, SrcLoc::default());
        self.path.push(Step::Edge(e));
        self.cur = n;
        self
    }

    pub fn assume(&mut self, cond: Expr) -> &mut Self {
        self.op(Op::Assume { cond })
    }

    pub fn malloc(&mut self, dst: VarId) -> &mut Self {
        self.op(Op::Alloc {
            dst,
            pointee: Ty::Struct(0),
            bytes: Some(12),
            kind: AllocKind::Heap { zeroed: false },
        })
    }

    pub fn error(&mut self) -> (Program, Vec<Step>) {
        let n = self
            .prog
            .add_loc(self.func, SrcLoc::default(), LocKind::Error);
        let e = self
            .prog
            .add_edge(self.cur, n, Op::Error, SrcLoc::default());
        self.path.push(Step::Edge(e));
        self.cur = n;
        (self.prog.clone(), self.path.clone())
    }
}

pub fn v(x: VarId) -> Expr {
    Expr::Var(x)
}
pub fn eq(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Eq, a, b)
}
pub fn ne(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Ne, a, b)
}

/// Replays a path with the concrete interpreter; true if it reaches the error location.
pub fn replays_to_error(prog: &Program, path: &[Step], inputs: &Inputs) -> bool {
    let limits = shapemc::interp::Limits {
        malloc_never_fails: prog.malloc_never_fails,
        ..Default::default()
    };
    let run = shapemc::interp::replay_path(prog, path, inputs, &limits);
    run.outcome.is_error()
}

/// Outcome of the tiny evaluator.
#[derive(Debug, PartialEq, Eq)]
pub enum Eval {
    ReachedError,
    AssumeFailed(usize),
    MemoryError(usize),
    OutOfInputs(usize),
    Unsupported(usize),
}

/// Concretely executes a straight-line path (only `Edge` steps) with the given inputs,
/// using the same address numbering as the encoder (k-th allocation at k * 4096).
pub fn eval_path(prog: &Program, path: &[Step], inputs: &Inputs) -> Eval {
    let mut vars: HashMap<VarId, i64> = HashMap::new();
    let mut heap: HashMap<(i64, usize), i64> = HashMap::new();
    let mut valid: HashMap<i64, (usize, bool)> = HashMap::new();
    let mut nd = inputs.nondet.iter();
    let mut an = inputs.alloc_null.iter();
    let mut nalloc = 0i64;
    for (i, s) in path.iter().enumerate() {
        let Step::Edge(e) = s else {
            return Eval::Unsupported(i);
        };
        macro_rules! read {
            ($x:expr) => {{
                let x: VarId = $x;
                match vars.get(&x) {
                    Some(v) => *v,
                    None => match nd.next() {
                        Some(v) => {
                            vars.insert(x, *v);
                            *v
                        }
                        None => return Eval::OutOfInputs(i),
                    },
                }
            }};
        }
        macro_rules! expr {
            ($e:expr) => {{
                let mut ids = vec![];
                $e.vars(&mut ids);
                for x in ids {
                    let _ = read!(x);
                }
                match eval_expr($e, &vars) {
                    Some(v) => v,
                    None => return Eval::Unsupported(i),
                }
            }};
        }
        match &prog.graph[*e].op {
            Op::Skip | Op::Halt => {}
            Op::Error => return Eval::ReachedError,
            Op::Assign { dst, src } => {
                let x = expr!(src);
                vars.insert(*dst, x);
            }
            Op::Nondet { dst } => match nd.next() {
                Some(x) => {
                    vars.insert(*dst, *x);
                }
                None => return Eval::OutOfInputs(i),
            },
            Op::Load { dst, ptr, field } => {
                let p = read!(*ptr);
                if valid.get(&p).map(|x| x.0) != Some(field.strukt) {
                    return Eval::MemoryError(i);
                }
                let x = heap.get(&(p, field.field)).copied().unwrap_or(0);
                vars.insert(*dst, x);
            }
            Op::Store { ptr, field, src } => {
                let p = read!(*ptr);
                let x = expr!(src);
                if valid.get(&p).map(|x| x.0) != Some(field.strukt) {
                    return Eval::MemoryError(i);
                }
                heap.insert((p, field.field), x);
            }
            Op::Alloc {
                dst, pointee, kind, ..
            } => {
                nalloc += 1;
                let addr = nalloc * 4096;
                let heap_obj = matches!(kind, AllocKind::Heap { .. });
                let null = if heap_obj {
                    match an.next() {
                        Some(b) => *b,
                        None => return Eval::OutOfInputs(i),
                    }
                } else {
                    false
                };
                if null {
                    vars.insert(*dst, 0);
                } else {
                    let tag = match pointee {
                        Ty::Struct(s) => *s,
                        _ => usize::MAX,
                    };
                    valid.insert(addr, (tag, heap_obj));
                    vars.insert(*dst, addr);
                }
            }
            Op::Free { ptr } => {
                let p = read!(*ptr);
                if p != 0 {
                    match valid.get(&p) {
                        Some((_, true)) => {
                            valid.remove(&p);
                        }
                        _ => return Eval::MemoryError(i),
                    }
                }
            }
            Op::Assume { cond } => {
                if expr!(cond) == 0 {
                    return Eval::AssumeFailed(i);
                }
            }
            _ => return Eval::Unsupported(i),
        }
    }
    Eval::AssumeFailed(path.len())
}

fn eval_expr(e: &Expr, vars: &HashMap<VarId, i64>) -> Option<i64> {
    Some(match e {
        Expr::Int(n) => *n,
        Expr::Null => 0,
        Expr::Var(x) => *vars.get(x)?,
        Expr::Unary(UnOp::Neg, a) => eval_expr(a, vars)?.checked_neg()?,
        Expr::Unary(UnOp::Not, a) => (eval_expr(a, vars)? == 0) as i64,
        Expr::Unary(UnOp::BitNot, a) => !eval_expr(a, vars)?,
        Expr::Binary(op, a, b) => {
            let x = eval_expr(a, vars)?;
            let y = eval_expr(b, vars)?;
            match op {
                BinOp::Add => x.checked_add(y)?,
                BinOp::Sub => x.checked_sub(y)?,
                BinOp::Mul => x.checked_mul(y)?,
                BinOp::Eq => (x == y) as i64,
                BinOp::Ne => (x != y) as i64,
                BinOp::Lt => (x < y) as i64,
                BinOp::Le => (x <= y) as i64,
                BinOp::Gt => (x > y) as i64,
                BinOp::Ge => (x >= y) as i64,
                _ => return None,
            }
        }
        Expr::Cast(_, a) => eval_expr(a, vars)?,
    })
}
