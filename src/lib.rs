//! shapemc: a CEGAR software model checker for heap-manipulating C programs,
//! after "Shape Refinement through Explicit Heap Analysis" (Beyer, Henzinger,
//! Théoduloz, Zufferey). See `ARCHITECTURE.md` for the map of the crate.

pub mod affine;
pub mod art;
pub mod bench;
pub mod cegar;
pub mod cert;
pub mod cfa;
pub mod cli;
pub mod cpa;
pub mod diag;
pub mod explicit;
pub mod fieldptr;
pub mod frontend;
pub mod fuzz;
pub mod interp;
pub mod predabs;
// the rewriting reads its promoted types back with `expect("checked")` after a guard
// that checked them (src/promote.rs is edited elsewhere; let-else there would do)
#[allow(clippy::expect_used)]
pub mod promote;
pub mod scg;
pub mod shape;
pub mod simulate;
pub mod smt;
pub mod spec;
pub mod svcomp;
pub mod symheap;
#[cfg(test)]
pub(crate) mod testutil;
pub mod tvla;
