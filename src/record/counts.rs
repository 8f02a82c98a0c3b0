//! [`Counts`]: the counts of one latency histogram as the generator records them, laid
//! out exactly as HdrHistogram lays out [`new_histogram`]'s (same buckets, same index
//! for every value), plus the range of indices that hold anything.
//!
//! Written by hand because it is hot twice. Each reply is recorded into four or five of
//! them on the generator thread. And every 50 ms batch of every thread is added, walked
//! and cleared by the collector, which shares a core with the generator when the user
//! pins the process (`taskset -c 1 tailrate ...`), so the time it holds the core delays
//! sends. HdrHistogram's `add` and `reset` visit every count of a histogram, and its
//! recorded-value iterator walks them from the first, whatever the batch holds; here
//! those walk only the range of indices the batch touched (bench/README.md, "The
//! collector's share of the generator's core", has what that is worth). A range rather
//! than a list of the indices recorded: a range streams through the cache, where the
//! visits of a list each miss it. Reports read a [`Histogram`] made from the counts
//! ([`Counts::to_histogram`]), which is value for value the one HdrHistogram would have
//! recorded.

use std::fmt;
use std::sync::LazyLock;

use hdrhistogram::Histogram;

use super::bounds::{HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS, new_histogram};

/// log2 of half the sub-buckets per bucket: with 3 significant digits HdrHistogram keeps
/// 2048 sub-buckets (the least power of two above 2 × 10^3) of which a bucket past the
/// first uses the upper 1024.
const HALF_MAGNITUDE: u32 = 10;
/// Sub-buckets per bucket, less one: the mask of values the first bucket holds exactly.
const SUB_BUCKET_MASK: u64 = (2 << HALF_MAGNITUDE) - 1;
/// HdrHistogram's `leading_zero_count_base`: 64 less the unit magnitude (0: the lowest
/// value is 1 ns) and the sub-bucket magnitude (11).
const LEADING_ZERO_BASE: u32 = 64 - (HALF_MAGNITUDE + 1);

/// How many counts a histogram of the project's bounds has (its `distinct_values`).
fn len() -> usize {
    static LEN: LazyLock<usize> = LazyLock::new(|| new_histogram().distinct_values());
    *LEN
}

/// The index of `value_ns`'s count: HdrHistogram's `index_for` for these bounds.
#[inline(always)]
fn index_for(value_ns: u64) -> usize {
    let bucket = LEADING_ZERO_BASE - (value_ns | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = value_ns >> bucket;
    // (bucket + 1) * 1024 + sub_bucket - 1024, which is never negative: a value of the
    // first bucket below 1024 lands at its own index.
    ((bucket as usize) << HALF_MAGNITUDE) + sub_bucket as usize
}

/// The lowest value whose count is at `index` (HdrHistogram's `value_for`).
#[inline]
fn value_for(index: usize) -> u64 {
    let half = 1usize << HALF_MAGNITUDE;
    let (bucket, sub_bucket) = match (index >> HALF_MAGNITUDE).checked_sub(1) {
        Some(b) => (b as u32, (index & (half - 1)) + half),
        None => (0, index & (half - 1)),
    };
    (sub_bucket as u64) << bucket
}

/// How many values share the count at `index`: its bucket's unit.
#[inline]
fn width_at(index: usize) -> u64 {
    1 << (index >> HALF_MAGNITUDE).saturating_sub(1)
}

/// The counts of one histogram, and the indices that hold any.
#[derive(Clone)]
pub struct Counts {
    counts: Box<[u64]>,
    /// Lowest and highest index with a count; `lo > hi` when empty.
    lo: usize,
    hi: usize,
    total: u64,
}

impl Default for Counts {
    fn default() -> Self {
        Counts::new()
    }
}

impl fmt::Debug for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Counts")
            .field("total", &self.total)
            .field("buckets", &self.iter().collect::<Vec<_>>())
            .finish()
    }
}

impl PartialEq for Counts {
    fn eq(&self, other: &Counts) -> bool {
        self.total == other.total && self.iter().eq(other.iter())
    }
}

impl Counts {
    /// No values. The counts are zeroed memory, mapped as they are first touched.
    pub fn new() -> Self {
        Counts {
            counts: vec![0; len()].into_boxed_slice(),
            lo: usize::MAX,
            hi: 0,
            total: 0,
        }
    }

    /// Records `n` values of `value_ns`, as HdrHistogram's `saturating_record_n` would:
    /// a value past the last bucket is counted at [`HIGHEST_NS`].
    #[inline(always)]
    pub fn record_n(&mut self, value_ns: u64, n: u64) {
        let mut index = index_for(value_ns);
        if index >= self.counts.len() {
            index = index_for(HIGHEST_NS);
        }
        self.counts[index] = self.counts[index].saturating_add(n);
        self.total = self.total.saturating_add(n);
        self.lo = self.lo.min(index);
        self.hi = self.hi.max(index);
    }

    /// Values recorded.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// Whether no value was recorded.
    pub fn is_empty(&self) -> bool {
        self.lo > self.hi
    }

