//! The sweep's decisions, as pure functions of measured numbers: the order the coarse
//! steps are visited in, whether a run or a step passes, fails or is uncertain against
//! the SLOs, whether the server is past saturation, the capacity and its band from the
//! steps' verdicts, and the bisection between them. Measuring is `sweep`'s business.
//!
//! The rule, on each objective `pNN <= bound` at one step (every run at one rate, each
//! `--repeat` and each re-measurement, pooled; see [`crate::report::sweep::steps`]):
//! the step **passes** when the 95% interval of its `pNN` lies at or under the bound
//! (its upper end is at most the bound), **fails** when the interval lies above it (its
//! lower end is over the bound), and is **uncertain** otherwise: the interval straddles
//! the bound, or has no upper end (too few samples beyond the percentile to bound it).
//! The interval is the wider of the runs' own (the median of their intervals) and the
//! one from the runs' spread (the order-statistic interval of their median; min..max
//! under 6 runs). A step passes when every objective passes and fails when one fails.
//! A run that could not carry its rate (it achieved under [`SATURATION_FRACTION`] of
//! the schedule, left requests unsent, or got no reply) cannot pass: a step whose
//! every run is such fails, and one with some, or with runs short of the schedule by
//! more than [`SEND_TOLERANCE`], is at best uncertain.
//!
//! The capacity is the highest passing rate with no failing rate under it; its band
//! runs from there to the lowest failing rate above it (open when none failed), and
//! rates inside the band were uncertain or not measured. The interval rule was chosen
//! over a vote of the repeats ("met in 80% of them") because it gives a verdict with
//! its confidence from one run as from many, and because a vote of a few runs is again
//! a point estimate: with three runs, 80% means all three.

use rand::RngCore;
use rand::SeedableRng;

use crate::config::sweep::{Order, Slo};
use crate::report::sweep::steps::{self, StepCheck, StepSummary, StepVerdict};
pub use crate::report::sweep::{Limit, SATURATION_FRACTION, Verdict, achieved_fraction};
use crate::report::sweep::{Measurement, SloCheck, SloVerdict};
use crate::report::{Bottleneck, TestReport};
use crate::stats::confidence::Ci95;

/// Largest shortfall of the achieved rate against the planned rate for a step to be valid.
pub const SEND_TOLERANCE: f64 = crate::judge::checks::RATE_TOLERANCE;

/// Added to the run's seed for the order of the steps, so it is a stream of its own.
const ORDER_STREAM: u64 = 0x5eed_0f5e_e90d_e500;

