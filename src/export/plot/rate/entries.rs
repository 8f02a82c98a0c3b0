//! The legend rows of the latency-vs-rate chart: the percentiles, then what tells the
//! inputs apart (overlaid sweeps) or the kinds of points (one sweep), then the marks
//! drawn, each only where the chart has one.

use super::Layout;
use super::lines::input_shape;
use super::marks::{VERDICTS, overlay_slos, slo_color, slo_text};
use crate::export::plot::{
    ALERT, BAND, CAPACITY, GRAY, INK, PERCENTILE_COLORS, PERCENTILES, Shape, Swatch, open_steps,
};
use crate::judge::summary::steps_of;
use crate::report::sweep::{Kind, RateBound, SloResult, SweepReport};

/// Every row of the legend, in order.
pub(super) fn legend_entries(layout: &Layout<'_>) -> Vec<(String, Swatch)> {
    let mut entries: Vec<(String, Swatch)> = PERCENTILES
        .iter()
        .zip(PERCENTILE_COLORS)
        .map(|((name, _), color)| {
            let swatch = if layout.overlay {
                Swatch::line(color, 2)
            } else {
                Swatch::dotted(color, 2)
            };
            (name.to_string(), swatch)
        })
        .collect();
    if layout.overlay {
        entries.extend(input_entries(layout.inputs));
    } else {
        entries.extend(point_entries(layout.inputs[0].1));
    }
    entries.extend(mark_entries(layout));
    entries
}

/// For overlaid sweeps, each one's line (dashed for every second) and step marker.
fn input_entries(inputs: &[(String, &SweepReport)]) -> Vec<(String, Swatch)> {
    let mut entries = Vec::new();
    for (index, (label, _)) in inputs.iter().enumerate() {
        let line = if index % 2 == 1 {
            Swatch::dashed(GRAY, 2)
        } else {
            Swatch::line(GRAY, 2)
        };
        entries.push((label.clone(), line));
        let marker = Swatch::marker(GRAY, input_shape(index));
        entries.push((format!("{label} steps"), marker));
    }
    entries
}

/// For one sweep, its service time and the kinds of closed-loop point it has.
fn point_entries(r: &SweepReport) -> Vec<(String, Swatch)> {
    let mut entries = vec![("service time (dashed)".into(), Swatch::dashed(GRAY, 1))];
    if r.runs.iter().any(|m| m.kind == Kind::RateCapped) {
        let marker = Swatch::marker(GRAY, Shape::Triangle);
        entries.push(("rate-capped closed loop".into(), marker));
    }
    if r.runs
        .iter()
        .any(|m| matches!(m.kind, Kind::ClosedLoop | Kind::ClosedLoopMax))
    {
        let marker = Swatch::marker(GRAY, Shape::Cross);
        entries.push(("closed loop, x=throughput".into(), marker));
    }
    entries
}

/// The marks the chart holds: invalid steps, objectives, verdicts (one sweep), intervals,
/// capacity bands and capacity lines.
fn mark_entries(layout: &Layout<'_>) -> Vec<(String, Swatch)> {
    let inputs = layout.inputs;
    let mut entries = Vec::new();
    if inputs
        .iter()
        .any(|(_, r)| open_steps(r).iter().any(|(_, m)| !m.report.valid))
    {
        let marker = Swatch::marker(ALERT, Shape::Ring);
        entries.push(("invalid step (check failed)".into(), marker));
    }
    if layout.overlay {
        for (index, slo, color) in overlay_slos(layout) {
            let text = format!("{} {}", layout.inputs[index].0, slo_text(slo));
            entries.push((text, Swatch::dashed(color, 2)));
        }
    } else {
        for slo in &layout.slos {
            entries.push((slo_text(slo), Swatch::dashed(slo_color(slo), 2)));
        }
    }
    if !layout.overlay {
        let steps = steps_of(inputs[0].1);
        for (verdict, text, shape, color) in VERDICTS {
            let drawn = |slo: &&crate::config::slo::Slo| {
                steps
                    .iter()
                    .any(|s| s.slo.as_ref().is_some_and(|v| v.on(&slo.text) == verdict))
            };
            if layout.slos.iter().any(drawn) {
                entries.push((text.into(), Swatch::marker(color, shape)));
            }
        }
    }
    if !layout.overlay
        && open_steps(inputs[0].1).iter().any(|(_, m)| {
            m.report
                .bottleneck
                .as_ref()
                .is_some_and(|b| b.verdict != crate::report::Bottleneck::None)
        })
    {
        let word = Swatch::Word("host", INK);
        entries.push(("each step's bottleneck".into(), word));
    }
    if inputs.iter().any(|(_, r)| {
        steps_of(r)
            .iter()
            .any(|s| s.response.values().any(|p| p.ci95_ns.is_some()))
    }) {
        entries.push(("95% interval (^ open)".into(), Swatch::line(GRAY, 1)));
    }
    // The estimate and its interval where a sweep has one, else the held rate's band.
    let results = || inputs.iter().filter_map(|(_, r)| r.slo.as_ref());
    let estimated = results().any(|s| s.binding_estimate().is_some());
    if estimated {
        entries.push(("capacity (90% interval)".into(), Swatch::Band(BAND)));
    } else if results().any(|s| s.capacity_band_per_sec.is_some()) {
        entries.push(("capacity band".into(), Swatch::Band(BAND)));
    }
    let at = |s: &SloResult| {
        s.binding_estimate()
            .is_some_and(|e| matches!(e.crossing, RateBound::At(_)))
    };
    if results().any(at) {
        entries.push(("capacity (estimate)".into(), Swatch::line(CAPACITY, 2)));
    } else if !estimated && results().any(|s| s.capacity_per_sec.is_some()) {
        entries.push(("capacity (meets SLO)".into(), Swatch::line(CAPACITY, 2)));
    }
    entries
}
