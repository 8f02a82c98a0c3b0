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
//!
//! No memory is held until a value lands. The first [`SPARSE`] distinct indices are kept
//! as a sorted list; past that, the counts are held for a window of indices, widened (by
//! half again at least, so a few times in a histogram's life) when a value lands outside
//! it. A histogram spans 33,792 counts (270 KB) for 1 ns to 1 h at 3 digits, where one
//! command's latencies fill a few hundred to a few thousand, and a rare command's a few: a
//! replay keeps a record per distinct command on every thread, and full-size counts put a
//! trace of 1,000 distinct commands at gigabytes (bench/README.md, "Replay memory").

use std::fmt;

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

/// How many counts a histogram of the project's bounds has (HdrHistogram's
/// `distinct_values`): one bucket of 2048 values for the lowest values, then one of 1024
/// (the upper half) per doubling that [`HIGHEST_NS`] needs, and one more.
const LEN: usize = {
    let mut buckets = 1;
    let mut untrackable = (SUB_BUCKET_MASK + 1) as u128;
    while untrackable <= HIGHEST_NS as u128 {
        untrackable <<= 1;
        buckets += 1;
    }
    (buckets + 1) << HALF_MAGNITUDE
};

/// Indices [`Counts::iter_grouped`] sums together past the first bucket: a bucket holds
/// 1024 sub-buckets per octave, a batch's 64, and the 16 that share a batch's bucket
/// are consecutive and aligned (the test beside `Batch` checks every index).
pub const GROUP: usize = 16;
/// The first index [`Counts::iter_grouped`] groups: the second bucket's first.
const FIRST_GROUPED: usize = 2 << HALF_MAGNITUDE;

/// The window of counts is made and widened in steps of this many indices (512 bytes).
const GRAIN: usize = 64;

