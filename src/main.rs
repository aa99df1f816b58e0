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
    let code = shapemc::cli::run(cli);
    // Everything the run writes is written: files are closed by now, stdout is flushed
    // here. `_exit` then ends the process without C exit handlers, so a portfolio thread
    // that is still inside a long Z3 query (cancelled, but not yet at a check) cannot
    // crash in libz3's static destructors after the verdict was printed.
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` is always safe to call; it never returns.
    unsafe { libc::_exit(code) }
}

/// mimalloc instead of glibc's malloc: the shape domain allocates and frees many small
/// structures (malloc/free were a third of the samples on gdsl/treep_rotate_left).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
