//! Human output: redis-benchmark's full per-test report and its `-q` line, byte for
//! byte in layout, followed (where tailrate knows more) by its own sections: errors
//! by kind, the four open-loop metrics side by side, counts and self-checks. An open
//! loop leads with its answer under the test's name (`answer`). This file orders the
//! blocks; redis-benchmark's are in `redis_benchmark`, tailrate's own in `sections`,
//! and the tables in `tables`.

use std::io::{self, Write};

use super::{Exporter, ms};
use crate::record::Metric;
use crate::report::{Latency, RunReport, TestReport};
use crate::text::printable;

mod answer;
mod host;
mod redis_benchmark;
mod replay;
mod sections;
mod tables;

pub(crate) use answer::{headline_values, offered_text};
pub(crate) use tables::interval_text;

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

/// `value` of `latency` in msec, or `n/a` when it holds no reply (none, or every request
/// failed): a percentile of no replies is unknown, not 0.
fn ms_of(latency: Option<&Latency>, value: fn(&Latency) -> f64, precision: usize) -> String {
    match latency.filter(|l| l.count > 0) {
        Some(l) => ms(value(l), precision),
        None => "n/a".to_string(),
    }
}

fn quiet_line(out: &mut dyn Write, test: &TestReport, precision: usize) -> io::Result<()> {
    write!(
        out,
        "{}: {:.2} requests per second, p50={} msec",
        test.name,
        test.throughput_per_sec,
        ms_of(test.response(), |l| l.p50_ns as f64, precision)
    )?;
    if let Some(target) = test.target_rate_per_sec {
        let p99 = |l: &Latency| l.p99_ns as f64;
        write!(
            out,
            " (open loop at {target:.0}/s: response p99={} msec, service p99={} msec",
            ms_of(test.response(), p99, precision),
            ms_of(test.latency.get(&Metric::Service), p99, precision)
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
    if let Some(slo) = &test.slo {
        write!(out, "{}", crate::export::objective_text::quiet_clause(slo))?;
    }
    // `-q` after Ctrl+C: the one line says the run was cut short, as the full text does.
    if let Some(why) = &test.stopped_early {
        write!(out, " (stopped early: {})", printable(why))?;
    }
    writeln!(out)
}

/// The full report of one test: redis-benchmark's blocks, then tailrate's sections.
fn full(
    out: &mut dyn Write,
    report: &RunReport,
    test: &TestReport,
    precision: usize,
) -> io::Result<()> {
    let open = test.target_rate_per_sec.is_some();
    redis_benchmark::title(out, test)?;
    if let Some(replay) = &report.settings.replay {
        replay::lines(out, replay)?;
    }
    answer::lines(out, test, precision)?;
    // A closed loop has no answer block: its objectives still come first, so a verdict
    // asked for is read before redis-benchmark's blocks.
    if let Some(slo) = test.slo.as_ref().filter(|_| !open) {
        crate::export::objective_text::lines(out, slo)?;
        writeln!(out)?;
    }
    redis_benchmark::header(out, report, test, precision)?;
    redis_benchmark::distributions(out, test)?;
    redis_benchmark::summary(out, test, precision)?;
    let metrics: &[(&str, Metric)] = if open {
        &[
            ("response", Metric::Response),
            ("service", Metric::Service),
            ("lag", Metric::Lag),
            ("queue wait", Metric::QueueWait),
        ]
    } else {
        &[("response", Metric::Response)]
    };
    tables::interval_table(out, test, precision, metrics)?;
    sections::traffic(out, test)?;
    sections::connection_lines(out, test)?;
    if let Some(server) = &test.server {
        sections::server_lines(out, server)?;
    }
    if let Some(h) = &test.host {
        host::host_lines(out, h)?;
    }
    // An open loop's answer, above, named it.
    if !open {
        bottleneck_line(out, test)?;
    }
    if !test.commands.is_empty() {
        tables::command_table(out, test, precision)?;
    }
    if open {
        sections::open_loop_sections(out, test, precision)?;
    } else if !test.valid {
        // A closed loop prints redis-benchmark's sections; a failed check joins them.
        sections::check_lines(out, test)?;
    }
    sections::nodes(out, test, precision)?;
    sections::workers(out, report, test, precision)?;
    if let Some(why) = test.stopped_early.as_ref().filter(|_| !open) {
        writeln!(out, "  stopped early: {}", printable(why))?;
    }
    writeln!(out)
}

/// What `write` prints, as a string: a section of the text report for another form
/// (the HTML page) to show whole rather than say again in other words.
fn captured(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = write(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The server's view of a test, as the text report prints it.
pub(crate) fn server_view_text(view: &crate::report::server::ServerView) -> String {
    captured(|out| sections::server_lines(out, view))
}

/// The host's part in a test, as the text report prints it.
pub(crate) fn host_text(h: &crate::report::host::HostReport) -> String {
    captured(|out| host::host_lines(out, h))
}

/// A replay's trace and how it was replayed, as the text report heads each test with it.
pub(crate) fn replay_text(r: &crate::report::ReplaySettings) -> String {
    captured(|out| replay::lines(out, r))
}

/// A test's traffic and connections (bytes, reconnects, outages), as the text prints them.
pub(crate) fn traffic_text(test: &TestReport) -> String {
    captured(|out| {
        sections::traffic(out, test)?;
        sections::connection_lines(out, test)
    })
}

/// `  bottleneck: server (why)`, when the test has a verdict.
fn bottleneck_line(out: &mut dyn Write, test: &TestReport) -> io::Result<()> {
    match &test.bottleneck {
        Some(b) => writeln!(
            out,
            "  bottleneck: {} ({})",
            b.verdict.name(),
            printable(&b.because)
        ),
        None => Ok(()),
    }
}
