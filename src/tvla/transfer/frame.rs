//! The frame rule for [`super::post`] (heap decomposition, as in the graph-decomposition
//! paper, applied to one structure): an operation reads and writes only the connected
//! components (nodes linked by a binary value that is not 0, and the nodes one
//! variable may point to) that its variables point into. When the vocabulary's
//! definitions and constraints are local to a component ([`Vocab::frame_local`]), the
//! post of a structure is the post of those components cut out of it, glued back to
//! the untouched rest (the frame).
//!
//! Why that is sound: a heap `H` represented by `s` is the disjoint union of the cells
//! the touched components represent (`H_l`) and the others (`H_f`), with no pointer
//! between the two parts (those binary values are 0). The operation's concrete
//! successor is its successor of `H_l` beside `H_f`: it reads and writes only the
//! operation's variables (which point into `H_l` or are NULL) and cells reachable
//! from them by fields. `H_l` is represented by the cut-out components, since each
//! instrumentation value there depends on its component alone (locality), and the
//! post of the cut-out over-approximates the successors of `H_l`. The frame's values
//! do not change: none is defined through a touched cell. The same argument makes the
//! result equal to the full post's, up to the order of the structures' nodes, except
//! where a touched and an untouched node end up with the same name (abstraction
//! values): the full post would merge them, so then the full post is taken.
//! `SHAPEMC_CHECK_FRAME=FILE` compares every framed post with the full one and appends
//! each difference to `FILE` (a measurement aid).

use super::{post, PostResult, PtrOp, TwoGenerations};
use crate::tvla::class::ShapeClass;
use crate::tvla::coerce::coerce;
use crate::tvla::formula::Kleene;
use crate::tvla::structure::{Structure, Vocab};
use rustc_hash::FxHashSet;
use std::cell::RefCell;
use std::sync::Arc;

/// The pointer variables `op` names and the pointer field it reads or writes, if any.
fn operands(op: &PtrOp) -> (Vec<&str>, Option<&str>) {
    match op {
        PtrOp::AssignNull { x }
        | PtrOp::Malloc { x }
        | PtrOp::Free { x }
        | PtrOp::AssumeNull { x }
        | PtrOp::AssumeNotNull { x }
        | PtrOp::SetField { x, .. }
        | PtrOp::SetUnary { x, .. }
        | PtrOp::AssumeField { x, .. } => (vec![x], None),
        PtrOp::Copy { x, y } | PtrOp::AssumeEq { x, y } | PtrOp::AssumeNe { x, y } => {
            (vec![x, y], None)
        }
        PtrOp::Load { x, y, field } => (vec![x, y], Some(field)),
        PtrOp::StoreNull { x, field } => (vec![x], Some(field)),
        PtrOp::Store { x, field, y } => (vec![x, y], Some(field)),
    }
}

