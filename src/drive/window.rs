//! The measured window as one thread sees it: its interval clock (which interval of the
//! window the thread's records are for, and when the next starts), and the times of the
//! thread's first and last write and last reply that the window is measured from.
//! The context (`ctx`) holds these and moves its records on as the clock says.

use std::cell::Cell;
use std::hint::cold_path;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::shared::Shared;
use crate::record::nanos;

/// Long enough to be never: the end of the window's last interval, which nothing passes.
const NEVER: Duration = Duration::from_secs(1 << 32);

/// One thread's interval clock: which interval of the measured window `Ctx::rec` holds.
///
/// Interval `k` is `[start + k * length, start + (k + 1) * length)` on the measured
/// window's clock (`start`: the end of warm-up in open loop, the run's first send in
/// closed loop; [`Shared::window_start`]), the same bounds on every thread, so threads'
/// intervals of one index cover the same time and add exactly. A reply belongs to the
/// interval its `received` time falls in: an HdrHistogram interval log's line holds the
/// values recorded in its span, and `received` is when a value is known. So before the
/// replies of a read are recorded, `Ctx::reply_at` compares the read's time (taken
/// already) with the current interval's end and, past it, sends the interval on; the
/// tick does the same when no reply comes. What is counted without a reply (a request
/// intended, sent, never sent; a timeout; a connection's failure) counts in the interval
/// current when it is counted.
#[derive(Debug)]
pub(crate) struct IntervalClock {
    /// Every interval's length but the window's last.
    pub length: Duration,
    /// The interval `rec` holds.
    index: Cell<u32>,
    /// When it ends: a reply received then or later belongs to a later one. Before the
    /// window's start is known (a closed loop before its first send), a time already
    /// past, so that the first reply looks the start up.
    ends: Cell<Instant>,
    /// The window's last interval, once its end is known ([`IntervalClock::end_window`]):
    /// the records stay in it to the end, so an open loop's replies after the schedule
    /// (its drain) count in its last interval. `u32::MAX`: not known.
    last: Cell<u32>,
    /// Where the window ends, once known (an open loop's end of schedule, or where it
    /// was stopped).
    window_end: Cell<Option<Instant>>,
}

impl IntervalClock {
    /// A clock of `length` intervals whose records are moved on from `ends`.
    pub(crate) fn new(length: Duration, ends: Instant) -> Self {
        IntervalClock {
            length: length.max(Duration::from_nanos(1)),
            index: Cell::new(0),
            ends: Cell::new(ends),
            last: Cell::new(u32::MAX),
            window_end: Cell::new(None),
        }
    }

    /// Whether `t` is at or past the current interval's end (one compare: the hot path's).
    #[inline]
    pub(crate) fn is_past(&self, t: Instant) -> bool {
        t >= self.ends.get()
    }

    /// When the current interval ends (see `ends`), or `None` when it is the window's last.
    pub(crate) fn current_end(&self) -> Option<Instant> {
        (self.index.get() < self.last.get()).then(|| self.ends.get())
    }

    /// The interval the records are for.
    pub(crate) fn index(&self) -> u32 {
        self.index.get()
    }

    /// Where the window ends, once known.
    pub(crate) fn window_end(&self) -> Option<Instant> {
        self.window_end.get()
    }

    /// Moves on to the interval `t` falls in on the clock from `start` (at most the
    /// window's last; never back); returns the indices of the intervals that ended,
    /// whose records are to be sent.
    pub(crate) fn advance(&self, start: Instant, t: Instant) -> Range<u32> {
        let from = self.index.get();
        let to = index_of(start, t, self.length)
            .min(self.last.get())
            .max(from);
        self.index.set(to);
        // Computed from the window's start each time: a closed loop's start that moved
        // earlier (see `Shared::offer_window_start`) moves every later bound with it.
        self.ends.set(if to >= self.last.get() {
            t.checked_add(NEVER).unwrap_or(t)
        } else {
            start + self.length * (to + 1)
        });
        from..to
    }

    /// The window, which starts at `start`, ends at `end` (or earlier, if it was said so
    /// before): no interval after the one `end` falls in is started.
    pub(crate) fn end_window(&self, start: Instant, end: Instant) {
        let end = self.window_end.get().map_or(end, |e| e.min(end));
        self.window_end.set(Some(end));
        self.last
            .set(last_index(start, end, self.length).max(self.index.get()));
        if self.index.get() >= self.last.get() {
            self.ends.set(end.checked_add(NEVER).unwrap_or(end));
        }
    }
}

/// The index of the interval of `length` that `t` falls in, on a clock from `start` (0
/// before it).
pub(crate) fn index_of(start: Instant, t: Instant, length: Duration) -> u32 {
    let k = nanos(t.saturating_duration_since(start)) / nanos(length).max(1);
    u32::try_from(k).unwrap_or(u32::MAX)
}

