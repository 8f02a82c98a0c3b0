//! How a test's report is made from what the driver measured: counts, latencies per
//! metric, command and cluster node (each percentile with its interval), and the
//! self-checks.

use std::collections::BTreeMap;

use crate::config::RunConfig;
use crate::drive::{ArrivalProcess, ArrivalSource, Mode, RunOutcome};
use crate::judge::{bottleneck, checks, tail};
use crate::net::cluster::ClusterMap;
use crate::record::{CommandRecord, Metric, Timing};
use crate::report::chosen::ChosenPercentile;
use crate::report::verdict::Verdict;
use crate::report::{
    Batches, CommandReport, Counts, IntervalSummary, Latency, LayoutChangeReport, NodeReport,
    OutageReport, ResponseWindows, TestReport,
};
use crate::stats::confidence::{Batch, BatchSeries};

impl TestReport {
    /// Builds a test's report from what the driver measured; `reads` says, by command,
    /// which commands' replies were counted as hits and misses.
    #[expect(
        clippy::too_many_arguments,
        reason = "the outcome, what it ran, and its interval stream: summaries and batches"
    )]
    pub fn build(
        name: &str,
        config: &RunConfig,
        cluster: Option<&ClusterMap>,
        outcome: &RunOutcome,
        command_names: &[String],
        reads: &[bool],
        intervals: Vec<IntervalSummary>,
        batches: &BatchSeries,
    ) -> Self {
        let total = outcome.record.total();
        let timing = config.plan.mode.timing();
        let total_batches: BTreeMap<Metric, Vec<Batch>> = match batches.commands.as_slice() {
            [one] => one.clone(),
            _ => Metric::ALL
                .into_iter()
                .map(|m| (m, batches.total(m)))
                .collect(),
        };
        let mut checks = checks::checks(config, outcome, &total);
        let mut latency = latency_map(&total, timing, &total_batches);
        choose(
            &mut latency,
            &total,
            timing,
            &total_batches,
            &config.output.percentiles,
        );
        if config.is_open_loop() {
            checks.push(checks::steady_state(
                total_batches
                    .get(&Metric::Response)
                    .map_or(&[][..], Vec::as_slice),
                &batches.total_on_time(),
            ));
        }
        let commands = command_reports(outcome, command_names, reads, timing, batches);
        let counts = Counts::of(&total, outcome.in_flight_at_end, reads.contains(&true));
        // Balanced reports get no accounting line, so closed-loop output keeps
        // redis-benchmark's shape.
        checks.extend(checks::accounting(&counts));
        checks.extend(checks::error_replies(&counts));
        checks.extend(checks::unanswered(&counts, outcome.stopped_early.is_some()));
        let valid = checks.iter().all(|c| c.verdict != Verdict::Fail) && counts.not_sent == 0;
        let measured_secs = outcome.measured.as_secs_f64();
        let excluded_from_latency = counts.excluded_from_latency();
        let mut report = TestReport {
            name: name.to_string(),
            target_rate_per_sec: config.plan.own_rate_per_sec(),
            achieved_rate_per_sec: outcome.achieved_rate_per_sec,
            offered_rate_per_sec: config
                .plan
                .own_rate_per_sec()
                .filter(|_| measured_secs > 0.0)
                .map(|_| counts.intended as f64 / measured_secs),
            throughput_per_sec: outcome.throughput_per_sec,
            sent_bytes: outcome.record.sent_bytes,
            received_bytes: outcome.record.received_bytes,
            sent_bytes_per_sec: outcome.sent_bytes_per_sec,
            received_bytes_per_sec: outcome.received_bytes_per_sec,
            measured_secs,
            started_at_unix_secs: outcome
                .started_at
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64(),
            counts,
            latency,
            commands,
            checks,
            valid,
            stopped_early: outcome.stopped_early.clone(),
            generator_cpu: outcome.thread_cpu.clone(),
            intervals,
            nodes: node_reports(cluster, outcome, batches),
            batches: config.plan.mode.workers().map(|_| Batches {
                writes: outcome.record.writes,
                mean_requests_per_write: if outcome.record.writes == 0 {
                    0.0
                } else {
                    total.sent as f64 / outcome.record.writes as f64
                },
            }),
            reconnects: outcome.connections.reconnects,
            outages: outage_reports(&outcome.connections),
            outages_left_out: outcome.connections.outages_left_out,
            layout_changes: layout_changes(outcome),
            layout_changes_left_out: outcome.layout.as_ref().map_or(0, |l| l.changes_left_out),
            layout_reads: outcome.layout.as_ref().map_or(0, |l| l.reads),
            excluded_from_latency,
            server: None,
            bottleneck: None,
            tail: None,
            slo: None,
            repeat: None,
            start_skew_ns: outcome.start_skew_ns,
            arrivals: match config.plan.mode {
                Mode::Open {
                    arrival: ArrivalSource::Process(ArrivalProcess::Poisson),
                    ..
                } if config.plan.shard.is_split() => checks::arrival_windows(outcome),
                _ => None,
            },
            response_windows: total_batches
                .get(&Metric::Response)
                .and_then(|b| ResponseWindows::of(b)),
            host: None,
        };
        report.attribute_tail(config, batches);
        report
    }

    /// With its tail attributed from its whole histograms over the response p99 (no
    /// batches: a merged report's shards each kept their own) and its bottleneck judged.
    pub(crate) fn judged(mut self) -> Self {
        let bound = self
            .response()
            .and_then(|r| r.histogram())
            .and_then(|h| tail::bound(&h, &[]));
        self.tail = bound
            .and_then(|b| tail::attribute(&self, &b, None))
            .map(|(t, _)| t);
        self.bottleneck = Some(bottleneck::judge(&self));
        self
    }

    /// Attributes the replies over the bound (the objectives' of `config` nearest to
    /// failing, or the response p99) to their causes, placed with `batches` and the
    /// host's figures where they were added; the host's part by batch goes to its
    /// figures. Then judges the bottleneck again.
    pub fn attribute_tail(&mut self, config: &RunConfig, batches: &BatchSeries) {
        let (response, service, lag, on_time) = (
            batches.total(Metric::Response),
            batches.total(Metric::Service),
            batches.total(Metric::Lag),
            batches.total_on_time(),
        );
        let placed = tail::Batches {
            response: &response,
            on_time: &on_time,
            service: &service,
            lag: &lag,
        };
        let bound = self
            .response()
            .and_then(|r| r.histogram())
            .and_then(|h| tail::bound(&h, &checks::objectives(config)));
        if let Some((causes, in_waits)) =
            bound.and_then(|b| tail::attribute(self, &b, Some(&placed)))
        {
            if let Some(host) = self.host.as_mut() {
                host.tail = in_waits;
            }
            self.tail = Some(causes);
        }
        self.bottleneck = Some(bottleneck::judge(self));
    }

    /// Adds the server's view of the test, and the check of its count against tailrate's
    /// when `own` (the server saw only this process's requests: a shard's server also
    /// counts the other shards', so its count is judged on the merged result).
    pub fn add_server_view(&mut self, view: crate::report::server::ServerView, own: bool) {
        if let Some(check) = checks::server_count(&view, &self.counts).filter(|_| own) {
            self.valid &= check.verdict != Verdict::Fail;
            self.checks.push(check);
        }
        self.server = Some(view);
        self.bottleneck = Some(bottleneck::judge(self));
    }

    /// Adds the host's figures; [`TestReport::attribute_tail`] then places the slow
    /// replies among its waits.
    pub fn add_host(&mut self, host: crate::report::host::HostReport) {
        self.host = Some(host);
    }
}

