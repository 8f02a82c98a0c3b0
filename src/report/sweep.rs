//! The saved sweep (`sweep.json`, serde) and its CSV rows. The JSON is the only input
//! of the plots, so `tailrate plot` redraws exactly what the sweep drew.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{Header, Latency, Settings, TestReport};
use crate::config::sweep::Slo;

/// One objective at one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloCheck {
    /// The objective as typed.
    pub slo: String,
    /// The measured response-time percentile in nanoseconds (none without replies).
    pub measured_ns: Option<u64>,
    /// Whether it holds.
    pub met: bool,
}

/// Whether a step met every objective, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloVerdict {
    /// Every objective held and the step was valid.
    pub met: bool,
    /// The achieved rate was within tolerance and nothing went unsent.
    pub valid: bool,
    /// Each objective.
    pub checks: Vec<SloCheck>,
}

/// Version of the sweep JSON layout; bumped on any incompatible change.
pub const SWEEP_SCHEMA_VERSION: u32 = 1;

/// A whole sweep: every measurement in the order it ran, and the SLO result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepReport {
    /// What every report of tailrate opens with.
    #[serde(flatten)]
    pub header: Header,
    /// The settings of the open-loop steps (the target rate is each step's own).
    pub settings: Settings,
    /// The test swept (`GET`, or the custom command).
    pub test: String,
    /// What the sweep was asked to do.
    pub plan: PlanRecord,
    /// Every measurement, in the order run.
    pub runs: Vec<Measurement>,
    /// The SLO search's result, when `--slo` was given.
    pub slo: Option<SloResult>,
    /// Why the steps stopped before the last rate (past saturation), if they did.
    pub stopped: Option<String>,
    /// Ctrl+C or SIGTERM ended the sweep; `runs` holds what finished.
    pub interrupted: bool,
    /// The measurement cut short by the interruption (not plotted).
    pub partial: Option<Measurement>,
    /// Every planned phase ran.
    pub complete: bool,
}

/// The sweep's flags, resolved.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PlanRecord {
    /// `--rates` as typed.
    pub rates: String,
    /// The open-loop rates of the coarse steps, requests per second.
    pub rates_per_sec: Vec<f64>,
    /// The objectives.
    pub slos: Vec<Slo>,
    /// Warm-up of each step.
    pub warmup_secs: f64,
    /// Measured window of each step.
    pub duration_secs: f64,
    /// Pause between steps.
    pub settle_secs: f64,
    /// `--stop-at` in nanoseconds.
    pub stop_at_ns: Option<u64>,
    /// Bisection resolution as a fraction of the rate.
    pub resolution: f64,
    /// `--closed-loop-points`.
    pub closed_loop_points: Vec<usize>,
    /// `--rate-capped`.
    pub rate_capped: bool,
}

/// What a measurement was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Closed loop with the user's `-c`, whose throughput is 100% for percentage rates.
    ClosedLoopMax,
    /// A coarse open-loop step from `--rates`.
    Step,
    /// An open-loop step of the SLO bisection.
    Search,
    /// The re-measurement of the capacity.
    Confirm,
    /// A closed loop held to a step's rate (`--rate-capped`).
    RateCapped,
    /// A closed loop at one of `--closed-loop-points`.
    ClosedLoop,
}

impl Kind {
    /// snake_case name, as in the JSON and CSV.
    pub fn name(self) -> &'static str {
        match self {
            Kind::ClosedLoopMax => "closed_loop_max",
            Kind::Step => "step",
            Kind::Search => "search",
            Kind::Confirm => "confirm",
            Kind::RateCapped => "rate_capped",
            Kind::ClosedLoop => "closed_loop",
        }
    }

    /// "the step run at 20000 req/s", "the closed_loop run with 10 connections".
    pub fn describe(self, rate: Option<f64>, connections: usize) -> String {
        match rate {
            Some(r) => format!("the {} run at {r:.0} req/s", self.name()),
            None => format!("the {} run with {connections} connections", self.name()),
        }
    }

    /// Whether it is an open-loop step (coarse, search or confirmation).
    pub fn is_open_loop(self) -> bool {
        matches!(self, Kind::Step | Kind::Search | Kind::Confirm)
    }
}

/// One run of the test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Measurement {
    /// What it was for.
    pub kind: Kind,
    /// Open-loop target, or the cap of a rate-capped closed loop.
    pub target_rate_per_sec: Option<f64>,
    /// Connections.
    pub connections: usize,
    /// Seconds from the sweep's start to this run's start.
    pub started_secs: f64,
    /// Its HdrHistogram interval log, relative to the sweep's directory.
    pub hlog: String,
    /// Its verdict against the SLOs (open-loop steps, when `--slo` was given).
    pub slo: Option<SloVerdict>,
    /// Its full report.
    pub report: TestReport,
}

/// The highest rate that meets every SLO.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SloResult {
    /// The objectives.
    pub slos: Vec<Slo>,
    /// Highest rate that met every objective, including when re-measured.
    pub capacity_per_sec: Option<f64>,
    /// What the bisection found, before re-measuring.
    pub searched_per_sec: Option<f64>,
    /// Lowest rate seen failing above it (none when every rate passed).
    pub first_failing_per_sec: Option<f64>,
    /// The capacity held when re-measured.
    pub confirmed: bool,
    /// The result in one sentence.
    pub summary: String,
}

