//! Generator self-checks: did the run measure the server, or the generator?
//!
//! Each check has a verdict and a sentence saying what a failure means. They are
//! computed from a finished run's outcome and printed with every report; `--strict`
//! turns a failure into a non-zero exit (that decision is `app`'s).

use crate::cli::Arrival;
use crate::config::{Mode, RunConfig};
use crate::drive::RunOutcome;
use crate::record::CommandRecord;

/// Largest relative shortfall of the achieved rate against the target.
pub const RATE_TOLERANCE: f64 = 0.01;
/// Schedule-lag p99 must stay below this fraction of the response-time p50.
pub const LAG_FRACTION: f64 = 0.5;
/// A generator thread busier than this fraction of its wall time is saturated.
pub const CPU_SATURATION: f64 = 0.9;
/// Two-sided normal quantile at alpha = 0.01, the bound of the dispersion test.
pub const DISPERSION_Z: f64 = 2.576;
/// Windows the sampled sends are counted in.
const DISPERSION_WINDOWS: usize = 100;

/// One self-check's result.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Check {
    /// snake_case name.
    pub name: String,
    /// Pass, fail, or not applicable.
    pub verdict: Verdict,
    /// The measured value and the bound, in words.
    pub detail: String,
    /// What a failure means for the numbers.
    pub meaning: String,
}

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The check holds.
    Pass,
    /// The check failed: the run's numbers are suspect as said in `meaning`.
    Fail,
    /// Not applicable to this run.
    Skipped,
}

