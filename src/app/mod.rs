//! Orchestration: ask the server about itself (`probe`), run each test (`measure`),
//! and export every report after each test. Commands of many runs (`sweep`, `tune`)
//! share the frame in `campaign`. Errors get their context here (`anyhow`).

mod build;
mod campaign;
mod intervals;
mod measure;
mod probe;
mod server_view;

use std::io::Write;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};

pub(crate) use campaign::{Campaign, Halt, run_campaign};
pub use measure::measure;
pub use probe::server_facts;

use crate::config::RunConfig;
use crate::drive::Cancel;
use crate::export::Exporter;
use crate::export::csv::Csv;
use crate::export::hlog::HlogWriter;
use crate::export::json::JsonFile;
use crate::export::run_text::Text;
use crate::net::Connection;
use crate::output::is_stdout;
use crate::report::{Header, RunReport, ServerFacts, Settings};
use crate::workload::Test;

/// How a run ended, for the exit code (decided in `main`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Every test ran.
    Completed,
    /// A self-check failed and `--strict` was given.
    Invalid,
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
}

/// Asks the server about itself ([`server_facts`]) and prints what it noted; `None` when
/// Ctrl+C (`cancel`) came first, noted on `stderr`.
pub(crate) fn probe(
    config: &RunConfig,
    cancel: &Cancel,
    stderr: &mut dyn Write,
) -> Result<Option<ServerFacts>> {
    let server = server_facts(config, cancel)
        .with_context(|| format!("connecting to {}", config.plan.endpoint))?;
    let Some(server) = server else {
        writeln!(
            stderr,
            "note: interrupted while connecting to {}: nothing was measured",
            config.plan.endpoint
        )?;
        return Ok(None);
    };
    for note in &server.notes {
        writeln!(stderr, "note: {note}")?;
    }
    Ok(Some(server))
}

/// Makes room in the open-file limit for a cluster's connections (the run's own were
/// made room for before it started, one per client: `main`): for every master the run
/// keeps a place for (replicas promoted, masters added) where the hard limit allows, and
/// at least for the starting masters. A master learned without room would fail each
/// connect with "too many open files" as if it were down.
fn room_for_cluster(config: &RunConfig, server: &ServerFacts) -> Result<()> {
    if let Some(cluster) = server.cluster.as_ref().filter(|c| c.nodes.len() > 1) {
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
        writeln!(
            stderr,
            "note: no -t given: {doing} {}, the first default test (choose one with -t, or \
             give a custom command)",
            test.name
        )?;
    }
    Ok(test)
}

