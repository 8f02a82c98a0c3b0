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
//! The search itself is pure and lives in [`search`]; this file runs its trials and
//! hands each to [`crate::export::tune_text`] (a line as it ends; the best setting as a
//! command line to paste at the end) and the whole search to
//! [`crate::export::outputs`]: `--json FILE` is rewritten after every trial; `--json -`
//! gets it once, at the end, in place of those lines.

use std::cell::RefCell;
use std::io::Write;
use std::time::Duration;

use anyhow::Result;

use crate::app::{self, Campaign, Halt, Io, Status};
use crate::config::{RunConfig, TuneConfig};
use crate::drive::{Cancel, Mode, Workers};
use crate::export::outputs::Outputs;
use crate::export::report::Report;
use crate::export::tune_text::{self, delay_arg};
use crate::report::tune::{Best, Phase, TUNE_SCHEMA_VERSION, Trial, TuneReport};
use crate::report::{Header, TestReport};

pub mod search;

use crate::stats::median::median_f64 as median;
use search::ranked;
pub use search::{MIN_GAIN, Point, Space, climb};

/// Settings re-measured after the climb.
pub const CONFIRM_CANDIDATES: usize = 2;

/// Runs the search `tune` describes.
pub fn run(
    tune: &TuneConfig,
    command_line: Vec<String>,
    cancel: &Cancel,
    io: Io<'_>,
) -> Result<Status> {
    let Io {
        stdout,
        stderr,
        stderr_is_terminal,
        ..
    } = io;
    let config = &tune.base;
    // Interrupted before the server answered: the first trial sees it, and the report
    // is saved with no trials, as after any interruption.
    let (server, cluster) = app::probe(config, cancel, stderr)?.unwrap_or_else(|| {
        let facts = crate::report::ServerFacts {
            endpoint: config.plan.endpoint.to_string(),
            ..Default::default()
        };
        (facts, None)
    });
    if cluster.is_some() {
        anyhow::bail!(
            "tailrate tune: {} is a Redis Cluster node, and --workers does not route over a cluster",
            config.plan.endpoint
        );
    }
    let test = app::single_test(config, "tuning", stderr)?;
    let trial = tune.trial;
    let base = config.clone();
    let paste = paste_command(
        &command_line,
        tune.custom_words,
        (!tune.trial_given).then_some(trial),
    );
    let mut tuner = Tuner {
        any_invalid: false,
        outputs: RefCell::new(Outputs::new(stdout, &tune.destinations())),
        space: Space::new(config.plan.connections, tune.max_workers),
        max_trials: tune.max_trials,
        confirm_runs: tune.confirm_runs,
        max_p99_ns: tune.max_p99_ns,
        report: TuneReport {
            header: Header::new(TUNE_SCHEMA_VERSION, command_line, config.plan.seed, server),
            test: test.name.clone(),
            connections: config.plan.connections,
            trial_secs: trial.as_secs_f64(),
            trials: Vec::new(),
            baseline_per_sec: None,
            best: None,
            max_p99_ns: tune.max_p99_ns,
            interrupted: false,
            complete: false,
        },
        base,
        paste,
        cancel,
        stderr,
        stderr_is_terminal,
    };
    app::run_campaign(&mut tuner)
}

impl Campaign for Tuner<'_> {
    /// Baseline, climb, re-measurement.
    fn run_all(&mut self) -> Result<(), Halt> {
        let (baseline, _) = self.trial(Phase::Baseline, None, (0, 0))?;
        self.report.baseline_per_sec = Some(baseline);
        let space = self.space.clone();
        let max_trials = self.max_trials;
        let mut n = 0;
        let bound = self.max_p99_ns;
        // A setting over the latency bound scores nothing: the climb turns back from it.
        let tried = climb(&space, max_trials, |p| {
            n += 1;
            self.trial(Phase::Search, Some(space.settings(p)), (n, max_trials))
                .map(|(t, report)| if within(bound, &report) { t } else { 0.0 })
        })?;

        let candidates: Vec<Workers> = ranked(&tried)
            .iter()
            .take(CONFIRM_CANDIDATES)
            .map(|&(p, _)| space.settings(p))
            .collect();
        // Rounds that take each candidate in turn: a change in the machine's load during
        // the re-measurement then falls on every candidate alike.
        let total = candidates.len() * self.confirm_runs;
        let mut runs: Vec<Vec<f64>> = vec![Vec::with_capacity(self.confirm_runs); candidates.len()];
        let mut p99s: Vec<Vec<f64>> = vec![Vec::with_capacity(self.confirm_runs); candidates.len()];
        for round in 0..self.confirm_runs {
            for (k, &w) in candidates.iter().enumerate() {
                let step = (round * candidates.len() + k + 1, total);
                let (t, report) = self.trial(Phase::Confirm, Some(w), step)?;
                runs[k].push(t);
                p99s[k].push(report.response().map_or(0.0, |l| l.p99_ns as f64));
            }
        }
        // The fastest median among the settings whose median p99 is within the bound.
        let best = candidates
            .into_iter()
            .zip(runs)
            .zip(p99s)
            .map(|((w, runs), p99s)| (w, median(&runs), runs, median(&p99s)))
            .filter(|c| bound.is_none_or(|b| c.3 <= b as f64))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((w, median, runs, p99)) = best {
            let mut command_line = self.paste.clone();
            command_line.splice(1..1, workers_flags(&w));
            self.report.best = Some(Best {
                workers: w.count,
                pipeline_size: w.pipeline_size,
                pipeline_delay_ns: crate::record::nanos(w.pipeline_delay),
                throughput_per_sec: median,
                runs_per_sec: runs,
                response_p99_ns: Some(p99 as u64),
                command_line,
            });
        }
        Ok(())
    }

    fn mark_end(&mut self, complete: bool, interrupted: bool) {
        self.report.complete = complete;
        self.report.interrupted = interrupted;
    }

    fn strict_and_invalid(&self) -> bool {
        self.base.strict && self.any_invalid
    }

    fn save_report(&mut self) -> Result<()> {
        self.outputs.get_mut().save(Report::Tune(&self.report))?;
        Ok(())
    }

    fn print_summary(&mut self) -> Result<()> {
        self.outputs.get_mut().print(Report::Tune(&self.report))
    }
}

