//! tailrate's own sections of the full report, each printed only when it has something
//! to say: traffic and errors, outages and reconnects, the server's view, the open loop's
//! counts and metrics, the self-checks, cluster nodes and workers.

use std::io::{self, Write};

use super::tables::{interval_text, metric_table};
use crate::record::Metric;
use crate::report::verdict::Verdict;
use crate::report::{Percentile, RunReport, TestReport};
use crate::text::printable;

/// Bytes in and out, hits and misses of the reads, and the errors by kind.
pub(super) fn traffic(out: &mut dyn Write, test: &TestReport) -> io::Result<()> {
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
        if hits == 0 && misses > 0 {
            // A GET of keys never written times the server's fastest path, a null reply.
            writeln!(
                out,
                "    every read missed: no key it read was ever written; --prefill writes them first (or -t set,get with the same -r; a replay: load the data its trace reads, docs/replay.md)"
            )?;
        }
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
    Ok(())
}

/// Each cluster node's counts and response time.
pub(super) fn nodes(out: &mut dyn Write, test: &TestReport, precision: usize) -> io::Result<()> {
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
                super::ms_of(Some(&n.response), |l| l.p50_ns as f64, precision),
                super::ms_of(Some(&n.response), |l| l.p99_ns as f64, precision),
                interval_text(&n.response, Percentile::P99, precision)
            )?;
        }
    }
    Ok(())
}

/// With `--workers`: the setting, the writes, and the latency by metric.
pub(super) fn workers(
    out: &mut dyn Write,
    report: &RunReport,
    test: &TestReport,
    precision: usize,
) -> io::Result<()> {
    let s = &report.settings;
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
                ("response", Metric::Response),
                ("service", Metric::Service),
                ("batch wait", Metric::QueueWait),
            ],
        )?;
    }
    Ok(())
}

/// The server's own count and clock for the test, beside tailrate's.
pub(super) fn server_lines(
    out: &mut dyn Write,
    view: &crate::report::server::ServerView,
) -> io::Result<()> {
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
    if let Some(events) = &view.events {
        event_lines(out, events)?;
    }
    Ok(())
}

/// The server's own record of its stalls during the test, each placed in time.
fn event_lines(
    out: &mut dyn Write,
    events: &crate::report::server::events::ServerEvents,
) -> io::Result<()> {
    if let Some(n) = events.forks.filter(|&n| n > 0) {
        let latest = events.latest_fork_usec.map_or(String::new(), |us| {
            format!(", the latest {:.1} ms", us as f64 / 1e3)
        });
        writeln!(out, "    forks: {n}{latest} (INFO stats)")?;
    }
    for e in &events.events {
        // The server stamps whole seconds: the event began within the second shown.
        writeln!(
            out,
            "    {} at {:.1}-{:.1} s: {} ms{}",
            printable(&e.event),
            e.at_secs,
            e.at_secs + 1.0,
            e.length_ms,
            e.in_tail
                .as_ref()
                .map_or(format!(" ({})", e.source), |t| format!(
                    ": {}",
                    printable(t)
                ))
        )?;
    }
    for m in &events.missing {
        writeln!(out, "    not given: {}", printable(m))?;
    }
    Ok(())
}

/// Outages shown one by one in the text; the rest are counted.
const OUTAGES_SHOWN: usize = 5;

/// When the server could not be reached, how many connections were opened again, and
/// which requests the percentiles leave out: each line only when there is something to
/// say, so a run where nothing went wrong keeps redis-benchmark's shape.
pub(super) fn connection_lines(out: &mut dyn Write, test: &TestReport) -> io::Result<()> {
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
            writeln!(
                out,
                "    {}",
                printable(&crate::export::events_text::outage(outage))
            )?;
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
        writeln!(
            out,
            "  {}",
            printable(&crate::export::events_text::layout_change(change))
        )?;
    }
    if test.layout_changes_left_out > 0 {
        writeln!(
            out,
            "  and {} more layout changes",
            test.layout_changes_left_out
        )?;
    }
    let c = &test.counts;
    if c.unanswered_counted > 0 {
        let parts: Vec<String> = [
            (c.not_sent, "never sent"),
            (c.timeouts, "timed out"),
            (c.in_flight_at_end, "in flight at the end"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        writeln!(
            out,
            "  the percentiles count {} of {} intended requests that got no reply ({}) at their \
             age when given up: lower bounds of latencies that never ended",
            c.unanswered_counted,
            c.intended,
            parts.join(", ")
        )?;
    }
    if test.excluded_from_latency > 0 && c.intended > 0 {
        let unwritten = test.excluded_from_latency.saturating_sub(c.errors);
        let parts: Vec<String> = [
            (c.errors, "ended in an error"),
            (unwritten, "never written"),
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

/// The open loop's target and achieved rates, its counts, its latency by metric and
/// the self-checks.
pub(super) fn open_loop_sections(
    out: &mut dyn Write,
    test: &TestReport,
    precision: usize,
) -> io::Result<()> {
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
            ("response", Metric::Response),
            ("service", Metric::Service),
            ("lag", Metric::Lag),
            ("queue wait", Metric::QueueWait),
        ],
    )?;
    check_lines(out, test)
}

/// Every self-check with its verdict, the meaning of each failure, and the verdict on the
/// whole run.
pub(super) fn check_lines(out: &mut dyn Write, test: &TestReport) -> io::Result<()> {
    writeln!(out, "  self-checks:")?;
    for check in &test.checks {
        // A check that could not decide says so, rather than passing.
        let verdict = match check.verdict {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Skipped => "cannot check",
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
