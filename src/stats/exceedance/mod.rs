//! The one test of an objective `pQ <= T` over the visits at one rate, and the percentile
//! interval that is its inversion. Which visits to make, and what a verdict means for a
//! sweep, belong to the caller; the counts per window come from the caller too.
//!
//! `pQ <= T` holds exactly when E = P(response > T) <= 1 - Q (to the histograms'
//! resolution), so the test is on E, the fraction of replies slower than the bound, pooled
//! over every visit: no quantile of a quantile, and a visit that stalled weighs by its
//! replies. Replies are not independent: one host stall delays thousands, and the host's
//! weather changes between visits. So the visits are the clusters of a ratio estimator
//! (their spread counts the weather), and the same estimator over the windows inside the
//! visits is a floor, so that a few visits that agree by luck cannot look calm. The bound
//! is one-sided Student t with `visits - 1` degrees of freedom, and never tighter than
//! the Clopper-Pearson bound of the pooled counts, so that a few replies, none of them
//! slow, cannot pass.
//!
//! Exceedances come in bursts with a skewed, compound-Poisson sum: a short sample that
//! misses the rare long stall underestimates both E and its spread, and a t bound at its
//! nominal level passes a boundary case far more often than it says. The level per look,
//! [`ALPHA_PER_LOOK`], is therefore set by simulating bursty host stalls with weather
//! between visits (the `calibration` test beside this file), not by the nominal level.
//! The decision is sequential over at most three pre-set [`LOOKS`], and a decision between
//! looks rests on the last look reached, so calling [`decide`] after every visit looks no
//! more often than the calibration did. The interval and the pooled percentile rest on
//! the same visits as the decision, so that the three always agree.

use statrs::distribution::{Beta, ContinuousCDF, StudentsT};

use super::confidence::Batch;

#[cfg(test)]
mod calibration;
#[cfg(test)]
mod tests;

/// Replies in one window, and how many of them were slower than the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Window {
    /// Replies in the window.
    pub replies: u64,
    /// Of them, slower than the bound (counted as at most `replies`).
    pub over: u64,
}

/// The pooled estimate over visits: E, its standard error and one-sided bounds at the
/// level of one look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pooled {
    /// Replies over the visits counted.
    pub replies: u64,
    /// Of them, slower than the bound.
    pub over: u64,
    /// Visits counted: those with a reply.
    pub visits: usize,
    /// E, `over / replies`.
    pub fraction: f64,
    /// The standard error of E: the larger of the spread between visits and between
    /// windows; infinite with one visit, which says nothing of the weather between visits.
    pub se: f64,
    /// One-sided lower bound of E at [`ALPHA_PER_LOOK`].
    pub low: f64,
    /// One-sided upper bound of E at [`ALPHA_PER_LOOK`].
    pub high: f64,
}

/// What the visits say about an objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// E's upper bound is at or below the limit: the objective holds.
    Holds,
    /// E's lower bound is above the limit: the objective is broken.
    Broken,
    /// Neither, or too few visits to decide yet.
    Undecided,
}

/// Visits at which a decision may be taken (pre-set looks); a decision between looks uses
/// the last look reached.
pub const LOOKS: [usize; 3] = [4, 8, 16];

/// One-sided error per look, far below the 5% a decision may get wrong: bursty stalls make
/// a nominal bound pass a boundary E several times as often as it says. Set by the
/// calibration test: a boundary E passes at most 5% of the time at the [`LOOKS`] under
/// host weather of CV 0.3 (10% at 0.6), and an E of 0.6 of the limit passes 80% of the
/// time by the last look.
pub const ALPHA_PER_LOOK: f64 = 0.0055;

/// The pooled estimate of E over `visits` (each a list of windows), with its bounds at
/// [`ALPHA_PER_LOOK`]; `None` with no replies. Every visit given counts (see [`decide`]
/// for the looks); a visit or window without replies counts for nothing.
pub fn pool(visits: &[Vec<Window>]) -> Option<Pooled> {
    pool_at(visits, ALPHA_PER_LOOK)
}

/// The decision on E <= `limit` (`limit` = 1 - Q, e.g. 0.01 for p99), with the pooled
/// estimate it rests on: that of the visits up to the last look reached (all of them
/// before the first look, when the decision is always [`Decision::Undecided`]).
pub fn decide(visits: &[Vec<Window>], limit: f64) -> (Decision, Option<Pooled>) {
    decide_with(visits, limit, &LOOKS, ALPHA_PER_LOOK)
}

/// [`decide`] with other looks and level: what the calibration tries.
fn decide_with(
    visits: &[Vec<Window>],
    limit: f64,
    looks: &[usize],
    alpha: f64,
) -> (Decision, Option<Pooled>) {
    let visits = at_last_look(visits, looks, |v| v.iter().any(|w| w.replies > 0));
    let pooled = pool_at(visits, alpha);
    let decision = match pooled {
        Some(p) if looks.first().is_some_and(|&first| p.visits >= first) => verdict(&p, limit),
        _ => Decision::Undecided,
    };
    (decision, pooled)
}

