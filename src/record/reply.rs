//! Runs of alike replies (equal request times, one receive instant) recorded together.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use super::histograms::Timing;
use super::recorder::{Recorder, ReplyTimes};

/// Successful replies whose requests had equal times, all received at one instant,
/// recorded together when the run ends: a closed-loop batch is written at one instant and
/// its replies mostly arrive in one read, so a batch of 16 costs one histogram update per
/// metric instead of 16 (and one clock subtraction per time instead of 16).
#[derive(Debug)]
pub struct ReplyRun {
    /// The run's command and its requests' intended, handled and sent times; `None`: empty.
    key: Option<(usize, Instant, Instant, Instant)>,
    received: Instant,
    count: u64,
    /// Which times are recorded besides the response time.
    timing: Timing,
}

impl ReplyRun {
    /// An empty run of replies received at `received`, in a run of `timing`.
    pub fn new(received: Instant, timing: Timing) -> Self {
        ReplyRun {
            key: None,
            received,
            count: 0,
            timing,
        }
    }

    /// When the run's replies were received.
    #[inline]
    pub fn received(&self) -> Instant {
        self.received
    }

    /// Adds `count` successful replies to requests of `command` with these times, first
    /// recording the run so far into `rec` when they differ from the run's.
    #[inline]
    pub fn add(
        &mut self,
        rec: &RefCell<Recorder>,
        command: usize,
        intended: Instant,
        handled: Instant,
        sent: Instant,
        count: u32,
    ) {
        let key = (command, intended, handled, sent);
        if let Some(run) = self.key {
            if run == key {
                self.count += u64::from(count);
                return;
            }
            self.flush(rec);
        }
        self.key = Some(key);
        self.count = count.into();
    }

    /// Records the run into `rec` and empties it.
    #[inline]
    pub fn flush(&mut self, rec: &RefCell<Recorder>) {
        let Some((command, intended, handled, sent)) = self.key.take() else {
            return;
        };
        let received = self.received;
        let service_ns = nanos(received.saturating_duration_since(sent));
        let times = ReplyTimes {
            // A closed-loop request is intended when it is sent: one subtraction serves both.
            response_ns: if intended == sent {
                service_ns
            } else {
                nanos(received.saturating_duration_since(intended))
            },
            service_ns: self.timing.service_apart().then_some(service_ns),
            lag_ns: self
                .timing
                .lag()
                .then(|| nanos(handled.saturating_duration_since(intended))),
            queue_wait_ns: self
                .timing
                .queue_wait()
                .then(|| nanos(sent.saturating_duration_since(handled))),
        };
        rec.borrow_mut().record_replies(command, &times, self.count);
    }
}

/// Nanoseconds in a duration, saturating (a u64 of nanoseconds lasts 584 years).
#[inline]
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
