//! Where one thread's open-loop requests come from: an arrival source the scheduler's one
//! hand-out loop (`scheduler.rs`) takes its next intended time and request from. The
//! sources are an arrival process at a rate ([`Schedule`]: constant or Poisson, the
//! test's own mix of commands) and a recorded trace ([`TraceSchedule`]: each command with
//! its connection and its bytes, `tailrate replay`). Either gives intended times that
//! are computed from the run's start, never read from a clock.
//!
//! A new source is one more variant here (its `due` and `take`) and one more arm where
//! the loop offers what it took; the loop itself stays one.

use std::time::{Duration, Instant};

use super::ctx::ThreadPlan;
use super::plan::Mode;
use super::schedule::Schedule;
use super::trace::{Next, TraceSchedule, Traced};
use crate::workload::{Sampler, Test};

/// How soon a replay's thread asks again for the trace's next chunk when the reader has
/// not sent it yet.
pub(crate) const TRACE_POLL: Duration = Duration::from_millis(1);

/// One thread's arrival source. An enum, not a trait object: the hand-out loop matches on
/// it once per request, with no call through a pointer.
pub(crate) enum Arrivals {
    /// An arrival process at a rate: requests of the test's mix of commands.
    Process(Schedule),
    /// A replay's part of the trace: recorded commands on their own connections.
    Trace(TraceSchedule),
}

/// When a source's next arrival is intended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Due {
    /// At this instant (computed from the start).
    At(Instant),
    /// Not known yet (the trace's reader has not sent it): look again soon.
    NotYet,
    /// Never: the source has ended.
    Ended,
}

impl Due {
    /// When the scheduler should next look, seen at `now`; `None` when nothing is due
    /// before `end`.
    #[inline]
    pub(crate) fn wake_at(self, now: Instant, end: Instant) -> Option<Instant> {
        match self {
            Due::At(t) => Some(t),
            Due::NotYet => Some(now + TRACE_POLL),
            Due::Ended => None,
        }
        .filter(|&t| t < end)
    }
}

/// What one arrival is, as taken from its source.
pub(crate) enum Arrival<'a> {
    /// The index of the test's command picked for this arrival (the process's).
    Picked(usize),
    /// A recorded command with its request's bytes (the trace's).
    Traced(Traced, &'a [u8]),
}

impl Arrival<'_> {
    /// The test's command index it is counted under.
    #[inline]
    pub(crate) fn command(&self) -> usize {
        match self {
            Arrival::Picked(command) => *command,
            Arrival::Traced(item, _) => usize::from(item.command),
        }
    }
}

impl Arrivals {
    /// The source of thread `plan` for a run from `start` to `end`, with when its first
    /// request is due; neither for a closed loop or a run with no end.
    pub(crate) fn for_thread(
        plan: &mut ThreadPlan,
        start: Instant,
        end: Option<Instant>,
    ) -> (Option<Arrivals>, Option<Instant>) {
        let Some(end) = end else {
            return (None, None);
        };
        let trace = plan.trace.take().and_then(|feed| feed.take(plan.index));
        let mut arrivals = match (trace, &plan.run.mode) {
            (Some(trace), _) => Arrivals::Trace(trace),
            (
                None,
                Mode::Open {
                    rate_per_sec,
                    arrival,
                    ..
                },
            ) => {
                // The rate is the whole plan's; this thread's schedule is cut from the
                // whole plan's, as stream `shard.stream(index)` of `count * threads`.
                let shard = plan.run.shard;
                let streams = shard.count.max(1) as usize * plan.threads();
                Arrivals::Process(Schedule::new(
                    *arrival,
                    *rate_per_sec,
                    shard.stream(plan.index),
                    streams,
                    plan.seed,
                ))
            }
            (None, Mode::Closed { .. }) => return (None, None),
        };
        // A trace whose first chunk has not come yet is looked at again at the start.
        let first = match arrivals.due(start) {
            Due::NotYet => Some(start),
            due => due.wake_at(start, end),
        };
        (Some(arrivals), first.filter(|&t| t < end))
    }

    /// Whether its requests go to connections of their own (a trace's clients) rather
    /// than to whichever has room.
    pub(crate) fn is_trace(&self) -> bool {
        matches!(self, Arrivals::Trace(_))
    }

    /// When the next arrival is intended (`start` plus its offset), without taking it.
    #[inline]
    pub(crate) fn due(&mut self, start: Instant) -> Due {
        match self {
            Arrivals::Process(schedule) => Due::At(start + schedule.peek()),
            Arrivals::Trace(trace) => match trace.peek() {
                Next::At(offset_ns) => Due::At(start + Duration::from_nanos(offset_ns)),
                Next::NotYet => Due::NotYet,
                Next::Ended => Due::Ended,
            },
        }
    }

    /// Takes the arrival [`Arrivals::due`] showed: the process picks its command from
    /// `test` with `sampler`; the trace hands its recorded one.
    #[inline]
    pub(crate) fn take(&mut self, test: &Test, sampler: &mut Sampler) -> Option<Arrival<'_>> {
        match self {
            Arrivals::Process(schedule) => {
                schedule.advance();
                Some(Arrival::Picked(test.pick(sampler)))
            }
            Arrivals::Trace(trace) => trace
                .take()
                .map(|(item, bytes)| Arrival::Traced(item, bytes)),
        }
    }
}
