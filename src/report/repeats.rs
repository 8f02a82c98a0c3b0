//! `--repeat N`: a test run N times, summarised per metric and percentile by pooling the
//! repeats: the percentile of every repeat's replies together, each repeat's own value
//! beside it, and for response time the interval of the pooled test
//! ([`crate::stats::pooled`]), which counts the repeats as clusters, so the host's
//! weather between them (a neighbour, a migration, the page cache) widens it. The
//! statistic is the one a sweep's steps use, so the same runs give the same figures;
//! the summary is computed in `judge::summary`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::sweep::steps::StepVerdict;
use crate::stats::pooled::PooledPercentile;

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