/// Union-find root of `x` (with path halving).
fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// `s` cut into the components `op` touches and the rest (both canonical), when the
/// frame rule applies and the rest is not empty: a frame-local vocabulary and every
/// variable and field of `op` tracked (an untracked one makes values unknown
/// everywhere).
pub(super) fn split(s: &Structure, op: &PtrOp) -> Option<(Structure, Structure)> {
    let voc: &Vocab = s.vocab();
    let n = s.len();
    if !voc.frame_local || n < 2 {
        return None;
    }
    let (vars, field) = operands(op);
    if field.is_some_and(|f| voc.field(f).is_none()) {
        return None;
    }
    let pts: Vec<usize> = vars
        .iter()
        .map(|x| voc.pt(x))
        .collect::<Option<Vec<usize>>>()?;
    let mut parent: Vec<usize> = (0..n).collect();
    let link = |parent: &mut Vec<usize>, a: usize, b: usize| {
        let (ra, rb) = (find(parent, a), find(parent, b));
        if ra != rb {
            parent[ra] = rb;
        }
    };
    for p in 0..voc.binary.len() {
        for u in 0..n {
            for w in 0..n {
                if u != w && s.get2(p, u, w) != Kleene::False {
                    link(&mut parent, u, w);
                }
            }
        }
    }
    for (_, i) in &voc.pt {
        let mut first = None;
        for u in 0..n {
            if s.get1(*i, u) != Kleene::False {
                match first {
                    None => first = Some(u),
                    Some(f) => link(&mut parent, f, u),
                }
            }
        }
    }
    let mut touched = vec![false; n];
    for &i in &pts {
        for u in 0..n {
            if s.get1(i, u) != Kleene::False {
                let r = find(&mut parent, u);
                touched[r] = true;
            }
        }
    }
    let (mut local, mut rest) = (Vec::new(), Vec::new());
    for u in 0..n {
        let r = find(&mut parent, u);
        if touched[r] {
            local.push(u);
        } else {
            rest.push(u);
        }
    }
    if rest.is_empty() {
        return None;
    }
    // coerce only sharpens (it never makes a 0 other than 0), so the components of
    // `s` are unions of those of its coerced form, and coerce works on each alone
    // (locality): the post coerces the touched part, [`coerced_frame`] the rest
    Some((s.select(&local).canonical(), s.select(&rest).canonical()))
}

/// `r` (a post of the touched components) glued to the untouched `frame`: `None` when
/// a node of `r` has the name of a node of `frame` (the full post would merge them).
fn glue(r: &Structure, frame: &Structure) -> Option<Structure> {
    let names: FxHashSet<Vec<Kleene>> = (0..frame.len()).map(|u| frame.name(u)).collect();
    if (0..r.len()).any(|u| names.contains(&r.name(u))) {
        return None;
    }
    Some(r.disjoint_union(frame)?.canonical())
}

/// [`post`] by the frame rule, or `None` where it does not apply (see [`split`],
/// [`glue`]). The post of the touched components goes through [`post`] itself, so
/// it is memoised on its own: the same list walked beside many shapes of another
/// costs one post per shape of the walked list.
pub(super) fn framed_post(s: &Structure, class: &ShapeClass, op: &PtrOp) -> Option<PostResult> {
    COUNTS.with(|c| c.set((c.get().0 + 1, c.get().1)));
    let (local, frame) = split(s, op)?;
    COUNTS.with(|c| c.set((c.get().0, c.get().1 + 1)));
    let Some(frame) = coerced_frame(&frame) else {
        // the rest represents no heap, nor does `s`
        return Some(PostResult::default());
    };
    let r = post(&local, class, op);
    let structures = r
        .structures
        .iter()
        .map(|t| glue(t, &frame))
        .collect::<Option<Vec<Structure>>>()?;
    Some(PostResult {
        structures,
        errors: r.errors,
    })
}

thread_local! {
    /// Posts computed on this thread for classes without counters (memo misses, of
    /// any vocabulary: a class that is not frame-local counts as never framed), and
    /// how many of them left a frame out: [`frame_counts`].
    static COUNTS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
    /// Coerced and abstracted frames: the same untouched components come with many
    /// touched ones.
    static FRAME_MEMO: RefCell<TwoGenerations<(usize, Structure), Option<Structure>>> =
        RefCell::new(TwoGenerations::new(FRAME_MEMO_CAP));
}

/// How many posts this thread computed so far for classes without counters, and how
/// many of those touched only part of the structure: a high share means statements
/// keep acting on one of several independent structures (what the heap CPA's
/// [`crate::cegar::heap::HeapAbstraction`] uses to join shape regions).
pub fn frame_counts() -> (u64, u64) {
    COUNTS.with(|c| c.get())
}

/// Entries of each generation of the frame memo.
const FRAME_MEMO_CAP: usize = 1 << 15;