/// The index of the last interval of a window from `start` to `end`: the one holding the
/// instant before `end` (a window of whole intervals ends with a whole one); 0 for an
/// empty window.
pub(crate) fn last_index(start: Instant, end: Instant, length: Duration) -> u32 {
    let ns = nanos(end.saturating_duration_since(start));
    u32::try_from(ns.saturating_sub(1) / nanos(length).max(1)).unwrap_or(u32::MAX)
}

/// The latest of some times, once there was one.
#[derive(Debug, Default)]
pub(crate) struct Latest(Cell<Option<Instant>>);

impl Latest {
    /// Records `at` as the latest.
    #[inline]
    pub(crate) fn set(&self, at: Instant) {
        self.0.set(Some(at));
    }
    /// The latest, if any.
    pub(crate) fn get(&self) -> Option<Instant> {
        self.0.get()
    }
}

/// When this thread first and last wrote measured requests. A closed loop's measured
/// window starts at the run's first send: the first write offers its time.
pub(crate) struct SendTimes {
    first: Cell<Option<Instant>>,
    last: Latest,
    /// Closed loop: where the first write's time is offered as the window's start.
    offer_to: Option<Arc<Shared>>,
}

impl SendTimes {
    /// No write yet; a closed loop's first will be offered to `offer_to`.
    pub(crate) fn new(offer_to: Option<Arc<Shared>>) -> Self {
        SendTimes {
            first: Cell::new(None),
            last: Latest::default(),
            offer_to,
        }
    }

    /// A write of measured requests at `at` (the write's own clock read).
    #[inline]
    pub(crate) fn set(&self, at: Instant) {
        if self.first.get().is_none() {
            cold_path();
            self.first.set(Some(at));
            if let Some(shared) = &self.offer_to {
                shared.offer_window_start(at);
            }
        }
        self.last.set(at);
    }

    /// The last write's time, if any.
    pub(crate) fn last(&self) -> Option<Instant> {
        self.last.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_falls_in_the_interval_whose_bounds_hold_it() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let l = Duration::from_millis(250);
        assert_eq!(index_of(t0, ms(0), l), 0);
        assert_eq!(index_of(t0, ms(249), l), 0);
        assert_eq!(
            index_of(t0, ms(250), l),
            1,
            "an interval's end starts the next"
        );
        assert_eq!(index_of(t0, ms(1001), l), 4);
        assert_eq!(index_of(ms(5), t0, l), 0, "before the start: the first");
    }

    #[test]
    fn a_window_of_whole_intervals_ends_with_a_whole_one() {
        let t0 = Instant::now();
        let s = |n: u64| t0 + Duration::from_secs(n);
        let l = Duration::from_secs(1);
        assert_eq!(last_index(t0, s(3), l), 2, "[2, 3) is the last of 3 s");
        assert_eq!(last_index(t0, s(3) + Duration::from_nanos(1), l), 3);
        assert_eq!(last_index(t0, t0 + Duration::from_millis(2500), l), 2);
        assert_eq!(last_index(t0, t0, l), 0, "an empty window has one, empty");
    }

    #[test]
    fn the_clock_moves_on_to_the_interval_a_time_falls_in_and_never_back() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let clock = IntervalClock::new(Duration::from_millis(250), t0);
        assert!(
            clock.is_past(ms(0)),
            "before its start is known, the first reply looks"
        );
        assert_eq!(clock.advance(t0, ms(10)), 0..0);
        assert_eq!(clock.current_end(), Some(ms(250)));
        assert!(!clock.is_past(ms(249)) && clock.is_past(ms(250)));
        assert_eq!(
            clock.advance(t0, ms(760)),
            0..3,
            "0, 1 and 2 ended; 1 and 2 empty"
        );
        assert_eq!(clock.current_end(), Some(ms(1000)));
        assert_eq!(clock.advance(t0, ms(500)), 3..3, "never back");
        // The window ends at 1.1 s: 4 is its last, and a later time stays in it.
        clock.end_window(t0, ms(1100));
        assert_eq!(clock.advance(t0, ms(3000)), 3..4);
        assert_eq!(clock.current_end(), None);
        assert!(!clock.is_past(ms(1_000_000)));
    }

    #[test]
    fn a_known_window_end_holds_the_records_in_its_last_interval() {
        let t0 = Instant::now();
        let l = Duration::from_secs(1);
        let clock = IntervalClock::new(l, t0 + l);
        assert_eq!(clock.current_end(), Some(t0 + l));
        clock.end_window(t0, t0 + Duration::from_secs(2));
        assert_eq!(clock.last.get(), 1);
        clock.index.set(1);
        assert_eq!(clock.current_end(), None);
        // Said again, later: the earlier end stands.
        clock.end_window(t0, t0 + Duration::from_secs(5));
        assert_eq!(clock.last.get(), 1);
        assert_eq!(clock.window_end.get(), Some(t0 + Duration::from_secs(2)));
    }
}
