//! Orchestration: ask the server about itself (`probe`), run each test (`measure`),
//! and export every report after each test. Commands of many runs (`sweep`, `tune`)
//! share the frame in `campaign`. Errors get their context here (`anyhow`).

mod beside;
mod build;
mod campaign;
mod intervals;
mod measure;
pub mod metrics;
mod prefill;
mod probe;
mod server_events;
mod server_view;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};

pub(crate) use campaign::{Campaign, Halt, run_campaign};
pub use measure::measure;
pub use probe::server_facts;

use crate::config::RunConfig;
use crate::drive::Cancel;
use crate::export::Exporter;
use crate::export::csv::Csv;
use crate::export::hlog::HlogWriter;
use crate::export::outputs::Outputs;
use crate::export::run_lines;
use crate::export::run_text::Text;
use crate::net::Connection;
use crate::net::cluster::ClusterMap;
use crate::report::{Header, RunReport, ServerFacts, Settings};
use crate::workload::Test;

/// What the probe learned: the server's facts, for the report, and a cluster's layout
/// (`None` for one server), for the run: requests are routed by it, and it is not reported.
pub(crate) type Probed = (ServerFacts, Option<Arc<ClusterMap>>);

/// How a run ended, for the exit code (decided in `main`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Every test ran.
    Completed,
    /// A self-check failed and `--strict` was given.
    Invalid,
    /// No request of a test got a reply other than an error (as redis-benchmark, a failed
    /// run without `--strict`); the sentence says which test and how its requests ended.
    /// Results were written.
    NothingSucceeded(String),
    /// A test failed an objective of `--slo` (or, with `--strict`, left one undecided);
    /// the sentence says which. Results were written.
    ObjectiveMissed(String),
    /// The run stopped on an error (exit-on-error, a lost server); results were written.
    Failed(String),
    /// Ctrl+C or SIGTERM; results were written.
    Interrupted,
}

/// Where output goes; tests pass buffers.
pub struct Io<'a> {
    /// Reports.
    pub stdout: &'a mut dyn Write,
    /// Progress and warnings.
    pub stderr: &'a mut dyn Write,
    /// Whether stderr is a terminal (progress is drawn only then).
    pub stderr_is_terminal: bool,
    /// The live Prometheus page (`--metrics-listen`), served by the caller.
    pub metrics: Option<&'a metrics::Metrics>,
}

/// Asks the server about itself ([`server_facts`]) and shows what it noted; `None` when
/// Ctrl+C (`cancel`) came first, noted on `stderr`.
pub(crate) fn probe(
    config: &RunConfig,
    cancel: &Cancel,
    stderr: &mut dyn Write,
) -> Result<Option<Probed>> {
    let probed = server_facts(config, cancel)
        .with_context(|| format!("connecting to {}", config.plan.endpoint))?;
    let Some((server, cluster)) = probed else {
        run_lines::interrupted_while_connecting(stderr, &config.plan.endpoint.to_string())?;
        return Ok(None);
    };
    run_lines::notes(stderr, &server.notes)?;
    Ok(Some((server, cluster)))
}

/// Makes room in the open-file limit for a cluster's connections (the run's own were
/// made room for before it started, one per client: `main`): for every master the run
/// keeps a place for (replicas promoted, masters added) where the hard limit allows, and
/// at least for the starting masters. A master learned without room would fail each
/// connect with "too many open files" as if it were down.
fn room_for_cluster(config: &RunConfig, cluster: Option<&ClusterMap>) -> Result<()> {
    if let Some(cluster) = cluster.filter(|c| c.nodes.len() > 1) {
        let (clients, threads) = (config.plan.connections, config.plan.threads);
        let learned = crate::drive::room_for_masters(cluster);
        if crate::net::fds::ensure_for(clients, learned, threads).is_err() {
            crate::net::fds::ensure_for(clients, cluster.nodes.len(), threads)?;
        }
    }
    Ok(())
}

/// The one test a command of many runs measures: the first, with a note when no `-t`
/// chose it (`doing` is what the command does with it: "sweeping", "tuning").
pub(crate) fn single_test<'c>(
    config: &'c RunConfig,
    doing: &str,
    stderr: &mut dyn Write,
) -> Result<&'c Test> {
    let tests = &config.plan.workload.tests;
    let test = tests.first().context("the workload has no test")?;
    if tests.len() > 1 {
        run_lines::first_test_taken(stderr, doing, &test.name)?;
    }
    Ok(test)
}

