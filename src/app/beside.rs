//! What a test measures beside its requests: the server's readings (its counters before
//! and after), its events (forks, the slow log, the latency monitor) and the host (the
//! meter's waits and hiccups). Started before the test's requests, the meter stopped
//! right after them, the rest read and added to the test's report after.

use std::time::Instant;

use super::server_events::{self, Marks};
use super::server_view::Observer;
use crate::config::RunConfig;
use crate::drive::{self, Cancel, RunOutcome};
use crate::host::{Meter, Series};
use crate::net::cluster::ClusterMap;
use crate::record::Metric;
use crate::report::TestReport;
use crate::report::server::{Reading, ServerView};
use crate::stats::confidence::BatchSeries;

/// The server's readings, events and the host, around one test.
pub struct Beside {
    observer: Option<Observer>,
    /// The reading before the test, when it was taken, and the wall clock then.
    before: Option<(Reading, Option<Instant>, f64)>,
    marks: Option<Marks>,
    meter: Option<Meter>,
    series: Option<Series>,
}

impl Beside {
    /// Reads the server and marks its events (when `--no-server-stats` is not given)
    /// and starts the host meter (unless `--no-host-stats`).
    pub fn start(
        config: &RunConfig,
        cluster: Option<&ClusterMap>,
        server_names: &[String],
        cancel: &Cancel,
    ) -> Beside {
        let mut observer = Observer::open(config, cluster, server_names, cancel);
        // The events are marked before the reading and collected after the one after the
        // test, so that none of their commands falls between the two counts of
        // commandstats (a benchmark of INFO counts exactly its own calls).
        let marks = observer
            .as_mut()
            .map(|o| server_events::mark(o, config.output.latency_monitor_ms));
        let before = observer.as_mut().map(|o| (o.read(), o.taken(), unix_now()));
        let meter = start_meter(config, observer.as_ref(), before.as_ref().map(|b| &b.0));
        Beside {
            observer,
            before,
            marks,
            meter,
            series: None,
        }
    }

    /// Stops the host meter: the test's requests are done.
    pub fn stop_meter(&mut self) {
        if let Some(meter) = self.meter.take() {
            self.series = meter.stop();
        }
    }

    /// Reads the server after the test and adds its view and events, and the host's
    /// figures, to `report`; `origin` is when the measured window began, `batches` its
    /// batches.
    pub fn finish(
        mut self,
        config: &RunConfig,
        report: &mut TestReport,
        server_names: &[String],
        outcome: &RunOutcome,
        origin: Option<Instant>,
        batches: &BatchSeries,
    ) {
        self.stop_meter();
        if let (Some(o), Some(before)) = (self.observer.as_mut(), self.before.take()) {
            let mut view = server_view(config, o, before, server_names, outcome);
            if let (Some(marks), Some(origin)) = (self.marks.take(), origin) {
                let window_unix = unix_now() - origin.elapsed().as_secs_f64();
                let mut events =
                    server_events::collect(o, marks, window_unix, report.measured_secs);
                crate::judge::events::attribute(&mut events, &report.intervals);
                view.events = Some(events);
            }
            report.add_server_view(view, !config.plan.shard.is_split());
        }
        if let (Some(series), Some(origin)) = (self.series, origin) {
            let n = batches.total(Metric::Response).len();
            report.add_host(crate::host::figures(&series, origin, drive::BATCH, n));
        }
        // The tail again, with the host's figures and the server's events now beside it.
        report.attribute_tail(config, batches);
    }
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
                measured + outcome.unrecorded_sent.get(i).copied().unwrap_or(0),
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
