//! The marks of the latency-vs-rate chart that are not a percentile's line: the
//! objectives' lines and labels, each step's bottleneck and the saturated rates, the
//! capacity bands, each rate's verdict, the capacity's line and label, and the floor and
//! the knee. The capacity is the one the text leads with: the binding objective's
//! estimate, shaded over its 90% interval and labelled with the rate held on its runs; a
//! sweep without an estimate (saved before them, or one whose search fitted none) draws
//! the held rate and its band as before.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::place::{
    CAPACITY_CHAR_PX, CAPACITY_LINE_PX, LABEL_MARGIN_PX, floor_label_offset, marker_pixels,
    plot_edges, wrap,
};
use super::{Layout, RateChart};
use crate::config::slo::Slo;
use crate::export::plot::{
    ALERT, BAND, BAND_OPACITY, CAPACITY, DrawResult, GRAY, INK, INPUT_COLORS, PERCENTILE_COLORS,
    PERCENTILES, Shape, draw_line, draw_markers, draw_text, font, log_ms, ms_label, rate_label,
};
use crate::report::Bottleneck;

/// The shading of the rates past saturation.
pub(super) const SATURATED: RGBColor = RGBColor(252, 234, 234);
use crate::report::sweep::{
    Limit, Measurement, ObjectiveEstimate, RateBound, SloResult, StepSummary, SweepReport, Verdict,
};

/// Each objective as a dashed line across the chart: in the colour of the percentile it
/// bounds for one sweep; on an overlay, each sweep's objectives in that sweep's colour
/// ([`overlay_slos`]), so two sweeps' lines at one bound stay told apart. The legend
/// names them (a label on the chart sat on the points and on the other objectives'
/// labels).
pub(super) fn slo_lines(chart: &mut RateChart<'_, '_>, layout: &Layout<'_>) -> DrawResult {
    let x_max = layout.x_max;
    let line = |slo: &Slo| {
        let y = (slo.bound_ns as f64 / 1e6).log10();
        vec![(0.0, y), (x_max, y)]
    };
    if !layout.overlay {
        for slo in &layout.slos {
            draw_line(chart, line(slo), slo_color(slo), 2, true)?;
        }
        return Ok(());
    }
    for (index, slo, color) in overlay_slos(layout) {
        // Every second sweep's dashes are shorter, so where two sweeps' lines lie on
        // one bound both colours show.
        let (dash, gap) = if index % 2 == 1 { (3, 7) } else { (6, 4) };
        chart.draw_series(std::iter::once(DashedPathElement::new(
            line(slo),
            dash,
            gap,
            color.stroke_width(2),
        )))?;
    }
    Ok(())
}

/// On an overlay, every sweep's objectives with the sweep's place among the inputs and
/// its colour.
pub(super) fn overlay_slos<'r>(layout: &Layout<'r>) -> Vec<(usize, &'r Slo, RGBColor)> {
    layout
        .inputs
        .iter()
        .enumerate()
        .flat_map(|(index, (_, r))| {
            let color = INPUT_COLORS[index % INPUT_COLORS.len()];
            r.plan.slos.iter().map(move |slo| (index, slo, color))
        })
        .collect()
}

/// The colour of an objective's line: its percentile's, or ink for a percentile the
/// chart does not draw.
pub(super) fn slo_color(slo: &Slo) -> RGBColor {
    let label = slo.percentile_label();
    PERCENTILES
        .iter()
        .zip(PERCENTILE_COLORS)
        .find(|((name, _), _)| *name == label)
        .map_or(INK, |(_, color)| color)
}

/// How an objective's line names it in the legend: `SLO p99 ≤ 1.00 ms`.
pub(super) fn slo_text(slo: &Slo) -> String {
    format!(
        "SLO {} ≤ {}",
        slo.percentile_label(),
        ms_label(slo.bound_ns)
    )
}

