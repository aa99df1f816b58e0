//! Hand-built programs and heaps for the explicit-domain tests.

use super::{Addr, Cell, CellKind, CellTy, ExplicitState, Value};
use crate::cfa::*;
use std::collections::BTreeMap;

/// `struct node { int data; struct node *succ, *pred; }` (fields 0, 1, 2).
pub fn node_struct(name: &str, ptrs: &[&str]) -> StructDef {
    let me = Ty::Ptr(Box::new(Ty::Struct(0)));
    let mut fields = vec![FieldDef {
        name: "data".into(),
        ty: Ty::INT,
        offset: 0,
    }];
    for (i, p) in ptrs.iter().enumerate() {
        fields.push(FieldDef {
            name: (*p).into(),
            ty: me.clone(),
            offset: 4 + 4 * i as u64,
        });
    }
    StructDef {
        name: name.into(),
        size: 4 + 4 * ptrs.len() as u64,
        fields,
    }
}

/// A program with one struct (`data` + the given pointer fields, struct id 0) and
/// pointer variables `x0..x{nptr}` plus int variables `i0..i{nint}`; no code.
pub fn heap_prog(ptrs: &[&str], nptr: usize, nint: usize) -> Program {
    let mut p = Program::new("test.c");
    p.structs.push(node_struct("node", ptrs));
    for i in 0..nptr {
        p.add_var(format!("x{i}"), node_ptr(), Scope::Global);
    }
    for i in 0..nint {
        p.add_var(format!("i{i}"), Ty::INT, Scope::Global);
    }
    p
}

/// `struct node *`.
pub fn node_ptr() -> Ty {
    Ty::Ptr(Box::new(Ty::Struct(0)))
}

/// A field of struct 0.
pub fn fr(field: usize) -> FieldRef {
    FieldRef { strukt: 0, field }
}

/// A pointer value to address `a`, or NULL for 0.
pub fn pv(a: Addr) -> Value {
    if a == 0 {
        Value::NULL
    } else {
        Value::ptr(a)
    }
}

/// A heap of struct-0 cells: `cells[i] = (addr, field values)`, variables as given.
pub fn heap(
    prog: &Program,
    vars: &[(VarId, Value)],
    cells: &[(Addr, Vec<Value>)],
) -> ExplicitState {
    let mut v = vec![Value::Top; prog.vars.len()];
    for &(x, val) in vars {
        v[x] = val;
    }
    let mut h = BTreeMap::new();
    for (a, f) in cells {
        h.insert(
            *a,
            Cell {
                ty: CellTy::Struct(0),
                kind: CellKind::Heap,
                fields: f.clone(),
            },
        );
    }
    ExplicitState {
        vars: v.into(),
        heap: h,
        leak: None,
    }
}

/// The paper's Fig. 1(b): `v = {l1 -> 1}`, five cells with data ⊤, `succ` 2..5,0 and
/// `pred` 0..4 (struct fields data, succ, pred; variable 0 is l1).
pub fn fig1b() -> (Program, ExplicitState) {
    let prog = heap_prog(&["succ", "pred"], 1, 0);
    let t = Value::Top;
    let h = heap(
        &prog,
        &[(0, pv(1))],
        &[
            (1, vec![t, pv(2), pv(0)]),
            (2, vec![t, pv(3), pv(1)]),
            (3, vec![t, pv(4), pv(2)]),
            (4, vec![t, pv(5), pv(3)]),
            (5, vec![t, pv(0), pv(4)]),
        ],
    );
    (prog, h)
}

