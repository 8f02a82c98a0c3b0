//! The verdict types every report carries: a self-check's result and the bottleneck.
//!
//! They are data only; the rules that reach them are `judge/`'s.

use serde::{Deserialize, Serialize};

/// The name of the check that fails a run whose generator fell behind its schedule, or
/// caught up, through the run (`judge::checks::steady`).
pub const STEADY_STATE: &str = "steady_state";
/// One self-check's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// snake_case name.
    pub name: String,
    /// Pass, fail, or not applicable.
    pub verdict: Verdict,
    /// The measured value and the bound, in words.
    pub detail: String,
    /// What a failure means for the numbers.
    pub meaning: String,
    /// The measured value and the bound as numbers (`value`, `bound`, `unit` in the
    /// JSON), where the check has one figure to hold against one bound.
    #[serde(default, flatten)]
    pub measure: Option<Measure>,
}

/// A check's figure and the bound it was held against, in `unit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// The measured figure.
    pub value: f64,
    /// The bound it was held against (its direction is the check's, in `detail`).
    pub bound: f64,
    /// `fraction`, `percent`, `z`, `count`, `ratio`.
    pub unit: String,
}

impl Measure {
    /// `value` against `bound`, in `unit`.
    pub fn of(value: f64, bound: f64, unit: &str) -> Option<Self> {
        Some(Measure {
            value,
            bound,
            unit: unit.to_string(),
        })
    }
}

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The check holds.
    Pass,
    /// The check failed: the run's numbers are suspect as said in `meaning`.
    Fail,
    /// Not applicable to this run.
    Skipped,
}

/// What held a test back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bottleneck {
    /// The server could not be reached for part of the test: what the client waited on
    /// then was the reconnect, not any queue.
    Outage,
    /// A generator thread ran out of CPU, or its lateness moved the percentiles.
    Generator,
    /// The server: its CPU near one core, or its execution time most of the service time.
    Server,
    /// The machine: the tail came while the server or the generator waited for a CPU
    /// (another task held it, or the hypervisor stole it), the server executing fast.
    Host,
    /// Requests waited for a free connection: `-c` or `--max-inflight` too low for the rate.
    ClientQueue,
    /// Neither end was busy, yet the requests took long, or a closed loop could go no
    /// faster: the time went between them (round trips, the kernel, a proxy).
    #[serde(rename = "network/kernel")]
    NetworkKernel,
    /// The server kept up with the offered rate, with room.
    None,
}

impl Bottleneck {
    /// Every bottleneck, in the order the verdict considers them.
    pub const ALL: [Bottleneck; 7] = [
        Bottleneck::Outage,
        Bottleneck::Server,
        Bottleneck::Generator,
        Bottleneck::Host,
        Bottleneck::ClientQueue,
        Bottleneck::NetworkKernel,
        Bottleneck::None,
    ];

    /// The bottleneck whose [`name`](Self::name) is `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The JSON and text name.
    pub fn name(self) -> &'static str {
        match self {
            Bottleneck::Outage => "outage",
            Bottleneck::Generator => "generator",
            Bottleneck::Server => "server",
            Bottleneck::Host => "host",
            Bottleneck::ClientQueue => "client-queue",
            Bottleneck::NetworkKernel => "network/kernel",
            Bottleneck::None => "none",
        }
    }
}

/// The verdict and the fact it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// What held the test back.
    pub verdict: Bottleneck,
    /// The measurement that says so, in words.
    pub because: String,
    /// The server's busiest share of the test, by its own clock: the larger of its CPU
    /// and its time executing commands over the test's span, where it reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_busy: Option<f64>,
}
