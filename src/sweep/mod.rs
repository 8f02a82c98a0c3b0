//! Rate sweeps: open-loop steps over `--rates`, the SLO capacity search, rate-capped and
//! closed-loop points, early stop past saturation, and the export after every step
//! (`sweep.json`, `sweep.csv`, a `.hlog` per run, the SVG plots).
//!
//! Flags are checked in [`crate::config::sweep`], decisions (SLO verdicts, saturation,
//! bisection) are pure functions in [`search`], the saved model is
//! [`crate::report::sweep`]; this file only runs the
//! measurements through [`app::measure`] in order and writes the files. Plots are drawn
//! by [`crate::report::plot`] from the JSON bytes just written, so `tailrate plot`
//! redraws them byte for byte.

mod replot;
pub mod search;

pub use replot::replot;

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};

use crate::app::{self, Campaign, Halt, Io, Status};
use crate::config::sweep::{Rates, SweepPlan};
use crate::config::{RunConfig, SweepConfig};
use crate::drive::{Cancel, Mode};
use crate::output;
use crate::report::hlog::HlogWriter;
use crate::report::sweep::{self as model, Kind, Measurement, PlanRecord, SloResult, SweepReport};
use crate::report::{Header, Settings, plot};
use search::{Bisection, Bracket};

/// File name of the sweep JSON inside `--out`.
pub const JSON_FILE: &str = "sweep.json";
/// File name of the sweep CSV inside `--out`.
pub const CSV_FILE: &str = "sweep.csv";
/// How many rates the capacity's re-measurement tries before giving up.
pub const CONFIRM_TRIES: usize = 3;

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
    } = io;
    let server = app::probe(config, stderr)?;
    let test = app::single_test(config, "sweeping", stderr)?;
    let cluster = server.cluster.clone();
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
        },
        runs: Vec::new(),
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
        stdout,
        stderr,
        stderr_is_terminal,
        measured_once: false,
    };
    app::run_campaign(&mut sweeper)
}

impl Campaign for Sweeper<'_> {
    /// Every phase in order: calibration, coarse steps, SLO search, closed-loop points.
    fn run_all(&mut self) -> Result<(), Halt> {
        let rates: Vec<f64> = match self.plan.rates.clone() {
            Rates::Absolute(v) => v,
            Rates::OfClosedLoopMax(fractions) => {
                let connections = self.base.plan.connections;
                let max = self.measure(Kind::ClosedLoopMax, None, connections)?;
                let throughput = max.report.throughput_per_sec;
                writeln!(
                    self.stdout,
                    "closed-loop maximum with {connections} connections: {throughput:.0} req/s (100%)"
                )?;
                if throughput < 1.0 {
                    return Err(Halt::Failed(format!(
                        "the closed-loop run completed {throughput:.1} req/s; no rates to sweep"
                    )));
                }
                let rates: Vec<f64> = fractions
                    .iter()
                    .map(|f| (f * throughput).round().max(1.0))
                    .collect();
                self.report.plan.rates_per_sec = rates.clone();
                rates
            }
        };
        self.coarse_steps(&rates)?;
        if !self.plan.slos.is_empty() {
            self.search()?;
        }
        for connections in self.plan.closed_loop_points.clone() {
            let m = self.measure(Kind::ClosedLoop, None, connections)?;
            let line = m.describe();
            writeln!(
                self.stdout,
                "closed loop, {connections} connections: {line}"
            )?;
        }
        Ok(())
    }

    fn mark_end(&mut self, complete: bool, interrupted: bool) {
        self.report.complete = complete;
        self.report.interrupted = interrupted;
    }

    fn strict_and_invalid(&self) -> bool {
        self.base.strict && self.report.runs.iter().any(|m| !m.report.valid)
    }

    /// Writes sweep.json, then the CSV and the plots drawn from the JSON bytes just written.
    fn save_report(&self) -> Result<()> {
        let bytes =
            serde_json::to_vec_pretty(&self.report).context("encoding the sweep as JSON")?;
        write_out(&self.out.join(JSON_FILE), &bytes)?;
        let csv = model::csv(&self.report);
        write_out(&self.out.join(CSV_FILE), csv.trim_end().as_bytes())?;
        // Drawn from the parsed bytes, exactly as `tailrate plot` will read them back.
        let saved = model::parse(&bytes)?;
        for chart in plot::render_sweep(&saved, None)? {
            write_out(&self.out.join(&chart.file_name), chart.svg.as_bytes())?;
        }
        Ok(())
    }

    fn print_summary(&mut self) -> Result<()> {
        if let Some(why) = &self
            .report
            .partial
            .as_ref()
            .map(|m| m.kind.describe(m.target_rate_per_sec, m.connections))
        {
            writeln!(
                self.stdout,
                "interrupted during {why}; its partial results are in {} under \"partial\"",
                JSON_FILE
            )?;
        }
        let files = plot::FILE_NAMES.join(", ");
        writeln!(
            self.stdout,
            "wrote {JSON_FILE}, {CSV_FILE}, {files} and one .hlog per run into {}",
            self.out.display()
        )?;
        Ok(())
    }
}

