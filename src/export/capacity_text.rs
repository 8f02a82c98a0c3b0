//! A sweep's answer in one sentence: the capacity at the objectives with the share over
//! the bound there and its bound, the band and what limited it, a low-load tail when one
//! failed, the floor, the knee and saturation, and what was spent. When no rate passed,
//! the advice follows the cause: the host's floor, the generator, or the rates tried.

use crate::judge::capacity::{Finding, Landmarks};
use crate::report::Bottleneck;
use crate::report::sweep::{Exceedance, Limit};

/// `(runs, seconds)` the open-loop runs measured.
pub type Spent = (usize, f64);

/// The result in one sentence, always with a band: `objectives` as typed and joined,
/// `confirmed` when fresh runs at the capacity passed on their own.
pub fn summary(
    objectives: &str,
    f: &Finding,
    confirmed: bool,
    landmarks: &Landmarks,
    spent: Spent,
) -> String {
    let mut parts = vec![headline(objectives, f, confirmed, landmarks)];
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

fn rate(r: f64) -> String {
    format!("{r:.0}")
}

/// `0.60% over the bound (upper bound 0.94%, 1.00% allowed, 8 runs)`.
fn share(e: &Exceedance) -> String {
    format!(
        "{:.2}% over the bound (upper bound {:.2}%, {:.2}% allowed, {} runs)",
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
    match f.limited_by {
        Limit::Noise => format!("limited by noise: {uncertain} undecided"),
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
            format!(", {:.2}% over the bound", 100.0 * e.fraction)
        });
        let cause = floor.cause.map_or(String::new(), |b| {
            format!(" (bottleneck there: {})", b.name())
        });
        parts.push(format!(
            "floor {:.3} ms at {} req/s{over}{cause}",
            floor.value_ns as f64 / 1e6,
            rate(floor.rate_per_sec)
        ));
    }
    parts.push(match l.knee_per_sec {
        Some(k) => format!("knee at {} req/s", rate(k)),
        None => "no knee: the tail stayed at the floor".to_string(),
    });
    if let Some(s) = l.saturation_per_sec {
        parts.push(format!("saturation at {} req/s", rate(s)));
    }
    parts
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::judge::capacity::{Point, capacity};
    use crate::judge::fixtures::*;
    use crate::report::sweep::Verdict::{Fail, Pass, Uncertain};

    fn said(points: &[Point]) -> String {
        summary(
            "p99<=1ms",
            &capacity(points).unwrap(),
            true,
            &Landmarks::default(),
            (12, 24.0),
        )
    }

    #[test]
    fn every_finding_is_said_with_its_band_and_what_limited_it() {
        let s = said(&[
            point(1000.0, Pass),
            point(2000.0, Uncertain),
            point(3000.0, Fail),
        ]);
        assert!(
            s.starts_with("capacity at p99<=1ms: 1000 req/s, confirmed on fresh runs; band 1000..3000 req/s, limited by noise: 2000 req/s was undecided; 3000 req/s failed"),
            "{s}"
        );
        assert!(s.ends_with("12 runs, 24 s measured"), "{s}");
        let s = said(&[point(1000.0, Pass)]);
        assert!(
            s.contains("at least 1000 req/s") && s.contains("extend --rates"),
            "{s}"
        );
        let s = said(&[point(1000.0, Fail)]);
        assert!(
            s.contains("below 1000 req/s, the lowest rate, which failed: try lower --rates"),
            "{s}"
        );
        let s = said(&[point(1000.0, Uncertain), point(2000.0, Fail)]);
        assert!(s.contains("not shown at any rate"), "{s}");
        let s = said(&[point(500.0, Fail), point(1000.0, Pass), point(2000.0, Fail)]);
        assert!(
            s.contains("500 req/s failed under the capacity: a tail at low load"),
            "{s}"
        );
        let many: Vec<Point> = std::iter::once(point(1000.0, Pass))
            .chain((2..=6).map(|k| point(1000.0 * k as f64, Uncertain)))
            .collect();
        let s = said(&many);
        assert!(
            s.contains("limited by noise: 5 rates from 2000 to 6000 req/s were undecided"),
            "{s}"
        );
    }

    #[test]
    fn a_generator_that_falls_behind_is_named_and_lower_rates_are_not_advised() {
        let mut lagging = point(2000.0, Uncertain);
        lagging.generator_limited = true;
        let s = said(&[point(1000.0, Pass), lagging]);
        assert!(s.contains("limited by the generator"), "{s}");
        assert!(!s.contains("--rates"), "{s}");
    }
}
