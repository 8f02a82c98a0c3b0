//! How sure a percentile is: a 95% confidence interval for each reported percentile of a
//! latency histogram, widened for replies that are not independent of each other.
//!
//! The base is distribution-free: of n independent samples, the order statistics
//! X(l) and X(u), with l and u the 2.5% and 97.5% points of Binomial(n, p) (u one past),
//! bracket the true p-quantile with at least 95% probability, whatever the distribution.
//! Replies are not independent: a stall of the server or the host delays thousands at
//! once, and the number of replies below a value then varies far more than a binomial
//! count. So the run is cut in short batches (the interval stream, [`BATCH`] each), and
//! the spread across batches of the fraction at or below the estimate (batch means)
//! says by how much: the design effect D, observed variance over binomial variance. The
//! interval is then the binomial one of n/D effective samples, mapped back to ranks of
//! the n. Correlation longer than a batch hides inside one, so D is taken at several batch
//! lengths (1, 2, 4, ... batches grouped) and the largest kept, as long as there are
//! [`MIN_GROUPS`] groups to measure a spread from; with fewer batches than that the plain
//! binomial interval is what is left, and the report says so.
//!
//! The ends are reported as the percentiles are, each the highest value of its
//! HdrHistogram bucket (0.1% resolution), so an interval always holds its percentile. A
//! percentile with fewer than [`MIN_BEYOND`] samples beyond it, or whose interval reaches
//! past the largest sample, has no upper bound: it is shown as such rather than as a
//! number that looks exact.

use std::time::Duration;

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::record::{Metric, Recorder, Timing};
use statrs::distribution::{Binomial, ChiSquared, ContinuousCDF, DiscreteCDF, Normal, StudentsT};

/// Length of one batch of the batch-means estimate: the interval stream's resolution.
pub const BATCH: Duration = crate::drive::BATCH;
/// Fewest groups of batches a design effect is measured from.
pub const MIN_GROUPS: usize = 10;
/// Fewest samples beyond a percentile for its interval to have an upper end.
pub const MIN_BEYOND: u64 = 10;
/// How far above what independent samples show a batch spread must be to widen an
/// interval (the chi-squared point). At 0.75 independent runs' p99 intervals covered
/// 97-98% (wider than needed) with bursty coverage no better; at 0.95 both stay within
/// 93-97% on the coverage test's data.
pub const SIGNIFICANT: f64 = 0.95;
/// Two-sided confidence of every interval.
pub const CONFIDENCE: f64 = 0.95;

/// A 95% confidence interval in nanoseconds, `[low, high]`; `high` is `null` when the
/// samples cannot bound it from above.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ci95(pub u64, pub Option<u64>);

impl Ci95 {
    /// The low end.
    pub fn low(self) -> u64 {
        self.0
    }

    /// The high end, when bounded.
    pub fn high(self) -> Option<u64> {
        self.1
    }

    /// Whether `value_ns` lies inside.
    pub fn contains(self, value_ns: u64) -> bool {
        value_ns >= self.0 && self.1.is_none_or(|h| value_ns <= h)
    }

    /// `[low, high]` with each end in the unit `unit` writes, and the word [`OPEN`] for
    /// a high end the samples cannot bound: the one way every output shows an interval.
    pub fn show(self, unit: impl Fn(u64) -> String) -> String {
        format!(
            "[{}, {}]",
            unit(self.0),
            self.1.map_or_else(|| OPEN.to_string(), unit)
        )
    }
}

/// What an interval without an upper end shows in place of it.
pub const OPEN: &str = "open";

/// One batch's distribution, coarsely: replies per bucket of 1/64 of an octave (about
/// 1.1%), only the buckets that hold any, with running totals. Fine enough to count the
/// replies at or below a percentile's estimate, and small enough to keep one per 50 ms of
/// a long run (a full histogram is a quarter of a megabyte).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    /// `(bucket, replies in this bucket and every lower one)`, by bucket.
    cumulative: Vec<(u16, u64)>,
}