/// [`coerce`] and then canonical abstraction of an untouched rest, as the full post
/// does to every node, memoised per thread (keyed like the post memo).
fn coerced_frame(frame: &Structure) -> Option<Structure> {
    let key = (Arc::as_ptr(frame.vocab()) as usize, frame.clone());
    if let Some(r) = FRAME_MEMO.with(|m| m.borrow_mut().get(&key)) {
        return r;
    }
    let r = coerce(frame.clone()).map(|t| t.blur());
    FRAME_MEMO.with(|m| m.borrow_mut().insert(key, r.clone()));
    r
}

/// Where `SHAPEMC_CHECK_FRAME` asks for every framed post to be compared with the
/// full one: `Some(file)` (read once) to which each difference is appended.
pub(super) fn check_requested() -> Option<&'static std::path::Path> {
    static CHECK: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    CHECK
        .get_or_init(|| std::env::var_os("SHAPEMC_CHECK_FRAME").map(Into::into))
        .as_deref()
}

/// Records a framed post `r` that differs from the full one (`SHAPEMC_CHECK_FRAME`),
/// and whether each of its structures embeds into one of the full post's (`within`).
pub(super) fn report_difference(
    file: &std::path::Path,
    s: &Structure,
    op: &PtrOp,
    r: &PostResult,
    full: &PostResult,
) {
    use std::io::Write;
    let within = r
        .structures
        .iter()
        .all(|t| full.structures.iter().any(|u| t.embeds_into(u)));
    tracing::warn!("frame rule: post of {op:?} differs (within: {within}) on {s}");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
    {
        let _ = writeln!(f, "within={within} post of {op:?} differs on {s}");
    }
}

