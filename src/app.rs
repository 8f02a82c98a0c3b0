//! Orchestration: ask the server about itself, run each test through the driver,
//! feed the interval stream to progress and the .hlog, build reports, and export
//! them after every test. Errors get their context here (`anyhow`).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};

use crate::config::RunConfig;
use crate::drive::Mode;
use crate::drive::health::{Check, Verdict};
use crate::drive::{self, Cancel, Interval};
use crate::net::cluster::ClusterMap;
use crate::net::{Connection, NetError};
use crate::progress::Progress;
use crate::record::{CommandRecord, Histograms, Metric, Recorder, Timing};
use crate::report::csv::Csv;
use crate::report::hlog::HlogWriter;
use crate::report::json::JsonFile;
use crate::report::text::Text;
use crate::report::{
    Counts, Exporter, IntervalSummary, RunReport, ServerFacts, Settings, TestReport,
};

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

/// Why a command of many runs (`sweep`, `tune`) ended before its plan.
pub(crate) enum Halt {
    /// Ctrl+C or SIGTERM.
    Interrupted,
    /// A run stopped on an error (exit-on-error, a lost server).
    Failed(String),
    /// Something else went wrong (writing a file, connecting).
    Error(anyhow::Error),
}

impl From<anyhow::Error> for Halt {
    fn from(e: anyhow::Error) -> Self {
        Halt::Error(e)
    }
}

impl From<std::io::Error> for Halt {
    fn from(e: std::io::Error) -> Self {
        Halt::Error(e.into())
    }
}

/// A command of many runs whose report is saved however it ends.
pub(crate) trait Campaign {
    /// Every planned run, in order.
    fn run_all(&mut self) -> Result<(), Halt>;
    /// Marks the report: every phase ran (`complete`), or Ctrl+C ended it (`interrupted`).
    fn mark_end(&mut self, complete: bool, interrupted: bool);
    /// Writes the report.
    fn save_report(&self) -> Result<()>;
    /// Prints the closing summary.
    fn print_summary(&mut self) -> Result<()>;
}

