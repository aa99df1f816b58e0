//! Exact CFAs of tiny C programs, one construct at a time, plus refusals.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

use shapemc::cfa::{LocKind, Op, Program};
use shapemc::diag::FrontendError;
use shapemc::frontend::{
    parse_file, parse_file_with_warnings, program_to_dot, program_to_text, FrontendOptions,
};
use std::path::{Path, PathBuf};

/// A test program on disk, in a directory of its own that goes away with it.
struct Src {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for Src {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Src {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for Src {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

/// `src` written to `t.c` in a fresh temporary directory (removed when the result is
/// dropped: the per-process directories this test used to leave behind piled up in
/// the system's temporary directory).
fn write_src(src: &str) -> Src {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.c");
    std::fs::write(&path, src).expect("write test program");
    Src { path, _dir: dir }
}

fn lower_opts(src: &str, opts: &FrontendOptions) -> Result<Program, FrontendError> {
    let path = write_src(src);
    parse_file(&path, opts)
}

fn lower(src: &str) -> Program {
    match lower_opts(src, &FrontendOptions::default()) {
        Ok(p) => p,
        Err(e) => panic!("lowering failed: {e}"),
    }
}

/// Edges of one function as `a -> b op` with node numbers relative to its entry
/// (nodes of a function are numbered contiguously in BFS order from the entry).
fn edges(p: &Program, func: &str) -> Vec<String> {
    let f = p.function(func).expect("function");
    let base = p.functions[f].entry.index();
    let text = program_to_text(p, Some(f));
    text.lines()
        .skip(1)
        .map(|l| {
            // "a -> b[ (error)] [l:c] op"
            let (a, rest) = l.split_once(" -> ").expect("edge line");
            let (b, rest) = rest.split_once(' ').expect("target");
            let (mark, rest) = if let Some(r) = rest.strip_prefix("(error) ") {
                (" ERR", r)
            } else if let Some(r) = rest.strip_prefix("(sink) ") {
                (" SINK", r)
            } else if let Some(r) = rest.strip_prefix("(invalid call) ") {
                (" INVALID_CALL", r)
            } else {
                ("", rest)
            };
            let op = rest.split_once("] ").expect("op").1;
            let a: usize = a.parse().expect("num");
            let b: usize = b.parse().expect("num");
            format!("{} -> {}{mark} {op}", a - base, b - base)
        })
        .collect()
}

#[track_caller]
fn check(src: &str, func: &str, expected: &[&str]) {
    let p = lower(src);
    let got = edges(&p, func);
    assert_eq!(got, expected, "\nactual:\n{}", got.join("\n"));
}

#[track_caller]
fn unsupported(src: &str, line: u32, col: u32, construct: &str) {
    match lower_opts(src, &FrontendOptions::default()) {
        Err(e @ FrontendError::Unsupported { .. }) => {
            let FrontendError::Unsupported {
                at, construct: c, ..
            } = &e
            else {
                unreachable!()
            };
            assert_eq!((at.line, at.col), (line, col), "{e}");
            assert!(c.contains(construct), "{e}");
            assert_eq!(e.exit_code(), 3);
            let text = e.to_string();
            assert!(
                text.contains(&format!(":{line}:{col}: unsupported: ")),
                "{text}"
            );
        }
        Err(e) => panic!("expected unsupported, got {e}"),
        Ok(_) => panic!("expected unsupported {construct}, got a program"),
    }
}

const NODE: &str =
    "#include <stdlib.h>\nstruct node { int data; struct node *next; struct node *prev; };\n";

#[test]
fn field_read_write_and_malloc_free() {
    let src = format!(
        "{NODE}int main() {{\n struct node *p = malloc(sizeof(struct node));\n p->data = 3;\n p->next = p;\n int d = p->data;\n struct node *q = p->next->prev;\n free(p);\n return d;\n}}\n"
    );
    check(
        &src,
        "main",
        &[
            "0 -> 1 main::p = malloc(struct node)",
            "1 -> 2 main::p->data = 3",
            "2 -> 3 main::p->next = main::p",
            "3 -> 4 main::d = main::p->data",
            "4 -> 5 main::__t0 = main::p->next",
            "5 -> 6 main::q = main::__t0->prev",
            "6 -> 7 free(main::p)",
            "7 -> 8 main::__ret = main::d",
        ],
    );
    let p = lower(&src);
    let alloc = p
        .graph
        .edge_weights()
        .find_map(|e| match &e.op {
            Op::Alloc { bytes, kind, .. } => Some((*bytes, *kind)),
            _ => None,
        })
        .expect("alloc");
    // ILP32: int + two pointers = 12 bytes
    assert_eq!(
        alloc,
        (Some(12), shapemc::cfa::AllocKind::Heap { zeroed: false })
    );
    let s = &p.structs[0];
    assert_eq!(
        s.fields
            .iter()
            .map(|f| (f.name.as_str(), f.offset))
            .collect::<Vec<_>>(),
        vec![("data", 0), ("next", 4), ("prev", 8)]
    );
    assert!(!p.malloc_never_fails);
}

#[test]
fn calloc_cast_and_malloc_never_fails() {
    let src = format!(
        "{NODE}typedef struct node *List;\nint main() {{\n List l = (List) calloc(1, sizeof(struct node));\n void *v = l;\n struct node *m = (struct node *) v;\n return 0;\n}}\n"
    );
    check(
        &src,
        "main",
        &[
            "0 -> 1 main::l = calloc(struct node)",
            "1 -> 2 main::v = (void*)main::l",
            "2 -> 3 main::m = (struct node*)main::v",
            "3 -> 4 main::__ret = 0",
        ],
    );
    let p = lower_opts(
        &src,
        &FrontendOptions {
            malloc_never_fails: true,
            ..Default::default()
        },
    )
    .expect("lowers");
    assert!(p.malloc_never_fails);
}

#[test]
fn nested_fields_and_field_address() {
    let src = "#include <stdlib.h>\nstruct list { struct item *next; struct item *prev; };\nstruct item { int v; struct list link; struct item **pprev; };\nint main() {\n struct item *n = malloc(sizeof(*n));\n n->link.next = 0;\n struct item *x = n->link.next;\n n->pprev = &n->link.next;\n struct item **pp = n->pprev;\n *pp = x;\n x = *pp;\n return 0;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::n = malloc(struct item)",
            "1 -> 2 main::n->link.next = NULL",
            "2 -> 3 main::x = main::n->link.next",
            "3 -> 4 main::__t0 = &main::n->link.next",
            "4 -> 5 main::n->pprev = main::__t0",
            "5 -> 6 main::pp = main::n->pprev",
            "6 -> 7 *main::pp = main::x",
            "7 -> 8 main::x = *main::pp",
            "8 -> 9 main::__ret = 0",
        ],
    );
    let p = lower(src);
    let item = &p.structs[p
        .structs
        .iter()
        .position(|s| s.name == "item")
        .expect("item")];
    assert_eq!(
        item.fields
            .iter()
            .map(|f| (f.name.as_str(), f.offset))
            .collect::<Vec<_>>(),
        vec![("v", 0), ("link.next", 4), ("link.prev", 8), ("pprev", 12)]
    );
    assert_eq!(item.size, 16);
}

#[test]
fn struct_values_live_in_stack_objects() {
    let src = "struct pt { int x; int y; };\nstruct pt g = { 1 };\nint main() {\n struct pt s;\n s.x = 2;\n struct pt *p = &s;\n return p->x + g.y;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::s = stack_alloc(struct pt)",
            "1 -> 2 main::s->x = 2",
            "2 -> 3 main::p = main::s",
            "3 -> 4 main::__t0 = main::p->x",
            "4 -> 5 main::__t1 = g->y",
            "5 -> 6 main::__ret = (main::__t0 + main::__t1)",
        ],
    );
    check(
        src,
        "__shapemc_start",
        &[
            "0 -> 1 g = stack_alloc(struct pt)",
            "1 -> 2 g->x = 1",
            "2 -> 3 g->y = 0",
            "3 -> 4 main()",
        ],
    );
}

