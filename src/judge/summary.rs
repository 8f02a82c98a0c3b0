//! Runs summarised by pooling them: a sweep's steps by rate (every open-loop run at one
//! target rate: a coarse step, a search visit, a re-measurement, and each of their
//! `--repeat` runs) and a run's `--repeat` runs of one test. Each percentile of the runs'
//! replies is pooled, with the interval of the pooled test ([`crate::stats::pooled`]);
//! a step pools the runs that kept their schedule and passed their self-checks (all runs
//! when none did). The one statistic for both, so the same runs give the same figures;
//! the models it fills are `report`'s, the verdicts against the objectives
//! [`super::slo`]'s.

use std::collections::BTreeMap;

use super::saturation::fell_short;
use crate::record::Metric;
use crate::report::repeats::{RepeatSummary, RepeatedPercentile};
use crate::report::sweep::{Measurement, StepSummary, SweepReport};
use crate::report::{Latency, Percentile, TestReport};
use crate::stats::confidence::{self, Batch, Ci95};
use crate::stats::exceedance::Clusters;
use crate::stats::median::median_f64;
use crate::stats::pooled::{self, PooledPercentile};

/// The steps by rate of `report`: the saved ones, or for a file written before they
/// were, its runs summarised (without verdicts).
pub fn steps_of(report: &SweepReport) -> Vec<StepSummary> {
    if report.steps.is_empty() {
        summarize(&report.runs)
    } else {
        report.steps.clone()
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
    let lost = |g: &[&Measurement]| g.iter().any(|m| m.report.lost_server().is_some());
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

/// One rate's figures, pooled over exactly the runs its verdict pools
/// ([`super::counted::counted`]), and the runs left out by why.
fn summarize_rate(rate: f64, group: &[&Measurement]) -> StepSummary {
    let (visits, left_out) = super::counted::counted(group);
    let runs = &visits;
    let mut response = BTreeMap::new();
    let latencies: Vec<&Latency> = runs.iter().filter_map(|m| m.report.response()).collect();
    let hists: Vec<_> = latencies.iter().filter_map(|l| l.histogram()).collect();
    let windows = windows_of(runs.iter().map(|m| &m.report));
    if !hists.is_empty() {
        for p in Percentile::ALL {
            if let Some(s) =
                crate::stats::pooled::percentile(&hists, &windows, p.quantile(), Clusters::Runs)
            {
                response.insert(p.key().to_string(), s);
            }
        }
    }
    monotone_pooled(&mut response);
    let achieved: Vec<f64> = group
        .iter()
        .map(|m| m.report.achieved_rate_per_sec)
        .collect();
    StepSummary {
        target_rate_per_sec: rate,
        runs: group.len(),
        achieved_rate_per_sec: median_f64(&achieved),
        response,
        pooled_runs: visits.len(),
        left_out,
        bottleneck: most_common(
            group
                .iter()
                .filter_map(|m| m.report.bottleneck.as_ref().map(|b| b.verdict)),
        ),
        short_runs: group.iter().filter(|m| fell_short(&m.report)).count(),
        backlog_runs: group
            .iter()
            .filter(|m| {
                m.report
                    .checks
                    .iter()
                    .any(super::checks::server_backlog_grew)
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
        let at = latency.at(p);
        return Some((at.value_ns, at.ci95));
    }
    let h = latency.histogram().filter(|h| !h.is_empty())?;
    let e = confidence::estimate(&h, &[], q)?;
    Some((e.value_ns, Some(e.ci95)))
}

/// The pooled percentiles of `response` (by key) with their intervals made monotone in
/// the percentile ([`confidence::monotone`]).
fn monotone_pooled(response: &mut BTreeMap<String, PooledPercentile>) {
    let keys: Vec<&str> = Percentile::ALL
        .iter()
        .map(|p| p.key())
        .filter(|k| response.contains_key(*k))
        .collect();
    let mut cis: Vec<Option<Ci95>> = keys.iter().map(|k| response[*k].ci95_ns).collect();
    let values: Vec<u64> = keys.iter().map(|k| response[*k].value_ns).collect();
    confidence::monotone(&mut cis, &values);
    for (k, ci) in keys.iter().zip(cis) {
        if let Some(p) = response.get_mut(*k) {
            p.ci95_ns = ci;
        }
    }
}

/// Each run's response windows (an empty slice for a run that kept none).
pub fn windows_of<'a>(reports: impl IntoIterator<Item = &'a TestReport>) -> Vec<&'a [Batch]> {
    reports.into_iter().map(TestReport::windows).collect()
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

/// The summary of `runs`, the repeats of one test in order (`--repeat`): each
/// percentile of each metric pooled, with the interval of the pooled test for response
/// time; `None` for fewer than two. [`super::slo::judge_repeats`] decides its objectives.
pub fn repeats(runs: &[&TestReport]) -> Option<RepeatSummary> {
    let first = runs.first()?;
    if runs.len() < 2 {
        return None;
    }
    let windows: Vec<&[Batch]> = runs.iter().map(|r| r.windows()).collect();
    let mut metrics = BTreeMap::new();
    for metric in first.latency.keys() {
        let hists: Vec<_> = runs
            .iter()
            .filter_map(|r| r.latency.get(metric))
            .filter(|l| l.count > 0)
            .filter_map(|l| l.histogram())
            .collect();
        if hists.len() != runs.len() {
            continue;
        }
        // Windows are kept of response time only: other metrics get no interval.
        let of_metric: &[&[Batch]] = if *metric == Metric::Response {
            &windows
        } else {
            &[]
        };
        let rows = Percentile::ALL
            .iter()
            .filter_map(|&p| {
                Some(RepeatedPercentile {
                    percentile: p.key().to_string(),
                    pooled: pooled::percentile(&hists, of_metric, p.quantile(), Clusters::Runs)?,
                })
            })
            .collect();
        let mut rows: Vec<RepeatedPercentile> = rows;
        let mut cis: Vec<Option<Ci95>> = rows.iter().map(|r| r.pooled.ci95_ns).collect();
        let values: Vec<u64> = rows.iter().map(|r| r.pooled.value_ns).collect();
        confidence::monotone(&mut cis, &values);
        for (row, ci) in rows.iter_mut().zip(cis) {
            row.pooled.ci95_ns = ci;
        }
        metrics.insert(metric.to_string(), rows);
    }
    Some(RepeatSummary {
        test: first.name.clone(),
        repeats: runs.len(),
        metrics,
        objectives: None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::judge::fixtures::windowed_run;

    #[test]
    fn the_most_common_verdict_wins_and_a_tie_goes_to_the_earliest() {
        assert_eq!(most_common([1, 2, 2, 3].into_iter()), Some(2));
        assert_eq!(most_common([3, 1, 1, 3].into_iter()), Some(3));
        assert_eq!(most_common(std::iter::empty::<u8>()), None);
    }

    /// `--repeat` and a sweep's step pool the same runs the same way: one statistic.
    #[test]
    fn repeats_and_a_sweep_step_give_the_same_pooled_figures_from_the_same_runs() {
        let runs: Vec<_> = [
            [10, 0, 0, 5],
            [0, 0, 0, 0],
            [2500, 0, 0, 0],
            [40, 40, 40, 40],
        ]
        .iter()
        .map(|over| windowed_run(1000.0, 5000, over))
        .collect();
        let reports: Vec<&TestReport> = runs.iter().map(|m| &m.report).collect();
        let repeats = repeats(&reports).unwrap();
        let step = &summarize(&runs)[0];
        for row in &repeats.metrics["response"] {
            let pooled = &step.response[&row.percentile];
            assert_eq!(&row.pooled, pooled, "{}", row.percentile);
        }
        let p99 = &step.response["p99"];
        assert!(p99.ci95_ns.is_some() && p99.runs == 4, "{p99:?}");
    }
}
