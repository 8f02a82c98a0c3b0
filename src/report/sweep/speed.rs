//! A sweep over a trace's speeds (`sweep --replay`): its capacity said as a multiple of
//! the recorded traffic as well as in requests per second.

use serde::{Deserialize, Serialize};

/// A capacity in multiples of a trace's recorded pace (`sweep --replay`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpeedCapacity {
    /// The recorded mean rate: speed 1.
    pub recorded_rate_per_sec: f64,
    /// The capacity over it; none when no speed passed.
    pub speed: Option<f64>,
    /// The band over it (open above when no faster speed failed).
    pub band: (f64, Option<f64>),
}

impl SpeedCapacity {
    /// `capacity` and `band` in req/s, over `recorded_rate_per_sec`.
    pub fn of(recorded_rate_per_sec: f64, capacity: Option<f64>, band: (f64, Option<f64>)) -> Self {
        let over = |r: f64| r / recorded_rate_per_sec;
        SpeedCapacity {
            recorded_rate_per_sec,
            speed: capacity.map(over),
            band: (over(band.0), band.1.map(over)),
        }
    }
}
