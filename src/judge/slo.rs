//! The SLO verdicts of a sweep's runs and steps, as pure functions of measured numbers:
//! whether a run or a step passes, fails or is uncertain against the objectives, and
//! whether the server is past saturation. The capacity read from the verdicts is
//! [`super::capacity`]'s; measuring and the search are `sweep`'s.
//!
//! The rule, on each objective `pNN <= bound` at one step (every run at one rate, each
//! `--repeat` and each re-measurement, pooled; see [`crate::report::sweep::steps`]):
//! the step **passes** when the 95% interval of its `pNN` lies at or under the bound
//! (its upper end is at most the bound), **fails** when the interval lies above it (its
//! lower end is over the bound), and is **uncertain** otherwise: the interval straddles
//! the bound, or has no upper end (too few samples beyond the percentile to bound it).
//! The interval is the wider of the runs' own (the median of their intervals) and the
//! one from the runs' spread (the order-statistic interval of their median; min..max
//! under 6 runs). A step passes when every objective passes and fails when one fails.
//! A run that could not carry its rate (it achieved under [`SATURATION_FRACTION`] of
//! the schedule, left requests unsent, or got no reply) cannot pass: a step whose
//! every run is such fails, and one with some, or with runs short of the schedule by
//! more than [`SEND_TOLERANCE`], is at best uncertain.
//! The interval rule was chosen over a vote of the repeats ("met in 80% of them")
//! because it gives a verdict with its confidence from one run as from many, and because
//! a vote of a few runs is again a point estimate: with three runs, 80% means all three.

use crate::config::sweep::Slo;
use crate::report::TestReport;
use crate::report::sweep::steps::{self, StepCheck, StepSummary, StepVerdict};
use crate::report::sweep::{Measurement, SloCheck, SloVerdict};
pub use crate::report::sweep::{SATURATION_FRACTION, Verdict, achieved_fraction};
use crate::stats::confidence::Ci95;

/// Largest shortfall of the achieved rate against the planned rate for a step to be valid.
pub const SEND_TOLERANCE: f64 = super::checks::RATE_TOLERANCE;

/// Whether a run carried its rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sends {
    /// Within [`SEND_TOLERANCE`] of the schedule, nothing unsent.
    Kept,
    /// Short of the schedule by more than the tolerance, yet above
    /// [`SATURATION_FRACTION`] and nothing unsent (a generator stall on a busy host).
    Short,
    /// Under [`SATURATION_FRACTION`] of the schedule, requests never sent, or no reply.
    Overloaded,
}

/// How `report` kept its schedule.
pub fn sends(report: &TestReport) -> Sends {
    let c = &report.counts;
    let achieved = achieved_fraction(report);
    if c.completed == 0 || c.not_sent > 0 || achieved < SATURATION_FRACTION {
        Sends::Overloaded
    } else if achieved < 1.0 - SEND_TOLERANCE {
        Sends::Short
    } else {
        Sends::Kept
    }
}

/// The verdict of an objective with bound `bound_ns` on a percentile with interval
/// `ci`: pass when its upper end is at most the bound, fail when its lower end is above
/// it, uncertain otherwise (and without an interval).
pub fn verdict(ci: Option<Ci95>, bound_ns: u64) -> Verdict {
    match ci {
        Some(c) if c.high().is_some_and(|h| h <= bound_ns) => Verdict::Pass,
        Some(c) if c.low() > bound_ns => Verdict::Fail,
        _ => Verdict::Uncertain,
    }
}

/// Every objective together: fail if one fails, pass if all pass, uncertain otherwise.
pub fn all_of(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
    let mut all_pass = true;
    let mut any = false;
    for v in verdicts {
        any = true;
        match v {
            Verdict::Fail => return Verdict::Fail,
            Verdict::Uncertain => all_pass = false,
            Verdict::Pass => {}
        }
    }
    if any && all_pass {
        Verdict::Pass
    } else {
        Verdict::Uncertain
    }
}

/// `verdict` of runs whose sends were `sends`: fail when every run was overloaded; at
/// best uncertain when any run was overloaded or short.
pub fn with_sends(verdict: Verdict, sends: &[Sends]) -> Verdict {
    if !sends.is_empty() && sends.iter().all(|s| *s == Sends::Overloaded) {
        Verdict::Fail
    } else if verdict == Verdict::Pass && sends.iter().any(|s| *s != Sends::Kept) {
        Verdict::Uncertain
    } else {
        verdict
    }
}

/// Judges one run against `slos`: `met` when every objective's measured value holds and
/// the run was valid (the achieved rate within [`SEND_TOLERANCE`] of the schedule,
/// nothing unsent); its `verdict` from its own intervals by the rule of the module doc.
pub fn judge(report: &TestReport, slos: &[Slo]) -> SloVerdict {
    let kept = sends(report);
    let valid = kept == Sends::Kept;
    let response = report.response();
    let checks: Vec<SloCheck> = slos
        .iter()
        .map(|slo| {
            let at = response.and_then(|l| steps::percentile_of(l, slo.percentile));
            SloCheck {
                slo: slo.text.clone(),
                measured_ns: at.map(|a| a.0),
                ci95_ns: at.and_then(|a| a.1),
                met: at.is_some_and(|a| a.0 <= slo.bound_ns),
            }
        })
        .collect();
    let own = all_of(
        checks
            .iter()
            .zip(slos)
            .map(|(c, slo)| verdict(c.ci95_ns, slo.bound_ns)),
    );
    SloVerdict {
        met: valid && checks.iter().all(|c| c.met),
        valid,
        verdict: Some(with_sends(own, &[kept])),
        checks,
    }
}

