//! The hard limits of a run, as the driver checks them between VM slices:
//! fuel (instructions), heap (live bytes after a full collection), wall-clock
//! time, and the host's termination request. Frames are the VM's (a call past
//! the limit); their hard end reaches the driver as a request.
//!
//! Each resource limit is *soft once, then hard*: the first time a run passes
//! it, the program gets a storage-condition and a reserve (an eighth of the
//! limit) to unwind and recover in; passing the limit plus the reserve ends
//! the run with an [`ErrorKind`] the host sees and no handler can intercept.
//! The heap's reserve is given back once a collection finds the heap under
//! the limit again (the program recovered), so memory stays bounded by the
//! limit, the reserve and one slice's allocations, however often a program
//! catches the condition. Termination and the deadline are hard at once.
//!
//! Invariant: nothing here runs Lisp or touches the arena; the driver asks,
//! then acts (signal in the VM, or reset it and return the error).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::interp::error::{ErrorKind, LispError};

/// A handle a host keeps (on any thread) to end a run from outside: the run
/// ends at its next slice with [`ErrorKind::Terminated`], which no Lisp
/// handler sees (unlike the interrupt flag, which signals a catchable
/// `interactive-interrupt`, as a REPL's Ctrl-C wants). A request made while no
/// run is going ends the next run at once; taking it clears it.
#[derive(Clone, Debug, Default)]
pub struct Terminator(Arc<AtomicBool>);

impl Terminator {
    /// Ask the run in progress (or the next one) to end.
    pub fn terminate(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether a termination is pending (not taken by a run yet).
    pub fn is_requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// The flag itself, for builtins that block (`Host::terminate`).
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }

    /// Take the request (clear it), saying whether there was one.
    pub(crate) fn take(&self) -> bool {
        self.0.swap(false, Ordering::SeqCst)
    }
}

/// What the driver must do after a check.
pub(crate) enum Verdict {
    /// Carry on.
    Continue,
    /// Signal a storage-condition in the program (the soft first time).
    SignalFuel(u64),
    /// End the run with this error.
    End(LispError),
}

/// A run's budget and the state of its soft-then-hard limits.
pub(crate) struct RunLimits {
    fuel_left: Option<u64>,
    fuel_signalled: bool,
    deadline: Option<Instant>,
}

/// The heap's threshold, kept across runs (what is live stays live).
pub(crate) struct HeapLimit {
    /// Bytes past which the driver measures after a full collection.
    pub threshold: usize,
    /// The program got its storage-condition and is living on the reserve.
    signalled: bool,
}

impl HeapLimit {
    pub fn new(limit: usize) -> Self {
        HeapLimit { threshold: limit, signalled: false }
    }

    /// The heap was measured at `used` bytes after a full collection, against
    /// `limit`: whether to signal (the first time), end the run, or carry on.
    pub fn measured(&mut self, used: usize, limit: usize) -> HeapVerdict {
        let reserve = reserve_of(limit as u64) as usize;
        if used <= limit {
            self.signalled = false;
            self.threshold = limit;
            HeapVerdict::Fine
        } else if !self.signalled {
            self.signalled = true;
            self.threshold = limit.saturating_add(reserve);
            HeapVerdict::Signal
        } else if used > limit.saturating_add(reserve) {
            // Ends the run: the next run starts from the limit again (the
            // host may have dropped what held the memory).
            self.signalled = false;
            self.threshold = limit;
            HeapVerdict::End(LispError::new(
                ErrorKind::Heap { used, limit },
                "STORAGE-CONDITION",
                format!(
                    "Heap exhausted: {} MB of live objects, past the limit of {} MB and the reserve of {} MB its handlers had (max_heap).",
                    used >> 20,
                    limit >> 20,
                    reserve >> 20
                ),
            ))
        } else {
            HeapVerdict::Fine
        }
    }

    /// The limit changed (the host set a new one).
    pub fn reset(&mut self, limit: usize) {
        self.threshold = limit;
        self.signalled = false;
    }
}

/// What a heap measurement calls for.
pub(crate) enum HeapVerdict {
    Fine,
    Signal,
    End(LispError),
}

/// The room a program gets after its first storage-condition: an eighth of
/// the limit, at least one slice's worth of small work.
fn reserve_of(limit: u64) -> u64 {
    (limit / 8).max(64 * 1024)
}

