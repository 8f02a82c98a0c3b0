//! CSV on stdout: redis-benchmark's header and rows for closed loop; in open loop the
//! same first eight columns (from the response time) followed by tailrate's own, the
//! server's view, the bottleneck, and last the response percentiles' 95% intervals (two
//! columns each; the high end empty when unbounded).

use std::io::{self, Write};

use super::{Exporter, ms};
use crate::record::Metric;
use crate::report::{Latency, Percentile, RunReport, TestReport};

/// The percentiles whose intervals end an open-loop row, in column order.
const INTERVAL_COLUMNS: [Percentile; 5] = [
    Percentile::P50,
    Percentile::P90,
    Percentile::P99,
    Percentile::P99_9,
    Percentile::P99_99,
];

/// Prints the header before the first row, then a row per test; both come from one list
/// of columns, [`columns`], so they cannot fall out of step.
#[derive(Default)]
pub struct Csv {
    header_written: bool,
}

impl Exporter for Csv {
    fn test_done(
        &mut self,
        out: &mut dyn Write,
        _report: &RunReport,
        test: &TestReport,
    ) -> io::Result<()> {
        let columns = columns(test);
        if !self.header_written {
            self.header_written = true;
            writeln!(out, "{}", row(columns.iter().map(|c| c.0.as_str())))?;
        }
        writeln!(out, "{}", row(columns.iter().map(|c| c.1.as_str())))
    }
}

/// Fields quoted and joined as redis-benchmark writes them.
fn row<'a>(fields: impl Iterator<Item = &'a str>) -> String {
    fields
        .map(|f| format!("\"{}\"", f.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(",")
}

/// A test's columns, name and value: redis-benchmark's eight, and in open loop tailrate's
/// own after them.
pub fn columns(test: &TestReport) -> Vec<(String, String)> {
    let zero = Latency::without_intervals(&crate::record::new_histogram());
    let r = test.response().unwrap_or(&zero);
    let m = |ns: f64| ms(ns, 3);
    let mut c: Vec<(String, String)> = Vec::new();
    let mut col = |name: &str, value: String| c.push((name.to_string(), value));
    col("test", test.name.clone());
    col("rps", format!("{:.2}", test.throughput_per_sec));
    col("avg_latency_ms", m(r.mean_ns));
    col("min_latency_ms", m(r.min_ns as f64));
    col("p50_latency_ms", m(r.p50_ns as f64));
    col("p95_latency_ms", m(r.p95_ns as f64));
    col("p99_latency_ms", m(r.p99_ns as f64));
    col("max_latency_ms", m(r.max_ns as f64));
    let Some(target) = test.target_rate_per_sec else {
        return c;
    };
    let s = test.latency.get(&Metric::Service).unwrap_or(&zero);
    let lag = test.latency.get(&Metric::Lag).unwrap_or(&zero);
    let wait = test.latency.get(&Metric::QueueWait).unwrap_or(&zero);
    let n = &test.counts;
    col("target_rps", format!("{target:.2}"));
    col("p90_latency_ms", m(r.p90_ns as f64));
    col("p99_9_latency_ms", m(r.p99_9_ns as f64));
    col("p99_99_latency_ms", m(r.p99_99_ns as f64));
    col("service_p50_ms", m(s.p50_ns as f64));
    col("service_p99_ms", m(s.p99_ns as f64));
    col("service_p99_9_ms", m(s.p99_9_ns as f64));
    col("lag_p99_ms", m(lag.p99_ns as f64));
    col("queue_wait_p99_ms", m(wait.p99_ns as f64));
    for (name, count) in [
        ("intended", n.intended),
        ("sent", n.sent),
        ("completed", n.completed),
        ("errors", n.errors),
        ("timeouts", n.timeouts),
        ("not_sent", n.not_sent),
        ("in_flight_at_end", n.in_flight_at_end),
    ] {
        col(name, count.to_string());
    }
    col("valid", test.valid.to_string());
    // The server's view, summed over the test's commands; empty where it gave none.
    let server = test.server.as_ref();
    let calls: Option<u64> = server.map(|s| s.commands.iter().map(|c| c.calls).sum());
    let exec_usec: f64 = server.map_or(0.0, |s| s.exec_usec_total());
    let mean = calls
        .filter(|&n| n > 0)
        .map(|n| format!("{:.3}", exec_usec / n as f64));
    col(
        "server_calls",
        calls.map(|n| n.to_string()).unwrap_or_default(),
    );
    col("server_exec_mean_us", mean.unwrap_or_default());
    col(
        "server_cpu_share",
        server
            .and_then(|s| s.cpu_utilisation)
            .map(|u| format!("{u:.3}"))
            .unwrap_or_default(),
    );
    col(
        "bottleneck",
        test.bottleneck
            .as_ref()
            .map_or("", |b| b.verdict.name())
            .to_string(),
    );
    for p in INTERVAL_COLUMNS {
        let ci = r.at(p).ci95;
        let key = p.key();
        col(
            &format!("{key}_ci95_low_ms"),
            ci.map(|c| m(c.low() as f64)).unwrap_or_default(),
        );
        col(
            &format!("{key}_ci95_high_ms"),
            ci.and_then(|c| c.high())
                .map(|h| m(h as f64))
                .unwrap_or_default(),
        );
    }
    c
}
