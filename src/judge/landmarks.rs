//! A sweep's landmarks from its runs: the floor (the first objective's percentile pooled
//! over the runs at the lowest rate, with a run-bootstrap interval), the knee (the lowest
//! rate whose pooled percentile's interval lies wholly above the floor's), saturation
//! (where most runs stopped keeping the schedule, [`super::saturation`]), and beside it the
//! server's open-loop maximum (the replies-per-second plateau) and the closed-loop maximum
//! of the same sweep, the rate where the server's CPU came near a core, and the
//! generator's own limit. The statistics are [`crate::stats::landmarks`]'; the runs
//! counted are those the capacity's estimate counts, less those the host disturbed.

use crate::config::slo::Slo;
use crate::report::sweep::{Floor, Landmarks, Measurement, OpenLoopMax, StepSummary};
use crate::stats::landmarks::{self, RateReplies, RateTail};
use crate::stats::median::median_f64;

/// A single-threaded server's CPU, as a share of one core, from which it is said to be
/// near a core: past it, requests queue for the one thread more than they are served
/// (a server at 79-86% of a core showed the first queueing tail on a two-core machine;
/// 97-99% came with replies falling behind the offered rate).
pub const NEAR_A_CORE: f64 = 0.9;

/// The landmarks of a sweep's `runs` and judged `steps` for the first of `slos`; the
/// intervals from resamples drawn from `seed`.
pub fn landmarks(
    steps: &[StepSummary],
    runs: &[Measurement],
    slos: &[Slo],
    seed: u64,
) -> Landmarks {
    let open: Vec<&Measurement> = runs
        .iter()
        .filter(|m| m.kind.is_open_loop() && m.target_rate_per_sec.is_some())
        .collect();
    let counted: Vec<&Measurement> = open
        .iter()
        .copied()
        .filter(|m| m.report.counts.completed > 0 && super::slo::only_pessimistic(&m.report))
        .filter(|m| super::weather::host_carried(&m.report).is_none())
        .filter(|m| !m.report.windows().is_empty())
        .collect();
    let quantile = slos.first().map_or(0.99, Slo::quantile);
    let rates = distinct_rates(&counted);
    let tails: Vec<RateTail<'_>> = rates
        .iter()
        .map(|&rate| RateTail {
            rate_per_sec: rate,
            runs: at(&counted, rate).map(|m| m.report.windows()).collect(),
        })
        .collect();
    let found = landmarks::floor_and_knee(&tails, quantile, seed);
    let floor = found.floor.map(|(rate, tail)| {
        let step = steps.iter().find(|s| s.target_rate_per_sec == rate);
        Floor {
            rate_per_sec: rate,
            value_ns: tail.value_ns,
            exceedance: step
                .and_then(|s| s.slo.as_ref())
                .and_then(|v| v.checks.first())
                .and_then(|c| c.exceedance),
            interval_ns: Some((tail.low_ns, tail.high_ns)),
            cause: step.and_then(|s| s.bottleneck),
        }
    });
    let replies: Vec<RateReplies> = distinct_rates(&open)
        .iter()
        .map(|&rate| RateReplies {
            offered_per_sec: rate,
            replies_per_sec: at(&open, rate)
                .map(|m| m.report.throughput_per_sec)
                .collect(),
        })
        .collect();
    let open_loop_max = landmarks::open_loop_max(&replies).map(|p| OpenLoopMax {
        replies_per_sec: p.replies_per_sec,
        at_offered_per_sec: p.at_offered_per_sec,
        reached: p.reached,
    });
    let closed_loop_max_per_sec = runs
        .iter()
        .filter(|m| !m.kind.is_open_loop() && m.target_rate_per_sec.is_none())
        .map(|m| m.report.throughput_per_sec)
        .reduce(f64::max);
    let server_near_core_per_sec = distinct_rates(&open).into_iter().find(|&rate| {
        let cpu: Vec<f64> = at(&open, rate)
            .filter_map(|m| m.report.server.as_ref()?.cpu_utilisation)
            .filter(|c| c.is_finite())
            .collect();
        !cpu.is_empty() && median_f64(&cpu) >= NEAR_A_CORE
    });
    let generator_limit_per_sec = steps
        .iter()
        .find(|s| s.slo.as_ref().is_some_and(|v| v.generator_limited))
        .map(|s| s.target_rate_per_sec);
    Landmarks {
        floor,
        knee_per_sec: found.knee_per_sec,
        saturation_per_sec: steps
            .iter()
            .find(|s| super::saturation::saturated(s))
            .map(|s| s.target_rate_per_sec),
        open_loop_max,
        closed_loop_max_per_sec,
        server_near_core_per_sec,
        generator_limit_per_sec,
    }
}

