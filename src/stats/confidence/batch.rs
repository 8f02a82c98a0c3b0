//! The batches a design effect is measured from: each batch's distribution, coarsely
//! ([`Batch`]), and every batch of one test in time order ([`BatchSeries`]).
//!
//! This is the one part of `stats` that knows the recorder: [`BatchSeries::push`] takes
//! each batch straight from the recorder's histograms, and [`BATCH`] is the driver's
//! batch length, so the report can say what the batches were beside the intervals.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::record::{Metric, Recorder, Timing};

/// Length of one batch of the batch-means estimate: the interval stream's resolution.
pub const BATCH: Duration = crate::drive::BATCH;

/// One batch's distribution, coarsely: replies per bucket of 1/64 of an octave (about
/// 1.1%), only the buckets that hold any, with running totals. Fine enough to count the
/// replies at or below a percentile's estimate, and small enough to keep one per 50 ms of
/// a long run (a full histogram is a quarter of a megabyte).
///
/// Written as its list of `[bucket, running total]` pairs, and read back only when that
/// list is one a [`Batch`] could hold, so a hand-edited file cannot make a count run
/// backwards.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Vec<(u16, u64)>", into = "Vec<(u16, u64)>")]
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
    pub fn at_most(&self, value_ns: u64) -> u64 {
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

    /// The lowest value of each bucket that holds a reply, increasing: the values at
    /// which [`Batch::at_most`] can change.
    pub fn values(&self) -> impl Iterator<Item = u64> + '_ {
        self.cumulative
            .iter()
            .map(|&(bucket, _)| bucket_floor(bucket))
    }

    /// The replies over `bound_ns` (those [`Batch::at_most`] does not count), by bucket:
    /// `(the bucket's lowest value, replies in it)`, increasing.
    pub fn over(&self, bound_ns: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let bound = coarse_bucket(bound_ns);
        let start = self.cumulative.partition_point(|&(b, _)| b <= bound);
        let before = start.checked_sub(1).map_or(0, |i| self.cumulative[i].1);
        self.cumulative[start..]
            .iter()
            .scan(before, |before, &(bucket, total)| {
                let n = total - *before;
                *before = total;
                Some((bucket_floor(bucket), n))
            })
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

/// The bucket of `u64::MAX`: no value falls past it, and [`bucket_floor`] of a bucket
/// past it would not fit 64 bits.
const LAST_BUCKET: u16 = 63 * 64 + 63;

impl TryFrom<Vec<(u16, u64)>> for Batch {
    type Error = String;

    /// The batch of a written list, refused (saying where) unless buckets rise strictly
    /// and stay in range and running totals never fall: anything else would make a count
    /// at or below a value run backwards.
    fn try_from(cumulative: Vec<(u16, u64)>) -> Result<Self, String> {
        if let Some(&(bucket, _)) = cumulative.iter().find(|&&(b, _)| b > LAST_BUCKET) {
            return Err(format!(
                "batch bucket {bucket} is past the last bucket, {LAST_BUCKET}"
            ));
        }
        for pair in cumulative.windows(2) {
            let ((after, before), (bucket, total)) = (pair[0], pair[1]);
            if bucket <= after {
                return Err(format!(
                    "batch bucket {bucket} follows bucket {after}: buckets must increase"
                ));
            }
            if total < before {
                return Err(format!(
                    "batch running total {total} at bucket {bucket} is below the total \
                     before it, {before}"
                ));
            }
        }
        Ok(Batch { cumulative })
    }
}

impl From<Batch> for Vec<(u16, u64)> {
    fn from(batch: Batch) -> Self {
        batch.cumulative
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

/// Every batch of one test in time order: per command and metric, per cluster node
/// (response time), and the response time had each request been handled on time (an open
/// loop's `received - handled`, for the tail's attribution).
#[derive(Debug, Clone, Default)]
pub struct BatchSeries {
    /// By command index, by metric.
    pub commands: Vec<BTreeMap<Metric, Vec<Batch>>>,
    /// By node index.
    pub nodes: Vec<Vec<Batch>>,
    /// By command index: `received - handled` (empty where no lag is recorded).
    pub on_time: Vec<Vec<Batch>>,
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
                        .push(Batch::of_buckets(counts.iter_grouped()));
                }
            }
        }
        if timing.lag() {
            if self.on_time.len() < record.commands.len() {
                self.on_time.resize_with(record.commands.len(), Vec::new);
            }
            for (series, rec) in self.on_time.iter_mut().zip(&record.commands) {
                series.push(
                    rec.hist
                        .on_time_counts()
                        .map_or_else(Batch::default, |c| Batch::of_buckets(c.iter_grouped())),
                );
            }
        }
        if self.nodes.len() < record.nodes.len() {
            self.nodes.resize_with(record.nodes.len(), Vec::new);
        }
        for (series, node) in self.nodes.iter_mut().zip(&record.nodes) {
            series.push(Batch::of_buckets(node.response.iter_grouped()));
        }
    }

    /// The batches of `metric` over every command together.
    pub fn total(&self, metric: Metric) -> Vec<Batch> {
        add_up(self.commands.iter().filter_map(|c| c.get(&metric)))
    }

    /// The on-time batches over every command (empty where no lag is recorded).
    pub fn total_on_time(&self) -> Vec<Batch> {
        add_up(self.on_time.iter())
    }
}

