//! `--repeat N`: a test run N times, summarised per metric and percentile by pooling the
//! repeats: the percentile of every repeat's replies together, each repeat's own value
//! beside it, and for response time the interval of the pooled test
//! ([`crate::stats::pooled`]), which counts the repeats as clusters, so the host's
//! weather between them (a neighbour, a migration, the page cache) widens it. The
//! statistic is the one a sweep's steps use, so the same runs give the same figures.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::sweep::steps::StepVerdict;
use super::{Percentile, TestReport};
use crate::record::Metric;
use crate::stats::confidence::Batch;
use crate::stats::pooled::{self, PooledPercentile};

/// One test's repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepeatSummary {
    /// The test's name.
    pub test: String,
    /// Repeats summarised.
    pub repeats: usize,
    /// By metric (`response`, ...), each percentile in order.
    pub metrics: BTreeMap<String, Vec<RepeatedPercentile>>,
    /// `--slo` over the repeats pooled, decided as a sweep decides a step (an open loop
    /// with objectives only; `judge::slo::judge_repeats`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objectives: Option<StepVerdict>,
}

/// One percentile over the repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepeatedPercentile {
    /// `p99`, `p99_9`, ...
    pub percentile: String,
    /// The pooled value, its interval (response time only) and each repeat's own value.
    #[serde(flatten)]
    pub pooled: PooledPercentile,
}

impl RepeatSummary {
    /// The summary of `runs`, the repeats of one test in order; `None` for fewer than two.
    pub fn of(runs: &[&TestReport]) -> Option<Self> {
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
            let of_metric: &[&[Batch]] = if metric == Metric::Response.name() {
                &windows
            } else {
                &[]
            };
            let rows = Percentile::ALL
                .iter()
                .filter_map(|&p| {
                    Some(RepeatedPercentile {
                        percentile: p.key().to_string(),
                        pooled: pooled::percentile(&hists, of_metric, p.quantile())?,
                    })
                })
                .collect();
            metrics.insert(metric.clone(), rows);
        }
        Some(RepeatSummary {
            test: first.name.clone(),
            repeats: runs.len(),
            metrics,
            objectives: None,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::judge::fixtures::windowed_run;

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
        let repeats = RepeatSummary::of(&reports).unwrap();
        let step = &crate::report::sweep::steps::summarize(&runs)[0];
        for row in &repeats.metrics["response"] {
            let pooled = &step.response[&row.percentile];
            assert_eq!(&row.pooled, pooled, "{}", row.percentile);
        }
        let p99 = &step.response["p99"];
        assert!(p99.ci95_ns.is_some() && p99.runs == 4, "{p99:?}");
    }
}
