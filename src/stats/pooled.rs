//! Runs pooled: a percentile over every run at one rate (a sweep's visits, `--repeat`'s
//! repeats) as one sample, and an objective `pQ <= T` decided on the pooled exceedance.
//!
//! The value is the percentile of the runs' histograms added, so a run that stalled
//! weighs by its replies (a median of the runs' values would hide it). Its interval and
//! the decision on an objective are the same test, [`super::exceedance`]'s, on the runs'
//! response windows: the runs are the clusters (host weather between runs counts) and the
//! windows a floor (a burst inside a run counts), so an interval and a verdict cannot
//! disagree. A run without windows (a file written before they were) leaves the interval
//! out rather than guessing one. The same windows, counted per run, are what the capacity
//! estimate fits ([`run_counts`]).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::confidence::{Batch, Ci95};
use super::exceedance::{self, Clusters, Decision, Pooled, Window};

/// One percentile over the runs at one rate, pooled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PooledPercentile {
    /// The percentile of every run's replies together.
    #[serde(alias = "median_ns")]
    pub value_ns: u64,
    /// Its interval: the values the pooled test cannot tell from the percentile (see the
    /// module doc), at the level whose error at a decision's boundary is at most 5%; none
    /// without windows, an open end where no value is shown to hold.
    pub ci95_ns: Option<Ci95>,
    /// Runs pooled.
    #[serde(default)]
    pub runs: usize,
    /// Each run's own value, in the order run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values_ns: Vec<u64>,
}

/// The `quantile` over runs whose histograms are `hists` and whose response windows are
/// `visits` (one slice per run; empty when a run kept none), its interval counting
/// `clusters` as the clusters; `None` without a reply.
pub fn percentile(
    hists: &[Histogram<u64>],
    visits: &[&[Batch]],
    quantile: f64,
    clusters: Clusters,
) -> Option<PooledPercentile> {
    let mut total: Option<Histogram<u64>> = None;
    for h in hists {
        match &mut total {
            Some(t) => {
                // Same bounds everywhere (the recorder's); a histogram that will not add is
                // one this report did not write, and is left out rather than trusted.
                let _ = t.add(h);
            }
            None => total = Some(h.clone()),
        }
    }
    let total = total.filter(|t| !t.is_empty())?;
    let value_ns = total.value_at_quantile(quantile);
    let ci95_ns = if visits.iter().all(|v| !v.is_empty()) && !visits.is_empty() {
        let owned: Vec<Vec<Batch>> = visits.iter().map(|v| v.to_vec()).collect();
        exceedance::quantile_interval_by(clusters, &owned, quantile)
            .map(|(low, high)| Ci95(low.min(value_ns), high.map(|h| h.max(value_ns))))
    } else {
        None
    };
    Some(PooledPercentile {
        value_ns,
        ci95_ns,
        runs: hists.len(),
        values_ns: hists
            .iter()
            .map(|h| {
                if h.is_empty() {
                    0
                } else {
                    h.value_at_quantile(quantile)
                }
            })
            .collect(),
    })
}

/// The windows of `visits` as counts of replies and of replies slower than `bound_ns`
/// (to the windows' resolution, about 1%).
pub fn windows_over(visits: &[&[Batch]], bound_ns: u64) -> Vec<Vec<Window>> {
    visits
        .iter()
        .map(|v| {
            v.iter()
                .map(|b| Window {
                    replies: b.len(),
                    over: b.len().saturating_sub(b.at_most(bound_ns)),
                })
                .collect()
        })
        .collect()
}

/// Each run's replies and replies slower than `bound_ns` (to the windows' resolution), from
/// its response windows: what [`super::capacity::estimate`] fits.
pub fn run_counts(visits: &[&[Batch]], bound_ns: u64) -> Vec<super::capacity::RunCount> {
    windows_over(visits, bound_ns)
        .iter()
        .map(|run| {
            run.iter()
                .fold(super::capacity::RunCount::default(), |a, w| {
                    super::capacity::RunCount {
                        replies: a.replies.saturating_add(w.replies),
                        over: a.over.saturating_add(w.over),
                    }
                })
        })
        .collect()
}

/// The decision on `pQ <= bound_ns` over `visits` (`quantile` = Q), counting `clusters`
/// as the clusters, with the pooled exceedance it rests on.
pub fn objective(
    visits: &[&[Batch]],
    quantile: f64,
    bound_ns: u64,
    clusters: Clusters,
) -> (Decision, Option<Pooled>) {
    exceedance::decide_by(clusters, &windows_over(visits, bound_ns), 1.0 - quantile)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window of `calm` replies at 200 us and `slow` at 2 ms.
    fn window(calm: u64, slow: u64) -> Batch {
        Batch::of_buckets([(200_000, calm), (2_000_000, slow)].into_iter())
    }

    #[test]
    fn run_counts_add_each_runs_windows_over_the_bound() {
        let runs = [
            vec![window(990, 10), window(995, 5)],
            vec![window(1000, 0)],
            vec![],
        ];
        let refs: Vec<&[Batch]> = runs.iter().map(Vec::as_slice).collect();
        let counts = run_counts(&refs, 1_000_000);
        let pairs: Vec<(u64, u64)> = counts.iter().map(|c| (c.replies, c.over)).collect();
        assert_eq!(pairs, vec![(2000, 15), (1000, 0), (0, 0)]);
        // Over a bound above every reply, none is over.
        assert!(run_counts(&refs, 5_000_000).iter().all(|c| c.over == 0));
    }
}
