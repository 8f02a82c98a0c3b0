//! The host's part in a test: how long the generator's threads and the server's waited
//! for a CPU, what the hypervisor stole, how late an idle thread woke, over the test and
//! per batch, and which of the test's slow replies fell where the host made things wait.
//!
//! Figures that could not be measured are absent, with the reason in words (`missing`,
//! `server_unknown`), never zero.

use serde::{Deserialize, Serialize};

/// The host's figures of one test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostReport {
    /// The generator's threads together; absent without procfs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<TaskWaits>,
    /// The server's threads together, where its process runs here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<TaskWaits>,
    /// Why the server's figures are absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_unknown: Option<String>,
    /// CPU time the hypervisor stole from this machine's CPUs during the test, ms (all
    /// CPUs together; the kernel counts it in 10 ms ticks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_ms: Option<f64>,
    /// Time at least one runnable task of this machine waited for a CPU, ms
    /// (`/proc/pressure/cpu`, `some`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_ms: Option<f64>,
    /// How late an idle thread woke from a fixed sleep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hiccups: Option<Hiccups>,
    /// The same figures per batch of the measured window.
    pub batches: HostBatches,
    /// Which slow replies fell in batches where the host made a thread wait (the
    /// bottleneck's judge fills it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<TailInWaits>,
    /// What could not be measured, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// CPU the meter's own thread used over the test, ms: what measuring the host cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter_cpu_ms: Option<f64>,
}

/// Threads' waits for a CPU over the test.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskWaits {
    /// Time runnable but not running, ms (behind another task, or while an idle CPU woke).
    pub run_queue_wait_ms: f64,
    /// `run_queue_wait_ms` over the measured window (threads added, so it can pass 1).
    pub run_queue_wait_share: f64,
    /// Time on a CPU, ms.
    pub cpu_ms: f64,
    /// Times a thread was taken off a CPU it still wanted.
    pub involuntary_switches: u64,
    /// The mean wait before each time on a CPU, µs: a few µs when a CPU is free, a
    /// scheduler slice (ms) when another task holds it.
    pub wait_per_run_us: f64,
    /// The longest wait summed in one batch, ms.
    pub most_in_a_batch_ms: f64,
}

/// An idle thread's lateness: it sleeps `period_ms` at a time and records how late it
/// woke (what any thread of this machine waits before it runs, jHiccup's measure).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Hiccups {
    /// Its sleep, ms.
    pub period_ms: f64,
    /// Wake-ups recorded.
    pub count: u64,
    /// Lateness percentiles, µs.
    pub p50_us: f64,
    /// 99th.
    pub p99_us: f64,
    /// 99.9th.
    pub p99_9_us: f64,
    /// The latest.
    pub max_us: f64,
    /// Wake-ups later than 1 ms: a thread waited a scheduler's slice for its CPU.
    #[serde(default)]
    pub over_1ms: u64,
}

/// The host's figures per batch of the measured window, in order, µs each (the
/// batch's length is the latency's batch, `batch_ms`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostBatches {
    /// Length of a batch, ms.
    pub batch_ms: f64,
    /// The generator's threads' run-queue wait in each batch, µs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generator_wait_us: Vec<u64>,
    /// The generator's threads' times on a CPU in each batch (the waits end in them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generator_runs: Vec<u64>,
    /// The server's threads' run-queue wait in each batch, µs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_wait_us: Vec<u64>,
    /// The server's threads' times on a CPU in each batch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_runs: Vec<u64>,
    /// The server's threads' time on a CPU in each batch, µs: with its runs, whether it
    /// worked through a stretch of slow replies, or was off its CPU.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_cpu_us: Vec<u64>,
    /// CPU time stolen in each batch, µs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steal_us: Vec<u64>,
    /// The hiccup meter's latest wake-up in each batch, µs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hiccup_max_us: Vec<u64>,
}

/// The slow replies of a test against the batches in which the host made a thread wait:
/// the host's part of the tail's attribution (`judge::tail`), by batch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TailInWaits {
    /// What counts as slow: the bound of the tail's attribution (an objective's, or the
    /// response time's 99th percentile), ns.
    pub over_ns: u64,
    /// Replies slower than that.
    pub slow_replies: u64,
    /// Of them, those in batches with a wait of the host's.
    pub in_waiting_batches: u64,
    /// Batches with such a wait, and all batches.
    pub waiting_batches: u64,
    /// All batches.
    pub batches: u64,
    /// The parts that waited in those batches: `server`, `generator`, `steal`.
    pub parts: Vec<String>,
    /// The batches with such a wait, by index from the window's start.
    #[serde(default)]
    pub waiting: Vec<u32>,
    /// The response p99 of the batches without such a wait, ns: what the tail would have
    /// been without the host's waits; null when every batch had one.
    #[serde(default)]
    pub p99_without_waits_ns: Option<u64>,
}

impl TailInWaits {
    /// The share of slow replies in batches with a host wait.
    pub fn share(&self) -> f64 {
        if self.slow_replies == 0 {
            0.0
        } else {
            self.in_waiting_batches as f64 / self.slow_replies as f64
        }
    }

    /// The share of batches with a host wait.
    pub fn batch_share(&self) -> f64 {
        if self.batches == 0 {
            0.0
        } else {
            self.waiting_batches as f64 / self.batches as f64
        }
    }
}