/// Most indices a histogram holds as a sorted list before it takes a window (8 KB): a
/// command a trace sends a few hundred times records a few hundred distinct values, where
/// a window spanning them would hold thousands of counts.
const SPARSE: usize = 512;

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
    /// The counts of indices `base .. base + counts.len()` (the window); empty while the
    /// values are few enough for `sparse`.
    counts: Vec<u64>,
    base: usize,
    /// While there is no window: (index, count) of each index recorded, by index; at most
    /// [`SPARSE`] of them.
    sparse: Vec<(u32, u64)>,
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
    /// No values, and no memory held for them yet.
    pub const fn new() -> Self {
        Counts {
            counts: Vec::new(),
            base: 0,
            sparse: Vec::new(),
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
        if index >= LEN {
            index = index_for(HIGHEST_NS);
        }
        let slot = index.wrapping_sub(self.base);
        if let Some(count) = self.counts.get_mut(slot) {
            *count = count.saturating_add(n);
        } else {
            self.record_outside(index, n);
        }
        self.total = self.total.saturating_add(n);
        self.lo = self.lo.min(index);
        self.hi = self.hi.max(index);
    }

    /// Counts `n` at `index`, which the window does not hold (or there is none): in the
    /// sparse list while it has room, else in a window made or widened for it.
    #[cold]
    #[inline(never)]
    fn record_outside(&mut self, index: usize, n: u64) {
        if self.counts.is_empty() {
            let key = index as u32;
            match self.sparse.binary_search_by_key(&key, |&(i, _)| i) {
                Ok(at) => {
                    let count = &mut self.sparse[at].1;
                    *count = count.saturating_add(n);
                    return;
                }
                Err(at) if self.sparse.len() < SPARSE => {
                    self.sparse.insert(at, (key, n));
                    return;
                }
                Err(_) => {}
            }
        }
        self.cover(index, index);
        let count = &mut self.counts[index - self.base];
        *count = count.saturating_add(n);
    }

    /// Makes or widens the window to hold indices `lo..=hi` (both under [`LEN`]) and
    /// every index the sparse list holds, which it takes over: to whole grains, and to at
    /// least one and a half times its length, toward the side that was missed, so that a
    /// histogram whose values spread widens a few times, not at each new value.
    fn cover(&mut self, lo: usize, hi: usize) {
        let (lo, hi) = match (self.sparse.first(), self.sparse.last()) {
            (Some(&(first, _)), Some(&(last, _))) => {
                (lo.min(first as usize), hi.max(last as usize))
            }
            _ => (lo, hi),
        };
        let held = self.counts.len();
        let (mut start, mut end) = if held == 0 {
            (lo, hi + 1)
        } else {
            (lo.min(self.base), (hi + 1).max(self.base + held))
        };
        start -= start % GRAIN;
        end = end.next_multiple_of(GRAIN).min(LEN);
        let short = (held + held / 2).saturating_sub(end - start);
        if lo < self.base {
            start = start.saturating_sub(short);
        } else {
            end = (end + short).min(LEN);
        }
        let mut counts = vec![0; end - start];
        if held > 0 {
            let at = self.base - start;
            counts[at..at + held].copy_from_slice(&self.counts);
        }
        for (index, n) in self.sparse.drain(..) {
            counts[index as usize - start] = n;
        }
        // A window from now on: the list's memory is given back.
        self.sparse = Vec::new();
        self.counts = counts;
        self.base = start;
    }

    /// Bytes of counts held (the window, or the sparse list), for tests of memory.
    pub fn held_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u64>()
            + self.sparse.capacity() * std::mem::size_of::<(u32, u64)>()
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
        if other.counts.is_empty() {
            self.add_sparse(&other.sparse);
        } else {
            if lo < self.base || hi >= self.base + self.counts.len() {
                self.cover(lo, hi);
            }
            let into = &mut self.counts[lo - self.base..=hi - self.base];
            let from = &other.counts[lo - other.base..=hi - other.base];
            for (into, from) in into.iter_mut().zip(from) {
                *into = into.saturating_add(*from);
            }
        }
        self.total = self.total.saturating_add(other.total);
        self.lo = self.lo.min(lo);
        self.hi = self.hi.max(hi);
    }

    /// Adds the sorted list `from`: into the window where it holds them, else merged into
    /// this list (one pass over both), which takes a window if it grows past [`SPARSE`].
    fn add_sparse(&mut self, from: &[(u32, u64)]) {
        if !self.counts.is_empty() {
            for &(index, n) in from {
                let index = index as usize;
                match self.counts.get_mut(index.wrapping_sub(self.base)) {
                    Some(count) => *count = count.saturating_add(n),
                    None => self.record_outside(index, n),
                }
            }
            return;
        }
        // Merged in place from the back, into room for both at the end; what the keys both
        // lists hold leaves a gap, closed after.
        let (na, total) = (self.sparse.len(), self.sparse.len() + from.len());
        self.sparse.resize(total, (0, 0));
        let (mut i, mut j, mut k) = (na, from.len(), total);
        while j > 0 {
            let (key, n) = from[j - 1];
            k -= 1;
            self.sparse[k] = match self.sparse[..i].last() {
                Some(&(mine, m)) if mine > key => {
                    i -= 1;
                    (mine, m)
                }
                Some(&(mine, m)) if mine == key => {
                    (i, j) = (i - 1, j - 1);
                    (key, m.saturating_add(n))
                }
                _ => {
                    j -= 1;
                    (key, n)
                }
            };
        }
        self.sparse.copy_within(k.., i);
        self.sparse.truncate(i + total - k);
        if self.sparse.len() > SPARSE {
            let (first, last) = (
                self.sparse[0].0 as usize,
                self.sparse[self.sparse.len() - 1].0,
            );
            self.cover(first, last as usize);
        }
    }

    /// Empties it, keeping its memory: zeroes only the indices that held anything.
    pub fn reset(&mut self) {
        if !self.is_empty() && !self.counts.is_empty() {
            self.counts[self.lo - self.base..=self.hi - self.base].fill(0);
        }
        self.sparse.clear();
        self.lo = usize::MAX;
        self.hi = 0;
        self.total = 0;
    }

    /// Every bucket that holds values, in order: (the highest value the bucket holds,
    /// its count), as HdrHistogram's `iter_recorded` gives `value_iterated_to` and
    /// `count_at_value`.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        // Either the window or the list holds the counts, never both.
        let range = if self.is_empty() || self.counts.is_empty() {
            0..0
        } else {
            self.lo..self.hi + 1
        };
        let dense = range.map(|i| (i, self.counts[i - self.base]));
        let sparse = self.sparse.iter().map(|&(i, n)| (i as usize, n));
        dense
            .chain(sparse)
            .filter(|&(_, n)| n != 0)
            .map(|(i, n)| (value_for(i) + (width_at(i) - 1), n))
    }

    /// The counts summed over each run of `GROUP` (16) indices aligned to it, from the
    /// second bucket on (each index of the first alone), with the highest value of the
    /// run's last index: the runs are the 1/64-octave buckets a batch keeps
    /// (`stats::confidence::Batch`), which read them in a sixteenth of the steps
    /// [`Counts::iter`] takes. The collector builds a batch of every metric every 50 ms on
    /// a core it may share with a spinning generator: walking each index held that core
    /// for a fifth of a millisecond at 50k/s.
    pub fn iter_grouped(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let range = if self.is_empty() || self.counts.is_empty() {
            0..0
        } else {
            self.lo..self.hi + 1
        };
        let exact = range.start..range.end.min(FIRST_GROUPED);
        let exact = exact.map(|i| (i, self.counts[i - self.base]));
        let grouped_from = range.start.max(FIRST_GROUPED);
        let groups = (grouped_from / GROUP..range.end.div_ceil(GROUP)).map(move |g| {
            let (from, to) = (
                (g * GROUP).max(grouped_from),
                ((g + 1) * GROUP).min(range.end),
            );
            let n = self.counts[from - self.base..to - self.base].iter().sum();
            (g * GROUP + GROUP - 1, n)
        });
        let sparse = self.sparse.iter().map(|&(i, n)| (i as usize, n));
        exact
            .chain(groups)
            .chain(sparse)
            .filter(|&(_, n)| n != 0)
            .map(|(i, n)| (value_for(i) + (width_at(i) - 1), n))
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
mod tests;
