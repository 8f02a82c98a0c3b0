//! The one median of runs: a percentile measured in N runs (a sweep's step, `--repeat`'s
//! repeats) summarised as the median of the runs' values, the 95% interval within a run
//! beside the interval from the runs' spread, and the wider of the two, which is the one
//! quoted and decided on.
//!
//! The interval from the spread is the order-statistic (distribution-free) interval of
//! the median of N runs' values: the values ranked l and N + 1 - l, with l the largest
//! rank for which that pair holds the median of the distribution the runs are drawn from
//! with at least 95% probability (`1 - 2 P[Binomial(N, 1/2) < l]`). Under 6 runs no pair
//! reaches 95%, and the interval is the whole range, min..max, whose coverage is stated
//! beside it: 50% for 2 runs, 75% for 3, 87.5% for 4, 93.75% for 5. One run has no
//! spread. The within-run interval beside the median is the median of the runs' own
//! interval ends, an unbounded end counting as above every bounded one, so a median run
//! that cannot bound the percentile leaves the quoted interval open.

use serde::{Deserialize, Serialize};

use super::confidence::Ci95;

/// Confidence the spread's interval aims at.
pub const SPREAD_CONFIDENCE: f64 = 0.95;

/// One percentile of a step over its runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentileSummary {
    /// The median of the runs' values (the mean of the middle two for an even count).
    pub median_ns: u64,
    /// The median of the runs' own 95% intervals (none in reports without intervals).
    pub within_ci95_ns: Option<Ci95>,
    /// The order-statistic interval of the median from the runs' spread (none for one run).
    pub repeats_ci95_ns: Option<Ci95>,
    /// How often an interval so made holds the median of what runs at this rate measure:
    /// 0.95 or more from 6 runs, less below (see the module doc).
    pub repeats_coverage: Option<f64>,
    /// The wider of the two intervals: what the sweep's decisions use.
    pub ci95_ns: Option<Ci95>,
}

/// The median of `values` with the two intervals and the wider of them; `None` for none.
pub fn combine(values: &[(u64, Option<Ci95>)]) -> Option<PercentileSummary> {
    if values.is_empty() {
        return None;
    }
    let mut sorted: Vec<u64> = values.iter().map(|v| v.0).collect();
    sorted.sort_unstable();
    let median_ns = median_u64(&sorted);
    let intervals: Vec<Ci95> = values.iter().filter_map(|v| v.1).collect();
    let within = (!intervals.is_empty()).then(|| {
        let mut lows: Vec<u64> = intervals.iter().map(|c| c.low()).collect();
        lows.sort_unstable();
        // None (unbounded) sorts above every bound.
        let mut highs: Vec<u64> = intervals
            .iter()
            .map(|c| c.high().unwrap_or(u64::MAX))
            .collect();
        highs.sort_unstable();
        let n = highs.len();
        // An even count's upper median is unbounded if either middle one is.
        let high = if n.is_multiple_of(2) && highs[n / 2] == u64::MAX {
            u64::MAX
        } else {
            median_u64(&highs)
        };
        let low = median_u64(&lows);
        Ci95(
            low.min(median_ns),
            (high != u64::MAX).then(|| high.max(median_ns)),
        )
    });
    let (repeats, coverage) = if sorted.len() >= 2 {
        let (l, u, coverage) = median_ranks(sorted.len());
        (
            Some(Ci95(sorted[l - 1], Some(sorted[u - 1]))),
            Some(coverage),
        )
    } else {
        (None, None)
    };
    Some(PercentileSummary {
        median_ns,
        within_ci95_ns: within,
        repeats_ci95_ns: repeats,
        repeats_coverage: coverage,
        ci95_ns: wider(within, repeats),
    })
}

/// The ranks `(l, u)` (1-based, `u = n + 1 - l`) of the order-statistic interval of the
/// median of `n >= 2` values, and its coverage: the largest `l` whose coverage is at least
/// [`SPREAD_CONFIDENCE`], or `(1, n)` when none is.
pub fn median_ranks(n: usize) -> (usize, usize, f64) {
    let coverage = |l: usize| 1.0 - 2.0 * binomial_half_below(n, l);
    let mut best = 1;
    for l in 2..=n / 2 {
        if coverage(l) >= SPREAD_CONFIDENCE {
            best = l;
        } else {
            break;
        }
    }
    (best, n + 1 - best, coverage(best))
}

