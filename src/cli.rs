//! The command-line interface (`shapemc --help`).

use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

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
    /// The SCG library directory (`verify`, `check-certificate`, `scg`). Default:
    /// $SHAPEMC_SCG_LIBRARY, else `scg-library/` next to the binary, else
    /// `../share/shapemc/scg-library/` from the binary's folder, else the source tree's
    /// (for a binary built there), else the copy built into the binary.
    #[arg(long = "scg-library", value_name = "DIR", global = true)]
    pub scg_library: Option<PathBuf>,
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
    ///
    /// FILE may also be an SV-COMP task definition (`TASK.yml`): its input file, data
    /// model and properties are used, SV-COMP's conventions apply (`malloc` never
    /// fails), and an answer line per property follows (`unreach-call: SAFE`).
    Verify {
        /// The C file, or an SV-COMP task file (`.yml`/`.yaml`).
        file: PathBuf,
        #[command(flatten)]
        cegar: crate::cegar::cli::VerifyArgs,
        /// Write an SV-COMP witness (format 2.0, YAML) here: a violation witness
        /// (`violation_sequence`) for UNSAFE, a correctness witness (`invariant_set`)
        /// for SAFE; nothing for UNKNOWN.
        #[arg(long, value_name = "W.yml")]
        witness: Option<PathBuf>,
    },
    /// Validate an SV-COMP witness (format 2.0) for FILE: a violation witness is
    /// confirmed (UNSAFE, exit 10) by a run that follows its waypoints to its target,
    /// that Z3 finds feasible and the interpreter replays; a correctness witness
    /// (SAFE, exit 0) when `verify` proves each of its invariants as an assertion.
    /// Anything else, and a witness of another file (its `input_file_hashes`), is
    /// UNKNOWN (exit 20) with the reason.
    ValidateWitness {
        /// The C file the witness is for.
        file: PathBuf,
        /// The witness (YAML, format 2.0).
        witness: PathBuf,
        /// Wall-clock budget in seconds (UNKNOWN when exhausted).
        #[arg(long, value_name = "SECONDS")]
        timeout: Option<f64>,
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
        /// Sample the promoted program `verify` also analyses (see `cfa --promote`).
        #[arg(long)]
        promote: bool,
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
        /// With `--replay`: the property the counterexample violates (as `verify
        /// --property`); under a memory property the replay must end in a memory
        /// error or a leak of it.
        #[arg(long, value_name = "PROPERTY", default_value = "unreach-call", value_parser = crate::spec::Property::parse_arg)]
        property: crate::spec::Property,
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

/// The analysis' option type, re-exported where the commands are.
pub use crate::scg::ScgMode;

/// Runs the CLI and returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    if let Some(d) = cli.scg_library {
        crate::scg::location::set_cli_dir(d);
    }
    if matches!(
        cli.command,
        Command::Verify { .. }
            | Command::CheckCertificate { .. }
            | Command::Scg { .. }
            | Command::ValidateWitness { .. }
    ) {
        // a library the user named must be there: without it `verify` would run on
        // explicit heaps alone
        let loc = crate::scg::location::locate(None);
        if let Err(e) = crate::scg::location::check_explicit(&loc) {
            eprintln!("error: {e}");
            return crate::diag::exit::USAGE_OR_PARSE;
        }
    }
    match cli.command {
        Command::Verify {
            file,
            cegar,
            witness,
        } => {
            crate::diag::start_watchdog(cegar.timeout, "verify");
            if file.extension().is_some_and(|e| e == "yml" || e == "yaml") {
                return crate::svcomp::task::run_verify_task(&file, &cegar, witness.as_deref());
            }
            let writer = crate::svcomp::evidence::EvidenceWriter {
                input: &file,
                witness: witness.as_deref(),
                data_model: crate::svcomp::conventions::DataModel::Ilp32,
                malloc_never_fails: cegar.malloc_never_fails,
                property: cegar.property,
            };
            crate::cegar::cli::run_verify_with(&file, &cegar, &|rep| writer.write(rep)).0
        }
        Command::ValidateWitness {
            file,
            witness,
            timeout,
        } => {
            crate::diag::start_watchdog(timeout, "validate-witness");
            crate::svcomp::validate::run_validate(&file, &witness, timeout)
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
            promote,
        } => run_samples(
            &file,
            format,
            (samples, min_nodes),
            malloc_never_fails,
            promote,
        ),
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
            property,
        } => {
            crate::diag::start_watchdog(timeout, "simulate");
            let o = crate::simulate::SimOptions {
                runs,
                seed,
                max_steps,
                malloc_never_fails,
                show_trace: trace,
                format,
                property,
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
        } => run_cfa(
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

/// `shapemc cfa FILE`: prints the CFA (with `checks`, plus the undefined-behaviour
/// targets `verify` adds; with `promote`, after [`crate::promote::promote`], as
/// `verify` analyses it first) and returns the process exit code.
fn run_cfa(
    file: &Path,
    function: Option<&str>,
    format: crate::frontend::CfaFormat,
    checks: bool,
    promote: bool,
    opts: &crate::frontend::FrontendOptions,
) -> i32 {
    let mut prog = match crate::frontend::parse_file(file, opts) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return e.exit_code();
        }
    };
    if checks {
        prog.add_undefined_behaviour_checks();
    }
    if promote {
        match crate::promote::promote(&prog) {
            Some(p) => {
                for s in &p.split {
                    eprintln!(
                        "split {} into one pointer per target field: {}",
                        prog.ty_str(&s.ty),
                        s.target_names(&prog).join(", ")
                    );
                }
                for t in &p.types {
                    eprintln!("promoted {} ({} objects at most)", t.name, t.objects);
                }
                prog = p.program;
            }
            None => eprintln!("no struct type can be promoted, no pointer to a field split"),
        }
    }
    let only = match function {
        None => None,
        Some(name) => match prog.function(name) {
            Some(f) => Some(f),
            None => {
                eprintln!(
                    "error: no (reachable) function `{name}` in {}",
                    file.display()
                );
                return crate::diag::exit::USAGE_OR_PARSE;
            }
        },
    };
    match format {
        crate::frontend::CfaFormat::Text => {
            print!("{}", crate::frontend::program_to_text(&prog, only))
        }
        crate::frontend::CfaFormat::Dot => {
            print!("{}", crate::frontend::program_to_dot(&prog, only))
        }
        crate::frontend::CfaFormat::Json => match serde_json::to_string_pretty(&prog) {
            Ok(j) => println!("{j}"),
            Err(e) => {
                eprintln!("error: {e}");
                return crate::diag::exit::USAGE_OR_PARSE;
            }
        },
    }
    0
}

