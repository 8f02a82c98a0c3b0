//! Human output: redis-benchmark's full per-test report and its `-q` line, byte for
//! byte in layout, followed (where tailrate knows more) by its own sections: errors
//! by kind, the four open-loop metrics side by side, counts and self-checks.

use std::io::{self, Write};

use hdrhistogram::Histogram;

use super::{Exporter, ms};
use crate::report::verdict::Verdict;
use crate::report::{Latency, Percentile, RunReport, TestReport};
use crate::text::printable;

/// Prints redis-benchmark's full report (or its `-q` line) per test.
pub struct Text {
    /// `-q`.
    pub quiet: bool,
    /// Decimal places of milliseconds.
    pub precision: usize,
}

impl Exporter for Text {
    fn test_done(
        &mut self,
        out: &mut dyn Write,
        report: &RunReport,
        test: &TestReport,
    ) -> io::Result<()> {
        if self.quiet {
            quiet_line(out, test, self.precision)
        } else {
            full(out, report, test, self.precision)
        }
    }

    /// With `--contrast`, each test's three loops side by side, after every report.
    fn run_done(&mut self, out: &mut dyn Write, report: &RunReport) -> io::Result<()> {
        if !report.contrasts.is_empty() && self.quiet {
            writeln!(out)?;
        }
        for contrast in &report.contrasts {
            contrast.write_text(out)?;
        }
        for summary in &report.repeats {
            writeln!(out)?;
            write!(out, "{}", summary.text(self.precision))?;
        }
        Ok(())
    }
}

fn quiet_line(out: &mut dyn Write, test: &TestReport, precision: usize) -> io::Result<()> {
    let p50 = test.response().map_or(0, |l| l.p50_ns);
    write!(
        out,
        "{}: {:.2} requests per second, p50={} msec",
        test.name,
        test.throughput_per_sec,
        ms(p50 as f64, precision)
    )?;
    if let Some(target) = test.target_rate_per_sec {
        let p99 = test.response().map_or(0, |l| l.p99_ns);
        let service_p99 = test.latency.get("service").map_or(0, |l| l.p99_ns);
        write!(
            out,
            " (open loop at {target:.0}/s: response p99={} msec, service p99={} msec",
            ms(p99 as f64, precision),
            ms(service_p99 as f64, precision)
        )?;
        if !test.valid {
            write!(out, ", INVALID: {}", test.why_invalid())?;
        }
        write!(out, ")")?;
    }
    if test.counts.errors > 0 {
        write!(out, " ({} errors", test.counts.errors)?;
        // The most frequent kind's first text, as redis-benchmark shows the server's error.
        let most = test.counts.errors_by_kind.iter().max_by_key(|(_, n)| **n);
        if let Some(first) = most.and_then(|(kind, _)| test.counts.error_examples.get(kind)) {
            write!(out, ", e.g. {}", printable(first))?;
        }
        write!(out, ")")?;
    }
    if !test.valid && test.target_rate_per_sec.is_none() {
        write!(out, " (INVALID: {})", test.why_invalid())?;
    }
    writeln!(out)
}

