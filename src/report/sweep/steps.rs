//! A sweep's steps by rate: every open-loop run at one target rate (a coarse step, a
//! search visit, a re-measurement, and each of their `--repeat` runs) summarised as one
//! step: each percentile of the runs' replies pooled, with the interval of the pooled
//! test ([`crate::stats::pooled`]), and the step's verdict against the objectives. The
//! models only: the summaries are computed in `judge::summary`, the verdicts in
//! `judge::slo`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Verdict;
use crate::report::Bottleneck;
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

impl StepVerdict {
    /// The verdict against the objective typed as `slo`, as the step's row in the table
    /// and its mark on that objective's line both read it: the step's own where it
    /// overrode what the objectives' checks measured (no run carried the rate: fail; the
    /// generator limited the step: uncertain), else that objective's check.
    pub fn on(&self, slo: &str) -> Verdict {
        let measured = if self.checks.iter().any(|c| c.verdict == Verdict::Fail) {
            Verdict::Fail
        } else if self.checks.iter().all(|c| c.verdict == Verdict::Pass) {
            Verdict::Pass
        } else {
            Verdict::Uncertain
        };
        if self.checks.is_empty() || measured != self.verdict {
            return self.verdict;
        }
        self.checks
            .iter()
            .find(|c| c.slo == slo)
            .map_or(self.verdict, |c| c.verdict)
    }
}

/// Runs at one rate that neither its figures nor its verdict pool, for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    /// Why, in a few words: `short of the schedule by over 1%`, `failed accounting`.
    pub why: String,
    /// How many runs.
    pub runs: usize,
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
    /// Response time at each reported percentile, by key (`p99_9`), pooled over exactly
    /// the runs the verdict pools (`judge::counted`).
    pub response: BTreeMap<String, PooledPercentile>,
    /// Runs those figures and the verdict pool.
    #[serde(default)]
    pub pooled_runs: usize,
    /// The runs left out of them, counted by why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// The bottleneck most of the runs named (the earliest run's among a tie).
    pub bottleneck: Option<Bottleneck>,
    /// Runs that sent or got replies at under the saturation fraction of their schedule
    /// (`judge::saturation::fell_short`).
    #[serde(default)]
    pub short_runs: usize,
    /// Runs whose response time grew through the window (their `steady_state` check
    /// failed): a backlog, the server past its capacity.
    #[serde(default)]
    pub backlog_runs: usize,
    /// The verdict against the objectives, with `--slo`.
    pub slo: Option<StepVerdict>,
}
