//! The saved sweep (`sweep.json`, serde) and its CSV rows. The JSON is the only input
//! of the plots, so `tailrate plot` redraws exactly what the sweep drew. Every field
//! added since the first layout has a default, so older files still read.
//!
//! Each run is kept (`runs`, in the order run, each `--repeat` with its index); the
//! steps by rate (`steps`, see [`steps`]) summarise the runs at each rate, and `slo`
//! holds the capacity, its band and what limited it.

use serde::{Deserialize, Serialize};

use super::{Bottleneck, Header, Settings, TestReport};
use crate::config::slo::Slo;
use crate::config::sweep::Order;
use crate::stats::confidence::Ci95;

pub mod estimate;
mod landmarks;
mod search;
mod speed;
pub mod steps;
pub use estimate::{Disturbed, ObjectiveEstimate, RateBound};
pub use landmarks::{Floor, Landmarks, OpenLoopMax};
pub use search::{BudgetDeciding, BudgetEnded, SearchSpan};
pub use speed::SpeedCapacity;
pub use steps::{Exceedance, PooledPercentile, StepCheck, StepSummary, StepVerdict};

/// A step's verdict against an objective, stated with its confidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The percentile's 95% interval lies at or under the bound.
    Pass,
    /// The interval lies above the bound (or the rate could not be carried).
    Fail,
    /// The interval straddles the bound, or has no upper end.
    Uncertain,
}

impl Verdict {
    /// `pass`, `fail`, `uncertain`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Uncertain => "uncertain",
        }
    }
}

/// One objective at one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloCheck {
    /// The objective as typed.
    pub slo: String,
    /// The measured response-time percentile in nanoseconds (none without replies).
    pub measured_ns: Option<u64>,
    /// Its 95% interval within the run (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_ns: Option<Ci95>,
    /// Whether the measured value holds.
    pub met: bool,
    /// This objective alone, by the pooled exceedance test over the run's windows
    /// (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The share of replies over the bound the verdict rests on (absent in older files
    /// and without response windows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exceedance: Option<steps::Exceedance>,
}

/// Whether a run met every objective, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloVerdict {
    /// Every objective's measured value held and the run was valid.
    pub met: bool,
    /// The achieved rate was within tolerance and nothing went unsent.
    pub valid: bool,
    /// This run alone, by the rule of a step with its windows as clusters (absent in older
    /// files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Why, as a step's verdict has it (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<steps::StepWhy>,
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
    /// The open-loop runs by target rate, each rate's runs summarised and judged; by
    /// increasing rate (empty in older files: `judge::summary::steps_of` summarises
    /// their runs).
    #[serde(default)]
    pub steps: Vec<StepSummary>,
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
    /// `--repeat`: runs of every open-loop step (1 in older files).
    #[serde(default = "one")]
    pub repeat: usize,
    /// `--order` of the coarse steps.
    #[serde(default)]
    pub order: Order,
    /// `--budget` in seconds, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_secs: Option<f64>,
}

fn one() -> usize {
    1
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
    /// Which of the `--repeat` runs at this rate and phase it is, from 0.
    #[serde(default)]
    pub repeat: usize,
    /// Seconds from the sweep's start to this run's start.
    pub started_secs: f64,
    /// Its HdrHistogram interval log, relative to the sweep's directory.
    pub hlog: String,
    /// Its verdict against the SLOs (open-loop steps, when `--slo` was given).
    pub slo: Option<SloVerdict>,
    /// The seed of its arrivals and keys: each open-loop run of a sweep draws its own
    /// (absent in older files, whose runs all used the sweep's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Its full report.
    pub report: TestReport,
}

