//! redis-benchmark's blocks of the full report, byte for byte in layout: the settings
//! under the test's name, the two latency distributions and the summary.

use std::io::{self, Write};

use hdrhistogram::Histogram;

use crate::export::ms;
use crate::report::{Latency, RunReport, TestReport};

/// The test's name, as redis-benchmark heads its report.
pub(super) fn title(out: &mut dyn Write, test: &TestReport) -> io::Result<()> {
    writeln!(out, "====== {} ======", test.name)
}

/// What the test completed in how long, the settings it ran with and the seed.
pub(super) fn header(
    out: &mut dyn Write,
    report: &RunReport,
    test: &TestReport,
    precision: usize,
) -> io::Result<()> {
    let s = &report.settings;
    match test.target_rate_per_sec {
        None => writeln!(
            out,
            "  {} requests completed in {:.2} seconds",
            test.counts.completed, test.measured_secs
        )?,
        Some(rate) => writeln!(
            out,
            "  {} requests completed in {:.2} seconds (open loop, target {:.0} requests per second)",
            test.counts.completed, test.measured_secs, rate
        )?,
    }
    writeln!(out, "  {} parallel clients", s.clients)?;
    if let Some(shard) = &s.shard {
        write!(out, "  shard {} of {}", shard.index, shard.count)?;
        if shard.count > 1 {
            write!(
                out,
                " (numbers above and below are this shard's share; `tailrate merge` adds the shards)"
            )?;
        }
        writeln!(out)?;
        if let Some(skew) = test.start_skew_ns {
            writeln!(
                out,
                "  start skew: {} msec after --start-at",
                ms(skew as f64, precision)
            )?;
        }
    }
    // A replay sends the trace's own values: -d had no part in them.
    if s.replay.is_some() {
        writeln!(out, "  payload as recorded in the trace")?;
    } else {
        writeln!(out, "  {} bytes payload", s.data_size)?;
    }
    writeln!(out, "  keep alive: {}", u8::from(s.keepalive))?;
    if let Some(save) = &report.header.server.save {
        writeln!(out, "  host configuration \"save\": {save}")?;
    }
    if let Some(aof) = &report.header.server.appendonly {
        writeln!(out, "  host configuration \"appendonly\": {aof}")?;
    }
    if s.threads > 1 {
        writeln!(out, "  multi-thread: yes\n  threads: {}", s.threads)?;
    } else {
        writeln!(out, "  multi-thread: no")?;
    }
    // What reproduces the run's keys, values and arrivals with `--seed`.
    writeln!(out, "  seed: {}", report.header.seed)?;
    writeln!(out)?;

    Ok(())
}

/// Both distributions of the response time, when the test has any.
pub(super) fn distributions(out: &mut dyn Write, test: &TestReport) -> io::Result<()> {
    if let Some(h) = test
        .response()
        .and_then(Latency::histogram)
        .filter(|h| !h.is_empty())
    {
        percentile_distribution(out, &h)?;
        cumulative_distribution(out, &h)?;
    }

    Ok(())
}

/// "Summary:": throughput, and the response time's avg, min, p50, p95, p99 and max.
pub(super) fn summary(out: &mut dyn Write, test: &TestReport, precision: usize) -> io::Result<()> {
    let get = |f: fn(&Latency) -> f64| super::ms_of(test.response(), f, precision);
    writeln!(out, "Summary:")?;
    writeln!(
        out,
        "  throughput summary: {:.2} requests per second",
        test.throughput_per_sec
    )?;
    writeln!(out, "  latency summary (msec):")?;
    writeln!(
        out,
        "    {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "avg", "min", "p50", "p95", "p99", "max"
    )?;
    writeln!(
        out,
        "    {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        get(|l| l.mean_ns),
        get(|l| l.min_ns as f64),
        get(|l| l.p50_ns as f64),
        get(|l| l.p95_ns as f64),
        get(|l| l.p99_ns as f64),
        get(|l| l.max_ns as f64)
    )?;

    Ok(())
}

/// redis-benchmark's "Latency by percentile distribution" (halving steps to 100%).
fn percentile_distribution(out: &mut dyn Write, h: &Histogram<u64>) -> io::Result<()> {
    writeln!(out, "Latency by percentile distribution:")?;
    let total = h.len();
    let mut cumulative = 0u64;
    let mut previous: Option<u64> = None;
    for v in h.iter_quantiles(1) {
        cumulative += v.count_since_last_iteration();
        if previous != Some(cumulative) || cumulative == total {
            let value = h.highest_equivalent(v.value_iterated_to());
            writeln!(
                out,
                "{:.3}% <= {:.3} milliseconds (cumulative count {})",
                v.quantile_iterated_to() * 100.0,
                value as f64 / 1e6,
                cumulative
            )?;
        }
        previous = Some(cumulative);
    }
    writeln!(out)
}

/// redis-benchmark's "Cumulative distribution of latencies": 0.1 ms steps up to 2 ms, then 1 ms.
fn cumulative_distribution(out: &mut dyn Write, h: &Histogram<u64>) -> io::Result<()> {
    writeln!(out, "Cumulative distribution of latencies:")?;
    let total = h.len();
    let max = h.max();
    let mut edge: u64 = 100_000;
    let mut previous: Option<u64> = None;
    loop {
        let cumulative = h.count_between(0, edge);
        if previous != Some(cumulative) || cumulative == total {
            let value = h.highest_equivalent(edge);
            writeln!(
                out,
                "{:.3}% <= {:.3} milliseconds (cumulative count {})",
                cumulative as f64 / total as f64 * 100.0,
                value as f64 / 1e6,
                cumulative
            )?;
        }
        if cumulative >= total || edge > max {
            break;
        }
        previous = Some(cumulative);
        edge += if edge >= 2_000_000 {
            1_000_000
        } else {
            100_000
        };
    }
    writeln!(out)
}
