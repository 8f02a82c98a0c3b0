//! The one test of an objective `pQ <= T` over the visits at one rate, and the percentile
//! interval that is its inversion ([`quantile_interval`]). Which visits to make, and what a
//! verdict means for a sweep, belong to the caller; the counts per window come from the
//! caller too.
//!
//! `pQ <= T` holds exactly when E = P(response > T) <= 1 - Q (to the histograms'
//! resolution), so the test is on E, the fraction of replies slower than the bound, pooled
//! over every visit: no quantile of a quantile, and a visit that stalled weighs by its
//! replies. Replies are not independent: one host stall delays thousands, and the host's
//! weather changes between visits. So the visits are the clusters of a ratio estimator
//! (their spread counts the weather), and the same estimator over the windows inside the
//! visits is a floor, so that a few visits that agree by luck cannot look calm. The bounds
//! are one-sided Student t with `visits - 1` degrees of freedom, and never tighter than the
//! Clopper-Pearson bounds of the pooled counts, so that a few replies, none of them slow,
//! cannot pass.
//!
//! Pass and fail each have their own level, because their errors cost differently and
//! behave differently under bursts ([`LOOKS`]). Exceedances come in bursts with a skewed,
//! compound-Poisson sum: a short sample that misses a rare long stall underestimates both E
//! and its spread, so a pass at a bound's nominal level is wrong far more often than it
//! says, and a pass before a rare stall is likely to have been seen is wrong whatever its
//! level. A pass therefore waits for the 16th visit (a stall in one visit of ten has then
//! been seen 81% of the time) and is taken at a level set by simulation, far below its
//! nominal 5%. A fail is the other way round: the same skew makes the t lower bound
//! cautious, so it has a level of its own, looks from the 4th visit, and its bound is also
//! never under the order-statistic bound of the median visit's share (the sign test: a rate
//! every visit of which is over the limit fails, however far apart the visits are). The
//! levels are those of the `calibration` test beside this file, which simulates bursty
//! hosts, rare large server stalls and mixed weather; `bench/README.md` has its table.
//!
//! The decision is sequential over pre-set [`LOOKS`], and a decision between looks rests on
//! the last look reached, so calling [`decide`] after every visit looks no more often than
//! the calibration did. The interval and the pooled percentile rest on the same visits as
//! the decision, so that the three always agree.

use statrs::distribution::{Beta, Binomial, ContinuousCDF, DiscreteCDF, StudentsT};

mod clusters;
mod interval;

pub use clusters::{Clusters, WINDOW_LOOKS, WINDOW_RULE, decide_by};
pub use interval::{pooled_quantile, quantile_interval, quantile_interval_by};

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
/// levels of the look the visits reach.
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
    /// One-sided lower bound of E at the look's fail level: the t bound, raised to the
    /// median visit's order-statistic bound, never above the Clopper-Pearson bound.
    pub low: f64,
    /// One-sided upper bound of E at the look's pass level (the first pass look's before
    /// it), never under the Clopper-Pearson bound.
    pub high: f64,
}

/// What the visits say about an objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// E's upper bound is at or below the limit at a look that may pass: the objective
    /// holds.
    Holds,
    /// E's lower bound is above the limit: the objective is broken.
    Broken,
    /// Neither, or too few visits to decide yet.
    Undecided,
}

/// One pre-set look: the visits at which a decision may be taken, and the one-sided levels
/// of the two bounds there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    /// Visits counted at this look.
    pub visits: usize,
    /// The level of the upper bound a pass needs here; `None` where a pass waits for a
    /// later look, unless one more visit wholly over the bound could not break the
    /// objective (see [`decide`]).
    pub pass: Option<f64>,
    /// The level of the lower bound a fail needs here.
    pub fail: f64,
}

/// A decision rule: its looks, and whether its lower bound takes the median visit's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// The looks, by increasing visits; at least one has a pass level.
    pub looks: &'static [Look],
    /// Whether the lower bound is never under the order-statistic bound of the median
    /// visit's share (a sign test on the visits).
    pub median_bound: bool,
}

/// One-sided error of a fail per look: a false fail costs a narrower band a few percent of
/// the time, a false pass a capacity that does not hold. With it, a rate at the bound fails
/// 2-3% of the time over the five looks, and one at twice the bound fails after 6-11 visits
/// on average.
pub const FAIL_ALPHA: f64 = 0.025;