impl Batch {
    /// The batch of the replies in `h`.
    pub fn of(h: &Histogram<u64>) -> Self {
        Batch::of_buckets(
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value())),
        )
    }

    /// The batch of the replies in `buckets`: (the highest value of a histogram's
    /// bucket, its count), in order, as [`Counts::iter`](crate::record::Counts::iter)
    /// gives them.
    pub fn of_buckets(buckets: impl Iterator<Item = (u64, u64)>) -> Self {
        let mut cumulative: Vec<(u16, u64)> = Vec::new();
        let mut total = 0;
        for (highest_ns, count) in buckets {
            total += count;
            let bucket = coarse_bucket(highest_ns);
            match cumulative.last_mut() {
                Some(last) if last.0 == bucket => last.1 = total,
                _ => cumulative.push((bucket, total)),
            }
        }
        Batch { cumulative }
    }

    /// Replies in the batch.
    pub fn len(&self) -> u64 {
        self.cumulative.last().map_or(0, |&(_, n)| n)
    }

    /// Whether it holds no reply.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Replies in buckets up to the one `value_ns` falls in.
    fn at_most(&self, value_ns: u64) -> u64 {
        let bucket = coarse_bucket(value_ns);
        match self.cumulative.partition_point(|&(b, _)| b <= bucket) {
            0 => 0,
            i => self.cumulative[i - 1].1,
        }
    }

    /// The `quantile` of the batch, to its bucket's resolution (the bucket's lowest
    /// value); `None` when empty.
    pub fn quantile(&self, quantile: f64) -> Option<u64> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let rank = ((quantile * n as f64).ceil() as u64).clamp(1, n);
        let i = self.cumulative.partition_point(|&(_, total)| total < rank);
        self.cumulative
            .get(i)
            .map(|&(bucket, _)| bucket_floor(bucket))
    }

    /// Adds `other`'s replies (the batch of two batches' replies together).
    pub fn add(&mut self, other: &Batch) {
        let counts = |b: &Batch| {
            let mut before = 0;
            b.cumulative
                .iter()
                .map(move |&(bucket, total)| {
                    let n = total - before;
                    before = total;
                    (bucket, n)
                })
                .collect::<Vec<_>>()
        };
        let (mut a, b) = (counts(self), counts(other));
        a.extend(b);
        a.sort_unstable_by_key(|&(bucket, _)| bucket);
        let mut cumulative: Vec<(u16, u64)> = Vec::with_capacity(a.len());
        let mut total = 0;
        for (bucket, n) in a {
            total += n;
            match cumulative.last_mut() {
                Some(last) if last.0 == bucket => last.1 = total,
                _ => cumulative.push((bucket, total)),
            }
        }
        self.cumulative = cumulative;
    }
}

/// 64 buckets per octave: the octave from the highest set bit, then the next six bits.
/// Monotone in `value_ns`; written by hand because it runs for every recorded value of
/// every batch.
fn coarse_bucket(value_ns: u64) -> u16 {
    let v = value_ns.max(1);
    let octave = 63 - v.leading_zeros();
    let mantissa = if octave >= 6 {
        (v >> (octave - 6)) & 63
    } else {
        (v << (6 - octave)) & 63
    };
    (octave * 64 + mantissa as u32) as u16
}

/// Every batch of one test in time order: per command and metric, and per cluster node
/// (response time).
#[derive(Debug, Clone, Default)]
pub struct BatchSeries {
    /// By command index, by metric.
    pub commands: Vec<BTreeMap<Metric, Vec<Batch>>>,
    /// By node index.
    pub nodes: Vec<Vec<Batch>>,
}

impl BatchSeries {
    /// Adds the next batch, `record`, of a run of `timing`.
    pub fn push(&mut self, record: &Recorder, timing: Timing) {
        if self.commands.len() < record.commands.len() {
            self.commands
                .resize_with(record.commands.len(), BTreeMap::new);
        }
        for (series, rec) in self.commands.iter_mut().zip(&record.commands) {
            for metric in Metric::ALL {
                if let Some(counts) = rec.hist.counts_of(metric, timing) {
                    series
                        .entry(metric)
                        .or_default()
                        .push(Batch::of_buckets(counts.iter()));
                }
            }
        }
        if self.nodes.len() < record.nodes.len() {
            self.nodes.resize_with(record.nodes.len(), Vec::new);
        }
        for (series, node) in self.nodes.iter_mut().zip(&record.nodes) {
            series.push(Batch::of_buckets(node.response.iter()));
        }
    }

