//! The latency histograms: HdrHistogram bounds, the metrics of DESIGN.md's measurement
//! model, which of them a run keeps apart ([`Timing`]), and one set per command.

use std::sync::LazyLock;
use std::time::Duration;

use hdrhistogram::Histogram;

/// Lowest recordable value in nanoseconds.
pub const LOWEST_NS: u64 = 1;
/// Highest recordable value in nanoseconds (one hour); larger values saturate.
pub const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits kept.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// A new empty latency histogram with the project's bounds.
pub fn new_histogram() -> Histogram<u64> {
    // The bounds are constants that HdrHistogram accepts; failure here is a programming error.
    #[expect(clippy::expect_used, reason = "constant, valid bounds")]
    Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
        .expect("valid histogram bounds")
}

/// Which of the four times of DESIGN.md a histogram holds.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// `received - intended`: what a client arriving on schedule sees.
    Response,
    /// `received - sent`: on the wire and in the server.
    Service,
    /// `handled - intended`: the generator's own lateness.
    Lag,
    /// `sent - handled`: time waiting for a free connection.
    QueueWait,
}

impl Metric {
    /// All metrics, in report order.
    pub const ALL: [Metric; 4] = [
        Metric::Response,
        Metric::Service,
        Metric::Lag,
        Metric::QueueWait,
    ];

    /// snake_case name used in JSON, CSV and .hlog tags.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Response => "response",
            Metric::Service => "service",
            Metric::Lag => "lag",
            Metric::QueueWait => "queue_wait",
        }
    }
}

/// Which times a run's requests have apart from their reply, and so which histograms
/// it records (DESIGN.md's four times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// Plain closed loop: a request is intended, handled and sent at its write, so its
    /// service time is its response time. Only the response histogram is recorded (a
    /// redirected request, timed from its first send, counts its detour in both).
    Closed,
    /// Closed loop with `--workers`: asked by a worker, then written with its batch.
    Workers,
    /// Open loop: intended by the schedule, handled, then written.
    Open,
}

impl Timing {
    /// The service time is recorded apart from the response time.
    pub fn service_apart(self) -> bool {
        self != Timing::Closed
    }

    /// The schedule lag is recorded.
    pub fn lag(self) -> bool {
        self == Timing::Open
    }

    /// The queue wait (for a free connection, or in a `--workers` batch) is recorded.
    pub fn queue_wait(self) -> bool {
        self != Timing::Closed
    }
}

/// An empty histogram with the project's bounds, made once, for a time nothing was recorded in.
fn empty_histogram() -> &'static Histogram<u64> {
    static EMPTY: LazyLock<Histogram<u64>> = LazyLock::new(new_histogram);
    &EMPTY
}

/// The four histograms of one command.
///
/// The response time is in every run; the other three are made when a run of a
/// [`Timing`] that has them starts ([`Histograms::for_timing`]), or when a value is
/// first recorded or added into them. A histogram is 270 KB of counts, zeroed when made:
/// a plain closed loop, which records only the response time, would otherwise make and
/// keep three more per command in every recorder (RSS, and page faults at every start).
#[derive(Debug, Clone)]
pub struct Histograms {
    /// Response time.
    pub response: Histogram<u64>,
    /// Service time.
    pub(super) service: Option<Histogram<u64>>,
    /// Schedule lag.
    pub(super) lag: Option<Histogram<u64>>,
    /// Queue wait.
    pub(super) queue_wait: Option<Histogram<u64>>,
    /// `received - handled`, recorded beside the lag: what the response time would have
    /// been had the generator handled each request on time. Not a reported metric: the
    /// schedule-lag check compares its percentiles with the response time's to say how
    /// far the generator's lateness moved each reported percentile (see
    /// [`Histograms::on_time`]).
    pub(super) on_time: Option<Histogram<u64>>,
}

impl Default for Histograms {
    /// The response time's histogram (a plain closed loop's); the others are made on first use.
    fn default() -> Self {
        Histograms::for_timing(Timing::Closed)
    }
}

impl Histograms {
    /// Every histogram a run of `timing` records into, made now (not while replies arrive).
    pub fn for_timing(timing: Timing) -> Self {
        let made = |records: bool| records.then(new_histogram);
        Histograms {
            response: new_histogram(),
            service: made(timing.service_apart()),
            lag: made(timing.lag()),
            queue_wait: made(timing.queue_wait()),
            on_time: made(timing.lag()),
        }
    }

    /// `received - handled` of every reply whose lag was recorded: the response time less
    /// the generator's own lateness (an empty histogram when no lag was recorded).
    pub fn on_time(&self) -> &Histogram<u64> {
        self.on_time.as_ref().unwrap_or_else(|| empty_histogram())
    }

    /// The histogram that holds `metric` for a run of `timing`; `None` where such a run
    /// has no such time. A plain closed loop's service time is its response time, kept
    /// once (see [`Timing`]).
    pub fn of(&self, metric: Metric, timing: Timing) -> Option<&Histogram<u64>> {
        match metric {
            Metric::Response => Some(&self.response),
            Metric::Service if !timing.service_apart() => Some(&self.response),
            Metric::Lag if !timing.lag() => None,
            Metric::QueueWait if !timing.queue_wait() => None,
            _ => Some(self.get(metric)),
        }
    }

    /// The histogram of `metric` (an empty one when nothing was recorded in it).
    pub fn get(&self, metric: Metric) -> &Histogram<u64> {
        match metric {
            Metric::Response => &self.response,
            Metric::Service => self.service.as_ref().unwrap_or_else(|| empty_histogram()),
            Metric::Lag => self.lag.as_ref().unwrap_or_else(|| empty_histogram()),
            Metric::QueueWait => self
                .queue_wait
                .as_ref()
                .unwrap_or_else(|| empty_histogram()),
        }
    }

    /// Adds `other` into `self` (exact). A histogram empty in `other` makes none here.
    pub fn add(&mut self, other: &Histograms) {
        for metric in Metric::ALL {
            let from = other.get(metric);
            if from.is_empty() {
                continue;
            }
            // Same bounds on both sides, so `add` cannot fail; ignore the impossible error.
            let _ = self.get_mut(metric).add(from);
        }
        if let Some(from) = other.on_time.as_ref().filter(|h| !h.is_empty()) {
            let _ = self.on_time.get_or_insert_with(new_histogram).add(from);
        }
    }

    /// The on-time histogram, made if this record has none yet.
    #[inline]
    pub(super) fn on_time_mut(&mut self) -> &mut Histogram<u64> {
        self.on_time.get_or_insert_with(new_histogram)
    }

    /// The histogram of `metric`, made if this record has none yet.
    #[inline]
    pub(super) fn get_mut(&mut self, metric: Metric) -> &mut Histogram<u64> {
        match metric {
            Metric::Response => &mut self.response,
            Metric::Service => self.service.get_or_insert_with(new_histogram),
            Metric::Lag => self.lag.get_or_insert_with(new_histogram),
            Metric::QueueWait => self.queue_wait.get_or_insert_with(new_histogram),
        }
    }

    /// Empties every histogram, keeping its memory.
    pub fn reset(&mut self) {
        for h in [
            Some(&mut self.response),
            self.service.as_mut(),
            self.lag.as_mut(),
            self.queue_wait.as_mut(),
            self.on_time.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            // An empty histogram is already all zeros: skip the memset of its counts.
            if !h.is_empty() {
                h.reset();
            }
        }
    }
}

/// Nanoseconds in a duration, saturating (a u64 of nanoseconds lasts 584 years).
#[inline]
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
