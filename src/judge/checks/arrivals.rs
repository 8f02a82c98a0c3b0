//! The arrivals' shape: the index-of-dispersion test of an open loop's arrivals, as the
//! generator handed them out, against a Poisson process (`poisson_fit`), and the counts
//! per window it is judged on, which a shard keeps for the merge to judge the shards'
//! arrivals together.
//!
//! The offered load is the generator's handling of the schedule, so each request counts
//! in the window it was handled in (taken from the schedule and given to a connection or
//! the client-side queue), not the one it was written in: a request that then waited for
//! a connection the server had not freed (queue wait, the server's doing, measured and
//! valid) keeps its place, and a stalled server's sends bunching up behind full
//! connections do not fail the generator; a generator that fell behind and caught up
//! hands out a burst, and does.

use crate::drive::RunOutcome;
use crate::report::ArrivalWindows;
use crate::report::verdict::{Check, Measure, Verdict};

/// The bound of the dispersion test: the two-sided normal quantile at alpha = 1e-4. A run
/// is one of about a hundred in a sweep and of tens in a test's panel: at alpha = 0.01
/// one right run in a hundred was marked INVALID, about one a sweep. The failures the
/// check is for lie far past this bound (a generator that fell behind and caught up:
/// z of +7 to +35; constant gaps: about -10 over 200 windows).
pub const DISPERSION_Z: f64 = 3.891;

/// The index-of-dispersion check of `counts`, requests handled per `window`; `whose`
/// prefixes the detail (the merge's "the shards' arrivals together: ").
pub fn poisson_fit(
    counts: &[u64],
    window: std::time::Duration,
    whose: &str,
    outage: Option<&str>,
) -> Check {
    match dispersion_z(counts) {
        None => Check {
            name: "poisson_fit".into(),
            verdict: Verdict::Skipped,
            detail: format!(
                "{whose}{} windows of {window:?}: too few arrivals to test (20 windows of 5 or more are needed)",
                counts.len()
            ),
            meaning: String::new(),
            measure: None,
        },
        Some((z, windows, mean)) => Check {
            name: "poisson_fit".into(),
            verdict: if z.abs() <= DISPERSION_Z { Verdict::Pass } else { Verdict::Fail },
            detail: format!(
                "{whose}index-of-dispersion test on the requests handled per {window:?} window ({windows} windows, {mean:.1} each): z = {z:+.2}; bound |z| <= {DISPERSION_Z}"
            ),
            meaning: match outage {
                None if z > 0.0 => "the generator handed the arrivals out in bursts, not as a Poisson process: it fell behind its schedule and caught up (another task on its core, or a thread out of CPU: see generator_cpu and schedule_lag), and the server saw a burstier load than planned".to_string(),
                None => "the generator handed the arrivals out more evenly than a Poisson process: the server saw a smoother load than planned".to_string(),
                Some(outage) => format!(
                    "the arrivals were not handed out as a Poisson process, and {outage}: reconnecting takes the generator's time, so the outage may be what this measured rather than the generator's pacing"
                ),
            },
            measure: Measure::of(z.abs(), DISPERSION_Z, "z"),
        },
    }
}

/// A shard's requests handled per window, for the merge's check of the shards' arrivals together
/// (`None` with no windows: a closed loop, or a run too short for one).
pub fn arrival_windows(outcome: &RunOutcome) -> Option<ArrivalWindows> {
    let (counts, window) = window_counts(outcome);
    (!counts.is_empty()).then(|| ArrivalWindows {
        window_ns: crate::record::nanos(window),
        counts,
    })
}

/// Requests handled per window over every thread (threads are independent Poisson
/// processes, so their sum is one), full windows of the measured span only.
pub(super) fn window_counts(outcome: &RunOutcome) -> (Vec<u64>, std::time::Duration) {
    let Some(window) = outcome
        .send_counts
        .first()
        .map(|c| c.window)
        .filter(|w| !w.is_zero())
    else {
        return (Vec::new(), std::time::Duration::ZERO);
    };
    let full = (outcome.measured.as_nanos() / window.as_nanos()) as usize;
    let mut total = vec![0u64; full];
    for thread in &outcome.send_counts {
        for (sum, &n) in total.iter_mut().zip(&thread.counts) {
            *sum += u64::from(n);
        }
    }
    (total, window)
}

