//! Rate sweeps: open-loop steps over `--rates` (each `--repeat` times, in `--order`),
//! the SLO capacity search, rate-capped and closed-loop points, early stop past
//! saturation, and the export as it goes (`sweep.json`, `sweep.csv`, a `.hlog` per
//! run, the SVG plots).
//!
//! Flags are checked in [`crate::config::sweep`], decisions (the visit order, SLO
//! verdicts, saturation, the capacity and its band, bisection) are pure functions in
//! [`search`], the saved model and the steps' statistics are [`crate::report::sweep`];
//! this file only runs the measurements through [`app::measure`] in order and writes the
//! files. Plots are drawn by [`crate::export::plot`] from the JSON bytes just written,
//! so `tailrate plot` redraws them byte for byte.
//!
//! Past saturation (most of a rate's runs sent or got replies at under 95% of the
//! schedule, or had a p99 over `--stop-at`) the rates above it are not visited: in ascending order that ends the
//! steps (after the saturated rate's own repeats); shuffled, the rates under it still
//! run. A rate-capped closed loop runs once per rate, beside its first repeat.

mod budget;
mod capacity;
mod coarse;
mod replot;
pub mod search;

pub use coarse::{BEYOND, SATURATION_PROBES};
pub use replot::{InputError as PlotInputError, replot};

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;

use crate::app::{self, Campaign, Halt, Io, Status};
use crate::config::sweep::{Rates, SweepPlan};
use crate::config::{RunConfig, SweepConfig};
use crate::drive::{Cancel, Mode, RateCap};
use crate::export::outputs::Outputs;
use crate::export::plot;
use crate::export::report::Report;
use crate::export::sweep_lines::{self, Line};
use crate::report::sweep::{self as model, Kind, Measurement, PlanRecord, SweepReport};
use crate::report::{Header, Settings};
use std::io::Write;

/// File name of the sweep JSON inside `--out`.
pub const JSON_FILE: &str = SweepConfig::JSON_FILE;
/// File name of the sweep CSV inside `--out`.
pub const CSV_FILE: &str = SweepConfig::CSV_FILE;
/// A rate this many times the last open-loop rate, or more, gets [`LONG_SETTLE`]: the
/// backlog and the host's caches of a saturated run still show in the next one's first
/// second.
pub const FAR_BELOW: f64 = 1.5;
/// The settle pause after a rate [`FAR_BELOW`] the last one, at least.
pub const LONG_SETTLE: Duration = Duration::from_secs(1);
/// After a run, the files are rewritten when they are this old or older (and always at
/// a rate's verdict and at the end, Ctrl+C included): a sweep's JSON holds every run's
/// histograms, and rewriting it and its plots after each of a hundred runs spent a tenth
/// of the main job; each run's `.hlog` is still written as it runs.
pub const SAVE_EVERY: Duration = Duration::from_secs(5);

