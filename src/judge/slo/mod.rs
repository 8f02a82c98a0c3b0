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
//! rate (under [`crate::judge::saturation::SATURATION_FRACTION`] of the schedule, requests unsent, or no reply)
//! fails.

mod step;

pub(crate) use super::counted::only_pessimistic;
pub use super::counted::{PESSIMISTIC, SEND_TOLERANCE, Sends, decided_on, sends};
pub use step::{StepRun, judge_step};

use super::summary;
use crate::config::slo::Slo;
use crate::report::TestReport;
use crate::report::sweep::steps::{StepSummary, StepVerdict};
use crate::report::sweep::{Measurement, SloCheck, SloVerdict, Verdict};
use crate::stats::exceedance::Clusters;

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

/// Judges one run against `slos`: `met` when every objective's measured value holds and
/// the run was valid (the achieved rate within [`SEND_TOLERANCE`] of the schedule,
/// nothing unsent); its `verdict` by the rule of a step (the module doc), its response
/// windows the clusters ([`Clusters::Windows`]), and each objective's interval that test's
/// inversion, so that a verdict and the interval shown beside it agree.
pub fn judge(report: &TestReport, slos: &[Slo]) -> SloVerdict {
    let valid = sends(report) == Sends::Kept;
    let step = judge_step(&[report], slos, Clusters::Windows);
    let response = report.response();
    let checks: Vec<SloCheck> = slos
        .iter()
        .map(|slo| {
            let own = step.checks.iter().find(|c| c.slo == slo.text);
            let measured_ns = own.map(|c| c.summary.value_ns).or_else(|| {
                response
                    .and_then(|l| summary::percentile_of(l, slo.percentile))
                    .map(|a| a.0)
            });
            SloCheck {
                slo: slo.text.clone(),
                measured_ns,
                ci95_ns: own.and_then(|c| c.summary.ci95_ns),
                met: measured_ns.is_some_and(|m| m <= slo.bound_ns),
                verdict: Some(own.map_or(Verdict::Uncertain, |c| c.verdict)),
                exceedance: own.and_then(|c| c.exceedance),
            }
        })
        .collect();
    SloVerdict {
        met: valid && checks.iter().all(|c| c.met),
        valid,
        verdict: Some(step.verdict),
        why: Some(step.why),
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
        summary.slo = Some(judge_step(&decided_on(&group), slos, Clusters::Runs));
    }
    summaries
}

/// `runs` (the repeats of one open-loop test) pooled and judged against `slos` by the
/// rule of a sweep's step: the same statistic, its stated error tested by the same
/// calibration. `None` for a closed loop or without objectives.
pub fn judge_repeats(runs: &[&TestReport], slos: &[Slo]) -> Option<StepVerdict> {
    runs.first()?.target_rate_per_sec?;
    if slos.is_empty() {
        return None;
    }
    Some(judge_step(runs, slos, Clusters::Runs))
}

#[cfg(test)]
mod tests;