/// The loops of `--contrast`: the open loop as given, then the rate-capped and the plain
/// closed loop on the same connections for the same time, one request in flight per
/// connection and no warm-up (as the tools they stand for run).
fn contrast_loops(config: &RunConfig) -> Vec<(Option<String>, RunConfig)> {
    // This shard's rate: its closed loops stand for what it sent.
    let rate = config.plan.own_rate_per_sec();
    let closed = |cap: Option<f64>| {
        let mut c = config.clone();
        c.plan.mode = crate::drive::Mode::Closed {
            pipeline: 1,
            rate_cap: cap.map(|per_sec| crate::drive::RateCap {
                per_sec,
                pacing: config.cap_pacing,
            }),
            workers: None,
        };
        c.plan.warmup = Duration::ZERO;
        c
    };
    vec![
        (None, config.clone()),
        (
            Some(format!(
                "rate-capped closed loop at {:.0}/s",
                rate.unwrap_or(0.0)
            )),
            closed(rate),
        ),
        (Some("closed loop".into()), closed(None)),
    ]
}

/// Runs every test of `config` and exports the results.
pub fn run(
    config: &RunConfig,
    command_line: Vec<String>,
    cancel: &Cancel,
    io: Io<'_>,
) -> Result<Status> {
    let Io {
        stdout,
        stderr,
        stderr_is_terminal,
        metrics,
    } = io;
    // Interrupted before the server answered: the run ends at once as interrupted (the
    // loop below sees it before any test), and its outputs are written, with no tests.
    let (server, cluster) = match probe(config, cancel, stderr)? {
        Some(probed) => probed,
        None => {
            let endpoint = config.plan.endpoint.to_string();
            (
                ServerFacts {
                    endpoint,
                    ..ServerFacts::default()
                },
                None,
            )
        }
    };
    room_for_cluster(config, cluster.as_deref())?;
    if config.idle {
        return idle(config, cancel, stderr);
    }

    let report = RunReport {
        header: Header::new(
            crate::report::SCHEMA_VERSION,
            command_line,
            config.plan.seed,
            server,
        ),
        settings: Settings::of(config),
        tests: Vec::new(),
        contrasts: Vec::new(),
        repeats: Vec::new(),
        merge: None,
    };
    let mut outputs = Outputs::new(
        stdout,
        config.output.json.clone(),
        config.output.hdr_log.clone(),
    )
    .with_html(config.output.html.clone());
    let exporters = stdout_exporters(config, &outputs);
    let started = SystemTime::now();
    let run_start = Instant::now();
    let hlog = outputs.open_hdr_log(started, &hlog_comment(config))?;
    let mut session = Session {
        config,
        cluster,
        cancel,
        stderr,
        stderr_is_terminal,
        metrics,
        hlog,
        run_start,
        report,
        exporters,
        outputs,
    };
    let status = session.run_tests()?;
    session.finish()?;
    Ok(status)
}

/// The forms of the report on standard output: the CSV or the text, unless an output
/// given `-` has it.
fn stdout_exporters(config: &RunConfig, outputs: &Outputs<'_>) -> Vec<Box<dyn Exporter>> {
    let mut exporters: Vec<Box<dyn Exporter>> = Vec::new();
    if !outputs.shows_text() {
    } else if config.output.csv {
        exporters.push(Box::new(Csv::default()));
    } else {
        exporters.push(Box::new(Text {
            quiet: config.output.quiet,
            precision: config.output.precision,
        }));
    }
    exporters
}

/// The first line of the `--hdr-log`: the tool, the seed, and the shard's place in its
/// plan, for `tailrate merge` to pair logs with reports.
fn hlog_comment(config: &RunConfig) -> String {
    let shard = config.plan.shard;
    format!(
        "tailrate {} seed {}{}",
        env!("CARGO_PKG_VERSION"),
        config.plan.seed,
        if shard.is_split() {
            format!(" shard {}/{}", shard.index, shard.count)
        } else {
            String::new()
        }
    )
}

/// A plain run under way: what it measures with, the report so far, and where each test's
/// report goes as it ends.
struct Session<'c, 'a> {
    config: &'c RunConfig,
    cluster: Option<Arc<ClusterMap>>,
    cancel: &'c Cancel,
    stderr: &'a mut dyn Write,
    stderr_is_terminal: bool,
    /// The live Prometheus page, if served.
    metrics: Option<&'a metrics::Metrics>,
    /// `--hdr-log`, written as intervals end.
    hlog: Option<HlogWriter<'a>>,
    /// When the run began: the log counts each test's intervals from it.
    run_start: Instant,
    report: RunReport,
    /// The forms of the report on standard output.
    exporters: Vec<Box<dyn Exporter>>,
    outputs: Outputs<'a>,
}