/// The steps by rate of `runs`, each judged against `slos` (unjudged without any).
pub fn judge_steps(runs: &[Measurement], slos: &[Slo]) -> Vec<StepSummary> {
    let mut summaries = steps::summarize(runs);
    if slos.is_empty() {
        return summaries;
    }
    let groups = steps::by_rate(runs);
    for (summary, (_, group)) in summaries.iter_mut().zip(groups) {
        summary.slo = Some(judge_step(&group, slos));
    }
    summaries
}

/// One step's verdict from all its runs (see the module doc).
pub fn judge_step(group: &[&Measurement], slos: &[Slo]) -> StepVerdict {
    let checks: Vec<StepCheck> = slos
        .iter()
        .filter_map(|slo| {
            let values: Vec<(u64, Option<Ci95>)> = group
                .iter()
                .filter_map(|m| m.report.response())
                .filter_map(|l| steps::percentile_of(l, slo.percentile))
                .collect();
            let summary = crate::stats::median::combine(&values)?;
            Some(StepCheck {
                slo: slo.text.clone(),
                verdict: verdict(summary.ci95_ns, slo.bound_ns),
                summary,
            })
        })
        .collect();
    let sends: Vec<Sends> = group.iter().map(|m| sends(&m.report)).collect();
    let measured = if checks.len() == slos.len() {
        all_of(checks.iter().map(|c| c.verdict))
    } else {
        Verdict::Uncertain
    };
    let verdict = with_sends(measured, &sends);
    let short_runs = sends.iter().filter(|s| **s != Sends::Kept).count();
    let why = match (verdict, measured) {
        (Verdict::Fail, m) if m != Verdict::Fail => format!(
            "no run carried the rate ({} of {} under {:.0}% of the schedule or with requests unsent)",
            short_runs,
            group.len(),
            100.0 * SATURATION_FRACTION
        ),
        (Verdict::Uncertain, Verdict::Pass) => format!(
            "{short_runs} of {} runs fell short of the schedule",
            group.len()
        ),
        _ => checks
            .iter()
            .zip(slos)
            .map(|(c, slo)| {
                let relation = match c.verdict {
                    Verdict::Pass => "at or under",
                    Verdict::Fail => "above",
                    Verdict::Uncertain if c.summary.ci95_ns.is_some_and(|i| i.high().is_none()) => {
                        "against"
                    }
                    Verdict::Uncertain => "across",
                };
                format!(
                    "{} median {:.3} ms, {} {relation} {:.3} ms",
                    slo.percentile_label(),
                    c.summary.median_ns as f64 / 1e6,
                    c.summary.ci95_ns.map_or_else(
                        || "no interval".to_string(),
                        |ci| format!("95% {}", ci.show(|ns| format!("{:.3}", ns as f64 / 1e6)))
                    ),
                    slo.bound_ns as f64 / 1e6
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    };
    StepVerdict {
        verdict,
        met_runs: group
            .iter()
            .filter(|m| m.slo.as_ref().is_some_and(|v| v.met))
            .count(),
        short_runs,
        checks,
        why,
    }
}

/// Why the sweep should stop after a step at `target` that achieved the fraction
/// `achieved` of its planned rate (see [`achieved_fraction`]) with a response-time p99
/// of `p99_ns`; `None` to go on.
pub fn saturation(
    target: f64,
    achieved: f64,
    p99_ns: u64,
    stop_at_ns: Option<u64>,
) -> Option<String> {
    if achieved < SATURATION_FRACTION {
        return Some(format!(
            "past saturation: at {target:.0} req/s the generator achieved only {:.1}% of the planned rate (under {:.0}%)",
            100.0 * achieved,
            100.0 * SATURATION_FRACTION
        ));
    }
    match stop_at_ns {
        Some(limit) if p99_ns > limit => Some(format!(
            "past saturation: response p99 {:.3} ms at {target:.0} req/s is above --stop-at {:.3} ms",
            p99_ns as f64 / 1e6,
            limit as f64 / 1e6
        )),
        _ => None,
    }
}

/// Whether a rate is past saturation once `saturated` of its `repeat` planned runs were
/// (see [`saturation`]): most of them, so a single stall of a noisy host does not end the
/// steps.
pub fn past_saturation(saturated: usize, repeat: usize) -> bool {
    saturated > repeat / 2
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::judge::fixtures::*;
    use Verdict::{Fail, Pass, Uncertain};

    #[test]
    fn a_step_passes_under_the_bound_fails_over_it_and_is_uncertain_across_or_unbounded() {
        assert_eq!(verdict(ci(0.4, Some(0.9)), MS), Pass);
        assert_eq!(verdict(ci(0.4, Some(1.0)), MS), Pass);
        assert_eq!(verdict(ci(1.01, Some(3.0)), MS), Fail);
        assert_eq!(verdict(ci(1.01, None), MS), Fail);
        assert_eq!(verdict(ci(0.9, Some(1.1)), MS), Uncertain);
        assert_eq!(verdict(ci(0.2, None), MS), Uncertain);
        assert_eq!(verdict(None, MS), Uncertain);
        assert_eq!(all_of([Pass, Pass]), Pass);
        assert_eq!(all_of([Pass, Uncertain]), Uncertain);
        assert_eq!(all_of([Uncertain, Fail]), Fail);
        assert_eq!(all_of([]), Uncertain);
    }

    #[test]
    fn a_rate_not_carried_cannot_pass_and_fails_when_no_run_carried_it() {
        use Sends::{Kept, Overloaded, Short};
        assert_eq!(with_sends(Pass, &[Kept, Kept]), Pass);
        assert_eq!(with_sends(Pass, &[Kept, Short]), Uncertain);
        assert_eq!(with_sends(Pass, &[Kept, Overloaded]), Uncertain);
        assert_eq!(with_sends(Pass, &[Overloaded, Overloaded]), Fail);
        assert_eq!(with_sends(Uncertain, &[Overloaded]), Fail);
        assert_eq!(with_sends(Fail, &[Short]), Fail);
        let r = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 1.0).report;
        assert_eq!(sends(&r), Kept);
        let r = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 0.97).report;
        assert_eq!(sends(&r), Short);
        let r = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 0.9).report;
        assert_eq!(sends(&r), Overloaded);
    }

    #[test]
    fn a_run_is_judged_on_its_own_interval_and_keeps_its_point_estimate() {
        let pass = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 1.0);
        let v = pass.slo.as_ref().unwrap();
        assert!(v.met && v.valid);
        assert_eq!(v.verdict, Some(Pass));
        assert_eq!(v.checks[0].ci95_ns, ci(0.4, Some(0.6)));
        // Met by its point estimate, not with confidence.
        let close = run(1000.0, 9 * MS / 10, ci(0.8, Some(1.2)), 1.0);
        let v = close.slo.as_ref().unwrap();
        assert!(v.met);
        assert_eq!(v.verdict, Some(Uncertain));
    }

    #[test]
    fn repeats_that_disagree_make_a_step_uncertain_and_agreeing_ones_decide_it() {
        let slos = [slo_p99_1ms()];
        let tight = |p99_ms: f64| {
            let ns = (p99_ms * MS as f64) as u64;
            run(
                1000.0,
                ns,
                Some(Ci95(ns * 95 / 100, Some(ns * 105 / 100))),
                1.0,
            )
        };
        let agree = [tight(0.4), tight(0.5), tight(0.45)];
        let v = judge_step(&agree.iter().collect::<Vec<_>>(), &slos);
        assert_eq!(v.verdict, Pass, "{}", v.why);
        assert_eq!(v.met_runs, 3);
        // One of three over the bound: the spread (min..max) straddles it.
        let noisy = [tight(0.4), tight(1.6), tight(0.45)];
        let v = judge_step(&noisy.iter().collect::<Vec<_>>(), &slos);
        assert_eq!(v.verdict, Uncertain, "{}", v.why);
        assert_eq!(v.checks[0].summary.median_ns, 450 * MS / 1000);
        assert!(v.why.contains("across"), "{}", v.why);
        let over = [tight(1.4), tight(1.6), tight(1.5)];
        let v = judge_step(&over.iter().collect::<Vec<_>>(), &slos);
        assert_eq!(v.verdict, Fail, "{}", v.why);
        // Every run overloaded: fail whatever the latency of what was sent.
        let dropped = [
            run(1000.0, MS / 2, ci(0.4, Some(0.6)), 0.5),
            run(1000.0, MS / 2, ci(0.4, Some(0.6)), 0.6),
        ];
        let v = judge_step(&dropped.iter().collect::<Vec<_>>(), &slos);
        assert_eq!(v.verdict, Fail);
        assert!(v.why.contains("no run carried the rate"), "{}", v.why);
    }

    #[test]
    fn a_rate_is_past_saturation_when_most_of_its_runs_are() {
        assert!(past_saturation(1, 1));
        assert!(!past_saturation(1, 2) && past_saturation(2, 2));
        assert!(!past_saturation(1, 3) && past_saturation(2, 3));
        assert!(!past_saturation(2, 5) && past_saturation(3, 5));
    }

    #[test]
    fn the_sweep_stops_under_95_percent_of_target_or_above_stop_at() {
        assert_eq!(saturation(100_000.0, 0.96, 1_000_000, None), None);
        assert!(
            saturation(100_000.0, 0.94, 1_000_000, None)
                .unwrap()
                .contains("94.0%")
        );
        assert_eq!(saturation(100_000.0, 1.0, 2_000_000, Some(2_000_000)), None);
        assert!(
            saturation(100_000.0, 1.0, 2_000_001, Some(2_000_000))
                .unwrap()
                .contains("--stop-at")
        );
    }
}