/// The self-checks of an open-loop run (closed loop has no schedule to keep).
pub fn checks(config: &RunConfig, outcome: &RunOutcome, total: &CommandRecord) -> Vec<Check> {
    let Mode::Open { rate_per_sec, arrival, pacing, .. } = config.mode else { return Vec::new() };
    let mut out = Vec::new();

    let shortfall = 1.0 - outcome.achieved_rate_per_sec / rate_per_sec;
    out.push(Check {
        name: "achieved_rate".into(),
        verdict: if shortfall <= RATE_TOLERANCE && total.not_sent == 0 { Verdict::Pass } else { Verdict::Fail },
        detail: format!(
            "achieved {:.1} req/s against a target of {:.1} ({:+.2}%), {} not sent; bound: within {:.0}%",
            outcome.achieved_rate_per_sec,
            rate_per_sec,
            -shortfall * 100.0,
            total.not_sent,
            RATE_TOLERANCE * 100.0
        ),
        meaning: "the generator did not send at the target rate; the server saw less load than asked".into(),
    });

    let lag_p99 = total.hist.lag.value_at_quantile(0.99);
    let response_p50 = total.hist.response.value_at_quantile(0.5);
    out.push(Check {
        name: "schedule_lag".into(),
        verdict: if total.hist.lag.is_empty() {
            Verdict::Skipped
        } else if (lag_p99 as f64) <= LAG_FRACTION * response_p50 as f64 {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        detail: format!(
            "schedule-lag p99 {} ns against response-time p50 {} ns; bound: {:.0}% of it",
            lag_p99,
            response_p50,
            LAG_FRACTION * 100.0
        ),
        meaning: "the generator fell behind its schedule; these latencies include its own lateness".into(),
    });

    let busiest = outcome.thread_cpu.iter().map(|t| if t.wall_secs > 0.0 { t.cpu_secs / t.wall_secs } else { 0.0 }).fold(0.0, f64::max);
    let spinning = pacing != crate::cli::Pacing::Sleep;
    out.push(Check {
        name: "generator_cpu".into(),
        verdict: if spinning {
            Verdict::Skipped
        } else if busiest < CPU_SATURATION {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        detail: if spinning {
            format!("busiest generator thread {:.0}% busy; spinning pacing keeps a core busy by design, so the lag check stands in for this one", busiest * 100.0)
        } else {
            format!("busiest generator thread {:.0}% busy; bound: under {:.0}%", busiest * 100.0, CPU_SATURATION * 100.0)
        },
        meaning: "a generator thread ran out of CPU; add --threads or lower the rate".into(),
    });

    if arrival == Arrival::Poisson {
        let check = match dispersion_z(&outcome.send_times_ns) {
            None => Check {
                name: "poisson_fit".into(),
                verdict: Verdict::Skipped,
                detail: format!("{} sends sampled: too few to test", outcome.send_times_ns.len()),
                meaning: String::new(),
            },
            Some((z, windows, mean)) => Check {
                name: "poisson_fit".into(),
                verdict: if z.abs() <= DISPERSION_Z { Verdict::Pass } else { Verdict::Fail },
                detail: format!(
                    "index-of-dispersion test on sends per window ({windows} windows, {mean:.1} sends each): z = {z:+.2}; bound |z| <= {DISPERSION_Z}"
                ),
                meaning: "the sends were not a Poisson process (too regular if z < 0, too bursty if z > 0)".into(),
            },
        };
        out.push(check);
    }
    out
}

/// Index-of-dispersion test of send times against a Poisson process.
///
/// The sends are counted in equal windows far longer than the generator's timing
/// jitter (so batching and late wake-ups barely move a count). For a Poisson process
/// the counts are Poisson: `sum((n_i - mean)^2) / mean` follows chi-square with
/// `k - 1` degrees of freedom. Returns that statistic as a normal z score
/// (Wilson-Hilferty), the number of windows and the mean count; `None` when there
/// are too few sends. Constant arrivals give a large negative z, bursts a positive one.
pub fn dispersion_z(send_times_ns: &[u64]) -> Option<(f64, usize, f64)> {
    let (first, last) = (*send_times_ns.first()?, *send_times_ns.last()?);
    let k = DISPERSION_WINDOWS;
    if send_times_ns.len() < 20 * k || last <= first {
        return None;
    }
    let width = (last - first) as f64 / k as f64;
    let mut counts = vec![0u64; k];
    for &t in send_times_ns {
        let i = (((t - first) as f64 / width) as usize).min(k - 1);
        counts[i] += 1;
    }
    let mean = send_times_ns.len() as f64 / k as f64;
    let chi2: f64 = counts.iter().map(|&n| (n as f64 - mean).powi(2)).sum::<f64>() / mean;
    let dof = (k - 1) as f64;
    let a = 2.0 / (9.0 * dof);
    let z = ((chi2 / dof).cbrt() - (1.0 - a)) / a.sqrt();
    Some((z, k, mean))
}

/// Kolmogorov-Smirnov statistic of `samples` against the exponential with `rate`.
pub fn ks_exponential(samples: &[f64], rate: f64) -> f64 {
    let mut sorted: Vec<f64> = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in sorted.iter().enumerate() {
        let cdf = 1.0 - (-rate * x).exp();
        let below = i as f64 / n;
        let above = (i + 1) as f64 / n;
        d = d.max((cdf - below).abs()).max((above - cdf).abs());
    }
    d
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn poisson_times(rate_per_ns: f64, n: usize, seed: u64) -> Vec<u64> {
        let mut s = crate::drive::schedule::Schedule::new(Arrival::Poisson, rate_per_ns * 1e9, 0, 1, seed);
        (0..n).map(|_| s.advance().as_nanos() as u64).collect()
    }

    #[test]
    fn dispersion_test_accepts_poisson_and_rejects_constant_arrivals() {
        let (z, _, _) = dispersion_z(&poisson_times(1e-5, 20_000, 3)).unwrap();
        assert!(z.abs() < DISPERSION_Z, "poisson z {z}");
        let constant: Vec<u64> = (0..20_000u64).map(|i| i * 100_000).collect();
        let (z, _, _) = dispersion_z(&constant).unwrap();
        assert!(z < -DISPERSION_Z, "constant z {z}");
    }

    #[test]
    fn dispersion_test_tolerates_jitter_far_below_the_window() {
        // Every send moved late by up to 50 us (the lag seen at 20k/s) against 10 ms windows.
        let jittered: Vec<u64> = poisson_times(2e-5, 20_000, 5).iter().enumerate().map(|(i, t)| t + (i as u64 * 7919) % 50_000).collect();
        let mut sorted = jittered;
        sorted.sort_unstable();
        let (z, _, _) = dispersion_z(&sorted).unwrap();
        assert!(z.abs() < DISPERSION_Z, "jittered z {z}");
    }

    #[test]
    fn ks_rejects_constant_gaps_as_exponential() {
        let samples = vec![100.0; 1000];
        let d = ks_exponential(&samples, 0.01);
        assert!(d > 0.3, "D {d}");
    }
}