    /// The batches of `metric` over every command together.
    pub fn total(&self, metric: Metric) -> Vec<Batch> {
        let mut total: Vec<Batch> = Vec::new();
        for series in self.commands.iter().filter_map(|c| c.get(&metric)) {
            if total.len() < series.len() {
                total.resize_with(series.len(), Batch::default);
            }
            for (into, b) in total.iter_mut().zip(series) {
                into.add(b);
            }
        }
        total
    }
}

/// The lowest value of `bucket` (the inverse of [`coarse_bucket`] at a bucket's start).
fn bucket_floor(bucket: u16) -> u64 {
    let (octave, mantissa) = (u32::from(bucket) / 64, u64::from(bucket) % 64);
    let value = 64 + mantissa;
    if octave >= 6 {
        value << (octave - 6)
    } else {
        value >> (6 - octave)
    }
}

/// What the interval of one percentile rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The percentile itself (HdrHistogram's value at the quantile).
    pub value_ns: u64,
    /// Its 95% interval.
    pub ci95: Ci95,
    /// Samples above it (`k`).
    pub beyond: u64,
    /// Variance of the batches' fraction at or below it over the binomial variance
    /// (1 for independent samples, at least 1 as used).
    pub design_effect: f64,
    /// The degrees of freedom that design effect rests on, when it widened the interval
    /// (see [`design_effect_at`]).
    pub freedom: Option<f64>,
}

/// The 95% interval of the `quantile` of `total`, widened by the spread of `batches` (the
/// same replies in time order, cut in batches); `None` for an empty histogram.
pub fn estimate(total: &Histogram<u64>, batches: &[Batch], quantile: f64) -> Option<Estimate> {
    let n = total.len();
    if n == 0 {
        return None;
    }
    let value_ns = total.value_at_quantile(quantile);
    let rank = ((quantile * n as f64).ceil() as u64).clamp(1, n);
    let (design_effect, freedom) = design_effect(batches, value_ns);
    Some(Estimate {
        value_ns,
        ci95: interval(total, quantile, design_effect, CONFIDENCE)?,
        beyond: n - rank,
        design_effect,
        freedom,
    })
}

/// The `confidence` interval of the `quantile` of `total` for samples carrying the
/// information of `total.len() / design_effect` independent ones; `None` for an empty
/// histogram. [`estimate`] is this at 95% with the design effect of its batches; a
/// comparison asks for more confidence per percentile (one of many tested at once) from
/// what a report kept: its histogram and design effects.
pub fn interval(
    total: &Histogram<u64>,
    quantile: f64,
    design_effect: f64,
    confidence: f64,
) -> Option<Ci95> {
    let n = total.len();
    if n == 0 {
        return None;
    }
    let value_ns = total.value_at_quantile(quantile);
    let rank = ((quantile * n as f64).ceil() as u64).clamp(1, n);
    let beyond = n - rank;
    let (low_rank, high_rank) = rank_interval(n, quantile, design_effect, confidence);
    let low = if low_rank == 0 {
        total.highest_equivalent(total.min())
    } else {
        value_at_rank(total, low_rank)
    };
    let high = (high_rank <= n && beyond >= MIN_BEYOND).then(|| value_at_rank(total, high_rank));
    Some(Ci95(low.min(value_ns), high.map(|h| h.max(value_ns))))
}

/// The ranks `(l, u)` (1-based; 0 for below the smallest, `n + 1` for above the
/// largest) whose order statistics bracket the `quantile` of `n` samples carrying the
/// information of `n / design_effect` independent ones, with two-sided `confidence`.
fn rank_interval(n: u64, quantile: f64, design_effect: f64, confidence: f64) -> (u64, u64) {
    let effective = ((n as f64 / design_effect.max(1.0)).round() as u64).max(1);
    let Ok(binomial) = Binomial::new(quantile, effective) else {
        return (0, n + 1);
    };
    let tail = (1.0 - confidence) / 2.0;
    let scale = n as f64 / effective as f64;
    let low = binomial.inverse_cdf(tail) as f64 * scale;
    let high = (binomial.inverse_cdf(1.0 - tail) + 1) as f64 * scale;
    (low.floor() as u64, (high.ceil() as u64).min(n + 1))
}