/// Each sweep's capacity band: across the whole chart for one sweep; for overlaid ones,
/// bars along the top, so none hides another's lines.
pub(super) fn capacity_bands(chart: &mut RateChart<'_, '_>, layout: &Layout<'_>) -> DrawResult {
    let (y_lo, y_hi) = (layout.y_lo, layout.y_hi);
    for (index, (_, r)) in layout.inputs.iter().enumerate() {
        let Some((low, high)) = r.slo.as_ref().and_then(|s| band(s, layout.x_max)) else {
            continue;
        };
        let (bottom, top) = if layout.overlay {
            let row = (y_hi - y_lo) * 0.03;
            let top = y_hi - row * (1.5 * index as f64 + 0.3);
            (top - row, top)
        } else {
            (y_lo, y_hi)
        };
        chart.draw_series(std::iter::once(Rectangle::new(
            [(low, bottom), (high, top)],
            BAND.mix(BAND_OPACITY).filled(),
        )))?;
    }
    Ok(())
}

/// The verdict markers, with their legend text, in the order drawn.
pub(super) const VERDICTS: [(Verdict, &str, Shape, RGBColor); 3] = [
    (Verdict::Pass, "SLO pass (95%)", Shape::Circle, CAPACITY),
    (Verdict::Uncertain, "SLO uncertain", Shape::Square, GRAY),
    (Verdict::Fail, "SLO fail (95%)", Shape::Cross, ALERT),
];

/// Each rate's verdict on each objective's line, as the steps' table says it
/// ([`crate::report::sweep::StepVerdict::on`]).
pub(super) fn verdicts(
    chart: &mut RateChart<'_, '_>,
    layout: &Layout<'_>,
    summaries: &[StepSummary],
) -> DrawResult {
    for slo in &layout.slos {
        let y = (slo.bound_ns as f64 / 1e6).log10();
        for (verdict, _, shape, color) in VERDICTS {
            let marks = summaries
                .iter()
                .filter(|s| s.slo.as_ref().is_some_and(|v| v.on(&slo.text) == verdict))
                .map(|s| (s.target_rate_per_sec, y))
                .collect();
            draw_markers(chart, shape, marks, color, 4)?;
        }
    }
    Ok(())
}

/// The rates shaded as where the capacity lies: the estimate's 90% interval (an open end
/// at the chart's edge), or without one the band from the rate held to the lowest that
/// failed.
fn band(result: &SloResult, x_max: f64) -> Option<(f64, f64)> {
    let Some(e) = result.binding_estimate() else {
        return result
            .capacity_band_per_sec
            .map(|(low, high)| (low, high.unwrap_or(x_max)));
    };
    let low = match e.interval.0 {
        RateBound::Below(_) => 0.0,
        RateBound::At(x) | RateBound::Above(x) => x,
    };
    let high = match e.interval.1 {
        RateBound::Above(_) => x_max,
        RateBound::At(x) | RateBound::Below(x) => x,
    };
    Some((low, high))
}

/// Where the `index`th sweep's capacity is marked, and how.
struct CapacityMark {
    /// The rate, in requests per second.
    rate: f64,
    /// Whether a vertical line is drawn at the rate (else only the label).
    line: bool,
    color: RGBColor,
    text: String,
}

/// The `index`th sweep's capacity: a vertical line at it (or at the searched rate) and a
/// label at the top, or, where nothing passed, only the label; prefixed with the sweep's
/// label on an overlay.
pub(super) fn capacity(
    chart: &mut RateChart<'_, '_>,
    layout: &Layout<'_>,
    index: usize,
    label: &str,
    r: &SweepReport,
    summaries: &[StepSummary],
) -> DrawResult {
    let lowest = summaries.first().map(|s| s.target_rate_per_sec);
    let Some(mark) = r
        .slo
        .as_ref()
        .and_then(|result| capacity_mark(result, lowest))
    else {
        return Ok(());
    };
    let text = if layout.overlay {
        format!("{label}: {}", mark.text)
    } else {
        mark.text
    };
    let (rate, color) = (mark.rate, mark.color);
    if mark.line {
        let line = vec![(rate, layout.y_lo), (rate, layout.y_hi)];
        draw_line(chart, line, color, 2, index % 2 == 1)?;
    }
    // Left of the line when it sits in the right half, right of it otherwise; then moved
    // in where a long label would cross the plot's edge (into the legend beside it), and
    // broken at its commas where it is wider than the plot.
    let (x, _) = chart.backend_coord(&(rate, layout.y_hi));
    let (left_edge, right_edge) = plot_edges(chart, layout);
    let room = (right_edge - left_edge - 2 * LABEL_MARGIN_PX).max(CAPACITY_CHAR_PX);
    for line in wrap(&text, (room / CAPACITY_CHAR_PX) as usize) {
        let width = CAPACITY_CHAR_PX * line.chars().count() as i32;
        let left = if rate > layout.x_max / 2.0 {
            x - 6 - width
        } else {
            x + 6
        };
        let left = left
            .min(right_edge - LABEL_MARGIN_PX - width)
            .max(left_edge + LABEL_MARGIN_PX);
        let row = layout.label_rows.get();
        layout.label_rows.set(row + 1);
        let style = font(15).color(&color).pos(Pos::new(HPos::Left, VPos::Top));
        draw_text(
            chart,
            (rate, layout.y_hi),
            line,
            (left - x, 4 + CAPACITY_LINE_PX * row),
            style,
        )?;
    }
    Ok(())
}

