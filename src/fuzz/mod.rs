//! The fuzz campaign of `shapemc-fuzz` (`scripts/fuzz`): mutants of the benchmark C files,
//! of counterexamples and certificates `verify` writes, and of the SCG library, fed to the
//! release `shapemc`; a panic, a crash, an exit code outside the command's set or a run
//! past its deadline is a finding. `mutate` holds the mutation operators, `campaign` the
//! seeds, the runs and the checks.

pub mod campaign;
pub mod mutate;

pub use campaign::{run_campaign, Config, Kind, Summary};
