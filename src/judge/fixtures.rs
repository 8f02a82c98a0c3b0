//! Test fixtures shared by the SLO, capacity and search tests: objectives, runs with a
//! chosen p99 and interval, and judged points.

#![allow(clippy::unwrap_used)]

use crate::config::slo::Slo;
use crate::judge::capacity::Point;
use crate::judge::slo::judge;
use crate::report::sweep::{Kind, Measurement, Verdict};
use crate::report::{Counts, Latency, TestReport};
use crate::stats::confidence::Ci95;

/// A millisecond in nanoseconds.
pub(crate) const MS: u64 = 1_000_000;

pub(crate) fn slo_p99_1ms() -> Slo {
    crate::config::slo::parse_slo("p99<=1ms").unwrap()
}

/// A run at `rate` whose response p99 is `p99_ns` with interval `ci`, achieving the
/// fraction `achieved` of its schedule.
pub(crate) fn run(rate: f64, p99_ns: u64, ci: Option<Ci95>, achieved: f64) -> Measurement {
    let mut h = crate::record::new_histogram();
    h.record(p99_ns).unwrap();
    let mut latency = Latency::without_intervals(&h);
    latency.p99_ns = p99_ns;
    latency.p99_ci95_ns = ci;
    let report = TestReport {
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
        latency: [("response".to_string(), latency)].into_iter().collect(),
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
    };
    let slo = Some(judge(&report, &[slo_p99_1ms()]));
    Measurement {
        kind: Kind::Step,
        target_rate_per_sec: Some(rate),
        connections: 1,
        repeat: 0,
        started_secs: 0.0,
        hlog: String::new(),
        slo,
        seed: None,
        report,
    }
}

pub(crate) fn ci(low_ms: f64, high_ms: Option<f64>) -> Option<Ci95> {
    let ns = |ms: f64| (ms * MS as f64) as u64;
    Some(Ci95(ns(low_ms), high_ms.map(ns)))
}

pub(crate) fn point(rate: f64, verdict: Verdict) -> Point {
    Point {
        rate,
        verdict,
        bottleneck: None,
        generator_limited: false,
        exceedance: None,
        nearest: None,
    }
}

/// A run at `rate` whose response windows hold `replies` replies each, of which the
/// window's entry in `over` took 2 ms and the rest 0.2 ms.
pub(crate) fn windowed_run(rate: f64, replies: u64, over: &[u64]) -> Measurement {
    use crate::report::ResponseWindows;
    use crate::stats::confidence::Batch;
    let mut total = crate::record::new_histogram();
    let windows: Vec<Batch> = over
        .iter()
        .map(|&k| {
            let mut h = crate::record::new_histogram();
            h.record_n(200_000, replies - k).unwrap();
            h.record_n(2 * MS, k).unwrap();
            total.add(&h).unwrap();
            Batch::of(&h)
        })
        .collect();
    let mut m = run(rate, total.value_at_quantile(0.99), None, 1.0);
    m.report
        .latency
        .insert("response".into(), Latency::without_intervals(&total));
    m.report.response_windows = Some(ResponseWindows {
        window_secs: 0.5,
        windows,
    });
    m
}