/// The line and its label: the capacity, or where the band ends without one, or the
/// searched rate that did not hold; `None` when the result names none of them.
/// `lowest` is the sweep's lowest rate.
fn capacity_mark(result: &SloResult, lowest: Option<f64>) -> Option<CapacityMark> {
    if let Some(e) = result.binding_estimate() {
        return Some(estimate_mark(e, result.capacity_per_sec));
    }
    // What limited the band, unless nothing was named, in words (the JSON's `rates`
    // alone reads as a cut-off label).
    let limit = result
        .limited_by
        .filter(|l| *l != Limit::Bottleneck(crate::report::Bottleneck::None))
        .map(|l| match l {
            Limit::Rates => " (no higher rate swept)".to_string(),
            Limit::Noise => " (the runs' noise)".to_string(),
            Limit::Bottleneck(b) => format!(" ({} bound)", b.name()),
        })
        .unwrap_or_default();
    let (rate, line, color, text) = match (
        result.capacity_per_sec,
        result.capacity_band_per_sec,
        result.searched_per_sec,
    ) {
        (Some(c), band, _) => {
            let band = match band {
                Some((_, Some(h))) => format!(", band to {}/s{limit}", rate_label(h)),
                Some((_, None)) => format!(", band open above{limit}"),
                None => String::new(),
            };
            let text = format!("capacity {}/s{band}", rate_label(c));
            (c, true, CAPACITY, text)
        }
        (None, Some((_, Some(h))), _) if Some(h) == lowest => {
            let text = format!("capacity below {}/s, the lowest rate{limit}", rate_label(h));
            (h, false, ALERT, text)
        }
        (None, Some((_, high)), _) => {
            let to = high.map_or("open above".to_string(), |h| {
                format!("0-{}/s", rate_label(h))
            });
            let text = format!("no rate passed with confidence, band {to}{limit}");
            (high.unwrap_or(0.0), false, ALERT, text)
        }
        (None, None, Some(s)) => {
            let text = format!("searched {}/s, did not hold", rate_label(s));
            (s, true, ALERT, text)
        }
        (None, None, None) => return None,
    };
    Some(CapacityMark {
        rate,
        line,
        color,
        text,
    })
}

/// The estimate's line and label, as the text says it in short: `capacity 57.7k/s (90%:
/// 53.2k to 62.2k/s), held at 24.6k/s`. A crossing beyond the rates fitted has no line,
/// and is said with the rate it lies beyond.
fn estimate_mark(e: &ObjectiveEstimate, held: Option<f64>) -> CapacityMark {
    let end = |b: RateBound| match b {
        RateBound::At(x) => rate_label(x),
        RateBound::Below(x) => format!("under {}", rate_label(x)),
        RateBound::Above(x) => format!("over {}", rate_label(x)),
    };
    let (rate, line, color, figure) = match e.crossing {
        RateBound::At(x) => (x, true, CAPACITY, rate_label(x)),
        RateBound::Above(x) => (x, false, CAPACITY, format!("over {}", rate_label(x))),
        RateBound::Below(x) => (x, false, ALERT, format!("under {}", rate_label(x))),
    };
    let held = held.map_or_else(
        || ", no rate held".to_string(),
        |h| format!(", held at {}/s", rate_label(h)),
    );
    // An interval open on the crossing's side at both ends adds nothing to it.
    let interval = match e.interval {
        (low, high) if low == high && low == e.crossing => String::new(),
        (low, high) if low == high => format!(" (90%: {}/s)", end(low)),
        (low, high) => format!(" (90%: {} to {}/s)", end(low), end(high)),
    };
    CapacityMark {
        rate,
        line,
        color,
        text: format!("capacity {figure}/s{interval}{held}"),
    }
}

