//! The SLO verdicts of a sweep's runs and steps, as pure functions of measured numbers:
//! whether a run or a step passes, fails or is uncertain against the objectives, and
//! whether the server is past saturation. The capacity read from the verdicts is
//! [`super::capacity`]'s; measuring and the search are `sweep`'s.
//!
//! The rule, on each objective `pQ <= T` at one step (every run at one rate: each
//! `--repeat`, search visit and re-measurement, pooled): `pQ <= T` holds exactly when the
//! share of replies slower than T is at most `1 - Q`, so the step is decided on that
//! share pooled over its runs ([`crate::stats::pooled`], [`crate::stats::exceedance`]):
//! it **passes** when the share's upper bound is under `1 - Q`, **fails** when its lower
//! bound is over it, and is **uncertain** otherwise, or before the first look (the
//! search then measures more runs there). The bounds count the runs as clusters, so
//! host weather between runs widens them, with the windows inside runs as a floor; their
//! level is set so that a rate exactly at the objective passes in at most 5% of
//! decisions under simulated bursty stalls (the calibration test beside them).
//! A step passes when every objective passes and fails when one fails.
//! The runs that count are those that kept their schedule and whose failed self-checks,
//! if any, can only have raised what they measured ([`PESSIMISTIC`]: the generator's
//! lag is part of response time, never subtracted), so a pass on them is a pass of the
//! server. A failure is not: a step that fails mostly on runs whose generator fell
//! behind, or whose runs mostly do not count, is uncertain and marked as limited by the
//! generator, not judged as the server's. A step whose every run could not carry its
//! rate (under [`SATURATION_FRACTION`] of the schedule, requests unsent, or no reply)
//! fails.

use crate::config::sweep::Slo;
use crate::report::TestReport;
use crate::report::sweep::steps::{self, Exceedance, StepCheck, StepSummary, StepVerdict};
use crate::report::sweep::{Measurement, SloCheck, SloVerdict};
pub use crate::report::sweep::{SATURATION_FRACTION, Verdict, achieved_fraction};
use crate::stats::confidence::Ci95;
use crate::stats::exceedance::{self, Decision};
use crate::stats::pooled;

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
    let sends: Vec<Sends> = group.iter().map(|m| sends(&m.report)).collect();
    // The visits: runs that kept their schedule and whose failed checks, if any, can only
    // have made their response times higher than the server's (see [`PESSIMISTIC`]).
    let visits: Vec<&Measurement> = group
        .iter()
        .zip(&sends)
        .filter(|(m, s)| **s == Sends::Kept && only_pessimistic(&m.report))
        .map(|(m, _)| *m)
        .collect();
    let invalid = group.len() - visits.len();
    let lagging = visits
        .iter()
        .filter(|m| generator_behind(&m.report))
        .count();
    let checks: Vec<StepCheck> = slos
        .iter()
        .filter_map(|slo| step_check(&visits, slo))
        .collect();
    let measured = if checks.len() == slos.len() && !visits.is_empty() {
        all_of(checks.iter().map(|c| c.verdict))
    } else {
        Verdict::Uncertain
    };
    // A failure measured mostly on runs whose generator fell behind may be the
    // generator's; a pass on them stands (their lag only added to what was measured).
    let generator_limited =
        (measured != Verdict::Pass && lagging * 2 > visits.len() && !visits.is_empty())
            || invalid * 2 > group.len();
    let verdict = if !sends.is_empty() && sends.iter().all(|s| *s == Sends::Overloaded) {
        Verdict::Fail
    } else if generator_limited {
        Verdict::Uncertain
    } else {
        measured
    };
    let short_runs = sends.iter().filter(|s| **s != Sends::Kept).count();
    let why = if verdict == Verdict::Fail && measured != Verdict::Fail {
        format!(
            "no run carried the rate ({} of {} under {:.0}% of the schedule or with requests unsent)",
            short_runs,
            group.len(),
            100.0 * SATURATION_FRACTION
        )
    } else if generator_limited {
        format!(
            "limited by the generator: {} of {} runs fell behind their schedule or failed a self-check",
            (invalid + lagging).min(group.len()),
            group.len()
        )
    } else {
        checks
            .iter()
            .zip(slos)
            .map(|(c, slo)| reason(c, slo))
            .collect::<Vec<_>>()
            .join("; ")
    };
    StepVerdict {
        verdict,
        met_runs: group
            .iter()
            .filter(|m| m.slo.as_ref().is_some_and(|v| v.met))
            .count(),
        short_runs,
        invalid_runs: invalid,
        generator_limited,
        checks,
        why,
    }
}

/// The checks whose failure can only have made a run's response times higher than the
/// server gave: the generator's lag and CPU (response time counts from the intended
/// send, so its lateness is added, never taken away), its sends' shape (late sends
/// bunch up, a burstier load), and a backlog that grew. A run failing any other check
/// (errors, counts that do not add up) is not a visit.
pub const PESSIMISTIC: [&str; 4] = [
    "schedule_lag",
    "generator_cpu",
    "poisson_fit",
    "steady_state",
];

/// Whether every check `report` failed is one of [`PESSIMISTIC`].
fn only_pessimistic(report: &TestReport) -> bool {
    report
        .checks
        .iter()
        .filter(|c| c.verdict == crate::report::verdict::Verdict::Fail)
        .all(|c| PESSIMISTIC.contains(&c.name.as_str()))
}

/// Whether `report`'s generator fell behind: its lag or CPU check failed.
fn generator_behind(report: &TestReport) -> bool {
    report.checks.iter().any(|c| {
        c.verdict == crate::report::verdict::Verdict::Fail
            && matches!(c.name.as_str(), "schedule_lag" | "generator_cpu")
    })
}