/// Runs the sweep `sweep` describes, writing every file into `--out` after each
/// measurement.
pub fn run(
    sweep: &SweepConfig,
    command_line: Vec<String>,
    cancel: &Cancel,
    io: Io<'_>,
) -> Result<Status> {
    let plan = sweep.plan.clone();
    let config = &sweep.base;
    let Io {
        stdout,
        stderr,
        stderr_is_terminal,
        metrics,
    } = io;
    // Interrupted before anything was measured: no sweep.json to write.
    let Some((server, cluster)) = app::probe(config, cancel, stderr)? else {
        return Ok(Status::Interrupted);
    };
    let test = app::single_test(config, "sweeping", stderr)?;
    let base = config.clone();
    let mut settings = Settings::of(&base);
    settings.target_rate_per_sec = None;
    let report = SweepReport {
        header: Header::new(
            model::SWEEP_SCHEMA_VERSION,
            command_line,
            config.plan.seed,
            server,
        ),
        settings,
        test: test.name.clone(),
        plan: PlanRecord {
            rates: sweep.rates_text.clone(),
            rates_per_sec: match &plan.rates {
                Rates::Absolute(v) => v.clone(),
                Rates::OfClosedLoopMax(_) => Vec::new(),
            },
            slos: plan.slos.clone(),
            warmup_secs: plan.warmup.as_secs_f64(),
            duration_secs: plan.duration.as_secs_f64(),
            settle_secs: plan.settle.as_secs_f64(),
            stop_at_ns: plan.stop_at.map(|d| d.as_nanos() as u64),
            resolution: plan.resolution,
            closed_loop_points: plan.closed_loop_points.clone(),
            rate_capped: plan.rate_capped,
            repeat: plan.repeat,
            order: plan.order,
            budget_secs: plan.budget.map(|b| b.as_secs_f64()),
        },
        runs: Vec::new(),
        steps: Vec::new(),
        slo: None,
        stopped: None,
        interrupted: false,
        partial: None,
        complete: false,
    };
    let mut sweeper = Sweeper {
        plan,
        sweep,
        base,
        cluster,
        out: sweep.out.clone(),
        report,
        started: Instant::now(),
        cancel,
        outputs: Outputs::new(stdout, &sweep.destinations()),
        stderr,
        stderr_is_terminal,
        metrics,
        measured_once: false,
        last_rate: None,
        last_saved: None,
        past_saturation: false,
        spending: budget::Spending::default(),
        budget_ended: None,
    };
    app::run_campaign(&mut sweeper)
}

impl Campaign for Sweeper<'_> {
    /// Every phase in order: calibration, coarse steps, SLO search, closed-loop points.
    fn run_all(&mut self) -> Result<(), Halt> {
        self.say_plan()?;
        match self.open_loop_phases() {
            Err(Halt::Budget) => self.end_of_budget()?,
            other => other?,
        }
        for connections in self.plan.closed_loop_points.clone() {
            let m = self.measure(Kind::ClosedLoop, None, connections, 0)?;
            self.say(&Line::ClosedLoop {
                connections,
                measurement: &m,
            })?;
        }
        Ok(())
    }

    fn mark_end(&mut self, complete: bool, interrupted: bool) {
        self.report.complete = complete;
        self.report.interrupted = interrupted;
        // Interrupted before the search wrote its result: what the steps so far say.
        if interrupted && self.report.slo.is_none() {
            self.report.slo = self.slo_result(None, false);
        }
    }

    fn strict_and_invalid(&self) -> bool {
        self.base.strict && self.report.runs.iter().any(|m| !m.report.valid)
    }

    fn lost_server(&self) -> Option<String> {
        crate::judge::summary::lost_server(&self.report.runs)
    }

    /// Hands the sweep so far to the outputs: sweep.json, the CSVs and the plots in
    /// `--out`, the `--html` page.
    fn save_report(&mut self) -> Result<()> {
        self.outputs.save(Report::Sweep {
            report: &self.report,
            said: None,
        })?;
        Ok(())
    }

    fn print_summary(&mut self) -> Result<()> {
        if let Some(partial) = &self.report.partial {
            let line = Line::Interrupted {
                during: partial,
                file: JSON_FILE,
            };
            sweep_lines::write(self.outputs.text(), &line)?;
        }
        let so_far = crate::export::capacity_text::sentence(&self.report);
        if let (true, Some(said)) = (self.report.interrupted, so_far) {
            self.say(&Line::SoFar(&said))?;
        }
        let files: Vec<&str> = [JSON_FILE, CSV_FILE]
            .into_iter()
            .chain(plot::FILE_NAMES)
            .collect();
        let out = self.out.clone();
        self.say(&Line::Wrote {
            files: &files,
            out: &out,
        })?;
        Ok(())
    }
}