fn full(
    out: &mut dyn Write,
    report: &RunReport,
    test: &TestReport,
    precision: usize,
) -> io::Result<()> {
    let s = &report.settings;
    writeln!(out, "====== {} ======", test.name)?;
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
    writeln!(out, "  {} bytes payload", s.data_size)?;
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
    writeln!(out)?;

    if let Some(h) = test
        .response()
        .and_then(Latency::histogram)
        .filter(|h| !h.is_empty())
    {
        percentile_distribution(out, &h)?;
        cumulative_distribution(out, &h)?;
    }

    let r = test.response();
    let get = |f: fn(&Latency) -> f64| r.map_or(0.0, f);
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
        ms(get(|l| l.mean_ns), precision),
        ms(get(|l| l.min_ns as f64), precision),
        ms(get(|l| l.p50_ns as f64), precision),
        ms(get(|l| l.p95_ns as f64), precision),
        ms(get(|l| l.p99_ns as f64), precision),
        ms(get(|l| l.max_ns as f64), precision)
    )?;

    let metrics: &[(&str, &str)] = if test.target_rate_per_sec.is_some() {
        &[
            ("response", "response"),
            ("service", "service"),
            ("lag", "lag"),
            ("queue wait", "queue_wait"),
        ]
    } else {
        &[("response", "response")]
    };
    interval_table(out, test, precision, metrics)?;

    // memtier's KB/sec, in and out apart, in its unit: KiB, 1024 bytes.
    writeln!(
        out,
        "  network: {:.2} KiB/s received, {:.2} KiB/s sent ({} and {} bytes; 1 KiB = 1024 bytes)",
        test.received_bytes_per_sec / 1024.0,
        test.sent_bytes_per_sec / 1024.0,
        test.received_bytes,
        test.sent_bytes
    )?;
    if let (Some(hits), Some(misses)) = (test.counts.hits, test.counts.misses) {
        writeln!(out, "  reads: {}", hits_and_misses(hits, misses))?;
    }
    if !test.counts.errors_by_kind.is_empty() {
        writeln!(out, "  errors by kind:")?;
        for (kind, n) in &test.counts.errors_by_kind {
            match test.counts.error_examples.get(kind).filter(|m| *m != kind) {
                Some(first) => writeln!(
                    out,
                    "    {}: {n} (first: {})",
                    printable(kind),
                    printable(first)
                )?,
                None => writeln!(out, "    {}: {n}", printable(kind))?,
            }
        }
    }
    connection_lines(out, test)?;
    if let Some(server) = &test.server {
        server_lines(out, server)?;
    }
    if let Some(b) = &test.bottleneck {
        writeln!(
            out,
            "  bottleneck: {} ({})",
            b.verdict.name(),
            printable(&b.because)
        )?;
    }
    if !test.commands.is_empty() {
        command_table(out, test, precision)?;
    }
    if test.target_rate_per_sec.is_some() {
        open_loop_sections(out, test, precision)?;
    } else if !test.valid {
        // A closed loop prints redis-benchmark's sections; a failed check joins them.
        check_lines(out, test)?;
    }
    if !test.nodes.is_empty() {
        writeln!(
            out,
            "  per cluster node (redirects followed: {}):",
            test.counts.redirects
        )?;
        for n in &test.nodes {
            writeln!(
                out,
                "    {:<22} sent {:>10}  completed {:>10}  errors {:>6}  moved {:>6}  ask {:>6}  p50 {} ms  p99 {} ms {}",
                n.node,
                n.sent,
                n.completed,
                n.errors,
                n.moved,
                n.ask,
                ms(n.response.p50_ns as f64, precision),
                ms(n.response.p99_ns as f64, precision),
                interval_text(&n.response, Percentile::P99, precision)
            )?;
        }
    }
    if let Some(batches) = &test.batches {
        writeln!(
            out,
            "  workers: {} over {} connections; a write holds up to {} requests, the oldest waiting at most {}",
            s.workers.unwrap_or(0),
            s.clients,
            s.pipeline_size.unwrap_or(0),
            humantime::format_duration(std::time::Duration::from_nanos(
                s.pipeline_delay_ns.unwrap_or(0)
            ))
        )?;
        writeln!(
            out,
            "  writes: {} ({:.1} requests per write)",
            batches.writes, batches.mean_requests_per_write
        )?;
        writeln!(
            out,
            "  latency by metric (msec; response from the worker's request, service from the write):"
        )?;
        metric_table(
            out,
            test,
            precision,
            &[
                ("response", "response"),
                ("service", "service"),
                ("batch wait", "queue_wait"),
            ],
        )?;
    }
    if let Some(why) = &test.stopped_early {
        writeln!(out, "  stopped early: {}", printable(why))?;
    }
    writeln!(out)
}

/// The server's own count and clock for the test, beside tailrate's.
fn server_lines(out: &mut dyn Write, view: &crate::report::server::ServerView) -> io::Result<()> {
    writeln!(
        out,
        "  server's view (INFO commandstats, INFO cpu, LATENCY HISTOGRAM over {:.2} s, warm-up included):",
        view.span_secs
    )?;
    for c in &view.commands {
        let mut line = format!(
            "    {}: {} calls (tailrate sent {})",
            printable(&c.command),
            c.calls,
            c.sent_by_tailrate
        );
        if let Some(mean) = c.mean_exec_usec {
            line += &format!("; execution mean {mean:.2} µs");
        }
        if let Some(p) = &c.exec_usec_at_most {
            line += &format!(
                ", p50 <= {} µs, p90 <= {} µs, p99 <= {} µs, p99.9 <= {} µs",
                p.p50, p.p90, p.p99, p.p99_9
            );
        }
        writeln!(out, "{line}")?;
    }
    if let (Some(cpu), Some(share)) = (view.cpu_secs, view.cpu_utilisation) {
        writeln!(
            out,
            "    cpu: {cpu:.2} s ({:.0}% of one core)",
            share * 100.0
        )?;
    }
    for m in &view.missing {
        writeln!(out, "    not given: {}", printable(m))?;
    }
    Ok(())
}

/// Outages shown one by one in the text; the rest are counted.
const OUTAGES_SHOWN: usize = 5;

