//! Which runs at one rate count: the one choice a step's verdict and its figures (table,
//! CSV, JSON, plots) both rest on, so that they pool exactly the same runs, and the runs
//! left out, counted by why.
//!
//! A run counts (is a *visit*) when it kept its schedule and every self-check it failed
//! can only have raised what it measured ([`PESSIMISTIC`]); when the rate was confirmed,
//! only the confirmation's fresh runs count (the search kept the rates whose runs happened
//! to be calm, so pooling them back in would undo what the confirmation is for).

use super::saturation::{SATURATION_FRACTION, achieved_fraction};
use crate::report::TestReport;
use crate::report::sweep::steps::{LeftOut, LeftOutWhy};
use crate::report::sweep::{Kind, Measurement};

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

/// The checks whose failure can only have made a run's response times higher than the
/// server gave: the generator's lag and CPU (response time counts from the intended
/// send, so its lateness is added, never taken away), its sends' shape (late sends
/// bunch up, a burstier load), its lateness growing or shrinking through the run (or a
/// backlog no on-time response could give an owner), and requests left unanswered (each
/// counted at its age when given up: the 2 s wait after the end or `--timeout`, over any
/// bound a sweep decides unless `--timeout` is set under it). A run failing any
/// other check (errors, counts that do not add up) is not a visit.
pub const PESSIMISTIC: [&str; 5] = [
    "schedule_lag",
    "generator_cpu",
    "poisson_fit",
    crate::report::verdict::STEADY_STATE,
    "unanswered",
];

/// Whether every check `report` failed is one of [`PESSIMISTIC`].
pub(crate) fn only_pessimistic(report: &TestReport) -> bool {
    failed_other(report).is_none()
}

/// The first check `report` failed that is not one of [`PESSIMISTIC`].
fn failed_other(report: &TestReport) -> Option<&str> {
    report
        .checks
        .iter()
        .filter(|c| c.verdict == crate::report::verdict::Verdict::Fail)
        .map(|c| c.name.as_str())
        .find(|name| !PESSIMISTIC.contains(name))
}

/// Why `report` is not a visit; `None` when it is one.
pub fn left_out_why(report: &TestReport) -> Option<LeftOutWhy> {
    match sends(report) {
        Sends::Overloaded => Some(LeftOutWhy::NotCarried),
        Sends::Short => Some(LeftOutWhy::Short {
            tolerance: SEND_TOLERANCE,
        }),
        Sends::Kept => failed_other(report).map(|name| LeftOutWhy::Failed {
            check: name.to_string(),
        }),
    }
}

/// The runs of one rate its verdict rests on: its confirmation's fresh runs alone when
/// it has any, else all of them (see the module doc).
pub fn decided_on<'a>(group: &[&'a Measurement]) -> Vec<&'a Measurement> {
    let fresh: Vec<&Measurement> = group
        .iter()
        .copied()
        .filter(|m| m.kind == Kind::Confirm)
        .collect();
    if fresh.is_empty() {
        group.to_vec()
    } else {
        fresh
    }
}

/// The visits of `group` (every run at one rate), in run order, and the runs left out,
/// counted by why (the confirmation's stale runs first).
pub fn counted<'a>(group: &[&'a Measurement]) -> (Vec<&'a Measurement>, Vec<LeftOut>) {
    let on = decided_on(group);
    let mut left_out: Vec<LeftOut> = Vec::new();
    let mut leave = |why: LeftOutWhy| match left_out.iter_mut().find(|l| l.why == why) {
        Some(l) => l.runs += 1,
        None => left_out.push(LeftOut { why, runs: 1 }),
    };
    for _ in on.len()..group.len() {
        leave(LeftOutWhy::BeforeConfirmation);
    }
    let mut visits = Vec::new();
    for m in on {
        match left_out_why(&m.report) {
            Some(why) => leave(why),
            None => visits.push(m),
        }
    }
    (visits, left_out)
}
