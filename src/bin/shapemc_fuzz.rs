//! `shapemc-fuzz`: a fuzz campaign against the `shapemc` binary (see `shapemc::fuzz` and
//! `scripts/fuzz`). Exit 0 when every check held, 1 when one failed, 2 on a usage error.

use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

/// Mutates the benchmark C files (and counterexamples, certificates and SCG files), runs
/// `shapemc` on every mutant and checks: no panic or crash, an exit code the command may
/// return, the deadline (`--timeout` + `--slack`) kept. Failing mutants go to `--out`.
#[derive(Parser, Debug)]
#[command(name = "shapemc-fuzz")]
struct Args {
    /// Folders whose `*.c` files (recursively) are the seeds [default: benchmarks ../shared/bench]
    dirs: Vec<PathBuf>,
    /// Seed of the mutants (the same seed and seed files give the same mutants)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of mutants
    #[arg(long, default_value_t = 200)]
    mutants: usize,
    /// `verify --timeout` in seconds (also the reference of the deadline)
    #[arg(long, default_value_t = 3.0)]
    timeout: f64,
    /// A run may take `--timeout` plus this many seconds
    #[arg(long, default_value_t = 5.0)]
    slack: f64,
    /// A run is killed after `--timeout` plus this many seconds
    #[arg(long, default_value_t = 20.0)]
    grace: f64,
    /// Runs in parallel
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Output folder: failing mutants (`mutant-N/`) and `summary.txt`
    #[arg(long, default_value = "results/fuzz")]
    out: PathBuf,
    /// Counterexamples and certificates to make as JSON seeds (each; 0: none)
    #[arg(long, default_value_t = 2)]
    json_seeds: usize,
    /// `verify --timeout` when making the JSON seeds
    #[arg(long, default_value_t = 20.0)]
    prep_timeout: f64,
    /// The shapemc binary [default: `shapemc` next to this binary]
    #[arg(long)]
    shapemc: Option<PathBuf>,
    /// Folder of the SCG seeds
    #[arg(long, default_value = "scg-library")]
    scg_library: PathBuf,
    /// Address-space limit per run in MiB
    #[arg(long, default_value_t = 8192)]
    memory_limit: u64,
}

fn secs(s: f64, what: &str) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or_else(|_| {
        eprintln!("shapemc-fuzz: error: --{what} must be a non-negative number of seconds");
        std::process::exit(2)
    })
}

fn main() {
    let a = Args::parse();
    let exe = a.shapemc.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("shapemc")))
            .unwrap_or_else(|| PathBuf::from("shapemc"))
    });
    let mut cfg = shapemc::fuzz::Config::new(exe);
    if !a.dirs.is_empty() {
        cfg.seed_dirs = a.dirs;
    }
    cfg.scg_dir = a.scg_library;
    cfg.seed = a.seed;
    cfg.mutants = a.mutants;
    cfg.timeout = secs(a.timeout, "timeout");
    cfg.slack = secs(a.slack, "slack");
    cfg.grace = secs(a.grace, "grace");
    cfg.jobs = a.jobs.max(1);
    cfg.out = a.out;
    cfg.json_seeds = a.json_seeds;
    cfg.prep_timeout = secs(a.prep_timeout, "prep-timeout");
    cfg.memory_limit_mb = a.memory_limit;
    match shapemc::fuzz::run_campaign(&cfg) {
        Ok(s) => {
            println!("exit codes:");
            for l in s.exit_code_lines() {
                println!("{l}");
            }
            println!("{}", s.line());
            if !s.ok() {
                println!("failing mutants in {}", cfg.out.display());
            }
            std::process::exit(if s.ok() { 0 } else { 1 })
        }
        Err(e) => {
            eprintln!("shapemc-fuzz: error: {e}");
            std::process::exit(2)
        }
    }
}