/// When the server could not be reached, how many connections were opened again, and
/// which requests the percentiles leave out: each line only when there is something to
/// say, so a run where nothing went wrong keeps redis-benchmark's shape.
fn connection_lines(out: &mut dyn Write, test: &TestReport) -> io::Result<()> {
    if !test.outages.is_empty() {
        let unreachable: f64 = test.outages.iter().map(|o| o.length_secs).sum();
        writeln!(
            out,
            "  server unreachable: {:.2} s in {} outage{}:",
            unreachable,
            test.outages.len() as u64 + test.outages_left_out,
            if test.outages.len() as u64 + test.outages_left_out == 1 {
                ""
            } else {
                "s"
            }
        )?;
        for outage in test.outages.iter().take(OUTAGES_SHOWN) {
            writeln!(out, "    {}", printable(&outage.describe()))?;
        }
        let more =
            (test.outages.len().saturating_sub(OUTAGES_SHOWN)) as u64 + test.outages_left_out;
        if more > 0 {
            writeln!(out, "    and {more} more")?;
        }
    }
    if test.reconnects > 0 {
        writeln!(out, "  reconnects: {}", test.reconnects)?;
    }
    for change in &test.layout_changes {
        writeln!(out, "  {}", printable(&change.describe()))?;
    }
    if test.layout_changes_left_out > 0 {
        writeln!(
            out,
            "  and {} more layout changes",
            test.layout_changes_left_out
        )?;
    }
    let c = &test.counts;
    if test.excluded_from_latency > 0 && c.intended > 0 {
        let parts: Vec<String> = [
            (c.not_sent, "never sent"),
            (c.timeouts, "timed out"),
            (c.errors, "ended in an error"),
            (c.in_flight_at_end, "in flight at the end"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        writeln!(
            out,
            "  the percentiles exclude {} of {} intended requests ({:.1}%): {}",
            test.excluded_from_latency,
            c.intended,
            100.0 * test.excluded_from_latency as f64 / c.intended as f64,
            parts.join(", ")
        )?;
    }
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

fn open_loop_sections(out: &mut dyn Write, test: &TestReport, precision: usize) -> io::Result<()> {
    let c = &test.counts;
    writeln!(
        out,
        "  open loop: target {:.1}/s, achieved {:.1}/s",
        test.target_rate_per_sec.unwrap_or(0.0),
        test.achieved_rate_per_sec
    )?;
    writeln!(
        out,
        "  requests: intended {}, sent {}, completed {}, errors {}, timeouts {}, not sent {}, in flight at end {}",
        c.intended, c.sent, c.completed, c.errors, c.timeouts, c.not_sent, c.in_flight_at_end
    )?;
    writeln!(out, "  latency by metric (msec):")?;
    metric_table(
        out,
        test,
        precision,
        &[
            ("response", "response"),
            ("service", "service"),
            ("lag", "lag"),
            ("queue wait", "queue_wait"),
        ],
    )?;
    check_lines(out, test)
}

/// Every self-check with its verdict, the meaning of each failure, and the verdict on the
/// whole run.
fn check_lines(out: &mut dyn Write, test: &TestReport) -> io::Result<()> {
    writeln!(out, "  self-checks:")?;
    for check in &test.checks {
        let verdict = match check.verdict {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Skipped => "n/a ",
        };
        writeln!(out, "    [{verdict}] {}: {}", check.name, check.detail)?;
        if check.verdict == Verdict::Fail {
            writeln!(out, "           {}", check.meaning)?;
        }
    }
    if !test.valid {
        writeln!(out, "  THIS RUN IS INVALID: see the failed checks above.")?;
    }
    Ok(())
}

/// "900 hits, 100 misses (90.0% hits; a miss is a null reply)".
fn hits_and_misses(hits: u64, misses: u64) -> String {
    let replies = hits + misses;
    let share = if replies == 0 {
        0.0
    } else {
        100.0 * hits as f64 / replies as f64
    };
    format!("{hits} hits, {misses} misses ({share:.1}% hits; a miss is a null reply)")
}

/// A mix's commands, one row each: throughput, errors, hits and misses of its reads (when
/// it has any) and response-time percentiles (what memtier prints per command).
fn command_table(out: &mut dyn Write, test: &TestReport, precision: usize) -> io::Result<()> {
    let width = test
        .commands
        .iter()
        .map(|c| c.command.len())
        .max()
        .unwrap_or(7)
        .max(7);
    let reads = test.commands.iter().any(|c| c.counts.hits.is_some());
    writeln!(out, "  per command (response time, msec):")?;
    write!(
        out,
        "    {:<width$} {:>12} {:>8}",
        "command", "requests/s", "errors"
    )?;
    if reads {
        write!(out, " {:>10} {:>10}", "hits", "misses")?;
    }
    writeln!(
        out,
        " {:>9} {:>9} {:>9} {:>9} {:>9}  p99 95% interval",
        "avg", "p50", "p99", "p99.9", "max"
    )?;
    for c in &test.commands {
        let share = if test.measured_secs > 0.0 {
            c.counts.completed as f64 / test.measured_secs
        } else {
            0.0
        };
        let r = c.latency.get("response");
        let get = |f: fn(&Latency) -> f64| ms(r.map_or(0.0, f), precision);
        write!(
            out,
            "    {:<width$} {:>12.2} {:>8}",
            printable(&c.command),
            share,
            c.counts.errors,
        )?;
        if reads {
            // A command that is not a read has neither.
            let shown = |n: Option<u64>| n.map_or_else(|| "-".to_string(), |n| n.to_string());
            write!(
                out,
                " {:>10} {:>10}",
                shown(c.counts.hits),
                shown(c.counts.misses)
            )?;
        }
        writeln!(
            out,
            " {:>9} {:>9} {:>9} {:>9} {:>9}  {}",
            get(|l| l.mean_ns),
            get(|l| l.p50_ns as f64),
            get(|l| l.p99_ns as f64),
            get(|l| l.p99_9_ns as f64),
            get(|l| l.max_ns as f64),
            r.map_or_else(String::new, |l| interval_text(
                l,
                Percentile::P99,
                precision
            ))
        )?;
    }
    Ok(())
}

/// `[low, high]` of `p`'s interval in msec (`open` for an unbounded high end), or nothing
/// when the report has none.
fn interval_text(l: &Latency, p: Percentile, precision: usize) -> String {
    l.ci95(p)
        .map_or_else(String::new, |ci| ci.show(|ns| ms(ns as f64, precision)))
}

/// Each percentile with its 95% interval, one column per `(label, metric key)` the test
/// has, and the samples beyond it (`k`); what the intervals rest on above.
fn interval_table(
    out: &mut dyn Write,
    test: &TestReport,
    precision: usize,
    metrics: &[(&str, &str)],
) -> io::Result<()> {
    let columns: Vec<(&str, &Latency)> = metrics
        .iter()
        .filter_map(|&(label, key)| Some((label, test.latency.get(key)?)))
        .filter(|(_, l)| l.confidence.is_some())
        .collect();
    let Some((_, first)) = columns.first() else {
        return Ok(());
    };
    let method = first
        .confidence
        .as_ref()
        .map_or(String::new(), |c| c.method.clone());
    writeln!(out, "  95% confidence intervals (msec; {method}):")?;
    let cell = |l: &Latency, p: Percentile| {
        let value = ms(l.at(p) as f64, precision);
        match interval_text(l, p, precision) {
            i if i.is_empty() => value,
            i => format!("{value} {i}"),
        }
    };
    let width = Percentile::ALL
        .iter()
        .flat_map(|&p| columns.iter().map(move |(_, l)| cell(l, p).len()))
        .chain(columns.iter().map(|(label, _)| label.len()))
        .max()
        .unwrap_or(0);
    write!(out, "    {:<7}", "")?;
    for (label, _) in &columns {
        write!(out, " {label:<width$}")?;
    }
    writeln!(out, " {:>9}", "k")?;
    for p in Percentile::ALL {
        write!(out, "    {:<7}", p.label())?;
        for (_, l) in &columns {
            write!(out, " {:<width$}", cell(l, p))?;
        }
        let k = first.beyond(p).unwrap_or(0);
        let note = if k < crate::stats::confidence::MIN_BEYOND {
            "  too few beyond to bound"
        } else {
            ""
        };
        writeln!(out, " {k:>9}{note}")?;
    }
    Ok(())
}

/// One row per `(label, metric key)` the test has: min, percentiles and max in msec.
fn metric_table(
    out: &mut dyn Write,
    test: &TestReport,
    precision: usize,
    rows: &[(&str, &str)],
) -> io::Result<()> {
    writeln!(
        out,
        "          {:<11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "metric", "min", "p50", "p90", "p99", "p99.9", "p99.99", "max"
    )?;
    for &(label, key) in rows {
        if let Some(l) = test.latency.get(key) {
            writeln!(
                out,
                "          {:<11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                label,
                ms(l.min_ns as f64, precision),
                ms(l.p50_ns as f64, precision),
                ms(l.p90_ns as f64, precision),
                ms(l.p99_ns as f64, precision),
                ms(l.p99_9_ns as f64, precision),
                ms(l.p99_99_ns as f64, precision),
                ms(l.max_ns as f64, precision)
            )?;
        }
    }
    Ok(())
}
