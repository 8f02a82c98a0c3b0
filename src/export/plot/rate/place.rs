//! Where the latency-vs-rate chart's labels go, in pixels: the capacity's kept inside
//! the plot (off the legend beside it) and broken at its commas when wider, the floor's
//! beside its ring where it covers no marker.

use super::{Layout, RateChart};
use crate::export::plot::{PERCENTILES, log_ms, metric, rate_groups};
use crate::record::Metric;
use crate::report::sweep::{StepSummary, SweepReport};

/// A capacity label (15-point sans-serif, about 12 px in the SVG): a generous width per
/// character, the height of one line, and the room kept from the plot's edges, in pixels.
pub(super) const CAPACITY_CHAR_PX: i32 = 8;
pub(super) const CAPACITY_LINE_PX: i32 = 18;
pub(super) const LABEL_MARGIN_PX: i32 = 4;

/// The plot's left and right edges, in pixels.
pub(super) fn plot_edges(chart: &RateChart<'_, '_>, layout: &Layout<'_>) -> (i32, i32) {
    let (left, _) = chart.backend_coord(&(0.0, layout.y_hi));
    let (right, _) = chart.backend_coord(&(layout.x_max, layout.y_hi));
    (left, right)
}

/// `text` in lines of at most `width` characters, broken after its commas (a part
/// longer than a line is a line of its own).
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for part in text.split_inclusive(", ") {
        if !line.is_empty() && line.chars().count() + part.trim_end().chars().count() > width {
            lines.push(line.trim_end().to_string());
            line.clear();
        }
        line.push_str(part);
    }
    if !line.trim().is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// A floor label (12-point sans-serif, about 10 px in the SVG): a generous width per
/// character and its height, in pixels; and the half-size of the box kept clear around
/// each marker (the largest is 6 px in radius).
const FLOOR_CHAR_PX: i32 = 7;
const FLOOR_LINE_PX: i32 = 12;
const MARKER_PX: i32 = 7;

/// The pixel of every marker the chart draws for one sweep: each rate's percentile
/// points, the verdicts on the objectives' lines, and the closed-loop points.
pub(super) fn marker_pixels(
    chart: &RateChart<'_, '_>,
    layout: &Layout<'_>,
    r: &SweepReport,
    summaries: &[StepSummary],
) -> Vec<(i32, i32)> {
    let mut points = Vec::new();
    let groups = rate_groups(r);
    for (name, get) in PERCENTILES {
        points.extend(super::lines::response_points(
            &groups,
            summaries,
            (name, get),
        ));
    }
    for slo in &layout.slos {
        let y = (slo.bound_ns as f64 / 1e6).log10();
        points.extend(summaries.iter().map(|s| (s.target_rate_per_sec, y)));
    }
    for m in r.runs.iter().filter(|m| !m.kind.is_open_loop()) {
        let x = m.target_rate_per_sec.unwrap_or(m.report.throughput_per_sec);
        for (_, get) in PERCENTILES {
            if let Some(y) = metric(m, Metric::Response).and_then(|l| log_ms(get(l))) {
                points.push((x, y));
                points.push((m.report.throughput_per_sec, y));
            }
        }
    }
    points
        .into_iter()
        .map(|(x, y)| chart.backend_coord(&(x, y.clamp(layout.y_lo, layout.y_hi))))
        .collect()
}

/// Where the floor's label goes, as an offset of its top-left corner from the floor's
/// pixel `at`: the first of a few places beside the ring (right of it and just above,
/// just below, then further up or down) whose box covers no marker of `markers`; the
/// first when every one does.
pub(super) fn floor_label_offset(at: (i32, i32), text: &str, markers: &[(i32, i32)]) -> (i32, i32) {
    let width = FLOOR_CHAR_PX * text.chars().count() as i32;
    // Right of the ring and clear of the whiskers beside the rate's markers (9 px out).
    let dx = 14;
    let above = -4 - FLOOR_LINE_PX;
    let candidates = (0..8).flat_map(|k| {
        let step = k * (FLOOR_LINE_PX + 2);
        [(dx, above - step), (dx, 4 + step)]
    });
    let clear = |(ox, oy): (i32, i32)| {
        let (left, top) = (at.0 + ox, at.1 + oy);
        markers.iter().all(|&(mx, my)| {
            mx + MARKER_PX <= left
                || mx - MARKER_PX >= left + width
                || my + MARKER_PX <= top
                || my - MARKER_PX >= top + FLOOR_LINE_PX
        })
    };
    let mut candidates = candidates.peekable();
    let first = candidates.peek().copied().unwrap_or((dx, above));
    candidates.find(|c| clear(*c)).unwrap_or(first)
}
