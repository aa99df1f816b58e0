//! Time limits on Z3 checks without Z3's `timeout` parameter.
//!
//! Z3 4.8 enforces `timeout` with a `scoped_timer` per check: it hands the check to a
//! timer thread through a condition variable, and its destructor spins on
//! `sched_yield` until that thread has noticed the end of the check. Measured on
//! `seeds/two_queues` (about 100,000 checks): 22.4 s with the parameter, 13.7 s without,
//! the same ART; with two analyses in one process (the portfolio) 39.4 s against 25.0 s,
//! since the timer threads then wait for a free core.
//!
//! Here one limiter thread per process looks at the checks in flight every [`TICK`] and
//! calls `Z3_interrupt` on the context of each one past its limit. An interrupted check
//! answers `unknown`, as a timed-out one does, so every caller's handling of a timeout
//! stays as it was. Guarantees:
//! - a check with a limit of `ms` milliseconds returns within about `ms` + [`TICK`]
//!   (whatever Z3 does inside, as long as it polls its cancel flag, as it does for
//!   `timeout`); a limit of 0 means no limit;
//! - an interrupt only reaches the context while its thread is inside a limited check
//!   (the slot's lock orders the two), and a lost interrupt (one that lands before Z3
//!   has registered the check) is repeated at the next tick;
//! - an interrupt leaves Z3's context cancelled for operations other than a check
//!   (`get_model`, `eval` fail until the next check): after a check the limiter fired
//!   on, a trivial check on a scratch solver clears that, so a `sat` answer reached
//!   just before the interrupt still has its model.
//!
//! A caller may also bound every check of a piece of work by one deadline
//! ([`within_deadline`]: a path analysis of many checks ends by the run's deadline,
//! each check answering `unknown` once it is reached). The whole run's last resort is
//! [`crate::diag::start_watchdog`].

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use z3::ast::Bool;
use z3::{SatResult, Solver};

/// How often the limiter looks at the checks in flight; a limit is kept to within this.
pub const TICK: Duration = Duration::from_millis(5);

/// A thread's Z3 context and its check in flight.
struct Slot {
    /// The thread-local Z3 context of the thread that owns the slot.
    ctx: z3_sys::Z3_context,
    /// When the check in flight must end (None: no limited check in flight).
    until: Option<Instant>,
    /// The limiter interrupted the current check (cleared by the owner).
    fired: bool,
    /// The owning thread has ended: the limiter drops the slot.
    dead: bool,
}

// The context pointer is used from the limiter thread only for `Z3_interrupt`, which
// Z3 documents as callable from another thread, and only while the owner is inside a
// check (`until` set, under the slot's lock), when the context is alive.
unsafe impl Send for Slot {}

type SlotRef = Arc<Mutex<Slot>>;

fn lock(s: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every live slot; the limiter thread starts with the first.
fn slots() -> &'static Mutex<Vec<SlotRef>> {
    static SLOTS: OnceLock<Mutex<Vec<SlotRef>>> = OnceLock::new();
    SLOTS.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("z3-limiter".into())
            .spawn(limiter);
        if let Err(e) = spawned {
            // checks then run without their limit; the run's watchdog still ends it
            tracing::warn!("no Z3 limiter thread: {e}");
        }
        Mutex::new(Vec::new())
    })
}

fn limiter() {
    loop {
        std::thread::sleep(TICK);
        let mut all = slots().lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        all.retain(|s| {
            let mut s = lock(s);
            if s.dead {
                return false;
            }
            if s.until.is_some_and(|u| now >= u) {
                s.fired = true;
                // SAFETY: see `impl Send for Slot`
                unsafe { z3_sys::Z3_interrupt(s.ctx) };
            }
            true
        });
    }
}

/// The calling thread's slot, registered with the limiter on first use.
struct Registration(SlotRef);

impl Drop for Registration {
    fn drop(&mut self) {
        let mut s = lock(&self.0);
        s.dead = true;
        s.until = None;
    }
}

thread_local! {
    static MINE: Registration = {
        let slot = Arc::new(Mutex::new(Slot {
            ctx: z3::Context::thread_local().get_z3_context(),
            until: None,
            fired: false,
            dead: false,
        }));
        slots()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(slot.clone());
        Registration(slot)
    };
}

