//! The capacity at the objectives, read from a sweep's judged steps: the highest passing
//! rate under the lowest rate above a pass that failed; its band runs from there to that
//! failing rate (open when none failed), and rates inside the band were uncertain or not
//! measured. A rate under every pass that failed is not the capacity's concern: it is a
//! low-load tail (an idle core waking slowly on a virtual machine), reported on its own.
//! The landmarks beside it are [`super::landmarks`]'s, the estimate [`super::estimate`]'s,
//! the steps' verdicts [`super::slo`]'s.

use crate::report::Bottleneck;
pub use crate::report::sweep::Landmarks;
pub use crate::report::sweep::Limit;
use crate::report::sweep::{Exceedance, SearchSpan, StepSummary, Verdict};

/// One step's verdict, as the capacity is read from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Target rate, requests per second.
    pub rate: f64,
    /// Its verdict over every run there.
    pub verdict: Verdict,
    /// The bottleneck most of its runs named.
    pub bottleneck: Option<Bottleneck>,
    /// Most of its runs were left out as the generator's (see `judge::slo`).
    pub generator_limited: bool,
    /// The objective nearest to failing there: its pooled share over the bound.
    pub exceedance: Option<Exceedance>,
    /// Which objective that is, as an index into the objectives.
    pub nearest: Option<usize>,
}

/// The judged steps of `steps` as points, by rate.
pub fn points(steps: &[StepSummary]) -> Vec<Point> {
    let mut points: Vec<Point> = steps
        .iter()
        .filter_map(|s| {
            let slo = s.slo.as_ref()?;
            let nearest = slo
                .checks
                .iter()
                .enumerate()
                .filter_map(|(i, c)| Some((i, c.exceedance?)))
                .max_by(|a, b| (a.1.high / a.1.limit).total_cmp(&(b.1.high / b.1.limit)));
            Some(Point {
                rate: s.target_rate_per_sec,
                verdict: slo.verdict,
                bottleneck: s.bottleneck,
                generator_limited: slo.generator_limited,
                exceedance: nearest.map(|n| n.1),
                nearest: nearest.map(|n| n.0),
            })
        })
        .collect();
    points.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    points
}

/// The capacity read from the steps' verdicts.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The highest passing rate under the lowest failing rate above a pass; none when no
    /// rate passed.
    pub capacity: Option<f64>,
    /// `(capacity or 0, lowest failing rate above it)`; open above when none failed.
    pub band: (f64, Option<f64>),
    /// Uncertain rates inside the band, increasing.
    pub uncertain: Vec<f64>,
    /// The runs each of them was decided on (its counted visits), in the same order.
    pub uncertain_runs: Vec<usize>,
    /// What kept the band from being narrower.
    pub limited_by: Limit,
    /// The lowest failing rate above the capacity (the band's high end).
    pub first_failing: Option<f64>,
    /// Rates under every pass that failed: a tail at low load, not the capacity.
    pub low_load_failing: Vec<f64>,
    /// The share over the bound at the capacity, for the objective nearest to failing.
    pub at_capacity: Option<Exceedance>,
    /// Which objective that is, as an index into the objectives.
    pub at_capacity_objective: Option<usize>,
    /// The lowest rate measured.
    pub lowest: f64,
    /// The highest rate measured.
    pub highest: f64,
}

impl Finding {
    /// What the finding read beside what a sweep's SLO result keeps of it.
    pub fn span(&self) -> SearchSpan {
        SearchSpan {
            lowest_per_sec: self.lowest,
            highest_per_sec: self.highest,
            uncertain_runs: self.uncertain_runs.clone(),
            capacity_objective: self.at_capacity_objective,
        }
    }
}

/// The capacity, its band and what limited it, from `points` (any order); `None` when
/// nothing was measured. See the module doc for the rule.
pub fn capacity(points: &[Point]) -> Option<Finding> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    let (lowest, highest) = (sorted.first()?.rate, sorted.last()?.rate);
    let lowest_pass = sorted
        .iter()
        .find(|p| p.verdict == Verdict::Pass)
        .map(|p| p.rate);
    let above_a_pass = |p: &&Point| lowest_pass.is_none_or(|lp| p.rate > lp);
    let first_fail = sorted
        .iter()
        .filter(above_a_pass)
        .find(|p| p.verdict == Verdict::Fail)
        .copied();
    let low_load_failing: Vec<f64> = sorted
        .iter()
        .filter(|p| p.verdict == Verdict::Fail && lowest_pass.is_some_and(|lp| p.rate < lp))
        .map(|p| p.rate)
        .collect();
    let below_fail = |p: &&Point| first_fail.is_none_or(|f| p.rate < f.rate);
    let capacity_point = sorted
        .iter()
        .filter(below_fail)
        .filter(|p| p.verdict == Verdict::Pass)
        .max_by(|a, b| a.rate.total_cmp(&b.rate))
        .copied();
    let capacity = capacity_point.map(|p| p.rate);
    let low = capacity.unwrap_or(0.0);
    let inside: Vec<&Point> = sorted
        .iter()
        .filter(below_fail)
        .filter(|p| p.verdict == Verdict::Uncertain && p.rate > low)
        .collect();
    let generator = Limit::Bottleneck(Bottleneck::Generator);
    let limited_by = match first_fail {
        _ if !inside.is_empty() && inside.iter().all(|p| p.generator_limited) => generator,
        _ if !inside.is_empty() => Limit::Noise,
        Some(f) => Limit::of(f.bottleneck),
        None if sorted.last().is_some_and(|p| p.generator_limited) => generator,
        None => Limit::Rates,
    };
    Some(Finding {
        capacity,
        band: (low, first_fail.map(|f| f.rate)),
        uncertain: inside.iter().map(|p| p.rate).collect(),
        uncertain_runs: inside
            .iter()
            .map(|p| p.exceedance.map_or(0, |e| e.visits))
            .collect(),
        limited_by,
        first_failing: first_fail.map(|f| f.rate),
        low_load_failing,
        at_capacity: capacity_point.and_then(|p| p.exceedance),
        at_capacity_objective: capacity_point.and_then(|p| p.nearest),
        lowest,
        highest,
    })
}

