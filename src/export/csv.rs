//! CSV on stdout: redis-benchmark's header and rows for closed loop; in open loop the
//! same first eight columns (from the response time) followed by tailrate's own, the
//! server's view, the bottleneck, and last the response percentiles' 95% intervals (two
//! columns each; the high end empty when unbounded).

use std::io::{self, Write};

use super::{Exporter, ms};
use crate::report::{Latency, Percentile, RunReport, TestReport};

/// redis-benchmark's CSV header, unchanged.
pub const HEADER: &str = r#""test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms""#;
/// Columns appended in open loop.
pub const OPEN_LOOP_COLUMNS: &str = r#","target_rps","p90_latency_ms","p99_9_latency_ms","p99_99_latency_ms","service_p50_ms","service_p99_ms","service_p99_9_ms","lag_p99_ms","queue_wait_p99_ms","intended","sent","completed","errors","timeouts","not_sent","in_flight_at_end","valid","server_calls","server_exec_mean_us","server_cpu_share","bottleneck","p50_ci95_low_ms","p50_ci95_high_ms","p90_ci95_low_ms","p90_ci95_high_ms","p99_ci95_low_ms","p99_ci95_high_ms","p99_9_ci95_low_ms","p99_9_ci95_high_ms","p99_99_ci95_low_ms","p99_99_ci95_high_ms""#;

/// The percentiles whose intervals end an open-loop row, in column order.
const INTERVAL_COLUMNS: [Percentile; 5] = [
    Percentile::P50,
    Percentile::P90,
    Percentile::P99,
    Percentile::P99_9,
    Percentile::P99_99,
];

/// Prints the header before the first row, then a row per test.
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
        let open = test.target_rate_per_sec.is_some();
        if !self.header_written {
            self.header_written = true;
            if open {
                writeln!(out, "{HEADER}{OPEN_LOOP_COLUMNS}")?;
            } else {
                writeln!(out, "{HEADER}")?;
            }
        }
        let zero = Latency::without_intervals(&crate::record::new_histogram());
        let r = test.response().unwrap_or(&zero);
        let m = |ns: f64| ms(ns, 3);
        write!(
            out,
            "\"{}\",\"{:.2}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\"",
            test.name.replace('"', "\"\""),
            test.throughput_per_sec,
            m(r.mean_ns),
            m(r.min_ns as f64),
            m(r.p50_ns as f64),
            m(r.p95_ns as f64),
            m(r.p99_ns as f64),
            m(r.max_ns as f64)
        )?;
        if open {
            let s = test.latency.get("service").unwrap_or(&zero);
            let lag = test.latency.get("lag").unwrap_or(&zero);
            let wait = test.latency.get("queue_wait").unwrap_or(&zero);
            let c = &test.counts;
            write!(
                out,
                ",\"{:.2}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\"",
                test.target_rate_per_sec.unwrap_or(0.0),
                m(r.p90_ns as f64),
                m(r.p99_9_ns as f64),
                m(r.p99_99_ns as f64),
                m(s.p50_ns as f64),
                m(s.p99_ns as f64),
                m(s.p99_9_ns as f64),
                m(lag.p99_ns as f64),
                m(wait.p99_ns as f64),
                c.intended,
                c.sent,
                c.completed,
                c.errors,
                c.timeouts,
                c.not_sent,
                c.in_flight_at_end,
                test.valid
            )?;
            // The server's view, summed over the test's commands; empty where it gave none.
            let server = test.server.as_ref();
            let calls: Option<u64> = server.map(|s| s.commands.iter().map(|c| c.calls).sum());
            let exec_usec: f64 = server.map_or(0.0, |s| {
                s.commands
                    .iter()
                    .filter_map(|c| Some(c.mean_exec_usec? * c.calls as f64))
                    .sum()
            });
            let mean = calls
                .filter(|&n| n > 0)
                .map(|n| format!("{:.3}", exec_usec / n as f64));
            write!(
                out,
                ",\"{}\",\"{}\",\"{}\",\"{}\"",
                calls.map(|n| n.to_string()).unwrap_or_default(),
                mean.unwrap_or_default(),
                server
                    .and_then(|s| s.cpu_utilisation)
                    .map(|u| format!("{u:.3}"))
                    .unwrap_or_default(),
                test.bottleneck.as_ref().map_or("", |b| b.verdict.name())
            )?;
            for p in INTERVAL_COLUMNS {
                let ci = r.ci95(p);
                write!(
                    out,
                    ",\"{}\",\"{}\"",
                    ci.map(|c| m(c.low() as f64)).unwrap_or_default(),
                    ci.and_then(|c| c.high())
                        .map(|h| m(h as f64))
                        .unwrap_or_default()
                )?;
            }
        }
        writeln!(out)
    }
}