/// A design effect measured for 95% intervals (`design_effect`, resting on `freedom`
/// degrees of freedom), as it widens an interval at `confidence`. The measured spread
/// is scaled by `(t / z)^2` for the few degrees of freedom it rests on, and that ratio
/// grows with the confidence asked for: at 10 degrees of freedom it is 1.29 at 95% and
/// 1.80 at 99.8%. Without `freedom` (a report written before it was kept, or an interval
/// no batch spread widened) the design effect is taken as it is.
pub fn design_effect_at(design_effect: f64, freedom: Option<f64>, confidence: f64) -> f64 {
    let Some(freedom) = freedom.filter(|&f| f >= 1.0 && design_effect > 1.0) else {
        return design_effect.max(1.0);
    };
    let ratio = |confidence: f64| {
        let p = 1.0 - (1.0 - confidence) / 2.0;
        match StudentsT::new(0.0, 1.0, freedom) {
            Ok(t) => (t.inverse_cdf(p) / normal_quantile(p)).powi(2),
            Err(_) => 1.0,
        }
    };
    (design_effect / ratio(CONFIDENCE) * ratio(confidence)).max(1.0)
}

/// The `rank`-th smallest sample (1-based).
fn value_at_rank(h: &Histogram<u64>, rank: u64) -> u64 {
    // HdrHistogram answers by quantile and counts up to `ceil(q * n)`; the midpoint of
    // the rank's share keeps the float from landing on the neighbour.
    let n = h.len() as f64;
    h.value_at_quantile(((rank as f64 - 0.5) / n).clamp(0.0, 1.0))
}

/// The design effect of the fraction at or below `value_ns`, as the interval uses it: at
/// each grouping of consecutive batches that leaves at least [`MIN_GROUPS`] groups, the
/// batch-means estimate if it is significantly above 1 (beyond the 95% point of what
/// independent samples would show: chi-squared with `groups - 1` degrees of freedom),
/// scaled by `(t / z)^2` for the few degrees of freedom it rests on; the largest of them,
/// and 1 when none is or there are too few batches to tell. With it, the degrees of
/// freedom of the grouping that gave it (`None` when none widened the interval).
pub fn design_effect(batches: &[Batch], value_ns: u64) -> (f64, Option<f64>) {
    let points: Vec<(f64, f64)> = batches
        .iter()
        .filter(|b| !b.is_empty())
        .map(|b| (b.len() as f64, b.at_most(value_ns) as f64))
        .collect();
    let z = normal_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0);
    let mut largest: (f64, Option<f64>) = (1.0, None);
    let mut group = 1;
    while points.len() / group >= MIN_GROUPS {
        let grouped: Vec<(f64, f64)> = points
            .chunks(group)
            .map(|c| c.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1)))
            .collect();
        let freedom = (grouped.len() - 1) as f64;
        if let Some((d, t_freedom)) = grouped_design_effect(&grouped)
            && let t_freedom = t_freedom.clamp(1.0, freedom)
            && let Ok(chi) = ChiSquared::new(freedom)
            && let Ok(t) = StudentsT::new(0.0, 1.0, t_freedom)
            && d > chi.inverse_cdf(SIGNIFICANT) / freedom
        {
            let t = t.inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0);
            let widened = d * (t / z).powi(2);
            if widened > largest.0 {
                largest = (widened, Some(t_freedom));
            }
        }
        group *= 2;
    }
    largest
}

fn normal_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

