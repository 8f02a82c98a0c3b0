//! The one verdict on objectives: every run at one rate (a sweep's step, `--repeat`'s
//! repeats, or a single run), the visits among them pooled (see the module doc of
//! [`super`] for the rule), each objective decided on its pooled share over the bound with
//! the runs or the windows as clusters, and why (the figures; export says them).

use super::all_of;
use crate::config::slo::Slo;
use crate::judge::counted::{Sends, left_out_why, sends};
use crate::judge::saturation::SATURATION_FRACTION;
use crate::judge::summary::windows_of;
use crate::report::TestReport;
use crate::report::sweep::steps::{
    Exceedance, ObjectiveWhy, StepCheck, StepVerdict, StepWhy, Wanting,
};
use crate::report::sweep::{Measurement, SloVerdict, Verdict};
use crate::stats::exceedance::{self, Clusters, Decision};
use crate::stats::pooled;

/// A run as a step's verdict reads it: its report, and its own verdict against the
/// objectives (a sweep keeps it beside the report, a `--repeat` run inside it).
pub trait StepRun {
    /// The run's report.
    fn report(&self) -> &TestReport;
    /// Its own verdict against the objectives, when it was judged.
    fn own_verdict(&self) -> Option<&SloVerdict>;
}

impl StepRun for Measurement {
    fn report(&self) -> &TestReport {
        &self.report
    }

    fn own_verdict(&self) -> Option<&SloVerdict> {
        self.slo.as_ref()
    }
}

impl StepRun for TestReport {
    fn report(&self) -> &TestReport {
        self
    }

    fn own_verdict(&self) -> Option<&SloVerdict> {
        self.slo.as_ref()
    }
}

/// The verdict of all the runs of one step, one `--repeat` or one run (see the module
/// doc), counting `clusters` as the clusters: [`Clusters::Runs`] for a step and repeats,
/// [`Clusters::Windows`] for a single run.
pub fn judge_step<R: StepRun>(group: &[&R], slos: &[Slo], clusters: Clusters) -> StepVerdict {
    let sends: Vec<Sends> = group.iter().map(|m| sends(m.report())).collect();
    // The visits: runs that kept their schedule and whose failed checks, if any, can only
    // have made their response times higher than the server's (see [`crate::judge::counted::PESSIMISTIC`]).
    let visits: Vec<&TestReport> = group
        .iter()
        .map(|m| m.report())
        .filter(|r| left_out_why(r).is_none())
        .collect();
    let invalid = group.len() - visits.len();
    let lagging = visits.iter().filter(|r| generator_behind(r)).count();
    // Runs left out, but not for the server's doing: a frozen or lost server leaves runs
    // out too, and that limits nothing of the generator's.
    let behind = group
        .iter()
        .filter(|m| left_out_why(m.report()).is_some() && !server_named(m.report()))
        .count();
    let checks: Vec<StepCheck> = slos
        .iter()
        .filter_map(|slo| step_check(&visits, slo, clusters))
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
            || behind * 2 > group.len();
    let verdict = if !sends.is_empty() && sends.iter().all(|s| *s == Sends::Overloaded) {
        Verdict::Fail
    } else if generator_limited {
        Verdict::Uncertain
    } else {
        measured
    };
    let short_runs = sends.iter().filter(|s| **s != Sends::Kept).count();
    let why = if verdict == Verdict::Fail && measured != Verdict::Fail {
        StepWhy::NoRunCarried {
            short: short_runs,
            runs: group.len(),
            saturation: SATURATION_FRACTION,
        }
    } else if generator_limited {
        StepWhy::GeneratorLimited {
            behind: (behind + lagging).min(group.len()),
            runs: group.len(),
        }
    } else if visits.is_empty() {
        StepWhy::NoRunCounted {
            invalid,
            runs: group.len(),
        }
    } else {
        StepWhy::Objectives(
            checks
                .iter()
                .zip(slos)
                .map(|(c, slo)| reason(c, slo, clusters))
                .collect(),
        )
    };
    StepVerdict {
        verdict,
        met_runs: group
            .iter()
            .filter(|m| m.own_verdict().is_some_and(|v| v.met))
            .count(),
        short_runs,
        invalid_runs: invalid,
        generator_limited,
        checks,
        why,
    }
}

/// Whether `report`'s generator fell behind: its lag or CPU check failed, and its tail
/// (the bottleneck) is not the server's, an outage's or the client queue's: a generator
/// whose lateness moved a median while the server's stalls carried the tail did not
/// limit what the run measured.
fn generator_behind(report: &TestReport) -> bool {
    let failed = report.checks.iter().any(|c| {
        c.verdict == crate::report::verdict::Verdict::Fail
            && matches!(c.name.as_str(), "schedule_lag" | "generator_cpu")
    });
    failed && !server_named(report)
}

/// Whether `report`'s bottleneck is the server's side: the server (its stalls, its
/// service time, a server that stopped answering) or an outage.
fn server_named(report: &TestReport) -> bool {
    use crate::report::Bottleneck;
    matches!(
        report.bottleneck.as_ref().map(|b| b.verdict),
        Some(Bottleneck::Server | Bottleneck::Outage)
    )
}

/// One objective over `visits`: the pooled percentile with its interval, and the decision
/// on the pooled exceedance (see [`crate::stats::pooled`]).
fn step_check(visits: &[&TestReport], slo: &Slo, clusters: Clusters) -> Option<StepCheck> {
    let quantile = slo.percentile / 100.0;
    let hists: Vec<_> = visits
        .iter()
        .filter_map(|r| r.response()?.histogram())
        .collect();
    let windows = windows_of(visits.iter().copied());
    let summary = pooled::percentile(&hists, &windows, quantile, clusters)?;
    let (decision, exceedance) = if windows.iter().all(|w| !w.is_empty()) {
        pooled::objective(&windows, quantile, slo.bound_ns, clusters)
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

/// One objective's decision: the share of replies over the bound with its bounds,
/// against the share the objective allows, the pooled percentile, and what an uncertain
/// one still wants.
fn reason(c: &StepCheck, slo: &Slo, clusters: Clusters) -> ObjectiveWhy {
    let windows = clusters == Clusters::Windows;
    let uncertain = c.verdict == Verdict::Uncertain;
    let wanting = c.exceedance.as_ref().and_then(|e| {
        if uncertain && !windows && e.visits < exceedance::FIRST_LOOK {
            Some(Wanting::DecisionRuns {
                have: e.visits,
                need: exceedance::FIRST_LOOK,
            })
        } else if uncertain
            && !windows
            && e.high <= e.limit
            && e.visits < exceedance::FIRST_PASS_LOOK
        {
            Some(Wanting::PassRuns {
                have: e.visits,
                need: exceedance::FIRST_PASS_LOOK,
            })
        } else if uncertain && e.over == 0 {
            Some(Wanting::Replies {
                need: exceedance::replies_needed(e.limit),
            })
        } else {
            None
        }
    });
    ObjectiveWhy {
        percentile: slo.percentile_label(),
        bound_ns: slo.bound_ns,
        value_ns: c.summary.value_ns,
        ci95_ns: c.summary.ci95_ns,
        runs: c.summary.runs,
        exceedance: c.exceedance,
        verdict: c.verdict,
        wanting,
    }
}
