use super::*;
use crate::cfa::{AllocKind, Function, LocKind, Scope, SrcLoc, Ty};
use proptest::prelude::*;

fn cube_strategy() -> impl Strategy<Value = Cube> {
    proptest::collection::btree_map(0u32..12, any::<bool>(), 0..8)
        .prop_map(|m| Cube(m.into_iter().collect()))
}

proptest! {
    #[test]
    fn covers_is_reflexive_and_transitive(a in cube_strategy(), b in cube_strategy(), c in cube_strategy()) {
        let d = PredAbs::default();
        prop_assert!(d.covers(&a, &a));
        if d.covers(&a, &b) && d.covers(&b, &c) {
            prop_assert!(d.covers(&a, &c));
        }
        // a sub-cube covers the cube
        let sub = Cube(a.0.iter().copied().step_by(2).collect());
        prop_assert!(d.covers(&sub, &a));
        prop_assert!(d.covers(&Cube::default(), &a));
    }
}

/// One operation of a random straight-line program over x, y, z.
#[derive(Clone, Debug)]
enum RandOp {
    /// v = a*w + c
    Assign(usize, i64, usize, i64),
    /// v = w + u
    Add(usize, usize, usize),
    /// assume(v rel c) (rel: 0 <, 1 <=, 2 ==, 3 !=)
    Assume(usize, u8, i64),
    /// assume(v rel w)
    AssumeVar(usize, u8, usize),
}

fn op_strategy() -> impl Strategy<Value = RandOp> {
    prop_oneof![
        (0..3usize, -2..3i64, 0..3usize, -5..6i64)
            .prop_map(|(v, a, w, c)| RandOp::Assign(v, a, w, c)),
        (0..3usize, 0..3usize, 0..3usize).prop_map(|(v, w, u)| RandOp::Add(v, w, u)),
        (0..3usize, 0..4u8, -6..7i64).prop_map(|(v, r, c)| RandOp::Assume(v, r, c)),
        (0..3usize, 0..4u8, 0..3usize).prop_map(|(v, r, w)| RandOp::AssumeVar(v, r, w)),
    ]
}

fn rel(r: u8) -> BinOp {
    [BinOp::Lt, BinOp::Le, BinOp::Eq, BinOp::Ne][r as usize % 4]
}

/// Builds `x = nondet(); y = nondet(); z = nondet(); ops...` as a CFA; returns the
/// program, the variables and the edges in order.
fn build(ops: &[RandOp]) -> (Program, Vec<VarId>, Vec<(crate::cfa::EdgeId, Node)>) {
    let mut p = Program::new("rand.c");
    let vars: Vec<VarId> = ["x", "y", "z"]
        .iter()
        .map(|n| p.add_var(format!("main::{n}"), Ty::INT, Scope::Local(0)))
        .collect();
    let s = SrcLoc::default();
    let entry = p.add_loc(0, s, LocKind::FuncEntry);
    let mut cur = entry;
    let mut edges = Vec::new();
    let mut push = |p: &mut Program, op: Op, cur: &mut Node| {
        let next = p.add_loc(0, s, LocKind::Normal);
        let e = p.add_edge(*cur, next, op, s);
        edges.push((e, next));
        *cur = next;
    };
    for &v in &vars {
        push(&mut p, Op::Nondet { dst: v }, &mut cur);
    }
    for op in ops {
        let o = match *op {
            RandOp::Assign(v, a, w, c) => Op::Assign {
                dst: vars[v],
                src: Expr::bin(
                    BinOp::Add,
                    Expr::bin(BinOp::Mul, Expr::Int(a), Expr::Var(vars[w])),
                    Expr::Int(c),
                ),
            },
            RandOp::Add(v, w, u) => Op::Assign {
                dst: vars[v],
                src: Expr::bin(BinOp::Add, Expr::Var(vars[w]), Expr::Var(vars[u])),
            },
            RandOp::Assume(v, r, c) => Op::Assume {
                cond: Expr::bin(rel(r), Expr::Var(vars[v]), Expr::Int(c)),
            },
            RandOp::AssumeVar(v, r, w) => Op::Assume {
                cond: Expr::bin(rel(r), Expr::Var(vars[v]), Expr::Var(vars[w])),
            },
        };
        push(&mut p, o, &mut cur);
    }
    p.functions.push(Function {
        name: "main".into(),
        params: vec![],
        locals: vars.clone(),
        ret: None,
        ret_ty: Ty::Void,
        entry,
        exit: cur,
        src: s,
    });
    p.entry = entry;
    (p, vars, edges)
}

