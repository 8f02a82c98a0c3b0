//! The model the live `/metrics` page is rendered from: per measured test (its scope's
//! labels), the requests by outcome, the rates, the requests in flight and waiting, the
//! latency histograms in fixed buckets, and the self-checks once known.
//!
//! It is fed from the report's intervals as they are merged across threads (about once a
//! second, `app/measure.rs`), never from a reply: the fixed buckets are filled from each
//! interval's HdrHistogram counts, so the driver's hot path records nothing twice. The
//! rendering into the exposition format is `super::render`'s; serving it, `app/metrics.rs`'s.

use crate::record::{Counts, Metric, Recorder, Timing};
use crate::report::TestReport;
use crate::report::verdict::Verdict;

/// The histograms' bucket bounds (`le`), in nanoseconds: 10 µs to 10 s in 1-2.5-5 steps.
/// A value over the last counts in `+Inf` alone.
pub const BUCKETS_NS: [u64; 19] = [
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
];

/// How a request ended, as the `outcome` label says it.
pub const OUTCOMES: [&str; 4] = ["completed", "error", "timeout", "not_sent"];

/// One latency histogram in [`BUCKETS_NS`]: counts per bucket (not cumulative; the last
/// is `+Inf`), the values' sum and their count.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FixedHistogram {
    /// Per bucket of [`BUCKETS_NS`], then one past the last bound.
    pub buckets: [u64; BUCKETS_NS.len() + 1],
    /// Sum of the values, in nanoseconds (each at its HdrHistogram bucket's highest value).
    pub sum_ns: u128,
    /// Values counted.
    pub count: u64,
}

impl FixedHistogram {
    /// Adds `counts`: each HdrHistogram bucket goes whole into the first fixed bucket whose
    /// bound is at or above its highest value, so one that straddles a bound (values within
    /// 0.1% of it, at 3 significant digits) counts above it.
    pub fn add(&mut self, counts: &Counts) {
        for (highest_ns, n) in counts.iter() {
            let i = BUCKETS_NS.partition_point(|&bound| bound < highest_ns);
            self.buckets[i] += n;
            self.sum_ns += u128::from(highest_ns) * u128::from(n);
            self.count += n;
        }
    }
}

/// One command's series within a test.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSeries {
    /// The command's name (`get`, `set`, a custom command's first word).
    pub command: String,
    /// Requests planned (open loop) or started (closed loop).
    pub intended: u64,
    /// Requests written to a socket.
    pub sent: u64,
    /// By [`OUTCOMES`], in order.
    pub outcomes: [u64; OUTCOMES.len()],
    /// Per metric the run records, in [`Metric::ALL`] order.
    pub latency: Vec<(Metric, FixedHistogram)>,
}

/// One measured test's series: its labels and what it counted so far.
#[derive(Debug, Clone, PartialEq)]
pub struct TestSeries {
    /// The labels every series of the test carries after `run`: `test`, and the sweep's
    /// `step` and `target_rate` or the duet's `side`.
    pub labels: Vec<(String, String)>,
    /// The rate the plan asks for, if it has one.
    pub target_rate_per_sec: Option<f64>,
    /// Sends per second over the last interval.
    pub achieved_rate_per_sec: f64,
    /// Requests written and not answered yet.
    pub in_flight: u64,
    /// Requests waiting client-side for a connection (open loop).
    pub backlog: u64,
    /// Whether it is being measured now.
    pub running: bool,
    /// Each self-check's name and whether it passed, once the test ended (skipped
    /// checks are left out).
    pub checks: Vec<(String, bool)>,
    /// Whether every check passed, once the test ended.
    pub valid: Option<bool>,
    /// Per command.
    pub commands: Vec<CommandSeries>,
}

/// Everything `/metrics` shows: the run's label and every test measured so far.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Exposition {
    /// The `run` label: when this tailrate started (RFC 3339, seconds).
    pub run: String,
    /// In the order first measured.
    pub tests: Vec<TestSeries>,
}

impl Exposition {
    /// An empty page for the run labelled `run`.
    pub fn new(run: String) -> Self {
        Exposition {
            run,
            tests: Vec::new(),
        }
    }

    /// A test starts under `labels`: its series, made now or (the same test measured again,
    /// as `--repeat` and `-l` do) taken up again so that its counters keep rising. Returns
    /// its index for [`Exposition::interval`] and [`Exposition::end`].
    pub fn start(
        &mut self,
        labels: Vec<(String, String)>,
        commands: &[String],
        timing: Timing,
        target_rate_per_sec: Option<f64>,
    ) -> usize {
        let index = match self.tests.iter().position(|t| t.labels == labels) {
            Some(i) => i,
            None => {
                self.tests.push(TestSeries {
                    labels,
                    target_rate_per_sec,
                    achieved_rate_per_sec: 0.0,
                    in_flight: 0,
                    backlog: 0,
                    running: true,
                    checks: Vec::new(),
                    valid: None,
                    commands: Vec::new(),
                });
                self.tests.len() - 1
            }
        };
        let test = &mut self.tests[index];
        test.running = true;
        test.target_rate_per_sec = target_rate_per_sec;
        test.checks.clear();
        test.valid = None;
        for name in commands {
            if !test.commands.iter().any(|c| &c.command == name) {
                test.commands.push(CommandSeries {
                    command: name.clone(),
                    intended: 0,
                    sent: 0,
                    outcomes: [0; OUTCOMES.len()],
                    latency: Metric::ALL
                        .into_iter()
                        .filter(|&m| recorded(m, timing))
                        .map(|m| (m, FixedHistogram::default()))
                        .collect(),
                });
            }
        }
        index
    }

