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
/// Kolmogorov-Smirnov critical coefficient at alpha = 0.01 (D_crit = 1.63 / sqrt(n)).
const KS_ALPHA_001: f64 = 1.63;

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
        let threads = config.threads.max(1) as f64;
        let rate_per_ns = rate_per_sec / threads / 1e9;
        let gaps: Vec<f64> = outcome.send_times_ns.windows(2).map(|w| w[1].saturating_sub(w[0]) as f64).collect();
        if gaps.len() < 100 {
            out.push(Check {
                name: "poisson_fit".into(),
                verdict: Verdict::Skipped,
                detail: format!("{} send gaps: too few to test", gaps.len()),
                meaning: "the send gaps do not look exponential; arrivals were not Poisson".into(),
            });
        } else {
            let d = ks_exponential(&gaps, rate_per_ns);
            // Sends move by up to the schedule lag, and requests due together go in one
            // write: a gap may be off by twice the lag p99, which shifts the CDF by at most
            // 1 - exp(-rate * 2 * lag). Allowing that keeps the test about arrival shape.
            let jitter = 1.0 - (-rate_per_ns * 2.0 * lag_p99 as f64).exp();
            let bound = KS_ALPHA_001 / (gaps.len() as f64).sqrt() + jitter;
            out.push(Check {
                name: "poisson_fit".into(),
                verdict: if d <= bound { Verdict::Pass } else { Verdict::Fail },
                detail: format!(
                    "Kolmogorov-Smirnov D = {d:.4} over {} send gaps; bound {bound:.4} (alpha 0.01 plus timing jitter {jitter:.4})",
                    gaps.len()
                ),
                meaning: "the actual send gaps are not exponential; arrivals were not a Poisson process".into(),
            });
        }
    }
    out
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
    use super::*;

    #[test]
    fn ks_rejects_constant_gaps_as_exponential() {
        let samples = vec![100.0; 1000];
        let d = ks_exponential(&samples, 0.01);
        assert!(d > 0.3, "D {d}");
    }
}