fn eval(e: &Expr, val: &[i64]) -> i64 {
    match e {
        Expr::Int(n) => *n,
        Expr::Var(v) => val[*v],
        Expr::Null => 0,
        Expr::Unary(UnOp::Neg, a) => -eval(a, val),
        Expr::Binary(op, a, b) => {
            let (x, y) = (eval(a, val), eval(b, val));
            match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Eq => (x == y) as i64,
                BinOp::Ne => (x != y) as i64,
                BinOp::Lt => (x < y) as i64,
                BinOp::Le => (x <= y) as i64,
                BinOp::Gt => (x > y) as i64,
                BinOp::Ge => (x >= y) as i64,
                _ => unreachable!(),
            }
        }
        _ => unreachable!(),
    }
}

fn pred_strategy() -> impl Strategy<Value = (u8, usize, i64, Option<usize>)> {
    (0..4u8, 0..3usize, -6..7i64, proptest::option::of(0..3usize))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Post soundness: along a concrete execution (mathematical integers, small values),
    /// every literal of the abstract state holds and no feasible step loses its successor.
    #[test]
    fn post_is_sound_on_random_programs(
        ops in proptest::collection::vec(op_strategy(), 1..7),
        inputs in proptest::collection::vec(-8..9i64, 3),
        preds in proptest::collection::vec(pred_strategy(), 1..6),
    ) {
        let (prog, vars, edges) = build(&ops);
        let mut prec = Precision::default();
        for (r, v, c, w) in preds {
            let rhs = match w { Some(w) => Expr::bin(BinOp::Add, Expr::Var(vars[w]), Expr::Int(c)), None => Expr::Int(c) };
            let e = Expr::bin(rel(r), Expr::Var(vars[v]), rhs);
            let (base, _) = canonical(&e).unwrap();
            let id = prec.intern(&prog, base);
            prec.global.insert(id);
        }
        let d = PredAbs::new(5_000);
        let mut val = vec![0i64; 3];
        let mut state = d.initial(&prog, &prec);
        for (k, (e, to)) in edges.iter().enumerate() {
            // concrete step
            let ok = match &prog.graph[*e].op {
                Op::Nondet { dst } => { val[*dst] = inputs[k]; true }
                Op::Assign { dst, src } => { val[*dst] = eval(src, &val); true }
                Op::Assume { cond } => eval(cond, &val) != 0,
                _ => unreachable!(),
            };
            if !ok { break; }
            let succ = d.post(&prog, &state, Step::Edge(*e), *to, &prec);
            prop_assert_eq!(succ.len(), 1, "feasible step {} lost its successor", k);
            state = succ.into_iter().next().unwrap();
            for &(id, pos) in &state.0 {
                let holds = eval(&prec.preds[id as usize].expr, &val) != 0;
                prop_assert_eq!(holds, pos, "literal {} wrong after step {} at {:?}", prec.preds[id as usize].text, k, val);
            }
        }
    }
}

#[test]
fn heap_steps_forget_the_assigned_pointer_and_learn_non_null() {
    let mut p = Program::new("h.c");
    let pv = p.add_var("main::p", Ty::Ptr(Box::new(Ty::INT)), Scope::Local(0));
    let qv = p.add_var("main::q", Ty::Ptr(Box::new(Ty::INT)), Scope::Local(0));
    let s = SrcLoc::default();
    let l0 = p.add_loc(0, s, LocKind::FuncEntry);
    let l1 = p.add_loc(0, s, LocKind::Normal);
    let l2 = p.add_loc(0, s, LocKind::Normal);
    let l3 = p.add_loc(0, s, LocKind::Normal);
    let alloc = p.add_edge(
        l0,
        l1,
        Op::Alloc {
            dst: pv,
            pointee: Ty::INT,
            bytes: Some(4),
            kind: AllocKind::Stack,
        },
        s,
    );
    let copy = p.add_edge(
        l1,
        l2,
        Op::Assign {
            dst: qv,
            src: Expr::Var(pv),
        },
        s,
    );
    let realloc = p.add_edge(
        l2,
        l3,
        Op::Alloc {
            dst: pv,
            pointee: Ty::INT,
            bytes: Some(4),
            kind: AllocKind::Heap { zeroed: false },
        },
        s,
    );
    p.entry = l0;
    let mut prec = Precision::default();
    let null_p = Expr::bin(BinOp::Eq, Expr::Var(pv), Expr::Null);
    let alias = Expr::bin(BinOp::Eq, Expr::Var(pv), Expr::Var(qv));
    for l in [l1, l2, l3] {
        assert!(prec.add(&p, &null_p, l, PredScope::Location));
        assert!(prec.add(&p, &alias, l, PredScope::Location));
    }
    assert!(!prec.add(&p, &null_p.negate(), l1, PredScope::Location));
    let d = PredAbs::new(5_000);
    let s1 = d.post(&p, &Cube::default(), Step::Edge(alloc), l1, &prec);
    assert_eq!(s1, vec![Cube(vec![(0, false)])]); // p != NULL
    let s2 = d.post(&p, &s1[0], Step::Edge(copy), l2, &prec);
    assert_eq!(s2, vec![Cube(vec![(0, false), (1, true)])]); // p == q
    let s3 = d.post(&p, &s2[0], Step::Edge(realloc), l3, &prec);
    assert_eq!(s3, vec![Cube::default()]); // malloc may fail; p is new
    assert_eq!(
        s2[0].render(&prec),
        "!(main::p == NULL) && main::p == main::q"
    );
    assert!(prec.validate(&p).is_ok());
}