impl Session<'_, '_> {
    /// Every test in order (over and over with `-l`), until one stops the run or Ctrl+C
    /// comes; returns how the run ended.
    fn run_tests(&mut self) -> Result<Status> {
        let mut status = Status::Completed;
        loop {
            for index in 0..self.config.plan.workload.tests.len() {
                // Ctrl+C between two tests (a looping run's only way to end) ends the run
                // as interrupted, as it does during a test.
                if self.cancel.is_cancelled() {
                    return Ok(Status::Interrupted);
                }
                if let Some(end) = self.test(index, &mut status)? {
                    return Ok(end);
                }
            }
            if !self.config.loop_forever {
                return Ok(status);
            }
        }
    }

    /// Test `index`: each repeat of the test, and with --contrast of its two closed loops
    /// after it, each exported as it ends; then the repeats' summaries and the contrast.
    /// Marks `status` failed when no request of a run got a reply other than an error, and
    /// invalid under `--strict` when a check fails; returns how the run ends when a
    /// measurement stopped early.
    fn test(&mut self, index: usize, status: &mut Status) -> Result<Option<Status>> {
        let config = self.config;
        let loops = if config.contrast {
            contrast_loops(config)
        } else {
            vec![(None, config.clone())]
        };
        let first = self.report.tests.len();
        let repeats = config.repeat.max(1);
        let runs = (1..=repeats).flat_map(|r| loops.iter().map(move |l| (r, l)));
        for (repeat, (kind, loop_config)) in runs {
            let repeat = (repeats > 1).then_some(repeat);
            let stopped_early = self.measure_once(loop_config, index, kind.as_deref(), repeat)?;
            let last = self.report.tests.last();
            // The first test that got nothing names the failure; a failed check under
            // --strict is the lesser one.
            if let Some(reason) = last.and_then(run_lines::nothing_succeeded) {
                if !matches!(status, Status::NothingSucceeded(_)) {
                    *status = Status::NothingSucceeded(reason);
                }
            } else if let Some(reason) = last
                .filter(|_| repeats == 1)
                .and_then(|t| objective_missed(t, config.strict))
            {
                if matches!(status, Status::Completed | Status::Invalid) {
                    *status = Status::ObjectiveMissed(reason);
                }
            } else if config.strict
                && last.is_some_and(|t| !t.valid)
                && *status == Status::Completed
            {
                *status = Status::Invalid;
            }
            if let Some(reason) = stopped_early {
                return Ok(Some(if reason == "interrupted" {
                    Status::Interrupted
                } else {
                    Status::Failed(reason)
                }));
            }
        }
        self.summarise(index, first, loops.len());
        // With repeats, the objectives are decided on all of them pooled, not run by run.
        let pooled = self.report.repeats.last().filter(|_| repeats > 1);
        if let Some(reason) = pooled.and_then(|s| pooled_objective_missed(s, config.strict))
            && matches!(status, Status::Completed | Status::Invalid)
        {
            *status = Status::ObjectiveMissed(reason);
        }
        Ok(None)
    }

    /// Measures test `index` once as `loop_config` says (`kind` names a contrast's closed
    /// loop; `repeat` is its place among `--repeat`'s), adds it to the report and exports
    /// it; returns why it stopped early, if it did.
    fn measure_once(
        &mut self,
        loop_config: &RunConfig,
        index: usize,
        kind: Option<&str>,
        repeat: Option<u32>,
    ) -> Result<Option<String>> {
        let test_offset = self.run_start.elapsed();
        let name = &loop_config.plan.workload.tests[index].name;
        let live = self.metrics.map(|metrics| metrics::Scope {
            metrics,
            labels: vec![(
                "test".to_string(),
                kind.map_or_else(|| name.clone(), |kind| format!("{name} ({kind})")),
            )],
        });
        let (mut test_report, stopped_early) = measure(
            loop_config,
            self.cluster.as_ref(),
            index,
            self.cancel,
            &mut *self.stderr,
            self.stderr_is_terminal,
            self.hlog.as_mut(),
            test_offset,
            live,
        )?;
        if let Some(kind) = kind {
            test_report.name = format!("{} ({kind})", test_report.name);
        } else if !loop_config.slos.is_empty() {
            // The objectives are the test's own: a contrast's closed loops are beside it.
            test_report.slo = Some(crate::judge::slo::judge(&test_report, &loop_config.slos));
        }
        if repeat.is_some() {
            test_report.repeat = repeat;
        }
        self.report.tests.push(test_report);
        let (report, test) = (
            &self.report,
            &self.report.tests[self.report.tests.len() - 1],
        );
        for exporter in self.exporters.iter_mut() {
            exporter
                .test_done(self.outputs.text(), report, test)
                .context("writing results")?;
        }
        self.outputs.save_json_so_far(report)?;
        self.outputs.text().flush().ok();
        Ok(stopped_early)
    }

