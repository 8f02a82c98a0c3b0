//! A/B with confidence, the model: two sides' latency percentiles compared one by one,
//! each difference with an interval and a verdict ([`Comparison`], [`Group`], [`Row`],
//! [`Verdict`]), and how to compare ([`Options`]). Deciding the rows is `judge::compare`'s,
//! the interval of a difference `stats::mover`'s, reading the files and measuring the
//! servers `compare`'s, the table `export::compare_text`'s.
//!
//! The sides are lists of [`Entry`]s (a test, or one command of a test, with its latency
//! by metric), made from a run report ([`entries_of_run`]), a sweep report
//! ([`entries_of_sweep`]: each measurement named by its kind and its target rate or
//! connections) or a live duet; a repeat of `--repeat` adds its number to the name.
//!
//! A side whose interval has no upper end (fewer than ten samples beyond the percentile)
//! gives no interval of the difference: the verdict is [`Verdict::CannotTell`]. The 95%
//! is the comparison's, not each row's: the intervals of the differences hold together
//! ([`Comparison::row_confidence`]).

mod sides;

pub use sides::{Entry, Report, entries_of_run, entries_of_sweep, parse};

use serde::{Deserialize, Serialize};

use super::Percentile;
use super::sweep;
use crate::record::Metric;
use crate::stats::confidence::Ci95;

/// Version of the comparison's JSON layout; bumped on any incompatible change.
pub const COMPARE_SCHEMA_VERSION: u32 = 2;

/// What a difference's interval says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval is above zero.
    BSlower,
    /// The whole interval is below zero.
    BFaster,
    /// The whole interval lies inside the margin (`--margin`, a share of A's value) on
    /// both sides of zero: the two one-sided tests of equivalence (TOST) both reject.
    Equivalent,
    /// Written by older versions: the interval held zero. Never given now: an interval
    /// that holds zero is [`Verdict::Equivalent`] inside the margin, else
    /// [`Verdict::CannotTell`].
    NoDifference,
    /// The interval holds zero and reaches past the margin, or is open at the end that
    /// would decide: the data cannot tell.
    CannotTell,
    /// A and B are one report (the same file, or files of the same bytes): nothing was
    /// compared.
    SameFile,
}

impl Verdict {
    /// As printed: `B slower`.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::BSlower => "B slower",
            Verdict::BFaster => "B faster",
            Verdict::Equivalent => "equivalent",
            Verdict::NoDifference => "no difference",
            Verdict::CannotTell => "cannot tell",
            Verdict::SameFile => "same file",
        }
    }

    /// The verdict of a difference's interval `(lower, upper)` in nanoseconds, an end
    /// `None` where it is open, against an equivalence margin of `margin_ns` either side
    /// of zero: slower or faster when the interval excludes zero, equivalent when it lies
    /// strictly inside the margin, cannot tell otherwise.
    pub fn of(interval: (Option<f64>, Option<f64>), margin_ns: f64) -> Self {
        match interval {
            (Some(low), _) if low > 0.0 => Verdict::BSlower,
            (_, Some(high)) if high < 0.0 => Verdict::BFaster,
            (Some(low), Some(high)) if -margin_ns < low && high < margin_ns => Verdict::Equivalent,
            _ => Verdict::CannotTell,
        }
    }
}

/// One percentile of one metric, A against B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The percentile's key (`p99_9`).
    pub percentile: String,
    /// A's value.
    pub a_ns: u64,
    /// A's 95% interval (`high` null when unbounded).
    pub a_ci95_ns: Ci95,
    /// Samples beyond A's value, when known.
    pub a_beyond: Option<u64>,
    /// B's value.
    pub b_ns: u64,
    /// B's 95% interval.
    pub b_ci95_ns: Ci95,
    /// Samples beyond B's value, when known.
    pub b_beyond: Option<u64>,
    /// `b - a`.
    pub difference_ns: i64,
    /// `(b - a) / a` in percent; null when A's value is 0.
    pub difference_pct: Option<f64>,
    /// The interval of `b - a`, `[lower, upper]`, rounded outward: with every other row's,
    /// 95% together (each at the comparison's `row_confidence`). An end is null where it
    /// rests on a side's unbounded upper end (the lower on A's, the upper on B's); the
    /// whole is null when both are.
    pub difference_ci95_ns: Option<[Option<i64>; 2]>,
    /// The same interval in percent of A's value.
    pub difference_ci95_pct: Option<[Option<f64>; 2]>,
    /// What the interval says.
    pub verdict: Verdict,
    /// With `--fail-if-slower`: the interval's lower end is above that share of A's value.
    pub slower_than_allowed: bool,
}