/// The runs of `runs` at `rate`.
fn at<'a, 'b>(
    runs: &'b [&'a Measurement],
    rate: f64,
) -> impl Iterator<Item = &'a Measurement> + 'b {
    runs.iter()
        .copied()
        .filter(move |m| m.target_rate_per_sec == Some(rate))
}

/// The rates of `runs`, increasing, each once.
fn distinct_rates(runs: &[&Measurement]) -> Vec<f64> {
    let mut rates: Vec<f64> = runs.iter().filter_map(|m| m.target_rate_per_sec).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    rates
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::judge::fixtures::*;
    use crate::report::sweep::Kind;

    #[test]
    fn the_knee_is_where_the_pooled_tail_leaves_the_floor_and_the_plateau_is_the_servers() {
        // 0.2 ms at 1k-3k/s; from 4k/s on 2% of replies take 2 ms, so the p99 is 2 ms.
        let mut runs = Vec::new();
        for k in 1..=6u32 {
            for _ in 0..4 {
                let over = if k >= 4 { 200 } else { 0 };
                let mut m = windowed_run(1000.0 * f64::from(k), 10_000, &[over; 4]);
                // Replies follow the offered rate up to 5k/s, then stay there.
                m.report.throughput_per_sec = (1000.0 * f64::from(k)).min(5000.0);
                // The server's CPU grows with the rate: a fifth of a core per 1k/s.
                m.report.server = Some(crate::report::server::ServerView {
                    cpu_utilisation: Some(0.2 * f64::from(k)),
                    ..Default::default()
                });
                runs.push(m);
            }
        }
        let mut closed = run(1.0, 100_000, None, 1.0);
        closed.kind = Kind::ClosedLoop;
        closed.target_rate_per_sec = None;
        closed.report.throughput_per_sec = 4200.0;
        runs.push(closed);
        let steps = crate::judge::slo::judge_steps(&runs, &[slo_p99_1ms()]);
        let l = landmarks(&steps, &runs, &[slo_p99_1ms()], 3);
        let floor = l.floor.unwrap();
        assert_eq!(floor.rate_per_sec, 1000.0);
        let (low, high) = floor.interval_ns.unwrap();
        assert!(
            low <= floor.value_ns && floor.value_ns <= high && high < MS,
            "{floor:?}"
        );
        assert_eq!(l.knee_per_sec, Some(4000.0));
        let plateau = l.open_loop_max.unwrap();
        assert_eq!(plateau.replies_per_sec, 5000.0);
        assert!(plateau.reached, "{plateau:?}");
        assert_eq!(l.closed_loop_max_per_sec, Some(4200.0));
        // 0.8 of a core at 4k/s, a whole one at 5k/s.
        assert_eq!(l.server_near_core_per_sec, Some(5000.0));
        assert_eq!(l.generator_limit_per_sec, None);
        // A step the generator limited is its own limit, named apart.
        let mut steps = steps;
        for s in steps.iter_mut().filter(|s| s.target_rate_per_sec >= 6000.0) {
            s.slo.as_mut().unwrap().generator_limited = true;
        }
        let l = landmarks(&steps, &runs, &[slo_p99_1ms()], 3);
        assert_eq!(l.generator_limit_per_sec, Some(6000.0));
    }
}
