//! A/B with confidence: two sides' latency percentiles compared one by one, each
//! difference with a 95% interval and a verdict. Data in, [`Comparison`] out; reading the
//! files and measuring the servers is `compare`'s, the table is [`text`]'s.
//!
//! The sides are lists of [`Entry`]s (a test, or one command of a test, with its latency
//! by metric), made from a run report ([`entries_of_run`]), a sweep report
//! ([`entries_of_sweep`]: each measurement named by its kind and its target rate or
//! connections) or a live duet; a repeat of `--repeat` adds its number to the name.
//! Entries match by name, the n-th of a name on A with the n-th on B.
//!
//! # The interval of a difference
//!
//! Each side brings its own 95% interval `[lo, hi]` around its percentile (see
//! [`confidence`]: distribution-free order-statistic bounds widened by batch means). The
//! interval of `d = b - a` combines them by the MOVER method (Method of Variance Estimates
//! Recovery; Newcombe 1998, Zou & Donner 2008):
//!
//! ```text
//! lower = d - sqrt((a_hi - a)² + (b - b_lo)²)
//! upper = d + sqrt((a - a_lo)² + (b_hi - b)²)
//! ```
//!
//! It needs no distribution and no variance: only the two intervals, which may be
//! lopsided (a tail percentile's interval reaches far further up than down), and MOVER
//! keeps that shape where a symmetric `d ± sqrt(w_a² + w_b²)` would not. It assumes the
//! two sides independent. When they share noise (the live duet runs both through the
//! same drift of the host) their difference varies less than that, so the interval is
//! then wider than it need be: a difference it finds is there.
//!
//! Each side's low end is taken down to the lowest value of its HdrHistogram bucket
//! (reports give the bucket's highest, 0.1% resolution), so a difference smaller than the
//! histograms can tell apart is never reported as one.
//!
//! A side whose interval has no upper end (fewer than ten samples beyond the percentile)
//! gives no interval of the difference: the verdict is [`Verdict::CannotTell`].
//!
//! # Many percentiles at once
//!
//! A comparison asks its question at every percentile of every metric and test, and a
//! 95% verdict at each would claim a difference between identical servers somewhere in
//! most comparisons of a dozen rows: a CI gate on it would fail about one build in four.
//! So the 95% is the comparison's, not each row's: the intervals of the differences hold
//! together with 95% confidence (Bonferroni: with `m` rows that can give a verdict, each
//! side's interval is taken at `1 - 0.05 / m` from its histogram and the design effect
//! its report kept, see [`Latency::interval_at`]). Any claim of the comparison, and
//! `--fail-if-slower`, is then wrong in at most 5% of comparisons of identical servers.
//! Bonferroni needs no model of how the rows depend on each other; they do (p95 and p99
//! of one run move together), which only makes it more cautious than it need be. The
//! sides' own columns stay their reports' 95% intervals.
//!
//! Reports written before intervals existed carry only the histogram: their intervals
//! are recomputed from it as plain binomial ones ([`confidence::estimate`] with no
//! batches), and a note says so, since those take no account of replies delayed together.

mod sides;

pub use sides::{Entry, Report, entries_of_run, entries_of_sweep, parse};

use std::collections::{BTreeMap, HashMap};

use hdrhistogram::Histogram;
use serde::Serialize;

use super::sweep;
use super::{Latency, Percentile};
use crate::record::SIGNIFICANT_DIGITS;
use crate::stats::confidence::{self, Ci95};

/// Version of the comparison's JSON layout; bumped on any incompatible change.
pub const COMPARE_SCHEMA_VERSION: u32 = 2;

/// How the difference intervals are made, as reports say it.
pub const METHOD: &str = "MOVER (Newcombe; Zou & Donner): each side's interval combined, \
                          lower = d - sqrt((a_hi - a)^2 + (b - b_lo)^2), \
                          upper = d + sqrt((a - a_lo)^2 + (b_hi - b)^2); \
                          simultaneous over the compared percentiles (Bonferroni: each \
                          side's interval at 1 - 0.05/m for m rows with a verdict)";

/// What a difference's interval says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval is above zero.
    BSlower,
    /// The whole interval is below zero.
    BFaster,
    /// The interval holds zero.
    NoDifference,
    /// A side's interval is unbounded above, so the difference's is too.
    CannotTell,
}

impl Verdict {
    /// As printed: `B slower`.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::BSlower => "B slower",
            Verdict::BFaster => "B faster",
            Verdict::NoDifference => "no difference",
            Verdict::CannotTell => "cannot tell",
        }
    }

    /// The verdict of a difference's interval `(lower, upper)` in nanoseconds.
    pub fn of(interval: Option<(f64, f64)>) -> Self {
        match interval {
            None => Verdict::CannotTell,
            Some((low, _)) if low > 0.0 => Verdict::BSlower,
            Some((_, high)) if high < 0.0 => Verdict::BFaster,
            Some(_) => Verdict::NoDifference,
        }
    }
}