    /// Adds `other`'s counts: only the indices it holds anything at.
    pub fn add(&mut self, other: &Counts) {
        if other.is_empty() {
            return;
        }
        let (lo, hi) = (other.lo, other.hi);
        for (into, from) in self.counts[lo..=hi].iter_mut().zip(&other.counts[lo..=hi]) {
            *into = into.saturating_add(*from);
        }
        self.total = self.total.saturating_add(other.total);
        self.lo = self.lo.min(lo);
        self.hi = self.hi.max(hi);
    }

    /// Empties it: zeroes only the indices that held anything.
    pub fn reset(&mut self) {
        if !self.is_empty() {
            self.counts[self.lo..=self.hi].fill(0);
        }
        self.lo = usize::MAX;
        self.hi = 0;
        self.total = 0;
    }

    /// Every bucket that holds values, in order: (the highest value the bucket holds,
    /// its count), as HdrHistogram's `iter_recorded` gives `value_iterated_to` and
    /// `count_at_value`.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let range = if self.is_empty() {
            0..0
        } else {
            self.lo..self.hi + 1
        };
        range.filter_map(|i| {
            let n = self.counts[i];
            (n != 0).then(|| (value_for(i) + (width_at(i) - 1), n))
        })
    }

    /// HdrHistogram's `value_at_quantile` of these counts (0 when empty): the highest
    /// value equivalent to the one at rank `ceil(quantile * len)`, the lowest for
    /// quantile 0.
    pub fn value_at_quantile(&self, quantile: f64) -> u64 {
        let quantile = quantile.min(1.0);
        let rank = ((quantile * self.total as f64).ceil() as u64).max(1);
        let mut below = 0u64;
        for (highest, n) in self.iter() {
            below = below.saturating_add(n);
            if below >= rank {
                return if quantile == 0.0 {
                    highest + 1 - width_at(index_for(highest))
                } else {
                    highest
                };
            }
        }
        0
    }

    /// HdrHistogram's `max`: the highest value equivalent to the largest recorded (0
    /// when empty).
    pub fn max(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            value_for(self.hi) + (width_at(self.hi) - 1)
        }
    }

    /// The HdrHistogram of these counts: the one that recording the same values into
    /// [`new_histogram`] would have made.
    pub fn to_histogram(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        for (highest, n) in self.iter() {
            h.saturating_record_n(highest, n);
        }
        h
    }
}

/// The project's bounds, restated where the index arithmetic above depends on them.
const _: () = assert!(LOWEST_NS == 1 && SIGNIFICANT_DIGITS == 3);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Values at every bucket's edges, both ends of the range and beyond it, and a
    /// seeded spread in between.
    fn values() -> Vec<u64> {
        let mut v = vec![0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 4097];
        for shift in 0..64 {
            let p = 1u64 << shift;
            v.extend([p.saturating_sub(1), p, p.saturating_add(1)]);
        }
        v.extend([HIGHEST_NS - 1, HIGHEST_NS, HIGHEST_NS + 1, u64::MAX]);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.push(x >> (x % 60));
        }
        v
    }

    #[test]
    fn indices_and_values_are_hdrhistograms() {
        let h = new_histogram();
        for v in values().into_iter().filter(|&v| v <= HIGHEST_NS) {
            let i = index_for(v);
            assert!(i < len(), "{v}");
            assert_eq!(value_for(i), h.lowest_equivalent(v), "{v}");
            assert_eq!(
                value_for(i) + width_at(i) - 1,
                h.highest_equivalent(v),
                "{v}"
            );
        }
    }

    #[test]
    fn recording_makes_the_histogram_hdrhistogram_would() {
        let (mut counts, mut h) = (Counts::new(), new_histogram());
        for (k, v) in values().into_iter().enumerate() {
            let n = 1 + k as u64 % 3;
            counts.record_n(v, n);
            h.saturating_record_n(v, n);
        }
        let made = counts.to_histogram();
        assert_eq!(made, h);
        assert_eq!(
            (made.max(), made.min_nz(), made.mean()),
            (h.max(), h.min_nz(), h.mean())
        );
        assert_eq!(counts.len(), h.len());
        assert_eq!(counts.max(), h.max());
        for q in [0.0, 1e-9, 0.1, 0.5, 0.9, 0.99, 0.999, 0.999_99, 1.0, 1.5] {
            assert_eq!(counts.value_at_quantile(q), h.value_at_quantile(q), "{q}");
        }
        assert_eq!(Counts::new().value_at_quantile(0.5), 0);
        let recorded: Vec<(u64, u64)> = h
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        assert_eq!(counts.iter().collect::<Vec<_>>(), recorded);
    }

    #[test]
    fn adding_and_resetting_keep_the_counts_exact() {
        let (mut a, mut b, mut both) = (Counts::new(), Counts::new(), new_histogram());
        for (k, v) in values().into_iter().enumerate() {
            let into = if k % 2 == 0 { &mut a } else { &mut b };
            into.record_n(v, 1);
            both.saturating_record(v);
        }
        let mut sum = Counts::new();
        sum.add(&a);
        sum.add(&Counts::new());
        sum.add(&b);
        assert_eq!(sum.to_histogram(), both);
        sum.reset();
        assert!(sum.is_empty());
        assert_eq!(sum, Counts::new());
        assert_eq!(sum.to_histogram(), new_histogram());
        sum.record_n(5, 2);
        assert_eq!(sum.iter().collect::<Vec<_>>(), [(5, 2)]);
    }
}
