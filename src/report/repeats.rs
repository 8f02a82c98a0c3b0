//! `--repeat N`: a test run N times, summarised per metric and percentile as the median
//! of the repeats with two intervals, from the repeats' spread and from within one run,
//! and the wider of the two quoted.
//!
//! On a shared host the spread between repeats (the host's weather: a neighbour, a
//! migration, the page cache) is usually much larger than the interval within one run,
//! which only sees the noise inside its own seconds. The interval across repeats is the
//! distribution-free one for a median: the order statistics of the N values at the ranks
//! whose coverage reaches 95%; with fewer than 6 repeats no two ranks reach it, and the
//! range (smallest to largest) is given, with the confidence it does have. The statistic
//! is `stats::median`'s, the one a sweep's steps use too.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Percentile, TestReport};
use crate::stats::confidence::Ci95;
use crate::stats::median::{combine, median_ranks};

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
    /// Within one run: the median of the repeats' own interval ends (an open end above
    /// every bounded one).
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
        let (_, _, confidence) = median_ranks(runs.len());
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
                .filter_map(|&p| {
                    let values: Vec<(u64, Option<Ci95>)> =
                        per_run.iter().map(|l| (l.at(p), l.ci95(p))).collect();
                    let s = combine(&values)?;
                    let across = s.repeats_ci95_ns?;
                    Some(RepeatedPercentile {
                        percentile: p.key().to_string(),
                        median_ns: s.median_ns,
                        values_ns: values.iter().map(|v| v.0).collect(),
                        across_ci95_ns: across,
                        within_ci95_ns: s.within_ci95_ns,
                        ci95_ns: s.ci95_ns.unwrap_or(across),
                    })
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