/// The MOVER interval of `b - a` from each side's value and 95% interval, in nanoseconds;
/// `None` when either interval is unbounded above. The intervals are taken as given
/// (see [`compare_latency`] for the bucket widening).
pub fn difference_interval(
    a: f64,
    a_ci: (f64, Option<f64>),
    b: f64,
    b_ci: (f64, Option<f64>),
) -> Option<(f64, f64)> {
    let (a_lo, a_hi) = (a_ci.0, a_ci.1?);
    let (b_lo, b_hi) = (b_ci.0, b_ci.1?);
    let d = b - a;
    let lower = d - ((a_hi - a).powi(2) + (b - b_lo).powi(2)).sqrt();
    let upper = d + ((a - a_lo).powi(2) + (b_hi - b).powi(2)).sqrt();
    Some((lower, upper))
}

/// One percentile of one metric, A against B.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// 95% together (each at the comparison's `row_confidence`); null when a side's
    /// interval is unbounded.
    pub difference_ci95_ns: Option<[i64; 2]>,
    /// The same interval in percent of A's value.
    pub difference_ci95_pct: Option<[f64; 2]>,
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// The live duet, when the sides were measured by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<Duet>,
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

/// Which metrics to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metrics {
    /// One, by its JSON key (`response`).
    One(String),
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
}

/// Why a comparison cannot be made; all of them are the user's to fix.
#[derive(Debug, thiserror::Error)]
pub enum ComparisonError {
    /// Not JSON.
    #[error("not JSON: {0}")]
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

/// Compares `a` with `b` by [`Options`]: entries matched by name, then each chosen metric
/// both have and each percentile.
pub fn compare(
    a: (Side, &[Entry]),
    b: (Side, &[Entry]),
    options: &Options,
) -> Result<Comparison, ComparisonError> {
    let (a_side, a_entries) = a;
    let (b_side, b_entries) = b;
    let mut notes = Vec::new();
    let mut recomputed = [false, false];
    let mut compared = Vec::new();
    let (pairs, only_in_a, only_in_b) = match_entries(a_entries, b_entries);
    for (ea, eb) in &pairs {
        for (side, e) in [("A", ea), ("B", eb)] {
            if let Some(why) = &e.invalid {
                notes.push(format!(
                    "{side}'s {} is marked invalid ({why}): its numbers may not be what the server did",
                    e.name
                ));
            }
        }
        let mut parts = vec![(None, &ea.latency, &eb.latency)];
        for (name, la) in &ea.commands {
            if let Some((_, lb)) = eb.commands.iter().find(|(n, _)| n == name) {
                parts.push((Some(name.clone()), la, lb));
            }
        }
        for (command, la, lb) in parts {
            for metric in chosen_metrics(&options.metrics, la, lb) {
                let (Some(xa), Some(xb)) = (la.get(&metric), lb.get(&metric)) else {
                    continue;
                };
                let what = match &command {
                    Some(c) => format!("{} / {c} {metric}", ea.name),
                    None => format!("{} {metric}", ea.name),
                };
                if xa.count == 0 || xb.count == 0 {
                    let side = if xa.count == 0 { "A" } else { "B" };
                    notes.push(format!("{what}: no replies on {side}, not compared"));
                    continue;
                }
                let (xa, ra) = with_intervals(xa, "A", &what)?;
                let (xb, rb) = with_intervals(xb, "B", &what)?;
                recomputed[0] |= ra;
                recomputed[1] |= rb;
                let (ha, hb) = (histogram(&xa, "A", &what)?, histogram(&xb, "B", &what)?);
                let group = Group {
                    test: ea.name.clone(),
                    command: command.clone(),
                    metric: metric.clone(),
                    a_count: xa.count,
                    b_count: xb.count,
                    a_intervals: intervals_method(&xa, ra),
                    b_intervals: intervals_method(&xb, rb),
                    rows: Vec::new(),
                };
                compared.push((group, (xa, ha), (xb, hb)));
            }
        }
    }
    let family_rows = compared
        .iter()
        .map(|(_, (xa, _), (xb, _))| {
            let bounded = |l: &Latency, p| l.ci95(p).is_some_and(|c: Ci95| c.high().is_some());
            Percentile::ALL
                .into_iter()
                .filter(|&p| bounded(xa, p) && bounded(xb, p))
                .count()
        })
        .sum::<usize>();
    let row_confidence = 1.0 - (1.0 - confidence::CONFIDENCE) / family_rows.max(1) as f64;
    let groups: Vec<Group> = compared
        .into_iter()
        .map(|(mut group, (xa, ha), (xb, hb))| {
            let a = Measured {
                latency: &xa,
                histogram: &ha,
            };
            let b = Measured {
                latency: &xb,
                histogram: &hb,
            };
            group.rows = compare_latency(a, b, row_confidence, options.fail_if_slower);
            group
        })
        .collect();
    for (side, done) in ["A", "B"].into_iter().zip(recomputed) {
        if done {
            notes.push(format!(
                "{side} was written before reports had intervals: its intervals are recomputed \
                 from its histograms as plain binomial ones, which take no account of replies \
                 delayed together (a stall) and so may be too narrow"
            ));
        }
    }
    if groups.is_empty() {
        return Err(ComparisonError::NothingMatched {
            why: nothing_matched(a_entries, b_entries, &options.metrics, &pairs),
        });
    }
    Ok(Comparison {
        schema_version: COMPARE_SCHEMA_VERSION,
        tool: format!("tailrate {}", env!("CARGO_PKG_VERSION")),
        confidence: confidence::CONFIDENCE,
        family_rows,
        row_confidence,
        method: METHOD.into(),
        a: a_side,
        b: b_side,
        fail_if_slower_pct: options.fail_if_slower.map(|f| f * 100.0),
        live: None,
        groups,
        only_in_a,
        only_in_b,
        notes,
    })
}

/// The n-th entry of each name on A with the n-th of that name on B, in A's order; and
/// the names left over on each side.
fn match_entries<'e>(
    a: &'e [Entry],
    b: &'e [Entry],
) -> (Vec<(&'e Entry, &'e Entry)>, Vec<String>, Vec<String>) {
    let mut b_by_name: HashMap<&str, Vec<&Entry>> = HashMap::new();
    for e in b.iter().rev() {
        b_by_name.entry(e.name.as_str()).or_default().push(e);
    }
    let mut pairs = Vec::new();
    let mut only_in_a = Vec::new();
    for e in a {
        match b_by_name.get_mut(e.name.as_str()).and_then(Vec::pop) {
            Some(other) => pairs.push((e, other)),
            None => only_in_a.push(e.name.clone()),
        }
    }
    let mut only_in_b = Vec::new();
    for e in b {
        if let Some(left) = b_by_name.get_mut(e.name.as_str())
            && left.last().is_some_and(|l| std::ptr::eq(*l, e))
        {
            left.pop();
            only_in_b.push(e.name.clone());
        }
    }
    (pairs, only_in_a, only_in_b)
}