/// Each open-loop step's bottleneck, written under it along the foot of the chart, and
/// the rates from the sweep's saturation on shaded and labelled: the landmark the text
/// names (`saturation at ... req/s`), read from the same field, so the two agree.
pub(super) fn bottleneck_marks(
    chart: &mut RateChart<'_, '_>,
    steps: &[(f64, &Measurement)],
    saturation_per_sec: Option<f64>,
    layout: &Layout<'_>,
) -> DrawResult {
    let (y_lo, y_hi) = (layout.y_lo, layout.y_hi);
    if let Some(from) = saturation_per_sec {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(from, y_lo), (layout.x_max, y_hi)],
            SATURATED.filled(),
        )))?;
        let style = font(13)
            .color(&ALERT)
            .pos(Pos::new(HPos::Left, VPos::Bottom));
        draw_text(chart, (from, y_lo), "saturation", (4, -20), style)?;
    }
    // Steps in order of rate; a label that would touch the last one drawn is left out
    // (a search's steps crowd near the capacity, and share its verdict).
    let mut by_rate: Vec<&(f64, &Measurement)> = steps.iter().collect();
    by_rate.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut last_right = i32::MIN;
    for (rate, m) in by_rate {
        let short = match m.report.bottleneck.as_ref().map(|b| b.verdict) {
            Some(Bottleneck::Server) => "server",
            // Whole words: an abbreviation under a step is a puzzle to a reader.
            Some(Bottleneck::Generator) => "generator",
            Some(Bottleneck::ClientQueue) => "queue",
            Some(Bottleneck::Outage) => "outage",
            Some(Bottleneck::Host) => "host",
            Some(Bottleneck::NetworkKernel) => "network",
            Some(Bottleneck::None) | None => continue,
        };
        let (x, _) = chart.backend_coord(&(*rate, y_lo));
        let half_width = 6 * short.len() as i32 / 2 + 3;
        if x - half_width < last_right {
            continue;
        }
        last_right = x + half_width;
        let style = font(11)
            .color(&INK)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        draw_text(chart, (*rate, y_lo), short, (0, -4), style)?;
    }
    Ok(())
}

/// The floor (a ring at the first objective's pooled percentile at the lowest rate,
/// labelled beside it where the label covers no marker) and the knee (a dotted vertical
/// line, labelled), when the sweep found them.
pub(super) fn landmarks(
    chart: &mut RateChart<'_, '_>,
    layout: &Layout<'_>,
    r: &SweepReport,
    summaries: &[StepSummary],
) -> DrawResult {
    let Some(marks) = r.slo.as_ref().map(|s| s.landmarks) else {
        return Ok(());
    };
    if let Some(floor) = marks.floor
        && let Some(y) = log_ms(floor.value_ns)
    {
        let at = (floor.rate_per_sec, y.clamp(layout.y_lo, layout.y_hi));
        draw_markers(chart, Shape::Ring, vec![at], GRAY, 6)?;
        let text = format!("floor {}", ms_label(floor.value_ns));
        let markers = marker_pixels(chart, layout, r, summaries);
        let (dx, dy) = floor_label_offset(chart.backend_coord(&at), &text, &markers);
        let style = font(12).color(&GRAY).pos(Pos::new(HPos::Left, VPos::Top));
        draw_text(chart, at, text, (dx, dy), style)?;
    }
    if let Some(knee) = marks.knee_per_sec {
        let line = vec![(knee, layout.y_lo), (knee, layout.y_hi)];
        draw_line(chart, line, GRAY, 1, true)?;
        let style = font(12)
            .color(&GRAY)
            .pos(Pos::new(HPos::Left, VPos::Center));
        draw_text(
            chart,
            (knee, (layout.y_lo + layout.y_hi) / 2.0),
            "knee",
            (4, 0),
            style,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
