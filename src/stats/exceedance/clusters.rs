//! The cluster unit of the one exceedance test. A sweep's step and `--repeat` count each
//! run as a cluster, so the host's weather between runs widens the bounds, and decide at
//! the sequential looks of [`super::RULE`] (a search measures more runs until a look
//! decides). A single run has no runs to spread over: its response windows are the
//! clusters, one fixed sample decided once, at the levels of [`WINDOW_RULE`]. Either way
//! it is the same statistic (the share of replies over the bound, pooled), the same bounds
//! and the same inversion into a percentile interval, so a single run, a repeat and a step
//! cannot answer one question by two rules.

use super::{
    Decision, FAIL_ALPHA, LOOKS, Look, Pooled, Rule, Window, decide, levels, lower_clopper_pearson,
    pool_with, upper_clopper_pearson, verdict,
};

/// What the exceedance test counts as its clusters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clusters {
    /// Each run: a sweep's step and `--repeat`, decided at the sequential [`LOOKS`].
    Runs,
    /// Each response window of the runs, pooled as one fixed sample (a single run).
    Windows,
}

/// The one look of [`WINDOW_RULE`]: from 4 windows with replies, a pass at the level of a
/// sweep's first pass look (the stricter of its two: windows of one run are correlated, a
/// stall spanning several, so their spread understates the run's), a fail at its level.
pub const WINDOW_LOOKS: [Look; 1] = [Look {
    visits: 4,
    pass: LOOKS[3].pass,
    fail: FAIL_ALPHA,
}];

/// The rule of a single run's windows: one look, the median window's sign test as a floor
/// of the lower bound as for runs.
pub const WINDOW_RULE: Rule = Rule {
    looks: &WINDOW_LOOKS,
    median_bound: true,
};

impl Clusters {
    /// `visits` (one list per run) regrouped as this unit's clusters: unchanged for runs,
    /// one cluster per window with replies for windows.
    pub fn regroup<T: Clone>(
        self,
        visits: &[Vec<T>],
        has_replies: impl Fn(&T) -> bool,
    ) -> Vec<Vec<T>> {
        match self {
            Clusters::Runs => visits.to_vec(),
            Clusters::Windows => visits
                .iter()
                .flatten()
                .filter(|w| has_replies(w))
                .map(|w| vec![w.clone()])
                .collect(),
        }
    }
}

/// The decision on E <= `limit` over `visits` (one list of windows per run), counting
/// `clusters` as the clusters: [`decide`] for runs; for windows, every window counts and
/// the decision is taken once (`pool_windows`).
pub fn decide_by(
    clusters: Clusters,
    visits: &[Vec<Window>],
    limit: f64,
) -> (Decision, Option<Pooled>) {
    match clusters {
        Clusters::Runs => decide(visits, limit),
        Clusters::Windows => {
            let pooled = pool_windows(&clusters.regroup(visits, |w| w.replies > 0));
            let decision = pooled.map_or(Decision::Undecided, |p| verdict(&p, limit, true));
            (decision, pooled)
        }
    }
}

/// The pooled estimate over `windows` (one window each), at the levels of
/// [`WINDOW_RULE`]. With fewer windows than its look (a run under 200 ms), whose spread
/// cannot be measured, the bounds are the Clopper-Pearson bounds of the pooled counts
/// alone, the replies taken as independent: all such a run has to say.
pub(super) fn pool_windows(windows: &[Vec<Window>]) -> Option<Pooled> {
    let mut pooled = pool_with(windows, &WINDOW_RULE)?;
    if pooled.visits < WINDOW_LOOKS[0].visits {
        let (pass, fail) = levels(&WINDOW_RULE, WINDOW_LOOKS[0].visits);
        pooled.low = lower_clopper_pearson(pooled.over, pooled.replies, fail);
        pooled.high = upper_clopper_pearson(pooled.over, pooled.replies, pass);
    }
    Some(pooled)
}
