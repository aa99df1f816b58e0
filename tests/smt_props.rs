//! Property tests: random straight-line pointer/integer paths ending in an error edge.
//! Infeasible ones must yield a validated interpolant sequence; feasible ones a model that
//! replays concretely to the error location.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

mod smt_util;

use proptest::prelude::*;
use shapemc::cfa::*;
use shapemc::smt::*;
use smt_util::*;

#[derive(Clone, Debug)]
enum G {
    Calloc(usize),
    Malloc(usize),
    Free(usize),
    AssignPtr(usize, Option<usize>),
    LoadPtr(usize, usize, bool),
    LoadInt(usize, usize),
    StorePtr(usize, bool, Option<usize>),
    StoreInt(usize, Result<usize, i64>),
    AddInt(usize, usize, i64),
    Nondet(usize),
    AssumePtr(usize, Option<usize>, bool),
    AssumeInt(usize, BinOp, i64),
}

fn gen_op() -> impl Strategy<Value = G> {
    let p = 0usize..3;
    let i = 0usize..2;
    prop_oneof![
        p.clone().prop_map(G::Calloc),
        p.clone().prop_map(G::Malloc),
        p.clone().prop_map(G::Free),
        (p.clone(), proptest::option::of(p.clone())).prop_map(|(a, b)| G::AssignPtr(a, b)),
        (p.clone(), p.clone(), any::<bool>()).prop_map(|(a, b, f)| G::LoadPtr(a, b, f)),
        (i.clone(), p.clone()).prop_map(|(a, b)| G::LoadInt(a, b)),
        (p.clone(), any::<bool>(), proptest::option::of(p.clone()))
            .prop_map(|(a, f, b)| G::StorePtr(a, f, b)),
        (
            p.clone(),
            prop_oneof![i.clone().prop_map(Ok), (-3i64..4).prop_map(Err)]
        )
            .prop_map(|(a, b)| G::StoreInt(a, b)),
        (i.clone(), i.clone(), -2i64..3).prop_map(|(a, b, c)| G::AddInt(a, b, c)),
        i.clone().prop_map(G::Nondet),
        (p.clone(), proptest::option::of(p.clone()), any::<bool>())
            .prop_map(|(a, b, e)| G::AssumePtr(a, b, e)),
        (
            i.clone(),
            prop_oneof![
                Just(BinOp::Eq),
                Just(BinOp::Ne),
                Just(BinOp::Lt),
                Just(BinOp::Ge)
            ],
            -3i64..4
        )
            .prop_map(|(a, op, c)| G::AssumeInt(a, op, c)),
    ]
}

fn build(ops: &[G]) -> (Program, Vec<Step>) {
    let mut b = Builder::new();
    let ps: Vec<VarId> = (0..3)
        .map(|k| b.var(&format!("p{k}"), node_ptr()))
        .collect();
    let is: Vec<VarId> = (0..2).map(|k| b.var(&format!("i{k}"), Ty::INT)).collect();
    for p in &ps {
        b.op(Op::Assign {
            dst: *p,
            src: Expr::Null,
        });
    }
    for i in &is {
        b.op(Op::Assign {
            dst: *i,
            src: Expr::Int(0),
        });
    }
    let pe = |x: Option<usize>| x.map(|k| v(ps[k])).unwrap_or(Expr::Null);
    let fld = |f: bool| if f { SUCC } else { PRED };
    for g in ops {
        match g.clone() {
            G::Calloc(a) | G::Malloc(a) => {
                // both zeroed: the test evaluator reads unwritten cells as 0
                let _ = matches!(g, G::Malloc(_));
                b.op(Op::Alloc {
                    dst: ps[a],
                    pointee: Ty::Struct(0),
                    bytes: Some(12),
                    kind: AllocKind::Heap { zeroed: true },
                });
            }
            G::Free(a) => {
                b.op(Op::Free { ptr: ps[a] });
            }
            G::AssignPtr(a, x) => {
                b.op(Op::Assign {
                    dst: ps[a],
                    src: pe(x),
                });
            }
            G::LoadPtr(a, x, f) => {
                b.op(Op::Load {
                    dst: ps[a],
                    ptr: ps[x],
                    field: fld(f),
                });
            }
            G::LoadInt(a, x) => {
                b.op(Op::Load {
                    dst: is[a],
                    ptr: ps[x],
                    field: DATA,
                });
            }
            G::StorePtr(a, f, x) => {
                b.op(Op::Store {
                    ptr: ps[a],
                    field: fld(f),
                    src: pe(x),
                });
            }
            G::StoreInt(a, x) => {
                let src = match x {
                    Ok(k) => v(is[k]),
                    Err(c) => Expr::Int(c),
                };
                b.op(Op::Store {
                    ptr: ps[a],
                    field: DATA,
                    src,
                });
            }
            G::AddInt(a, x, c) => {
                b.op(Op::Assign {
                    dst: is[a],
                    src: Expr::bin(BinOp::Add, v(is[x]), Expr::Int(c)),
                });
            }
            G::Nondet(a) => {
                b.op(Op::Nondet { dst: is[a] });
            }
            G::AssumePtr(a, x, e) => {
                let c = if e {
                    eq(v(ps[a]), pe(x))
                } else {
                    ne(v(ps[a]), pe(x))
                };
                b.assume(c);
            }
            G::AssumeInt(a, op, c) => {
                b.assume(Expr::bin(op, v(is[a]), Expr::Int(c)));
            }
        }
    }
    b.error()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn interpolants_validate_and_models_replay(
        ops in proptest::collection::vec(gen_op(), 1..14),
        never_fails in any::<bool>(),
    ) {
        let (mut prog, path) = build(&ops);
        prog.malloc_never_fails = never_fails;
        let opts = InterpolationOptions { validate: true, ..Default::default() };
        match refine_path(&prog, &path, &opts) {
            Ok(PathAnalysis::Feasible(m)) => {
                if std::env::var("SMT_PROP_STATS").is_ok() { eprintln!("STAT feasible"); }
                let r = eval_path(&prog, &path, &m.to_inputs());
                prop_assert_eq!(r, Eval::ReachedError, "model {:?}", m);
                prop_assert!(replays_to_error(&prog, &path, &m.to_inputs()), "interp: model {:?}", m);
            }
            Ok(PathAnalysis::Infeasible(itps)) => {
                if std::env::var("SMT_PROP_STATS").is_ok() { eprintln!("STAT infeasible"); }
                prop_assert!(itps.validated);
                prop_assert_eq!(itps.items.len(), path.len() + 1);
                // the infeasibility is real: the concrete evaluator agrees for the trivial
                // input (all allocations succeed, nondet = 0) -- it must not reach the error
                let trivial = Inputs {
                    nondet: vec![0; 16],
                    alloc_null: vec![false; 16],
                    ..Default::default()
                };
                prop_assert_ne!(eval_path(&prog, &path, &trivial), Eval::ReachedError);
                prop_assert!(!replays_to_error(&prog, &path, &trivial));
            }
            Err(e) => prop_assert!(false, "error {e}"),
        }
    }
}