/// `shapemc samples FILE`: reads `FILE` (C via the front end, or a JSON-serialised
/// [`crate::cfa::Program`] for hand-built programs), samples it (or, with `promote`, its
/// promoted program) and prints the report. Returns
/// the exit code (0, or 2 for unreadable input, 3 for unsupported constructs).
fn run_samples(
    file: &Path,
    format: crate::explicit::render::Format,
    (samples, min_nodes): (usize, usize),
    malloc_never_fails: bool,
    promote: bool,
) -> i32 {
    let mut prog = match load_program(file, malloc_never_fails) {
        Ok(p) => p,
        Err((msg, code)) => {
            eprintln!("{msg}");
            return code;
        }
    };
    if promote {
        match crate::promote::promote(&prog) {
            Some(p) => prog = p.program,
            None => eprintln!("no struct type can be promoted, no pointer to a field split"),
        }
    }
    let mut cfg = crate::explicit::sample::SamplerConfig::default();
    cfg.threshold.samples = samples;
    cfg.threshold.min_nodes = min_nodes;
    let r = crate::explicit::sample::sample_program(&prog, &cfg);
    print!("{}", crate::explicit::render::render(&prog, &r, format));
    0
}

/// Loads a program: `.json` files are serialised [`crate::cfa::Program`]s, anything else is C.
fn load_program(
    file: &Path,
    malloc_never_fails: bool,
) -> Result<crate::cfa::Program, (String, i32)> {
    use crate::diag::exit::USAGE_OR_PARSE;
    if file.extension().is_some_and(|e| e == "json") {
        let text = std::fs::read_to_string(file)
            .map_err(|e| (format!("{}: {e}", file.display()), USAGE_OR_PARSE))?;
        let mut p: crate::cfa::Program = serde_json::from_str(&text).map_err(|e| {
            (
                format!("{}: not a program: {e}", file.display()),
                USAGE_OR_PARSE,
            )
        })?;
        p.malloc_never_fails |= malloc_never_fails;
        return Ok(p);
    }
    let opts = crate::frontend::FrontendOptions {
        malloc_never_fails,
        ..Default::default()
    };
    crate::frontend::parse_file(file, &opts).map_err(|e| (e.to_string(), e.exit_code()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_reads_json_programs() {
        let prog = crate::explicit::testutil::alloc_list_prog();
        let path =
            std::env::temp_dir().join(format!("shapemc_alloc_list_{}.json", std::process::id()));
        std::fs::write(&path, serde_json::to_string(&prog).unwrap()).unwrap();
        assert_eq!(
            run_samples(
                &path,
                crate::explicit::render::Format::Json,
                (2, 3),
                false,
                false
            ),
            0
        );
        let missing = std::env::temp_dir().join("shapemc_no_such_file.json");
        assert_eq!(
            run_samples(
                &missing,
                crate::explicit::render::Format::Text,
                (2, 3),
                false,
                false
            ),
            2
        );
        if std::env::var_os("SHAPEMC_KEEP_JSON").is_none() {
            let _ = std::fs::remove_file(&path);
        }
    }
}
