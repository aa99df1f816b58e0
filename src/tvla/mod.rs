//! Three-valued shape analysis (TVLA-style): logical structures over heap
//! individuals, FO(TC) formulas, canonical abstraction, focus, coerce and
//! predicate-update transfer functions (paper §2.3; Sagiv–Reps–Wilhelm).

pub mod analysis;
pub mod class;
pub mod coerce;
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
