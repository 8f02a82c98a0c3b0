//! `--repeat N`: a test run N times, summarised per metric and percentile as the median
//! of the repeats with two intervals, from the repeats' spread and from within one run,
//! and the wider of the two quoted.
//!
//! On a shared host the spread between repeats (the host's weather: a neighbour, a
//! migration, the page cache) is usually much larger than the interval within one run,
//! which only sees the noise inside its own seconds. The interval across repeats is the
//! distribution-free one for a median: the order statistics of the N values at the ranks
//! of Binomial(N, 1/2)'s 2.5% and 97.5% points. With fewer than 6 repeats no two ranks
//! reach 95%, and the range (smallest to largest) is given, with the confidence it does
//! have (`1 - 2^(1-N)`: 94% for 5, 88% for 4, 75% for 3). A within-run interval with no
//! high end (too few samples beyond for one run) leaves the repeats' interval quoted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, DiscreteCDF};

use super::{Percentile, TestReport};
use crate::stats::confidence::{CONFIDENCE, Ci95};

/// One test's repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepeatSummary {
    /// The test's name.
    pub test: String,
    /// Repeats summarised.
    pub repeats: usize,
    /// The confidence of the interval across repeats (0.95, or less with few repeats).
    pub across_confidence: f64,
    /// By metric (`response`, ...), each percentile in order.
    pub metrics: BTreeMap<String, Vec<RepeatedPercentile>>,
}

/// One percentile over the repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepeatedPercentile {
    /// `p99`, `p99_9`, ...
    pub percentile: String,
    /// The median of the repeats' values.
    pub median_ns: u64,
    /// Each repeat's value, in the order run.
    pub values_ns: Vec<u64>,
    /// From the repeats' spread.
    pub across_ci95_ns: Ci95,
    /// Within one run: the interval of the repeat whose value is nearest the median.
    pub within_ci95_ns: Option<Ci95>,
    /// The wider of the two: the one to quote.
    pub ci95_ns: Ci95,
}

impl RepeatSummary {
    /// The summary of `runs`, the repeats of one test in order; `None` for fewer than two.
    pub fn of(runs: &[&TestReport]) -> Option<Self> {
        let first = runs.first()?;
        if runs.len() < 2 {
            return None;
        }
        let (low_rank, high_rank, confidence) = median_ranks(runs.len());
        let mut metrics = BTreeMap::new();
        for metric in first.latency.keys() {
            let per_run: Vec<&super::Latency> = runs
                .iter()
                .filter_map(|r| r.latency.get(metric))
                .filter(|l| l.count > 0)
                .collect();
            if per_run.len() != runs.len() {
                continue;
            }
            let rows = Percentile::ALL
                .iter()
                .map(|&p| {
                    let values_ns: Vec<u64> = per_run.iter().map(|l| l.at(p)).collect();
                    let mut sorted = values_ns.clone();
                    sorted.sort_unstable();
                    let n = sorted.len();
                    let median_ns = if n % 2 == 1 {
                        sorted[n / 2]
                    } else {
                        (sorted[n / 2 - 1] + sorted[n / 2]).div_ceil(2)
                    };
                    let across = Ci95(sorted[low_rank - 1], Some(sorted[high_rank - 1]));
                    let nearest = per_run
                        .iter()
                        .min_by_key(|l| l.at(p).abs_diff(median_ns))
                        .and_then(|l| l.ci95(p));
                    RepeatedPercentile {
                        percentile: p.key().to_string(),
                        median_ns,
                        values_ns,
                        across_ci95_ns: across,
                        within_ci95_ns: nearest,
                        ci95_ns: wider(across, nearest),
                    }
                })
                .collect();
            metrics.insert(metric.clone(), rows);
        }
        Some(RepeatSummary {
            test: first.name.clone(),
            repeats: runs.len(),
            across_confidence: confidence,
            metrics,
        })
    }
}

/// The 1-based ranks whose order statistics bracket the median of `n` values, and the
/// confidence they give: 95% from 6 values on, the range below that.
fn median_ranks(n: usize) -> (usize, usize, f64) {
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let Ok(b) = Binomial::new(0.5, n as u64) else {
        return (1, n, 0.0);
    };
    // X(l) <= median <= X(u) fails when fewer than l values lie below the median, or
    // fewer than n - u + 1 above it: the largest l with P(B < l) <= tail.
    let mut low = 1;
    while low < n / 2 && b.cdf(low as u64) <= tail {
        low += 1;
    }
    let high = n + 1 - low;
    let miss = if low == 0 { 0.0 } else { b.cdf(low as u64 - 1) };
    (low, high, 1.0 - 2.0 * miss)
}

/// The wider of the interval across repeats, `a`, and the one within a run, `b`. A
/// within-run interval without a high end says that one run has too few samples beyond
/// the percentile to bound it, which the repeats together do: `a` is quoted then.
fn wider(a: Ci95, b: Option<Ci95>) -> Ci95 {
    let Some(b) = b.filter(|b| b.high().is_some()) else {
        return a;
    };
    let width = |c: Ci95| c.high().map_or(u64::MAX, |h| h.saturating_sub(c.low()));
    if width(b) > width(a) { b } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_interval_is_the_range_for_few_repeats_and_narrows_with_more() {
        // 5 repeats: the range, at 1 - 2 * 2^-5 = 93.75%.
        let (l, u, c) = median_ranks(5);
        assert_eq!((l, u), (1, 5));
        assert!((c - 0.9375).abs() < 1e-9, "{c}");
        // 12 repeats: P(B <= 2) = 0.019 <= 0.025 < P(B <= 3): ranks 3 and 10.
        let (l, u, c) = median_ranks(12);
        assert_eq!((l, u), (3, 10));
        assert!(c >= 0.95, "{c}");
        // 2 repeats: the range, at 50%.
        assert_eq!(median_ranks(2).0, 1);
    }

    #[test]
    fn the_wider_interval_is_quoted() {
        let a = Ci95(10, Some(20));
        assert_eq!(wider(a, Some(Ci95(12, Some(18)))), a);
        assert_eq!(wider(a, Some(Ci95(5, Some(30)))), Ci95(5, Some(30)));
        assert_eq!(wider(a, Some(Ci95(15, None))), a);
        assert_eq!(wider(a, None), a);
    }
}