impl Measurement {
    /// One line about a measurement: rates, response percentiles and the SLO verdict.
    pub fn describe(&self) -> String {
        let m = self;
        let r = &m.report;
        let mut line = format!(
            "achieved {:.0} req/s, {:.0} replies/s",
            r.achieved_rate_per_sec, r.throughput_per_sec
        );
        if let Some(l) = r.response() {
            let ms = |ns: u64| ns as f64 / 1e6;
            line.push_str(&format!(
                ", response p50 {:.3} p99 {:.3} p99.9 {:.3} max {:.3} ms",
                ms(l.p50_ns),
                ms(l.p99_ns),
                ms(l.p99_9_ns),
                ms(l.max_ns)
            ));
        }
        if let Some(v) = &m.slo {
            line.push_str(match (v.met, v.valid) {
                (true, _) => "; SLO met",
                (false, true) => "; SLO missed",
                (false, false) if v.checks.iter().all(|c| c.met) => {
                    "; objectives held but sends fell short of the schedule"
                }
                (false, false) => "; SLO missed (rate not achieved or requests not sent)",
            });
        }
        if let Some(b) = &r.bottleneck {
            line.push_str("; bottleneck: ");
            line.push_str(b.verdict.name());
        }
        if !r.valid {
            line.push_str("; INVALID: ");
            line.push_str(&r.why_invalid());
        }
        line
    }
}

/// A step whose achieved rate is below this fraction of its target is past saturation.
pub const SATURATION_FRACTION: f64 = 0.95;

/// The achieved rate (requests written per second, over a window stretched to the last
/// send) as a fraction of the rate the schedule planned in the measured window
/// (intended / measured seconds). A server past saturation fills every connection's
/// in-flight cap, sends go late or never, and this falls. Against the schedule's own
/// count rather than the nominal target, so a Poisson schedule's count noise
/// (1/sqrt(n), 4.5% at 500 requests) is not mistaken for saturation.
pub fn achieved_fraction(report: &TestReport) -> f64 {
    let c = &report.counts;
    if c.intended > 0 && report.measured_secs > 0.0 {
        report.achieved_rate_per_sec / (c.intended as f64 / report.measured_secs)
    } else {
        match report.target_rate_per_sec {
            Some(target) if target > 0.0 => report.achieved_rate_per_sec / target,
            _ => 1.0,
        }
    }
}

/// Why a file is not a sweep this version reads.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Not JSON at all.
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    /// A sweep of another layout version.
    #[error("sweep schema_version {found}; this tailrate reads {SWEEP_SCHEMA_VERSION}")]
    Version {
        /// The version in the file.
        found: u64,
    },
    /// JSON, but not a sweep (no `schema_version` and `runs`).
    #[error("not a sweep.json written by `tailrate sweep` (no schema_version and runs)")]
    NotASweep,
    /// A sweep of this version whose fields do not parse.
    #[error("not a sweep.json layout this tailrate reads: {0}")]
    Layout(serde_json::Error),
}

/// Parses sweep JSON, refusing other layouts with a clear message.
pub fn parse(bytes: &[u8]) -> Result<SweepReport, ParseError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(ParseError::NotJson)?;
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SWEEP_SCHEMA_VERSION) && value.get("runs").is_some() => {}
        Some(found) if value.get("runs").is_some() => return Err(ParseError::Version { found }),
        _ => return Err(ParseError::NotASweep),
    }
    // Parse the bytes themselves (not `value`) so a float reads the same on every path.
    serde_json::from_slice(bytes).map_err(ParseError::Layout)
}

/// The CSV header: one row per measurement, metric and percentile.
pub const CSV_HEADER: &str = r#""kind","target_rps","connections","achieved_rps","throughput_rps","slo_met","metric","percentile","latency_ms","valid","bottleneck""#;

/// The percentiles of a CSV row, with the accessor of each.
type Pick = fn(&Latency) -> f64;
const CSV_PERCENTILES: [(&str, Pick); 9] = [
    ("min", |l| l.min_ns as f64),
    ("p50", |l| l.p50_ns as f64),
    ("p90", |l| l.p90_ns as f64),
    ("p95", |l| l.p95_ns as f64),
    ("p99", |l| l.p99_ns as f64),
    ("p99.9", |l| l.p99_9_ns as f64),
    ("p99.99", |l| l.p99_99_ns as f64),
    ("max", |l| l.max_ns as f64),
    ("mean", |l| l.mean_ns),
];

/// The whole CSV file for `report`.
pub fn csv(report: &SweepReport) -> String {
    let mut out = String::new();
    out.push_str(CSV_HEADER);
    out.push('\n');
    for run in &report.runs {
        let target = run
            .target_rate_per_sec
            .map(|t| format!("{t:.0}"))
            .unwrap_or_default();
        let slo = run
            .slo
            .as_ref()
            .map(|v| v.met.to_string())
            .unwrap_or_default();
        let bottleneck = run
            .report
            .bottleneck
            .as_ref()
            .map_or("", |b| b.verdict.name());
        for (metric, latency) in &run.report.latency {
            for (name, value) in CSV_PERCENTILES {
                let _ = writeln!(
                    out,
                    "\"{}\",\"{target}\",\"{}\",\"{:.1}\",\"{:.1}\",\"{slo}\",\"{metric}\",\"{name}\",\"{:.6}\",\"{}\",\"{bottleneck}\"",
                    run.kind.name(),
                    run.connections,
                    run.report.achieved_rate_per_sec,
                    run.report.throughput_per_sec,
                    value(latency) / 1e6,
                    run.report.valid
                );
            }
        }
    }
    out
}
