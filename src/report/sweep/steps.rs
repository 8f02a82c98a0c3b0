//! A sweep's steps by rate: every open-loop run at one target rate (a coarse step, a
//! search visit, a re-measurement, and each of their `--repeat` runs) summarised as one
//! step: each percentile of the runs' replies pooled, with the interval of the pooled
//! test ([`crate::stats::pooled`]), and the step's verdict against the objectives. The
//! models only: the summaries are computed in `judge::summary`, the verdicts in
//! `judge::slo`. Why a verdict is what it is, and why a run was left out, are kept as
//! what was decided and its figures; the words are export's (`export::reasons`): it says
//! them in every text and writes them into the JSON in place of these values, so a report
//! read back carries only the words ([`StepWhy::Text`], [`LeftOutWhy::Text`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use super::Verdict;
use crate::report::Bottleneck;
use crate::stats::confidence::Ci95;
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
    /// Why: what decided the verdict, with its figures (said by `export::reasons`).
    pub why: StepWhy,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    /// Why (said by `export::reasons`: `short of the schedule by over 1%`, `failed
    /// accounting`).
    pub why: LeftOutWhy,
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
    /// Runs whose response time grew through the window with the server's backlog (their
    /// `steady_state` check said so, `judge::checks::server_backlog_grew`): the server past
    /// its capacity.
    #[serde(default)]
    pub backlog_runs: usize,
    /// The verdict against the objectives, with `--slo`.
    pub slo: Option<StepVerdict>,
}

/// Why a step's verdict is what it is.
#[derive(Debug, Clone, PartialEq)]
pub enum StepWhy {
    /// Every run fell under the saturation fraction of its schedule, left requests unsent
    /// or got no reply, while what was measured did not fail.
    NoRunCarried {
        /// Runs that did not keep their schedule.
        short: usize,
        /// Runs at the step.
        runs: usize,
        /// The fraction of the schedule under which a run did not carry its rate.
        saturation: f64,
    },
    /// Most runs fell behind their schedule or failed a self-check: the generator, not
    /// the server, limited the step.
    GeneratorLimited {
        /// Runs behind (at most `runs`).
        behind: usize,
        /// Runs at the step.
        runs: usize,
    },
    /// No run counted: every one was left out.
    NoRunCounted {
        /// Runs left out.
        invalid: usize,
        /// Runs at the step.
        runs: usize,
    },
    /// Each objective decided on its pooled share over the bound, in the objectives' order.
    Objectives(Vec<ObjectiveWhy>),
    /// The words alone, as a report read back from JSON holds them.
    Text(String),
}

/// One objective's decision at a step: the share over the bound against the share it
/// allows, and the pooled percentile.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectiveWhy {
    /// The percentile as named: `p99`.
    pub percentile: String,
    /// The objective's bound, nanoseconds.
    pub bound_ns: u64,
    /// The pooled percentile, nanoseconds.
    pub value_ns: u64,
    /// Its interval.
    pub ci95_ns: Option<Ci95>,
    /// Runs pooled.
    pub runs: usize,
    /// The share over the bound and its decision's bounds; none without response windows.
    pub exceedance: Option<Exceedance>,
    /// The objective's verdict.
    pub verdict: Verdict,
    /// What an uncertain verdict still wants.
    pub wanting: Option<Wanting>,
}

/// What an uncertain objective still wants before it can be decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanting {
    /// Fewer runs than the first look that may decide.
    DecisionRuns {
        /// Runs pooled.
        have: usize,
        /// Runs the first look needs.
        need: usize,
    },
    /// Under the bound, but fewer runs than the first look that may pass.
    PassRuns {
        /// Runs pooled.
        have: usize,
        /// Runs the first passing look needs.
        need: usize,
    },
    /// No reply over the bound, yet too few replies to pass.
    Replies {
        /// Replies a pass needs with none over the bound.
        need: u64,
    },
}

/// Why a run at a step was left out of its figures and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum LeftOutWhy {
    /// Measured before the confirmation's fresh runs at the rate.
    BeforeConfirmation,
    /// Under the saturation fraction of the schedule, requests unsent or no reply.
    NotCarried,
    /// Short of the schedule by more than the send tolerance.
    Short {
        /// The send tolerance, a fraction.
        tolerance: f64,
    },
    /// Failed a self-check the server's numbers need.
    Failed {
        /// The check's name.
        check: String,
    },
    /// The words alone, as a report read back from JSON holds them.
    Text(String),
}

impl<'de> Deserialize<'de> for StepWhy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(StepWhy::Text)
    }
}

impl<'de> Deserialize<'de> for LeftOutWhy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(LeftOutWhy::Text)
    }
}
