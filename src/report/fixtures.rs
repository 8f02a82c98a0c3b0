//! A plain report for the tests of the report's own rules and of the judges above it.

#![allow(clippy::unwrap_used)]

use crate::record::Metric;
use crate::report::{Counts, Latency, TestReport};
use crate::stats::confidence::Ci95;

/// One GET test at `rate` (sent and answered at `achieved` times it) whose every reply
/// took `p99_ns`, its p99 interval `ci`.
pub(crate) fn test_report(rate: f64, p99_ns: u64, ci: Option<Ci95>, achieved: f64) -> TestReport {
    let mut h = crate::record::new_histogram();
    h.record(p99_ns).unwrap();
    let mut latency = Latency::without_intervals(&h);
    latency.p99_ns = p99_ns;
    latency.p99_ci95_ns = ci;
    TestReport {
        name: "GET".into(),
        target_rate_per_sec: Some(rate),
        achieved_rate_per_sec: rate * achieved,
        offered_rate_per_sec: Some(rate),
        throughput_per_sec: rate * achieved,
        sent_bytes: 0,
        received_bytes: 0,
        sent_bytes_per_sec: 0.0,
        received_bytes_per_sec: 0.0,
        measured_secs: 1.0,
        started_at_unix_secs: 0.0,
        counts: Counts {
            intended: rate as u64,
            sent: rate as u64,
            completed: rate as u64,
            ..Counts::default()
        },
        latency: [(Metric::Response, latency)].into_iter().collect(),
        commands: Vec::new(),
        checks: Vec::new(),
        valid: true,
        stopped_early: None,
        generator_cpu: Vec::new(),
        intervals: Vec::new(),
        nodes: Vec::new(),
        batches: None,
        reconnects: 0,
        outages: Vec::new(),
        outages_left_out: 0,
        layout_changes: Vec::new(),
        layout_changes_left_out: 0,
        layout_reads: 0,
        excluded_from_latency: 0,
        server: None,
        bottleneck: None,
        tail: None,
        slo: None,
        repeat: None,
        start_skew_ns: None,
        arrivals: None,
        response_windows: None,
        host: None,
    }
}
