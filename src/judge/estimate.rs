//! The capacity of each objective as an estimate with its interval, from every counted
//! open-loop run of a sweep ([`crate::stats::capacity`] fits them): the headline of a
//! sweep. A run counts when it has replies and every self-check it failed could only
//! have raised what it measured (as for a step's verdict, but runs short of their
//! schedule count too: leaving out the worst runs where the server saturates would bias
//! the fit toward passing). Runs whose tail the host carried ([`super::weather`]) are
//! left out of the headline and counted apart; the estimate with them is kept beside it.

use crate::config::slo::Slo;
use crate::report::sweep::{Disturbed, Measurement, ObjectiveEstimate, RateBound};
use crate::stats::capacity::{self, Crossing, RateRuns};
use crate::stats::pooled;

/// Each objective's estimate, the binding one (lowest) marked, with the runs the host
/// disturbed; the intervals from resamples drawn from `seed`. Empty without a counted
/// run.
pub fn estimates(
    runs: &[Measurement],
    slos: &[Slo],
    seed: u64,
) -> (Vec<ObjectiveEstimate>, Option<Disturbed>) {
    let counted: Vec<&Measurement> = runs
        .iter()
        .filter(|m| m.kind.is_open_loop() && m.target_rate_per_sec.is_some())
        .filter(|m| m.report.counts.completed > 0 && super::slo::only_pessimistic(&m.report))
        .filter(|m| !m.report.windows().is_empty())
        .collect();
    let waits: Vec<Option<f64>> = counted
        .iter()
        .map(|m| super::weather::host_carried(&m.report))
        .collect();
    let calm: Vec<&Measurement> = counted
        .iter()
        .zip(&waits)
        .filter(|(_, w)| w.is_none())
        .map(|(m, _)| *m)
        .collect();
    let disturbed = waits.iter().flatten().count();
    let mut found: Vec<ObjectiveEstimate> = slos
        .iter()
        .filter_map(|slo| match objective(&calm, slo, seed) {
            Some(mut e) => {
                if disturbed > 0 {
                    e.with_disturbed = objective(&counted, slo, seed).map(|all| all.crossing);
                }
                Some(e)
            }
            // Weather ate every run: the estimate from them all, said to be the host's,
            // rather than no answer.
            None => objective(&counted, slo, seed).map(|e| ObjectiveEstimate {
                all_disturbed: true,
                ..e
            }),
        })
        .collect();
    if let Some(binding) = found
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.crossing.key().total_cmp(&b.1.crossing.key()))
        .map(|(i, _)| i)
    {
        found[binding].binding = true;
    }
    let most_steal_share = counted
        .iter()
        .zip(&waits)
        .filter(|(_, w)| w.is_some())
        .filter_map(|(m, _)| super::weather::steal_share(&m.report))
        .fold(0.0, f64::max);
    let disturbed = (disturbed > 0).then(|| Disturbed {
        runs: disturbed,
        of: counted.len(),
        most_wait_share: waits.iter().flatten().copied().fold(0.0, f64::max),
        most_steal_share,
    });
    (found, disturbed)
}