/// The next look's visit count after `visits` visits; `None` once at or past the last
/// look, the cap.
pub fn next_look(visits: usize) -> Option<usize> {
    LOOKS.iter().copied().find(|&look| look > visits)
}

/// Visits a decision at `visits` visits rests on: the last look reached, or all of them
/// before the first.
pub fn counted(visits: usize) -> usize {
    counted_with(&LOOKS, visits)
}

/// [`counted`] with other looks.
fn counted_with(looks: &[usize], visits: usize) -> usize {
    looks
        .iter()
        .rev()
        .copied()
        .find(|&look| look <= visits)
        .unwrap_or(visits)
}

/// Replies a pass needs when none is slower than the bound: with fewer, the
/// Clopper-Pearson bound at [`ALPHA_PER_LOOK`] stays above `limit` whatever the visits
/// say. `u64::MAX` for a `limit` at or below 0.
pub fn replies_needed(limit: f64) -> u64 {
    // NaN lands here too: no number of replies passes it.
    if limit.is_nan() || limit <= 0.0 {
        return u64::MAX;
    }
    if limit >= 1.0 {
        return 1;
    }
    // The closed form, then a step either way so that the count agrees exactly with the
    // bound the test computes, rounding and all.
    let estimate = (ALPHA_PER_LOOK.ln() / (-limit).ln_1p()).ceil();
    let mut replies = if estimate.is_finite() && estimate < u64::MAX as f64 {
        (estimate as u64).max(1)
    } else {
        return u64::MAX;
    };
    while replies > 1 && upper_clopper_pearson(0, replies - 1, ALPHA_PER_LOOK) <= limit {
        replies -= 1;
    }
    while upper_clopper_pearson(0, replies, ALPHA_PER_LOOK) > limit {
        replies += 1;
    }
    replies
}

/// The interval of the Q-quantile over visits of coarse batches (each visit a list of
/// windows): `(low, high)` in ns, the inversion of [`decide`]'s test over the same visits.
/// `high` is the smallest bucket value at which the objective `pQ <= high` holds, `None`
/// when none does; `low` the largest at which it is broken, or 0. Shown at any number of
/// visits (ignoring the first look's minimum), at the level of one look; `None` without a
/// reply.
pub fn quantile_interval(visits: &[Vec<Batch>], quantile: f64) -> Option<(u64, Option<u64>)> {
    let visits = at_last_look(visits, &LOOKS, |v| v.iter().any(|b| !b.is_empty()));
    let limit = 1.0 - quantile;
    let mut values: Vec<u64> = visits.iter().flatten().flat_map(Batch::values).collect();
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    values.dedup();
    let mut windows: Vec<Vec<Window>> = visits
        .iter()
        .map(|v| vec![Window::default(); v.len()])
        .collect();
    // E falls as the bound rises, and neither end can lie where E is on the wrong side of
    // the limit (the bounds bracket E), so each scan skips those values for the price of
    // the counts alone.
    let mut at = |value_ns: u64, wanted: Decision| {
        let fraction = windows_over(visits, value_ns, &mut windows);
        let possible = match wanted {
            Decision::Holds => fraction <= limit,
            _ => fraction > limit,
        };
        possible && pool(&windows).is_some_and(|p| verdict(&p, limit) == wanted)
    };
    // Binary searches: the share over a value falls as the value rises, so `Holds` turns
    // from false to true once along the values and `Broken` from true to false. A scan of
    // every value costs an inverse beta (Clopper-Pearson) per bucket, seconds per step
    // once a sweep holds a few hundred thousand replies at a rate.
    let first_holding = values.partition_point(|&v| !at(v, Decision::Holds));
    let high = values.get(first_holding).copied();
    let past_broken = values.partition_point(|&v| at(v, Decision::Broken));
    let low = past_broken.checked_sub(1).map_or(0, |i| values[i]);
    Some((low, high))
}

/// The Q-quantile of every window of the visits [`quantile_interval`] counts, added
/// together (to a bucket's resolution); `None` without a reply.
pub fn pooled_quantile(visits: &[Vec<Batch>], quantile: f64) -> Option<u64> {
    let visits = at_last_look(visits, &LOOKS, |v| v.iter().any(|b| !b.is_empty()));
    let mut total = Batch::default();
    for batch in visits.iter().flatten() {
        total.add(batch);
    }
    total.quantile(quantile)
}

/// The windows of `visits` as counts over `value_ns`, written into `windows` (shaped like
/// `visits`); returns the pooled fraction over it (1 without a reply).
fn windows_over(visits: &[Vec<Batch>], value_ns: u64, windows: &mut [Vec<Window>]) -> f64 {
    let (mut replies, mut over) = (0u64, 0u64);
    for (batches, into) in visits.iter().zip(windows.iter_mut()) {
        for (batch, window) in batches.iter().zip(into.iter_mut()) {
            let n = batch.len();
            *window = Window {
                replies: n,
                over: n.saturating_sub(batch.at_most(value_ns)),
            };
            replies = replies.saturating_add(n);
            over = over.saturating_add(window.over);
        }
    }
    if replies == 0 {
        1.0
    } else {
        over as f64 / replies as f64
    }
}

