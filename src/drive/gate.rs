//! [`StartGate`]: the gate that starts every generator thread at the same instant, once
//! each has connected, a little ahead of now or at `--start-at` by the wall clock.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::cancel::Cancel;
use super::outcome::DriveError;
use super::plan::MAX_START_LATENESS;

/// Starts every thread at once: each reports whether it connected; the caller opens the
/// gate.
pub(crate) struct StartGate {
    state: Mutex<GateState>,
    changed: Condvar,
    threads: usize,
}

struct GateState {
    arrived: usize,
    failed: bool,
    start: Option<Instant>,
    opened: bool,
}

impl StartGate {
    pub(crate) fn new(threads: usize) -> Self {
        StartGate {
            state: Mutex::new(GateState {
                arrived: 0,
                failed: false,
                start: None,
                opened: false,
            }),
            changed: Condvar::new(),
            threads,
        }
    }

    /// A thread arrives; returns the common start, or `None` when some thread failed.
    pub(crate) fn arrive(&self, ok: bool) -> Option<Instant> {
        let Ok(mut state) = self.state.lock() else {
            return None;
        };
        state.arrived += 1;
        state.failed |= !ok;
        self.changed.notify_all();
        while !state.opened {
            state = match self.changed.wait(state) {
                Ok(s) => s,
                Err(_) => return None,
            };
        }
        state.start
    }

    /// Lets every thread that arrives go with no start: not all of them could be
    /// started.
    pub(crate) fn abandon(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.failed = true;
            state.opened = true;
        }
        self.changed.notify_all();
    }

    /// Waits for every thread, then sets the start: a little ahead so all begin together,
    /// or at `start_at` by the wall clock (`--start-at`), waited for here. Returns how far
    /// after its start the run was let go, in nanoseconds (positive: late), with
    /// `start_at`; a run that would start more than [`MAX_START_LATENESS`] late, or is
    /// interrupted while it waits, lets every thread go with no start.
    pub(crate) fn open_when_ready(
        &self,
        start_at: Option<SystemTime>,
        cancel: &Cancel,
    ) -> Result<Option<i64>, DriveError> {
        {
            let Ok(mut state) = self.state.lock() else {
                return Ok(None);
            };
            while state.arrived < self.threads {
                state = match self.changed.wait(state) {
                    Ok(s) => s,
                    Err(_) => return Ok(None),
                };
            }
        }
        let (start, skew) = match start_at {
            None => (Some(Instant::now() + Duration::from_millis(2)), Ok(None)),
            Some(at) => match wall_clock_start(at, cancel) {
                Ok(Some((start, skew_ns))) => (Some(start), Ok(Some(skew_ns))),
                Ok(None) => (None, Ok(None)),
                Err(late) => (None, Err(late)),
            },
        };
        let Ok(mut state) = self.state.lock() else {
            return skew;
        };
        if !state.failed {
            state.start = start;
        }
        state.opened = true;
        self.changed.notify_all();
        skew
    }
}

/// The monotonic instant of `at` on the wall clock, slept up to (in slices, so Ctrl+C is
/// seen); `None` when interrupted first. The instant is mapped from the wall clock once,
/// just before it, so the host's clock steps while waiting do not move it. Also returns
/// how late the threads were let go (the last sleep's overshoot, or the lateness of a
/// start already past), in nanoseconds.
fn wall_clock_start(at: SystemTime, cancel: &Cancel) -> Result<Option<(Instant, i64)>, DriveError> {
    const SLICE: Duration = Duration::from_millis(20);
    loop {
        if cancel.is_cancelled() {
            return Ok(None);
        }
        let now = Instant::now();
        match at.duration_since(SystemTime::now()) {
            Ok(ahead) if ahead > SLICE => std::thread::sleep((ahead - SLICE).min(SLICE)),
            Ok(ahead) => {
                let start = now + ahead;
                std::thread::sleep(ahead);
                let skew = Instant::now().saturating_duration_since(start);
                return Ok(Some((
                    start,
                    i64::try_from(skew.as_nanos()).unwrap_or(i64::MAX),
                )));
            }
            Err(past) => {
                let late = past.duration();
                if late > MAX_START_LATENESS {
                    return Err(DriveError::LateStart { late });
                }
                let start = now.checked_sub(late).unwrap_or(now);
                return Ok(Some((
                    start,
                    i64::try_from(late.as_nanos()).unwrap_or(i64::MAX),
                )));
            }
        }
    }
}
