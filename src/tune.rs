//! `tailrate tune`: searches `--workers`, `--pipeline-size` and `--pipeline-delay` for the
//! highest closed-loop throughput against one server, with the connections (`-c`) and
//! the workload fixed.
//!
//! Every trial is one short closed-loop run of `--duration` (default 1 s) through
//! [`app::measure`], the driver and report every run uses. The search is a
//! coarse-to-fine coordinate climb over three ladders ([`Space`]: workers by factors of
//! sqrt 2 from `-c` to `--max-workers`, batch sizes by powers of two, delays from 0 to
//! 1 ms): it moves along one setting at a time while the throughput rises by more than
//! [`MIN_GAIN`], then refines the step (x4, x2, x sqrt 2 for workers), for at most
//! `--max-trials` trials ([`climb`]). One short run is noisy and the best of many noisy
//! runs is a lucky one, so the best [`CONFIRM_CANDIDATES`] settings are then re-measured
//! `--confirm-runs` times each, in turns; the highest median wins, and that median is
//! the throughput reported. A plain closed loop on the same connections runs first, for
//! comparison.
//!
//! Trials print as they end; the end prints the best setting as a command line to paste.
//! `--json FILE` holds the whole search, rewritten after every trial.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::app::{self, Io, Status};
use crate::cli::{RunArgs, TuneArgs};
use crate::config::{Mode, RunConfig, Stop, Workers};
use crate::drive::Cancel;
use crate::report::json::write_atomically;
use crate::report::{ServerFacts, TestReport};

/// Length of one trial when `--duration` is not given.
pub const DEFAULT_TRIAL: Duration = Duration::from_secs(1);
/// Smallest relative throughput gain the climb moves for: below it, run-to-run noise.
pub const MIN_GAIN: f64 = 0.03;
/// Settings re-measured after the climb.
pub const CONFIRM_CANDIDATES: usize = 2;
/// Version of the tune JSON layout.
pub const TUNE_SCHEMA_VERSION: u32 = 1;
/// Batch sizes tried (`--pipeline-size`).
const SIZES: [usize; 11] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
/// Delays tried (`--pipeline-delay`), in microseconds.
const DELAYS_US: [u64; 8] = [0, 10, 25, 50, 100, 250, 500, 1000];
/// Climb steps in ladder positions, coarse to fine.
const STEPS: [usize; 3] = [4, 2, 1];
/// Workers per connection at the start of the climb.
const START_WORKERS_PER_CONNECTION: usize = 16;

/// A tune flag that cannot run; names the flag and says what is accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TuneError {
    /// One flag's value is wrong.
    #[error("invalid value for {flag}: {why}")]
    Invalid {
        /// The flag.
        flag: &'static str,
        /// What is wrong and what is accepted.
        why: String,
    },
    /// A run flag that tune cannot use.
    #[error("{flag} cannot be used with tune: {why}")]
    NotWithTune {
        /// The flag.
        flag: &'static str,
        /// Why, and what to do instead.
        why: &'static str,
    },
}

