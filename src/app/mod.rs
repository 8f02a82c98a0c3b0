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
mod session;

use session::Session;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};

pub(crate) use campaign::{Campaign, Halt, run_campaign};
pub use measure::measure;
pub use probe::server_facts;

use crate::config::RunConfig;
use crate::drive::Cancel;
use crate::export::outputs::Outputs;
use crate::export::run_lines;
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
        let flag = config.connections_flag();
        if crate::net::fds::ensure_for(flag, clients, learned, threads).is_err() {
            crate::net::fds::ensure_for(flag, clients, cluster.nodes.len(), threads)?;
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
    let mut outputs = Outputs::new(stdout, &config.destinations());
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
        outputs,
    };
    let status = session.run_tests()?;
    session.finish()?;
    Ok(status)
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