/// One objective over `visits`: the pooled percentile with its interval, and the decision
/// on the pooled exceedance (see [`crate::stats::pooled`]).
fn step_check(visits: &[&Measurement], slo: &Slo) -> Option<StepCheck> {
    let quantile = slo.percentile / 100.0;
    let hists: Vec<_> = visits
        .iter()
        .filter_map(|m| m.report.response()?.histogram())
        .collect();
    let windows = steps::windows_of(visits);
    let summary = pooled::percentile(&hists, &windows, quantile)?;
    let (decision, exceedance) = if windows.iter().all(|w| !w.is_empty()) {
        pooled::objective(&windows, quantile, slo.bound_ns)
    } else {
        (Decision::Undecided, None)
    };
    Some(StepCheck {
        slo: slo.text.clone(),
        summary,
        exceedance: exceedance.map(|e| Exceedance::of(&e, 1.0 - quantile)),
        verdict: match decision {
            Decision::Holds => Verdict::Pass,
            Decision::Broken => Verdict::Fail,
            Decision::Undecided => Verdict::Uncertain,
        },
    })
}

/// One objective's verdict in a clause: the share of replies over the bound with its
/// bounds, against the share the objective allows, and the pooled percentile.
fn reason(c: &StepCheck, slo: &Slo) -> String {
    let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
    let value = format!(
        "{} {} ms over {} runs{}",
        slo.percentile_label(),
        ms(c.summary.value_ns),
        c.summary.runs,
        c.summary
            .ci95_ns
            .map_or_else(String::new, |i| format!(" {}", i.show(ms)))
    );
    let Some(e) = &c.exceedance else {
        return format!("{value}; no response windows to decide on");
    };
    let relation = match c.verdict {
        Verdict::Pass => "under",
        Verdict::Fail => "over",
        Verdict::Uncertain => "not yet decided against",
    };
    let mut text = format!(
        "{:.2}% over {} ms [{:.2}%, {:.2}%] {relation} {:.2}% ({value})",
        100.0 * e.fraction,
        ms(slo.bound_ns),
        100.0 * e.low,
        100.0 * e.high,
        100.0 * e.limit
    );
    if c.verdict == Verdict::Uncertain && e.visits < exceedance::LOOKS[0] {
        text.push_str(&format!(
            ", {} of the {} runs a decision needs",
            e.visits,
            exceedance::LOOKS[0]
        ));
    } else if c.verdict == Verdict::Uncertain && e.over == 0 {
        text.push_str(&format!(
            ", {} replies with none over the bound pass it",
            exceedance::replies_needed(e.limit)
        ));
    }
    text
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
    fn a_step_is_decided_on_the_share_over_the_bound_pooled_over_its_runs() {
        let slos = [slo_p99_1ms()];
        let runs = |n: usize, over_per_window: u64| -> Vec<Measurement> {
            (0..n)
                .map(|_| windowed_run(1000.0, 5000, &[over_per_window; 4]))
                .collect()
        };
        let judged = |runs: &[Measurement]| judge_step(&runs.iter().collect::<Vec<_>>(), &slos);
        // 0.2% over 1 ms in 8 runs: well under the 1% p99 allows.
        let v = judged(&runs(8, 10));
        assert_eq!(v.verdict, Pass, "{}", v.why);
        let e = v.checks[0].exceedance.unwrap();
        assert!((e.fraction - 0.002).abs() < 1e-9 && e.visits == 8, "{e:?}");
        assert!(
            v.checks[0].summary.value_ns < MS,
            "{:?}",
            v.checks[0].summary
        );
        // 3% over: fails.
        assert_eq!(judged(&runs(8, 150)).verdict, Fail);
        // Two runs are fewer than the first look: not decided yet, and it says why.
        let v = judged(&runs(2, 10));
        assert_eq!(v.verdict, Uncertain, "{}", v.why);
        assert!(
            v.why.contains("of the 4 runs a decision needs"),
            "{}",
            v.why
        );
        // One run that stalled weighs by its replies: the pooled p99 shows it.
        let mut stalled = runs(7, 0);
        stalled.push(windowed_run(1000.0, 5000, &[2500, 0, 0, 0]));
        let v = judged(&stalled);
        assert!(
            v.checks[0].summary.value_ns > MS,
            "{:?}",
            v.checks[0].summary
        );
        let failed = |name: &str| crate::report::Check {
            name: name.into(),
            verdict: crate::report::verdict::Verdict::Fail,
            detail: String::new(),
            meaning: String::new(),
        };
        let with = |mut runs: Vec<Measurement>, check: &str, n: usize| {
            for m in runs.iter_mut().take(n) {
                m.report.checks.push(failed(check));
                m.report.valid = false;
            }
            runs
        };
        // Runs whose counts are wrong are left out; most of them: not decided.
        let v = judged(&with(runs(8, 10), "error_replies", 5));
        assert!(v.generator_limited && v.verdict == Uncertain, "{}", v.why);
        assert!(v.why.contains("limited by the generator"), "{}", v.why);
        // A lagging generator only added to what was measured: a pass stands...
        assert_eq!(judged(&with(runs(8, 10), "schedule_lag", 8)).verdict, Pass);
        // ...a failure measured on such runs may be the generator's.
        let v = judged(&with(runs(8, 150), "generator_cpu", 8));
        assert!(v.generator_limited && v.verdict == Uncertain, "{}", v.why);
        assert_eq!(judged(&with(runs(8, 150), "poisson_fit", 8)).verdict, Fail);
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
