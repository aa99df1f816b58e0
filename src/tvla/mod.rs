//! Three-valued shape analysis (TVLA-style): logical structures over heap
//! individuals, FO(TC) formulas, canonical abstraction, focus, coerce and
//! predicate-update transfer functions (paper §2.3; Sagiv–Reps–Wilhelm).

pub mod class;
pub mod formula;