struct Sweeper<'a> {
    plan: SweepPlan,
    sweep: &'a SweepConfig,
    base: RunConfig,
    cluster: Option<std::sync::Arc<crate::net::cluster::ClusterMap>>,
    out: PathBuf,
    report: SweepReport,
    started: Instant,
    cancel: &'a Cancel,
    /// Its lines on standard output, and every file.
    outputs: Outputs<'a>,
    stderr: &'a mut dyn Write,
    stderr_is_terminal: bool,
    /// The live Prometheus page, if served: each run's series carry its step and rate.
    metrics: Option<&'a app::metrics::Metrics>,
    measured_once: bool,
    /// The last open-loop rate measured, for the settle after a much higher one.
    last_rate: Option<f64>,
    /// When the files were last written, for [`SAVE_EVERY`].
    last_saved: Option<Instant>,
    /// A rate's runs were mostly past saturation (see [`Self::coarse_steps`]).
    past_saturation: bool,
    /// Time spent, for `--budget`.
    spending: budget::Spending,
    /// What more time would have bought, once `--budget` ended the search.
    budget_ended: Option<crate::report::sweep::BudgetEnded>,
}

impl Sweeper<'_> {
    /// Hands `line` to the sweep's line exporter, onto standard output.
    fn say(&mut self, line: &Line<'_>) -> std::io::Result<()> {
        sweep_lines::write(self.outputs.text(), line)
    }

    /// The steps by rate, as a table.
    fn print_steps(&mut self) -> Result<(), Halt> {
        crate::export::sweep_text::write_steps(self.outputs.text(), &self.report)?;
        Ok(())
    }

    /// The run's configuration: the sweep's base with this run's connections, mode (an
    /// open loop at `rate`, a rate-capped or a plain closed loop) and, in the open loop,
    /// its own seed (returned too, to record).
    fn run_config(
        &self,
        kind: Kind,
        rate: Option<f64>,
        connections: usize,
    ) -> (crate::config::RunConfig, Option<u64>) {
        let mut config = self.base.clone();
        config.plan.connections = connections;
        config.plan.threads = self.sweep.threads.min(connections).max(1);
        config.plan.mode = match (kind, rate) {
            (k, Some(r)) if k.is_open_loop() => self.sweep.open_mode(r),
            (Kind::RateCapped, cap) => Mode::Closed {
                pipeline: 1,
                rate_cap: cap.map(|per_sec| RateCap {
                    per_sec,
                    pacing: self.sweep.plan.cap_pacing,
                }),
                workers: None,
            },
            _ => Mode::Closed {
                pipeline: 1,
                rate_cap: None,
                workers: None,
            },
        };
        if !config.is_open_loop() {
            config.plan.warmup = Duration::ZERO;
        }
        // Each open-loop run draws its own arrivals and keys: runs at one rate sample the
        // arrival process as well as the host, not one draw again and again.
        let seed = kind.is_open_loop().then(|| {
            let seed = search::run_seed(self.base.plan.seed, self.report.runs.len());
            config.plan.seed = seed;
            seed
        });
        if let (Some(replay), Some(r)) = (&self.sweep.replay, rate) {
            replay.step(&mut config, r, self.sweep.plan.duration);
        }
        (config, seed)
    }

    /// Runs one measurement (after the settle pause), records it and writes every file.
    fn measure(
        &mut self,
        kind: Kind,
        rate: Option<f64>,
        connections: usize,
        repeat: usize,
    ) -> Result<Measurement, Halt> {
        self.check_budget(kind)?;
        let wall = Instant::now();
        self.spending.first_run.get_or_insert(wall);
        if self.measured_once {
            let far_below =
                matches!((self.last_rate, rate), (Some(last), Some(r)) if last >= FAR_BELOW * r);
            self.settle(if far_below {
                self.plan.settle.max(LONG_SETTLE)
            } else {
                self.plan.settle
            })?;
        }
        if kind.is_open_loop() {
            self.last_rate = rate;
        }
        if self.cancel.is_cancelled() {
            return Err(Halt::Interrupted);
        }
        self.measured_once = true;
        let (config, seed) = self.run_config(kind, rate, connections);
        let hlog_name = hlog_name(kind, rate, connections, repeat);
        let comment = format!(
            "tailrate {} seed {} {} {}",
            env!("CARGO_PKG_VERSION"),
            config.plan.seed,
            kind.name(),
            self.report.test
        );
        let mut hlog = self
            .outputs
            .create_out_log(&hlog_name, SystemTime::now(), &comment)?;
        let started_secs = self.started.elapsed().as_secs_f64();
        let live = self.metrics.map(|metrics| {
            let step = hlog_name.trim_end_matches(".hlog").to_string();
            let mut labels = vec![
                ("test".to_string(), self.report.test.clone()),
                ("step".to_string(), step),
            ];
            labels.extend(rate.map(|r| ("target_rate".to_string(), format!("{r:.0}"))));
            app::metrics::Scope { metrics, labels }
        });
        let (report, stopped_early) = app::measure(
            &config,
            self.cluster.as_ref(),
            0,
            self.cancel,
            &mut *self.stderr,
            self.stderr_is_terminal,
            Some(&mut hlog),
            Duration::ZERO,
            live,
        )?;
        drop(hlog);
        self.spent(kind, wall);
        let slo = (kind.is_open_loop() && !self.plan.slos.is_empty())
            .then(|| crate::judge::slo::judge(&report, &self.plan.slos));
        let m = Measurement {
            kind,
            target_rate_per_sec: rate,
            connections,
            repeat,
            started_secs,
            hlog: hlog_name,
            slo,
            seed,
            report,
        };
        match stopped_early {
            Some(reason) if reason == "interrupted" => {
                self.report.partial = Some(m);
                Err(Halt::Interrupted)
            }
            Some(reason) => {
                self.report.runs.push(m);
                Err(Halt::Failed(reason))
            }
            None => {
                self.report.runs.push(m.clone());
                if kind.is_open_loop() {
                    self.report.steps =
                        crate::judge::slo::judge_steps(&self.report.runs, &self.plan.slos);
                }
                if self.last_saved.is_none_or(|t| t.elapsed() >= SAVE_EVERY) {
                    self.save_now()?;
                }
                Ok(m)
            }
        }
    }

    /// Writes every file now, and notes when.
    fn save_now(&mut self) -> Result<()> {
        self.save_report()?;
        self.last_saved = Some(Instant::now());
        Ok(())
    }

    /// The pause of `length` between measurements; Ctrl+C ends it at once.
    fn settle(&self, length: Duration) -> Result<(), Halt> {
        let end = Instant::now() + length;
        while Instant::now() < end {
            if self.cancel.is_cancelled() {
                return Err(Halt::Interrupted);
            }
            std::thread::sleep((end - Instant::now()).min(Duration::from_millis(20)));
        }
        Ok(())
    }
}