/// Batches of several series added, batch by batch.
fn add_up<'a>(all: impl Iterator<Item = &'a Vec<Batch>>) -> Vec<Batch> {
    let mut total: Vec<Batch> = Vec::new();
    for series in all {
        if total.len() < series.len() {
            total.resize_with(series.len(), Batch::default);
        }
        for (into, b) in total.iter_mut().zip(series) {
            into.add(b);
        }
    }
    total
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_batch_of_the_grouped_counts_is_the_batch_of_every_count() {
        use crate::record::Counts;
        // Every index from 1 ns to past an hour, each with a count of its own, then a
        // sparse few, then windows that start and end inside a group of 16.
        let mut every = Counts::new();
        let mut v = 1u64;
        let mut n = 1;
        while v < 4_000_000_000_000 {
            every.record_n(v, n);
            n = n % 7 + 1;
            v += (v >> 11).max(1);
        }
        let mut sparse = Counts::new();
        for v in [3, 2_047, 2_048, 70_001, 70_003, 9_999_999] {
            sparse.record_n(v, 2);
        }
        let mut edges = Counts::new();
        for v in [2_050u64, 2_058, 50_000, 50_031, 5_000_000] {
            for k in 0..600 {
                edges.record_n(v + k * 3, 1);
            }
        }
        for counts in [every, sparse, edges, Counts::new()] {
            assert_eq!(
                Batch::of_buckets(counts.iter_grouped()),
                Batch::of_buckets(counts.iter()),
            );
        }
    }

    #[test]
    fn the_replies_over_a_bound_are_given_by_bucket_and_add_up_to_those_not_at_most() {
        let batch = Batch::of_buckets([(50_000, 90), (2_000_000, 7), (30_000_000, 3)].into_iter());
        let over: Vec<(u64, u64)> = batch.over(1_000_000).collect();
        assert_eq!(over.iter().map(|&(_, n)| n).sum::<u64>(), 10);
        assert_eq!(batch.len() - batch.at_most(1_000_000), 10);
        assert_eq!(over.len(), 2);
        assert!(over[0].0 <= 2_000_000 && over[0].0 > 1_950_000, "{over:?}");
        assert_eq!(batch.over(40_000_000).count(), 0);
        assert_eq!(batch.over(0).map(|(_, n)| n).sum::<u64>(), 100);
    }
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
        assert_eq!(
            b.values().collect::<Vec<_>>(),
            [1_000u64, 2_000, 50_000, 9_000_000]
                .map(|v| bucket_floor(coarse_bucket(v)))
                .to_vec()
        );
    }

    #[test]
    fn a_batch_is_written_as_its_running_totals_and_read_back() {
        let b = Batch::of_buckets([(1_000, 2), (2_000, 3), (50_000, 1)].into_iter());
        let json = serde_json::to_string(&b).unwrap();
        assert!(json.starts_with("[["), "{json}");
        assert_eq!(serde_json::from_str::<Batch>(&json).unwrap(), b);
        assert_eq!(
            serde_json::from_str::<Batch>("[]").unwrap(),
            Batch::default()
        );
    }

    #[test]
    fn a_batch_whose_buckets_or_totals_run_backwards_is_refused() {
        for (json, says) in [
            ("[[700,5],[700,6]]", "must increase"),
            ("[[700,5],[690,6]]", "must increase"),
            ("[[700,5],[710,4]]", "below the total before it"),
            ("[[4096,1]]", "past the last bucket"),
        ] {
            let err = serde_json::from_str::<Batch>(json).unwrap_err().to_string();
            assert!(err.contains(says), "{json}: {err}");
        }
        // The last bucket itself is one a value falls in, and its floor fits.
        let last = serde_json::from_str::<Batch>("[[4095,1]]").unwrap();
        assert_eq!(
            last.values().next(),
            Some(bucket_floor(coarse_bucket(u64::MAX)))
        );
    }
}
