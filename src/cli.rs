//! The command-line interface (`shapemc --help`).

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// shapemc: a software model checker for heap-manipulating C programs.
///
/// Answers SAFE (exit 0, with a certificate), UNSAFE (exit 10, with a counterexample
/// that replays concretely) or UNKNOWN (exit 20, with a reason). Parse and usage
/// errors exit 2; C constructs outside the supported subset exit 3 with
/// `file:line:col: unsupported: <construct>`.
#[derive(Parser, Debug)]
#[command(name = "shapemc", version, about, long_about)]
pub struct Cli {
    /// More log output (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Verify that no call to reach_error() (or a failing assert) is reachable.
    Verify {
        /// The C file.
        file: PathBuf,
    },
    /// Explore FILE explicitly and print explicit-heap samples with the invariants
    /// they satisfy and the recognised data structure per struct type.
    Samples {
        /// The C file (or a JSON-serialised CFA program).
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: crate::explicit::render::Format,
        /// Number of samples to collect.
        #[arg(long, default_value_t = 5)]
        samples: usize,
        /// Minimum depth (structure nodes) of a sample.
        #[arg(long = "min-nodes", default_value_t = 4)]
        min_nodes: usize,
    },
}

/// Runs the CLI and returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    match cli.command {
        Command::Verify { file } => {
            println!(
                "UNKNOWN: verification of {} is not implemented yet",
                file.display()
            );
            crate::diag::exit::UNKNOWN
        }
        Command::Samples {
            file,
            format,
            samples,
            min_nodes,
        } => crate::explicit::render::run_cli(&file, format, samples, min_nodes),
    }
}
