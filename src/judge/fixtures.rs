//! Test fixtures shared by the SLO, capacity and search tests: objectives, runs with a
//! chosen p99 and interval, and judged points.

#![allow(clippy::unwrap_used)]

use crate::config::slo::Slo;
use crate::judge::capacity::Point;
use crate::judge::slo::judge;
use crate::record::Metric;
use crate::report::Latency;
use crate::report::sweep::{Kind, Measurement, Verdict};
use crate::stats::confidence::Ci95;

/// A millisecond in nanoseconds.
pub(crate) const MS: u64 = 1_000_000;

pub(crate) fn slo_p99_1ms() -> Slo {
    crate::config::slo::parse_slo("p99<=1ms").unwrap()
}

/// A run at `rate` whose response p99 is `p99_ns` with interval `ci`, achieving the
/// fraction `achieved` of its schedule.
pub(crate) fn run(rate: f64, p99_ns: u64, ci: Option<Ci95>, achieved: f64) -> Measurement {
    let report = crate::report::fixtures::test_report(rate, p99_ns, ci, achieved);
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
        .insert(Metric::Response, Latency::without_intervals(&total));
    m.report.response_windows = Some(ResponseWindows {
        window_secs: 0.5,
        windows,
    });
    m
}