/// The coarse steps' visits in order, as `(index into the rates, repeat)`: ascending,
/// each rate's repeats one after another; or every pair in a random permutation drawn
/// from `seed`, so a rate's repeats fall at different times and a drift of the host
/// spreads over every rate instead of lining up with load.
pub fn visit_order(rates: usize, repeat: usize, order: Order, seed: u64) -> Vec<(usize, usize)> {
    let mut visits: Vec<(usize, usize)> = (0..rates)
        .flat_map(|i| (0..repeat).map(move |r| (i, r)))
        .collect();
    if order == Order::Shuffle {
        // Fisher-Yates on the generator's raw output, so the permutation of a seed does
        // not change with the `rand` crate's sampling code.
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed.wrapping_add(ORDER_STREAM));
        for i in (1..visits.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            visits.swap(i, j);
        }
        // Each rate's repeats numbered in the order they now run.
        let mut seen = vec![0; rates];
        for v in &mut visits {
            v.1 = seen[v.0];
            seen[v.0] += 1;
        }
    }
    visits
}

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
    let checks: Vec<StepCheck> = slos
        .iter()
        .filter_map(|slo| {
            let values: Vec<(u64, Option<Ci95>)> = group
                .iter()
                .filter_map(|m| m.report.response())
                .filter_map(|l| steps::percentile_of(l, slo.percentile))
                .collect();
            let summary = crate::stats::median::combine(&values)?;
            Some(StepCheck {
                slo: slo.text.clone(),
                verdict: verdict(summary.ci95_ns, slo.bound_ns),
                summary,
            })
        })
        .collect();
    let sends: Vec<Sends> = group.iter().map(|m| sends(&m.report)).collect();
    let measured = if checks.len() == slos.len() {
        all_of(checks.iter().map(|c| c.verdict))
    } else {
        Verdict::Uncertain
    };
    let verdict = with_sends(measured, &sends);
    let short_runs = sends.iter().filter(|s| **s != Sends::Kept).count();
    let why = match (verdict, measured) {
        (Verdict::Fail, m) if m != Verdict::Fail => format!(
            "no run carried the rate ({} of {} under {:.0}% of the schedule or with requests unsent)",
            short_runs,
            group.len(),
            100.0 * SATURATION_FRACTION
        ),
        (Verdict::Uncertain, Verdict::Pass) => format!(
            "{short_runs} of {} runs fell short of the schedule",
            group.len()
        ),
        _ => checks
            .iter()
            .zip(slos)
            .map(|(c, slo)| {
                let relation = match c.verdict {
                    Verdict::Pass => "at or under",
                    Verdict::Fail => "above",
                    Verdict::Uncertain if c.summary.ci95_ns.is_some_and(|i| i.high().is_none()) => {
                        "against"
                    }
                    Verdict::Uncertain => "across",
                };
                format!(
                    "{} median {:.3} ms, {} {relation} {:.3} ms",
                    slo.percentile_label(),
                    c.summary.median_ns as f64 / 1e6,
                    crate::export::sweep_text::interval_text(c.summary.ci95_ns),
                    slo.bound_ns as f64 / 1e6
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    };
    StepVerdict {
        verdict,
        met_runs: group
            .iter()
            .filter(|m| m.slo.as_ref().is_some_and(|v| v.met))
            .count(),
        short_runs,
        checks,
        why,
    }
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

/// One step's verdict, as the capacity is read from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Target rate, requests per second.
    pub rate: f64,
    /// Its verdict over every run there.
    pub verdict: Verdict,
    /// The bottleneck most of its runs named.
    pub bottleneck: Option<Bottleneck>,
}

/// The judged steps of `steps` as points, by rate.
pub fn points(steps: &[StepSummary]) -> Vec<Point> {
    let mut points: Vec<Point> = steps
        .iter()
        .filter_map(|s| {
            Some(Point {
                rate: s.target_rate_per_sec,
                verdict: s.slo.as_ref()?.verdict,
                bottleneck: s.bottleneck,
            })
        })
        .collect();
    points.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    points
}

/// The capacity read from the steps' verdicts.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The highest passing rate with no failing rate under it; none when no rate passed
    /// under the lowest failing one.
    pub capacity: Option<f64>,
    /// `(capacity or 0, lowest failing rate above it)`; open above when none failed.
    pub band: (f64, Option<f64>),
    /// Uncertain rates inside the band, increasing.
    pub uncertain: Vec<f64>,
    /// What kept the band from being narrower.
    pub limited_by: Limit,
    /// The lowest failing rate (the band's high end).
    pub first_failing: Option<f64>,
    /// The lowest rate measured.
    pub lowest: f64,
    /// The highest rate measured.
    pub highest: f64,
}

/// The capacity, its band and what limited it, from `points` (any order); `None` when
/// nothing was measured. See the module doc for the rule.
pub fn capacity(points: &[Point]) -> Option<Finding> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    let (lowest, highest) = (sorted.first()?.rate, sorted.last()?.rate);
    let first_fail = sorted.iter().find(|p| p.verdict == Verdict::Fail).copied();
    let below_fail = |p: &&Point| first_fail.is_none_or(|f| p.rate < f.rate);
    let capacity = sorted
        .iter()
        .filter(below_fail)
        .filter(|p| p.verdict == Verdict::Pass)
        .map(|p| p.rate)
        .reduce(f64::max);
    let low = capacity.unwrap_or(0.0);
    let uncertain: Vec<f64> = sorted
        .iter()
        .filter(below_fail)
        .filter(|p| p.verdict == Verdict::Uncertain && p.rate > low)
        .map(|p| p.rate)
        .collect();
    let limited_by = match first_fail {
        _ if !uncertain.is_empty() => Limit::Noise,
        Some(f) => Limit::of(f.bottleneck),
        None => Limit::Rates,
    };
    Some(Finding {
        capacity,
        band: (low, first_fail.map(|f| f.rate)),
        uncertain,
        limited_by,
        first_failing: first_fail.map(|f| f.rate),
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

/// Where a bisection to `resolution` can narrow the band: from the capacity up to the
/// lowest rate above it measured (failing or uncertain); `None` without a capacity or a
/// rate above it.
pub fn search_bracket(points: &[Point], resolution: f64) -> Option<Bisection> {
    let found = capacity(points)?;
    let pass = found.capacity?;
    let above = points
        .iter()
        .filter(|p| p.rate > pass)
        .map(|p| p.rate)
        .reduce(f64::min)?;
    Some(Bisection {
        pass,
        fail: above,
        resolution,
    })
}

/// Bisection between a passing rate and a rate above it that did not pass, to a
/// resolution relative to the rate. It narrows on confident verdicts: a pass raises
/// `pass`; a fail or an uncertain verdict lowers `fail` (the search then looks for the
/// highest rate that passes under it, and the band says what was uncertain).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bisection {
    /// Highest rate known to pass.
    pub pass: f64,
    /// Lowest rate above it not known to pass.
    pub fail: f64,
    /// Stop when `fail - pass <= resolution * pass`.
    pub resolution: f64,
}

impl Bisection {
    /// The next rate to try (a whole number of requests per second), or `None` when done.
    pub fn next(&self) -> Option<f64> {
        if self.fail - self.pass <= self.resolution * self.pass {
            return None;
        }
        let mid = ((self.pass + self.fail) / 2.0).round();
        // Rounding may land on a bound when they are a request per second apart.
        (mid > self.pass && mid < self.fail).then_some(mid)
    }

    /// Records whether `rate` met the objectives.
    pub fn record(&mut self, rate: f64, met: bool) {
        if met {
            self.pass = self.pass.max(rate);
        } else {
            self.fail = self.fail.min(rate);
        }
    }

    /// Records the verdict at `rate`: only a pass counts as meeting.
    pub fn record_verdict(&mut self, rate: f64, verdict: Verdict) {
        self.record(rate, verdict == Verdict::Pass);
    }
}

/// The result in one sentence, always with a band: `objectives` as typed and joined,
/// `confirmed` when the capacity passed again when re-measured.
pub fn summary(objectives: &str, f: &Finding, confirmed: bool) -> String {
    let rate = |r: f64| format!("{r:.0}");
    let band = match f.band {
        (low, Some(high)) => format!("band {}..{} req/s", rate(low), rate(high)),
        (low, None) => format!("band {}.. req/s (open above)", rate(low)),
    };
    // Up to three rates by name; more as a count and a range.
    let uncertain = match f.uncertain.as_slice() {
        [] => "no rate was".to_string(),
        [one] => format!("{} req/s was", rate(*one)),
        few @ ([_, _] | [_, _, _]) => format!(
            "{} req/s were",
            few.iter().map(|r| rate(*r)).collect::<Vec<_>>().join(", ")
        ),
        many => format!(
            "{} rates from {} to {} req/s were",
            many.len(),
            rate(many[0]),
            rate(many[many.len() - 1])
        ),
    };
    let limit = match f.limited_by {
        Limit::Noise => format!("limited by noise: {uncertain} uncertain"),
        Limit::Rates => format!(
            "no rate above it failed up to {} req/s: extend --rates",
            rate(f.highest)
        ),
        Limit::None => "the failing rate named no bottleneck".to_string(),
        other => format!("limited by the {}", other.name()),
    };
    let failed = f
        .first_failing
        .map(|r| format!("; {} req/s failed", rate(r)))
        .unwrap_or_default();
    match f.capacity {
        Some(c) => {
            let held = if confirmed {
                ", held when re-measured"
            } else {
                ""
            };
            let at_least = if f.band.1.is_none() { "at least " } else { "" };
            format!(
                "capacity at {objectives}: {at_least}{} req/s with 95% confidence{held}; {band}, {limit}{failed}",
                rate(c)
            )
        }
        None if f.first_failing == Some(f.lowest) => format!(
            "capacity at {objectives}: below {} req/s, the lowest rate, which failed; {band}, {limit}: try lower --rates",
            rate(f.lowest)
        ),
        None => format!(
            "capacity at {objectives}: not shown at any rate: none passed with confidence, from the lowest, {} req/s, which was uncertain; {band}, {limit}{failed}",
            rate(f.lowest)
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::report::sweep::Kind;
    use crate::report::{Counts, Latency};

    const MS: u64 = 1_000_000;

    fn slo_p99_1ms() -> Slo {
        crate::config::sweep::parse_slo("p99<=1ms").unwrap()
    }

    /// A run at `rate` whose response p99 is `p99_ns` with interval `ci`, achieving the
    /// fraction `achieved` of its schedule.
    fn run(rate: f64, p99_ns: u64, ci: Option<Ci95>, achieved: f64) -> Measurement {
        let mut h = crate::record::new_histogram();
        h.record(p99_ns).unwrap();
        let mut latency = Latency::without_intervals(&h);
        latency.p99_ns = p99_ns;
        latency.p99_ci95_ns = ci;
        let report = TestReport {
            name: "GET".into(),
            target_rate_per_sec: Some(rate),
            achieved_rate_per_sec: rate * achieved,
            throughput_per_sec: rate * achieved,
            sent_bytes: 0,
            received_bytes: 0,
            sent_bytes_per_sec: 0.0,
            received_bytes_per_sec: 0.0,
            measured_secs: 1.0,
            started_at_unix_secs: 0.0,
            counts: Counts {
                intended: rate as u64,
                sent: rate as u64,
                completed: rate as u64,
                ..Counts::default()
            },
            latency: [("response".to_string(), latency)].into_iter().collect(),
            commands: Vec::new(),
            checks: Vec::new(),
            valid: true,
            stopped_early: None,
            generator_cpu: Vec::new(),
            intervals: Vec::new(),
            nodes: Vec::new(),
            batches: None,
            reconnects: 0,
            outages: Vec::new(),
            outages_left_out: 0,
            layout_changes: Vec::new(),
            layout_changes_left_out: 0,
            layout_reads: 0,
            excluded_from_latency: 0,
            server: None,
            bottleneck: None,
            repeat: None,
            start_skew_ns: None,
            arrivals: None,
        };
        let slo = Some(judge(&report, &[slo_p99_1ms()]));
        Measurement {
            kind: Kind::Step,
            target_rate_per_sec: Some(rate),
            connections: 1,
            repeat: 0,
            started_secs: 0.0,
            hlog: String::new(),
            slo,
            report,
        }
    }

    fn ci(low_ms: f64, high_ms: Option<f64>) -> Option<Ci95> {
        let ns = |ms: f64| (ms * MS as f64) as u64;
        Some(Ci95(ns(low_ms), high_ms.map(ns)))
    }

    fn point(rate: f64, verdict: Verdict) -> Point {
        Point {
            rate,
            verdict,
            bottleneck: None,
        }
    }

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
    fn repeats_that_disagree_make_a_step_uncertain_and_agreeing_ones_decide_it() {
        let slos = [slo_p99_1ms()];
        let tight = |p99_ms: f64| {
            let ns = (p99_ms * MS as f64) as u64;
            run(
                1000.0,
                ns,
                Some(Ci95(ns * 95 / 100, Some(ns * 105 / 100))),
                1.0,
            )
        };
        let agree = [tight(0.4), tight(0.5), tight(0.45)];
        let v = judge_step(&agree.iter().collect::<Vec<_>>(), &slos);
        assert_eq!(v.verdict, Pass, "{}", v.why);
        assert_eq!(v.met_runs, 3);
        // One of three over the bound: the spread (min..max) straddles it.
        let noisy = [tight(0.4), tight(1.6), tight(0.45)];
        let v = judge_step(&noisy.iter().collect::<Vec<_>>(), &slos);
        assert_eq!(v.verdict, Uncertain, "{}", v.why);
        assert_eq!(v.checks[0].summary.median_ns, 450 * MS / 1000);
        assert!(v.why.contains("across"), "{}", v.why);
        let over = [tight(1.4), tight(1.6), tight(1.5)];
        let v = judge_step(&over.iter().collect::<Vec<_>>(), &slos);
        assert_eq!(v.verdict, Fail, "{}", v.why);
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
    fn the_capacity_is_the_highest_pass_with_nothing_failing_under_it() {
        assert_eq!(capacity(&[]), None);
        // Clean: pass, pass, fail.
        let f = capacity(&[point(1.0, Pass), point(2.0, Pass), point(3.0, Fail)]).unwrap();
        assert_eq!((f.capacity, f.band), (Some(2.0), (2.0, Some(3.0))));
        assert_eq!(f.limited_by, Limit::None);
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
        assert_eq!(f.limited_by, Limit::Server);
        // Nothing failed: at least the highest pass, open above.
        let f = capacity(&[point(1.0, Pass), point(2.0, Pass)]).unwrap();
        assert_eq!(
            (f.capacity, f.band, f.limited_by),
            (Some(2.0), (2.0, None), Limit::Rates)
        );
        let f = capacity(&[point(1.0, Pass), point(2.0, Uncertain)]).unwrap();
        assert_eq!((f.band, f.limited_by), ((1.0, None), Limit::Noise));
        // The lowest failed: below it, from 0.
        let f = capacity(&[point(1.0, Fail), point(2.0, Pass)]).unwrap();
        assert_eq!((f.capacity, f.band), (None, (0.0, Some(1.0))));
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

    #[test]
    fn every_finding_is_said_with_its_band() {
        let cases: [(&[Point], &str); 5] = [
            (
                &[
                    point(1000.0, Pass),
                    point(2000.0, Uncertain),
                    point(3000.0, Fail),
                ],
                "capacity at p99<=1ms: 1000 req/s with 95% confidence, held when re-measured; band 1000..3000 req/s, limited by noise: 2000 req/s was uncertain; 3000 req/s failed",
            ),
            (
                &[point(1000.0, Pass)],
                "capacity at p99<=1ms: at least 1000 req/s with 95% confidence, held when re-measured; band 1000.. req/s (open above), no rate above it failed up to 1000 req/s: extend --rates",
            ),
            (
                &[point(1000.0, Fail)],
                "capacity at p99<=1ms: below 1000 req/s, the lowest rate, which failed; band 0..1000 req/s, the failing rate named no bottleneck: try lower --rates",
            ),
            (
                &[point(1000.0, Uncertain), point(2000.0, Fail)],
                "capacity at p99<=1ms: not shown at any rate: none passed with confidence, from the lowest, 1000 req/s, which was uncertain; band 0..2000 req/s, limited by noise: 1000 req/s was uncertain; 2000 req/s failed",
            ),
            (
                &[point(1000.0, Uncertain)],
                "capacity at p99<=1ms: not shown at any rate: none passed with confidence, from the lowest, 1000 req/s, which was uncertain; band 0.. req/s (open above), limited by noise: 1000 req/s was uncertain",
            ),
        ];
        for (points, want) in cases {
            assert_eq!(summary("p99<=1ms", &capacity(points).unwrap(), true), want);
        }
        let many: Vec<Point> = std::iter::once(point(1000.0, Pass))
            .chain((2..=6).map(|k| point(1000.0 * k as f64, Uncertain)))
            .collect();
        let said = summary("p99<=1ms", &capacity(&many).unwrap(), false);
        assert!(
            said.ends_with("limited by noise: 5 rates from 2000 to 6000 req/s were uncertain"),
            "{said}"
        );
    }

    #[test]
    fn the_bisection_narrows_from_the_capacity_to_the_next_rate_that_did_not_pass() {
        let points = [
            point(1000.0, Pass),
            point(2000.0, Pass),
            point(3000.0, Uncertain),
            point(4000.0, Fail),
        ];
        let b = search_bracket(&points, 0.02).unwrap();
        assert_eq!((b.pass, b.fail), (2000.0, 3000.0));
        assert_eq!(
            search_bracket(&[point(1.0, Uncertain), point(2.0, Fail)], 0.02),
            None
        );
        assert_eq!(search_bracket(&[point(1.0, Pass)], 0.02), None);
        let mut b = b;
        b.record_verdict(2500.0, Uncertain);
        assert_eq!(b.fail, 2500.0);
        b.record_verdict(2250.0, Pass);
        assert_eq!(b.pass, 2250.0);
    }

    #[test]
    fn ascending_visits_each_rate_in_turn_and_shuffle_is_a_seeded_permutation() {
        assert_eq!(
            visit_order(3, 2, Order::Ascending, 7),
            vec![(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
        );
        let a = visit_order(10, 3, Order::Shuffle, 7);
        assert_eq!(a, visit_order(10, 3, Order::Shuffle, 7), "not repeatable");
        assert_ne!(
            a,
            visit_order(10, 3, Order::Shuffle, 8),
            "the seed is not used"
        );
        assert_ne!(a, visit_order(10, 3, Order::Ascending, 7));
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            visit_order(10, 3, Order::Ascending, 7),
            "not a permutation"
        );
        // Each rate's repeats are numbered in the order they run.
        for rate in 0..10 {
            let repeats: Vec<usize> = a.iter().filter(|v| v.0 == rate).map(|v| v.1).collect();
            assert_eq!(repeats, vec![0, 1, 2]);
        }
        // Every rate comes first about as often over seeds: no position is favoured.
        let mut first = [0usize; 4];
        for seed in 0..4000 {
            first[visit_order(4, 1, Order::Shuffle, seed)[0].0] += 1;
        }
        assert!(first.iter().all(|n| (850..1150).contains(n)), "{first:?}");
    }

    #[test]
    fn bisection_finds_the_boundary_to_the_resolution() {
        for boundary in [1234.0, 50_000.0, 77_777.0, 149_999.0] {
            let met = |rate: f64| rate <= boundary;
            let mut b = Bisection {
                pass: 1000.0,
                fail: 150_000.0,
                resolution: 0.02,
            };
            let mut tries = 0;
            while let Some(rate) = b.next() {
                b.record(rate, met(rate));
                tries += 1;
                assert!(tries < 40);
            }
            assert!(b.pass <= boundary && boundary < b.fail, "{boundary}: {b:?}");
            assert!(b.fail - b.pass <= 0.02 * b.pass, "{boundary}: {b:?}");
            // Each try halves the interval; it starts 149k wide and ends under 2% of 1000.
            let bound = ((150_000.0 - 1000.0) / (0.02 * 1000.0f64)).log2().ceil() as usize;
            assert!(tries <= bound, "{tries} tries, bound {bound}");
        }
    }

    #[test]
    fn bisection_stops_when_the_bounds_are_adjacent() {
        let mut b = Bisection {
            pass: 10.0,
            fail: 11.0,
            resolution: 1e-6,
        };
        assert_eq!(b.next(), None);
        b = Bisection {
            pass: 10.0,
            fail: 12.0,
            resolution: 1e-6,
        };
        assert_eq!(b.next(), Some(11.0));
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
