//! A sweep's answer in one sentence: the capacity at the objectives with the share over
//! the bound there and its bound, the band and what limited it, a low-load tail when one
//! failed, the floor, the knee and saturation, and what was spent. When no rate passed,
//! the advice follows the cause: the host's floor, the generator, or the rates tried.

use crate::config::slo::Slo;
use crate::judge::capacity::{Finding, Landmarks};
use crate::report::Bottleneck;
use crate::report::sweep::{
    Disturbed, Exceedance, Limit, ObjectiveEstimate, RateBound, SpeedCapacity,
};

mod result;
pub use result::{budget_ended, said, sentence};

/// `(runs, seconds)` the open-loop runs measured.
pub type Spent = (usize, f64);

/// The capacity estimated from every counted run: each objective's, and the runs the
/// host disturbed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Estimated<'a> {
    /// The objectives, as the estimates and the finding's indices name them.
    pub slos: &'a [Slo],
    /// Each objective's estimate, the binding one marked.
    pub estimates: &'a [ObjectiveEstimate],
    /// The runs left out as the host's.
    pub disturbed: Option<&'a Disturbed>,
}

/// The result in one sentence, always with a band: `objectives` as typed and joined,
/// `confirmed` when fresh runs at the capacity passed on their own. With estimates, the
/// sentence opens with them and the capacity the runs showed to hold follows.
pub fn summary(
    objectives: &str,
    f: &Finding,
    confirmed: bool,
    landmarks: &Landmarks,
    spent: Spent,
    estimated: Estimated<'_>,
) -> String {
    let mut parts = match estimate_text(&estimated) {
        Some(text) if f.capacity.is_some() => vec![text, held(f, confirmed, estimated.slos)],
        Some(text) => vec![text, headline(objectives, f, confirmed, landmarks)],
        None => vec![headline(objectives, f, confirmed, landmarks)],
    };
    parts.extend(disturbed_text(&estimated));
    parts.push(format!("{}, {}", band(f), limit(f)));
    if let Some(r) = f.first_failing {
        parts.push(format!("{} req/s failed", rate(r)));
    }
    if !f.low_load_failing.is_empty() {
        let rates: Vec<String> = f.low_load_failing.iter().map(|r| rate(*r)).collect();
        parts.push(format!(
            "{} req/s failed under the capacity: a tail at low load",
            rates.join(", ")
        ));
    }
    parts.extend(landmark_text(landmarks));
    parts.push(format!("{} runs, {:.0} s measured", spent.0, spent.1));
    parts.join("; ")
}

/// A sweep over a trace's speeds: `as a speed of the recorded traffic: 2.30x, band
/// 2.10x..2.50x`.
pub fn speed(s: &SpeedCapacity) -> String {
    let x = |v: f64| format!("{v:.2}x");
    let band = match s.band {
        (low, Some(high)) => format!("band {}..{}", x(low), x(high)),
        (low, None) => format!("band {}.. (open above)", x(low)),
    };
    match s.speed {
        Some(speed) => format!("as a speed of the recorded traffic: {}, {band}", x(speed)),
        None => format!("as a speed of the recorded traffic: none passed, {band}"),
    }
}

fn rate(r: f64) -> String {
    format!("{r:.0}")
}

/// A rate for a headline, to two or three figures: `67k`, `4.5k`, `950`.
pub fn short_rate(r: f64) -> String {
    if r >= 9_999.5 {
        format!("{:.0}k", r / 1000.0)
    } else if r >= 999.5 {
        format!("{:.1}k", r / 1000.0)
    } else {
        format!("{r:.0}")
    }
}

/// A bound in milliseconds as a reader types it: `1 ms`, `0.25 ms`.
fn bound_ms(bound_ns: u64) -> String {
    let text = format!("{:.3}", bound_ns as f64 / 1e6);
    format!("{} ms", text.trim_end_matches('0').trim_end_matches('.'))
}

/// A share in percent, to two decimals as measured and as few as it needs as allowed.
fn allowed(limit: f64) -> String {
    let text = format!("{:.3}", 100.0 * limit);
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
}

/// `0.61% of replies over 1 ms (allowed 1%)`.
pub fn share_words(e: &Exceedance, bound_ns: u64) -> String {
    format!(
        "{:.2}% of replies over {} (allowed {})",
        100.0 * e.fraction,
        bound_ms(bound_ns),
        allowed(e.limit)
    )
}

/// One end of an estimate: `67k`, `under 13k`, `over 250k`.
fn bound_text(b: RateBound) -> String {
    match b {
        RateBound::At(r) => short_rate(r),
        RateBound::Below(r) => format!("under {}", short_rate(r)),
        RateBound::Above(r) => format!("over {}", short_rate(r)),
    }
}

/// `67k req/s (90%: 64k to 77k)`, an open crossing said with the rate it lies beyond.
pub fn estimate_figure(e: &ObjectiveEstimate) -> String {
    let what = match e.crossing {
        RateBound::At(r) => format!("{} req/s", short_rate(r)),
        RateBound::Below(r) => format!("under {} req/s, the lowest rate fitted", short_rate(r)),
        RateBound::Above(r) => format!("over {} req/s, the highest rate fitted", short_rate(r)),
    };
    format!(
        "{what} (90%: {} to {})",
        bound_text(e.interval.0),
        bound_text(e.interval.1)
    )
}