#[test]
fn canonical_forms_and_fragment() {
    let mut p = Program::new("f.c");
    let x = p.add_var("x", Ty::INT, Scope::Global);
    let q = p.add_var("q", Ty::Ptr(Box::new(Ty::INT)), Scope::Global);
    let ge = Expr::bin(BinOp::Ge, Expr::Var(x), Expr::Int(3));
    assert_eq!(
        canonical(&ge),
        Some((Expr::bin(BinOp::Lt, Expr::Var(x), Expr::Int(3)), false))
    );
    assert!(is_predicate(&p, &ge));
    assert!(is_predicate(
        &p,
        &Expr::bin(BinOp::Ne, Expr::Var(q), Expr::Null)
    ));
    assert!(!is_predicate(
        &p,
        &Expr::bin(BinOp::Lt, Expr::Var(q), Expr::Null)
    ));
    assert!(!is_predicate(
        &p,
        &Expr::bin(BinOp::Eq, Expr::Var(q), Expr::Var(x))
    ));
    assert!(!is_predicate(
        &p,
        &Expr::bin(
            BinOp::Lt,
            Expr::bin(BinOp::Mul, Expr::Var(x), Expr::Var(x)),
            Expr::Int(0)
        )
    ));
    assert_eq!(pred_text(&p, &ge), "x >= 3");
}

fn value_strategy() -> impl Strategy<Value = i64> {
    prop_oneof![
        -8..9i64,
        Just(i32::MAX as i64),
        Just(i32::MIN as i64),
        Just(i32::MAX as i64 - 1),
        (i32::MIN as i64)..=(i32::MAX as i64),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]
    /// Post soundness against the concrete interpreter (32-bit wrapping semantics): the
    /// final abstract state of a random straight-line program is turned into error
    /// branches `if (!lit) reach_error()`; a concrete run with the same inputs must never
    /// reach one, and a run that passes every `assume` must have an abstract successor
    /// at every step.
    #[test]
    fn post_is_sound_against_the_interpreter(
        ops in proptest::collection::vec(op_strategy(), 1..7),
        inputs in proptest::collection::vec(value_strategy(), 3),
        preds in proptest::collection::vec(pred_strategy(), 1..6),
    ) {
        let (mut prog, vars, edges) = build(&ops);
        let mut prec = Precision::default();
        for (r, v, c, w) in preds {
            let rhs = match w { Some(w) if w != v => Expr::bin(BinOp::Add, Expr::Var(vars[w]), Expr::Int(c)), _ => Expr::Int(c) };
            let (base, _) = canonical(&Expr::bin(rel(r), Expr::Var(vars[v]), rhs)).unwrap();
            let id = prec.intern(&prog, base);
            prec.global.insert(id);
        }
        let d = PredAbs::new(5_000);
        let mut states = vec![d.initial(&prog, &prec)];
        for (e, to) in &edges {
            let succ = d.post(&prog, states.last().unwrap(), Step::Edge(*e), *to, &prec);
            match succ.into_iter().next() {
                Some(s) => states.push(s),
                None => break,
            }
        }
        let complete = states.len() == edges.len() + 1;
        // error branches for the literals of the last state
        let s = SrcLoc::default();
        let mut cur = edges.last().map(|(_, n)| *n).unwrap();
        let last = states.last().unwrap().clone();
        if complete {
            for &(id, pos) in &last.0 {
                let e = &prec.preds[id as usize].expr;
                let lit = if pos { e.clone() } else { e.negate() };
                let mid = prog.add_loc(0, s, LocKind::Normal);
                let err = prog.add_loc(0, s, LocKind::Error);
                let next = prog.add_loc(0, s, LocKind::Normal);
                prog.add_edge(cur, mid, Op::Assume { cond: lit.negate() }, s);
                prog.add_edge(mid, err, Op::Error, s);
                prog.add_edge(cur, next, Op::Assume { cond: lit }, s);
                cur = next;
            }
        }
        prog.functions[0].exit = cur;
        let run = crate::interp::run_inputs(
            &prog,
            &crate::cfa::Inputs { nondet: inputs.clone(), ..Default::default() },
            &crate::interp::Limits::default(),
        );
        prop_assert!(!run.outcome.is_error(), "a literal of {:?} is false concretely ({:?})", last.render(&prec), inputs);
        if !complete {
            prop_assert!(!matches!(run.outcome, crate::interp::Outcome::Exit), "a feasible step lost its successor");
        }
    }
}

