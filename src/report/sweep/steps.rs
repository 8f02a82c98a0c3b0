//! A sweep's steps by rate: every open-loop run at one target rate (a coarse step, a
//! search point, a re-measurement, and each of their `--repeat` runs) summarised as one
//! step: the median of the runs' percentiles, the 95% interval within a run beside the
//! interval from the runs' spread, and the wider of the two, which is what the sweep's
//! decisions use. Pure statistics of saved runs; the verdicts against the objectives are
//! `sweep::search`'s, and it writes them into [`StepSummary::slo`].
//!
//! The interval from the spread is the order-statistic (distribution-free) interval of
//! the median of N runs' values: the values ranked l and N + 1 - l, with l the largest
//! rank for which that pair holds the median of the distribution the runs are drawn from
//! with at least 95% probability (`1 - 2 P[Binomial(N, 1/2) < l]`). Under 6 runs no pair
//! reaches 95%, and the interval is the whole range, min..max, whose coverage is stated
//! beside it: 50% for 2 runs, 75% for 3, 87.5% for 4, 93.75% for 5. One run has no
//! spread. The within-run interval beside the median is the median of the runs' own
//! interval ends, an unbounded end counting as above every bounded one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Measurement, Verdict};
use crate::report::{Bottleneck, Latency, Percentile};
use crate::stats::confidence::{self, Ci95};

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

/// One objective at one step, over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepCheck {
    /// The objective as typed.
    pub slo: String,
    /// Its percentile over the runs.
    #[serde(flatten)]
    pub summary: PercentileSummary,
    /// Pass, fail or uncertain on this objective alone.
    pub verdict: Verdict,
}

/// A step's verdict against every objective, from all its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepVerdict {
    /// Pass when every objective passes, fail when one fails, uncertain otherwise.
    pub verdict: Verdict,
    /// Each objective.
    pub checks: Vec<StepCheck>,
    /// Runs whose own values met every objective with the rate achieved.
    pub met_runs: usize,
    /// Runs that fell short of the schedule (under the send tolerance) or left requests unsent.
    pub short_runs: usize,
    /// Why, in one clause.
    pub why: String,
}

/// Every open-loop run at one target rate, summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    /// The target rate, requests per second.
    pub target_rate_per_sec: f64,
    /// Runs at this rate (coarse, search and re-measurement, every repeat).
    pub runs: usize,
    /// The median of the runs' achieved rates.
    pub achieved_rate_per_sec: f64,
    /// Response time at each reported percentile, by key (`p99_9`).
    pub response: BTreeMap<String, PercentileSummary>,
    /// The bottleneck most of the runs named (the earliest run's among a tie).
    pub bottleneck: Option<Bottleneck>,
    /// The verdict against the objectives, with `--slo`.
    pub slo: Option<StepVerdict>,
}

/// The open-loop runs of `runs` grouped by target rate, each summarised (no verdicts),
/// by increasing rate.
pub fn summarize(runs: &[Measurement]) -> Vec<StepSummary> {
    by_rate(runs)
        .into_iter()
        .map(|(rate, group)| summarize_rate(rate, &group))
        .collect()
}

/// The open-loop runs of `runs` at each target rate, by increasing rate, each group in
/// run order.
pub fn by_rate(runs: &[Measurement]) -> Vec<(f64, Vec<&Measurement>)> {
    let mut groups: Vec<(f64, Vec<&Measurement>)> = Vec::new();
    for m in runs.iter().filter(|m| m.kind.is_open_loop()) {
        let Some(rate) = m.target_rate_per_sec else {
            continue;
        };
        match groups.iter_mut().find(|(r, _)| r.total_cmp(&rate).is_eq()) {
            Some((_, group)) => group.push(m),
            None => groups.push((rate, vec![m])),
        }
    }
    groups.sort_by(|a, b| a.0.total_cmp(&b.0));
    groups
}

fn summarize_rate(rate: f64, group: &[&Measurement]) -> StepSummary {
    let mut response = BTreeMap::new();
    let latencies: Vec<&Latency> = group.iter().filter_map(|m| m.report.response()).collect();
    if !latencies.is_empty() {
        for p in Percentile::ALL {
            let values: Vec<(u64, Option<Ci95>)> =
                latencies.iter().map(|l| (l.at(p), l.ci95(p))).collect();
            if let Some(s) = combine(&values) {
                response.insert(p.key().to_string(), s);
            }
        }
    }
    let achieved: Vec<f64> = group
        .iter()
        .map(|m| m.report.achieved_rate_per_sec)
        .collect();
    StepSummary {
        target_rate_per_sec: rate,
        runs: group.len(),
        achieved_rate_per_sec: median_f64(&achieved),
        response,
        bottleneck: most_common(
            group
                .iter()
                .filter_map(|m| m.report.bottleneck.as_ref().map(|b| b.verdict)),
        ),
        slo: None,
    }
}

/// The value of the `percentile` (e.g. 99.9) of `latency` and its 95% interval: the
/// report's own for the percentiles it gives, otherwise from its histogram with the
/// binomial interval alone (the batches that would widen it are not saved), which is
/// narrower than the report's own would be.
pub fn percentile_of(latency: &Latency, percentile: f64) -> Option<(u64, Option<Ci95>)> {
    let q = percentile / 100.0;
    if let Some(p) = Percentile::ALL
        .into_iter()
        .find(|p| (p.quantile() - q).abs() < 1e-12)
    {
        if latency.count == 0 {
            return None;
        }
        return Some((latency.at(p), latency.ci95(p)));
    }
    let h = latency.histogram().filter(|h| !h.is_empty())?;
    let e = confidence::estimate(&h, &[], q)?;
    Some((e.value_ns, Some(e.ci95)))
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

fn median_f64(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The most frequent item, the earliest among a tie.
fn most_common<T: PartialEq + Copy>(items: impl Iterator<Item = T>) -> Option<T> {
    let mut counts: Vec<(T, usize)> = Vec::new();
    for item in items {
        match counts.iter_mut().find(|(t, _)| *t == item) {
            Some((_, n)) => *n += 1,
            None => counts.push((item, 1)),
        }
    }
    let top = counts.iter().map(|c| c.1).max()?;
    counts.into_iter().find(|c| c.1 == top).map(|c| c.0)
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

    #[test]
    fn the_most_common_verdict_wins_and_a_tie_goes_to_the_earliest() {
        assert_eq!(most_common([1, 2, 2, 3].into_iter()), Some(2));
        assert_eq!(most_common([3, 1, 1, 3].into_iter()), Some(3));
        assert_eq!(most_common(std::iter::empty::<u8>()), None);
    }
}
