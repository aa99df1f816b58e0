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
    ///
    /// SAFE (exit 0) comes with a checked proof that also shows no pointer is NULL where
    /// it is dereferenced, no struct pointer dangles where it is dereferenced, and no
    /// divisor is zero (after undefined behaviour C allows anything); such undefined
    /// behaviour, when reachable, answers UNKNOWN and names it. UNSAFE (exit 10) comes with a
    /// counterexample that replays; UNKNOWN (exit 20) with the reason.
    Verify {
        /// The C file.
        file: PathBuf,
        #[command(flatten)]
        cegar: crate::cegar::cli::VerifyArgs,
    },
    /// Check a safety certificate written by `verify --certificate` (VALID exit 0,
    /// INVALID and the reason exit 1, UNKNOWN exit 20 when a limit is reached).
    ///
    /// Needs no flags: the certificate's header says what it proves (allocation
    /// failing or not, the program as written or promoted) and names the input by its
    /// SHA-256; every shape class is regenerated from the SCG library, never read from
    /// the certificate.
    CheckCertificate {
        /// The C file.
        file: PathBuf,
        /// The certificate (written by `verify --certificate`; zstd-compressed or not).
        cert: PathBuf,
        #[command(flatten)]
        args: crate::cegar::cli::CheckArgs,
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
        /// Assume malloc/calloc never return NULL.
        #[arg(long)]
        malloc_never_fails: bool,
    },
    /// Run the program concretely with random nondeterministic values (bug hunting), or
    /// replay a counterexample. Exit 10 if the error location is reached, else 0
    /// (with --replay: 10 if the counterexample reaches the error, else 20).
    Simulate {
        /// The C file.
        file: PathBuf,
        /// Number of random runs.
        #[arg(long, default_value_t = 100)]
        runs: u64,
        /// Seed of the first run (run i uses seed + i); runs are reproducible.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Step limit per run (bounds loops).
        #[arg(long, default_value_t = 100_000)]
        max_steps: usize,
        /// Assume malloc/calloc never return NULL.
        #[arg(long)]
        malloc_never_fails: bool,
        /// Replay this counterexample (JSON written by `verify --cex`) instead of random runs.
        #[arg(long, value_name = "CEX")]
        replay: Option<PathBuf>,
        /// Print the trace of the first run that reaches the error (always with --replay).
        #[arg(long)]
        trace: bool,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: crate::simulate::SimFormat,
        /// Wall-clock budget in seconds: the process ends with UNKNOWN (exit 20) a few
        /// seconds after it, whatever it is doing.
        #[arg(long, value_name = "SECONDS")]
        timeout: Option<f64>,
    },
    /// Print the control-flow automaton the front end builds for a C file.
    Cfa {
        /// The C file.
        file: PathBuf,
        /// Only this function.
        #[arg(long)]
        function: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: crate::frontend::CfaFormat,
        /// Assume malloc/calloc never return NULL.
        #[arg(long)]
        malloc_never_fails: bool,
        /// Also show the undefined-behaviour targets `verify` adds and proves
        /// unreachable: `assume(p == NULL)` and `assume_invalid(p)` beside every
        /// dereference, `assume(d == 0)` beside every division by a non-constant.
        #[arg(long)]
        checks: bool,
        /// Show the promoted program `verify` also analyses: pointers to pointer fields
        /// split per target field, the objects of struct types a run allocates
        /// boundedly often turned into global variables.
        #[arg(long)]
        promote: bool,
    },
    /// Shape-class generator library: `scg list`, `scg check FILE`.
    Scg {
        #[command(subcommand)]
        cmd: crate::scg::cli::ScgCommand,
    },
    /// Run the scoreboard: `verify` on every SV-COMP task (*.yml) under the given folders.
    Bench(crate::bench::BenchArgs),
}

/// How shape-class generators are chosen (`shapemc verify --scg`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ScgMode {
    /// Refinement: trivial SCG first, refined along spurious counterexamples.
    #[default]
    Refine,
    /// The maximal SCGs for all pointers from the start, no SCG refinement.
    Maximal,
}

/// Runs the CLI and returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    match cli.command {
        Command::Verify { file, cegar } => {
            crate::diag::start_watchdog(cegar.timeout, "verify");
            crate::cegar::cli::run_verify(&file, &cegar)
        }
        Command::CheckCertificate { file, cert, args } => {
            crate::diag::start_watchdog(args.timeout, "check-certificate");
            crate::cegar::cli::run_check_certificate(&file, &cert, &args)
        }
        Command::Samples {
            file,
            format,
            samples,
            min_nodes,
            malloc_never_fails,
        } => {
            crate::explicit::render::run_cli(&file, format, samples, min_nodes, malloc_never_fails)
        }
        Command::Simulate {
            file,
            runs,
            seed,
            max_steps,
            malloc_never_fails,
            replay,
            trace,
            format,
            timeout,
        } => {
            crate::diag::start_watchdog(timeout, "simulate");
            let o = crate::simulate::SimOptions {
                runs,
                seed,
                max_steps,
                malloc_never_fails,
                show_trace: trace,
                format,
            };
            match replay {
                Some(cex) => crate::simulate::run_replay(&file, &cex, &o),
                None => crate::simulate::run_simulate(&file, &o),
            }
        }
        Command::Cfa {
            file,
            function,
            format,
            malloc_never_fails,
            checks,
            promote,
        } => crate::frontend::run_cfa_command(
            &file,
            function.as_deref(),
            format,
            checks,
            promote,
            &crate::frontend::FrontendOptions {
                malloc_never_fails,
                ..Default::default()
            },
        ),
        Command::Scg { cmd } => crate::scg::cli::run(cmd),
        Command::Bench(args) => crate::bench::run(args),
    }
}