/// Fig. 1(a)'s `alloc_list` as a CFA inside `main` (no calls):
/// `r = malloc; if (!r) exit; r->succ = NULL; r->pred = NULL; p = r;
///  while (nondet) { t = malloc; if (!t) exit; t->succ = NULL; p->succ = t; t->pred = p; p = p->succ; }
///  p = r;`.
/// Variables: 0 r, 1 p, 2 t, 3 c.
pub fn alloc_list_prog() -> Program {
    let mut p = Program::new("alloc_list.c");
    p.structs.push(node_struct("node", &["succ", "pred"]));
    let r = p.add_var("r", node_ptr(), Scope::Local(0));
    let q = p.add_var("p", node_ptr(), Scope::Local(0));
    let t = p.add_var("t", node_ptr(), Scope::Local(0));
    let c = p.add_var("c", Ty::INT, Scope::Local(0));
    let s = SrcLoc::default();
    let n = |p: &mut Program, k| p.add_loc(0, s, k);
    let entry = n(&mut p, LocKind::FuncEntry);
    let exit = n(&mut p, LocKind::FuncExit);
    let sink = n(&mut p, LocKind::Sink);
    let ls: Vec<Node> = (0..13).map(|_| n(&mut p, LocKind::Normal)).collect();
    let alloc = |dst| Op::Alloc {
        dst,
        pointee: Ty::Struct(0),
        bytes: Some(12),
        kind: AllocKind::Heap { zeroed: false },
    };
    let isnull = |x| Expr::bin(BinOp::Eq, Expr::Var(x), Expr::Null);
    let store = |ptr, f, src| Op::Store {
        ptr,
        field: fr(f),
        src,
    };
    let e = |p: &mut Program, a, b, op| {
        p.add_edge(a, b, op, s);
    };
    e(&mut p, entry, ls[0], alloc(r));
    e(&mut p, ls[0], sink, Op::Assume { cond: isnull(r) });
    e(
        &mut p,
        ls[0],
        ls[1],
        Op::Assume {
            cond: isnull(r).negate(),
        },
    );
    e(&mut p, ls[1], ls[2], store(r, 1, Expr::Null));
    e(&mut p, ls[2], ls[3], store(r, 2, Expr::Null));
    e(
        &mut p,
        ls[3],
        ls[4],
        Op::Assign {
            dst: q,
            src: Expr::Var(r),
        },
    );
    // loop head ls[4]
    e(&mut p, ls[4], ls[5], Op::Nondet { dst: c });
    e(
        &mut p,
        ls[5],
        ls[12],
        Op::Assume {
            cond: Expr::bin(BinOp::Eq, Expr::Var(c), Expr::Int(0)),
        },
    );
    // `p = r` after the loop keeps r live in it.
    e(
        &mut p,
        ls[12],
        exit,
        Op::Assign {
            dst: q,
            src: Expr::Var(r),
        },
    );
    e(
        &mut p,
        ls[5],
        ls[6],
        Op::Assume {
            cond: Expr::bin(BinOp::Ne, Expr::Var(c), Expr::Int(0)),
        },
    );
    e(&mut p, ls[6], ls[7], alloc(t));
    e(&mut p, ls[7], sink, Op::Assume { cond: isnull(t) });
    e(
        &mut p,
        ls[7],
        ls[8],
        Op::Assume {
            cond: isnull(t).negate(),
        },
    );
    e(&mut p, ls[8], ls[9], store(t, 1, Expr::Null));
    e(&mut p, ls[9], ls[10], store(q, 1, Expr::Var(t)));
    e(&mut p, ls[10], ls[11], store(t, 2, Expr::Var(q)));
    e(
        &mut p,
        ls[11],
        ls[4],
        Op::Load {
            dst: q,
            ptr: q,
            field: fr(1),
        },
    );
    p.functions.push(Function {
        name: "main".into(),
        params: vec![],
        locals: vec![r, q, t, c],
        ret: None,
        ret_ty: Ty::Void,
        entry,
        exit,
        src: s,
    });
    p.main = 0;
    p.entry = entry;
    p
}

/// The verdict of invariant `inv` with role fields `f` (field indices of struct 0) on
/// all cells of `h`.
pub fn verdict(
    prog: &Program,
    h: &ExplicitState,
    inv: super::invariants::Invariant,
    f: &[usize],
) -> super::invariants::Verdict {
    let b = super::invariants::Binding::new(f.iter().map(|&i| fr(i)).collect());
    super::invariants::check(prog, h, inv, &b, super::invariants::CellScope::All)
}