/// The highest rate that meets every SLO with stated confidence, and the band of rates
/// where the verdict is uncertain.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SloResult {
    /// The objectives.
    pub slos: Vec<Slo>,
    /// Highest rate that passed (every objective's 95% interval at or under its bound)
    /// with no rate under it failing, including when re-measured; none when no rate did.
    pub capacity_per_sec: Option<f64>,
    /// `[capacity, lowest failing rate above it]`: the capacity lies in it. The low end is
    /// 0 when no rate passed; the high end is null when no rate above the capacity failed.
    /// Absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_band_per_sec: Option<(f64, Option<f64>)>,
    /// What kept the band from being narrower: `noise` (rates inside it were uncertain),
    /// the bottleneck of the lowest failing rate (`server`, `generator`, `client-queue`,
    /// `network/kernel`, or `none` when it named none), or `rates` (no rate above the
    /// capacity failed: extend `--rates`). Absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<Limit>,
    /// The uncertain rates inside the band, increasing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncertain_per_sec: Vec<f64>,
    /// What the bisection found, before re-measuring.
    pub searched_per_sec: Option<f64>,
    /// Lowest rate that failed above the capacity (none when none did).
    pub first_failing_per_sec: Option<f64>,
    /// The capacity still passed when re-measured.
    pub confirmed: bool,
    /// Rates under every pass that failed: a tail at low load, reported beside the
    /// capacity rather than in its place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub low_load_failing_per_sec: Vec<f64>,
    /// The share of replies over the bound at the capacity (the objective nearest to
    /// failing), pooled over its runs, with the decision's bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_exceedance: Option<Exceedance>,
    /// The floor, the knee and saturation.
    #[serde(default)]
    pub landmarks: Landmarks,
    /// Each objective's capacity estimated from every counted run, the binding one
    /// marked: the headline (absent in older files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub estimates: Vec<ObjectiveEstimate>,
    /// The runs the host disturbed, left out of the estimates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbed: Option<Disturbed>,
    /// `--budget` ran out before the search ended: what more time would have bought
    /// (absent in older files, which keep only its words, `budget_ended`, as
    /// `export::sweep_json` writes them beside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetEnded>,
    /// Open-loop runs measured, and their seconds.
    #[serde(default)]
    pub visits: usize,
    /// Seconds the open-loop runs measured for.
    #[serde(default)]
    pub visit_secs: f64,
    /// A sweep over a trace's speeds: the capacity and its band as multiples of the
    /// recorded traffic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_speed: Option<SpeedCapacity>,
    /// What the search read beside the fields above, so the result's sentence can be
    /// said again from a sweep read back (absent in older files, which keep only the
    /// sentence, `summary`, as `export::sweep_json` writes it beside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<SearchSpan>,
}

impl SloResult {
    /// The binding objective's estimate: the capacity every output leads with; `None` in
    /// a file saved before estimates, or where the search fitted none.
    pub fn binding_estimate(&self) -> Option<&ObjectiveEstimate> {
        self.estimates.iter().find(|e| e.binding)
    }
}

/// What kept a capacity's band from being narrower: the noise, the rates tried, or the
/// bottleneck the lowest failing rate named. Written as one name (`noise`, `rates`, or
/// the bottleneck's: `generator`, `server`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Rates inside the band were uncertain: the host's or server's noise.
    Noise,
    /// No rate above the capacity failed: the rates tried end too low.
    Rates,
    /// What held back the lowest failing rate (`None` when it named nothing).
    Bottleneck(Bottleneck),
}

impl Limit {
    /// The JSON name.
    pub fn name(self) -> &'static str {
        match self {
            Limit::Noise => "noise",
            Limit::Rates => "rates",
            Limit::Bottleneck(b) => b.name(),
        }
    }

    /// The limit a failing rate's bottleneck sets (none named: [`Bottleneck::None`]).
    pub fn of(bottleneck: Option<Bottleneck>) -> Self {
        Limit::Bottleneck(bottleneck.unwrap_or(Bottleneck::None))
    }
}

impl Serialize for Limit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        match name.as_str() {
            "noise" => Ok(Limit::Noise),
            "rates" => Ok(Limit::Rates),
            other => Bottleneck::from_name(other)
                .map(Limit::Bottleneck)
                .ok_or_else(|| serde::de::Error::custom(format!("unknown limit {other:?}"))),
        }
    }
}