#[test]
fn address_taken_scalars_use_stack_cells() {
    let src = "void set(int *p) { *p = 5; }\nint main() {\n int x = 1;\n set(&x);\n return x;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::x = stack_alloc(int32)",
            "1 -> 2 *main::x = 1",
            "2 -> 3 set(main::x)",
            "3 -> 4 main::__ret = *main::x",
        ],
    );
}

#[test]
fn conditions_and_assume_directions() {
    let src = "extern int __VERIFIER_nondet_int(void);\nint main() {\n int a = __VERIFIER_nondet_int();\n int b = __VERIFIER_nondet_int();\n int r = 0;\n if (a && !b) r = 1; else r = 2;\n if (a || b) r = 3;\n return r;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::a = nondet()",
            "1 -> 2 main::b = nondet()",
            "2 -> 3 main::r = 0",
            "3 -> 4 assume((main::a != 0))",
            "3 -> 5 assume((main::a == 0))",
            "4 -> 5 assume((main::b != 0))",
            "4 -> 6 assume((main::b == 0))",
            "5 -> 7 main::r = 2",
            "6 -> 7 main::r = 1",
            "7 -> 8 assume((main::a != 0))",
            "7 -> 9 assume((main::a == 0))",
            "8 -> 10 main::r = 3",
            "9 -> 8 assume((main::b != 0))",
            "9 -> 10 assume((main::b == 0))",
            "10 -> 11 main::__ret = main::r",
        ],
    );
}

#[test]
fn logical_ops_ternary_comma_in_values() {
    let src = "int main() {\n int a = 1, b = 2, c;\n c = a && b;\n c = !a;\n c = a ? b : 7;\n c = (a++, b);\n return c;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::a = 1",
            "1 -> 2 main::b = 2",
            "2 -> 3 main::c = nondet()",
            "3 -> 4 assume((main::a != 0))",
            "3 -> 5 assume((main::a == 0))",
            "4 -> 6 assume((main::b != 0))",
            "4 -> 5 assume((main::b == 0))",
            "5 -> 7 main::__t0 = 0",
            "6 -> 7 main::__t0 = 1",
            "7 -> 8 main::c = main::__t0",
            "8 -> 9 main::c = (main::a == 0)",
            "9 -> 10 assume((main::a != 0))",
            "9 -> 11 assume((main::a == 0))",
            "10 -> 12 main::__t1 = main::b",
            "11 -> 12 main::__t1 = 7",
            "12 -> 13 main::c = main::__t1",
            "13 -> 14 main::a = (main::a + 1)",
            "14 -> 15 main::c = main::b",
            "15 -> 16 main::__ret = main::c",
        ],
    );
}

#[test]
fn increments_pre_post_and_compound() {
    let src = "struct s { int n; unsigned char u; };\nint main() {\n struct s *p = 0;\n int i = 0, j;\n j = i++;\n j = ++i;\n i--;\n j += 3;\n p->n++;\n j = --p->n;\n p->u += 1;\n return j;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::p = NULL",
            "1 -> 2 main::i = 0",
            "2 -> 3 main::j = nondet()",
            "3 -> 4 main::__t0 = main::i",
            "4 -> 5 main::i = (main::i + 1)",
            "5 -> 6 main::j = main::__t0",
            "6 -> 7 main::i = (main::i + 1)",
            "7 -> 8 main::j = main::i",
            "8 -> 9 main::i = (main::i - 1)",
            "9 -> 10 main::j = (main::j + 3)",
            "10 -> 11 main::__t1 = main::p->n",
            "11 -> 12 main::p->n = (main::__t1 + 1)",
            "12 -> 13 main::__t2 = main::p->n",
            "13 -> 14 main::p->n = (main::__t2 - 1)",
            "14 -> 15 main::j = (main::__t2 - 1)",
            "15 -> 16 main::__t3 = main::p->u",
            "16 -> 17 main::p->u = (uint8)(main::__t3 + 1)",
            "17 -> 18 main::__ret = main::j",
        ],
    );
}