/// Whether two post results have the same structures (in any order) and errors.
pub(super) fn same_result(a: &PostResult, b: &PostResult) -> bool {
    let set = |r: &PostResult| {
        r.structures
            .iter()
            .cloned()
            .collect::<FxHashSet<Structure>>()
    };
    a.errors == b.errors && a.structures.len() == b.structures.len() && set(a) == set(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tvla::analysis::component_local;
    use crate::tvla::families as fam;
    use crate::tvla::formula::PredSym;
    use crate::tvla::structure::Fact;
    use proptest::prelude::*;

    /// Two separate lists with `x` at position `xi` of the first (length `a`) and `y`
    /// at position `yi` of the second (length `b`), canonically abstracted.
    fn two_lists(c: &ShapeClass, a: usize, b: usize, xi: usize, yi: usize) -> Structure {
        let next = PredSym::plain("next");
        let mut f = vec![
            Fact::Unary(PredSym::with("pt", &["x"]), xi.min(a - 1)),
            Fact::Unary(PredSym::with("pt", &["y"]), a + yi.min(b - 1)),
            Fact::Unary(PredSym::with("pt", &["h"]), 0),
            Fact::Unary(PredSym::with("pt", &["k"]), a),
        ];
        for i in 0..a - 1 {
            f.push(Fact::Binary(next.clone(), i, i + 1));
        }
        for i in a..a + b - 1 {
            f.push(Fact::Binary(next.clone(), i, i + 1));
        }
        Structure::from_concrete(c, a + b, &f)
            .unwrap_or_else(|e| panic!("{e}"))
            .blur()
    }

    fn class() -> ShapeClass {
        fam::simple_class(
            &["x", "y", "h", "k"],
            &["next"],
            vec![
                fam::reach("h", &["next"]),
                fam::reach("k", &["next"]),
                fam::reach("x", &["next"]),
                fam::tc(&["next"]),
                fam::shared(&["next"]),
                fam::cyclic(&["next"]),
                fam::nonnull("next"),
            ],
        )
    }

    fn ops() -> Vec<PtrOp> {
        let (x, y) = (String::from("x"), String::from("y"));
        let next = String::from("next");
        vec![
            PtrOp::Load {
                x: x.clone(),
                y: x.clone(),
                field: next.clone(),
            },
            PtrOp::AssignNull { x: x.clone() },
            PtrOp::Malloc { x: x.clone() },
            PtrOp::Free { x: x.clone() },
            PtrOp::StoreNull {
                x: x.clone(),
                field: next.clone(),
            },
            PtrOp::AssumeNotNull { x: x.clone() },
            PtrOp::Copy {
                x: x.clone(),
                y: "h".into(),
            },
            // these touch both lists: no frame
            PtrOp::Store {
                x: x.clone(),
                field: next,
                y: y.clone(),
            },
            PtrOp::AssumeEq { x, y },
        ]
    }

    #[test]
    fn a_walk_beside_another_list_leaves_that_list_out_of_the_post() {
        let c = class();
        assert!(Vocab::of(&c).frame_local);
        let s = two_lists(&c, 5, 4, 1, 2);
        let op = PtrOp::Load {
            x: "x".into(),
            y: "x".into(),
            field: "next".into(),
        };
        let (local, rest) = split(&s, &op).expect("two components");
        assert_eq!(local.len() + rest.len(), s.len());
        let framed = framed_post(&s, &c, &op).expect("the frame rule applies");
        assert!(same_result(&framed, &post_impl_full(&s, &op)));
        // an operation relating the two lists cuts nothing out
        let join = PtrOp::Store {
            x: "x".into(),
            field: "next".into(),
            y: "y".into(),
        };
        assert!(split(&s, &join).is_none());
    }

    fn post_impl_full(s: &Structure, op: &PtrOp) -> PostResult {
        super::super::post_impl(s, op, true)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// The frame rule gives the full post's structures, whatever the lists' lengths
        /// and the pointers' positions.
        #[test]
        fn the_framed_post_is_the_full_post(
            a in 1usize..6, b in 1usize..6, xi in 0usize..6, yi in 0usize..6, k in 0usize..9,
        ) {
            let c = class();
            let s = two_lists(&c, a, b, xi, yi);
            let op = &ops()[k];
            if let Some(r) = framed_post(&s, &c, op) {
                prop_assert!(same_result(&r, &post_impl_full(&s, op)), "{op:?} on {s}");
            }
        }
    }

    #[test]
    fn a_definition_that_looks_beyond_its_component_turns_the_frame_rule_off() {
        let f = |t: &str| crate::scg::parse::parse_formula(t).unwrap_or_else(|e| panic!("{e:?}"));
        // "x is not NULL" is true at every node, in every component
        assert!(!component_local(&f("E u. pt[x](u)"), &["v"]));
        assert!(!component_local(&f("E u. next(u, u)"), &[]));
        assert!(component_local(
            &f("A v. (E w. next(v, w)) -> nn[next](v)"),
            &[]
        ));
        let mut c = class();
        c.instr.push(crate::tvla::PredDef {
            sym: PredSym::with("some", &["x"]),
            arity: 1,
            def: Some(f("E u. pt[x](u)")),
        });
        assert!(!Vocab::of(&c).frame_local);
        let s = two_lists(&c, 3, 3, 0, 0);
        let op = PtrOp::AssignNull { x: "x".into() };
        assert!(framed_post(&s, &c, &op).is_none());
    }

    #[test]
    fn every_definition_of_the_scg_library_is_local_to_a_component() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scg-library");
        let mut seen = 0;
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{e}")) {
            let path = e.unwrap_or_else(|e| panic!("{e}")).path();
            if path.extension().is_none_or(|x| x != "scg") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
            for line in text.lines().map(str::trim) {
                let Some((head, def)) = line.split_once(":=") else {
                    continue;
                };
                if !head.contains("pred ") {
                    continue;
                }
                let def = crate::scg::parse::parse_formula(def.trim().trim_end_matches(';'))
                    .unwrap_or_else(|e| panic!("{line}: {e:?}"));
                let ok = if head.contains("(v1, v2)") {
                    crate::tvla::analysis::connects(&def, "v1", "v2")
                        && component_local(&def, &["v1", "v2"])
                } else {
                    component_local(&def, &["v"])
                };
                assert!(ok, "{}: {line}", path.display());
                seen += 1;
            }
        }
        assert!(seen > 20, "{seen} definitions");
    }
}