/// The visits up to the last look reached: the shortest prefix holding [`counted`] of the
/// visits that `has_replies`, so that a visit without replies neither counts nor ends it.
fn at_last_look<'a, T>(
    visits: &'a [T],
    looks: &[usize],
    has_replies: impl Fn(&T) -> bool,
) -> &'a [T] {
    let wanted = counted_with(looks, visits.iter().filter(|v| has_replies(v)).count());
    let mut seen = 0;
    for (i, visit) in visits.iter().enumerate() {
        if seen == wanted {
            return &visits[..i];
        }
        seen += usize::from(has_replies(visit));
    }
    visits
}

/// The decision of the bounds alone, whatever the number of visits.
fn verdict(pooled: &Pooled, limit: f64) -> Decision {
    if pooled.high <= limit {
        Decision::Holds
    } else if pooled.low > limit {
        Decision::Broken
    } else {
        Decision::Undecided
    }
}

/// [`pool`] with one-sided bounds at `alpha`.
fn pool_at(visits: &[Vec<Window>], alpha: f64) -> Option<Pooled> {
    // A window claiming more slow replies than replies is read as all slow, and sums
    // saturate: a hostile or corrupt file gives a wrong number, never a panic.
    let counts = |w: &Window| (w.replies, w.over.min(w.replies));
    let add = |a: (u64, u64), b: (u64, u64)| (a.0.saturating_add(b.0), a.1.saturating_add(b.1));
    let visit_counts = |v: &Vec<Window>| v.iter().map(counts).fold((0, 0), add);
    let (replies, over) = visits.iter().map(visit_counts).fold((0, 0), add);
    if replies == 0 {
        return None;
    }
    let fraction = over as f64 / replies as f64;
    let total = replies as f64;
    let residual = |(n, k): (u64, u64)| (k as f64 - fraction * n as f64).powi(2);
    // The ratio estimator's variance over `groups` clusters with these squared residuals.
    let spread = |groups: usize, squares: f64| {
        groups as f64 / (groups - 1) as f64 * squares / (total * total)
    };
    let counted = visits.iter().filter(|v| visit_counts(v).0 > 0).count();
    let windows = visits.iter().flatten().filter(|w| w.replies > 0).count();
    let between_visits = if counted >= 2 {
        spread(counted, visits.iter().map(visit_counts).map(residual).sum())
    } else {
        f64::INFINITY
    };
    let between_windows = if windows >= 2 {
        spread(
            windows,
            visits.iter().flatten().map(counts).map(residual).sum(),
        )
    } else {
        0.0
    };
    let se = between_visits.max(between_windows).sqrt();
    let (mut low, mut high) = if counted >= 2 {
        let t = t_quantile(counted - 1, alpha);
        (
            (fraction - t * se).clamp(0.0, 1.0),
            (fraction + t * se).clamp(0.0, 1.0),
        )
    } else {
        (0.0, 1.0)
    };
    high = high.max(upper_clopper_pearson(over, replies, alpha));
    low = low.min(lower_clopper_pearson(over, replies, alpha));
    Some(Pooled {
        replies,
        over,
        visits: counted,
        fraction,
        se,
        low,
        high,
    })
}

/// The one-sided `1 - alpha` point of Student's t with `freedom` degrees of freedom.
fn t_quantile(freedom: usize, alpha: f64) -> f64 {
    StudentsT::new(0.0, 1.0, freedom as f64).map_or(f64::INFINITY, |t| t.inverse_cdf(1.0 - alpha))
}

/// The one-sided `1 - alpha` Clopper-Pearson upper bound of a fraction with `over` of
/// `replies` (1 without replies).
fn upper_clopper_pearson(over: u64, replies: u64, alpha: f64) -> f64 {
    if over >= replies {
        return 1.0;
    }
    if over == 0 {
        // 1 - alpha^(1/n), written so that it keeps its digits for large n.
        return -(alpha.ln() / replies as f64).exp_m1();
    }
    Beta::new(over as f64 + 1.0, (replies - over) as f64)
        .map_or(1.0, |b| b.inverse_cdf(1.0 - alpha))
}

/// The one-sided `1 - alpha` Clopper-Pearson lower bound of a fraction with `over` of
/// `replies` (0 without any over).
fn lower_clopper_pearson(over: u64, replies: u64, alpha: f64) -> f64 {
    if over == 0 || replies == 0 {
        return 0.0;
    }
    if over >= replies {
        return (alpha.ln() / replies as f64).exp();
    }
    Beta::new(over as f64, (replies - over + 1) as f64).map_or(0.0, |b| b.inverse_cdf(alpha))
}
