use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() {
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
