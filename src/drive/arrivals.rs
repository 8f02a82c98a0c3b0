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

use super::plan::{ArrivalSource, Mode};
use super::schedule::Schedule;
use super::trace::{Next, TraceFeed, TraceSchedule, Traced};
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
    /// Thread `thread`'s source in `mode`: an open loop's process as stream `stream` of
    /// the whole plan's `streams` (see `Shard::stream`) seeded by `seed`, or its part of
    /// the trace `feed` reads; `None` for a closed loop (and for a trace's thread whose
    /// part was taken already).
    pub(crate) fn new(
        mode: &Mode,
        feed: Option<&TraceFeed>,
        thread: usize,
        stream: usize,
        streams: usize,
        seed: u64,
    ) -> Option<Arrivals> {
        let Mode::Open {
            rate_per_sec,
            arrival,
            ..
        } = mode
        else {
            return None;
        };
        match arrival {
            // The rate is the whole plan's; this thread's schedule is cut from it.
            ArrivalSource::Process(process) => Some(Arrivals::Process(Schedule::new(
                *process,
                *rate_per_sec,
                stream,
                streams,
                seed,
            ))),
            ArrivalSource::Trace(_) => feed.and_then(|f| f.take(thread)).map(Arrivals::Trace),
        }
    }

    /// When the first request of a run from `start` to `end` is due; `None` when none is
    /// before `end`. A trace whose first chunk has not come yet is looked at again at the
    /// start.
    pub(crate) fn first_due(&mut self, start: Instant, end: Instant) -> Option<Instant> {
        match self.due(start) {
            Due::NotYet => Some(start).filter(|&t| t < end),
            due => due.wake_at(start, end),
        }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use super::*;
    use crate::drive::schedule::ArrivalProcess;
    use crate::drive::trace::{TraceSender, TraceSource};

    fn open(rate_per_sec: f64, arrival: ArrivalSource) -> Mode {
        Mode::Open {
            rate_per_sec,
            arrival,
            pacing: crate::drive::Pacing::Sleep,
            max_inflight: 1,
            max_backlog: 1,
        }
    }

    /// A trace the test sends by hand: the plan only names it.
    #[derive(Debug)]
    struct ByHand;

    impl TraceSource for ByHand {
        fn feed(&self, _: TraceSender, _: &crate::drive::Cancel) -> Result<(), String> {
            Ok(())
        }
    }

    #[test]
    fn a_process_is_due_at_the_start_plus_its_schedules_offsets() {
        let start = Instant::now();
        let end = start + Duration::from_secs(1);
        let constant = open(1000.0, ArrivalProcess::Constant.into());
        let mut arrivals = Arrivals::new(&constant, None, 0, 0, 1, 7).unwrap();
        assert!(!arrivals.is_trace());
        assert_eq!(arrivals.first_due(start, end), Some(start));
        let Arrivals::Process(schedule) = &mut arrivals else {
            unreachable!()
        };
        schedule.advance();
        assert_eq!(
            arrivals.due(start),
            Due::At(start + Duration::from_millis(1))
        );
        // Due at or after the end: nothing to wake for.
        assert_eq!(arrivals.first_due(start, start), None);
        let closed = Mode::Closed {
            pipeline: 1,
            rate_cap: None,
            workers: None,
        };
        assert!(Arrivals::new(&closed, None, 0, 0, 1, 7).is_none());
    }

    #[test]
    fn a_trace_is_due_at_its_offsets_looked_at_again_while_its_reader_is_behind() {
        let (feed, mut sender) = TraceFeed::channel(1);
        let replay = open(1.0, ArrivalSource::Trace(Arc::new(ByHand)));
        let mut arrivals = Arrivals::new(&replay, Some(&feed), 0, 0, 1, 7).unwrap();
        assert!(arrivals.is_trace());
        // A thread's part of the trace is taken once.
        assert!(Arrivals::new(&replay, Some(&feed), 0, 0, 1, 7).is_none());
        let start = Instant::now();
        let end = start + Duration::from_secs(1);
        // Nothing sent yet: looked at at the start, then a poll later.
        assert_eq!(arrivals.first_due(start, end), Some(start));
        assert_eq!(arrivals.due(start), Due::NotYet);
        assert_eq!(Due::NotYet.wake_at(start, end), Some(start + TRACE_POLL));
        sender.push(0, 5_000, 0, |b| b.push(b'x')).unwrap();
        sender.finish().unwrap();
        assert_eq!(
            arrivals.due(start),
            Due::At(start + Duration::from_nanos(5_000))
        );
        let Arrivals::Trace(trace) = &mut arrivals else {
            unreachable!()
        };
        let (item, bytes) = trace.take().unwrap();
        assert_eq!((item.offset_ns, bytes), (5_000, &b"x"[..]));
        assert_eq!(arrivals.due(start), Due::Ended);
        assert_eq!(Due::Ended.wake_at(start, end), None);
    }
}