/// `capacity 67k req/s (90%: 64k to 77k) at p99<=1ms, from 96 runs at 11 rates`, the
/// binding objective first and the others after it; `None` without an estimate.
fn estimate_text(estimated: &Estimated<'_>) -> Option<String> {
    let binding = estimated.estimates.iter().find(|e| e.binding)?;
    let mut text = format!(
        "capacity {} at {}, estimated from {} runs at {} rates",
        estimate_figure(binding),
        binding.slo,
        binding.runs,
        binding.rates
    );
    if estimated.estimates.len() > 1 {
        text.push_str(" (the binding objective");
        for e in estimated.estimates.iter().filter(|e| !e.binding) {
            text.push_str(&format!("; {}: {}", e.slo, estimate_figure(e)));
        }
        text.push(')');
    }
    Some(text)
}

/// `held on 16 fresh runs at 62k req/s: 0.54% of replies over 1 ms (allowed 1%)`: the
/// highest rate the runs showed to hold, for a finding with a capacity.
fn held(f: &Finding, confirmed: bool, slos: &[Slo]) -> String {
    let Some(c) = f.capacity else {
        return String::new();
    };
    let at_least = if f.band.1.is_none() { "at least " } else { "" };
    let words = f.at_capacity.as_ref().map(|e| {
        let bound = f
            .at_capacity_objective
            .and_then(|i| slos.get(i))
            .map_or(0, |s| s.bound_ns);
        (e.visits, share_words(e, bound))
    });
    match (confirmed, words) {
        (true, Some((runs, words))) => format!(
            "held on {runs} fresh runs at {at_least}{} req/s: {words}",
            short_rate(c)
        ),
        (true, None) => format!("held on fresh runs at {at_least}{} req/s", short_rate(c)),
        (false, Some((runs, words))) => format!(
            "held on {runs} runs at {at_least}{} req/s, not confirmed on fresh runs: {words}",
            short_rate(c)
        ),
        (false, None) => format!(
            "held at {at_least}{} req/s, not confirmed on fresh runs",
            short_rate(c)
        ),
    }
}

/// `the host disturbed 6 of 96 runs (waits for a CPU up to 45% of a run), left out of the
/// estimate; with them 58k req/s`.
/// When every run was the host's, the estimate above is theirs and the sentence says so.
fn disturbed_text(estimated: &Estimated<'_>) -> Option<String> {
    let d = estimated.disturbed?;
    let binding = estimated.estimates.iter().find(|e| e.binding);
    if binding.is_some_and(|e| e.all_disturbed) {
        return Some(format!(
            "the host carried the tail of every one of the {} runs ({}): the estimate is the host's weather more than the server's capacity; a quieter host, or the server and tailrate on cores of their own, would measure the server",
            d.of,
            weather_text(d)
        ));
    }
    let with = binding
        .and_then(|e| e.with_disturbed)
        .map_or_else(String::new, |b| {
            format!("; with them {} req/s", bound_text(b))
        });
    Some(format!(
        "the host disturbed {} of {} runs ({}), left out of the estimate{with}",
        d.runs,
        d.of,
        weather_text(d)
    ))
}

/// What the host took from the disturbed runs, as a share of a run: `the server or the
/// generator waited for a CPU up to 45% of a run`, `the hypervisor took up to 30% of a
/// run` (steal), or both. Each part is said where it reached 1%; the waits are said
/// where neither did, since the tail's attribution can place short waits a run's whole
/// share rounds away.
fn weather_text(d: &Disturbed) -> String {
    let waited = format!(
        "the server or the generator waited for a CPU up to {:.0}% of a run",
        100.0 * d.most_wait_share
    );
    let stolen = format!(
        "the hypervisor took up to {:.0}% of a run",
        100.0 * d.most_steal_share
    );
    match (d.most_wait_share >= 0.01, d.most_steal_share >= 0.01) {
        (true, true) => format!("{waited}; {stolen}"),
        (false, true) => stolen,
        _ => waited,
    }
}

/// `0.60% of replies over the bound (upper bound 0.94%, 1.00% allowed, 8 runs)`.
fn share(e: &Exceedance) -> String {
    format!(
        "{:.2}% of replies over the bound (upper bound {:.2}%, {:.2}% allowed, {} runs)",
        100.0 * e.fraction,
        100.0 * e.high,
        100.0 * e.limit,
        e.visits
    )
}

