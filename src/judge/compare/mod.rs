//! The comparison's verdicts: two sides' entries matched by name, then each chosen
//! metric both have and each percentile, A against B, with the interval of each
//! difference (`stats::mover`) and what it says. The model it fills is
//! `report::compare`'s; reading the files and measuring the servers is `compare`'s.
//!
//! Entries match by name, the n-th of a name on A with the n-th on B.
//!
//! Each side's low end is taken down to the lowest value of its HdrHistogram bucket
//! (reports give the bucket's highest, 0.1% resolution), so a difference smaller than the
//! histograms can tell apart is never reported as one. The sides' own columns stay their
//! reports' 95% intervals; the difference's interval is made from the sides' intervals at
//! the comparison's row confidence (see `stats::mover`).
//!
//! Reports written before intervals existed carry only the histogram: their intervals
//! are recomputed from it as plain binomial ones ([`confidence::estimate`] with no
//! batches), and a note says so, since those take no account of replies delayed together.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::record::Metric;
use crate::report::compare::{
    COMPARE_SCHEMA_VERSION, Comparison, ComparisonError, Entry, Group, Metrics, Options, Side,
    Verdict,
};
use crate::report::{Latency, Percentile};
use crate::stats::confidence::{self, Ci95};
use crate::stats::mover;

mod rows;

pub use rows::{Measured, compare_latency};

/// The rows [`compare_latency`] makes, and the reading of a side from a file:
/// re-exported so that a caller names a comparison's steps (read the sides, compare
/// them, read the rows) through one path.
pub use crate::report::compare::{Row, parse};

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
        if let Some(note) = ea
            .host
            .as_ref()
            .zip(eb.host.as_ref())
            .and_then(|(a, b)| super::host::difference(a, b))
        {
            notes.push(format!("{}: {note}", ea.name));
        }
        // Rates that met within the resolution: both named.
        let name = match eb.rate {
            Some((rate, _)) if eb.name != ea.name => format!("{} (B at {rate:.0} req/s)", ea.name),
            _ => ea.name.clone(),
        };
        compared.extend(matched(
            &name,
            ea,
            eb,
            &options.metrics,
            &mut notes,
            &mut recomputed,
        )?);
    }
    let family_rows = compared.iter().map(Matched::bounded_rows).sum::<usize>();
    let row_confidence = mover::row_confidence(confidence::CONFIDENCE, family_rows);
    let mut groups: Vec<Group> = compared
        .into_iter()
        .map(|m| m.compared(row_confidence, options.fail_if_slower, options.margin))
        .collect();
    // One report against itself: every interval is its own mirror, and no verdict of a
    // difference means anything.
    if let Some(why) = &options.same_file {
        for row in groups.iter_mut().flat_map(|g| g.rows.iter_mut()) {
            row.verdict = Verdict::SameFile;
            row.slower_than_allowed = false;
        }
        notes.push(format!(
            "A and B are one report ({why}): nothing is compared; run the test twice to see how far two runs of it differ"
        ));
    }
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
        method: mover::METHOD.into(),
        a: a_side,
        b: b_side,
        fail_if_slower_pct: options.fail_if_slower.map(|f| f * 100.0),
        margin_pct: Some(options.margin * 100.0),
        same_file: options.same_file.clone(),
        live: None,
        capacity: None,
        groups,
        only_in_a,
        only_in_b,
        notes,
    })
}

/// One metric of one matched entry, before its rows: the group, and each side's latency
/// (with every interval) and histogram.
struct Matched {
    group: Group,
    a: (Latency, Histogram<u64>),
    b: (Latency, Histogram<u64>),
}

impl Matched {
    /// Percentiles where a side's 95% interval is bounded above: the rows that can give
    /// a verdict (the difference's lower end rests on A's upper end, its upper end on
    /// B's; see [`mover::difference_interval`]).
    fn bounded_rows(&self) -> usize {
        let bounded = |l: &Latency, p| l.at(p).ci95.is_some_and(|c: Ci95| c.high().is_some());
        Percentile::ALL
            .into_iter()
            .filter(|&p| bounded(&self.a.0, p) || bounded(&self.b.0, p))
            .count()
    }

