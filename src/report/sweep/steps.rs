//! A sweep's steps by rate: every open-loop run at one target rate (a coarse step, a
//! search visit, a re-measurement, and each of their `--repeat` runs) summarised as one
//! step: each percentile of the runs' replies pooled, with the interval of the pooled
//! test ([`crate::stats::pooled`]), over the runs that kept their schedule and passed
//! their self-checks (all runs when none did). Pure statistics of saved runs; the
//! verdicts against the objectives are `judge::slo`'s, written into [`StepSummary::slo`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Measurement, Verdict};
use crate::report::verdict::STEADY_STATE;
use crate::report::{Bottleneck, Latency, Percentile};
use crate::stats::confidence::{self, Batch, Ci95};
use crate::stats::median::median_f64;
pub use crate::stats::pooled::PooledPercentile;

/// One objective at one step, over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepCheck {
    /// The objective as typed.
    pub slo: String,
    /// Its percentile over the runs, pooled.
    #[serde(flatten)]
    pub summary: PooledPercentile,
    /// The share of replies over the objective's bound, pooled, that decided it; absent
    /// without response windows (and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exceedance: Option<Exceedance>,
    /// Pass, fail or uncertain on this objective alone.
    pub verdict: Verdict,
}

/// The share of replies slower than an objective's bound over a step's runs, and the
/// bounds its decision compared with the share the objective allows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Exceedance {
    /// Replies over the bound, over all replies.
    pub fraction: f64,
    /// The lower bound of the decision.
    pub low: f64,
    /// The upper bound of the decision.
    pub high: f64,
    /// What the objective allows: `1 - Q` for `pQ`.
    pub limit: f64,
    /// Replies counted.
    pub replies: u64,
    /// Of them, over the bound.
    pub over: u64,
    /// Runs pooled (the clusters).
    pub visits: usize,
}

impl Exceedance {
    /// The record of `pooled` against `limit`.
    pub fn of(pooled: &crate::stats::exceedance::Pooled, limit: f64) -> Self {
        Exceedance {
            fraction: pooled.fraction,
            low: pooled.low,
            high: pooled.high,
            limit,
            replies: pooled.replies,
            over: pooled.over,
            visits: pooled.visits,
        }
    }
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
    /// Runs left out of the decision: short of the schedule or failing a self-check.
    #[serde(default)]
    pub invalid_runs: usize,
    /// Most runs were left out: the generator, not the server, limited the step.
    #[serde(default)]
    pub generator_limited: bool,
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
    /// The median of the runs' achieved rates (requests sent per second).
    pub achieved_rate_per_sec: f64,
    /// Response time at each reported percentile, by key (`p99_9`).
    pub response: BTreeMap<String, PooledPercentile>,
    /// The bottleneck most of the runs named (the earliest run's among a tie).
    pub bottleneck: Option<Bottleneck>,
    /// Runs that sent or got replies at under [`super::SATURATION_FRACTION`] of their
    /// schedule ([`super::fell_short`]).
    #[serde(default)]
    pub short_runs: usize,
    /// Runs whose response time grew through the window (their `steady_state` check
    /// failed): a backlog, the server past its capacity.
    #[serde(default)]
    pub backlog_runs: usize,
    /// The verdict against the objectives, with `--slo`.
    pub slo: Option<StepVerdict>,
}

impl StepSummary {
    /// Whether the server stopped keeping the schedule here: most runs sent or got
    /// replies at under [`super::SATURATION_FRACTION`] of it, or built a backlog (or,
    /// in a file that counted neither, the median run sent under that fraction of the
    /// target).
    pub fn saturated(&self) -> bool {
        self.achieved_rate_per_sec < super::SATURATION_FRACTION * self.target_rate_per_sec
            || 2 * self.short_runs > self.runs
            || 2 * self.backlog_runs > self.runs
    }
}

/// The open-loop runs of `runs` grouped by target rate, each summarised (no verdicts),
/// by increasing rate.
pub fn summarize(runs: &[Measurement]) -> Vec<StepSummary> {
    by_rate(runs)
        .into_iter()
        .map(|(rate, group)| summarize_rate(rate, &group))
        .collect()
}

/// Why a sweep failed although every run ended: at every open-loop rate swept, a run's
/// server could not be reached at its end (its numbers measured the reconnects); `None`
/// when a rate kept it, or no open-loop rate was swept.
pub fn lost_server(runs: &[Measurement]) -> Option<String> {
    let groups = by_rate(runs);
    let lost = |g: &[&Measurement]| {
        g.iter()
            .any(|m| m.report.outages.iter().any(|o| o.until_end))
    };
    (!groups.is_empty() && groups.iter().all(|(_, g)| lost(g))).then(|| {
        format!(
            "every rate swept ({}) lost its server: it could not be reached at the end of a run at each",
            groups.len()
        )
    })
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
    let valid: Vec<&Measurement> = group.iter().filter(|m| m.report.valid).copied().collect();
    let runs = if valid.is_empty() { group } else { &valid };
    let mut response = BTreeMap::new();
    let latencies: Vec<&Latency> = runs.iter().filter_map(|m| m.report.response()).collect();
    let hists: Vec<_> = latencies.iter().filter_map(|l| l.histogram()).collect();
    let windows = windows_of(runs);
    if !hists.is_empty() {
        for p in Percentile::ALL {
            if let Some(s) = crate::stats::pooled::percentile(&hists, &windows, p.quantile()) {
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
        short_runs: group
            .iter()
            .filter(|m| super::fell_short(&m.report))
            .count(),
        backlog_runs: group
            .iter()
            .filter(|m| {
                m.report.checks.iter().any(|c| {
                    c.name == STEADY_STATE && c.verdict == crate::report::verdict::Verdict::Fail
                })
            })
            .count(),
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

/// Each run's response windows (an empty slice for a run that kept none).
pub fn windows_of<'a>(runs: &[&'a Measurement]) -> Vec<&'a [Batch]> {
    runs.iter()
        .map(|m| {
            m.report
                .response_windows
                .as_ref()
                .map_or(&[][..], |w| w.windows.as_slice())
        })
        .collect()
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
    fn the_most_common_verdict_wins_and_a_tie_goes_to_the_earliest() {
        assert_eq!(most_common([1, 2, 2, 3].into_iter()), Some(2));
        assert_eq!(most_common([3, 1, 1, 3].into_iter()), Some(3));
        assert_eq!(most_common(std::iter::empty::<u8>()), None);
    }
}
