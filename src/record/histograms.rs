//! The latency histograms: the metrics of DESIGN.md's measurement model, which of them a
//! run keeps apart ([`Timing`]), and one set per command. Their bounds are `bounds.rs`'s.

use std::sync::LazyLock;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::bounds::new_histogram;
use super::counts::Counts;

/// Which of the four times of DESIGN.md a histogram holds. Ordered by [`Metric::name`],
/// so a map keyed by metric lists them as reports always have: `lag`, `queue_wait`,
/// `response`, `service`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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

    /// The metric [`Metric::name`] gives as `name`.
    pub fn named(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Ord for Metric {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for Metric {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
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

/// The four histograms of one command, as [`Counts`] (see there for why).
///
/// The response time is in every run; the other three are made when a run of a
/// [`Timing`] that has them starts ([`Histograms::for_timing`]), or when a value is
/// first recorded or added into them. The counts hold memory only for the values they
/// have seen (see [`Counts`]), so a time a run does not record costs nothing.
///
/// Reads give an HdrHistogram made from the counts ([`Histograms::get`]): a report's,
/// an interval's or a log's, never a reply's.
#[derive(Debug, Clone, Default)]
pub struct Histograms {
    /// Response time.
    pub(super) response: Counts,
    /// Service time.
    pub(super) service: Option<Counts>,
    /// Schedule lag.
    pub(super) lag: Option<Counts>,
    /// Queue wait.
    pub(super) queue_wait: Option<Counts>,
    /// `received - handled`, recorded beside the lag: what the response time would have
    /// been had the generator handled each request on time. Not a reported metric: the
    /// schedule-lag check compares its percentiles with the response time's to say how
    /// far the generator's lateness moved each reported percentile (see
    /// [`Histograms::on_time`]).
    pub(super) on_time: Option<Counts>,
}

impl Histograms {
    /// Every histogram a run of `timing` records into, made now (not while replies arrive).
    pub fn for_timing(timing: Timing) -> Self {
        let made = |records: bool| records.then(Counts::new);
        Histograms {
            response: Counts::new(),
            service: made(timing.service_apart()),
            lag: made(timing.lag()),
            queue_wait: made(timing.queue_wait()),
            on_time: made(timing.lag()),
        }
    }

    /// `received - handled` of every reply whose lag was recorded: the response time less
    /// the generator's own lateness (an empty histogram when no lag was recorded).
    pub fn on_time(&self) -> Histogram<u64> {
        self.on_time
            .as_ref()
            .map_or_else(new_histogram, Counts::to_histogram)
    }

    /// The counts [`Histograms::on_time`] is made from; `None` where no lag was recorded.
    pub fn on_time_counts(&self) -> Option<&Counts> {
        self.on_time.as_ref()
    }

    /// The histogram that holds `metric` for a run of `timing`; `None` where such a run
    /// has no such time. A plain closed loop's service time is its response time, kept
    /// once (see [`Timing`]).
    pub fn of(&self, metric: Metric, timing: Timing) -> Option<Histogram<u64>> {
        self.counts_of(metric, timing).map(Counts::to_histogram)
    }

    /// The counts [`Histograms::of`] makes its histogram from.
    pub fn counts_of(&self, metric: Metric, timing: Timing) -> Option<&Counts> {
        static EMPTY: LazyLock<Counts> = LazyLock::new(Counts::new);
        match metric {
            Metric::Response => Some(&self.response),
            Metric::Service if !timing.service_apart() => Some(&self.response),
            Metric::Lag if !timing.lag() => None,
            Metric::QueueWait if !timing.queue_wait() => None,
            _ => Some(self.counts(metric).unwrap_or(&EMPTY)),
        }
    }

    /// The histogram of `metric` (an empty one when nothing was recorded in it).
    pub fn get(&self, metric: Metric) -> Histogram<u64> {
        self.counts(metric)
            .map_or_else(new_histogram, Counts::to_histogram)
    }

    /// The response time's histogram.
    pub fn response(&self) -> Histogram<u64> {
        self.response.to_histogram()
    }

    /// The response-time counts [`Histograms::response`] is made from.
    pub fn response_counts(&self) -> &Counts {
        &self.response
    }

    /// How many response times were recorded.
    pub fn response_len(&self) -> u64 {
        self.response.len()
    }

    fn counts(&self, metric: Metric) -> Option<&Counts> {
        match metric {
            Metric::Response => Some(&self.response),
            Metric::Service => self.service.as_ref(),
            Metric::Lag => self.lag.as_ref(),
            Metric::QueueWait => self.queue_wait.as_ref(),
        }
    }

    /// Adds `other` into `self` (exact). A histogram empty in `other` makes none here.
    pub fn add(&mut self, other: &Histograms) {
        for metric in Metric::ALL {
            if let Some(from) = other.counts(metric).filter(|c| !c.is_empty()) {
                self.get_mut(metric).add(from);
            }
        }
        if let Some(from) = other.on_time.as_ref().filter(|c| !c.is_empty()) {
            self.on_time.get_or_insert_with(Counts::new).add(from);
        }
    }

    /// The on-time counts, made if this record has none yet.
    #[inline]
    pub(super) fn on_time_mut(&mut self) -> &mut Counts {
        self.on_time.get_or_insert_with(Counts::new)
    }

    /// The counts of `metric`, made if this record has none yet.
    #[inline]
    pub(super) fn get_mut(&mut self, metric: Metric) -> &mut Counts {
        match metric {
            Metric::Response => &mut self.response,
            Metric::Service => self.service.get_or_insert_with(Counts::new),
            Metric::Lag => self.lag.get_or_insert_with(Counts::new),
            Metric::QueueWait => self.queue_wait.get_or_insert_with(Counts::new),
        }
    }

    /// Empties every histogram, keeping its memory; only the counts that hold anything
    /// are cleared.
    pub fn reset(&mut self) {
        for c in [
            Some(&mut self.response),
            self.service.as_mut(),
            self.lag.as_mut(),
            self.queue_wait.as_mut(),
            self.on_time.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            c.reset();
        }
    }
}

/// Nanoseconds in a duration, saturating (a u64 of nanoseconds lasts 584 years).
#[inline]
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_order_by_name_as_report_keys_always_have() {
        let mut by_variant = Metric::ALL;
        by_variant.sort();
        let mut by_name = Metric::ALL.map(Metric::name);
        by_name.sort();
        assert_eq!(by_variant.map(Metric::name), by_name);
        for m in Metric::ALL {
            assert_eq!(Metric::named(m.name()), Some(m));
        }
        assert_eq!(Metric::named("queue wait"), None);
    }
}
