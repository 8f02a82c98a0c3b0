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

/// The mantissas of [`BUCKETS_NS`] within a decade, times 100: the preferred numbers of
/// the R20 series, twenty a decade, each at most 12.5% above the one before.
const DECADE: [u64; 20] = [
    100, 112, 125, 140, 160, 180, 200, 224, 250, 280, 315, 355, 400, 450, 500, 560, 630, 710, 800,
    900,
];

/// Decades [`BUCKETS_NS`] spans, from 10 µs.
const DECADES: usize = 7;

/// The histograms' bucket bounds (`le`), in nanoseconds: 10 µs to 100 s, twenty a decade
/// (`DECADE`). A value over the last counts in `+Inf` alone.
///
/// Twenty a decade because `histogram_quantile` interpolates linearly within a bucket: the
/// quantile it reads lies inside the bucket, so at most one bucket's width (12.5%) from
/// the report's, and within a few percent of it for a tail that falls smoothly across the
/// bucket (the tests below); ten a decade (25% wide) misread an exponential tail's p99 by
/// up to 17%.
pub const BUCKETS_NS: [u64; DECADES * DECADE.len() + 1] = {
    let mut bounds = [0u64; DECADES * DECADE.len() + 1];
    let mut scale = 100; // 10 µs = 100 * 100 ns
    let mut d = 0;
    while d < DECADES {
        let mut m = 0;
        while m < DECADE.len() {
            bounds[d * DECADE.len() + m] = DECADE[m] * scale;
            m += 1;
        }
        scale *= 10;
        d += 1;
    }
    bounds[DECADES * DECADE.len()] = 100 * scale;
    bounds
};

/// How a request ended, as the `outcome` label says it.
pub const OUTCOMES: [&str; 4] = ["completed", "error", "timeout", "not_sent"];

/// One latency histogram in [`BUCKETS_NS`]: counts per bucket (not cumulative; the last
/// is `+Inf`), the values' sum and their count.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedHistogram {
    /// Per bucket of [`BUCKETS_NS`], then one past the last bound.
    pub buckets: [u64; BUCKETS_NS.len() + 1],
    /// Sum of the values, in nanoseconds (each at its HdrHistogram bucket's highest value).
    pub sum_ns: u128,
    /// Values counted.
    pub count: u64,
}

impl Default for FixedHistogram {
    fn default() -> Self {
        FixedHistogram {
            buckets: [0; BUCKETS_NS.len() + 1],
            sum_ns: 0,
            count: 0,
        }
    }
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
        counts.record_n(200_000_000_000, 1);
        let mut h = FixedHistogram::default();
        h.add(&counts);
        assert_eq!(h.count, 6);
        assert_eq!(h.buckets[0], 2);
        // 30 µs: above 28 µs, at or under 31.5 µs.
        assert_eq!(h.buckets[10], 3);
        assert_eq!(h.buckets[BUCKETS_NS.len()], 1);
        assert_eq!(h.buckets.iter().sum::<u64>(), 6);
    }

    /// Prometheus's `histogram_quantile(q)` over `h`: the bucket holding rank `q * count`
    /// of the cumulative counts, interpolated linearly between its bounds (from 0 in the
    /// first; the last finite bound in `+Inf`).
    fn histogram_quantile(q: f64, h: &FixedHistogram) -> f64 {
        let rank = q * h.count as f64;
        let mut below = 0u64;
        for (i, &n) in h.buckets.iter().enumerate() {
            let cumulative = below + n;
            if cumulative as f64 >= rank && n > 0 {
                let Some(&upper) = BUCKETS_NS.get(i) else {
                    return BUCKETS_NS[BUCKETS_NS.len() - 1] as f64;
                };
                let lower = if i == 0 { 0 } else { BUCKETS_NS[i - 1] };
                let within = (rank - below as f64) / n as f64;
                return lower as f64 + (upper - lower) as f64 * within;
            }
            below = cumulative;
        }
        f64::NAN
    }

    /// A seeded uniform in (0, 1).
    fn uniform(state: &mut u64) -> f64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        ((*state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    #[test]
    fn a_scraped_p99_lies_within_ten_percent_of_the_reports_across_tails_and_scales() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        // Each: a floor, and a tail drawn from the uniform `u`, as the floor's multiple.
        type Shape = fn(f64, f64) -> f64;
        let shapes: [(&str, Shape); 4] = [
            ("exponential tail", |u, m| 1.0 - m * u.ln()),
            ("lognormal-like", |u, m| {
                (m / 4.0 * (u / (1.0 - u)).ln()).exp()
            }),
            ("2% stalls", |u, m| {
                if u < 0.02 {
                    1.0 + m * 400.0 * u
                } else {
                    1.0 + m * (u - 0.02)
                }
            }),
            ("pareto tail", |u, m| u.powf(-m / 4.0)),
        ];
        let mut worst = (0.0, String::new());
        for (name, shape) in shapes {
            for k in 0..40 {
                // Floors from 12 µs to about 0.3 s, tails from 5% of the floor to 4x it:
                // wider than a bucket (a tail narrower than one is read up to its width
                // off, at worst 12.5%).
                let floor_ns = 12_000.0 * 1.3f64.powi(k);
                let spread = 0.05 * 1.12f64.powi(k * 7 % 40);
                let mut counts = Counts::new();
                for _ in 0..50_000 {
                    let v = floor_ns * shape(uniform(&mut state), spread);
                    counts.record_n(v as u64, 1);
                }
                let mut h = FixedHistogram::default();
                h.add(&counts);
                let report = counts.value_at_quantile(0.99) as f64;
                let scraped = histogram_quantile(0.99, &h);
                let off = (scraped / report - 1.0).abs();
                if off > worst.0 {
                    worst = (
                        off,
                        format!(
                            "{name} at {floor_ns:.0} ns x{spread:.3}: {scraped:.0} against {report:.0}"
                        ),
                    );
                }
            }
        }
        eprintln!("worst: {:.1}% off ({})", worst.0 * 100.0, worst.1);
        assert!(
            worst.0 < 0.10,
            "worst: {:.1}% off ({})",
            worst.0 * 100.0,
            worst.1
        );
    }

    #[test]
    fn a_p99_of_20_ms_is_scraped_as_about_20_ms() {
        // Replies of 2-8 ms, 2% of them held 18 to 22 ms: the report's p99 is 20 ms, which
        // buckets from 10 to 25 ms read as 17.5 ms.
        let mut state = 7u64;
        let mut counts = Counts::new();
        for _ in 0..100_000 {
            let u = uniform(&mut state);
            let v = if u < 0.02 {
                18e6 + 4e6 * u / 0.02
            } else {
                2e6 + 6e6 * u
            };
            counts.record_n(v as u64, 1);
        }
        let report = counts.value_at_quantile(0.99) as f64;
        assert!((report / 20e6 - 1.0).abs() < 0.01, "{report}");
        let mut h = FixedHistogram::default();
        h.add(&counts);
        let scraped = histogram_quantile(0.99, &h);
        assert!(
            (scraped / report - 1.0).abs() < 0.10,
            "{scraped} against {report}"
        );
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