impl Row {
    /// The percentile as printed (`p99.9`).
    pub fn label(&self) -> &str {
        Percentile::ALL
            .into_iter()
            .find(|p| p.key() == self.percentile)
            .map_or(self.percentile.as_str(), |p| p.label())
    }
}

/// One metric of one matched entry: every percentile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The entry's name: the test, or the sweep measurement.
    pub test: String,
    /// The command, for one command of a test that sends several.
    pub command: Option<String>,
    /// `response`, `service`, `lag` or `queue_wait`.
    pub metric: String,
    /// A's replies.
    pub a_count: u64,
    /// B's replies.
    pub b_count: u64,
    /// What A's intervals rest on.
    pub a_intervals: String,
    /// What B's intervals rest on.
    pub b_intervals: String,
    /// One per percentile of [`Percentile::ALL`].
    pub rows: Vec<Row>,
}

impl Group {
    /// `GET`, or `GET / get` for a command of a test.
    pub fn name(&self) -> String {
        match &self.command {
            Some(c) => format!("{} / {c}", self.test),
            None => self.test.clone(),
        }
    }
}

/// One side, as the comparison names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// The file, or the endpoint measured.
    pub source: String,
    /// `run`, `sweep` or `live`.
    pub kind: String,
    /// The tool that wrote it, when read from a file.
    pub tool: Option<String>,
    /// The server's version, when it said.
    pub server_version: Option<String>,
    /// Its seed, when known.
    pub seed: Option<u64>,
}

/// A live duet's plan, as run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Duet {
    /// Rounds run (each side measured once per round).
    pub rounds: usize,
    /// Each side's time per round.
    pub round_secs: f64,
    /// The open-loop rate of both sides.
    pub rate_per_sec: f64,
    /// The order of each round, `AB` or `BA`.
    pub orders: Vec<String>,
    /// The rounds ended before the plan (Ctrl+C).
    pub interrupted: bool,
}

/// A whole comparison: what was compared, every row, what did not match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Layout version.
    pub schema_version: u32,
    /// The tool that compared.
    pub tool: String,
    /// Confidence of the differences' intervals and the verdicts, all together.
    pub confidence: f64,
    /// Rows that can give a verdict (both sides' 95% intervals bounded): the `m` the
    /// confidence is shared among.
    pub family_rows: usize,
    /// Confidence of each row's interval of the difference, and of the sides' intervals it
    /// is made from: `1 - (1 - confidence) / family_rows`.
    pub row_confidence: f64,
    /// How the differences' intervals are made.
    pub method: String,
    /// Side A.
    pub a: Side,
    /// Side B.
    pub b: Side,
    /// `--fail-if-slower`, in percent.
    pub fail_if_slower_pct: Option<f64>,
    /// The equivalence margin, percent of A's value (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_pct: Option<f64>,
    /// Why A and B are one report, when they are (every row then reads `same_file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_file: Option<String>,
    /// The live duet, when the sides were measured by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<Duet>,
    /// Two sweeps' capacities at their objectives, when both searched one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityComparison>,
    /// Every matched entry's compared metrics.
    pub groups: Vec<Group>,
    /// Entries only A has.
    pub only_in_a: Vec<String>,
    /// Entries only B has.
    pub only_in_b: Vec<String>,
    /// What the reader should know: recomputed intervals, invalid tests, skipped metrics.
    pub notes: Vec<String>,
}

impl Comparison {
    /// Every row with its group, in order.
    pub fn rows(&self) -> impl Iterator<Item = (&Group, &Row)> {
        self.groups
            .iter()
            .flat_map(|g| g.rows.iter().map(move |r| (g, r)))
    }