    /// The group with its rows, each side's interval taken at `row_confidence`.
    fn compared(self, row_confidence: f64, fail_if_slower: Option<f64>, margin: f64) -> Group {
        let Matched {
            mut group,
            a: (xa, ha),
            b: (xb, hb),
        } = self;
        let a = Measured {
            latency: &xa,
            histogram: &ha,
        };
        let b = Measured {
            latency: &xb,
            histogram: &hb,
        };
        group.rows = compare_latency(a, b, row_confidence, fail_if_slower, margin);
        group
    }
}

/// The metrics of `ea` against `eb`, the pair called `name` (the test, and each command
/// both sent) that `metrics` chooses and both have with replies; a note for each
/// skipped, and in `recomputed` whether A's or B's intervals were recomputed from their
/// histograms.
fn matched(
    name: &str,
    ea: &Entry,
    eb: &Entry,
    metrics: &Metrics,
    notes: &mut Vec<String>,
    recomputed: &mut [bool; 2],
) -> Result<Vec<Matched>, ComparisonError> {
    let mut compared = Vec::new();
    let mut parts = vec![(None, &ea.latency, &eb.latency)];
    for (name, la) in &ea.commands {
        if let Some((_, lb)) = eb.commands.iter().find(|(n, _)| n == name) {
            parts.push((Some(name.clone()), la, lb));
        }
    }
    for (command, la, lb) in parts {
        for metric in chosen_metrics(metrics, la, lb) {
            let (Some(xa), Some(xb)) = (la.get(&metric), lb.get(&metric)) else {
                continue;
            };
            let what = match &command {
                Some(c) => format!("{name} / {c} {metric}"),
                None => format!("{name} {metric}"),
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
                test: name.to_string(),
                command: command.clone(),
                metric: metric.to_string(),
                a_count: xa.count,
                b_count: xb.count,
                a_intervals: intervals_method(&xa, ra),
                b_intervals: intervals_method(&xb, rb),
                rows: Vec::new(),
            };
            compared.push(Matched {
                group,
                a: (xa, ha),
                b: (xb, hb),
            });
        }
    }
    Ok(compared)
}

/// The n-th entry of each name on A with the n-th of that name on B; then each entry of a
/// sweep left on A with the entry of its family on B whose rate is nearest, within A's
/// resolution (two sweeps whose rates were placed by two measured maxima); pairs in A's
/// order, and the names left over on each side.
fn match_entries<'e>(
    a: &'e [Entry],
    b: &'e [Entry],
) -> (Vec<(&'e Entry, &'e Entry)>, Vec<String>, Vec<String>) {
    let mut taken = vec![false; b.len()];
    let mut pairs: Vec<(usize, &Entry, &Entry)> = Vec::new();
    let mut left: Vec<(usize, &Entry)> = Vec::new();
    for (i, e) in a.iter().enumerate() {
        match (0..b.len()).find(|&j| !taken[j] && b[j].name == e.name) {
            Some(j) => {
                taken[j] = true;
                pairs.push((i, e, &b[j]));
            }
            None => left.push((i, e)),
        }
    }
    let mut only_in_a = Vec::new();
    for (i, e) in left {
        let near = e.rate.and_then(|(rate, resolution)| {
            (0..b.len())
                .filter(|&j| !taken[j] && b[j].family == e.family)
                .filter_map(|j| {
                    let off = (b[j].rate?.0 / rate - 1.0).abs();
                    (off <= resolution).then_some((j, off))
                })
                .min_by(|x, y| x.1.total_cmp(&y.1))
        });
        match near {
            Some((j, _)) => {
                taken[j] = true;
                pairs.push((i, e, &b[j]));
            }
            None => only_in_a.push(e.name.clone()),
        }
    }
    pairs.sort_by_key(|p| p.0);
    let only_in_b = b
        .iter()
        .zip(&taken)
        .filter(|(_, t)| !**t)
        .map(|(e, _)| e.name.clone())
        .collect();
    (
        pairs.into_iter().map(|(_, x, y)| (x, y)).collect(),
        only_in_a,
        only_in_b,
    )
}

/// The metrics to compare of two latency maps, in report order.
fn chosen_metrics(
    metrics: &Metrics,
    a: &BTreeMap<Metric, Latency>,
    b: &BTreeMap<Metric, Latency>,
) -> Vec<Metric> {
    match metrics {
        Metrics::One(m) => vec![*m],
        Metrics::All => Metric::ALL
            .into_iter()
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
                        .map(|k| k.name())
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
    if Percentile::ALL
        .iter()
        .all(|&p| latency.at(p).ci95.is_some())
    {
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
