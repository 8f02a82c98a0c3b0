//! The saturation rule: a run fell short of its schedule when it sent, or got replies,
//! at under [`SATURATION_FRACTION`] of the rate it planned; a step is saturated when most
//! of its runs did or built a backlog; a sweep's steps stop past saturation. Read by the
//! SLO verdicts ([`super::slo`]), the capacity's landmarks, the sweep and the plots.

use crate::report::TestReport;
use crate::report::sweep::StepSummary;

/// A step whose achieved rate is below this fraction of its target is past saturation.
pub const SATURATION_FRACTION: f64 = 0.95;

/// The achieved rate (requests written per second, over a window stretched to the last
/// send) as a fraction of the rate the schedule planned in the measured window
/// (intended / measured seconds). A server past saturation fills every connection's
/// in-flight cap, sends go late or never, and this falls. Against the schedule's own
/// count rather than the nominal target, so a Poisson schedule's count noise
/// (1/sqrt(n), 4.5% at 500 requests) is not mistaken for saturation.
pub fn achieved_fraction(report: &TestReport) -> f64 {
    let c = &report.counts;
    if c.intended > 0 && report.measured_secs > 0.0 {
        report.achieved_rate_per_sec / (c.intended as f64 / report.measured_secs)
    } else {
        match report.target_rate_per_sec {
            Some(target) if target > 0.0 => report.achieved_rate_per_sec / target,
            _ => 1.0,
        }
    }
}

/// Whether `report`'s run fell short of its schedule: it sent, or got replies, at under
/// [`SATURATION_FRACTION`] of the rate it planned (both against the schedule's own count,
/// as in [`achieved_fraction`]). Sends keep the schedule while the server falls behind
/// (an open loop writes whatever the server does, up to its in-flight cap); replies
/// then fall short.
pub fn fell_short(report: &TestReport) -> bool {
    achieved_fraction(report) < SATURATION_FRACTION
        || replies_fraction(report) < SATURATION_FRACTION
}

/// Replies per second as a fraction of the rate the schedule planned in the measured
/// window (1 when it planned nothing).
pub fn replies_fraction(report: &TestReport) -> f64 {
    let c = &report.counts;
    if c.intended > 0 && report.measured_secs > 0.0 {
        report.throughput_per_sec / (c.intended as f64 / report.measured_secs)
    } else {
        1.0
    }
}

/// Whether the server stopped keeping the schedule at `step`: most runs sent or got
/// replies at under [`SATURATION_FRACTION`] of it, or built a backlog (or, in a file that
/// counted neither, the median run sent under that fraction of the target).
pub fn saturated(step: &StepSummary) -> bool {
    step.achieved_rate_per_sec < SATURATION_FRACTION * step.target_rate_per_sec
        || 2 * step.short_runs > step.runs
        || 2 * step.backlog_runs > step.runs
}

/// Why the sweep should stop after a step at `target` that sent the fraction `achieved`
/// of its planned rate and got replies at the fraction `replies` of it (see
/// [`achieved_fraction`], [`replies_fraction`]) with a response-time p99 of `p99_ns`;
/// `None` to go on.
pub fn saturation(
    target: f64,
    (achieved, replies): (f64, f64),
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
    if replies < SATURATION_FRACTION {
        return Some(format!(
            "past saturation: at {target:.0} req/s the server answered only {:.1}% of the planned rate (under {:.0}%)",
            100.0 * replies,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_rate_is_past_saturation_when_most_of_its_runs_are() {
        assert!(past_saturation(1, 1));
        assert!(!past_saturation(1, 2) && past_saturation(2, 2));
        assert!(!past_saturation(1, 3) && past_saturation(2, 3));
        assert!(!past_saturation(2, 5) && past_saturation(3, 5));
    }

    #[test]
    fn the_sweep_stops_under_95_percent_of_target_or_above_stop_at() {
        assert_eq!(saturation(100_000.0, (0.96, 0.96), 1_000_000, None), None);
        assert!(
            saturation(100_000.0, (0.94, 0.9), 1_000_000, None)
                .unwrap()
                .contains("generator achieved only 94.0%")
        );
        assert!(
            saturation(100_000.0, (1.0, 0.7), 1_000_000, None)
                .unwrap()
                .contains("server answered only 70.0%")
        );
        assert_eq!(
            saturation(100_000.0, (1.0, 1.0), 2_000_000, Some(2_000_000)),
            None
        );
        assert!(
            saturation(100_000.0, (1.0, 1.0), 2_000_001, Some(2_000_000))
                .unwrap()
                .contains("--stop-at")
        );
    }
}