    /// How many rows have `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.rows().filter(|(_, r)| r.verdict == verdict).count()
    }
}

/// Two sweeps' capacities side by side: each lies in its band, `[capacity, the lowest
/// failing rate above it)`, so they differ only where the bands do not meet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityComparison {
    /// A's objectives, as given (`p99<=1ms`).
    pub objectives: String,
    /// A's capacity, requests per second; none when no rate passed.
    pub a_per_sec: Option<f64>,
    /// A's band: low end (0 when no rate passed) and high end (none when open).
    pub a_band_per_sec: (f64, Option<f64>),
    /// B's capacity.
    pub b_per_sec: Option<f64>,
    /// B's band.
    pub b_band_per_sec: (f64, Option<f64>),
    /// `b_higher`, `b_lower`, `cannot_tell` (the bands meet) or `not_comparable` (the
    /// sweeps searched other objectives).
    pub verdict: String,
    /// Why: the rates that decided it (said by `export::reasons`; the JSON holds the
    /// words).
    pub why: CapacityWhy,
}

/// Why two sweeps' capacities compare as they do, with the figures that decided it.
#[derive(Debug, Clone, PartialEq)]
pub enum CapacityWhy {
    /// The sweeps searched other objectives.
    NotComparable {
        /// A's objectives, as typed and joined.
        a: String,
        /// B's.
        b: String,
    },
    /// B's band ends at or under A's capacity.
    BLower {
        /// The rate B failed at (its band's high end), requests per second.
        b_failed: f64,
        /// The rate A passed at (its band's low end).
        a_passed: f64,
    },
    /// A's band ends at or under B's capacity.
    BHigher {
        /// The rate B passed at (its band's low end), requests per second.
        b_passed: f64,
        /// The rate A failed at (its band's high end).
        a_failed: f64,
    },
    /// The two bands meet.
    BandsMeet,
    /// The words alone, as a comparison read back from JSON holds them.
    Text(String),
}

impl<'de> Deserialize<'de> for CapacityWhy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(CapacityWhy::Text)
    }
}

/// Which metrics to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metrics {
    /// One.
    One(Metric),
    /// Every metric both sides have.
    All,
}

/// How to compare.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The metrics.
    pub metrics: Metrics,
    /// `--fail-if-slower`, as a fraction (0.05 for 5%).
    pub fail_if_slower: Option<f64>,
    /// `--margin`, as a fraction of A's value: how near B must be shown to be to read
    /// equivalent ([`DEFAULT_MARGIN`] unless set).
    pub margin: f64,
    /// Why A and B are one report (`the same path`, `the same bytes`), when they are.
    pub same_file: Option<String>,
}

/// The equivalence margin without `--margin` (config's, which plans it).
pub use crate::config::compare::DEFAULT_MARGIN;

/// Why a comparison cannot be made; all of them are the user's to fix.
#[derive(Debug, thiserror::Error)]
pub enum ComparisonError {
    /// Not JSON.
    #[error("{}", crate::report::not_json(.0))]
    NotJson(serde_json::Error),
    /// JSON, but no report of tailrate's that compare reads.
    #[error("{0}")]
    NotAReport(String),
    /// A run report whose fields do not parse.
    #[error("not a run report this tailrate reads: {0}")]
    Layout(serde_json::Error),
    /// A sweep that does not parse.
    #[error(transparent)]
    Sweep(#[from] sweep::ParseError),
    /// A run report against a sweep report.
    #[error("A is a {a} report and B a {b} report: compare runs with runs and sweeps with sweeps")]
    Mixed {
        /// A's kind.
        a: &'static str,
        /// B's kind.
        b: &'static str,
    },
    /// No entry and metric is on both sides.
    #[error("nothing to compare: {why}")]
    NothingMatched {
        /// What each side has.
        why: String,
    },
    /// A report whose histogram cannot be read: the intervals are made from it.
    #[error("{side}'s {what}: its histogram (hdr_v2_base64) does not decode")]
    NoHistogram {
        /// `A` or `B`.
        side: &'static str,
        /// The entry and metric.
        what: String,
    },
}
