//! Path formulas, feasibility checks and interpolation on Z3 4.8 (no interpolation API:
//! interpolants are computed here and validated by Z3).
//!
//! # Memory model of the path encoding
//!
//! A path (`&[cfa::Step]`) is turned into static single assignment (SSA) form: every
//! assignment to a variable, field array or ghost array creates a new *version*, a Z3
//! constant named `name@k`. Each step contributes one conjunct `A_i` made of
//! *definitions* (`new_version = term(old versions)`), *guards* (conditions the step
//! needs: `assume` conditions, memory-safety side conditions) and *choices* (the
//! nondeterministic values the step picks, with their range).
//!
//! - **Integers** are mathematical integers (`Int`). Arithmetic (`+ - *`) is unbounded:
//!   signed overflow (undefined behaviour in C) is *not* modelled. Conversions are exact:
//!   an explicit `Cast` to an integer type and every assignment to an *unsigned* variable or
//!   field wrap modulo 2^bits (signed narrowing casts wrap two's-complement style).
//!   `/` and `%` truncate toward zero like C; a zero divisor is a guard (undefined
//!   behaviour does not continue the path). Bitwise operators and shifts by a non-constant
//!   amount are uninterpreted functions (`$bvand`, ...): a sound over-approximation — an
//!   infeasibility proof never depends on their values; a model that does is caught
//!   by the concrete replay. Nondeterministic values (`Nondet`, uninitialised locals) are
//!   constrained to the range of their type (`Ty::int_range`).
//! - **Pointers** are `Int`s, `NULL = 0`. The k-th allocation on the path (heap or stack)
//!   returns the fixed address `(k+1) * STRIDE` (`STRIDE = 4096`), so addresses are distinct
//!   from NULL and from every address allocated before on the path, including freed ones
//!   (no reuse). Only `==`/`!=` (and truth tests) on pointers are supported; relational
//!   comparison, arithmetic on pointers and pointer<->integer casts (other than the
//!   constant 0) make the encoder return [`SmtError::Unsupported`], because they could
//!   observe the concrete address numbering.
//! - **Heap cells** follow the Burstall–Bornat model: one array `S.f : Int -> Int` per
//!   struct field (address of the object -> value). `p->f = v` is
//!   `S.f@k+1 = store(S.f@k, p, v)`, `x = p->f` is `x@j+1 = select(S.f@k, p)`. A fresh
//!   `malloc` object's fields hold whatever the (unconstrained) initial array holds at the
//!   fresh address, i.e. arbitrary values; `calloc` stores 0 into every field.
//! - **Pointers to fields** (`&p->f`, `*pp`, as in Linux `hlist` `pprev`): `&p->f` is the
//!   address `p + index(f)` (the field's index in the flattened struct, `< STRIDE`). `*pp`
//!   decodes `base = pp - pp mod STRIDE`, `slot = pp mod STRIDE` and reads/writes
//!   `S.f[base]` for the field `f` of the struct `S` recorded for `base` in the ghost array
//!   `$valid` (exact, an `ite` over the candidate fields). Scalar objects (address-taken
//!   `int`/pointer variables, `AllocKind::Stack` with a scalar pointee) live in the ghost
//!   array `$cell`. A pointer to an *embedded struct* (`&p->inner` of struct type) is
//!   unsupported.
//! - **Validity** is the ghost array `$valid : Int -> Int`, constant 0 (nothing allocated)
//!   initially; allocation stores `tag + 1` where `tag` is the struct id of the object
//!   (`structs.len()` for scalar objects, `structs.len() + 1` for `void` objects), `free`
//!   stores 0 back. `$heap : Int -> Bool` (only when the path frees) records heap objects.
//! - **Memory-safety side conditions.** The property is unreach-call: the path formula
//!   says "the error location is reached *along this path*". Every `Load`/`Store` through
//!   `p` conjoins `$valid[p] = tag(S) + 1` (non-NULL, allocated, not freed, and holding an
//!   object of the accessed struct type — an access through an incompatible struct type
//!   violates C's effective-type rule); `*pp` conjoins that `pp` addresses a field of a
//!   valid object; `free(p)` conjoins `p = NULL ∨ ($valid[p] ≠ 0 ∧ $heap[p])`. A path that
//!   dereferences NULL/dangling pointers therefore does *not* reach the error along this
//!   path. The memory error is undefined behaviour, after which reach_error() may
//!   happen: `verify` makes every NULL dereference a target of its own
//!   (`cfa::Program::add_null_deref_checks`, a path ending in `assume(p == NULL)`), so
//!   a SAFE answer proves them unreachable too, and likewise every struct access
//!   through a dangling or garbage pointer (`cfa::Program::add_invalid_deref_checks`,
//!   a path ending in `assume_invalid(p)`, encoded `p ≠ 0 ∧ $valid[p] ≠ tag(S) + 1`).
//!   Accesses through pointers to fields (`*pp`) are not targets yet: a path through
//!   an invalid one stops here.
//! - **Allocation failure.** A heap `Alloc` returns NULL or the fresh address, chosen by a
//!   Boolean choice `$null#k`, unless `Program::malloc_never_fails`. Stack objects never fail.
//! - **Calls.** `Step::Enter` binds parameters to the argument values (converted to the
//!   parameter type) and gives the callee's locals fresh unconstrained versions
//!   (uninitialised); the caller's versions of the callee's variables are saved (recursion)
//!   and restored by `Step::Leave`, which then assigns the callee's return variable to the
//!   call's `ret`.
//!
//! - **Uninitialised values** (locals before their first assignment, including locals of
//!   every new activation; heap cells of `malloc` objects) are arbitrary (an
//!   over-approximation of C's indeterminate values). A nondeterministic *pointer* is NULL
//!   or a garbage address distinct from every object (encoded as a value in
//!   `[-2^31, 0]`, objects live at positive addresses), as in [`crate::interp`].
//!
//! Models convert to [`crate::cfa::Inputs`]: the values of `Nondet` steps in path order,
//! one NULL/non-NULL bit per heap `Alloc`, and the value of every memory read by path
//! step (`uninit_loads`), which the interpreter uses where it reads an uninitialised cell
//! (an integer as is; a pointer as NULL or a garbage pointer). It starts variables at
//! 0/NULL, so a model that relies on other uninitialised values (or on a garbage pointer
//! equal to an object) does not replay (the caller then answers UNKNOWN, never UNSAFE).

pub mod atoms;
pub mod encode;
pub mod feasibility;
pub mod interpolate;
pub mod limit;
pub mod term;

pub use atoms::{Atom, FieldAssertion, Operand, PositionAtoms, Rel};
pub use encode::{encode_path, PathEncoding};
pub use feasibility::{
    check_path, check_path_with, timeout_until, Feasibility, Model, Proof, SmtOptions,
};
pub use interpolate::{
    interpolate, refine_path, Interpolant, Interpolants, InterpolationOptions, PathAnalysis,
    Timings,
};

/// Errors of the SMT layer. None of them is a verdict: callers answer UNKNOWN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SmtError {
    /// The path uses a construct the encoding cannot represent exactly.
    #[error("unsupported in path formula: {0}")]
    Unsupported(String),
    /// The step sequence is not a path of the program (wrong edge kinds, discontinuous).
    #[error("invalid path: {0}")]
    InvalidPath(String),
    /// Z3 returned `unknown` (timeout, incompleteness) or failed.
    #[error("solver: {0}")]
    Solver(String),
    /// No validated interpolant sequence could be computed; no predicates are learnt.
    #[error("interpolation failed: {0}")]
    InterpolationFailed(String),
}