fn headline(objectives: &str, f: &Finding, confirmed: bool, landmarks: &Landmarks) -> String {
    match f.capacity {
        Some(c) => {
            let at_least = if f.band.1.is_none() { "at least " } else { "" };
            let held = if confirmed {
                ", confirmed on fresh runs"
            } else {
                ""
            };
            let at = f
                .at_capacity
                .as_ref()
                .map_or_else(String::new, |e| format!(" ({})", share(e)));
            format!(
                "capacity at {objectives}: {at_least}{} req/s{at}{held}",
                rate(c)
            )
        }
        None if f.first_failing == Some(f.lowest) => {
            let advice = match (f.limited_by, floor_over(landmarks)) {
                (_, true) => {
                    "the objective is under this host's floor: a looser bound, a quieter host or longer runs would resolve it"
                }
                (Limit::Bottleneck(Bottleneck::Generator), _) => {
                    "the generator, not the server, fell behind: fewer connections per thread, or more threads"
                }
                _ => "try lower --rates",
            };
            format!(
                "capacity at {objectives}: below {} req/s, the lowest rate, which failed: {advice}",
                rate(f.lowest)
            )
        }
        None => format!(
            "capacity at {objectives}: not shown at any rate: none passed, from the lowest, {} req/s, which stayed undecided at its last look{}",
            rate(f.lowest),
            if floor_over(landmarks) {
                "; the objective sits at this host's floor"
            } else {
                ""
            }
        ),
    }
}

/// Whether the floor's share over the bound is itself past what the objective allows.
fn floor_over(landmarks: &Landmarks) -> bool {
    landmarks
        .floor
        .and_then(|f| f.exceedance)
        .is_some_and(|e| e.fraction > e.limit)
}

fn band(f: &Finding) -> String {
    match f.band {
        (low, Some(high)) => format!("band {}..{} req/s", rate(low), rate(high)),
        (low, None) => format!("band {}.. req/s (open above)", rate(low)),
    }
}

fn limit(f: &Finding) -> String {
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
    // What kept them undecided: the test's last look, or runs short of it (a narrowing
    // rate's cap, or the budget).
    let cause = match f.uncertain_runs.iter().max() {
        Some(&most) if most >= crate::stats::exceedance::LAST_LOOK => format!(
            " at the last look, {} runs: the share sits at the bound within the runs' noise",
            crate::stats::exceedance::LAST_LOOK
        ),
        Some(&most) if most > 0 => format!(" on at most {most} runs, short of a pass's look"),
        _ => String::new(),
    };
    match f.limited_by {
        Limit::Noise => format!("limited by noise: {uncertain} undecided{cause}"),
        Limit::Rates => format!(
            "no rate above it failed up to {} req/s: extend --rates",
            rate(f.highest)
        ),
        Limit::Bottleneck(Bottleneck::Generator) if f.band.1.is_none() => format!(
            "limited by the generator: it fell behind the schedule at {}",
            if f.uncertain.is_empty() {
                format!("{} req/s", rate(f.highest))
            } else {
                uncertain
                    .trim_end_matches(" was")
                    .trim_end_matches(" were")
                    .to_string()
            }
        ),
        Limit::Bottleneck(Bottleneck::None) => "the failing rate named no bottleneck".to_string(),
        other => format!("limited by the {}", other.name()),
    }
}

/// The floor, the knee and saturation, each when found.
fn landmark_text(l: &Landmarks) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some(floor) = &l.floor {
        let over = floor.exceedance.map_or_else(String::new, |e| {
            format!(", {:.2}% of replies over the bound", 100.0 * e.fraction)
        });
        let cause = floor.cause.map_or(String::new(), |b| {
            format!(" (bottleneck there: {})", b.name())
        });
        let interval = floor.interval_ns.map_or_else(String::new, |(low, high)| {
            format!(" (95%: {:.3}-{:.3})", low as f64 / 1e6, high as f64 / 1e6)
        });
        parts.push(format!(
            "floor {:.3} ms{interval} at {} req/s{over}{cause}",
            floor.value_ns as f64 / 1e6,
            rate(floor.rate_per_sec)
        ));
    }
    // Without a floor (every low-rate run the host's) there is nothing to leave.
    match (l.knee_per_sec, &l.floor) {
        (Some(k), _) => parts.push(format!("knee at {} req/s", rate(k))),
        (None, Some(_)) => parts.push("no knee: the tail stayed at the floor".to_string()),
        (None, None) => {}
    }
    let plateau = l.open_loop_max.map(|p| {
        format!(
            "the server's open-loop maximum {}{} replies/s at {} req/s offered",
            if p.reached { "" } else { "at least " },
            short_rate(p.replies_per_sec),
            short_rate(p.at_offered_per_sec)
        )
    });
    let closed = l
        .closed_loop_max_per_sec
        .map(|c| format!("the closed loop's {} req/s", short_rate(c)));
    let core = l
        .server_near_core_per_sec
        .map(|r| format!("the server near a core from {} req/s", short_rate(r)));
    let beside: Vec<String> = plateau.into_iter().chain(closed).chain(core).collect();
    let beside = if beside.is_empty() {
        String::new()
    } else {
        format!(" ({})", beside.join("; "))
    };
    match l.saturation_per_sec {
        Some(s) => parts.push(format!("saturation at {} req/s{beside}", rate(s))),
        None if !beside.is_empty() => parts.push(format!("no saturation{beside}")),
        None => {}
    }
    if let Some(g) = l.generator_limit_per_sec {
        parts.push(format!(
            "the generator fell behind from {} req/s (its own limit, not the server's)",
            rate(g)
        ));
    }
    parts
}

#[cfg(test)]
mod tests;
