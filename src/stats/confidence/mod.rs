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

mod batch;
mod monotone;

pub use batch::{BATCH, Batch, BatchSeries};
pub use monotone::monotone;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, ChiSquared, ContinuousCDF, DiscreteCDF, Normal, StudentsT};

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

/// A value with its 95% interval: what every report gives of a percentile, kept as one
/// so the two are never passed or printed apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    /// The value.
    pub value_ns: u64,
    /// Its 95% interval; none where the report has none.
    pub ci95: Option<Ci95>,
}

/// What the interval of one percentile rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantileEstimate {
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
pub fn estimate(
    total: &Histogram<u64>,
    batches: &[Batch],
    quantile: f64,
) -> Option<QuantileEstimate> {
    let n = total.len();
    if n == 0 {
        return None;
    }
    let value_ns = total.value_at_quantile(quantile);
    let rank = ((quantile * n as f64).ceil() as u64).clamp(1, n);
    let (design_effect, freedom) = design_effect(batches, value_ns);
    Some(QuantileEstimate {
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

/// Effective samples past which a rank interval comes from the normal approximation.
const NORMAL_FROM: u64 = 10_000_000;

/// The ranks `(l, u)` (1-based; 0 for below the smallest, `n + 1` for above the
/// largest) whose order statistics bracket the `quantile` of `n` samples carrying the
/// information of `n / design_effect` independent ones, with two-sided `confidence`.
fn rank_interval(n: u64, quantile: f64, design_effect: f64, confidence: f64) -> (u64, u64) {
    let effective = ((n as f64 / design_effect.max(1.0)).round() as u64).max(1);
    let tail = (1.0 - confidence) / 2.0;
    let scale = n as f64 / effective as f64;
    let (low, high) = if effective > NORMAL_FROM {
        // The binomial's quantiles by its normal approximation: exact to a rank or two
        // out of tens of millions, and statrs's search over a binomial of 2^53 trials
        // (a merged file's count) would not end in time.
        let mean = quantile * effective as f64;
        let spread = normal_quantile(1.0 - tail) * (mean * (1.0 - quantile)).sqrt();
        ((mean - spread).max(0.0), mean + spread + 1.0)
    } else {
        let Ok(binomial) = Binomial::new(quantile, effective) else {
            return (0, n.saturating_add(1));
        };
        (
            binomial.inverse_cdf(tail) as f64,
            (binomial.inverse_cdf(1.0 - tail) + 1) as f64,
        )
    };
    (
        (low * scale).floor() as u64,
        ((high * scale).ceil() as u64).min(n.saturating_add(1)),
    )
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
    // Past 10^5 degrees of freedom t is z to six digits; statrs's inverse would search
    // for a long time at a freedom a file claims (10^8 took minutes), and infinity or NaN
    // is no freedom at all.
    if !freedom.is_finite() || freedom > 1e5 {
        return design_effect.max(1.0);
    }
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
mod tests;
