//! The interval of a difference between two percentiles, each known with its own
//! interval, and the confidence each row of a comparison is taken at so that every row
//! holds together.
//!
//! # The interval of a difference
//!
//! Each side brings its own 95% interval `[lo, hi]` around its percentile (see
//! [`confidence`](super::confidence): distribution-free order-statistic bounds widened by
//! batch means). The interval of `d = b - a` combines them by the MOVER method (Method of
//! Variance Estimates Recovery; Newcombe 1998, Zou & Donner 2008):
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
//! A side whose interval has no upper end (fewer than ten samples beyond the percentile)
//! gives no interval of the difference, and the comparison cannot tell.
//!
//! # Many percentiles at once
//!
//! A comparison asks its question at every percentile of every metric and test, and a
//! 95% verdict at each would claim a difference between identical servers somewhere in
//! most comparisons of a dozen rows: a CI gate on it would fail about one build in four.
//! So the 95% is the comparison's, not each row's: the intervals of the differences hold
//! together with 95% confidence (Bonferroni: with `m` rows that can give a verdict, each
//! side's interval is taken at `1 - 0.05 / m` ([`row_confidence`]), from its histogram
//! and the design effect its report kept). Any claim of the comparison, and
//! `--fail-if-slower`, is then wrong in at most 5% of comparisons of identical servers.
//! Bonferroni needs no model of how the rows depend on each other; they do (p95 and p99
//! of one run move together), which only makes it more cautious than it need be.

/// How the difference intervals are made, as reports say it.
pub const METHOD: &str = "MOVER (Newcombe; Zou & Donner): each side's interval combined, \
                          lower = d - sqrt((a_hi - a)^2 + (b - b_lo)^2), \
                          upper = d + sqrt((a - a_lo)^2 + (b_hi - b)^2); \
                          simultaneous over the compared percentiles (Bonferroni: each \
                          side's interval at 1 - 0.05/m for m rows with a verdict)";

/// The MOVER interval of `b - a` from each side's value and interval `(low, high)`, in
/// nanoseconds, as `(lower, upper)`. The lower end rests on A's upper end and B's lower
/// one, the upper end on the other two: an end is `None` when the side's end it rests on
/// is unbounded above, and the other end still holds (a side that stopped answering has
/// an open upper end, and is still known to be slower). The intervals are taken as given.
pub fn difference_interval(
    a: f64,
    a_ci: (f64, Option<f64>),
    b: f64,
    b_ci: (f64, Option<f64>),
) -> (Option<f64>, Option<f64>) {
    let d = b - a;
    let lower = a_ci
        .1
        .map(|a_hi| d - ((a_hi - a).powi(2) + (b - b_ci.0).powi(2)).sqrt());
    let upper = b_ci
        .1
        .map(|b_hi| d + ((a - a_ci.0).powi(2) + (b_hi - b).powi(2)).sqrt());
    (lower, upper)
}

/// The confidence of each of `rows` intervals for them to hold together at `confidence`
/// (Bonferroni): `1 - (1 - confidence) / rows`, and `confidence` itself for no row.
pub fn row_confidence(confidence: f64, rows: usize) -> f64 {
    1.0 - (1.0 - confidence) / rows.max(1) as f64
}