/// A mix's commands, one report each (none for a single command: the test's is its own);
/// `reads` says which commands' replies count as hits and misses.
fn command_reports(
    outcome: &RunOutcome,
    command_names: &[String],
    reads: &[bool],
    timing: Timing,
    batches: &BatchSeries,
) -> Vec<CommandReport> {
    if outcome.record.commands.len() <= 1 {
        return Vec::new();
    }
    let no_batches = BTreeMap::new();
    outcome
        .record
        .commands
        .iter()
        .zip(command_names)
        .enumerate()
        .map(|(i, (rec, name))| CommandReport {
            command: name.clone(),
            counts: Counts::of(rec, 0, reads.get(i).copied().unwrap_or(false)),
            latency: latency_map(rec, timing, batches.commands.get(i).unwrap_or(&no_batches)),
        })
        .collect()
}

/// The outages of a run, in seconds from its start.
pub(super) fn outage_reports(events: &crate::drive::ConnectionEvents) -> Vec<OutageReport> {
    events
        .outages
        .iter()
        .map(|o| OutageReport {
            start_secs: o.start.as_secs_f64(),
            length_secs: o.end.saturating_sub(o.start).as_secs_f64(),
            at_least_secs: o.last_failed.saturating_sub(o.start).as_secs_f64(),
            cause: o.cause.clone(),
            until_end: o.until_end,
        })
        .collect()
}