/// Index-of-dispersion test of sends per window against a Poisson process.
///
/// The windows are far longer than the generator's timing jitter (so batching and
/// late wake-ups barely move a count). For a Poisson process the counts are Poisson:
/// `sum((n_i - mean)^2) / mean` follows chi-square with `k - 1` degrees of freedom.
/// Returns it as a normal z score (Wilson-Hilferty), the number of windows and the
/// mean count; `None` with fewer than 20 windows or under 5 sends per window.
/// Constant arrivals give a large negative z, bursts a positive one.
pub fn dispersion_z(counts: &[u64]) -> Option<(f64, usize, f64)> {
    let k = counts.len();
    if k < 20 {
        return None;
    }
    let mean = counts.iter().sum::<u64>() as f64 / k as f64;
    if mean < 5.0 {
        return None;
    }
    let chi2: f64 = counts
        .iter()
        .map(|&n| (n as f64 - mean).powi(2))
        .sum::<f64>()
        / mean;
    let dof = (k - 1) as f64;
    let a = 2.0 / (9.0 * dof);
    let z = ((chi2 / dof).cbrt() - (1.0 - a)) / a.sqrt();
    Some((z, k, mean))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::drive::ArrivalProcess;

    /// Counts of `times_ns` in windows of `window_ns`.
    fn bin(times_ns: &[u64], window_ns: u64) -> Vec<u64> {
        let k = (*times_ns.last().unwrap() / window_ns) as usize;
        let mut counts = vec![0; k];
        for &t in times_ns {
            if let Some(c) = counts.get_mut((t / window_ns) as usize) {
                *c += 1;
            }
        }
        counts
    }

    fn poisson_times(rate_per_sec: f64, n: usize, seed: u64) -> Vec<u64> {
        let mut s = crate::drive::schedule::Schedule::new(
            ArrivalProcess::Poisson,
            rate_per_sec,
            0,
            1,
            seed,
        );
        (0..n).map(|_| s.advance().as_nanos() as u64).collect()
    }

    #[test]
    fn dispersion_test_accepts_poisson_and_rejects_constant_arrivals() {
        let (z, _, _) =
            dispersion_z(&bin(&poisson_times(10_000.0, 50_000, 3), 10_000_000)).unwrap();
        assert!(z.abs() < DISPERSION_Z, "poisson z {z}");
        let constant: Vec<u64> = (0..50_000u64).map(|i| i * 100_000).collect();
        let (z, _, _) = dispersion_z(&bin(&constant, 10_000_000)).unwrap();
        assert!(z < -DISPERSION_Z, "constant z {z}");
    }

    #[test]
    fn dispersion_test_tolerates_jitter_far_below_the_window() {
        // Every send moved late by up to 50 us (the lag seen at 20k/s) against 10 ms windows.
        let mut jittered: Vec<u64> = poisson_times(20_000.0, 50_000, 5)
            .iter()
            .enumerate()
            .map(|(i, t)| t + (i as u64 * 7919) % 50_000)
            .collect();
        jittered.sort_unstable();
        let (z, _, _) = dispersion_z(&bin(&jittered, 10_000_000)).unwrap();
        assert!(z.abs() < DISPERSION_Z, "jittered z {z}");
    }

    #[test]
    fn dispersion_test_needs_enough_windows_and_sends() {
        assert!(dispersion_z(&[10; 19]).is_none());
        assert!(dispersion_z(&[4; 100]).is_none());
    }

    #[test]
    fn ks_rejects_constant_gaps_as_exponential() {
        let samples = vec![100.0; 1000];
        let d = crate::drive::schedule::ks_exponential(&samples, 0.01);
        assert!(d > 0.3, "D {d}");
    }
}
