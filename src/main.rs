use clap::Parser;

fn main() {
    let cli = shapemc::cli::Cli::parse();
    std::process::exit(shapemc::cli::run(cli));
}
