//! The one cluster bootstrap: the runs of a group (a rate) drawn again with replacement,
//! seeded, so a statistic's spread counts the host's weather between runs rather than the
//! replies inside them, which are not independent.
//!
//! A group of few runs resampled as it is spreads too little (of two runs, half the
//! resamples repeat one run), so a resampled value is moved away from the group's own by
//! `sqrt(k / (k - 1))` on the log scale, which makes its variance the unbiased one; a group
//! of one run has no spread of its own and borrows the spread of single runs pooled over
//! the groups that have two or more. Intervals are percentiles of the resampled values.

use rand::{RngCore, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

/// Resamples per interval: the 5% and 95% points of 2,000 move by about 1% of the
/// interval between seeds.
pub const RESAMPLES: usize = 2_000;

/// Added to a caller's seed, so the bootstrap is a stream of its own.
const STREAM: u64 = 0xb007_57a9_0000_0001;

/// A seeded source of resamples.
pub struct Resampler {
    rng: rand_pcg::Pcg64,
}

impl Resampler {
    /// The resamples of `seed`: the same seed, the same resamples.
    pub fn new(seed: u64) -> Self {
        Resampler {
            rng: rand_pcg::Pcg64::seed_from_u64(seed.wrapping_add(STREAM)),
        }
    }

    /// `k` indices into a group of `k` runs, drawn with replacement, into `into`.
    pub fn draw(&mut self, k: usize, into: &mut Vec<usize>) {
        into.clear();
        // On the generator's raw output, so a seed's resamples do not change with the
        // `rand` crate's sampling code (the bias of a modulus of a few dozen is 1e-17).
        into.extend((0..k).map(|_| (self.rng.next_u64() % k.max(1) as u64) as usize));
    }

    /// A group's resampled value on the log scale: `statistic` (the log of the group's
    /// statistic over the runs at the indices given) over a resample of its `k` runs,
    /// moved from `point` (the statistic of the group as it is) by the small-sample factor;
    /// for a group of one run, `point` moved by a normal draw of `borrowed` (the pooled
    /// log spread of single runs), or `point` itself when there is none to borrow.
    pub fn log_value(
        &mut self,
        k: usize,
        point: f64,
        borrowed: Option<f64>,
        mut statistic: impl FnMut(&[usize]) -> f64,
        scratch: &mut Vec<usize>,
    ) -> f64 {
        if k < 2 {
            let z: f64 = StandardNormal.sample(&mut self.rng);
            return point + borrowed.map_or(0.0, |sd| sd * z);
        }
        self.draw(k, scratch);
        point + (statistic(scratch) - point) * (k as f64 / (k - 1) as f64).sqrt()
    }
}

/// The standard deviation of a single run's log value within its group, pooled over the
/// groups of two runs or more (each weighs by its degrees of freedom); `None` without such
/// a group or with a value that is not finite.
pub fn pooled_log_spread<'a>(groups: impl IntoIterator<Item = &'a [f64]>) -> Option<f64> {
    let (mut squares, mut freedom) = (0.0, 0usize);
    for group in groups.into_iter().filter(|g| g.len() >= 2) {
        let mean = group.iter().sum::<f64>() / group.len() as f64;
        squares += group.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
        freedom += group.len() - 1;
    }
    let spread = (squares / freedom as f64).sqrt();
    (freedom > 0 && spread.is_finite()).then_some(spread)
}

/// The `p` point of `sorted` values by nearest rank (the smallest value with at least `p`
/// of them at or below it); `None` for none.
pub fn percentile<T: Copy>(sorted: &[T], p: f64) -> Option<T> {
    let n = sorted.len();
    let rank = ((p * n as f64).ceil() as usize).clamp(1, n.max(1));
    sorted.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_resample_draws_with_replacement_and_repeats_with_its_seed() {
        let mut a = Resampler::new(7);
        let mut b = Resampler::new(7);
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let mut seen = [0usize; 4];
        for _ in 0..1_000 {
            a.draw(4, &mut x);
            b.draw(4, &mut y);
            assert_eq!(x, y);
            assert!(x.iter().all(|&i| i < 4));
            x.iter().for_each(|&i| seen[i] += 1);
        }
        assert!(seen.iter().all(|&n| (900..1100).contains(&n)), "{seen:?}");
        a.draw(0, &mut x);
        assert!(x.is_empty());
    }

    #[test]
    fn a_small_group_is_stretched_to_its_unbiased_spread_and_a_single_run_borrows() {
        // Two runs at log values -1 and 1: resampled means -1, 0, 0, 1 (variance 1/2),
        // stretched by sqrt(2) to variance 1, the unbiased variance of the mean of two.
        let logs = [-1.0, 1.0];
        let mut r = Resampler::new(1);
        let mut scratch = Vec::new();
        let draws: Vec<f64> = (0..20_000)
            .map(|_| {
                r.log_value(
                    2,
                    0.0,
                    None,
                    |i| i.iter().map(|&j| logs[j]).sum::<f64>() / 2.0,
                    &mut scratch,
                )
            })
            .collect();
        let variance = draws.iter().map(|d| d * d).sum::<f64>() / draws.len() as f64;
        assert!((variance - 1.0).abs() < 0.05, "{variance}");
        // One run: the point, moved by the borrowed spread, or not at all.
        let one: Vec<f64> = (0..20_000)
            .map(|_| r.log_value(1, 3.0, Some(0.5), |_| f64::NAN, &mut scratch))
            .collect();
        let sd = (one.iter().map(|d| (d - 3.0).powi(2)).sum::<f64>() / one.len() as f64).sqrt();
        assert!((sd - 0.5).abs() < 0.02, "{sd}");
        assert_eq!(r.log_value(1, 3.0, None, |_| f64::NAN, &mut scratch), 3.0);
    }

    #[test]
    fn the_pooled_spread_weighs_groups_by_their_freedom_and_percentiles_are_nearest_rank() {
        // Squares 2 (one degree) and 8 (two degrees): sqrt(10 / 3).
        let groups: [&[f64]; 3] = [&[1.0, 3.0], &[0.0, 2.0, 4.0], &[9.0]];
        let spread = pooled_log_spread(groups).unwrap();
        assert!((spread - (10.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(pooled_log_spread([&[1.0][..]]), None);
        let sorted: Vec<u32> = (1..=20).collect();
        assert_eq!(percentile(&sorted, 0.05), Some(1));
        assert_eq!(percentile(&sorted, 0.95), Some(19));
        assert_eq!(percentile(&sorted, 1.0), Some(20));
        assert_eq!(percentile::<u32>(&[], 0.5), None);
    }
}