    /// After test `index`, whose runs begin at `first` in the report, `loops` to a repeat:
    /// each loop's repeats, summarised; the contrast of the first repeat's loops.
    fn summarise(&mut self, index: usize, first: usize, loops: usize) {
        let config = self.config;
        let report = &mut self.report;
        if config.repeat.max(1) > 1 {
            for l in 0..loops {
                let runs: Vec<&crate::report::TestReport> = report.tests[first..]
                    .iter()
                    .skip(l)
                    .step_by(loops)
                    .collect();
                let mut summary = crate::report::repeats::RepeatSummary::of(&runs);
                // The objectives are the test's own loop's, the first (see measure_once).
                if let Some(s) = summary.as_mut().filter(|_| l == 0) {
                    s.judge(&runs, &config.slos);
                }
                report.repeats.extend(summary);
            }
        }
        if let ([open, capped, closed, ..], Some(rate)) =
            (&report.tests[first..], config.plan.own_rate_per_sec())
            && config.contrast
        {
            let contrast = crate::report::contrast::Contrast::of(
                &config.plan.workload.tests[index].name,
                rate,
                config.plan.connections,
                config.cap_pacing,
                [open, capped, closed],
            );
            report.contrasts.push(contrast);
        }
    }

    /// The run's end (or interruption): the closing sections, the whole `--json`, and
    /// the `--html` page.
    fn finish(&mut self) -> Result<()> {
        for exporter in self.exporters.iter_mut() {
            exporter
                .run_done(self.outputs.text(), &self.report)
                .context("writing results")?;
        }
        self.outputs.save_json(&self.report)?;
        let report = &self.report;
        self.outputs
            .save_html(|| Ok(crate::export::html::run(report)))
    }
}

/// Why `test` ends the run with exit 1 under its objectives: one failed, or (`strict`)
/// one was left undecided; `None` when they passed or there are none.
fn objective_missed(test: &crate::report::TestReport, strict: bool) -> Option<String> {
    use crate::report::sweep::Verdict;
    let slo = test.slo.as_ref()?;
    let verdict = slo.verdict?;
    let judged = crate::export::objective_text::verdicts(slo);
    match verdict {
        Verdict::Fail => Some(format!("{} failed its objectives: {judged}", test.name)),
        Verdict::Uncertain if strict => Some(format!(
            "{} left its objectives undecided and --strict was given: {judged}",
            test.name
        )),
        _ => None,
    }
}

/// Why the repeats `summary` pooled end the run with exit 1 under their objectives (see
/// [`objective_missed`]).
fn pooled_objective_missed(
    summary: &crate::report::repeats::RepeatSummary,
    strict: bool,
) -> Option<String> {
    use crate::report::sweep::Verdict;
    let judged = summary.objectives.as_ref()?;
    let what = format!(
        "{} over its {} repeats pooled",
        summary.test, summary.repeats
    );
    match judged.verdict {
        Verdict::Fail => Some(format!("{what} failed its objectives: {}", judged.why)),
        Verdict::Uncertain if strict => Some(format!(
            "{what} left its objectives undecided and --strict was given: {}",
            judged.why
        )),
        _ => None,
    }
}

/// `-I`: opens the connections and waits until interrupted, or for `--duration`.
fn idle(config: &RunConfig, cancel: &Cancel, stderr: &mut dyn Write) -> Result<Status> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Only a typed --duration ends it: the default request count has no meaning here.
    let how_long = match config.plan.stop {
        crate::drive::Stop::After(d) => Some(d),
        crate::drive::Stop::Requests(_) => None,
    };
    run_lines::idle_start(stderr, config.plan.connections, how_long)?;
    runtime.block_on(async {
        let mut conns = Vec::with_capacity(config.plan.connections);
        for _ in 0..config.plan.connections {
            let opening = Connection::open(
                &config.plan.endpoint,
                &config.plan.handshake,
                config.plan.connect_timeout,
                config.plan.limits,
            );
            let Some(opened) = cancel.or_cancelled(opening).await else {
                return Ok(Status::Interrupted);
            };
            conns.push(opened.with_context(|| format!("connecting to {}", config.plan.endpoint))?);
        }
        run_lines::idle_open(stderr, conns.len())?;
        let waiting = async {
            match how_long {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        Ok(match cancel.or_cancelled(waiting).await {
            Some(()) => Status::Completed,
            None => Status::Interrupted,
        })
    })
}
