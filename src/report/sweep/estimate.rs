//! The capacity of each objective as an estimate with its interval, as `sweep.json`
//! keeps it: where the share of replies over the bound, fitted over every counted run of
//! every rate, crosses what the objective allows (the fit is `stats::capacity`'s, which
//! runs count is `judge::estimate`'s).

use serde::{Deserialize, Serialize};

/// Where a fitted tail meets an objective's limit, or which measured rate it lies
/// beyond. Written as `{"at": 67000}`, `{"below": 13000}` or `{"above": 250000}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateBound {
    /// Under the lowest rate fitted (this one): every rate measured there was over.
    Below(f64),
    /// At this rate, requests per second, between two measured rates.
    At(f64),
    /// Above the highest rate fitted (this one): every rate measured was under.
    Above(f64),
}

impl RateBound {
    /// A number that orders bounds: the rate, or minus or plus infinity for an open one.
    pub fn key(self) -> f64 {
        match self {
            RateBound::Below(_) => f64::NEG_INFINITY,
            RateBound::At(rate) => rate,
            RateBound::Above(_) => f64::INFINITY,
        }
    }

    /// The rate it names: the crossing, or the measured rate it lies beyond.
    pub fn rate(self) -> f64 {
        match self {
            RateBound::Below(r) | RateBound::At(r) | RateBound::Above(r) => r,
        }
    }
}

/// One objective's capacity, estimated from the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectiveEstimate {
    /// The objective as typed.
    pub slo: String,
    /// The objective with the lowest estimate: the one that sets the capacity.
    pub binding: bool,
    /// Where the fit of the runs the host left alone crosses the limit.
    pub crossing: RateBound,
    /// Its 90% interval from a bootstrap over runs, `(low, high)`.
    pub interval: (RateBound, RateBound),
    /// Rates fitted.
    pub rates: usize,
    /// Runs counted.
    pub runs: usize,
    /// The crossing with the runs the host disturbed counted too, when some were left
    /// out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_disturbed: Option<RateBound>,
    /// Whether the host disturbed every run that could be fitted, so that the estimate
    /// is theirs: the host's weather more than the server's capacity.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_disturbed: bool,
}

/// The runs left out of the estimate because the host, not the server, carried their
/// tail.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Disturbed {
    /// Open-loop runs the host disturbed.
    pub runs: usize,
    /// Open-loop runs with replies, disturbed or not.
    pub of: usize,
    /// The longest wait for a CPU among them, as a share of the run (the server's or
    /// the generator's threads, whichever waited longer).
    pub most_wait_share: f64,
    /// The most time the hypervisor took from the CPUs in one of them, as a share of the
    /// run (summed over the CPUs, as `/proc/stat` counts steal); 0 where none was counted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub most_steal_share: f64,
}

fn is_zero(share: &f64) -> bool {
    *share == 0.0
}