/// Runs `campaign` to its end and saves what it measured, also when it ends on an
/// error (which is then returned), then prints its summary.
pub(crate) fn run_campaign(campaign: &mut impl Campaign) -> Result<Status> {
    let status = match campaign.run_all() {
        Ok(()) => {
            campaign.mark_end(true, false);
            Status::Completed
        }
        Err(Halt::Interrupted) => {
            campaign.mark_end(false, true);
            Status::Interrupted
        }
        Err(Halt::Failed(reason)) => Status::Failed(reason),
        Err(Halt::Error(e)) => {
            // Keep what was measured before the error, then report it.
            let _ = campaign.save_report();
            return Err(e);
        }
    };
    campaign.save_report()?;
    campaign.print_summary()?;
    Ok(status)
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
    let server =
        server_facts(config).with_context(|| format!("connecting to {}", config.plan.endpoint))?;
    for note in &server.notes {
        writeln!(stderr, "note: {note}")?;
    }
    let cluster = server.cluster.clone();
    if config.idle {
        return idle(config, cancel, stderr);
    }

    let mut report = RunReport {
        schema_version: crate::report::SCHEMA_VERSION,
        tool: format!("tailrate {}", env!("CARGO_PKG_VERSION")),
        command_line,
        seed: config.plan.seed,
        server,
        settings: Settings::of(config),
        tests: Vec::new(),
    };
    let mut exporters: Vec<Box<dyn Exporter>> = Vec::new();
    if config.output.csv {
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
    let mut hlog = match &config.output.hdr_log {
        Some(path) => Some(
            HlogWriter::create(
                path,
                started,
                &format!(
                    "tailrate {} seed {}",
                    env!("CARGO_PKG_VERSION"),
                    config.plan.seed
                ),
            )
            .with_context(|| format!("creating --hdr-log file {}", path.display()))?,
        ),
        None => None,
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
            let test_offset = run_start.elapsed();
            let (test_report, stopped_early) = measure(
                config,
                cluster.as_ref(),
                index,
                cancel,
                &mut *stderr,
                stderr_is_terminal,
                hlog.as_mut(),
                test_offset,
            )?;
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

/// Runs test `index` of `config` once and builds its report; also returns why it
/// stopped early, if it did. Progress goes to `stderr` when it is a terminal; intervals
/// go to `hlog`, offset by `log_offset` from the log's start.
#[expect(clippy::too_many_arguments, reason = "a test, where it runs, and its three sinks")]
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
    let mut merger = IntervalMerger::new(config.plan.threads);
    let command_names: Vec<String> = test.commands.iter().map(|c| c.name.clone()).collect();
    let mut hlog_error = None;
    let mut emit =
        |merger: &mut IntervalMerger, start: Duration, length: Duration, record: Recorder| {
            if let Some(log) = hlog.as_deref_mut()
                && let Err(e) = write_hlog(
                    log,
                    &test.name,
                    &command_names,
                    config.plan.mode.timing(),
                    log_offset + start,
                    length,
                    &record,
                )
            {
                hlog_error.get_or_insert(e);
            }
            merger.summaries.push(summary(start, length, &record));
            merger.recycle(record);
        };
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
    for (start, length, record) in merger.flush() {
        emit(&mut merger, start, length, record);
    }
    if let Some(e) = hlog_error {
        return Err(e).context("writing --hdr-log");
    }
    let mut report = TestReport::build(
        &test.name,
        config,
        cluster.map(|c| &**c),
        &outcome,
        &command_names,
        std::mem::take(&mut merger.summaries),
    );
    flag_unbalanced(&mut report);
    Ok((report, outcome.stopped_early))
}

/// Marks a report whose counts do not add up invalid, with the failed check saying why.
fn flag_unbalanced(report: &mut TestReport) {
    if let Some(check) = accounting_check(&report.counts) {
        report.checks.push(check);
        report.valid = false;
    }
}

/// A failed `accounting` check when the counts do not balance (`Counts::balanced`);
/// `None` when every request is accounted for. A gap means the driver lost or
/// double-counted requests, so no number of the test can be trusted. Balanced reports
/// get no extra check, so closed-loop output keeps redis-benchmark's shape.
fn accounting_check(c: &Counts) -> Option<Check> {
    if c.balanced() {
        return None;
    }
    let accounted = c.completed + c.errors + c.timeouts + c.not_sent + c.in_flight_at_end;
    Some(Check {
        name: "accounting".into(),
        verdict: Verdict::Fail,
        detail: format!(
            "intended {} but completed {} + errors {} + timeouts {} + not sent {} + in flight at end {} = {accounted}",
            c.intended, c.completed, c.errors, c.timeouts, c.not_sent, c.in_flight_at_end
        ),
        meaning: "requests were lost or counted twice by the generator; no number of this test can be trusted".into(),
    })
}

/// Connects once to learn the server's version and persistence settings; a server that
/// refuses CONFIG or INFO (a proxy) is noted, not fatal. An unreachable server is fatal.
pub fn server_facts(config: &RunConfig) -> Result<ServerFacts> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut conn = Connection::open(&config.plan.endpoint, &config.plan.handshake, config.plan.connect_timeout, config.plan.limits).await?;
        let mut facts = ServerFacts { endpoint: config.plan.endpoint.to_string(), ..Default::default() };
        for key in ["save", "appendonly"] {
            let reply = tokio::time::timeout(config.plan.connect_timeout, conn.call(&[b"CONFIG", b"GET", key.as_bytes()])).await;
            match reply {
                Ok(Ok(reply)) if !reply.is_error() => {
                    let value = match &reply {
                        crate::resp::Reply::Array(items) => items.get(1).and_then(|v| v.as_str()).map(str::to_string),
                        crate::resp::Reply::Map(pairs) => pairs.first().and_then(|(_, v)| v.as_str()).map(str::to_string),
                        _ => None,
                    };
                    match key {
                        "save" => facts.save = value,
                        _ => facts.appendonly = value,
                    }
                }
                Ok(Ok(reply)) if reply.error_message().is_some_and(|m| m.starts_with("NOAUTH")) => {
                    anyhow::bail!("{} requires a password: {reply} (give -a, --user or REDISCLI_AUTH)", config.plan.endpoint);
                }
                Ok(Ok(reply)) => {
                    facts.notes.push(format!("the server refused CONFIG GET {key} ({reply}); its persistence settings are not reported"));
                    break;
                }
                Ok(Err(e)) if closed_by_peer(&e) => {
                    facts.notes.push(format!(
                        "the server refused CONFIG GET {key} (it closed the connection, as twemproxy does); its persistence settings are not reported"
                    ));
                    conn = Connection::open(&config.plan.endpoint, &config.plan.handshake, config.plan.connect_timeout, config.plan.limits).await?;
                    break;
                }
                Ok(Err(e)) => return Err(e.into()),
                Err(_) => {
                    // Silence, not a refusal: a server that does not answer cannot be benchmarked.
                    anyhow::bail!(
                        "{} did not answer CONFIG GET {key} within {:?} (--connect-timeout)",
                        config.plan.endpoint,
                        config.plan.connect_timeout
                    );
                }
            }
        }
        match tokio::time::timeout(config.plan.connect_timeout, conn.call(&[b"INFO", b"server"])).await {
            Ok(Ok(reply)) if !reply.is_error() => {
                let text = reply.as_str().unwrap_or_default();
                facts.version = text.lines().find_map(|l| l.strip_prefix("redis_version:")).map(|v| v.trim().to_string());
            }
            Ok(Ok(_)) | Err(_) => facts.notes.push("the server did not answer INFO server; its version is not reported".into()),
            Ok(Err(e)) if closed_by_peer(&e) => {
                facts.notes.push("the server refused INFO server (it closed the connection, as twemproxy does); its version is not reported".into());
                conn = Connection::open(&config.plan.endpoint, &config.plan.handshake, config.plan.connect_timeout, config.plan.limits).await?;
            }
            Ok(Err(e)) => return Err(e.into()),
        }
        // A cluster node gives the layout requests are routed by. Proxies (which answered
        // no INFO) are not asked unless --cluster says to.
        if config.cluster || facts.version.is_some() {
            let found = tokio::time::timeout(config.plan.connect_timeout, crate::net::cluster::discover(&mut conn)).await;
            match found {
                Ok(Ok(Some(_))) if config.plan.mode.workers().is_some() => {
                    anyhow::bail!("--workers: {} is a Redis Cluster node, and --workers does not route over a cluster (use -c and -P)", config.plan.endpoint);
                }
                Ok(Ok(Some(map))) => {
                    facts.cluster_nodes = map.nodes.iter().map(ToString::to_string).collect();
                    if map.unowned() > 0 {
                        facts.notes.push(format!("{} of the cluster's 16384 slots have no master; their requests fail", map.unowned()));
                    }
                    facts.cluster = Some(std::sync::Arc::new(map));
                }
                Ok(Ok(None)) | Ok(Err(crate::net::cluster::ClusterError::Net(NetError::Closed { .. }))) if config.cluster => {
                    return Err(crate::net::cluster::not_cluster(&config.plan.endpoint.to_string()).into());
                }
                Ok(Ok(None)) => {}
                Ok(Err(e)) => return Err(e.into()),
                Err(_) => anyhow::bail!("{} did not answer INFO cluster within {:?} (--connect-timeout)", config.plan.endpoint, config.plan.connect_timeout),
            }
        }
        // The workload's setup (SCRIPT LOAD for --script-load), once before any test: a
        // refusal is fatal, since every EVALSHA of the run would fail.
        for argv in &config.plan.workload.setup {
            let refs: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
            let what = String::from_utf8_lossy(&argv[..argv.len().min(2)].join(&b' ')).into_owned();
            match tokio::time::timeout(config.plan.connect_timeout, conn.call(&refs)).await {
                Ok(Ok(reply)) if !reply.is_error() => {}
                Ok(Ok(reply)) => anyhow::bail!("{what} (--script-load) was refused: {reply}"),
                Ok(Err(e)) => return Err(e.into()),
                Err(_) => {
                    anyhow::bail!("{} did not answer {what} within {:?} (--connect-timeout)", config.plan.endpoint, config.plan.connect_timeout)
                }
            }
        }
        Ok(facts)
    })
}