/// Checks tune's own flags and the run flags it cannot use; what `main` calls before
/// anything runs, so bad input is a usage error (exit 2).
pub fn check_args(args: &TuneArgs) -> Result<(), TuneError> {
    let run = &args.run;
    let refused = [
        (run.workers.is_some(), "--workers", "tune searches it (up to --max-workers)"),
        (run.pipeline_size.is_some(), "--pipeline-size", "tune searches it"),
        (run.pipeline_delay.is_some(), "--pipeline-delay", "tune searches it"),
        (run.requests.is_some(), "-n", "each trial is timed; set its length with --duration"),
        (run.rate.is_some(), "--rate", "trials are closed loop"),
        (run.pipeline != 1, "-P", "workers are batched by --pipeline-size, which tune searches"),
        (run.batch_latency, "--batch-latency", "workers time each reply from its own request"),
        (run.keepalive == 0, "-k 0", "workers share long-lived connections"),
        (run.loop_forever, "-l", "tune ends after its last trial"),
        (run.idle, "-I", "tune sends requests"),
        (run.hdr_log.is_some(), "--hdr-log", "tune writes no interval logs; --json FILE records every trial"),
    ];
    if let Some((_, flag, why)) = refused.into_iter().find(|(given, ..)| *given) {
        return Err(TuneError::NotWithTune { flag, why });
    }
    if run.command.is_empty()
        && let Some(tests) = &run.tests
        && crate::workload::select_tests(Some(tests.as_str())).map(|t| t.len()).unwrap_or(1) > 1
    {
        return Err(TuneError::Invalid {
            flag: "-t",
            why: format!("'{tests}' selects more than one test; tune measures one: give one test or a custom command"),
        });
    }
    if args.max_trials == 0 {
        return Err(TuneError::Invalid { flag: "--max-trials", why: "need at least one trial".into() });
    }
    if args.confirm_runs == 0 {
        return Err(TuneError::Invalid { flag: "--confirm-runs", why: "the best settings are measured at least once more".into() });
    }
    if args.max_workers > crate::config::MAX_WORKERS {
        return Err(TuneError::Invalid { flag: "--max-workers", why: format!("at most {}", crate::config::MAX_WORKERS) });
    }
    if args.max_workers < run.clients {
        return Err(TuneError::Invalid {
            flag: "--max-workers",
            why: format!("{} is below -c {}: every connection needs a worker", args.max_workers, run.clients),
        });
    }
    Ok(())
}

/// The run flags to build the base [`RunConfig`] from: trials are timed, [`DEFAULT_TRIAL`] unless `--duration` says.
pub fn base_run_args(args: &TuneArgs) -> RunArgs {
    let mut run = args.run.clone();
    run.duration.get_or_insert(DEFAULT_TRIAL);
    run
}

/// The three ladders the climb moves on.
#[derive(Debug, Clone, PartialEq)]
pub struct Space {
    /// Worker counts, increasing (factors of about sqrt 2 from the connection count).
    pub workers: Vec<usize>,
    /// Batch sizes, increasing.
    pub sizes: Vec<usize>,
    /// Delays, increasing.
    pub delays: Vec<Duration>,
}

/// A setting of the search: positions on the ladders of a [`Space`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    /// Position on the workers ladder.
    pub workers: usize,
    /// Position on the batch-size ladder.
    pub size: usize,
    /// Position on the delay ladder.
    pub delay: usize,
}

impl Space {
    /// The ladders for `connections` connections and at most `max_workers` workers.
    pub fn new(connections: usize, max_workers: usize) -> Self {
        let connections = connections.max(1);
        let mut workers: Vec<usize> = Vec::new();
        for half_doublings in 0..128 {
            let w = (connections as f64 * 2f64.powf(f64::from(half_doublings) / 2.0)).round() as usize;
            if w > max_workers.max(connections) {
                break;
            }
            if workers.last() != Some(&w) {
                workers.push(w);
            }
        }
        Space { workers, sizes: SIZES.to_vec(), delays: DELAYS_US.iter().map(|&us| Duration::from_micros(us)).collect() }
    }

    /// Where the climb starts: about 16 workers per connection, the largest batch, no delay.
    pub fn start(&self) -> Point {
        let first = self.workers.first().copied().unwrap_or(1);
        let target = first * START_WORKERS_PER_CONNECTION;
        let workers = self.workers.iter().rposition(|&w| w <= target).unwrap_or(0);
        Point { workers, size: self.sizes.len() - 1, delay: 0 }
    }

    /// The `--workers` settings of `p`.
    pub fn settings(&self, p: Point) -> Workers {
        Workers { count: self.workers[p.workers], pipeline_size: self.sizes[p.size], pipeline_delay: self.delays[p.delay] }
    }

