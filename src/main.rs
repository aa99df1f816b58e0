use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() {
    // Writing to a closed pipe (`shapemc ... | head`) ends the process quietly, as for other
    // Unix tools, instead of making `println!` panic.
    // SAFETY: called first in main, before any thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = shapemc::cli::Cli::parse();
    let default = match cli.verbose {
        0 => "warn",
        1 => "shapemc=info",
        2 => "shapemc=debug",
        _ => "shapemc=trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
    std::process::exit(shapemc::cli::run(cli));
}
