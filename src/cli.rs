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
    /// Shape-class generator library: `scg list`, `scg check FILE`.
    Scg {
        #[command(subcommand)]
        cmd: crate::scg::cli::ScgCommand,
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
        Command::Scg { cmd } => crate::scg::cli::run(cmd),
    }
}
