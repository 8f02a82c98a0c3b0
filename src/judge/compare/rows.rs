//! A comparison's rows: each percentile of one side against the other, the interval of
//! the difference made from the sides' intervals at the row confidence, and its verdict
//! against zero and the equivalence margin.

use hdrhistogram::Histogram;

use crate::record::SIGNIFICANT_DIGITS;
use crate::report::compare::{Row, Verdict};
use crate::report::{Latency, Percentile};
use crate::stats::confidence::{self, Ci95};
use crate::stats::mover;

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
        let reported = self.latency.at(p).ci95?;
        if (confidence - confidence::CONFIDENCE).abs() < 1e-12 {
            return Some(reported);
        }
        self.latency.interval_at(self.histogram, p, confidence)
    }
}

/// Every percentile of `a` against `b` (both with 95% intervals), each difference's
/// interval made from the sides' intervals at `row_confidence`; `fail_if_slower` is the
/// share of A's value a difference's lower end must exceed to count against B, `margin`
/// the share of A's value the whole interval must lie within to read equivalent (the
/// interval-inclusion form of two one-sided tests: each row's interval is two-sided at
/// `row_confidence`, so each one-sided test rejects at half its error or less).
pub fn compare_latency(
    a: Measured<'_>,
    b: Measured<'_>,
    row_confidence: f64,
    fail_if_slower: Option<f64>,
    margin: f64,
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
            let (a_at, b_at) = (a.latency.at(p), b.latency.at(p));
            let (a_ns, b_ns) = (a_at.value_ns, b_at.value_ns);
            let (a_ci, b_ci) = (a_at.ci95?, b_at.ci95?);
            let sides = a
                .interval(p, row_confidence)
                .zip(b.interval(p, row_confidence));
            let interval = sides.map_or((None, None), |(a_row, b_row)| {
                mover::difference_interval(a_ns as f64, widened(a_row), b_ns as f64, widened(b_row))
            });
            let verdict = Verdict::of(interval, margin * a_ns as f64);
            let pct = |ns: f64| (a_ns > 0).then(|| ns / a_ns as f64 * 100.0);
            let slower_than_allowed = match (fail_if_slower, interval.0) {
                (Some(share), Some(low)) => low > share * a_ns as f64,
                _ => false,
            };
            let known = interval.0.is_some() || interval.1.is_some();
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
                difference_ci95_ns: known.then(|| {
                    [
                        interval.0.map(|l| l.floor() as i64),
                        interval.1.map(|h| h.ceil() as i64),
                    ]
                }),
                difference_ci95_pct: (known && a_ns > 0)
                    .then(|| [interval.0.and_then(pct), interval.1.and_then(pct)]),
                verdict,
                slower_than_allowed,
            })
        })
        .collect()
}
