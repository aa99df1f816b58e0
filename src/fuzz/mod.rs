//! The fuzz campaign of `shapemc-fuzz` (`scripts/fuzz`): mutants of the benchmark C files,
//! of counterexamples and certificates `verify` writes, and of the SCG library, fed to the
//! release `shapemc`; a panic, a crash, an exit code outside the command's set or a run
//! past its deadline is a finding. `mutate` holds the mutation operators.

pub mod mutate;
