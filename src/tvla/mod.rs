//! Three-valued shape analysis (TVLA-style): logical structures over heap
//! individuals, FO(TC) formulas, canonical abstraction, focus, coerce and
//! predicate-update transfer functions (paper §2.3; Sagiv–Reps–Wilhelm).
//!
//! Entry points:
//! - [`Structure::from_concrete`] + [`Structure::blur`]: HeapToShape (canonical
//!   abstraction of an explicit heap);
//! - [`transfer::post`]: abstract post of a [`PtrOp`] (focus, null-dereference check,
//!   predicate update, instrumentation update by differencing/re-evaluation, coerce,
//!   blur);
//! - [`ShapeRegion`]: join (union modulo isomorphism) and subsumption (embedding) for
//!   ART coverage;
//! - [`families`]: constructors of the instrumentation predicates the SCG library uses.
//!
//! Soundness is checked by `tests/tvla_soundness.rs` (on random heaps, the successor
//! computed by the test's own concrete semantics, and `post_concrete`'s, embed into the
//! abstract post); precision by `tests/tvla_fixpoint.rs`.

pub mod analysis;
pub mod class;
pub mod coerce;
pub mod counts;
pub mod eval;
pub mod families;
pub mod formula;
pub mod region;
pub mod structure;
pub mod transfer;

pub use class::{PredDef, ShapeClass};
pub use formula::{Formula, Kleene, PredSym};
pub use region::ShapeRegion;
pub use structure::{Fact, Structure, TvlaError, Vocab};
pub use transfer::{post, post_concrete, AbstractError, PostResult, PtrOp};
