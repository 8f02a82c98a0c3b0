//! A sweep's SLO result said whole: the sentence the sweep prints and `sweep.json` keeps
//! (`summary`), and what `--budget` cut short (`budget_ended`), both from the result's
//! typed fields, which `sweep.json` keeps too: a sweep read back says them again word
//! for word.

use crate::judge::capacity::Finding;
use crate::report::sweep::{BudgetEnded, Limit, SearchSpan, SloResult, SweepReport};

use super::{Estimated, speed, summary};

/// The sweep's result in one sentence; `None` without an SLO result, or for a result
/// read back from an older `sweep.json`, which kept the sentence but not its
/// [`SearchSpan`] (its reader has the sentence as saved).
pub fn sentence(sweep: &SweepReport) -> Option<String> {
    let slo = sweep.slo.as_ref()?;
    Some(slo_said(slo, slo.span.as_ref()?))
}

/// The sweep's result in one sentence, or else `saved`: the sentence an older
/// `sweep.json` kept.
pub fn said(sweep: &SweepReport, saved: Option<&str>) -> Option<String> {
    sentence(sweep).or_else(|| saved.map(str::to_owned))
}

/// `slo` in one sentence, with `span` for what its own fields do not keep.
fn slo_said(slo: &SloResult, span: &SearchSpan) -> String {
    let finding = Finding {
        capacity: slo.capacity_per_sec,
        band: slo
            .capacity_band_per_sec
            .unwrap_or((slo.capacity_per_sec.unwrap_or(0.0), None)),
        uncertain: slo.uncertain_per_sec.clone(),
        uncertain_runs: span.uncertain_runs.clone(),
        limited_by: slo.limited_by.unwrap_or(Limit::Noise),
        first_failing: slo.first_failing_per_sec,
        low_load_failing: slo.low_load_failing_per_sec.clone(),
        at_capacity: slo.capacity_exceedance,
        at_capacity_objective: span.capacity_objective,
        lowest: span.lowest_per_sec,
        highest: span.highest_per_sec,
    };
    let objectives = slo
        .slos
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join(" and ");
    let mut text = summary(
        &objectives,
        &finding,
        slo.confirmed,
        &slo.landmarks,
        (slo.visits, slo.visit_secs),
        Estimated {
            slos: &slo.slos,
            estimates: &slo.estimates,
            disturbed: slo.disturbed.as_ref(),
        },
    );
    if let Some(ended) = &slo.budget {
        text = format!("{text}; {}", budget_ended(ended));
    }
    if let Some(capacity_speed) = &slo.capacity_speed {
        text = format!("{text}; {}", speed(capacity_speed));
    }
    text
}

/// What more time would have bought when `--budget`, or the bound a sweep keeps without
/// one, ended the search: the runs the rate being decided needed to reach its next look.
pub fn budget_ended(ended: &BudgetEnded) -> String {
    let secs = ended.budget_secs;
    let budget = if ended.implied {
        format!("the sweep's time bound ({secs:.0} s, three times its plan; --budget sets it)")
    } else {
        format!("--budget {secs:.0} s")
    };
    let Some(d) = ended.deciding else {
        return format!(
            "{budget} ended before the capacity search: a longer budget would search it"
        );
    };
    let what = if d.confirming {
        "the confirmation of"
    } else {
        "the decision at"
    };
    format!(
        "{budget} ended during {what} {:.0} req/s, on {} runs: about {} more runs ({:.0} s) would reach its next look",
        d.rate_per_sec, d.runs, d.more_runs, d.more_secs
    )
}