#[test]
fn loops_break_continue() {
    let src = "extern int __VERIFIER_nondet_int(void);\nint main() {\n int i, s = 0;\n for (i = 0; i < 10; i++) {\n  if (i == 5) continue;\n  if (i == 7) break;\n  s += i;\n }\n while (s > 0) s--;\n do { s++; } while (s < 3);\n for (;;) { if (__VERIFIER_nondet_int()) break; }\n return s;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::i = nondet()",
            "1 -> 2 main::s = 0",
            "2 -> 3 main::i = 0",
            "3 -> 4 assume((main::i < 10))",
            "3 -> 5 assume((main::i >= 10))",
            "4 -> 6 assume((main::i == 5))",
            "4 -> 7 assume((main::i != 5))",
            "5 -> 8 assume((main::s > 0))",
            "5 -> 9 assume((main::s <= 0))",
            "6 -> 3 main::i = (main::i + 1)",
            "7 -> 5 assume((main::i == 7))",
            "7 -> 10 assume((main::i != 7))",
            "8 -> 5 main::s = (main::s - 1)",
            "9 -> 11 main::s = (main::s + 1)",
            "10 -> 6 main::s = (main::s + main::i)",
            "11 -> 9 assume((main::s < 3))",
            "11 -> 12 assume((main::s >= 3))",
            "12 -> 13 main::__t0 = nondet()",
            "13 -> 14 assume((main::__t0 != 0))",
            "13 -> 12 assume((main::__t0 == 0))",
            "14 -> 15 main::__ret = main::s",
        ],
    );
}

#[test]
fn goto_labels_and_switch() {
    let src = "int main() {\n int x = 2, y = 0;\n switch (x) {\n case 1: y = 1;\n case 2: y = 2; break;\n default: y = 3;\n }\n if (y) goto out;\n y = 9;\n out:\n return y;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::x = 2",
            "1 -> 2 main::y = 0",
            "2 -> 3 assume((main::x == 1))",
            "2 -> 4 assume((main::x != 1))",
            "3 -> 5 main::y = 1",
            "4 -> 5 assume((main::x == 2))",
            "4 -> 6 assume((main::x != 2))",
            "5 -> 7 main::y = 2",
            "6 -> 7 main::y = 3",
            "7 -> 8 assume((main::y != 0))",
            "7 -> 9 assume((main::y == 0))",
            "8 -> 10 main::__ret = main::y",
            "9 -> 8 main::y = 9",
        ],
    );
}

#[test]
fn calls_params_returns_and_recursion() {
    let src = "int fact(int n) { if (n <= 1) return 1; return n * fact(n - 1); }\nvoid nothing(void) { }\nint main() {\n int r = fact(3);\n nothing();\n r = r + fact(r);\n return r;\n}\n";
    check(
        src,
        "fact",
        &[
            "0 -> 1 assume((fact::n <= 1))",
            "0 -> 2 assume((fact::n > 1))",
            "1 -> 3 fact::__ret = 1",
            "2 -> 4 fact::__t0 = fact::n",
            "4 -> 5 fact::__t1 = fact@2((fact::n - 1))",
            "5 -> 3 fact::__ret = (fact::__t0 * fact::__t1)",
        ],
    );
    // bounded recursion (cfa::recursion): the clones have their own variables, and
    // the last one's recursive call leads to the bound target
    check(
        src,
        "fact@2",
        &[
            "0 -> 1 assume((fact@2::n <= 1))",
            "0 -> 2 assume((fact@2::n > 1))",
            "1 -> 3 fact@2::__ret = 1",
            "2 -> 4 fact@2::__t0 = fact@2::n",
            "4 -> 5 fact@2::__t1 = fact@3((fact@2::n - 1))",
            "5 -> 3 fact@2::__ret = (fact@2::__t0 * fact@2::__t1)",
        ],
    );
    let bound = edges(&lower(src), "fact@3");
    assert!(
        bound.contains(&"4 -> 5 assume(0)".to_string())
            && bound
                .iter()
                .any(|e| e.starts_with("4 -> ") && e.ends_with(" skip")),
        "{bound:?}"
    );
    check(
        src,
        "main",
        &[
            "0 -> 1 main::r = fact(3)",
            "1 -> 2 nothing()",
            "2 -> 3 main::__t0 = main::r",
            "3 -> 4 main::__t1 = fact(main::r)",
            "4 -> 5 main::r = (main::__t0 + main::__t1)",
            "5 -> 6 main::__ret = main::r",
        ],
    );
    let p = lower(src);
    let fact = p.function("fact").expect("fact");
    assert_eq!(p.functions[fact].params.len(), 1);
    assert!(p.functions[fact].ret.is_some());
    let nothing = p.function("nothing").expect("nothing");
    assert!(p.functions[nothing].ret.is_none());
    check(src, "nothing", &["0 -> 1 skip"]);
    assert!(p.function("nothing@2").is_none() && p.function("fact@4").is_none());
}

#[test]
fn globals_typedef_enum_sizeof() {
    let src = "#include <stdlib.h>\ntypedef int myint;\nenum color { RED, GREEN = 5, BLUE };\nstruct node { struct node *next; long l; char c; };\nmyint g = BLUE;\nstruct node *head;\nunsigned u;\nint main() {\n long s = sizeof(struct node);\n enum color c = GREEN;\n int c2 = RED;\n head = 0;\n return s + c2 + g + (int)u + (int)c;\n}\n";
    check(
        src,
        "__shapemc_start",
        &[
            "0 -> 1 g = 6",
            "1 -> 2 head = NULL",
            "2 -> 3 u = 0",
            "3 -> 4 main()",
        ],
    );
    check(
        src,
        "main",
        &[
            "0 -> 1 main::s = 12",
            "1 -> 2 main::c = 5",
            "2 -> 3 main::c2 = 0",
            "3 -> 4 head = NULL",
            "4 -> 5 main::__ret = ((((main::s + main::c2) + g) + (int32)u) + (int32)main::c)",
        ],
    );
    let p = lower(src);
    let entry = p.entry;
    assert_eq!(p.graph[entry].kind, LocKind::FuncEntry);
    assert_eq!(p.functions[p.graph[entry].func].name, "__shapemc_start");
    assert_eq!(p.functions[p.main].name, "main");
}