/// Why a file is not a sweep this version reads.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Not JSON at all.
    #[error("{}", crate::report::not_json(.0))]
    NotJson(serde_json::Error),
    /// A sweep of another layout version.
    #[error("sweep schema_version {found}; this tailrate reads {SWEEP_SCHEMA_VERSION}")]
    Version {
        /// The version in the file.
        found: u64,
    },
    /// A run's report (`tailrate --json`), not a sweep.
    #[error(
        "a run's report (tailrate --json), not a sweep: tailrate plot draws the sweep.json a `tailrate sweep` writes"
    )]
    RunReport,
    /// JSON, but not a sweep (no `schema_version` and `runs`).
    #[error("not a sweep.json written by `tailrate sweep` (it has no {0})")]
    NotASweep(&'static str),
    /// A sweep of this version whose fields do not parse.
    #[error("not a sweep.json layout this tailrate reads: {0}")]
    Layout(serde_json::Error),
    /// A run in it holds a number no run could have.
    #[error("run {index}: {why}")]
    Implausible {
        /// The run's place in `runs`, from 0.
        index: usize,
        /// The field and what is wrong with it.
        why: String,
    },
}

/// Parses sweep JSON, refusing other layouts with a clear message.
pub fn parse(bytes: &[u8]) -> Result<SweepReport, ParseError> {
    let keys = super::scan::TopKeys::of(bytes).map_err(ParseError::NotJson)?;
    let runs = keys.runs.is_some();
    match keys.version() {
        Some(v) if v == u64::from(SWEEP_SCHEMA_VERSION) && runs => {}
        Some(found) if runs => return Err(ParseError::Version { found }),
        Some(_) if keys.tests.is_some() => return Err(ParseError::RunReport),
        Some(_) => return Err(ParseError::NotASweep("runs")),
        None => return Err(ParseError::NotASweep("schema_version")),
    }
    let sweep: SweepReport = serde_json::from_slice(bytes).map_err(ParseError::Layout)?;
    for (index, run) in sweep.runs.iter().enumerate() {
        let why = super::plausible::implausible(&run.report)
            .or_else(|| super::plausible::implausible_place(run.started_secs, run.repeat));
        if let Some(why) = why {
            return Err(ParseError::Implausible { index, why });
        }
    }
    Ok(sweep)
}

/// The runs in the CSV's order: kinds in the order each first ran, each kind's runs by
/// rate and then repeat, so a shuffled sweep's rows read by rate as an ascending one's do.
pub fn by_kind_and_rate(runs: &[Measurement]) -> Vec<&Measurement> {
    let mut kinds: Vec<Kind> = Vec::new();
    for m in runs {
        if !kinds.contains(&m.kind) {
            kinds.push(m.kind);
        }
    }
    let rank = |k: Kind| kinds.iter().position(|x| *x == k).unwrap_or(usize::MAX);
    let mut sorted: Vec<&Measurement> = runs.iter().collect();
    // Stable: runs at one rate and repeat keep their order (closed loops have no rate).
    sorted.sort_by(|a, b| {
        rank(a.kind).cmp(&rank(b.kind)).then(
            a.target_rate_per_sec
                .unwrap_or(0.0)
                .total_cmp(&b.target_rate_per_sec.unwrap_or(0.0))
                .then(a.repeat.cmp(&b.repeat)),
        )
    });
    sorted
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_limit_is_written_as_one_name_and_read_back() {
        let all = [Limit::Noise, Limit::Rates]
            .into_iter()
            .chain(Bottleneck::ALL.map(Limit::Bottleneck));
        for limit in all {
            let json = serde_json::to_string(&limit).unwrap();
            assert_eq!(json, format!("\"{}\"", limit.name()));
            assert_eq!(serde_json::from_str::<Limit>(&json).unwrap(), limit);
        }
        assert_eq!(
            serde_json::to_string(&Limit::Bottleneck(Bottleneck::NetworkKernel)).unwrap(),
            "\"network/kernel\""
        );
        assert!(serde_json::from_str::<Limit>("\"weather\"").is_err());
    }
}
