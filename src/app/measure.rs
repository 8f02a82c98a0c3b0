//! Measuring one test: drive it, stream its intervals to the progress line and the
//! `.hlog`, and build its report.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::intervals::{Grouper, IntervalMerger, summary, write_hlog};
use super::server_view::Observer;
use crate::config::RunConfig;
use crate::drive::RunOutcome;
use crate::drive::{self, Cancel, Interval};
use crate::export::hlog::HlogWriter;
use crate::net::cluster::ClusterMap;
use crate::progress::Progress;
use crate::record::Recorder;
use crate::report::TestReport;
use crate::report::server::{Reading, ServerView};

/// Runs test `index` of `config` once and builds its report; also returns why it
/// stopped early, if it did. Progress goes to `stderr` when it is a terminal; intervals
/// go to `hlog`, whose start was `log_offset` before this call.
#[expect(
    clippy::too_many_arguments,
    reason = "a test, where it runs, and its three sinks"
)]
pub fn measure(
    config: &RunConfig,
    cluster: Option<&Arc<ClusterMap>>,
    index: usize,
    cancel: &Cancel,
    stderr: &mut dyn Write,
    stderr_is_terminal: bool,
    mut hlog: Option<&mut HlogWriter>,
    log_offset: Duration,
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
    let command_names: Vec<String> = test.commands.iter().map(|c| c.name.clone()).collect();
    // The server counts a mix's `get` and `get_2` as one `get`.
    let server_names: Vec<String> = test
        .commands
        .iter()
        .map(|c| c.server_name.clone())
        .collect();
    let reads: Vec<bool> = test.commands.iter().map(|c| c.counts_hits).collect();
    let mut hlog_error = None;
    // Each merged batch: kept for the percentiles' intervals, and grouped into the
    // report's intervals, each summarised and written to the log once whole.
    let mut emit = |merger: &mut IntervalMerger,
                    start: Duration,
                    length: Duration,
                    record: Recorder,
                    last: bool| {
        batches.push(&record, timing);
        let origin = merger.origin;
        let summaries = &mut merger.summaries;
        let mut report_interval = |start: Duration, length: Duration, record: &Recorder| {
            let window_offset =
                origin.map_or(Duration::ZERO, |o| o.saturating_duration_since(called));
            if let Some(log) = hlog.as_deref_mut()
                && let Err(e) = write_hlog(
                    log,
                    &test.name,
                    &command_names,
                    timing,
                    log_offset + window_offset + start,
                    length,
                    record,
                )
            {
                hlog_error.get_or_insert(e);
            }
            summaries.push(summary(start, length, record));
        };
        grouper.push(start, length, &record, &mut report_interval);
        if last {
            grouper.flush(&mut report_interval);
        }
        merger.recycle(record);
    };
    let mut observer =
        super::server_view::Observer::open(config, cluster.map(|c| &**c), &server_names, cancel);
    let before = observer.as_mut().map(|o| (o.read(), o.taken(), unix_now()));
    let meter = start_meter(config, observer.as_ref(), before.as_ref().map(|b| &b.0));
    let outcome = {
        let mut on_interval = |iv: Interval| {
            progress.interval(&iv.record, iv.start, iv.length, iv.backlog);
            let (whole, back) = merger.push(iv);
            for (start, length, record) in whole {
                emit(&mut merger, start, length, record, false);
            }
            back
        };
        drive::run(&config.plan, cluster, test, index, cancel, &mut on_interval)
    };
    progress.finish();
    let host = meter.and_then(crate::host::Meter::stop);
    let outcome = outcome.with_context(|| format!("running {}", test.name))?;
    let rest = merger.flush(outcome.measured);
    let count = rest.len();
    for (i, (start, length, record)) in rest.into_iter().enumerate() {
        emit(&mut merger, start, length, record, i + 1 == count);
    }
    if let Some(e) = hlog_error {
        return Err(e).context("writing --hdr-log");
    }
    let server = observer
        .as_mut()
        .zip(before)
        .map(|(o, before)| server_view(config, o, before, &server_names, &outcome));
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
    if let Some(view) = server {
        report.add_server_view(view, !config.plan.shard.is_split());
    }
    if let (Some(series), Some(origin)) = (host, merger.origin) {
        let response = batches.total(crate::record::Metric::Response);
        report.add_host(
            crate::host::figures(&series, origin, drive::BATCH, response.len()),
            &response,
        );
    }
    Ok((report, outcome.stopped_early))
}

/// The host meter for a test, unless `--no-host-stats`: it follows the server's process
/// found from `observer`'s `first` reading, where there is one.
fn start_meter(
    config: &RunConfig,
    observer: Option<&Observer>,
    first: Option<&Reading>,
) -> Option<crate::host::Meter> {
    if !config.output.host_stats {
        return None;
    }
    crate::host::Meter::start(match (observer, first) {
        (Some(o), Some(first)) => o.server_process(first),
        _ => Err("the server's readings are off (--no-server-stats)".into()),
    })
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

/// The server's view of the test from `observer`'s reading now and the one taken
/// `before` it ran (with when it was taken, by the observer's clock and the wall clock);
/// each command's count beside what tailrate sent of it, warm-up included.
fn server_view(
    config: &RunConfig,
    observer: &mut Observer,
    (before, taken, before_at): (Reading, Option<Instant>, f64),
    command_names: &[String],
    outcome: &RunOutcome,
) -> ServerView {
    let after = observer.read();
    let after_at = unix_now();
    let span = observer
        .taken()
        .zip(taken)
        .map_or(0.0, |(a, b)| a.duration_since(b).as_secs_f64());
    let sent: Vec<(String, u64)> = command_names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let measured = outcome.record.commands.get(i).map_or(0, |c| c.sent);
            (
                name.clone(),
                measured + outcome.warmup_sent.get(i).copied().unwrap_or(0),
            )
        })
        .collect();
    let mut view = crate::report::server::view(&before, &after, span, &sent);
    if config.plan.shard.is_split() {
        view.kept = Some(Box::new(crate::report::server::KeptReadings {
            before_unix_secs: before_at,
            after_unix_secs: after_at,
            before: before.of_commands(command_names),
            after: after.of_commands(command_names),
        }));
    }
    view
}

/// The wall clock in Unix seconds: the clock shards on different hosts share (NTP), for
/// when a shard's server readings were taken.
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