    /// `p` moved `by` positions along `dim`, if that stays on the ladder.
    fn shifted(&self, p: Point, dim: usize, by: isize) -> Option<Point> {
        let (position, len) = match dim {
            0 => (p.workers, self.workers.len()),
            1 => (p.size, self.sizes.len()),
            _ => (p.delay, self.delays.len()),
        };
        let moved = position.checked_add_signed(by).filter(|&m| m < len)?;
        Some(match dim {
            0 => Point { workers: moved, ..p },
            1 => Point { size: moved, ..p },
            _ => Point { delay: moved, ..p },
        })
    }
}

/// The coarse-to-fine coordinate climb: from [`Space::start`], along workers, batch size
/// and delay in turn, it keeps moving in a direction while each step raises the
/// throughput by more than [`MIN_GAIN`]. When a pass over the three moves nowhere, the
/// current setting is measured once more and that run is what the neighbours must beat
/// (one lucky run, or one from a quieter moment of the machine, must not block every
/// move); if still nothing moves, the step gets finer ([`STEPS`]). `measure` runs one
/// trial; other settings are measured once, at most `max_trials` trials run. Returns
/// every trial in order.
pub fn climb<E>(space: &Space, max_trials: usize, mut measure: impl FnMut(Point) -> Result<f64, E>) -> Result<Vec<(Point, f64)>, E> {
    let mut tried: Vec<(Point, f64)> = Vec::new();
    // Runs `p` once more; `None` when the trial budget is spent.
    let mut run = |p: Point, tried: &mut Vec<(Point, f64)>| -> Result<Option<f64>, E> {
        if tried.len() >= max_trials {
            return Ok(None);
        }
        let t = measure(p)?;
        tried.push((p, t));
        Ok(Some(t))
    };
    let mut at = space.start();
    let Some(mut best) = run(at, &mut tried)? else { return Ok(tried) };
    for step in STEPS {
        let mut remeasured = false;
        loop {
            let mut moved = false;
            for dim in 0..3 {
                for direction in [1, -1] {
                    let mut went = false;
                    while let Some(next) = space.shifted(at, dim, direction * step as isize) {
                        let t = match mean_of(&tried, next) {
                            Some(t) => t,
                            None => match run(next, &mut tried)? {
                                Some(t) => t,
                                None => return Ok(tried),
                            },
                        };
                        if t <= best * (1.0 + MIN_GAIN) {
                            break;
                        }
                        (at, best, went) = (next, t, true);
                    }
                    moved |= went;
                    if went {
                        break;
                    }
                }
            }
            if moved {
                remeasured = false;
            } else if remeasured {
                break;
            } else {
                let Some(t) = run(at, &mut tried)? else { return Ok(tried) };
                (best, remeasured) = (t, true);
            }
        }
    }
    Ok(tried)
}

/// The mean throughput of the runs of `p` in `tried`.
fn mean_of(tried: &[(Point, f64)], p: Point) -> Option<f64> {
    let (n, sum) = tried.iter().filter(|(q, _)| *q == p).fold((0usize, 0.0), |(n, sum), (_, t)| (n + 1, sum + t));
    (n > 0).then(|| sum / n as f64)
}

/// Every setting of `tried` once, with the mean of its runs, best first.
fn ranked(tried: &[(Point, f64)]) -> Vec<(Point, f64)> {
    let mut out: Vec<(Point, f64)> = Vec::new();
    for &(p, _) in tried {
        if !out.iter().any(|(q, _)| *q == p) {
            out.push((p, mean_of(tried, p).unwrap_or(0.0)));
        }
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// What a trial was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Plain closed loop on the same connections, no workers.
    Baseline,
    /// A step of the climb.
    Search,
    /// A re-measurement of one of the best settings.
    Confirm,
}

/// One trial's setting and result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// What it was for.
    pub phase: Phase,
    /// `--workers` (none for the baseline).
    pub workers: Option<usize>,
    /// `--pipeline-size`.
    pub pipeline_size: Option<usize>,
    /// `--pipeline-delay` in nanoseconds.
    pub pipeline_delay_ns: Option<u64>,
    /// Successful replies per second.
    pub throughput_per_sec: f64,
    /// Response-time median.
    pub response_p50_ns: u64,
    /// Response-time 99th percentile.
    pub response_p99_ns: u64,
    /// Requests per write, with workers.
    pub requests_per_write: Option<f64>,
    /// Error replies and failed requests.
    pub errors: u64,
}

