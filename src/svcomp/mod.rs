//! The SV-COMP conventions around `verify`: task definitions (`shapemc verify
//! TASK.yml`, [`task`]; data model and options in [`conventions`]), exchangeable
//! witnesses in format 2.0 (YAML; [`witness`] for the file types, [`violation`] and
//! [`correctness`] for producing them from `verify`'s evidence, with the loop
//! invariants of [`invariants`]; [`evidence`] for `--witness`) and their validation
//! (`shapemc validate-witness`, [`validate`]).
//!
//! Nothing here weakens `verify`'s guarantees: a violation witness is written only from
//! a counterexample that Z3 found feasible and the interpreter replayed, a correctness
//! witness only with a SAFE verdict; a witness is confirmed only by a run that Z3 finds
//! feasible and the interpreter replays to the error (violation), or by proofs of its
//! invariants (correctness).

pub mod conventions;
pub mod correctness;
pub mod evidence;
pub mod invariants;
pub mod task;
pub mod validate;
pub mod violation;
pub mod witness;

/// The LTL formula of the unreach-call property, as witnesses' `specification` names it.
pub const UNREACH_CALL_SPEC: &str = "G ! call(reach_error())";