/// The loops of `--contrast`: the open loop as given, then the rate-capped and the plain
/// closed loop on the same connections for the same time, one request in flight per
/// connection and no warm-up (as the tools they stand for run).
fn contrast_loops(config: &RunConfig) -> Vec<(Option<String>, RunConfig)> {
    let rate = config.plan.mode.rate_per_sec();
    let closed = |cap: Option<f64>| {
        let mut c = config.clone();
        c.plan.mode = crate::drive::Mode::Closed {
            pipeline: 1,
            rate_cap_per_sec: cap,
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
    } = io;
    // Interrupted before the server answered: the run ends at once as interrupted (the
    // loop below sees it before any test), and its outputs are written, with no tests.
    let server = match probe(config, cancel, stderr)? {
        Some(server) => server,
        None => ServerFacts {
            endpoint: config.plan.endpoint.to_string(),
            ..ServerFacts::default()
        },
    };
    room_for_cluster(config, &server)?;
    let cluster = server.cluster.clone();
    if config.idle {
        return idle(config, cancel, stderr);
    }

    let mut report = RunReport {
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
    let to_stdout = |path: &Option<std::path::PathBuf>| path.as_deref().is_some_and(is_stdout);
    let (json_to_stdout, hlog_to_stdout) = (
        to_stdout(&config.output.json),
        to_stdout(&config.output.hdr_log),
    );
    let mut exporters: Vec<Box<dyn Exporter>> = Vec::new();
    // An output given `-` has standard output to itself: a text or CSV report would mix in.
    if json_to_stdout || hlog_to_stdout {
    } else if config.output.csv {
        exporters.push(Box::new(Csv::default()));
    } else {
        exporters.push(Box::new(Text {
            quiet: config.output.quiet,
            precision: config.output.precision,
        }));
    }
    if let Some(path) = &config.output.json {
        exporters.push(Box::new(JsonFile { path: path.clone() }));
    }
    let started = SystemTime::now();
    let run_start = std::time::Instant::now();
    // The shard's place in its plan, for `tailrate merge` to pair logs with reports.
    let shard = config.plan.shard;
    let comment = format!(
        "tailrate {} seed {}{}",
        env!("CARGO_PKG_VERSION"),
        config.plan.seed,
        if shard.is_split() {
            format!(" shard {}/{}", shard.index, shard.count)
        } else {
            String::new()
        }
    );
    let mut no_report = std::io::sink();
    let (stdout, mut hlog): (&mut dyn Write, _) = match &config.output.hdr_log {
        Some(_) if hlog_to_stdout => {
            let name = "standard output".to_string();
            let log = HlogWriter::to_writer(Box::new(stdout), name, started, &comment)
                .context("writing --hdr-log")?;
            (&mut no_report, Some(log))
        }
        Some(path) => {
            let log = HlogWriter::create(path, started, &comment)
                .with_context(|| format!("creating --hdr-log file {}", path.display()))?;
            (stdout, Some(log))
        }
        None => (stdout, None),
    };

    let mut status = Status::Completed;
    'tests: loop {
        for index in 0..config.plan.workload.tests.len() {
            // Ctrl+C between two tests (a looping run's only way to end) ends the run as
            // interrupted, as it does during a test.
            if cancel.is_cancelled() {
                status = Status::Interrupted;
                break 'tests;
            }
            // The test, and with --contrast its two closed loops after it, each exported
            // as it ends.
            let loops = if config.contrast {
                contrast_loops(config)
            } else {
                vec![(None, config.clone())]
            };
            let first = report.tests.len();
            let repeats = config.repeat.max(1);
            let runs = (1..=repeats).flat_map(|r| loops.iter().map(move |l| (r, l)));
            for (repeat, (kind, loop_config)) in runs {
                let test_offset = run_start.elapsed();
                let (mut test_report, stopped_early) = measure(
                    loop_config,
                    cluster.as_ref(),
                    index,
                    cancel,
                    &mut *stderr,
                    stderr_is_terminal,
                    hlog.as_mut(),
                    test_offset,
                )?;
                if let Some(kind) = kind {
                    test_report.name = format!("{} ({kind})", test_report.name);
                }
                if repeats > 1 {
                    test_report.repeat = Some(repeat);
                }
                report.tests.push(test_report);
                let (report_ref, test_ref) = (&report, &report.tests[report.tests.len() - 1]);
                for exporter in exporters.iter_mut() {
                    exporter
                        .test_done(stdout, report_ref, test_ref)
                        .context("writing results")?;
                }
                stdout.flush().ok();
                if config.strict && !test_ref.valid {
                    status = Status::Invalid;
                }
                if let Some(reason) = &stopped_early {
                    status = if reason == "interrupted" {
                        Status::Interrupted
                    } else {
                        Status::Failed(reason.clone())
                    };
                    break 'tests;
                }
            }
            // Each loop's repeats, summarised; the contrast is of the first repeat's loops.
            if repeats > 1 {
                for l in 0..loops.len() {
                    let runs: Vec<&crate::report::TestReport> = report.tests[first..]
                        .iter()
                        .skip(l)
                        .step_by(loops.len())
                        .collect();
                    report
                        .repeats
                        .extend(crate::report::repeats::RepeatSummary::of(&runs));
                }
            }
            if let ([open, capped, closed, ..], Some(rate)) =
                (&report.tests[first..], config.plan.mode.rate_per_sec())
                && config.contrast
            {
                let contrast = crate::report::contrast::Contrast::of(
                    &config.plan.workload.tests[index].name,
                    rate,
                    config.plan.connections,
                    [open, capped, closed],
                );
                report.contrasts.push(contrast);
            }
        }
        if !config.loop_forever {
            break;
        }
    }
    for exporter in exporters.iter_mut() {
        exporter
            .run_done(stdout, &report)
            .context("writing results")?;
    }
    Ok(status)
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
    match how_long {
        Some(d) => writeln!(
            stderr,
            "Creating {} idle connections and waiting {} (Ctrl+C to end sooner)",
            config.plan.connections,
            humantime::format_duration(d)
        )?,
        None => writeln!(
            stderr,
            "Creating {} idle connections and waiting forever (Ctrl+C when done)",
            config.plan.connections
        )?,
    }
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
        writeln!(stderr, "clients: {}", conns.len())?;
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