/// The setting tune found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Best {
    /// `--workers`.
    pub workers: usize,
    /// `--pipeline-size`.
    pub pipeline_size: usize,
    /// `--pipeline-delay` in nanoseconds.
    pub pipeline_delay_ns: u64,
    /// Median throughput of its re-measurements, replies per second.
    pub throughput_per_sec: f64,
    /// Each re-measurement's throughput.
    pub runs_per_sec: Vec<f64>,
    /// The command line that runs it (passwords as `***`).
    pub command_line: Vec<String>,
}

/// The whole search, as `--json` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneReport {
    /// JSON layout version ([`TUNE_SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// `tailrate <version>`.
    pub tool: String,
    /// The command line, with any password replaced by `***`.
    pub command_line: Vec<String>,
    /// Seed of every random choice.
    pub seed: u64,
    /// What the server said about itself.
    pub server: ServerFacts,
    /// The test tuned.
    pub test: String,
    /// Connections of every trial (`-c`).
    pub connections: usize,
    /// Seconds per trial.
    pub trial_secs: f64,
    /// Every trial, in the order run.
    pub trials: Vec<Trial>,
    /// The plain closed loop's throughput, replies per second.
    pub baseline_per_sec: Option<f64>,
    /// The best setting, once re-measured.
    pub best: Option<Best>,
    /// Ctrl+C or SIGTERM ended the search.
    pub interrupted: bool,
    /// Every phase ran.
    pub complete: bool,
}

