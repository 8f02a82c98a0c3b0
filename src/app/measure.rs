//! Measuring one test: drive it, stream its intervals to the progress line and the
//! `.hlog`, and build its report.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::intervals::{IntervalMerger, summary, write_hlog};
use crate::config::RunConfig;
use crate::drive::{self, Cancel, Interval, Mode};
use crate::net::cluster::ClusterMap;
use crate::progress::Progress;
use crate::record::Recorder;
use crate::report::TestReport;
use crate::report::hlog::HlogWriter;

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
    let target = match config.plan.mode {
        Mode::Open { rate_per_sec, .. } => Some(rate_per_sec),
        Mode::Closed { .. } => None,
    };
    let show_progress = config.output.progress && stderr_is_terminal;
    let mut progress = Progress::new(
        if show_progress { Some(stderr) } else { None },
        &test.name,
        target,
        config.plan.threads,
    );
    let mut merger = IntervalMerger::new(config.plan.threads, drive::interval_length(&config.plan));
    // Intervals count from the measured window's start; the log counts from its own, at
    // `log_offset` before now.
    let called = Instant::now();
    let command_names: Vec<String> = test.commands.iter().map(|c| c.name.clone()).collect();
    let reads: Vec<bool> = test.commands.iter().map(|c| c.counts_hits).collect();
    let mut hlog_error = None;
    let mut emit =
        |merger: &mut IntervalMerger, start: Duration, length: Duration, record: Recorder| {
            let window_offset = merger
                .origin
                .map_or(Duration::ZERO, |o| o.saturating_duration_since(called));
            if let Some(log) = hlog.as_deref_mut()
                && let Err(e) = write_hlog(
                    log,
                    &test.name,
                    &command_names,
                    config.plan.mode.timing(),
                    log_offset + window_offset + start,
                    length,
                    &record,
                )
            {
                hlog_error.get_or_insert(e);
            }
            merger.summaries.push(summary(start, length, &record));
            merger.recycle(record);
        };
    let mut observer =
        super::server_view::Observer::open(config, cluster.map(|c| &**c), &command_names);
    let before = observer.as_mut().map(|o| (o.read(), o.taken()));
    let outcome = {
        let mut on_interval = |iv: &Interval| {
            progress.interval(&iv.record, iv.start, iv.length, iv.backlog);
            for (start, length, record) in merger.push(iv) {
                emit(&mut merger, start, length, record);
            }
        };
        drive::run(&config.plan, cluster, test, index, cancel, &mut on_interval)
    };
    progress.finish();
    let outcome = outcome.with_context(|| format!("running {}", test.name))?;
    for (start, length, record) in merger.flush(outcome.measured) {
        emit(&mut merger, start, length, record);
    }
    if let Some(e) = hlog_error {
        return Err(e).context("writing --hdr-log");
    }
    let server = observer.as_mut().zip(before).map(|(o, (before, taken))| {
        let after = o.read();
        let span = o
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
        crate::report::server::view(&before, &after, span, &sent)
    });
    let mut report = TestReport::build(
        &test.name,
        config,
        cluster.map(|c| &**c),
        &outcome,
        &command_names,
        &reads,
        std::mem::take(&mut merger.summaries),
    );
    if let Some(view) = server {
        report.add_server_view(view);
    }
    Ok((report, outcome.stopped_early))
}
