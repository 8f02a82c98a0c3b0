//! Measuring one test: drive it, stream its intervals to the progress line, the `.hlog`
//! and the live metrics, and build its report.

use std::cell::Cell;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::beside::Beside;
use super::intervals::{Grouper, IntervalMerger, summary, write_hlog};
use super::metrics::{Metrics, Scope};
use crate::config::RunConfig;
use crate::drive::{self, Cancel, Interval};
use crate::export::hlog::HlogWriter;
use crate::net::cluster::ClusterMap;
use crate::progress::Progress;
use crate::record::{Recorder, Timing};
use crate::report::TestReport;
use crate::workload::Test;

/// Runs test `index` of `config` once and builds its report; also returns why it
/// stopped early, if it did. Progress goes to `stderr` when it is a terminal; intervals
/// go to `hlog`, whose start was `log_offset` before this call, and to the live metrics'
/// `live` scope.
#[expect(
    clippy::too_many_arguments,
    reason = "a test, where it runs, and its four sinks"
)]
pub fn measure(
    config: &RunConfig,
    cluster: Option<&Arc<ClusterMap>>,
    index: usize,
    cancel: &Cancel,
    stderr: &mut dyn Write,
    stderr_is_terminal: bool,
    hlog: Option<&mut HlogWriter>,
    log_offset: Duration,
    live: Option<Scope<'_>>,
) -> Result<(TestReport, Option<String>)> {
    let test = &config.plan.workload.tests[index];
    let mut progress = progress_line(config, &test.name, stderr, stderr_is_terminal);
    let mut merger = IntervalMerger::new(config.plan.threads, drive::BATCH);
    let mut grouper = Grouper::new(drive::interval_length(&config.plan));
    let mut batches = crate::stats::confidence::BatchSeries::default();
    let timing = config.plan.mode.timing();
    // Intervals count from the measured window's start; the log counts from its own, at
    // `log_offset` before now.
    let called = Instant::now();
    let (command_names, server_names, reads) = names(test);
    // The live page's test, and each thread's backlog at its latest batch (their sum is
    // the backlog the page shows at each report interval).
    let live = live.map(|scope| {
        let target = config.plan.own_rate_per_sec();
        let index = scope
            .metrics
            .start(scope.labels, &command_names, timing, target);
        (scope.metrics, index)
    });
    let backlogs: Vec<Cell<usize>> = (0..config.plan.threads.max(1))
        .map(|_| Cell::new(0))
        .collect();
    let mut out = IntervalOut {
        hlog,
        hlog_error: None,
        test: &test.name,
        command_names: &command_names,
        timing,
        log_start: (called, log_offset),
        live,
        backlogs: &backlogs,
    };
    // Each merged batch: kept for the percentiles' intervals, and grouped into the
    // report's intervals, each summarised and written out once whole.
    let mut emit = |merger: &mut IntervalMerger,
                    start: Duration,
                    length: Duration,
                    record: Recorder,
                    last: bool| {
        batches.push(&record, timing);
        drive::share_core();
        let origin = merger.origin;
        let summaries = &mut merger.summaries;
        let mut report_interval = |start: Duration, length: Duration, record: &Recorder| {
            out.write(origin, start, length, record);
            summaries.push(summary(start, length, record));
        };
        grouper.push(start, length, &record, &mut report_interval);
        drive::share_core();
        if last {
            grouper.flush(&mut report_interval);
        }
        merger.recycle(record);
    };
    let mut beside = Beside::start(config, cluster.map(|c| &**c), &server_names, cancel);
    let outcome = {
        let mut on_interval = |iv: Interval| {
            progress.interval(&iv.record, iv.start, iv.length, iv.backlog);
            if let Some(backlog) = backlogs.get(iv.thread) {
                backlog.set(iv.backlog);
            }
            let (whole, back) = merger.push(iv);
            drive::share_core();
            for (start, length, record) in whole {
                emit(&mut merger, start, length, record, false);
            }
            back
        };
        drive::run(&config.plan, cluster, test, index, cancel, &mut on_interval)
    };
    progress.finish();
    beside.stop_meter();
    let outcome = outcome.with_context(|| format!("running {}", test.name))?;
    let rest = merger.flush(outcome.measured);
    let count = rest.len();
    for (i, (start, length, record)) in rest.into_iter().enumerate() {
        emit(&mut merger, start, length, record, i + 1 == count);
    }
    out.finish_log().context("writing --hdr-log")?;
    let mut report = TestReport::build(
        &test.name,
        config,
        cluster.map(|c| &**c),
        &outcome,
        &command_names,
        &reads,
        std::mem::take(&mut merger.summaries),
        &batches,
    );
    beside.finish(
        config,
        &mut report,
        &server_names,
        &outcome,
        merger.origin,
        &batches,
    );
    if let Some((metrics, index)) = out.live {
        metrics.end(index, &report);
    }
    Ok((report, outcome.stopped_early))
}