/// Why the search ended early.
enum Halt {
    Interrupted,
    Failed(String),
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

/// Runs the search `args` describes on top of `config` (built from [`base_run_args`]).
pub fn run(args: &TuneArgs, config: &RunConfig, command_line: Vec<String>, cancel: &Cancel, io: Io<'_>) -> Result<Status> {
    let Io { stdout, stderr, stderr_is_terminal } = io;
    let server = app::server_facts(config).with_context(|| format!("connecting to {}", config.endpoint))?;
    for note in &server.notes {
        writeln!(stderr, "note: {note}")?;
    }
    if server.cluster.is_some() {
        anyhow::bail!("tailrate tune: {} is a Redis Cluster node, and --workers does not route over a cluster", config.endpoint);
    }
    let test = config.workload.tests.first().context("the workload has no test")?;
    if config.workload.tests.len() > 1 {
        writeln!(stderr, "note: no -t given: tuning {}, the first default test (choose one with -t, or give a custom command)", test.name)?;
    }
    let trial = match config.stop {
        Stop::After(d) => d,
        Stop::Requests(_) => DEFAULT_TRIAL,
    };
    let mut base = config.clone();
    base.stop = Stop::After(trial);
    base.output.json = None;
    base.output.hdr_log = None;
    let paste = paste_command(&command_line, args.run.command.len(), args.run.duration.is_none().then_some(trial));
    let mut tuner = Tuner {
        space: Space::new(config.connections, args.max_workers),
        max_trials: args.max_trials,
        confirm_runs: args.confirm_runs,
        json: args.run.json.clone(),
        report: TuneReport {
            schema_version: TUNE_SCHEMA_VERSION,
            tool: format!("tailrate {}", env!("CARGO_PKG_VERSION")),
            command_line,
            seed: config.seed,
            server,
            test: test.name.clone(),
            connections: config.connections,
            trial_secs: trial.as_secs_f64(),
            trials: Vec::new(),
            baseline_per_sec: None,
            best: None,
            interrupted: false,
            complete: false,
        },
        base,
        paste,
        cancel,
        stdout,
        stderr,
        stderr_is_terminal,
    };
    let status = match tuner.search() {
        Ok(()) => {
            tuner.report.complete = true;
            Status::Completed
        }
        Err(Halt::Interrupted) => {
            tuner.report.interrupted = true;
            Status::Interrupted
        }
        Err(Halt::Failed(reason)) => Status::Failed(reason),
        Err(Halt::Error(e)) => {
            let _ = tuner.save();
            return Err(e);
        }
    };
    tuner.save()?;
    tuner.summary()?;
    Ok(status)
}

/// `argv` as a `tailrate` command line without `tune` and its own flags, with
/// `--duration` added when the trials used the default; the workers flags go in front
/// (a custom command, the last `custom_words` words, must stay last).
fn paste_command(argv: &[String], custom_words: usize, trial: Option<Duration>) -> Vec<String> {
    const TUNE_ONLY: [&str; 4] = ["--json", "--max-trials", "--max-workers", "--confirm-runs"];
    let flags_end = argv.len().saturating_sub(custom_words).max(2.min(argv.len()));
    let mut out = vec!["tailrate".to_string()];
    if let Some(trial) = trial {
        out.extend(["--duration".to_string(), humantime::format_duration(trial).to_string()]);
    }
    let mut words = argv.iter().take(flags_end).skip(2);
    while let Some(word) = words.next() {
        if TUNE_ONLY.contains(&word.as_str()) {
            words.next();
        } else if !TUNE_ONLY.iter().any(|flag| word.starts_with(&format!("{flag}="))) {
            out.push(word.clone());
        }
    }
    out.extend(argv.iter().skip(flags_end).cloned());
    out
}

/// The workers flags of `w`, as typed on a command line.
fn workers_flags(w: &Workers) -> Vec<String> {
    vec![
        "--workers".into(),
        w.count.to_string(),
        "--pipeline-size".into(),
        w.pipeline_size.to_string(),
        "--pipeline-delay".into(),
        delay_arg(w.pipeline_delay),
    ]
}

/// A delay as `--pipeline-delay` takes it: `0`, `50us`, `1ms`.
fn delay_arg(delay: Duration) -> String {
    if delay.is_zero() { "0".to_string() } else { humantime::format_duration(delay).to_string() }
}

struct Tuner<'a> {
    space: Space,
    max_trials: usize,
    confirm_runs: usize,
    json: Option<PathBuf>,
    report: TuneReport,
    base: RunConfig,
    /// The command line of a direct run, without the workers flags.
    paste: Vec<String>,
    cancel: &'a Cancel,
    stdout: &'a mut dyn Write,
    stderr: &'a mut dyn Write,
    stderr_is_terminal: bool,
}