/// The looks of [`RULE`]: a fail may be taken from the 4th visit, a pass from the 16th, at
/// levels set by the calibration test: a rate at the bound passes at most 5% of the time on
/// the simulated hosts without rare large stalls, one at 0.6 of it passes 79-99% of the
/// time, and one every visit of which is over the bound fails within 8 visits.
pub const LOOKS: [Look; 5] = [
    Look {
        visits: 4,
        pass: None,
        fail: FAIL_ALPHA,
    },
    Look {
        visits: 8,
        pass: None,
        fail: FAIL_ALPHA,
    },
    Look {
        visits: 12,
        pass: None,
        fail: FAIL_ALPHA,
    },
    Look {
        visits: 16,
        pass: Some(0.0005),
        fail: FAIL_ALPHA,
    },
    Look {
        visits: 24,
        pass: Some(0.0025),
        fail: FAIL_ALPHA,
    },
];

/// The rule [`decide`] applies.
pub const RULE: Rule = Rule {
    looks: &LOOKS,
    median_bound: true,
};

/// Visits before which nothing is decided.
pub const FIRST_LOOK: usize = LOOKS[0].visits;
/// Visits before which a pass needs more than its bound: that one more visit wholly over
/// the bound would leave E under the limit (never, for a p99 on a few dozen visits).
pub const FIRST_PASS_LOOK: usize = LOOKS[3].visits;
/// The last look: the cap, after which a rate stays undecided.
pub const LAST_LOOK: usize = LOOKS[LOOKS.len() - 1].visits;

/// The pooled estimate of E over `visits` (each a list of windows), with its bounds at the
/// levels of the look they reach; `None` with no replies. Every visit given counts (see
/// [`decide`] for the looks); a visit or window without replies counts for nothing.
pub fn pool(visits: &[Vec<Window>]) -> Option<Pooled> {
    pool_with(visits, &RULE)
}

/// The decision on E <= `limit` (`limit` = 1 - Q, e.g. 0.01 for p99), with the pooled
/// estimate it rests on: that of the visits up to the last look reached (all of them before
/// the first look, when the decision is always [`Decision::Undecided`]). A pass at a look
/// without a pass level (before [`FIRST_PASS_LOOK`]) needs the upper bound at the first
/// pass level and E under the limit with one more visit, of the mean size, wholly over the
/// bound: so a p50 objective far from its bound passes on a few visits, and a p99 waits.
pub fn decide(visits: &[Vec<Window>], limit: f64) -> (Decision, Option<Pooled>) {
    decide_with(visits, limit, &RULE)
}

/// [`decide`] under another rule: what the calibration compares.
fn decide_with(visits: &[Vec<Window>], limit: f64, rule: &Rule) -> (Decision, Option<Pooled>) {
    let visits = at_last_look(visits, rule, |v| v.iter().any(|w| w.replies > 0));
    let pooled = pool_with(visits, rule);
    let decision = match (pooled, look_reached(rule, pooled.map_or(0, |p| p.visits))) {
        (Some(p), Some(look)) => verdict(&p, limit, look.pass.is_some()),
        _ => Decision::Undecided,
    };
    (decision, pooled)
}

/// The next look's visit count after `visits` visits; `None` once at or past the last
/// look, the cap.
pub fn next_look(visits: usize) -> Option<usize> {
    LOOKS.iter().map(|l| l.visits).find(|&look| look > visits)
}

/// Visits a decision at `visits` visits rests on: the last look reached, or all of them
/// before the first.
pub fn counted(visits: usize) -> usize {
    counted_with(&RULE, visits)
}

/// [`counted`] under `rule`.
fn counted_with(rule: &Rule, visits: usize) -> usize {
    look_reached(rule, visits).map_or(visits, |l| l.visits)
}

/// The last look of `rule` at or under `visits`.
fn look_reached(rule: &Rule, visits: usize) -> Option<&'static Look> {
    rule.looks.iter().rev().find(|l| l.visits <= visits)
}

/// The levels `(pass, fail)` of the bounds at `visits` visits under `rule`: those of the
/// look reached (the first look's before it), the pass level of the first look that has
/// one where the look reached has none.
fn levels(rule: &Rule, visits: usize) -> (f64, f64) {
    let first_pass = rule.looks.iter().find_map(|l| l.pass).unwrap_or(0.0);
    match look_reached(rule, visits).or(rule.looks.first()) {
        Some(look) => (look.pass.unwrap_or(first_pass), look.fail),
        None => (first_pass, FAIL_ALPHA),
    }
}