/// `argv` as a `tailrate` command line without `tune` and its own flags, with
/// `--duration` added when the trials used the default; the workers flags go in front
/// (a custom command, the last `custom_words` words, must stay last).
fn paste_command(argv: &[String], custom_words: usize, trial: Option<Duration>) -> Vec<String> {
    const TUNE_ONLY: [&str; 4] = ["--json", "--max-trials", "--max-workers", "--confirm-runs"];
    let flags_end = argv
        .len()
        .saturating_sub(custom_words)
        .max(2.min(argv.len()));
    let mut out = vec!["tailrate".to_string()];
    if let Some(trial) = trial {
        out.extend([
            "--duration".to_string(),
            humantime::format_duration(trial).to_string(),
        ]);
    }
    let mut words = argv.iter().take(flags_end).skip(2);
    while let Some(word) = words.next() {
        if TUNE_ONLY.contains(&word.as_str()) {
            words.next();
        } else if !TUNE_ONLY
            .iter()
            .any(|flag| word.starts_with(&format!("{flag}=")))
        {
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

/// Whether `report`'s p99 response time is within `bound` (nanoseconds; no bound: yes).
fn within(bound: Option<u64>, report: &TestReport) -> bool {
    bound.is_none_or(|b| report.response().is_some_and(|l| l.p99_ns <= b))
}

struct Tuner<'a> {
    space: Space,
    max_trials: usize,
    confirm_runs: usize,
    /// `--max-p99`, nanoseconds.
    max_p99_ns: Option<u64>,
    /// The trial lines and `--json` (behind a cell: the report is saved through `&self`).
    outputs: RefCell<Outputs<'a>>,
    report: TuneReport,
    base: RunConfig,
    /// The command line of a direct run, without the workers flags.
    paste: Vec<String>,
    cancel: &'a Cancel,
    stderr: &'a mut dyn Write,
    stderr_is_terminal: bool,
    /// A trial failed a self-check.
    any_invalid: bool,
}

impl Tuner<'_> {
    /// Runs one trial (`step`: its place in its phase, `n` of `of`), shows and saves it;
    /// returns its throughput and report.
    fn trial(
        &mut self,
        phase: Phase,
        workers: Option<Workers>,
        step: (usize, usize),
    ) -> Result<(f64, TestReport), Halt> {
        if self.cancel.is_cancelled() {
            return Err(Halt::Interrupted);
        }
        let mut config = self.base.clone();
        config.plan.mode = Mode::Closed {
            pipeline: 1,
            rate_cap: None,
            workers,
        };
        let (report, stopped_early) = app::measure(
            &config,
            None,
            0,
            self.cancel,
            &mut *self.stderr,
            self.stderr_is_terminal,
            None,
            Duration::ZERO,
            None,
        )?;
        self.any_invalid |= !report.valid;
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
        let line = tune_text::trial_line(&trial, step, self.report.connections);
        let outputs = self.outputs.get_mut();
        let text = outputs.text();
        text.write_all(line.as_bytes())?;
        text.flush()?;
        self.report.trials.push(trial);
        outputs.save_json_so_far(&self.report)?;
        match stopped_early {
            Some(reason) if reason == "interrupted" => Err(Halt::Interrupted),
            Some(reason) => Err(Halt::Failed(reason)),
            None => Ok((report.throughput_per_sec, report)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_pasted_command_drops_tune_and_its_flags_and_keeps_a_custom_command_last() {
        let argv: Vec<String> = [
            "tailrate",
            "tune",
            "-p",
            "7000",
            "--json",
            "t.json",
            "--max-trials=9",
            "-c",
            "2",
            "SET",
            "--json",
            "v",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut line = paste_command(&argv, 3, Some(Duration::from_secs(1)));
        assert_eq!(
            line.join(" "),
            "tailrate --duration 1s -p 7000 -c 2 SET --json v"
        );
        let w = Workers {
            count: 64,
            pipeline_size: 32,
            pipeline_delay: Duration::from_micros(50),
        };
        line.splice(1..1, workers_flags(&w));
        assert_eq!(
            line[..7].join(" "),
            "tailrate --workers 64 --pipeline-size 32 --pipeline-delay 50us"
        );
    }
}