impl Tuner<'_> {
    /// Baseline, climb, re-measurement.
    fn search(&mut self) -> Result<(), Halt> {
        let (baseline, _) = self.trial(Phase::Baseline, None, "baseline")?;
        self.report.baseline_per_sec = Some(baseline);
        let space = self.space.clone();
        let max_trials = self.max_trials;
        let mut n = 0;
        let tried = climb(&space, max_trials, |p| {
            n += 1;
            let label = format!("trial {n}/{max_trials}");
            self.trial(Phase::Search, Some(space.settings(p)), &label).map(|(t, _)| t)
        })?;

        let candidates: Vec<Workers> = ranked(&tried).iter().take(CONFIRM_CANDIDATES).map(|&(p, _)| space.settings(p)).collect();
        // Rounds that take each candidate in turn: a change in the machine's load during
        // the re-measurement then falls on every candidate alike.
        let total = candidates.len() * self.confirm_runs;
        let mut runs: Vec<Vec<f64>> = vec![Vec::with_capacity(self.confirm_runs); candidates.len()];
        for round in 0..self.confirm_runs {
            for (k, &w) in candidates.iter().enumerate() {
                let label = format!("confirm {}/{total}", round * candidates.len() + k + 1);
                runs[k].push(self.trial(Phase::Confirm, Some(w), &label)?.0);
            }
        }
        let best = candidates.into_iter().zip(runs).map(|(w, runs)| (w, median(&runs), runs)).max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((w, median, runs)) = best {
            let mut command_line = self.paste.clone();
            command_line.splice(1..1, workers_flags(&w));
            self.report.best = Some(Best {
                workers: w.count,
                pipeline_size: w.pipeline_size,
                pipeline_delay_ns: crate::record::nanos(w.pipeline_delay),
                throughput_per_sec: median,
                runs_per_sec: runs,
                command_line,
            });
        }
        Ok(())
    }

    /// Runs one trial, prints and saves it; returns its throughput and report.
    fn trial(&mut self, phase: Phase, workers: Option<Workers>, label: &str) -> Result<(f64, TestReport), Halt> {
        if self.cancel.is_cancelled() {
            return Err(Halt::Interrupted);
        }
        let mut config = self.base.clone();
        config.mode = Mode::Closed { pipeline: 1, rate_cap_per_sec: None, workers };
        let (report, stopped_early) =
            app::measure(&config, 0, self.cancel, &mut *self.stderr, self.stderr_is_terminal, None, Duration::ZERO)?;
        let response = report.response();
        let trial = Trial {
            phase,
            workers: workers.map(|w| w.count),
            pipeline_size: workers.map(|w| w.pipeline_size),
            pipeline_delay_ns: workers.map(|w| crate::record::nanos(w.pipeline_delay)),
            throughput_per_sec: report.throughput_per_sec,
            response_p50_ns: response.map_or(0, |l| l.p50_ns),
            response_p99_ns: response.map_or(0, |l| l.p99_ns),
            requests_per_write: report.batches.as_ref().map(|b| b.mean_requests_per_write),
            errors: report.counts.errors,
        };
        self.print(label, &trial)?;
        self.report.trials.push(trial);
        self.save()?;
        match stopped_early {
            Some(reason) if reason == "interrupted" => Err(Halt::Interrupted),
            Some(reason) => Err(Halt::Failed(reason)),
            None => Ok((report.throughput_per_sec, report)),
        }
    }

    fn print(&mut self, label: &str, t: &Trial) -> Result<()> {
        let setting = match (t.workers, t.pipeline_size, t.pipeline_delay_ns) {
            (Some(w), Some(b), Some(d)) => {
                format!("--workers {w:<5} --pipeline-size {b:<4} --pipeline-delay {:<5}", delay_arg(Duration::from_nanos(d)))
            }
            _ => format!("plain closed loop on -c {}", self.report.connections),
        };
        let ms = |ns: u64| ns as f64 / 1e6;
        write!(
            self.stdout,
            "{label:<14} {setting:<62} {:>10.0} req/s  p50 {:.3} ms  p99 {:.3} ms",
            t.throughput_per_sec,
            ms(t.response_p50_ns),
            ms(t.response_p99_ns)
        )?;
        if let Some(per_write) = t.requests_per_write {
            write!(self.stdout, "  {per_write:.1} per write")?;
        }
        if t.errors > 0 {
            write!(self.stdout, "  ({} errors)", t.errors)?;
        }
        writeln!(self.stdout)?;
        self.stdout.flush()?;
        Ok(())
    }

    fn save(&self) -> Result<()> {
        if let Some(path) = &self.json {
            write_atomically(path, &self.report).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }

    fn summary(&mut self) -> Result<()> {
        let Some(best) = &self.report.best else {
            writeln!(self.stdout, "no setting was re-measured; nothing to recommend")?;
            return Ok(());
        };
        let runs: Vec<String> = best.runs_per_sec.iter().map(|r| format!("{r:.0}")).collect();
        writeln!(self.stdout, "best: {:.0} req/s (median of {} runs: {})", best.throughput_per_sec, runs.len(), runs.join(", "))?;
        if let Some(baseline) = self.report.baseline_per_sec.filter(|&b| b > 0.0) {
            writeln!(
                self.stdout,
                "  {:.1}x the plain closed loop on -c {} ({baseline:.0} req/s)",
                best.throughput_per_sec / baseline,
                self.report.connections
            )?;
        }
        writeln!(self.stdout, "  {}", best.command_line.join(" "))?;
        Ok(())
    }
}