/// Writes one file of `--out` (`bytes` and a final newline) through [`output::write_file`]:
/// atomically, unless the name there is a device or a FIFO.
pub(crate) fn write_out(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    let mut whole = Vec::with_capacity(bytes.len() + 1);
    whole.extend_from_slice(bytes);
    whole.push(b'\n');
    output::write_file(path, &whole).context("writing into --out")
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
    stdout: &'a mut dyn Write,
    stderr: &'a mut dyn Write,
    stderr_is_terminal: bool,
    measured_once: bool,
}

impl Sweeper<'_> {
    fn coarse_steps(&mut self, rates: &[f64]) -> Result<(), Halt> {
        let connections = self.base.plan.connections;
        for (i, &rate) in rates.iter().enumerate() {
            let m = self.measure(Kind::Step, Some(rate), connections)?;
            writeln!(
                self.stdout,
                "step {}/{}: {rate:.0} req/s: {}",
                i + 1,
                rates.len(),
                m.describe()
            )?;
            let p99 = m.report.response().map_or(0, |l| l.p99_ns);
            let saturated = search::saturation(
                rate,
                search::achieved_fraction(&m.report),
                p99,
                self.report.plan.stop_at_ns,
            );
            if self.plan.rate_capped {
                let capped = self.measure(Kind::RateCapped, Some(rate), connections)?;
                writeln!(
                    self.stdout,
                    "  rate-capped closed loop at {rate:.0} req/s: {}",
                    capped.describe()
                )?;
            }
            if let Some(why) = saturated {
                if i + 1 < rates.len() {
                    writeln!(self.stdout, "stopping the steps: {why}")?;
                    self.report.stopped = Some(why);
                    self.save_report()?;
                }
                break;
            }
        }
        Ok(())
    }

    /// Bisects between the last passing and first failing coarse rate, then re-measures.
    fn search(&mut self) -> Result<(), Halt> {
        // Steps whose sends fell short while the objectives held are left out: they
        // neither pass nor bound the capacity.
        let coarse: Vec<(f64, bool)> = self
            .report
            .runs
            .iter()
            .filter(|m| m.kind == Kind::Step)
            .filter(|m| {
                !m.slo
                    .as_ref()
                    .is_some_and(|v| search::inconclusive(&m.report, v))
            })
            .filter_map(|m| {
                Some((
                    m.target_rate_per_sec?,
                    m.slo.as_ref().is_some_and(|v| v.met),
                ))
            })
            .collect();
        let mut coarse = coarse;
        coarse.sort_by(|a, b| a.0.total_cmp(&b.0));
        let slos = self.plan.slos.clone();
        let mut result = SloResult {
            slos: slos.clone(),
            capacity_per_sec: None,
            searched_per_sec: None,
            first_failing_per_sec: None,
            confirmed: false,
            summary: String::new(),
        };
        let objectives = slos
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" and ");
        let candidate = match search::bracket(&coarse) {
            None => return Ok(()),
            Some(Bracket::NonePassed { lowest }) => {
                result.first_failing_per_sec = Some(lowest);
                let passed_above = coarse.iter().any(|(_, met)| *met);
                result.summary = format!(
                    "no capacity at {objectives}: the lowest step, {lowest:.0} req/s, missed{}; \
                     try lower --rates",
                    if passed_above {
                        " (a higher step passed: the server or the host is noisy at this rate)"
                    } else {
                        ""
                    }
                );
                None
            }
            Some(Bracket::AllPassed { highest }) => Some(highest),
            Some(Bracket::Between { pass, fail }) => {
                let mut bisection = Bisection {
                    pass,
                    fail,
                    resolution: self.plan.resolution,
                };
                while let Some(rate) = bisection.next() {
                    let m = self.measure(Kind::Search, Some(rate), self.base.plan.connections)?;
                    let met = m.slo.as_ref().is_some_and(|v| v.met);
                    writeln!(self.stdout, "search: {rate:.0} req/s: {}", m.describe())?;
                    bisection.record(rate, met);
                }
                result.first_failing_per_sec = Some(bisection.fail);
                Some(bisection.pass)
            }
        };
        if let Some(candidate) = candidate {
            result.searched_per_sec = Some(candidate);
            let measured = self.open_results(|k| k.is_open_loop());
            let mut failed = Vec::new();
            for rate in search::confirm_order(candidate, &measured, CONFIRM_TRIES) {
                let m = self.measure(Kind::Confirm, Some(rate), self.base.plan.connections)?;
                writeln!(self.stdout, "re-measure: {rate:.0} req/s: {}", m.describe())?;
                if m.slo.as_ref().is_some_and(|v| v.met) {
                    result.capacity_per_sec = Some(rate);
                    result.confirmed = true;
                    break;
                }
                failed.push(format!("{rate:.0}"));
            }
            let bound = match result.first_failing_per_sec {
                Some(f) => format!("{f:.0} req/s failed"),
                None => "every rate tried passed, so the capacity may be higher: extend --rates"
                    .to_string(),
            };
            result.summary = match (result.capacity_per_sec, failed.is_empty()) {
                (Some(c), true) => format!(
                    "capacity at {objectives}: {c:.0} req/s, held when re-measured ({bound})"
                ),
                (Some(c), false) => format!(
                    "capacity at {objectives}: {c:.0} req/s; the search found {candidate:.0} req/s but the re-measurement at {} req/s missed, so this is the highest rate that held ({bound})",
                    failed.join(", ")
                ),
                (None, _) => format!(
                    "no capacity at {objectives}: the search found {candidate:.0} req/s but re-measurements at {} req/s missed; the server is too noisy at this resolution",
                    failed.join(", ")
                ),
            };
        }
        writeln!(self.stdout, "{}", result.summary)?;
        self.report.slo = Some(result);
        self.save_report()?;
        Ok(())
    }

    /// `(rate, met)` of the open-loop measurements of the kinds `keep` accepts, by rate.
    fn open_results(&self, keep: impl Fn(Kind) -> bool) -> Vec<(f64, bool)> {
        let mut v: Vec<(f64, bool)> = self
            .report
            .runs
            .iter()
            .filter(|m| keep(m.kind))
            .filter_map(|m| {
                Some((
                    m.target_rate_per_sec?,
                    m.slo.as_ref().is_some_and(|s| s.met),
                ))
            })
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    }

    /// Runs one measurement (after the settle pause), records it and writes every file.
    fn measure(
        &mut self,
        kind: Kind,
        rate: Option<f64>,
        connections: usize,
    ) -> Result<Measurement, Halt> {
        if self.measured_once {
            self.settle()?;
        }
        if self.cancel.is_cancelled() {
            return Err(Halt::Interrupted);
        }
        self.measured_once = true;
        let mut config = self.base.clone();
        config.plan.connections = connections;
        config.plan.threads = self.sweep.threads.min(connections).max(1);
        config.plan.mode = match (kind, rate) {
            (k, Some(r)) if k.is_open_loop() => self.sweep.open_mode(r),
            (Kind::RateCapped, cap) => Mode::Closed {
                pipeline: 1,
                rate_cap_per_sec: cap,
                workers: None,
            },
            _ => Mode::Closed {
                pipeline: 1,
                rate_cap_per_sec: None,
                workers: None,
            },
        };
        if !config.is_open_loop() {
            config.plan.warmup = Duration::ZERO;
        }
        let hlog_name = hlog_name(kind, rate, connections);
        let hlog_path = self.out.join(&hlog_name);
        let comment = format!(
            "tailrate {} seed {} {} {}",
            env!("CARGO_PKG_VERSION"),
            config.plan.seed,
            kind.name(),
            self.report.test
        );
        let mut hlog = HlogWriter::create(&hlog_path, SystemTime::now(), &comment)
            .with_context(|| format!("creating {} in --out", hlog_path.display()))?;
        let started_secs = self.started.elapsed().as_secs_f64();
        let (report, stopped_early) = app::measure(
            &config,
            self.cluster.as_ref(),
            0,
            self.cancel,
            &mut *self.stderr,
            self.stderr_is_terminal,
            Some(&mut hlog),
            Duration::ZERO,
        )?;
        drop(hlog);
        let slo = (kind.is_open_loop() && !self.plan.slos.is_empty())
            .then(|| search::judge(&report, &self.plan.slos));
        let m = Measurement {
            kind,
            target_rate_per_sec: rate,
            connections,
            started_secs,
            hlog: hlog_name,
            slo,
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
                self.save_report()?;
                Ok(m)
            }
        }
    }

    /// The pause between measurements; Ctrl+C ends it at once.
    fn settle(&self) -> Result<(), Halt> {
        let end = Instant::now() + self.plan.settle;
        while Instant::now() < end {
            if self.cancel.is_cancelled() {
                return Err(Halt::Interrupted);
            }
            std::thread::sleep((end - Instant::now()).min(Duration::from_millis(20)));
        }
        Ok(())
    }
}

/// `step-20000.hlog`, `rate-capped-20000.hlog`, `closed-loop-c10.hlog`, `closed-loop-max-c50.hlog`.
fn hlog_name(kind: Kind, rate: Option<f64>, connections: usize) -> String {
    let rate = rate.map(|r| format!("{r:.0}")).unwrap_or_default();
    match kind {
        Kind::Step | Kind::Search => format!("step-{rate}.hlog"),
        Kind::Confirm => format!("confirm-{rate}.hlog"),
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
        assert_eq!(hlog_name(Kind::Step, Some(20_000.0), 50), "step-20000.hlog");
        assert_eq!(
            hlog_name(Kind::Confirm, Some(1234.4), 50),
            "confirm-1234.hlog"
        );
        assert_eq!(
            hlog_name(Kind::ClosedLoop, None, 10),
            "closed-loop-c10.hlog"
        );
    }
}