    /// Adds a report interval of test `index` (`length` long, `record` merged across
    /// threads, `commands` naming its records in order); `backlog` is the requests waiting
    /// at its end.
    pub fn interval(
        &mut self,
        index: usize,
        length: std::time::Duration,
        record: &Recorder,
        commands: &[String],
        timing: Timing,
        backlog: u64,
    ) {
        let Some(test) = self.tests.get_mut(index) else {
            return;
        };
        let mut sent = 0;
        for (rec, name) in record.commands.iter().zip(commands) {
            let Some(series) = test.commands.iter_mut().find(|c| &c.command == name) else {
                continue;
            };
            series.intended += rec.intended;
            series.sent += rec.sent;
            let ended = [rec.completed, rec.error_total(), rec.timeouts, rec.not_sent];
            for (total, n) in series.outcomes.iter_mut().zip(ended) {
                *total += n;
            }
            for (metric, hist) in &mut series.latency {
                if let Some(counts) = rec.hist.counts_of(*metric, timing) {
                    hist.add(counts);
                }
            }
            sent += rec.sent;
        }
        let secs = length.as_secs_f64();
        test.achieved_rate_per_sec = if secs > 0.0 { sent as f64 / secs } else { 0.0 };
        // Written less every way a request ends after its write; an error may end a request
        // never written (a lost connection), hence the floor at zero.
        let (written, ended): (u64, u64) = test.commands.iter().fold((0, 0), |(w, e), c| {
            (w + c.sent, e + c.outcomes[..3].iter().sum::<u64>())
        });
        test.in_flight = written.saturating_sub(ended);
        test.backlog = backlog;
    }

    /// Test `index` ended as `report` says: its checks, its validity, and the requests it
    /// left in flight.
    pub fn end(&mut self, index: usize, report: &TestReport) {
        let Some(test) = self.tests.get_mut(index) else {
            return;
        };
        test.running = false;
        test.backlog = 0;
        test.in_flight = report.counts.in_flight_at_end;
        test.checks = report
            .checks
            .iter()
            .filter(|c| c.verdict != Verdict::Skipped)
            .map(|c| (c.name.clone(), c.verdict == Verdict::Pass))
            .collect();
        test.valid = Some(report.valid);
    }
}

/// Whether a run of `timing` has `metric` (as `Histograms::counts_of` answers).
fn recorded(metric: Metric, timing: Timing) -> bool {
    match metric {
        Metric::Response | Metric::Service => true,
        Metric::Lag => timing.lag(),
        Metric::QueueWait => timing.queue_wait(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hdr_buckets_fall_into_the_first_fixed_bucket_at_or_above_them() {
        let mut counts = Counts::new();
        counts.record_n(9_000, 2);
        counts.record_n(30_000, 3);
        counts.record_n(20_000_000_000, 1);
        let mut h = FixedHistogram::default();
        h.add(&counts);
        assert_eq!(h.count, 6);
        assert_eq!(h.buckets[0], 2);
        assert_eq!(h.buckets[2], 3);
        assert_eq!(h.buckets[BUCKETS_NS.len()], 1);
        assert_eq!(h.buckets.iter().sum::<u64>(), 6);
    }

    #[test]
    fn a_test_measured_again_keeps_its_counters_rising() {
        let mut page = Exposition::new("r".into());
        let labels = vec![("test".to_string(), "get".to_string())];
        let names = ["get".to_string()];
        let mut record = Recorder::new(1);
        record.commands[0].sent = 10;
        record.commands[0].completed = 9;
        let one = std::time::Duration::from_secs(1);
        let i = page.start(labels.clone(), &names, Timing::Open, Some(10.0));
        page.interval(i, one, &record, &names, Timing::Open, 0);
        assert_eq!(page.tests[0].in_flight, 1);
        let j = page.start(labels, &names, Timing::Open, Some(10.0));
        page.interval(j, one, &record, &names, Timing::Open, 0);
        assert_eq!((i, j, page.tests.len()), (0, 0, 1));
        assert_eq!(page.tests[0].commands[0].outcomes[0], 18);
        assert_eq!(page.tests[0].commands[0].latency.len(), 4);
    }
}