/// `step-20000.hlog`, `step-20000-r2.hlog` (its third run), `rate-capped-20000.hlog`,
/// `closed-loop-c10.hlog`, `closed-loop-max-c50.hlog`.
fn hlog_name(kind: Kind, rate: Option<f64>, connections: usize, repeat: usize) -> String {
    let rate = rate.map(|r| format!("{r:.0}")).unwrap_or_default();
    let run = if repeat > 0 {
        format!("-r{repeat}")
    } else {
        String::new()
    };
    match kind {
        // A search point's rate is never a coarse step's, so they share the prefix.
        Kind::Step | Kind::Search => format!("step-{rate}{run}.hlog"),
        Kind::Confirm => format!("confirm-{rate}{run}.hlog"),
        Kind::RateCapped => format!("rate-capped-{rate}.hlog"),
        Kind::ClosedLoop => format!("closed-loop-c{connections}.hlog"),
        Kind::ClosedLoopMax => format!("closed-loop-max-c{connections}.hlog"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hlog_names_say_what_ran() {
        assert_eq!(
            hlog_name(Kind::Step, Some(20_000.0), 50, 0),
            "step-20000.hlog"
        );
        assert_eq!(
            hlog_name(Kind::Step, Some(20_000.0), 50, 2),
            "step-20000-r2.hlog"
        );
        assert_eq!(
            hlog_name(Kind::Confirm, Some(1234.4), 50, 0),
            "confirm-1234.hlog"
        );
        assert_eq!(
            hlog_name(Kind::ClosedLoop, None, 10, 0),
            "closed-loop-c10.hlog"
        );
    }
}
