//! The replies over a bound (an objective's, or the reported p99) attributed to what made
//! them slow: the server's stalls, its execution and queueing, the host, the generator,
//! the client's own queue, the network and kernel. The model only; the attribution, and
//! whether the tail sits at the floor, are `judge::tail`'s, and the bottleneck verdict
//! reads them.

use serde::{Deserialize, Serialize};

/// What made the replies over a bound slow, with how many each cause carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TailCauses {
    /// The bound, ns.
    pub over_ns: u64,
    /// What the bound is: an objective as typed (`p99<=1ms`), or `p99` (the reported
    /// percentile, without an objective).
    pub bound: String,
    /// Replies over the bound (requests never answered included, at their age).
    pub replies: u64,
    /// The tail's level against the floor: the response time at the bound's percentile
    /// (the objective's, or p99), ns.
    pub level_ns: u64,
    /// The floor: what a reply takes when nothing slows it, the service time's p10 or
    /// its quietest 50 ms batch's median, whichever is lower (load raises the median
    /// itself), ns.
    pub floor_ns: u64,
    /// Each cause that carries replies, the most first.
    pub causes: Vec<TailCause>,
    /// The server's stalls among them, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stalls: Vec<Stall>,
    /// The parts of the host whose waits carried replies, with how many: `server` (it
    /// waited for a CPU), `generator` (its threads did), `steal`, `machine` (every thread
    /// stalled, an idle one too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_parts: Vec<(String, u64)>,
    /// Whether each reply was placed in time (the run's 50 ms batches and the host's
    /// figures in them); false when only the run's whole histograms were there (a merged
    /// report, one written before batches were kept).
    pub localised: bool,
}

impl TailCauses {
    /// The share of the replies over the bound that `cause` carries (0 without any).
    pub fn share(&self, cause: Cause) -> f64 {
        self.causes
            .iter()
            .find(|c| c.cause == cause)
            .map_or(0.0, |c| c.share)
    }
}

/// One cause and the replies over the bound it carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TailCause {
    /// What made them slow.
    pub cause: Cause,
    /// How many.
    pub replies: u64,
    /// Of the replies over the bound.
    pub share: f64,
}

/// What made a reply over the bound slow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// The server held requests for a long stretch (tens of ms) without waiting for a
    /// CPU: it was off its CPU and not runnable (frozen, stopped, sleeping in a command,
    /// blocked), or ran and answered nothing (paused clients).
    ServerStall,
    /// The service time, the server's execution and queueing.
    Server,
    /// The server or the generator waited for a CPU, the hypervisor stole it, or the
    /// whole machine stalled.
    Host,
    /// The generator's own lateness (schedule lag).
    Generator,
    /// Waiting for a free connection while the server answered fast: `-c` or
    /// `--max-inflight` too low for the rate.
    ClientQueue,
    /// The service time while the server executed fast with a core to spare: the round
    /// trip, the kernel, a proxy.
    #[serde(rename = "network/kernel")]
    NetworkKernel,
    /// No single part (lag, queue wait, service) alone was over the bound: they added up.
    Unattributed,
}

impl Cause {
    /// As JSON writes it.
    pub fn name(self) -> &'static str {
        match self {
            Cause::ServerStall => "server-stall",
            Cause::Server => "server",
            Cause::Host => "host",
            Cause::Generator => "generator",
            Cause::ClientQueue => "client-queue",
            Cause::NetworkKernel => "network/kernel",
            Cause::Unattributed => "unattributed",
        }
    }
}

/// A stretch in which the server held requests without waiting for a CPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stall {
    /// When it began, seconds from the measured window's start (to a batch, 50 ms).
    pub start_secs: f64,
    /// How long, ms: the longest a reply caught in it waited.
    pub length_ms: f64,
    /// Replies over the bound it carries.
    pub replies: u64,
    /// Whether the server was off its CPU and not runnable through it (it ran under a
    /// tenth of its usual times in a batch): `Some(false)` when it ran and answered
    /// nothing; `None` where its scheduling was not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_cpu: Option<bool>,
    /// The server's own record of it: `DEBUG 200.1 ms (slowlog)`, `fork 31.0 ms
    /// (latency monitor)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
}