#[test]
fn nondet_assume_error_and_halt() {
    let src = "#include <assert.h>\n#include <stdlib.h>\nextern int __VERIFIER_nondet_int(void);\nextern unsigned char __VERIFIER_nondet_uchar(void);\nextern void __VERIFIER_assume(int);\nvoid reach_error() { __assert_fail(\"0\", \"f.c\", 1, \"reach_error\"); }\nint main() {\n int x = __VERIFIER_nondet_int();\n unsigned char c = __VERIFIER_nondet_uchar();\n __VERIFIER_assume(x > 0 && c);\n if (x == 3) reach_error();\n if (x == 4) abort();\n if (x == 5) exit(1);\n assert(x != 6);\n return 0;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::x = nondet()",
            "1 -> 2 main::c = nondet()",
            "2 -> 3 assume((main::x > 0))",
            "3 -> 4 assume((main::c != 0))",
            "4 -> 5 assume((main::x == 3))",
            "4 -> 6 assume((main::x != 3))",
            "5 -> 7 ERR reach_error()",
            "6 -> 8 assume((main::x == 4))",
            "6 -> 9 assume((main::x != 4))",
            "8 -> 10 SINK halt",
            "9 -> 11 assume((main::x == 5))",
            "9 -> 12 assume((main::x != 5))",
            "11 -> 13 SINK halt",
            "12 -> 14 assume((main::x != 6))",
            "12 -> 15 assume((main::x == 6))",
            "14 -> 16 main::__ret = 0",
            "15 -> 17 ERR reach_error()",
        ],
    );
    let p = lower(src);
    // reach_error's body is not lowered; error locations have no successors
    assert!(p.function("reach_error").is_none());
    for n in p.graph.node_indices() {
        if matches!(p.graph[n].kind, LocKind::Error | LocKind::Sink) {
            assert_eq!(p.successors(n).count(), 0);
        }
    }
}

#[test]
fn casts_between_integer_types() {
    let src = "int main() {\n int i = 300;\n unsigned char c = i;\n _Bool b = i;\n unsigned u = 0u - 1u;\n long l = c;\n return b + l;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::i = 300",
            "1 -> 2 main::c = (uint8)main::i",
            "2 -> 3 main::b = (main::i != 0)",
            "3 -> 4 main::u = 4294967295",
            "4 -> 5 main::l = main::c",
            "5 -> 6 main::__ret = (main::b + main::l)",
        ],
    );
}

#[test]
fn printf_is_allowed_and_nondet() {
    let src = "#include <stdio.h>\nint main() {\n int n = printf(\"%d\\n\", 3);\n puts(\"hi\");\n return n;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::__t0 = nondet()",
            "1 -> 2 main::n = main::__t0",
            "2 -> 3 main::__ret = main::n",
        ],
    );
}

#[test]
fn builtin_expect_is_its_first_argument() {
    let src = "int main() {\n int x = 3;\n if (__builtin_expect(x > 2, 1)) x = 0;\n return x;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::x = 3",
            "1 -> 2 assume((main::x > 2))",
            "1 -> 3 assume((main::x <= 2))",
            "2 -> 3 main::x = 0",
            "3 -> 4 main::__ret = main::x",
        ],
    );
}

#[test]
fn text_and_dot_forms() {
    let p = lower("int main() { return 0; }\n");
    let text = program_to_text(&p, None);
    assert!(text.contains("function main (entry"), "{text}");
    assert!(text.contains("[1:21] main::__ret = 0"), "{text}");
    let dot = program_to_dot(&p, None);
    assert!(dot.starts_with("digraph cfa {"));
    assert!(dot.contains("label=\"main::__ret = 0\""), "{dot}");
}

#[test]
fn a_call_of_an_allocation_wrapper_is_lowered_as_the_allocation() {
    // cursor::alloc_wrapper: the call site allocates, typed by the caller's pointer or,
    // for `void *q`, by the wrapper's own return type
    let src = "#include <stdlib.h>\nstruct node { int v; struct node *next; };\nvoid *kzalloc(int size, int flags) { (void) flags; return calloc(1, size); }\nstruct node *new_node(void) { return malloc(sizeof(struct node)); }\nint main() {\n struct node *p = kzalloc(sizeof(struct node), 1);\n void *q = new_node();\n return p == q;\n}\n";
    let got = edges(&lower(src), "main");
    assert!(
        got.iter()
            .any(|e| e.ends_with("main::p = calloc(struct node)")),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|e| e.ends_with("main::q = malloc(struct node)")),
        "{got:?}"
    );
}

#[test]
fn what_gcc_only_warns_about_is_lowered_or_refused_never_a_parse_error() {
    // clang 16+ makes these errors; gcc (SV-COMP's compiler) warns: ldv-regression's
    // ex3_forlist defines `void *malloc(int)` returning an int
    unsupported(
        "int *g(void) { return 5; }\nint main() { return g() == 0; }\n",
        1,
        23,
        "integer to pointer conversion",
    );
    unsupported(
        "int main() { int x = foo(2);\n return x; }\n",
        1,
        22,
        "call to external function `foo`",
    );
}