/// `P[X < l]` for `X ~ Binomial(n, 1/2)`, summed term by term (`C(n, k) / 2^n`, each
/// from the last) so small counts come out exact: statrs' regularised beta is off in the
/// 15th digit, which is enough to tip a comparison with 0.95.
fn binomial_half_below(n: usize, l: usize) -> f64 {
    if n > 1000 {
        // 2^-n underflows past 1074; in logarithms instead.
        let mut ln_term = -(n as f64) * std::f64::consts::LN_2;
        let mut sum = 0.0;
        for k in 0..l {
            if k > 0 {
                ln_term += ((n - k + 1) as f64 / k as f64).ln();
            }
            sum += ln_term.exp();
        }
        return sum;
    }
    let mut term = 0.5f64.powi(n as i32);
    let mut sum = 0.0;
    for k in 0..l {
        if k > 0 {
            term = term * (n - k + 1) as f64 / k as f64;
        }
        sum += term;
    }
    sum
}

/// The wider of two intervals (an unbounded one is the widest; `b` on a tie).
pub fn wider(a: Option<Ci95>, b: Option<Ci95>) -> Option<Ci95> {
    let width = |c: Ci95| c.high().map_or(u64::MAX, |h| h.saturating_sub(c.low()));
    match (a, b) {
        (Some(a), Some(b)) => Some(if width(a) > width(b) { a } else { b }),
        (a, b) => a.or(b),
    }
}

fn median_u64(sorted: &[u64]) -> u64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        ((u128::from(sorted[n / 2 - 1]) + u128::from(sorted[n / 2])) / 2) as u64
    }
}

/// The median of `values` (the mean of the middle two for an even count; 0 for none).
pub fn median_f64(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn small_counts_use_the_whole_range_and_say_how_often_it_covers() {
        assert_eq!(median_ranks(2), (1, 2, 0.5));
        assert_eq!(median_ranks(3), (1, 3, 0.75));
        assert_eq!(median_ranks(5), (1, 5, 0.9375));
        // From 6 runs the range covers 96.9%; from 9 the second-lowest and
        // second-highest do (96.1%), from 12 the third (96.1%).
        let (l, u, c) = median_ranks(6);
        assert_eq!((l, u), (1, 6));
        assert!((c - 0.96875).abs() < 1e-9);
        assert_eq!(median_ranks(8).0, 1);
        assert_eq!(median_ranks(9).0, 2);
        assert_eq!(median_ranks(12).0, 3);
        for n in 6..60 {
            let (l, u, c) = median_ranks(n);
            assert!(c >= SPREAD_CONFIDENCE && l + u == n + 1, "{n}: {l} {u} {c}");
        }
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median_f64(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_f64(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median_f64(&[]), 0.0);
    }

    #[test]
    fn the_median_takes_the_wider_interval_of_the_two() {
        // Three runs that agree within themselves but not with each other.
        let runs = [
            (400_000, Some(Ci95(380_000, Some(420_000)))),
            (1_600_000, Some(Ci95(1_500_000, Some(1_700_000)))),
            (500_000, Some(Ci95(470_000, Some(530_000)))),
        ];
        let s = combine(&runs).unwrap();
        assert_eq!(s.median_ns, 500_000);
        assert_eq!(s.within_ci95_ns, Some(Ci95(470_000, Some(530_000))));
        assert_eq!(s.repeats_ci95_ns, Some(Ci95(400_000, Some(1_600_000))));
        assert_eq!(s.repeats_coverage, Some(0.75));
        assert_eq!(s.ci95_ns, s.repeats_ci95_ns);
        // One run: its own interval alone.
        let one = combine(&runs[..1]).unwrap();
        assert_eq!(one.ci95_ns, runs[0].1);
        assert_eq!(one.repeats_ci95_ns, None);
    }

    #[test]
    fn an_unbounded_end_is_the_widest_and_survives_the_median_when_most_are() {
        let open = Some(Ci95(900_000, None));
        let closed = Some(Ci95(950_000, Some(990_000)));
        let s = combine(&[(950_000, open), (960_000, open), (970_000, closed)]).unwrap();
        assert_eq!(s.within_ci95_ns, Some(Ci95(900_000, None)));
        assert_eq!(s.ci95_ns, s.within_ci95_ns);
        let s = combine(&[(950_000, open), (960_000, closed), (970_000, closed)]).unwrap();
        assert_eq!(s.within_ci95_ns.unwrap().high(), Some(990_000));
        // Two runs, one unbounded: the upper median is unbounded.
        let s = combine(&[(950_000, open), (960_000, closed)]).unwrap();
        assert_eq!(s.within_ci95_ns.unwrap().high(), None);
        assert_eq!(wider(None, None), None);
        assert_eq!(wider(closed, None), closed);
    }
}