/// Replies a pass needs when none is slower than the bound: with fewer, the
/// Clopper-Pearson bound at the first pass level stays above `limit` whatever the visits
/// say. `u64::MAX` for a `limit` at or below 0.
pub fn replies_needed(limit: f64) -> u64 {
    // NaN lands here too: no number of replies passes it.
    if limit.is_nan() || limit <= 0.0 {
        return u64::MAX;
    }
    if limit >= 1.0 {
        return 1;
    }
    let alpha = levels(&RULE, FIRST_PASS_LOOK).0;
    // The closed form, then a step either way so that the count agrees exactly with the
    // bound the test computes, rounding and all.
    let estimate = (alpha.ln() / (-limit).ln_1p()).ceil();
    let mut replies = if estimate.is_finite() && estimate < u64::MAX as f64 {
        (estimate as u64).max(1)
    } else {
        return u64::MAX;
    };
    while replies > 1 && upper_clopper_pearson(0, replies - 1, alpha) <= limit {
        replies -= 1;
    }
    while upper_clopper_pearson(0, replies, alpha) > limit {
        replies += 1;
    }
    replies
}

/// The visits up to the last look reached: the shortest prefix holding [`counted`] of the
/// visits that `has_replies`, so that a visit without replies neither counts nor ends it.
fn at_last_look<'a, T>(visits: &'a [T], rule: &Rule, has_replies: impl Fn(&T) -> bool) -> &'a [T] {
    let wanted = counted_with(rule, visits.iter().filter(|v| has_replies(v)).count());
    let mut seen = 0;
    for (i, visit) in visits.iter().enumerate() {
        if seen == wanted {
            return &visits[..i];
        }
        seen += usize::from(has_replies(visit));
    }
    visits
}

/// The decision of the bounds, whatever the number of visits: a pass needs the upper bound
/// under the limit and, where the look has no pass level (`pass_look` false), E under it
/// with one more visit wholly over the bound.
fn verdict(pooled: &Pooled, limit: f64, pass_look: bool) -> Decision {
    let survives_one_more = || {
        let visit = pooled.replies as f64 / pooled.visits.max(1) as f64;
        (pooled.over as f64 + visit) / (pooled.replies as f64 + visit) <= limit
    };
    if pooled.high <= limit && (pass_look || survives_one_more()) {
        Decision::Holds
    } else if pooled.low > limit {
        Decision::Broken
    } else {
        Decision::Undecided
    }
}

/// [`pool`] under `rule`, at the levels of the look the visits reach.
fn pool_with(visits: &[Vec<Window>], rule: &Rule) -> Option<Pooled> {
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
    let shares: Vec<f64> = visits
        .iter()
        .map(visit_counts)
        .filter(|&(n, _)| n > 0)
        .map(|(n, k)| k as f64 / n as f64)
        .collect();
    let counted = shares.len();
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
    let (pass_alpha, fail_alpha) = levels(rule, counted);
    let (mut low, mut high) = if counted >= 2 {
        let t = |alpha| t_quantile(counted - 1, alpha) * se;
        (
            (fraction - t(fail_alpha)).clamp(0.0, 1.0),
            (fraction + t(pass_alpha)).clamp(0.0, 1.0),
        )
    } else {
        (0.0, 1.0)
    };
    if rule.median_bound {
        low = low.max(median_lower_bound(shares, fail_alpha));
    }
    high = high.max(upper_clopper_pearson(over, replies, pass_alpha));
    low = low.min(lower_clopper_pearson(over, replies, fail_alpha));
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

/// The one-sided `1 - alpha` lower bound of the median of `shares` from their order
/// statistics (distribution-free: the r-th smallest lies above the median with probability
/// P(Binomial(n, 1/2) < r)); 0 when even the smallest cannot bound it. A visit's share of
/// a bursty tail is skewed to the right, so its median lies under the pooled E: the bound
/// is one of E too, a cautious one. It exceeds a limit exactly when a sign test finds the
/// visits over the limit more often than chance.
fn median_lower_bound(mut shares: Vec<f64>, alpha: f64) -> f64 {
    let Ok(binomial) = Binomial::new(0.5, shares.len() as u64) else {
        return 0.0;
    };
    // The rank: how many of 0, 1, ... have P(Binomial <= j) <= alpha, found by bisection
    // (the CDF rises with j), so a file claiming a million visits costs a few dozen CDFs.
    let (mut rank, mut past) = (0u64, shares.len() as u64);
    while rank < past {
        let middle = rank + (past - rank) / 2;
        if binomial.cdf(middle) <= alpha {
            rank = middle + 1;
        } else {
            past = middle;
        }
    }
    if rank == 0 {
        return 0.0;
    }
    shares.sort_by(f64::total_cmp);
    shares[rank as usize - 1]
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