/// Batch-means variance of the pooled fraction over its binomial variance, from
/// `(replies, at or below)` per group: `B Σ r² / ((B - 1) N p (1 - p))` with
/// `r = c - p n`; and the degrees of freedom that variance rests on. Those are fewer than
/// `B - 1` when a few groups carry the whole spread (a handful of stalls among calm
/// batches), by the moments of `r²` (Satterthwaite's: `2 B m2² / (m4 - m2²)`, `B` for
/// normal residuals).
fn grouped_design_effect(groups: &[(f64, f64)]) -> Option<(f64, f64)> {
    let b = groups.len() as f64;
    let n: f64 = groups.iter().map(|g| g.0).sum();
    let c: f64 = groups.iter().map(|g| g.1).sum();
    if groups.len() < 2 || n <= 0.0 {
        return None;
    }
    let p = c / n;
    if p <= 0.0 || p >= 1.0 {
        return None;
    }
    let squares: Vec<f64> = groups.iter().map(|g| (g.1 - p * g.0).powi(2)).collect();
    let m2 = squares.iter().sum::<f64>() / b;
    let m4 = squares.iter().map(|r| r * r).sum::<f64>() / b;
    let freedom = if m4 > m2 * m2 {
        2.0 * b * m2 * m2 / (m4 - m2 * m2)
    } else {
        b - 1.0
    };
    Some((b * m2 * b / ((b - 1.0) * n * p * (1.0 - p)), freedom))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::record::new_histogram;

    #[test]
    fn coarse_buckets_are_monotone_and_about_one_percent_wide() {
        let mut last = 0;
        for v in (1..5_000_000u64).step_by(7) {
            let b = coarse_bucket(v);
            assert!(b >= last, "{v}");
            last = b;
        }
        assert_ne!(coarse_bucket(100_000), coarse_bucket(102_000));
        assert_eq!(coarse_bucket(100_000), coarse_bucket(100_200));
    }

    #[test]
    fn a_bucket_starts_at_its_floor() {
        for v in [1u64, 7, 64, 100, 1_000, 123_456, 9_999_999_999] {
            let floor = bucket_floor(coarse_bucket(v));
            assert!(floor <= v && v - floor <= v / 64 + 1, "{v} {floor}");
            assert_eq!(coarse_bucket(floor), coarse_bucket(v), "{v}");
        }
    }

    #[test]
    fn a_batch_counts_what_lies_at_or_below_a_value() {
        let mut h = new_histogram();
        for v in [1_000u64, 2_000, 2_000, 50_000, 9_000_000] {
            h.record(v).unwrap();
        }
        let b = Batch::of(&h);
        assert_eq!(b.len(), 5);
        assert_eq!(b.at_most(999), 0);
        assert_eq!(b.at_most(2_000), 3);
        assert_eq!(b.at_most(1_000_000), 4);
        assert_eq!(b.at_most(u64::MAX / 2), 5);
        assert_eq!(b.quantile(0.5), Some(bucket_floor(coarse_bucket(2_000))));
        let mut twice = b.clone();
        twice.add(&b);
        assert_eq!(twice.len(), 10);
        assert_eq!(twice.at_most(2_000), 6);
    }

    #[test]
    fn few_samples_beyond_leave_the_interval_open_above() {
        let mut h = new_histogram();
        for v in 1..=1_000u64 {
            h.record(v * 1_000).unwrap();
        }
        let p50 = estimate(&h, &[], 0.5).unwrap();
        assert!(p50.ci95.high().is_some());
        assert!(p50.ci95.contains(500_000));
        let p999 = estimate(&h, &[], 0.999).unwrap();
        assert_eq!(p999.beyond, 1);
        assert_eq!(p999.ci95.high(), None);
    }

    #[test]
    fn batches_that_disagree_widen_the_interval() {
        // Half the batches fast, half slow: far from binomial.
        let mut total = new_histogram();
        let mut batches = Vec::new();
        for i in 0..40u64 {
            let mut h = new_histogram();
            for j in 0..1_000u64 {
                h.record(if i % 2 == 0 { 100_000 } else { 200_000 } + j * 10)
                    .unwrap();
            }
            total.add(&h).unwrap();
            batches.push(Batch::of(&h));
        }
        let plain = estimate(&total, &[], 0.25).unwrap();
        let widened = estimate(&total, &batches, 0.25).unwrap();
        assert!(widened.design_effect > 10.0, "{widened:?}");
        let width = |e: &Estimate| e.ci95.high().unwrap() - e.ci95.low();
        assert!(width(&widened) > 3 * width(&plain), "{plain:?} {widened:?}");
    }

    /// The interval's coverage on synthetic runs of a known distribution: how often the
    /// 95% interval holds the true quantile, over seeded simulated runs.
    mod coverage {
        use super::*;
        use rand::{Rng, SeedableRng};
        use rand_distr::{Distribution, LogNormal};

        const SEED: u64 = 7;
        const RUNS: usize = 500;
        const BATCHES: usize = 50;
        const PER_BATCH: usize = 1_000;
        /// Calm replies: median 100 µs.
        const CALM: (f64, f64) = (11.512_925_465, 0.3);
        /// Replies in a stall: median 2 ms.
        const STALL: (f64, f64) = (14.508_657_738, 0.3);
        /// Share of replies inside stalls, and a stall's mean length in replies.
        const STALL_SHARE: f64 = 0.02;
        const STALL_LENGTH: f64 = 100.0;

        /// The true quantile of the marginal: calm and stall log-normals mixed by the stall share.
        fn true_quantile(q: f64, share: f64) -> f64 {
            let normal = Normal::standard();
            let cdf = |x: f64| {
                (1.0 - share) * normal.cdf((x.ln() - CALM.0) / CALM.1)
                    + share * normal.cdf((x.ln() - STALL.0) / STALL.1)
            };
            let (mut lo, mut hi) = (1.0f64, 1e12f64);
            for _ in 0..200 {
                let mid = (lo * hi).sqrt();
                if cdf(mid) < q { lo = mid } else { hi = mid }
            }
            hi
        }

        /// One run: replies in time order, calm or in a stall by a two-state Markov chain
        /// started in its stationary state (`share` 0 gives independent replies).
        fn run(rng: &mut rand_pcg::Pcg64, share: f64) -> (Histogram<u64>, Vec<Batch>) {
            let calm = LogNormal::new(CALM.0, CALM.1).unwrap();
            let stall = LogNormal::new(STALL.0, STALL.1).unwrap();
            let leave_stall = 1.0 / STALL_LENGTH;
            let enter_stall = if share > 0.0 {
                leave_stall * share / (1.0 - share)
            } else {
                0.0
            };
            let mut stalled = rng.random::<f64>() < share;
            let mut total = new_histogram();
            let mut batch = new_histogram();
            let mut batches = Vec::with_capacity(BATCHES);
            for _ in 0..BATCHES {
                batch.reset();
                for _ in 0..PER_BATCH {
                    stalled = if stalled {
                        rng.random::<f64>() >= leave_stall
                    } else {
                        rng.random::<f64>() < enter_stall
                    };
                    let v = if stalled {
                        stall.sample(rng)
                    } else {
                        calm.sample(rng)
                    };
                    batch.record(v as u64).unwrap();
                }
                total.add(&batch).unwrap();
                batches.push(Batch::of(&batch));
            }
            (total, batches)
        }

        /// Share of `RUNS` runs whose interval holds the true quantile: `(widened, plain)`.
        fn coverage(seed: u64, share: f64, q: f64) -> (f64, f64) {
            let truth = true_quantile(q, share) as u64;
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let (mut widened, mut plain) = (0, 0);
            for _ in 0..RUNS {
                let (total, batches) = run(&mut rng, share);
                widened += usize::from(estimate(&total, &batches, q).unwrap().ci95.contains(truth));
                plain += usize::from(estimate(&total, &[], q).unwrap().ci95.contains(truth));
            }
            (widened as f64 / RUNS as f64, plain as f64 / RUNS as f64)
        }

        #[test]
        fn the_interval_holds_the_true_quantile_in_about_95_percent_of_runs() {
            let mut report = Vec::new();
            let mut bad = Vec::new();
            for (data, share) in [("independent", 0.0), ("bursty", STALL_SHARE)] {
                for q in [0.5, 0.99, 0.999] {
                    let (widened, plain) = coverage(SEED, share, q);
                    report.push(format!(
                        "{data} p{}: {:.1}% (binomial alone {:.1}%)",
                        q * 100.0,
                        widened * 100.0,
                        plain * 100.0
                    ));
                    if !(0.93..=0.97).contains(&widened) {
                        bad.push(report.last().unwrap().clone());
                    }
                }
            }
            println!("{}", report.join("\n"));
            assert!(
                bad.is_empty(),
                "coverage outside 93-97%: {bad:?}\nall: {report:#?}"
            );
        }
    }
}
