//! The steady-state check: whether an open loop's response time held one level through
//! the measured window, by a Mann-Kendall trend on the batches' medians, both ways: a
//! backlog that grew, and one the run started in and drained.

use super::lag::short_time;
use crate::report::verdict::{Check, Measure, Verdict};
use crate::stats::confidence::Batch;

/// The least change, last quarter's median response over the first's or the first's over
/// the last's, that the steady-state check calls a backlog that grew or drained.
pub const BACKLOG_GROWTH: f64 = 2.0;
/// Mann-Kendall |z| a trend must exceed (two-sided p < 0.001).
pub const TREND_Z: f64 = 3.29;
/// Fewest non-empty batches the steady-state check judges from.
pub const STEADY_MIN_BATCHES: usize = 8;

/// Whether an open loop's response time had a steady state: no trend through the
/// measured window in the batches' medians (Mann-Kendall), or one too small to matter
/// (the last quarter's median of batch medians within [`BACKLOG_GROWTH`] times the
/// first's, either way). Both must hold to fail: a trend alone is what a slow drift of a
/// busy host shows, and a stall in the last quarter raises a few batches, not the
/// quarter's median.
///
/// Upward, a backlog grew through the run: the server is past its capacity, and every
/// percentile depends on how long the run was. Downward, the run started in a backlog
/// (a stall at the start, a warm-up the server had not absorbed) and drained it: its
/// percentiles depend on how much of the drain the window held.
pub fn steady_state(batches: &[Batch]) -> Check {
    let medians: Vec<f64> = batches
        .iter()
        .filter_map(|b| b.quantile(0.5))
        .map(|v| v as f64)
        .collect();
    let name = crate::report::verdict::STEADY_STATE.to_string();
    if medians.len() < STEADY_MIN_BATCHES {
        return Check {
            name,
            verdict: Verdict::Skipped,
            detail: format!(
                "{} batches with replies; needs {STEADY_MIN_BATCHES}",
                medians.len()
            ),
            meaning: String::new(),
            measure: None,
        };
    }
    let quarter = medians.len() / 4;
    let median_of = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let first = median_of(&medians[..quarter]);
    let last = median_of(&medians[medians.len() - quarter..]);
    let growth = if first > 0.0 { last / first } else { 1.0 };
    let z = mann_kendall_z(&medians);
    let grew = growth >= BACKLOG_GROWTH && z > TREND_Z;
    let drained = growth > 0.0 && 1.0 / growth >= BACKLOG_GROWTH && z < -TREND_Z;
    let meaning = if drained {
        "response time fell through the run: it started in a backlog (a stall at its start, \
         or a warm-up the server had not absorbed) and drained it, and every percentile \
         depends on how much of the drain the window held; give a longer --warmup, or \
         look at what held the server at the start"
    } else {
        "response time grew through the run: a backlog built up, the server (or the \
         path to it) is past its capacity at this rate, and every percentile depends \
         on how long the run lasted, not only on the rate; measure lower rates, or a \
         longer warm-up if it settles"
    };
    Check {
        name,
        verdict: if grew || drained {
            Verdict::Fail
        } else {
            Verdict::Pass
        },
        detail: format!(
            "batch median response {} in the first quarter, {} in the last ({growth:.2}x), \
             trend z = {z:+.2} over {} batches of {} ms; bound: not both {BACKLOG_GROWTH:.0}x \
             either way and |z| > {TREND_Z}",
            short_time(first as u64),
            short_time(last as u64),
            medians.len(),
            crate::drive::BATCH.as_millis()
        ),
        meaning: meaning.to_string(),
        // The change either way, as a factor of at least 1.
        measure: Measure::of(
            if growth > 0.0 {
                growth.max(1.0 / growth)
            } else {
                1.0
            },
            BACKLOG_GROWTH,
            "ratio",
        ),
    }
}

/// Mann-Kendall trend statistic of `x` in order, as a normal z (continuity-corrected,
/// ties not corrected for: they only make it smaller). Written out: it is a dozen lines.
fn mann_kendall_z(x: &[f64]) -> f64 {
    let n = x.len();
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            s += match x[j].total_cmp(&x[i]) {
                std::cmp::Ordering::Greater => 1,
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
            };
        }
    }
    let n = n as f64;
    let var = n * (n - 1.0) * (2.0 * n + 5.0) / 18.0;
    if var <= 0.0 {
        return 0.0;
    }
    let s = s as f64;
    (s - s.signum()) / var.sqrt()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn steady_state_fails_a_growing_backlog_and_passes_noise_and_a_late_stall() {
        use crate::stats::confidence::Batch;
        let batch = |median_ns: u64| {
            let mut h = crate::record::new_histogram();
            for i in 0..100 {
                h.record(median_ns + i * median_ns / 100).unwrap();
            }
            Batch::of(&h)
        };
        // Past capacity: the backlog grows linearly through the run.
        let growing: Vec<Batch> = (0..40).map(|i| batch(50_000 + i * 20_000)).collect();
        assert_eq!(steady_state(&growing).verdict, Verdict::Fail);
        // Noise around a level, and one stall of 8 batches near the end.
        let mut noisy: Vec<Batch> = (0..40)
            .map(|i| batch(50_000 + (i * 7919 % 13) * 2_000))
            .collect();
        assert_eq!(steady_state(&noisy).verdict, Verdict::Pass);
        for b in &mut noisy[30..34] {
            *b = batch(5_000_000);
        }
        assert_eq!(steady_state(&noisy).verdict, Verdict::Pass);
        // A slow drift: a trend, but far from a backlog.
        let drift: Vec<Batch> = (0..40).map(|i| batch(50_000 + i * 500)).collect();
        assert_eq!(steady_state(&drift).verdict, Verdict::Pass);
        assert_eq!(steady_state(&growing[..5]).verdict, Verdict::Skipped);
    }

    #[test]
    fn steady_state_fails_a_backlog_that_drains_and_says_which_way() {
        use crate::stats::confidence::Batch;
        let batch = |median_ns: u64| {
            let mut h = crate::record::new_histogram();
            for i in 0..100 {
                h.record(median_ns + i * median_ns / 100).unwrap();
            }
            Batch::of(&h)
        };
        // A median that fell 30x: a run that began in a backlog and drained it.
        let draining: Vec<Batch> = (0..40)
            .map(|i| batch(565_000u64.saturating_sub(i * 14_000).max(18_700)))
            .collect();
        let check = steady_state(&draining);
        assert_eq!(check.verdict, Verdict::Fail, "{}", check.detail);
        assert!(
            check.meaning.contains("fell through the run"),
            "{}",
            check.meaning
        );
        let growing: Vec<Batch> = (0..40).map(|i| batch(50_000 + i * 20_000)).collect();
        assert!(
            steady_state(&growing)
                .meaning
                .contains("grew through the run")
        );
        // A fall to half the level, without a trend through the run: noise.
        let mut one_dip: Vec<Batch> = (0..40).map(|_| batch(50_000)).collect();
        for b in &mut one_dip[..3] {
            *b = batch(200_000);
        }
        assert_eq!(steady_state(&one_dip).verdict, Verdict::Pass);
    }
}