thread_local! {
    /// The deadline [`within_deadline`] set for this thread's checks.
    static DEADLINE: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with every check of this thread ending by `deadline` (besides its own
/// limit): a check started past it answers `unknown` at once. Nested calls keep the
/// earlier deadline; the previous one is restored afterwards.
pub fn within_deadline<R>(deadline: Option<Instant>, f: impl FnOnce() -> R) -> R {
    let prev = DEADLINE.with(|d| d.get());
    let next = match (prev, deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    DEADLINE.with(|d| d.set(next));
    let r = f();
    DEADLINE.with(|d| d.set(prev));
    r
}

/// Runs `check` (a check on a solver of this thread's context) with at most `ms`
/// milliseconds (0: no limit) and not past the deadline of [`within_deadline`]; see
/// the module's guarantees.
pub fn limited(ms: u32, check: impl FnOnce() -> SatResult) -> SatResult {
    let now = Instant::now();
    let deadline = DEADLINE.with(|d| d.get());
    if deadline.is_some_and(|d| now >= d) {
        return SatResult::Unknown;
    }
    let own = (ms > 0).then(|| now + Duration::from_millis(ms.into()));
    let until = match (own, deadline) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => return check(),
    };
    let slot = MINE.with(|m| m.0.clone());
    {
        let mut s = lock(&slot);
        s.until = Some(until);
        s.fired = false;
    }
    let r = check();
    let fired = {
        let mut s = lock(&slot);
        s.until = None;
        std::mem::take(&mut s.fired)
    };
    if fired {
        // clears the cancellation the interrupt left on the context
        let _ = Solver::new().check();
    }
    r
}

/// A Z3 solver with a time limit per check ([`limited`]); every other method is the
/// solver's. `check` and `check_assumptions` shadow the solver's own.
pub struct TimedSolver {
    solver: Solver,
    ms: u32,
}

impl TimedSolver {
    /// `solver` with at most `ms` milliseconds per check (0: no limit).
    pub fn new(solver: Solver, ms: u32) -> TimedSolver {
        TimedSolver { solver, ms }
    }
    /// The limit of the checks from now on (0: none).
    pub fn set_limit_ms(&mut self, ms: u32) {
        self.ms = ms;
    }
    /// [`Solver::check`] within the limit (`unknown` past it).
    pub fn check(&self) -> SatResult {
        limited(self.ms, || self.solver.check())
    }
    /// [`Solver::check_assumptions`] within the limit (`unknown` past it).
    pub fn check_assumptions(&self, assumptions: &[Bool]) -> SatResult {
        limited(self.ms, || self.solver.check_assumptions(assumptions))
    }
}

impl std::ops::Deref for TimedSolver {
    type Target = Solver;
    fn deref(&self) -> &Solver {
        &self.solver
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::ast::Int;

    /// `n + 1` pairwise distinct integers in `[0, n)`: unsatisfiable, and slow for Z3's
    /// arithmetic from n = 10 or so.
    fn pigeons(s: &Solver, n: i64) {
        let xs: Vec<Int> = (0..=n).map(|i| Int::new_const(format!("p{i}"))).collect();
        for x in &xs {
            s.assert(x.ge(Int::from_i64(0)));
            s.assert(x.lt(Int::from_i64(n)));
        }
        for i in 0..xs.len() {
            for j in i + 1..xs.len() {
                s.assert(xs[i].eq(&xs[j]).not());
            }
        }
    }

    #[test]
    fn a_deadline_bounds_checks_without_a_limit_of_their_own_and_nests() {
        // no limit of its own (0), but the deadline 200 ms from now
        let s = TimedSolver::new(Solver::new(), 0);
        pigeons(&s, 12);
        let t = Instant::now();
        let r = within_deadline(Some(t + Duration::from_millis(200)), || s.check());
        assert_eq!(r, SatResult::Unknown);
        assert!(
            t.elapsed() < Duration::from_millis(2000),
            "{:?}",
            t.elapsed()
        );
        // past the deadline a check answers unknown at once; an inner later deadline
        // does not extend it, and the outer one is restored afterwards
        let easy = TimedSolver::new(Solver::new(), 1000);
        let past = Some(Instant::now() - Duration::from_millis(1));
        let later = Some(Instant::now() + Duration::from_secs(60));
        let inner = within_deadline(past, || within_deadline(later, || easy.check()));
        assert_eq!(inner, SatResult::Unknown);
        assert_eq!(within_deadline(later, || easy.check()), SatResult::Sat);
        assert_eq!(easy.check(), SatResult::Sat);
    }

    #[test]
    fn a_limited_check_ends_near_its_limit_and_the_context_stays_usable() {
        let s = TimedSolver::new(Solver::new(), 200);
        pigeons(&s, 12);
        let t = Instant::now();
        assert_eq!(s.check(), SatResult::Unknown);
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(200), "{took:?}");
        assert!(took < Duration::from_millis(2000), "{took:?}");
        // models and evaluation work after the interrupt
        let x = Int::new_const("x");
        let s2 = TimedSolver::new(Solver::new(), 1000);
        s2.assert(x.gt(Int::from_i64(3)));
        assert_eq!(s2.check(), SatResult::Sat);
        let m = s2.get_model().expect("a model");
        assert!(m
            .eval(&x, true)
            .and_then(|v| v.as_i64())
            .is_some_and(|v| v > 3));
    }

    #[test]
    fn an_unlimited_or_quick_check_is_not_interrupted() {
        let x = Int::new_const("y");
        for ms in [0, 1000] {
            let s = TimedSolver::new(Solver::new(), ms);
            s.assert(x.lt(Int::from_i64(-2)));
            assert_eq!(s.check(), SatResult::Sat);
            assert_eq!(
                s.check_assumptions(&[Bool::from_bool(true)]),
                SatResult::Sat
            );
        }
    }

    #[test]
    fn threads_have_their_own_limits() {
        let hs: Vec<_> = [150u32, 0]
            .into_iter()
            .map(|ms| {
                std::thread::spawn(move || {
                    let s = TimedSolver::new(Solver::new(), ms);
                    if ms > 0 {
                        pigeons(&s, 12);
                        s.check() == SatResult::Unknown
                    } else {
                        let x = Int::new_const("z");
                        s.assert(x.eq(Int::from_i64(5)));
                        (0..200).all(|_| s.check() == SatResult::Sat)
                    }
                })
            })
            .collect();
        for h in hs {
            assert!(h.join().expect("no panic"));
        }
    }
}
