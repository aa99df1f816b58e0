//! User-facing errors and the process exit codes they map to.
//!
//! Exit codes are part of the interface: 0 SAFE, 10 UNSAFE, 20 UNKNOWN,
//! 2 usage or parse error, 3 unsupported construct.

use crate::cfa::SrcLoc;
use std::fmt;
use std::path::PathBuf;

/// Process exit codes of the `shapemc` binary.
pub mod exit {
    pub const SAFE: i32 = 0;
    pub const UNSAFE: i32 = 10;
    pub const UNKNOWN: i32 = 20;
    pub const USAGE_OR_PARSE: i32 = 2;
    pub const UNSUPPORTED: i32 = 3;
}

/// Why a C file could not be turned into a CFA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontendError {
    /// The file could not be read or parsed; `diagnostics` are clang's, one per line,
    /// already in `file:line:col: error: ...` form.
    Parse {
        file: PathBuf,
        diagnostics: Vec<String>,
    },
    /// The program uses a construct outside the supported subset.
    Unsupported {
        file: PathBuf,
        at: SrcLoc,
        construct: String,
    },
    /// libclang could not be loaded (installation problem, not the user's program).
    Libclang(String),
}

impl FrontendError {
    /// The exit code this error maps to (2 for parse/usage, 3 for unsupported).
    pub fn exit_code(&self) -> i32 {
        match self {
            FrontendError::Parse { .. } | FrontendError::Libclang(_) => exit::USAGE_OR_PARSE,
            FrontendError::Unsupported { .. } => exit::UNSUPPORTED,
        }
    }
}

impl fmt::Display for FrontendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrontendError::Parse { file, diagnostics } => {
                if diagnostics.is_empty() {
                    write!(f, "{}: error: could not parse", file.display())
                } else {
                    write!(f, "{}", diagnostics.join("\n"))
                }
            }
            FrontendError::Unsupported {
                file,
                at,
                construct,
            } => {
                write!(
                    f,
                    "{}:{}:{}: unsupported: {}",
                    file.display(),
                    at.line,
                    at.col,
                    construct
                )
            }
            FrontendError::Libclang(msg) => write!(f, "error: libclang: {msg}"),
        }
    }
}

impl std::error::Error for FrontendError {}

/// The resident set size of this process in MiB (Linux `/proc/self/statm`); `None` where
/// it cannot be read.
pub fn resident_mib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page = if page > 0 { page as u64 } else { 4096 };
    Some(pages.saturating_mul(page) / (1024 * 1024))
}

/// Seconds past `--timeout` after which [`start_watchdog`] ends the process.
pub const WATCHDOG_GRACE_S: f64 = 3.0;

/// A hard deadline for the whole process: `timeout_s` (plus [`WATCHDOG_GRACE_S`])
/// after the call, a background thread prints `UNKNOWN: time limit ...` and ends the
/// process with exit code 20, whatever the other threads do (the run's own deadline
/// normally ends it first; this is the last resort for a solver that ignores its
/// timeout, such as Z3 4.8's timer threads deadlocking). It writes with `write(2)` and
/// leaves with `_exit(2)`: no lock another thread may hold and no exit handler is
/// touched. Nothing happens for `None` or a non-positive or non-finite timeout.
pub fn start_watchdog(timeout_s: Option<f64>, what: &'static str) {
    let Some(t) = timeout_s.filter(|t| t.is_finite() && *t > 0.0) else {
        return;
    };
    let limit = std::time::Duration::from_secs_f64((t + WATCHDOG_GRACE_S).min(1e9));
    let spawned = std::thread::Builder::new()
        .name("watchdog".into())
        .spawn(move || {
            std::thread::sleep(limit);
            let msg = format!(
                "UNKNOWN: time limit ({what} did not end within --timeout {t} s; stopped by the watchdog)\n"
            );
            // SAFETY: write(2) on the standard descriptors with a valid buffer, then
            // _exit(2), which never returns; both are async-signal-safe.
            unsafe {
                libc::write(1, msg.as_ptr().cast(), msg.len());
                libc::write(2, msg.as_ptr().cast(), msg.len());
                libc::_exit(exit::UNKNOWN);
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("no watchdog thread: {e}");
    }
}