/// Each command's name, the name the server counts it under (a mix's `get` and `get_2`
/// are one `get` there), and whether it counts hits.
fn names(test: &Test) -> (Vec<String>, Vec<String>, Vec<bool>) {
    let commands = &test.commands;
    (
        commands.iter().map(|c| c.name.clone()).collect(),
        commands.iter().map(|c| c.server_name.clone()).collect(),
        commands.iter().map(|c| c.counts_hits).collect(),
    )
}

/// Where each of a test's report intervals goes beside its summary: the `.hlog` and the
/// live page.
struct IntervalOut<'a, 'h> {
    hlog: Option<&'a mut HlogWriter<'h>>,
    /// The log's first write error: the run goes on, and reports it at its end.
    hlog_error: Option<std::io::Error>,
    test: &'a str,
    command_names: &'a [String],
    timing: Timing,
    /// When `measure` was called, and how long before that the log started: intervals
    /// count from the measured window's start, the log from its own.
    log_start: (Instant, Duration),
    /// The live page and the test's place on it.
    live: Option<(&'a Metrics, usize)>,
    /// Each thread's backlog at its latest batch.
    backlogs: &'a [Cell<usize>],
}

impl IntervalOut<'_, '_> {
    /// Writes the test's intervals the log kept for its end (the generator no longer
    /// needs the CPU), and gives the log's first error.
    fn finish_log(&mut self) -> std::io::Result<()> {
        if let Some(log) = self.hlog.as_deref_mut()
            && let Err(e) = log.drain()
        {
            self.hlog_error.get_or_insert(e);
        }
        self.hlog_error.take().map_or(Ok(()), Err)
    }

    /// Writes the interval `start..start + length` of the window that began at `origin`.
    fn write(
        &mut self,
        origin: Option<Instant>,
        start: Duration,
        length: Duration,
        record: &Recorder,
    ) {
        let (called, log_offset) = self.log_start;
        let window_offset = origin.map_or(Duration::ZERO, |o| o.saturating_duration_since(called));
        if let Some(log) = self.hlog.as_deref_mut()
            && let Err(e) = write_hlog(
                log,
                self.test,
                self.command_names,
                self.timing,
                log_offset + window_offset + start,
                length,
                record,
            )
        {
            self.hlog_error.get_or_insert(e);
        }
        if let Some((metrics, index)) = self.live {
            let backlog = self.backlogs.iter().map(Cell::get).sum::<usize>();
            metrics.interval(
                index,
                length,
                record,
                self.command_names,
                self.timing,
                backlog as u64,
            );
        }
    }
}

/// The live progress line of test `name` on `stderr`, drawn only when it is a terminal
/// and progress is on.
fn progress_line<'a>(
    config: &RunConfig,
    name: &str,
    stderr: &'a mut dyn Write,
    stderr_is_terminal: bool,
) -> Progress<'a> {
    let target = config.plan.own_rate_per_sec();
    let show_progress = config.output.progress && stderr_is_terminal;
    Progress::new(
        if show_progress { Some(stderr) } else { None },
        name,
        target,
        config.plan.threads,
        drive::interval_length(&config.plan),
    )
}