/// The layout's changes during the run, for the report.
fn layout_changes(outcome: &RunOutcome) -> Vec<LayoutChangeReport> {
    let Some(layout) = &outcome.layout else {
        return Vec::new();
    };
    layout
        .changes
        .iter()
        .map(|c| LayoutChangeReport {
            at_secs: c.at.as_secs_f64(),
            from: c.from.as_ref().map(ToString::to_string),
            to: c.to.to_string(),
            slots: c.slots,
        })
        .collect()
}

/// One report per master of the starting layout, and per master learned during the run
/// that was sent anything (a replica promoted, a master added).
fn node_reports(
    cluster: Option<&ClusterMap>,
    outcome: &RunOutcome,
    batches: &BatchSeries,
) -> Vec<NodeReport> {
    let Some(map) = cluster else {
        return Vec::new();
    };
    let record = &outcome.record;
    let empty = crate::record::NodeRecord::default();
    let nodes = outcome
        .layout
        .as_ref()
        .map_or_else(|| map.nodes.clone(), |l| l.nodes.clone());
    nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| *i < map.nodes.len() || record.nodes.get(*i).is_some_and(|r| r.sent > 0))
        .map(|(i, node)| {
            let r = record.nodes.get(i).unwrap_or(&empty);
            NodeReport {
                node: node.to_string(),
                sent: r.sent,
                completed: r.completed,
                errors: r.errors,
                moved: r.moved,
                ask: r.ask,
                response: Latency::of(
                    &r.response.to_histogram(),
                    batches.nodes.get(i).map_or(&[][..], Vec::as_slice),
                ),
            }
        })
        .collect()
}

/// Adds `--percentiles`' choice to every metric of `latency`, estimated from `rec`'s
/// histograms and `batches` as the fixed percentiles are.
fn choose(
    latency: &mut BTreeMap<Metric, Latency>,
    rec: &CommandRecord,
    timing: Timing,
    batches: &BTreeMap<Metric, Vec<Batch>>,
    percentiles: &[f64],
) {
    if percentiles.is_empty() {
        return;
    }
    for metric in Metric::ALL {
        let (Some(l), Some(h)) = (latency.get_mut(&metric), rec.hist.of(metric, timing)) else {
            continue;
        };
        let batches = batches.get(&metric).map_or(&[][..], Vec::as_slice);
        l.chosen = percentiles
            .iter()
            .filter_map(|&p| ChosenPercentile::of(&h, batches, p))
            .collect();
        crate::report::chosen::make_monotone(&mut l.chosen);
    }
}

/// The latency metrics of `rec` in a run of `timing`: response and service time always
/// (one histogram in a plain closed loop), lag in open loop, queue wait in open loop (the
/// wait for a free connection) and with `--workers` (the wait in the batch).
fn latency_map(
    rec: &CommandRecord,
    timing: Timing,
    batches: &BTreeMap<Metric, Vec<Batch>>,
) -> BTreeMap<Metric, Latency> {
    Metric::ALL
        .into_iter()
        .filter_map(|metric| {
            Some((
                metric,
                Latency::of(
                    &rec.hist.of(metric, timing)?,
                    batches.get(&metric).map_or(&[][..], Vec::as_slice),
                ),
            ))
        })
        .collect()
}
