//! Scaling benchmark of path checking and interpolation on synthetic pointer paths
//! (`scripts/bench-smt` runs it in release mode). Ignored in the normal test run.

mod smt_util;

use shapemc::cfa::*;
use shapemc::smt::*;
use smt_util::*;
use std::time::Instant;

/// A doubly-linked list built like `alloc_list` of the paper (6 operations per node),
/// followed by the check `l->succ->pred == l` failing: about `n` operations, infeasible.
pub fn dll_path(n: usize) -> (Program, Vec<Step>) {
    let mut b = Builder::new();
    let l = b.var("l", node_ptr());
    let p = b.var("p", node_ptr());
    let t = b.var("t", node_ptr());
    let q = b.var("q", node_ptr());
    let r = b.var("r", node_ptr());
    b.malloc(l)
        .assume(ne(v(l), Expr::Null))
        .op(Op::Assign { dst: p, src: v(l) });
    let iters = (n.saturating_sub(8) / 6).max(1);
    for _ in 0..iters {
        b.malloc(t)
            .assume(ne(v(t), Expr::Null))
            .op(Op::Store {
                ptr: t,
                field: DATA,
                src: Expr::Int(0),
            })
            .op(Op::Store {
                ptr: p,
                field: SUCC,
                src: v(t),
            })
            .op(Op::Store {
                ptr: t,
                field: PRED,
                src: v(p),
            })
            .op(Op::Assign { dst: p, src: v(t) });
    }
    b.op(Op::Load {
        dst: q,
        ptr: l,
        field: SUCC,
    })
    .assume(ne(v(q), Expr::Null))
    .op(Op::Load {
        dst: r,
        ptr: q,
        field: PRED,
    })
    .assume(ne(v(r), v(l)));
    b.error()
}

#[test]
#[ignore]
fn bench_scaling() {
    println!("ops\tcheck_ms\tinterp_ms\tinterp+validate_ms\tcore");
    for n in [10usize, 100, 200, 500, 1000] {
        let (prog, path) = dll_path(n);
        let t0 = Instant::now();
        let f = check_path(&prog, &path).expect("check");
        let check = t0.elapsed();
        assert!(matches!(f, Feasibility::Infeasible(_)));
        let t1 = Instant::now();
        let no_val = InterpolationOptions {
            validate: false,
            ..Default::default()
        };
        let i = interpolate(&prog, &path, &no_val).expect("interpolate");
        let itp = t1.elapsed();
        let t2 = Instant::now();
        let val = InterpolationOptions {
            validate: true,
            ..Default::default()
        };
        interpolate(&prog, &path, &val).expect("interpolate+validate");
        let itpv = t2.elapsed();
        println!(
            "{}\t{:.1}\t{:.1}\t{:.1}\t{}",
            path.len(),
            check.as_secs_f64() * 1e3,
            itp.as_secs_f64() * 1e3,
            itpv.as_secs_f64() * 1e3,
            i.proof.core.len()
        );
    }
}

/// The 200-op target: decided and interpolated (with validation) well under 100 ms in
/// release builds; this test only guards against blow-ups (generous bound, debug build).
#[test]
fn two_hundred_op_path_is_fast_enough() {
    let (prog, path) = dll_path(200);
    let t = Instant::now();
    let opts = InterpolationOptions {
        validate: true,
        ..Default::default()
    };
    match refine_path(&prog, &path, &opts).expect("refine") {
        PathAnalysis::Infeasible(i) => assert!(i.validated),
        PathAnalysis::Feasible(m) => panic!("feasible: {m:?}"),
    }
    assert!(t.elapsed().as_secs_f64() < 5.0, "{:?}", t.elapsed());
}

#[test]
#[ignore]
fn bench_probe() {
    for never in [true, false] {
        for minimize in [false, true] {
            let (mut prog, path) = dll_path(200);
            prog.malloc_never_fails = never;
            let o = SmtOptions {
                minimize_core: minimize,
                ..Default::default()
            };
            let t0 = Instant::now();
            let f = check_path_with(&prog, &path, &o).expect("check");
            let core = match &f {
                Feasibility::Infeasible(p) => p.core.len(),
                _ => 0,
            };
            println!(
                "never_fails={never} minimize={minimize}: {:.1} ms core {core} of {} guards",
                t0.elapsed().as_secs_f64() * 1e3,
                path.len()
            );
        }
    }
}

#[test]
#[ignore]
fn bench_profile() {
    let (prog, path) = dll_path(500);
    let o = InterpolationOptions {
        validate: false,
        ..Default::default()
    };
    let t = Instant::now();
    let i = interpolate(&prog, &path, &o).unwrap();
    println!("total {:?}", t.elapsed());
    let sizes: Vec<usize> = i.items.iter().map(|x| x.smt2.len()).collect();
    println!("max smt2 len {:?}", sizes.iter().max());
}

#[test]
#[ignore]
fn dump_small() {
    let (prog, path) = dll_path(26);
    let o = InterpolationOptions {
        validate: false,
        ..Default::default()
    };
    let i = interpolate(&prog, &path, &o).unwrap();
    println!("core {:?}", i.proof.core);
    for (k, it) in i.items.iter().enumerate() {
        let s = if k < path.len() {
            format!("{:?}", path[k])
        } else {
            String::new()
        };
        println!(
            "I_{k}: {}\n   atoms {:?}\n  step {}",
            it.smt2,
            it.atoms.iter().map(|a| &a.text).collect::<Vec<_>>(),
            s
        );
    }
}