#[test]
fn a_check_ends_at_the_deadline_and_the_pooled_solver_is_kept() {
    // the pooled solver has no Z3 timeout of its own (a regression before: one was
    // replaced near the deadline for every query, 20x slower refinements); each check
    // is limited by the per-query timeout and the time left
    use z3::ast::Int;
    let pa = PredAbs::new(10_000);
    pa.set_deadline(Some(Instant::now() + std::time::Duration::from_millis(300)));
    let t = Instant::now();
    let r = {
        let s = pa.solver();
        let xs: Vec<Int> = (0..=12).map(|i| Int::new_const(format!("p{i}"))).collect();
        for x in &xs {
            s.assert(x.ge(Int::from_i64(0)));
            s.assert(x.lt(Int::from_i64(12)));
        }
        for i in 0..xs.len() {
            for j in i + 1..xs.len() {
                s.assert(xs[i].eq(&xs[j]).not());
            }
        }
        pa.check(&s)
    };
    assert_eq!(r, z3::SatResult::Unknown);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        t.elapsed()
    );
    // the scope is popped: the pooled solver answers a fresh question
    let s = pa.solver();
    s.assert(Int::new_const("q").gt(Int::from_i64(2)));
    assert_eq!(pa.check(&s), z3::SatResult::Sat);
}

/// A model of an earlier check of the same post refutes later checks, which are then
/// skipped; only `unsat` answers decide, so the cube is the one every check gives.
#[test]
fn models_skip_refuted_checks_without_changing_the_post() {
    // x, y, z = nondet(); assume(y == 2); x = 1*y + 1
    let (prog, vars, edges) = build(&[RandOp::Assume(1, 2, 2), RandOp::Assign(0, 1, 1, 1)]);
    let mut prec = Precision::default();
    let x = Expr::Var(vars[0]);
    let preds = [
        Expr::bin(BinOp::Eq, Expr::Var(vars[1]), Expr::Int(2)), // y == 2: true
        Expr::bin(BinOp::Le, Expr::Int(1), x.clone()),          // 1 <= x: true
        Expr::bin(BinOp::Lt, x.clone(), Expr::Int(3)),          // x < 3: false
        Expr::bin(BinOp::Eq, x.clone(), Expr::Int(3)),          // x == 3: true
        Expr::bin(BinOp::Eq, x, Expr::Var(vars[2])),            // x == z: undecided
    ];
    for e in &preds {
        let (base, _) = canonical(e).unwrap();
        let id = prec.intern(&prog, base);
        prec.global.insert(id);
    }
    let d = PredAbs::new(5_000);
    let mut state = d.initial(&prog, &prec);
    for (e, to) in &edges {
        let succ = d.post(&prog, &state, Step::Edge(*e), *to, &prec);
        assert_eq!(succ.len(), 1);
        state = succ.into_iter().next().unwrap();
    }
    let val = [3i64, 2, 0];
    let decided: Vec<(String, bool)> = state
        .0
        .iter()
        .map(|&(id, pos)| {
            let p = &prec.preds[id as usize];
            assert_eq!(eval(&p.expr, &val) != 0, pos, "{}", p.text);
            (p.text.clone(), pos)
        })
        .collect();
    assert_eq!(decided.len(), 4, "all but x == z are decided: {decided:?}");
    assert!(d.stats().z3_checks_skipped > 0, "{:?}", d.stats());
}