/// The median of `values` (the mean of the middle two for an even count).
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_workers_ladder_starts_at_the_connections_and_stops_at_the_maximum() {
        let space = Space::new(4, 100);
        assert_eq!(space.workers, [4, 6, 8, 11, 16, 23, 32, 45, 64, 91]);
        assert_eq!(space.settings(space.start()).count, 64);
        assert_eq!(Space::new(1, 1).workers, [1]);
        assert_eq!(Space::new(50, 10).workers, [50], "never below the connections");
    }

    /// A smooth landscape with one peak at (workers 256, size 64, delay 0).
    fn peaked(space: &Space, p: Point) -> f64 {
        let w = space.settings(p);
        let dist = |x: f64, at: f64| (x.log2() - at.log2()).abs();
        1e6 / (1.0 + dist(w.count as f64, 256.0) + 0.5 * dist(w.pipeline_size as f64, 64.0) + w.pipeline_delay.as_secs_f64() * 1e4)
    }

    #[test]
    fn the_climb_finds_the_peak_of_a_smooth_landscape_in_few_trials() {
        let space = Space::new(1, 4096);
        let tried = climb::<()>(&space, 60, |p| Ok(peaked(&space, p))).unwrap();
        let best = tried.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
        let w = space.settings(best);
        assert_eq!((w.count, w.pipeline_size, w.pipeline_delay), (256, 64, Duration::ZERO), "after {} trials", tried.len());
        assert!(tried.len() < 40, "{} trials", tried.len());
        let settings = tried.iter().map(|(p, _)| *p).collect::<Vec<_>>();
        let repeated = settings.iter().enumerate().filter(|(i, p)| settings[..*i].contains(p)).count();
        assert!(repeated <= STEPS.len(), "{repeated} re-measurements: only the current setting, once per step size");
    }

    #[test]
    fn a_lucky_first_run_does_not_stop_the_climb() {
        let space = Space::new(1, 4096);
        let start = space.start();
        let mut lucky = true;
        let tried = climb::<()>(&space, 60, |p| {
            let luck = if p == start && lucky { 10.0 } else { 1.0 };
            lucky &= p != start;
            Ok(peaked(&space, p) * luck)
        })
        .unwrap();
        let w = space.settings(ranked(&tried)[0].0);
        assert_eq!((w.count, w.pipeline_size), (256, 64), "the climb stopped at its lucky start after {} trials", tried.len());
        assert_eq!(tried.iter().filter(|(p, _)| *p == start).count(), 2, "the start was measured again once");
    }

    #[test]
    fn the_climb_stops_at_the_trial_budget() {
        let space = Space::new(1, 4096);
        let tried = climb::<()>(&space, 5, |p| Ok(peaked(&space, p))).unwrap();
        assert_eq!(tried.len(), 5);
        let failing = climb(&space, 5, |_| Err("server gone"));
        assert_eq!(failing, Err("server gone"));
    }

    #[test]
    fn the_pasted_command_drops_tune_and_its_flags_and_keeps_a_custom_command_last() {
        let argv: Vec<String> = ["tailrate", "tune", "-p", "7000", "--json", "t.json", "--max-trials=9", "-c", "2", "SET", "--json", "v"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut line = paste_command(&argv, 3, Some(Duration::from_secs(1)));
        assert_eq!(line.join(" "), "tailrate --duration 1s -p 7000 -c 2 SET --json v");
        let w = Workers { count: 64, pipeline_size: 32, pipeline_delay: Duration::from_micros(50) };
        line.splice(1..1, workers_flags(&w));
        assert_eq!(line[..7].join(" "), "tailrate --workers 64 --pipeline-size 32 --pipeline-delay 50us");
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
