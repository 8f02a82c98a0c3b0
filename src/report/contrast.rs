//! One test three ways at one rate (`--contrast`): the open loop, the rate-capped closed
//! loop that memtier's `--rate-limiting` and valkey-benchmark's `--rps` stand for, and the
//! plain closed loop redis-benchmark runs, on the same connections, side by side.
//!
//! The open loop times each request from when it was due; the two closed loops from when
//! they sent it, so a stall shows in the open loop's tail and hides in theirs (a closed
//! loop waits through the stall instead of timing it). The table puts that difference
//! in numbers.

use serde::{Deserialize, Serialize};

use super::TestReport;
use crate::drive::CapPacing;

/// The three loops of one test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contrast {
    /// The test's name.
    pub test: String,
    /// The rate the open loop offered and the capped closed loop was held to.
    pub rate_per_sec: f64,
    /// Connections each loop used.
    pub connections: usize,
    /// Open loop, rate-capped closed loop, plain closed loop, in that order.
    pub loops: Vec<ContrastLoop>,
}

/// One loop's figures in a [`Contrast`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContrastLoop {
    /// `open`, `rate-capped` or `closed`.
    pub kind: String,
    /// What it stands for, in words.
    pub stands_for: String,
    /// Requests written per second.
    pub achieved_rate_per_sec: f64,
    /// Response-time percentiles in milliseconds: p50, p90, p99, p99.9, max.
    pub response_ms: [f64; 5],
    /// Its self-checks passed.
    pub valid: bool,
}

/// The percentiles of the table, with their column heads.
pub(crate) const HEADS: [&str; 5] = ["p50", "p90", "p99", "p99.9", "max"];

impl Contrast {
    /// The contrast of `open`, `capped` and `closed`, three reports of one test.
    pub fn of(
        test: &str,
        rate_per_sec: f64,
        connections: usize,
        pacing: CapPacing,
        [open, capped, closed]: [&TestReport; 3],
    ) -> Contrast {
        let row = |kind: &str, stands_for: &str, r: &TestReport| {
            let l = r.response();
            let ms = |f: fn(&super::Latency) -> u64| l.map_or(0.0, |l| f(l) as f64 / 1e6);
            ContrastLoop {
                kind: kind.into(),
                stands_for: stands_for.into(),
                achieved_rate_per_sec: r.achieved_rate_per_sec,
                response_ms: [
                    ms(|l| l.p50_ns),
                    ms(|l| l.p90_ns),
                    ms(|l| l.p99_ns),
                    ms(|l| l.p99_9_ns),
                    ms(|l| l.max_ns),
                ],
                valid: r.valid,
            }
        };
        Contrast {
            test: test.into(),
            rate_per_sec,
            connections,
            loops: vec![
                row(
                    "open",
                    "timed from when each request was due, whatever the server did: a stall's queue is in its tail, and at a rate the server keeps up with its median is near the service time",
                    open,
                ),
                row("rate-capped", capped_stands_for(pacing), capped),
                row(
                    "closed",
                    "redis-benchmark: as fast as replies come, timed from each send; each connection always has a request at the server, so its latency is about connections / throughput, and a stall holds sends back instead of being timed",
                    closed,
                ),
            ],
        }
    }
}

/// What the rate-capped row stands for, by how it held its rate.
fn capped_stands_for(pacing: CapPacing) -> &'static str {
    match pacing {
        CapPacing::Connection => {
            "memtier --rate-limiting: each connection sends its share of the rate in bursts at ticks every connection shares, timed from each send; each tick's bursts queue at the server together, so at one rate its median grows with the connections"
        }
        CapPacing::Shared => {
            "one limiter for every connection (--cap-pacing shared), sends spread evenly, timed from each send: a stall holds sends back instead of being timed"
        }
    }
}