/// The metrics to compare of two latency maps, in report order.
fn chosen_metrics(
    metrics: &Metrics,
    a: &BTreeMap<String, Latency>,
    b: &BTreeMap<String, Latency>,
) -> Vec<String> {
    match metrics {
        Metrics::One(m) => vec![m.clone()],
        Metrics::All => crate::record::Metric::ALL
            .into_iter()
            .map(|m| m.name().to_string())
            .filter(|m| a.contains_key(m) && b.contains_key(m))
            .collect(),
    }
}

/// Why nothing matched, in words that say what each side has.
fn nothing_matched(
    a: &[Entry],
    b: &[Entry],
    metrics: &Metrics,
    pairs: &[(&Entry, &Entry)],
) -> String {
    let names = |es: &[Entry]| {
        let v: Vec<&str> = es.iter().map(|e| e.name.as_str()).collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    if pairs.is_empty() {
        return format!(
            "no test is on both sides (A has {}; B has {})",
            names(a),
            names(b)
        );
    }
    match metrics {
        Metrics::One(m) => {
            let mut have: Vec<&str> = pairs
                .iter()
                .flat_map(|(x, y)| {
                    x.latency
                        .keys()
                        .filter(|k| y.latency.contains_key(*k))
                        .map(String::as_str)
                })
                .collect();
            have.sort_unstable();
            have.dedup();
            format!(
                "no matched test has {m} latency with replies on both sides (they have: {}); choose one with --metric",
                if have.is_empty() {
                    "none".to_string()
                } else {
                    have.join(", ")
                }
            )
        }
        Metrics::All => "the matched tests have no latency with replies on both sides".into(),
    }
}

/// `latency` with every percentile's interval: as reported, or recomputed from its
/// histogram (plain binomial) when the report has none; the flag says which.
fn with_intervals(
    latency: &Latency,
    side: &'static str,
    what: &str,
) -> Result<(Latency, bool), ComparisonError> {
    if Percentile::ALL.iter().all(|&p| latency.ci95(p).is_some()) {
        return Ok((latency.clone(), false));
    }
    let h = latency
        .histogram()
        .ok_or_else(|| ComparisonError::NoHistogram {
            side,
            what: what.to_string(),
        })?;
    // Latency::of with no batches is the plain binomial interval of every percentile,
    // `confidence::estimate(h, &[], q)`; the reported values are kept as written.
    let fresh = Latency::of(&h, &[]);
    let mut out = latency.clone();
    out.p50_ci95_ns = fresh.p50_ci95_ns;
    out.p90_ci95_ns = fresh.p90_ci95_ns;
    out.p95_ci95_ns = fresh.p95_ci95_ns;
    out.p99_ci95_ns = fresh.p99_ci95_ns;
    out.p99_9_ci95_ns = fresh.p99_9_ci95_ns;
    out.p99_99_ci95_ns = fresh.p99_99_ci95_ns;
    out.confidence = fresh.confidence;
    Ok((out, true))
}

fn intervals_method(latency: &Latency, recomputed: bool) -> String {
    let method = latency
        .confidence
        .as_ref()
        .map_or("not stated", |c| c.method.as_str());
    if recomputed {
        format!("recomputed from the histogram: {method}")
    } else {
        method.to_string()
    }
}

/// `latency`'s histogram, decoded.
fn histogram(
    latency: &Latency,
    side: &'static str,
    what: &str,
) -> Result<Histogram<u64>, ComparisonError> {
    latency
        .histogram()
        .ok_or_else(|| ComparisonError::NoHistogram {
            side,
            what: what.to_string(),
        })
}

/// One side of one metric as [`compare_latency`] reads it: its report's values and 95%
/// intervals, and its histogram to take intervals at other confidences from.
#[derive(Clone, Copy)]
pub struct Measured<'a> {
    /// The values, the 95% intervals, and the design effects they rest on.
    pub latency: &'a Latency,
    /// `latency`'s histogram, decoded.
    pub histogram: &'a Histogram<u64>,
}

