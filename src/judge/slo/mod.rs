//! The SLO verdicts of a sweep's runs and steps, as pure functions of measured numbers:
//! whether a run or a step passes, fails or is uncertain against the objectives, and
//! whether the server is past saturation. The capacity read from the verdicts is
//! [`super::capacity`]'s; measuring and the search are `sweep`'s.
//!
//! The rule, on each objective `pQ <= T` at one step (every run at one rate: each
//! `--repeat`, search visit and re-measurement, pooled): `pQ <= T` holds exactly when the
//! share of replies slower than T is at most `1 - Q`, so the step is decided on that
//! share pooled over its runs ([`crate::stats::pooled`], [`crate::stats::exceedance`]):
//! it **passes** when the share's upper bound is under `1 - Q` at a look that may pass
//! (from the 16th run), **fails** when its lower bound is over it (from the 4th), and is
//! **uncertain** otherwise (the search then measures more runs there). The bounds count
//! the runs as clusters, so host weather between runs widens them, with the windows inside
//! runs as a floor; pass and fail each have their own level, set so that a rate exactly at
//! the objective passes in at most 5% of decisions under simulated bursty stalls and mixed
//! weather (the calibration test beside them).
//! A step passes when every objective passes and fails when one fails.
//! The runs that count are those that kept their schedule and whose failed self-checks,
//! if any, can only have raised what they measured ([`PESSIMISTIC`]: the generator's
//! lag is part of response time, never subtracted), so a pass on them is a pass of the
//! server. A failure is not: a step that fails mostly on runs whose generator fell
//! behind, or whose runs mostly do not count, is uncertain and marked as limited by the
//! generator, not judged as the server's. A step whose every run could not carry its
//! rate (under [`SATURATION_FRACTION`] of the schedule, requests unsent, or no reply)
//! fails.

mod step;

pub(crate) use step::only_pessimistic;
pub use step::{PESSIMISTIC, StepRun, judge_step};

use super::saturation::{SATURATION_FRACTION, achieved_fraction};
use super::summary;
use crate::config::slo::Slo;
use crate::report::TestReport;
use crate::report::sweep::steps::{StepSummary, StepVerdict};
use crate::report::sweep::{Measurement, SloCheck, SloVerdict, Verdict};
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
            let at = response.and_then(|l| summary::percentile_of(l, slo.percentile));
            let ci95_ns = at.and_then(|a| a.1);
            SloCheck {
                slo: slo.text.clone(),
                measured_ns: at.map(|a| a.0),
                ci95_ns,
                met: at.is_some_and(|a| a.0 <= slo.bound_ns),
                verdict: Some(verdict(ci95_ns, slo.bound_ns)),
            }
        })
        .collect();
    let own = all_of(checks.iter().filter_map(|c| c.verdict));
    SloVerdict {
        met: valid && checks.iter().all(|c| c.met),
        valid,
        verdict: Some(with_sends(own, &[kept])),
        checks,
    }
}

/// The steps by rate of `runs`, each judged against `slos` (unjudged without any).
pub fn judge_steps(runs: &[Measurement], slos: &[Slo]) -> Vec<StepSummary> {
    let mut summaries = summary::summarize(runs);
    if slos.is_empty() {
        return summaries;
    }
    let groups = summary::by_rate(runs);
    for (summary, (_, group)) in summaries.iter_mut().zip(groups) {
        summary.slo = Some(judge_step(&decided_on(&group), slos));
    }
    summaries
}

/// The runs of one rate its verdict rests on: its confirmation's fresh runs alone when
/// it has any (the search kept the rates whose runs happened to be calm, so pooling them
/// back in would undo what the confirmation is for), else all of them.
pub fn decided_on<'a>(group: &[&'a Measurement]) -> Vec<&'a Measurement> {
    let fresh: Vec<&Measurement> = group
        .iter()
        .copied()
        .filter(|m| m.kind == crate::report::sweep::Kind::Confirm)
        .collect();
    if fresh.is_empty() {
        group.to_vec()
    } else {
        fresh
    }
}

/// `runs` (the repeats of one open-loop test) pooled and judged against `slos` by the
/// rule of a sweep's step: the same statistic, its stated error tested by the same
/// calibration. `None` for a closed loop or without objectives.
pub fn judge_repeats(runs: &[&TestReport], slos: &[Slo]) -> Option<StepVerdict> {
    runs.first()?.target_rate_per_sec?;
    if slos.is_empty() {
        return None;
    }
    Some(judge_step(runs, slos))
}

#[cfg(test)]
mod tests;