impl RunLimits {
    pub fn new(max_fuel: Option<u64>, max_run_time: Option<std::time::Duration>) -> Self {
        RunLimits { fuel_left: max_fuel, fuel_signalled: false, deadline: max_run_time.map(|d| Instant::now() + d) }
    }

    /// After a slice that ran `spent` instructions (at most), with the run still going.
    pub fn after_slice(&mut self, spent: u64, max_fuel: Option<u64>, terminator: &Terminator) -> Verdict {
        if terminator.take() {
            return Verdict::End(terminated("the host terminated the run"));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Verdict::End(terminated("the run's time ran out (max_run_time)"));
        }
        let (Some(left), Some(max)) = (self.fuel_left, max_fuel) else { return Verdict::Continue };
        if left > spent {
            self.fuel_left = Some(left - spent);
            Verdict::Continue
        } else if !self.fuel_signalled {
            self.fuel_signalled = true;
            self.fuel_left = Some(reserve_of(max).max(spent + 1));
            Verdict::SignalFuel(max)
        } else {
            Verdict::End(LispError::new(
                ErrorKind::Fuel { limit: max },
                "STORAGE-CONDITION",
                format!(
                    "Fuel exhausted: the run executed its limit of {max} VM instructions and the reserve its handlers had (max_fuel)."
                ),
            ))
        }
    }

    /// Whether a termination or the deadline ends the run before it starts.
    pub fn before_run(&self, terminator: &Terminator) -> Option<LispError> {
        if terminator.take() {
            return Some(terminated("the host terminated the run"));
        }
        None
    }
}

fn terminated(why: &str) -> LispError {
    LispError::new(ErrorKind::Terminated, "TERMINATED", format!("Terminated: {why}."))
}

/// The error of a run whose calls nested past the frame limit and its margin.
pub(crate) fn frames_exhausted(limit: usize) -> LispError {
    LispError::new(
        ErrorKind::Frames { limit },
        "STORAGE-CONDITION",
        format!(
            "Control stack exhausted: calls nested past the limit of {limit} frames and the margin its handlers had (max_frames)."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heap_limit_is_soft_once_then_hard_however_often_it_is_caught() {
        let mut h = HeapLimit::new(1 << 20);
        assert!(matches!(h.measured(2 << 20, 1 << 20), HeapVerdict::Signal));
        // Within the reserve: the handler may run.
        assert!(matches!(h.measured((1 << 20) + 1000, 1 << 20), HeapVerdict::Fine));
        // Past limit + reserve: the end, whatever the program does.
        match h.measured(3 << 20, 1 << 20) {
            HeapVerdict::End(e) => assert!(matches!(e.kind, ErrorKind::Heap { .. })),
            _ => panic!("expected the end of the run"),
        }
        // Recovery under the limit gives the reserve back.
        let mut h = HeapLimit::new(1 << 20);
        assert!(matches!(h.measured(2 << 20, 1 << 20), HeapVerdict::Signal));
        assert!(matches!(h.measured(1 << 19, 1 << 20), HeapVerdict::Fine));
        assert!(matches!(h.measured(2 << 20, 1 << 20), HeapVerdict::Signal));
    }

    #[test]
    fn fuel_is_soft_once_then_hard_and_termination_ends_at_once() {
        let t = Terminator::default();
        let mut r = RunLimits::new(Some(10_000), None);
        assert!(matches!(r.after_slice(4096, Some(10_000), &t), Verdict::Continue));
        assert!(matches!(r.after_slice(4096, Some(10_000), &t), Verdict::Continue));
        assert!(matches!(r.after_slice(4096, Some(10_000), &t), Verdict::SignalFuel(10_000)));
        let mut ended = false;
        for _ in 0..100 {
            if let Verdict::End(e) = r.after_slice(4096, Some(10_000), &t) {
                assert_eq!(e.kind, ErrorKind::Fuel { limit: 10_000 });
                ended = true;
                break;
            }
        }
        assert!(ended);
        t.terminate();
        let mut r = RunLimits::new(None, None);
        match r.after_slice(1, None, &t) {
            Verdict::End(e) => assert_eq!(e.kind, ErrorKind::Terminated),
            _ => panic!("expected termination"),
        }
        assert!(!t.is_requested(), "taking the request clears it");
    }
}