impl Measured<'_> {
    /// The interval of `p` at `confidence`: the report's own at 95%, else taken from the
    /// histogram and the report's design effect.
    fn interval(&self, p: Percentile, confidence: f64) -> Option<Ci95> {
        let reported = self.latency.ci95(p)?;
        if (confidence - confidence::CONFIDENCE).abs() < 1e-12 {
            return Some(reported);
        }
        self.latency.interval_at(self.histogram, p, confidence)
    }
}

/// Every percentile of `a` against `b` (both with 95% intervals), each difference's
/// interval made from the sides' intervals at `row_confidence`; `fail_if_slower` is the
/// share of A's value a difference's lower end must exceed to count against B.
pub fn compare_latency(
    a: Measured<'_>,
    b: Measured<'_>,
    row_confidence: f64,
    fail_if_slower: Option<f64>,
) -> Vec<Row> {
    // Only the histogram's layout matters here (its buckets), not its range.
    let layout = Histogram::<u64>::new(SIGNIFICANT_DIGITS);
    let widened = |ci: Ci95| -> (f64, Option<f64>) {
        let low = match &layout {
            Ok(h) => h.lowest_equivalent(ci.low()),
            Err(_) => ci.low(),
        };
        (low as f64, ci.high().map(|h| h as f64))
    };
    Percentile::ALL
        .into_iter()
        .filter_map(|p| {
            let (a_ns, b_ns) = (a.latency.at(p), b.latency.at(p));
            let (a_ci, b_ci) = (a.latency.ci95(p)?, b.latency.ci95(p)?);
            let sides = a
                .interval(p, row_confidence)
                .zip(b.interval(p, row_confidence));
            let interval = sides.and_then(|(a_row, b_row)| {
                difference_interval(a_ns as f64, widened(a_row), b_ns as f64, widened(b_row))
            });
            let verdict = Verdict::of(interval);
            let pct = |ns: f64| (a_ns > 0).then(|| ns / a_ns as f64 * 100.0);
            let slower_than_allowed = match (fail_if_slower, interval) {
                (Some(share), Some((low, _))) => low > share * a_ns as f64,
                _ => false,
            };
            Some(Row {
                percentile: p.key().to_string(),
                a_ns,
                a_ci95_ns: a_ci,
                a_beyond: a.latency.beyond(p),
                b_ns,
                b_ci95_ns: b_ci,
                b_beyond: b.latency.beyond(p),
                difference_ns: b_ns as i64 - a_ns as i64,
                difference_pct: pct(b_ns as f64 - a_ns as f64),
                difference_ci95_ns: interval.map(|(l, h)| [l.floor() as i64, h.ceil() as i64]),
                difference_ci95_pct: interval.and_then(|(l, h)| Some([pct(l)?, pct(h)?])),
                verdict,
                slower_than_allowed,
            })
        })
        .collect()
}