/// Whether `e` is how a proxy refuses a command it does not support: twemproxy answers
/// CONFIG, INFO, SELECT and HELLO by closing the connection, not with an error reply.
/// Reopening tells that apart from a server that went away.
fn closed_by_peer(e: &NetError) -> bool {
    match e {
        NetError::Closed { .. } => true,
        NetError::Io { cause, .. } => cause.kind() == std::io::ErrorKind::ConnectionReset,
        _ => false,
    }
}

/// `-I`: opens the connections and waits until interrupted.
fn idle(config: &RunConfig, cancel: &Cancel, stderr: &mut dyn Write) -> Result<Status> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    writeln!(
        stderr,
        "Creating {} idle connections and waiting forever (Ctrl+C when done)",
        config.plan.connections
    )?;
    runtime.block_on(async {
        let mut conns = Vec::with_capacity(config.plan.connections);
        for _ in 0..config.plan.connections {
            conns.push(
                Connection::open(
                    &config.plan.endpoint,
                    &config.plan.handshake,
                    config.plan.connect_timeout,
                    config.plan.limits,
                )
                .await
                .with_context(|| format!("connecting to {}", config.plan.endpoint))?,
            );
        }
        writeln!(stderr, "clients: {}", conns.len())?;
        while !cancel.is_cancelled() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(Status::Interrupted)
    })
}

