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

    /// `as a speed of the recorded traffic: 2.3x, band 2.1x..2.5x`.
    pub fn text(&self) -> String {
        let x = |v: f64| format!("{v:.2}x");
        let band = match self.band {
            (low, Some(high)) => format!("band {}..{}", x(low), x(high)),
            (low, None) => format!("band {}.. (open above)", x(low)),
        };
        match self.speed {
            Some(speed) => format!("as a speed of the recorded traffic: {}, {band}", x(speed)),
            None => format!("as a speed of the recorded traffic: none passed, {band}"),
        }
    }
}