/// One objective's estimate over `runs`; `None` without a reply.
fn objective(runs: &[&Measurement], slo: &Slo, seed: u64) -> Option<ObjectiveEstimate> {
    let mut rates: Vec<f64> = runs.iter().filter_map(|m| m.target_rate_per_sec).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    let groups: Vec<RateRuns> = rates
        .iter()
        .map(|&rate| {
            let windows: Vec<_> = runs
                .iter()
                .filter(|m| m.target_rate_per_sec == Some(rate))
                .map(|m| m.report.windows())
                .collect();
            RateRuns {
                rate_per_sec: rate,
                runs: pooled::run_counts(&windows, slo.bound_ns),
            }
        })
        .collect();
    let e = capacity::estimate(&groups, 1.0 - slo.quantile(), seed)?;
    let (lowest, highest) = (
        e.fitted.first().map_or(0.0, |f| f.0),
        e.fitted.last().map_or(0.0, |f| f.0),
    );
    // The falling part of a valley fit is a low-load rise: the crossing's "below" is
    // the rising part's lowest rate.
    let rising_lowest = e.low_load.map_or(lowest, |l| l.bottom_per_sec);
    let bound = |c: Crossing| match c {
        Crossing::BelowLowest => RateBound::Below(rising_lowest),
        Crossing::At(rate) => RateBound::At(rate),
        Crossing::AboveHighest => RateBound::Above(highest),
    };
    Some(ObjectiveEstimate {
        slo: slo.text.clone(),
        binding: false,
        crossing: bound(e.crossing),
        interval: (bound(e.interval.0), bound(e.interval.1)),
        rates: e.rates,
        runs: e.runs,
        with_disturbed: None,
        all_disturbed: false,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::judge::fixtures::*;
    use crate::report::host::{HostReport, TaskWaits};

    /// Runs at 1k..8k/s whose share over 1 ms doubles with each 1k/s from 0.1% at 1k:
    /// it crosses 1% between 4k (0.8%) and 5k (1.6%).
    fn sweep_runs() -> Vec<Measurement> {
        let mut runs = Vec::new();
        for k in 1..=8u32 {
            for r in 0..6u64 {
                // A little spread between runs, none between windows.
                let over = ((1u64 << (k - 1)) + (r % 3)) * 10;
                runs.push(windowed_run(1000.0 * f64::from(k), 10_000, &[over; 4]));
            }
        }
        runs
    }

    #[test]
    fn the_estimate_lies_between_the_rates_that_bracket_the_limit_and_binds() {
        let runs = sweep_runs();
        let p99 = slo_p99_1ms();
        let p50 = crate::config::slo::parse_slo("p50<=1ms").unwrap();
        let (found, disturbed) = estimates(&runs, &[p50, p99], 7);
        assert_eq!(disturbed, None);
        assert_eq!(found.len(), 2);
        let p99 = &found[1];
        let RateBound::At(rate) = p99.crossing else {
            panic!("{p99:?}")
        };
        assert!((4000.0..5000.0).contains(&rate), "{p99:?}");
        assert!(p99.interval.0.key() <= rate && rate <= p99.interval.1.key());
        assert!(p99.binding && !found[0].binding, "{found:?}");
        // p50 allows half: every rate is under it.
        assert_eq!(found[0].crossing, RateBound::Above(8000.0));
        assert_eq!((p99.rates, p99.runs), (8, 48));
    }

    #[test]
    fn runs_the_host_carried_are_counted_apart_and_the_estimate_with_them_kept() {
        let mut runs = sweep_runs();
        // The 3k runs, each a third over 1 ms, while the server waited half the run for
        // a CPU: with them the crossing falls.
        for m in runs
            .iter_mut()
            .filter(|m| m.target_rate_per_sec == Some(3000.0))
        {
            *m = windowed_run(3000.0, 10_000, &[3000; 4]);
            m.report.host = Some(HostReport {
                server: Some(TaskWaits {
                    run_queue_wait_share: 0.5,
                    ..TaskWaits::default()
                }),
                ..HostReport::default()
            });
        }
        let (found, disturbed) = estimates(&runs, &[slo_p99_1ms()], 7);
        let d = disturbed.unwrap();
        assert_eq!((d.runs, d.of, d.most_wait_share), (6, 48, 0.5));
        // No steal was counted: none is said.
        assert_eq!(d.most_steal_share, 0.0);
        let calm = found[0].crossing.key();
        assert!((4000.0..5000.0).contains(&calm), "{found:?}");
        let with = found[0].with_disturbed.unwrap().key();
        assert!(with < calm, "{found:?}");
        assert!(!found[0].all_disturbed);
    }

    #[test]
    fn the_steal_of_the_runs_the_host_carried_is_kept_as_a_share_of_a_run() {
        let mut runs = sweep_runs();
        for (i, m) in runs
            .iter_mut()
            .filter(|m| m.target_rate_per_sec == Some(3000.0))
            .enumerate()
        {
            *m = windowed_run(3000.0, 10_000, &[3000; 4]);
            m.report.host = Some(HostReport {
                server: Some(TaskWaits {
                    run_queue_wait_share: 0.5,
                    ..TaskWaits::default()
                }),
                steal_ms: Some(100.0 * (i + 1) as f64),
                ..HostReport::default()
            });
        }
        // Steal in a run the host left alone is not the weather's.
        runs[0].report.host = Some(HostReport {
            steal_ms: Some(10_000.0),
            ..HostReport::default()
        });
        let measured_ms = runs[0].report.measured_secs * 1e3;
        let (_, disturbed) = estimates(&runs, &[slo_p99_1ms()], 7);
        let d = disturbed.unwrap();
        assert_eq!(d.runs, 6);
        assert!(
            (d.most_steal_share - 600.0 / measured_ms).abs() < 1e-9,
            "{d:?}"
        );
    }

    #[test]
    fn when_the_host_disturbed_every_run_the_estimate_is_theirs_and_says_so() {
        let mut runs = sweep_runs();
        for m in &mut runs {
            m.report.host = Some(HostReport {
                generator: Some(TaskWaits {
                    run_queue_wait_share: 0.3,
                    ..TaskWaits::default()
                }),
                ..HostReport::default()
            });
        }
        let (found, disturbed) = estimates(&runs, &[slo_p99_1ms()], 7);
        let d = disturbed.unwrap();
        assert_eq!((d.runs, d.of), (48, 48));
        let e = &found[0];
        assert!(
            e.all_disturbed && e.binding && e.with_disturbed.is_none(),
            "{e:?}"
        );
        assert!((4000.0..5000.0).contains(&e.crossing.key()), "{e:?}");
    }
}