/// The rate to try below every measured one when none passed: half the lowest (a whole
/// number of requests per second), so that a sweep whose rates all sat above the capacity
/// still ends with "at least X"; `None` once one passed, or under 2 req/s.
pub fn below_lowest(found: &Finding) -> Option<f64> {
    let half = (found.lowest / 2.0).floor();
    (found.capacity.is_none() && half >= 1.0).then_some(half)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::judge::fixtures::*;
    use Verdict::{Fail, Pass, Uncertain};

    #[test]
    fn the_capacity_is_the_highest_pass_under_the_first_failure_above_a_pass() {
        assert_eq!(capacity(&[]), None);
        // Clean: pass, pass, fail.
        let f = capacity(&[point(1.0, Pass), point(2.0, Pass), point(3.0, Fail)]).unwrap();
        assert_eq!((f.capacity, f.band), (Some(2.0), (2.0, Some(3.0))));
        assert_eq!(f.limited_by, Limit::Bottleneck(Bottleneck::None));
        assert!(f.uncertain.is_empty());
        // Noise: uncertain steps inside the band, and a pass above a failure counts not.
        let f = capacity(&[
            point(1.0, Pass),
            point(2.0, Uncertain),
            point(3.0, Pass),
            point(4.0, Uncertain),
            point(5.0, Fail),
            point(6.0, Pass),
        ])
        .unwrap();
        assert_eq!(f.capacity, Some(3.0));
        assert_eq!(f.band, (3.0, Some(5.0)));
        assert_eq!(f.uncertain, vec![4.0]);
        assert_eq!(f.limited_by, Limit::Noise);
        // The failing rate's bottleneck limits a band with no uncertain rate inside.
        let mut fail = point(3.0, Fail);
        fail.bottleneck = Some(Bottleneck::Server);
        let f = capacity(&[point(2.0, Pass), fail]).unwrap();
        assert_eq!(f.limited_by, Limit::Bottleneck(Bottleneck::Server));
        // Nothing failed: at least the highest pass, open above.
        let f = capacity(&[point(1.0, Pass), point(2.0, Pass)]).unwrap();
        assert_eq!(
            (f.capacity, f.band, f.limited_by),
            (Some(2.0), (2.0, None), Limit::Rates)
        );
        let f = capacity(&[point(1.0, Pass), point(2.0, Uncertain)]).unwrap();
        assert_eq!((f.band, f.limited_by), ((1.0, None), Limit::Noise));
        // The lowest failed under a pass: a low-load tail, not the capacity.
        let f = capacity(&[point(1.0, Fail), point(2.0, Pass), point(3.0, Fail)]).unwrap();
        assert_eq!((f.capacity, f.band), (Some(2.0), (2.0, Some(3.0))));
        assert_eq!(f.low_load_failing, vec![1.0]);
        // Only failures: below the lowest, from 0.
        let f = capacity(&[point(1.0, Fail), point(2.0, Fail)]).unwrap();
        assert_eq!((f.capacity, f.band), (None, (0.0, Some(1.0))));
        // Uncertain for the generator's sake: the generator limits, not noise.
        let mut lagging = point(3.0, Uncertain);
        lagging.generator_limited = true;
        let f = capacity(&[point(2.0, Pass), lagging]).unwrap();
        assert_eq!(f.limited_by, Limit::Bottleneck(Bottleneck::Generator));
        // The lowest uncertain, nothing passed: from 0 to the first failure.
        let f = capacity(&[point(1.0, Uncertain), point(2.0, Fail)]).unwrap();
        assert_eq!((f.capacity, f.band), (None, (0.0, Some(2.0))));
        assert_eq!(f.uncertain, vec![1.0]);
        let f = capacity(&[point(2.0, Uncertain), point(1.0, Uncertain)]).unwrap();
        assert_eq!((f.capacity, f.band, f.lowest), (None, (0.0, None), 1.0));
    }

    #[test]
    fn with_nothing_passing_the_search_tries_half_the_lowest_rate() {
        let failed = capacity(&[point(1000.0, Verdict::Fail), point(2000.0, Verdict::Fail)]);
        assert_eq!(failed.as_ref().and_then(below_lowest), Some(500.0));
        let uncertain = capacity(&[point(3.0, Verdict::Uncertain)]);
        assert_eq!(uncertain.as_ref().and_then(below_lowest), Some(1.0));
        let passed = capacity(&[point(1000.0, Verdict::Pass), point(2000.0, Verdict::Fail)]);
        assert_eq!(passed.as_ref().and_then(below_lowest), None);
        let floor = capacity(&[point(1.0, Verdict::Fail)]);
        assert_eq!(floor.as_ref().and_then(below_lowest), None);
    }
}