#[test]
fn arrays_of_constant_length_are_lowered_element_by_element() {
    // frontend::lower::array: an element is a variable (a cell when an element's
    // address is taken, an object for a struct) or a field; a computed index branches
    let p = lower(
        "struct p { int x; };\nstruct s { int arr[2]; struct p ps[2]; };\nint g[3] = {1, 2};\nstruct s gs = {{5, 6}, {{7}, {8}}};\nint main(void) {\n  int i = 1;\n  int a[4] = {3};\n  struct s t;\n  int m[2][3];\n  a[i] = 1;\n  t.arr[1] = a[2];\n  t.ps[i].x = 3;\n  m[1][i] = 4;\n  int *q = &a[i];\n  return g[i] + gs.ps[1].x + *q + 2[a];\n}\n",
    );
    let names: Vec<&str> = p.vars.iter().map(|v| v.name.as_str()).collect();
    for v in ["g[0]", "g[2]", "main::a[3]", "main::m[1][2]", "gs"] {
        assert!(names.contains(&v), "{v}: {names:?}");
    }
    let s = p.structs.iter().find(|s| s.name == "s").expect("struct s");
    let fields: Vec<&str> = s.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(fields, ["arr[0]", "arr[1]", "ps[0].x", "ps[1].x"]);
    let main = edges(&p, "main");
    let has = |s: &str| main.iter().any(|e| e.contains(s));
    // `a[i] = 1`: one arm per element, an index out of range is an invalid access
    assert!(
        has("assume((main::i == 3))") && has("*main::a[3] = 1"),
        "{main:?}"
    );
    assert!(has("assume((main::i >= 4))"), "{main:?}");
    // out of range: an invalid access (4 accesses), or for `&a[i]` not modelled (one
    // past the end included)
    let kinds = |k: LocKind| p.graph.node_weights().filter(|l| l.kind == k).count();
    assert_eq!(kinds(LocKind::InvalidDeref), 4);
    assert_eq!(kinds(LocKind::Unmodelled), 1);
    assert!(
        has("main::t->ps[1].x = 3") && has("main::m[1][2] = 4"),
        "{main:?}"
    );
    // initialisers: missing elements are zero, globals too
    let start = edges(&p, "__shapemc_start");
    let init = |s: &str| start.iter().any(|e| e.contains(s));
    assert!(init("g[2] = 0") && init("gs->ps[1].x = 8"), "{start:?}");
    assert!(has("*main::a[1] = 0"), "{main:?}");

    // a static local array is a global one, initialised once by the start function
    let p = lower("int count(int k) { static int seen[3] = {0, 0, 7}; return ++seen[k]; }\nint main(void) { return count(2); }\n");
    assert!(p.vars.iter().any(|v| v.name == "count::seen[2]"));
    assert!(edges(&p, "__shapemc_start")
        .iter()
        .any(|e| e.contains("count::seen[2] = 7")));

    // an array used as a pointer: `p + i` branches over the elements of the arrays of
    // its type, a result outside them is not modelled
    let p =
        lower("int main(void) { int a[3]; int *p = a; p[1] = 2; p++; *p = 3; return a[1] - 3; }\n");
    let main = edges(&p, "main");
    assert!(
        main.iter()
            .any(|e| e.contains("assume((main::p == main::a[2]))")),
        "{main:?}"
    );
    let kinds = |k: LocKind| p.graph.node_weights().filter(|l| l.kind == k).count();
    assert!(kinds(LocKind::Unmodelled) >= 4);

    // what stays refused, with the position
    let no = |src: &str, col: u32, what: &str| unsupported(src, 1, col, what);
    no(
        "int main(void) { int a[3]; int *p = a, *q = a; return p - q; }",
        55,
        "pointer arithmetic",
    );
    no(
        "int main(void) { int x = 1; int *p = &x; return p[1]; }",
        49,
        "pointer arithmetic outside an array",
    );
    no(
        "int main(void) { int a[3] = {[1] = 2}; return a[0]; }",
        29,
        "designated initialiser",
    );
    no(
        "int main(void) { char s[4] = \"abc\"; return s[0]; }",
        30,
        "not a list",
    );
    no(
        "int main(void) { int big[300]; big[0] = 1; return 0; }",
        22,
        "more than 256 elements",
    );
    no(
        "int main(void) { int a[2][2] = {1, 2, 3, 4}; return a[0][0]; }",
        39,
        "excess initialiser",
    );
}

#[test]
fn unsupported_constructs_are_refused_with_position() {
    unsupported(
        "int f(int n) {\n int a[n];\n return 0;\n}\nint main() { return f(3); }\n",
        2,
        6,
        "array of unknown or variable length",
    );
    unsupported(
        "union u { int a; float b; };\nint main() {\n union u x;\n return 0;\n}\n",
        3,
        10,
        "union",
    );
    unsupported(
        "int f(int x) { return x; }\nint main() {\n long (*fp)(int) = (long (*)(int)) f;\n return fp(1);\n}\n",
        3,
        20,
        "cast between function pointer types",
    );
    unsupported(
        "int main() {\n double d = 1.0;\n return 0;\n}\n",
        2,
        9,
        "floating point",
    );
    unsupported("struct n { struct n *next; };\nint main() {\n struct n *p = 0;\n p = p + 1;\n return 0;\n}\n", 4, 6, "pointer arithmetic");
    unsupported("#include <string.h>\nstruct n { int d; };\nint main() {\n struct n x;\n memset(&x, 0, sizeof x);\n return 0;\n}\n", 5, 2, "external function `memset`");
    unsupported(
        "int main() {\n __asm__(\"nop\");\n return 0;\n}\n",
        2,
        2,
        "inline assembly",
    );
    unsupported(
        "#include <stdarg.h>\nint f(int n, ...) { return n; }\nint main() {\n return f(1, 2);\n}\n",
        2,
        5,
        "variadic",
    );
    unsupported(
        "int main() {\n int x = 0;\n int *p = (int *) 4;\n return x;\n}\n",
        3,
        11,
        "integer to pointer",
    );
}

#[test]
fn syntax_errors_are_parse_errors() {
    match lower_opts("int main() { return 0 }\n", &FrontendOptions::default()) {
        Err(e @ FrontendError::Parse { .. }) => {
            assert_eq!(e.exit_code(), 2);
            let t = e.to_string();
            assert!(t.contains(":1:22: error:"), "{t}");
        }
        Err(e) => panic!("expected a parse error, got {e}"),
        Ok(_) => panic!("expected a parse error"),
    }
    let missing = parse_file(
        std::path::Path::new("/nonexistent/x.c"),
        &FrontendOptions::default(),
    );
    assert!(matches!(missing, Err(FrontendError::Parse { .. })));
}

