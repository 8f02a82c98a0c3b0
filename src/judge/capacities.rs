//! Two sweeps' capacities at their objectives, compared by their bands: each capacity
//! lies in `[the highest passing rate, the lowest failing rate above it)`, so B is
//! higher or lower only where the two bands do not meet; a single pass or fail on
//! either side of the other's capacity says nothing a band does not.

use crate::report::compare::{CapacityComparison, CapacityWhy};
use crate::report::sweep::SweepReport;

/// `a`'s capacity against `b`'s; `None` unless both searched one (`--slo`).
pub fn compare(a: &SweepReport, b: &SweepReport) -> Option<CapacityComparison> {
    let (sa, sb) = (a.slo.as_ref()?, b.slo.as_ref()?);
    let text = |r: &SweepReport| {
        r.plan
            .slos
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let band = |capacity: Option<f64>, band: Option<(f64, Option<f64>)>| {
        band.unwrap_or((capacity.unwrap_or(0.0), None))
    };
    let (ba, bb) = (
        band(sa.capacity_per_sec, sa.capacity_band_per_sec),
        band(sb.capacity_per_sec, sb.capacity_band_per_sec),
    );
    let (verdict, why) = if text(a) != text(b) {
        (
            "not_comparable",
            CapacityWhy::NotComparable {
                a: text(a),
                b: text(b),
            },
        )
    } else if bb.1.is_some_and(|top| top <= ba.0) {
        (
            "b_lower",
            CapacityWhy::BLower {
                b_failed: bb.1.unwrap_or(0.0),
                a_passed: ba.0,
            },
        )
    } else if ba.1.is_some_and(|top| top <= bb.0) {
        (
            "b_higher",
            CapacityWhy::BHigher {
                b_passed: bb.0,
                a_failed: ba.1.unwrap_or(0.0),
            },
        )
    } else {
        ("cannot_tell", CapacityWhy::BandsMeet)
    };
    Some(CapacityComparison {
        objectives: text(a),
        a_per_sec: sa.capacity_per_sec,
        a_band_per_sec: ba,
        b_per_sec: sb.capacity_per_sec,
        b_band_per_sec: bb,
        verdict: verdict.to_string(),
        why,
    })
}
