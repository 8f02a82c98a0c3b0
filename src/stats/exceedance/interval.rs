//! The percentile interval that inverts the exceedance test, and the pooled percentile it
//! brackets: both over the visits the decision rests on, so that an interval, a percentile
//! and a verdict at the same visits agree.

use super::clusters::{Clusters, pool_windows};
use super::{Decision, Pooled, RULE, Window, at_last_look, pool};
use crate::stats::confidence::Batch;

/// The interval of the Q-quantile over visits of coarse batches (each visit a list of
/// windows): `(low, high)` in ns, the inversion of the bounds of [`super::decide`]'s test
/// over the same visits. `high` is the smallest bucket value at which E's upper bound is
/// under the limit (the objective `pQ <= high` holds once its look allows a pass), `None`
/// when none is; `low` the largest at which its lower bound is over it (the objective is
/// broken), or 0. Shown at any number of visits, at the levels of the look they reach;
/// `None` without a reply.
pub fn quantile_interval(visits: &[Vec<Batch>], quantile: f64) -> Option<(u64, Option<u64>)> {
    quantile_interval_by(Clusters::Runs, visits, quantile)
}

/// [`quantile_interval`] with `clusters` as the clusters: the inversion of
/// [`super::clusters::decide_by`]'s test over the same clusters.
pub fn quantile_interval_by(
    clusters: Clusters,
    visits: &[Vec<Batch>],
    quantile: f64,
) -> Option<(u64, Option<u64>)> {
    match clusters {
        Clusters::Runs => invert(
            at_last_look(visits, &RULE, |v| v.iter().any(|b| !b.is_empty())),
            quantile,
            pool,
        ),
        Clusters::Windows => invert(
            &clusters.regroup(visits, |b| !b.is_empty()),
            quantile,
            pool_windows,
        ),
    }
}

/// The interval over `visits` as given, each value's bounds from `pooled`.
fn invert(
    visits: &[Vec<Batch>],
    quantile: f64,
    pooled: fn(&[Vec<Window>]) -> Option<Pooled>,
) -> Option<(u64, Option<u64>)> {
    let limit = 1.0 - quantile;
    let mut values: Vec<u64> = visits.iter().flatten().flat_map(Batch::values).collect();
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    values.dedup();
    let mut windows: Vec<Vec<Window>> = visits
        .iter()
        .map(|v| vec![Window::default(); v.len()])
        .collect();
    // E falls as the bound rises, and neither end can lie where E is on the wrong side of
    // the limit (the bounds bracket E), so each scan skips those values for the price of
    // the counts alone.
    let mut at = |value_ns: u64, wanted: Decision| {
        let fraction = windows_over(visits, value_ns, &mut windows);
        let possible = match wanted {
            Decision::Holds => fraction <= limit,
            _ => fraction > limit,
        };
        possible
            && pooled(&windows).is_some_and(|p| match wanted {
                Decision::Holds => p.high <= limit,
                _ => p.low > limit,
            })
    };
    // Binary searches: the share over a value falls as the value rises, so the upper bound
    // turns from over the limit to under it once along the values, and the lower bound
    // from over to under. A scan of every value costs an inverse beta (Clopper-Pearson)
    // per bucket, seconds per step once a sweep holds a few hundred thousand replies at a
    // rate.
    let first_holding = values.partition_point(|&v| !at(v, Decision::Holds));
    let high = values.get(first_holding).copied();
    let past_broken = values.partition_point(|&v| at(v, Decision::Broken));
    let low = past_broken.checked_sub(1).map_or(0, |i| values[i]);
    Some((low, high))
}

/// The Q-quantile of every window of the visits [`quantile_interval`] counts, added
/// together (to a bucket's resolution); `None` without a reply.
pub fn pooled_quantile(visits: &[Vec<Batch>], quantile: f64) -> Option<u64> {
    let visits = at_last_look(visits, &RULE, |v| v.iter().any(|b| !b.is_empty()));
    let mut total = Batch::default();
    for batch in visits.iter().flatten() {
        total.add(batch);
    }
    total.quantile(quantile)
}

/// The windows of `visits` as counts over `value_ns`, written into `windows` (shaped like
/// `visits`); returns the pooled fraction over it (1 without a reply).
fn windows_over(visits: &[Vec<Batch>], value_ns: u64, windows: &mut [Vec<Window>]) -> f64 {
    let (mut replies, mut over) = (0u64, 0u64);
    for (batches, into) in visits.iter().zip(windows.iter_mut()) {
        for (batch, window) in batches.iter().zip(into.iter_mut()) {
            let n = batch.len();
            *window = Window {
                replies: n,
                over: n.saturating_sub(batch.at_most(value_ns)),
            };
            replies = replies.saturating_add(n);
            over = over.saturating_add(window.over);
        }
    }
    if replies == 0 {
        1.0
    } else {
        over as f64 / replies as f64
    }
}