#[test]
fn cli_cfa_command_exit_codes() {
    let bin = env!("CARGO_BIN_EXE_shapemc");
    let ok = write_src("int main() { int x = 1; return x; }\n");
    let out = std::process::Command::new(bin)
        .args(["cfa", ok.to_str().expect("utf8"), "--function", "main"])
        .output()
        .expect("run shapemc");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("main::x = 1"), "{text}");
    // --checks shows the undefined-behaviour targets verify adds
    let div = write_src("int main() { int x = 7, y = 1; return x / y; }\n");
    for (args, shown) in [(&[][..], false), (&["--checks"][..], true)] {
        let out = std::process::Command::new(bin)
            .arg("cfa")
            .arg(&div)
            .args(args)
            .output()
            .expect("run shapemc");
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.contains("(division by zero)"), shown, "{text}");
    }
    std::fs::remove_file(&div).ok();
    for fmt in ["dot", "json"] {
        let out = std::process::Command::new(bin)
            .args(["cfa", ok.to_str().expect("utf8"), "--format", fmt])
            .output()
            .expect("run shapemc");
        assert_eq!(out.status.code(), Some(0), "{fmt}");
    }

    let bad = write_src("int main() {\n int a[2];\n int *p = a, *q = a;\n return p - q;\n}\n");
    let out = std::process::Command::new(bin)
        .args(["cfa", bad.to_str().expect("utf8")])
        .output()
        .expect("run shapemc");
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(":4:9: unsupported: pointer arithmetic"),
        "{err}"
    );

    let syntax = write_src("int main() { return 0 }\n");
    let out = std::process::Command::new(bin)
        .args(["cfa", syntax.to_str().expect("utf8")])
        .output()
        .expect("run shapemc");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(": error: "), "{err}");
    for f in [ok, bad, syntax] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn nondet_of_various_types() {
    let src = "extern unsigned int __VERIFIER_nondet_uint(void);\nextern char __VERIFIER_nondet_char(void);\nextern _Bool __VERIFIER_nondet_bool(void);\nextern long __VERIFIER_nondet_long(void);\nextern void *__VERIFIER_nondet_pointer(void);\nstruct n { int d; };\nint main() {\n unsigned u = __VERIFIER_nondet_uint();\n char c = __VERIFIER_nondet_char();\n _Bool b = __VERIFIER_nondet_bool();\n int i = __VERIFIER_nondet_long();\n struct n *p = __VERIFIER_nondet_pointer();\n return 0;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::u = nondet()",
            "1 -> 2 main::c = nondet()",
            "2 -> 3 main::b = nondet()",
            "3 -> 4 main::i = nondet()",
            "4 -> 5 main::__t0 = nondet()",
            "5 -> 6 main::p = (struct n*)main::__t0",
            "6 -> 7 main::__ret = 0",
        ],
    );
    let p = lower(src);
    let ty = |name: &str| {
        let v = p.vars.iter().find(|v| v.name == name).expect("var");
        p.ty_str(&v.ty)
    };
    assert_eq!(ty("main::u"), "uint32");
    assert_eq!(ty("main::c"), "int8");
    assert_eq!(ty("main::b"), "uint1");
    assert_eq!(ty("main::__t0"), "void*");
}

#[test]
fn struct_copies_are_field_by_field() {
    let src = "struct in { int a; int *p; };\nstruct out { int k; struct in i; };\nint main() {\n struct out o;\n struct in x = { 1, 0 };\n struct out *q = &o;\n q->i = x;\n struct in y = q->i;\n return y.a;\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::o = stack_alloc(struct out)",
            "1 -> 2 main::x = stack_alloc(struct in)",
            "2 -> 3 main::x->a = 1",
            "3 -> 4 main::x->p = NULL",
            "4 -> 5 main::q = main::o",
            "5 -> 6 main::__t0 = main::x->a",
            "6 -> 7 main::__t1 = main::x->p",
            "7 -> 8 main::q->i.a = main::__t0",
            "8 -> 9 main::q->i.p = main::__t1",
            "9 -> 10 main::y = stack_alloc(struct in)",
            "10 -> 11 main::__t2 = main::q->i.a",
            "11 -> 12 main::__t3 = main::q->i.p",
            "12 -> 13 main::y->a = main::__t2",
            "13 -> 14 main::y->p = main::__t3",
            "14 -> 15 main::__ret = main::y->a",
        ],
    );
}

#[test]
fn allocation_type_flows_through_conditional() {
    let src = "#include <stdlib.h>\nstruct item { struct item *next; struct item *data; };\nint main() {\n struct item *it = malloc(sizeof *it);\n it->data = it->next ? it->next : malloc(sizeof *it);\n return 0;\n}\n";
    let p = lower(src);
    let pointees: Vec<String> = p
        .graph
        .edge_weights()
        .filter_map(|e| match &e.op {
            Op::Alloc { pointee, .. } => Some(p.ty_str(pointee)),
            _ => None,
        })
        .collect();
    assert_eq!(pointees, vec!["struct item", "struct item"]);
}

#[test]
fn division_by_zero_checks_sit_beside_every_division_by_a_variable() {
    let src = "int g(int a) { return a; }
        int main(void) {
          int a = 7, b = 2, c = 3;
          int x = a / 2;          /* constant divisor: no check */
          int y = a / b + a % b;  /* one check for b */
          if (a / c > 1)          /* one check for c, shared by both branches */
            y = g(y % (c - 1));   /* the divisor expression c - 1 */
          return x + y;
        }";
    let mut p = lower(src);
    let edges = p.graph.edge_count();
    assert_eq!(p.add_div_by_zero_checks(), 3);
    let mut checks = Vec::new();
    for e in p.graph.edge_indices().skip(edges) {
        let (_, to) = p.graph.edge_endpoints(e).unwrap();
        assert_eq!(p.graph[to].kind, LocKind::DivByZero);
        assert!(p.is_error(to) && p.is_undefined_target(to) && !p.is_null_deref(to));
        checks.push(p.op_str(&p.graph[e].op));
    }
    assert_eq!(
        checks,
        vec![
            "assume((main::b == 0))",
            "assume((main::c == 0))",
            "assume(((main::c - 1) == 0))"
        ]
    );
}

