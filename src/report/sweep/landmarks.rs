//! A sweep's landmarks as `sweep.json` keeps them: the floor, the knee, saturation with
//! the server's open-loop maximum beside it, where the server's CPU came near a core, and
//! the generator's own limit (the rules that find them are `judge::landmarks`').

use serde::{Deserialize, Serialize};

use super::Exceedance;
use crate::report::Bottleneck;

/// Where the tail sits without load, where it starts to rise, and where the server
/// stops keeping the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Landmarks {
    /// The lowest rate measured, and there the first objective's pooled percentile and
    /// its share over the bound: the host's floor.
    pub floor: Option<Floor>,
    /// The lowest rate whose first objective's percentile lies above the floor's beyond
    /// both intervals.
    pub knee_per_sec: Option<f64>,
    /// The lowest rate most of whose runs sent or got replies at under the saturation
    /// fraction of the schedule, or built a backlog (`judge::saturation`).
    pub saturation_per_sec: Option<f64>,
    /// The most replies per second the server gave the open loop (the plateau), where
    /// it was measured (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop_max: Option<OpenLoopMax>,
    /// The most replies per second a closed loop of the sweep got, for comparison: an open
    /// loop pipelines on its connections and can carry more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_loop_max_per_sec: Option<f64>,
    /// The lowest offered rate at which the server's CPU, the median over its runs,
    /// came near a core (`judge::landmarks::NEAR_A_CORE`): where queueing in a
    /// single-threaded server takes over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_near_core_per_sec: Option<f64>,
    /// The lowest rate whose step the generator limited (most runs fell behind their
    /// schedule): the generator's own limit, not the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_limit_per_sec: Option<f64>,
}

/// The server's open-loop maximum: the highest median of replies per second over the
/// offered rates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopMax {
    /// Replies per second there.
    pub replies_per_sec: f64,
    /// The offered rate that got them.
    pub at_offered_per_sec: f64,
    /// A higher offered rate got no more, or this one fell short of its schedule: the
    /// server's maximum, not only the highest rate's.
    pub reached: bool,
}

/// The floor: the tail at the lowest rate measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Floor {
    /// The rate, requests per second.
    pub rate_per_sec: f64,
    /// The first objective's percentile there, pooled.
    pub value_ns: u64,
    /// Its share over the bound there.
    pub exceedance: Option<Exceedance>,
    /// The percentile's 95% interval from a bootstrap over the runs at the lowest rates,
    /// `(low, high)` ns (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ns: Option<(u64, u64)>,
    /// What held the tail there, by most of its runs' bottleneck verdicts (`host` when
    /// the machine's waits made it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Bottleneck>,
}