/// One interval's histograms into the log: the test's, and each command's when it has
/// several; a metric the run does not have (or that is empty) is left out.
fn write_hlog(
    log: &mut HlogWriter,
    test: &str,
    commands: &[String],
    timing: Timing,
    start: Duration,
    length: Duration,
    record: &Recorder,
) -> std::io::Result<()> {
    let total = record.total();
    let mut write = |tag: &str, hist: &Histograms| {
        for metric in Metric::ALL {
            if let Some(h) = hist.of(metric, timing).filter(|h| !h.is_empty()) {
                log.write(&format!("{tag}.{}", metric.name()), start, length, h)?;
            }
        }
        std::io::Result::Ok(())
    };
    write(test, &total.hist)?;
    if record.commands.len() > 1 {
        for (rec, name) in record.commands.iter().zip(commands) {
            write(&format!("{test}.{name}"), &rec.hist)?;
        }
    }
    Ok(())
}

fn summary(start: Duration, length: Duration, record: &Recorder) -> IntervalSummary {
    // Only the response histogram is summarised: merge just that one, and nothing at all
    // for a single command (a merged record is four fresh histograms every interval).
    let merged;
    let h = match record.commands.as_slice() {
        [one] => &one.hist.response,
        many => {
            let mut all = crate::record::new_histogram();
            for rec in many {
                // Same bounds on both sides, so `add` cannot fail.
                let _ = all.add(&rec.hist.response);
            }
            merged = all;
            &merged
        }
    };
    let q = |p: f64| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(p)
        }
    };
    IntervalSummary {
        start_secs: start.as_secs_f64(),
        length_secs: length.as_secs_f64(),
        completed: record.completed(),
        errors: record.commands.iter().map(CommandRecord::error_total).sum(),
        p50_ns: q(0.5),
        p99_ns: q(0.99),
        max_ns: if h.is_empty() { 0 } else { h.max() },
    }
}

/// Adds the intervals of every thread that share a start into one.
struct IntervalMerger {
    threads: usize,
    pending: BTreeMap<Duration, (Duration, Recorder, usize)>,
    summaries: Vec<IntervalSummary>,
    /// Emptied records of emitted intervals, reused for the next (see [`IntervalMerger::recycle`]).
    spares: Vec<Recorder>,
}

impl IntervalMerger {
    fn new(threads: usize) -> Self {
        IntervalMerger {
            threads: threads.max(1),
            pending: BTreeMap::new(),
            summaries: Vec::new(),
            spares: Vec::new(),
        }
    }