#[test]
fn null_dereference_checks_sit_beside_every_access_through_a_pointer() {
    let src = "struct s { int a; struct s *n; };
        int main(void) {
          struct s local;
          struct s *p = &local;
          local.a = 1;            /* through the stack object: never NULL, no check */
          p->a = 2;               /* store through p */
          int x = p->n->a;        /* two loads */
          int *q = &p->a;         /* the address of a field dereferences p */
          *q = x;                 /* store through q */
          return 0;
        }";
    let mut p = lower(src);
    let (nodes, edges) = (p.graph.node_count(), p.graph.edge_count());
    let before: Vec<_> = p.graph.edge_weights().cloned().collect();
    assert_eq!(p.add_null_deref_checks(), 5);
    // only appended: every old index names what it named before
    assert_eq!(p.graph.edge_count(), edges + 5);
    assert_eq!(p.graph.node_count(), nodes + 5);
    assert!(before
        .iter()
        .zip(p.graph.edge_weights())
        .all(|(a, b)| a == b));
    let mut checks = Vec::new();
    for e in p.graph.edge_indices().skip(edges) {
        let (from, to) = p.graph.edge_endpoints(e).unwrap();
        assert_eq!(p.graph[to].kind, LocKind::NullDeref);
        assert!(p.is_error(to) && p.is_null_deref(to));
        assert_eq!(p.successors(to).count(), 0);
        // the check leaves the location of its access, after it
        let sibling = p
            .successors(from)
            .map(|(id, _, _)| id)
            .min()
            .expect("the access edge");
        assert!(sibling < e);
        checks.push(format!("{} {}", p.graph[e].src, p.op_str(&p.graph[e].op)));
    }
    assert!(checks.iter().all(|c| c.contains("== NULL")), "{checks:?}");
    assert!(!checks.iter().any(|c| c.contains("local")), "{checks:?}");
    // invalid (dangling, garbage) dereferences: beside the struct accesses and `*q`
    let edges = p.graph.edge_count();
    assert_eq!(p.add_invalid_deref_checks(), 5);
    let mut invalid = Vec::new();
    for e in p.graph.edge_indices().skip(edges) {
        let (_, to) = p.graph.edge_endpoints(e).unwrap();
        assert_eq!(p.graph[to].kind, LocKind::InvalidDeref);
        assert!(p.is_error(to) && p.is_undefined_target(to));
        invalid.push(p.op_str(&p.graph[e].op));
    }
    // p three times, the temporary holding p->n once
    assert_eq!(
        invalid
            .iter()
            .filter(|c| *c == "assume_invalid(main::p)")
            .count(),
        3,
        "{invalid:?}"
    ); // the store through the pointer to a field needs a live scalar cell
    assert!(
        invalid.iter().any(|c| c == "assume_invalid(*main::q)"),
        "{invalid:?}"
    );
}

#[test]
fn gcc_only_attributes_are_ignored_with_a_warning() {
    // glibc 2.36 under gcc: `__malloc__ (deallocator, n)`, which clang rejects
    let src = "#include <stdlib.h>\nvoid *mk(int n)\n __attribute__ ((__nothrow__, __malloc__ (free, 1), __leaf__));\nvoid *mk2(void) __attribute__ ((__malloc__ (free, 1)));\nint main() {\n int x = 1;\n int a[x];\n return x;\n}\n";
    let path = write_src(src);
    // later positions are those of the file on disk
    match parse_file_with_warnings(&path, &FrontendOptions::default()) {
        Err(e @ FrontendError::Unsupported { .. }) => {
            assert!(e.to_string().contains(":7:6: unsupported: array"), "{e}")
        }
        Err(e) => panic!("expected unsupported, got {e}"),
        Ok(_) => panic!("expected unsupported"),
    }
    let ok = src.replace(" int a[x];\n", "");
    std::fs::write(&path, &ok).expect("write");
    let (p, warnings) =
        parse_file_with_warnings(&path, &FrontendOptions::default()).expect("parses");
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let name = path.display().to_string();
    assert!(
        warnings[0].starts_with(&format!(
            "{name}:3:31: warning: ignoring attribute '__malloc__' (clang: "
        )),
        "{warnings:?}"
    );
    assert!(
        warnings[1].starts_with(&format!(
            "{name}:4:33: warning: ignoring attribute '__malloc__'"
        )),
        "{warnings:?}"
    );
    assert_eq!(
        edges(&p, "main"),
        ["0 -> 1 main::x = 1", "1 -> 2 main::__ret = main::x"]
    );
    // the CLI prints them on stderr and goes on
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_shapemc"))
        .arg("cfa")
        .arg(&path)
        .output()
        .expect("run shapemc");
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(":3:31: warning: ignoring attribute '__malloc__'"),
        "{err}"
    );
    // an attribute that changes the layout is never dropped: its error stays
    std::fs::write(
        &path,
        "struct s { int a __attribute__((__aligned__(3))); };\nint main() { return 0; }\n",
    )
    .expect("write");
    match parse_file_with_warnings(&path, &FrontendOptions::default()) {
        Err(e @ FrontendError::Parse { .. }) => assert!(e.to_string().contains("alignment"), "{e}"),
        Err(e) => panic!("expected a parse error, got {e}"),
        Ok(_) => panic!("expected a parse error"),
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn gcc_float_types_and_builtins_do_not_break_integer_programs() {
    // what glibc's headers expand to under gcc (`bits/floatn.h`, fortify wrappers)
    let src = "typedef _Float128 f128;\ntypedef _Float32 f32;\ntypedef _Float64x f64x;\nextern _Float128 strtof128(const char *__restrict p);\n__extension__ typedef long long ll;\nstatic __inline int g(int *__restrict p) { return __builtin_expect(*p, 0); }\nextern __inline int pr(int n, ...) { return __builtin_va_arg_pack(); }\nstruct s { int a; int b; };\nint main() {\n int x = 2;\n ll y = __builtin_offsetof(struct s, b);\n return g(&x) + (int) y;\n}\n";
    let path = write_src(src);
    let (p, warnings) =
        parse_file_with_warnings(&path, &FrontendOptions::default()).expect("parses");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains(":1:9: warning: treating gcc's '_Float128' as 'long double'")),
        "{warnings:?}"
    );
    // `__builtin_va_arg_pack()` is an implicit declaration, which clang (with gcc's
    // `-Wno-error=implicit-function-declaration`) accepts with a warning of its own
    assert!(
        !warnings.iter().any(|w| w.contains("error")),
        "{warnings:?}"
    );
    assert!(p.function("g").is_some());
    // a use of the stand-in builtin is refused, not given a value
    let call = src.replace("return g(&x) + (int) y;", "return pr(1);");
    std::fs::write(&path, call).expect("write");
    match parse_file_with_warnings(&path, &FrontendOptions::default()) {
        Err(e @ FrontendError::Unsupported { .. }) => assert_eq!(e.exit_code(), 3),
        Err(e) => panic!("expected unsupported, got {e}"),
        Ok(_) => panic!("expected unsupported"),
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn indirect_calls_branch_over_the_address_taken_functions_of_their_type() {
    // ids are 1 + FuncId (main 0, then in the order addresses are taken: lt, one, gt,
    // call); `unused` is never lowered, `one` has another type
    let src = "typedef int (*cmp_t)(int, int);\nstruct ops { cmp_t cmp; };\nint lt(int a, int b) { return a < b; }\nint gt(int a, int b) { return a > b; }\nint one(int a) { return a; }\nint unused(int a, int b) { return 0; }\nint call(struct ops *o, int x) { return o->cmp(x, 1); }\nint main() {\n struct ops o = { lt };\n int (*u)(int) = &one;\n if (o.cmp == 0) return 0;\n o.cmp = gt;\n return call(&o, 2) + (*u)(3);\n}\n";
    check(
        src,
        "main",
        &[
            "0 -> 1 main::o = stack_alloc(struct ops)",
            "1 -> 2 main::o->cmp = 2",
            "2 -> 3 main::u = 3",
            "3 -> 4 main::__t0 = main::o->cmp",
            "4 -> 5 assume((main::__t0 == 0))",
            "4 -> 6 assume((main::__t0 != 0))",
            "5 -> 7 main::__ret = 0",
            "6 -> 8 main::o->cmp = 4",
            "8 -> 9 main::__t1 = call(main::o, 2)",
            "9 -> 10 main::__t2 = main::__t1",
            "10 -> 11 assume((main::u == 3))",
            "10 -> 12 INVALID_CALL assume((main::u != 3))",
            "11 -> 13 main::__t3 = one(3)",
            "13 -> 7 main::__ret = (main::__t2 + main::__t3)",
        ],
    );
    check(
        src,
        "call",
        &[
            "0 -> 1 call::__t0 = call::o->cmp",
            "1 -> 2 assume((call::__t0 == 2))",
            "1 -> 3 assume((call::__t0 != 2))",
            "2 -> 4 call::__t1 = lt(call::x, 1)",
            "3 -> 5 assume((call::__t0 == 4))",
            "3 -> 6 INVALID_CALL assume((call::__t0 != 4))",
            "4 -> 7 call::__ret = call::__t1",
            "5 -> 4 call::__t1 = gt(call::x, 1)",
        ],
    );
    let p = lower(src);
    assert!(p.function("unused").is_none());
    let v = p.vars.iter().find(|v| v.name == "main::u").expect("u");
    assert_eq!(p.ty_str(&v.ty), "int32");
    // the fall-through is an undefined-behaviour target without successors
    let targets: Vec<_> = p
        .graph
        .node_indices()
        .filter(|&n| p.graph[n].kind == LocKind::InvalidCall)
        .collect();
    assert_eq!(targets.len(), 2);
    for t in targets {
        assert!(p.is_error(t) && p.is_undefined_target(t));
        assert_eq!(p.successors(t).count(), 0);
    }
    // no candidate at all: the call site leads to the target only
    let none = "int main() {\n int (*fp)(void) = 0;\n return fp();\n}\n";
    check(
        none,
        "main",
        &[
            "0 -> 1 main::fp = 0",
            "1 -> 2 INVALID_CALL assume((main::fp == main::fp))",
        ],
    );
    // a parameter, NULL comparisons, `_Bool`, a global initialiser, a call of a
    // constant is direct (ids: main 0, each 1, inc 2)
    let src = "#include <stddef.h>\nvoid inc(int *x) { (*x)++; }\nvoid (*g)(int *) = inc;\nvoid each(void (*f)(int *), int *x) { if (f != NULL) f(x); }\nint main() {\n int x = 0;\n _Bool b = g;\n each(g, &x);\n (&inc)(&x);\n return b && g == inc;\n}\n";
    check(
        src,
        "each",
        &[
            "0 -> 1 assume((each::f != 0))",
            "0 -> 2 assume((each::f == 0))",
            "1 -> 3 assume((each::f == 3))",
            "1 -> 4 INVALID_CALL assume((each::f != 3))",
            "3 -> 2 inc(each::x)",
        ],
    );
    let p = lower(src);
    let m = edges(&p, "main");
    assert!(
        m.contains(&"2 -> 3 main::b = (g != 0)".to_string()),
        "{m:?}"
    );
    assert!(m.contains(&"6 -> 8 assume((g == 3))".to_string()), "{m:?}");
    assert!(m.iter().any(|e| e.ends_with(" inc(main::x)")), "{m:?}");
    let start = edges(&p, "__shapemc_start");
    assert!(start.contains(&"0 -> 1 g = 3".to_string()), "{start:?}");
}

#[test]
fn function_pointers_beyond_calls_and_copies_are_refused() {
    let pre = "#include <stdio.h>\nint f(int a) { return a; }\nint v(int n, ...) { return n; }\nint main() {\n int (*fp)(int) = f;\n";
    let cases: &[(&str, u32, &str)] = &[
        (" long x = (long) fp;\n", 11, "function pointer cast"),
        (" void *p = (void *) f;\n", 12, "function pointer cast"),
        (" int r = fp < fp;\n", 10, "relational comparison"),
        (" fp++;\n", 2, "function pointer arithmetic"),
        (
            " int (*q)(int, ...) = v;\n",
            0,
            "variadic function definition",
        ),
        (
            " int (*q)(const char *, ...) = printf;\n",
            32,
            "external function `printf`",
        ),
        (
            " int (*q)() = f;\n return q(1);\n",
            15,
            "cast between function pointer types",
        ),
    ];
    for (body, col, what) in cases {
        let src = format!("{pre}{body} return 0;\n}}\n");
        if *col == 0 {
            unsupported(&src, 3, 5, what);
        } else {
            unsupported(&src, 6, *col, what);
        }
    }
    // calling through a pointer to a variadic function
    unsupported(
        "void h(int (*vp)(int, ...)) {\n vp(1, 2);\n}\nint main() {\n h(0);\n return 0;\n}\n",
        2,
        2,
        "variadic function",
    );
}