    /// Adds `iv`; returns the intervals every thread has now reported.
    fn push(&mut self, iv: &Interval) -> Vec<(Duration, Duration, Recorder)> {
        let spares = &mut self.spares;
        let entry = self
            .pending
            .entry(iv.start)
            .or_insert_with(|| (iv.length, spares.pop().unwrap_or_default(), 0));
        entry.0 = entry.0.max(iv.length);
        entry.1.add(&iv.record);
        entry.2 += 1;
        if entry.2 < self.threads {
            return Vec::new();
        }
        let done: Vec<Duration> = self
            .pending
            .iter()
            .filter(|(_, (_, _, n))| *n >= self.threads)
            .map(|(k, _)| *k)
            .collect();
        done.into_iter()
            .filter_map(|k| self.pending.remove(&k).map(|(len, rec, _)| (k, len, rec)))
            .collect()
    }

    /// Keeps an emitted interval's record, emptied, for a later interval: allocating a
    /// fresh one every interval (about 1 MB of histogram counts per command, zeroed and
    /// mapped page by page) cost the generator's CPU a few percent, as this thread shares it.
    fn recycle(&mut self, mut record: Recorder) {
        if self.spares.len() < 2 {
            record.reset();
            self.spares.push(record);
        }
    }

    /// Everything left, complete or not.
    fn flush(&mut self) -> Vec<(Duration, Duration, Recorder)> {
        std::mem::take(&mut self.pending)
            .into_iter()
            .map(|(k, (len, rec, _))| (k, len, rec))
            .collect()
    }
}

/// The command line with passwords replaced by `***`.
pub fn redact(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut hide_next = false;
    for arg in argv {
        if hide_next {
            out.push("***".to_string());
            hide_next = false;
        } else if arg == "-a" || arg == "-u" {
            hide_next = arg == "-a";
            out.push(arg.clone());
            if arg == "-u" {
                // The URI follows; redact it when we see it.
                hide_next = false;
            }
        } else if let Some(rest) = arg.strip_prefix("-a")
            && !rest.is_empty()
            && !arg.starts_with("--")
        {
            out.push("-a***".to_string());
        } else {
            out.push(redact_uri(arg));
        }
    }
    out
}

/// `redis://user:secret@host` becomes `redis://user:***@host`; other text is unchanged.
pub fn redact_uri(text: &str) -> String {
    let Some(scheme_end) = text.find("://") else {
        return text.to_string();
    };
    let rest = &text[scheme_end + 3..];
    let Some(at) = rest.rfind('@') else {
        return text.to_string();
    };
    let auth = &rest[..at];
    let redacted = match auth.split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None => "***".to_string(),
    };
    format!(
        "{}{}@{}",
        &text[..scheme_end + 3],
        redacted,
        &rest[at + 1..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_that_do_not_balance_fail_the_accounting_check() {
        let c = Counts {
            intended: 10,
            sent: 10,
            completed: 7,
            errors: 1,
            timeouts: 1,
            not_sent: 0,
            in_flight_at_end: 1,
            ..Default::default()
        };
        assert_eq!(accounting_check(&c), None);
        let lost = Counts { completed: 6, ..c };
        let check =
            accounting_check(&lost).unwrap_or_else(|| panic!("9 of 10 accounted for must fail"));
        assert_eq!(
            (check.name.as_str(), check.verdict),
            ("accounting", Verdict::Fail)
        );
        assert!(
            check.detail.contains("intended 10") && check.detail.ends_with("= 9"),
            "{}",
            check.detail
        );
    }

    #[test]
    fn passwords_never_reach_the_recorded_command_line() {
        let argv: Vec<String> = [
            "tailrate",
            "-a",
            "hunter2",
            "-u",
            "redis://bob:hunter2@h:1/0",
            "-ahunter2",
            "-q",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let joined = redact(&argv).join(" ");
        assert!(!joined.contains("hunter2"), "{joined}");
        assert!(joined.contains("redis://bob:***@h:1/0"), "{joined}");
    }
}
