//! p50, p99 and max of each interval over the whole sweep, one run after another, with
//! the closed-loop runs on a gray band and each run labelled at its start.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{Linear, XyChart};
use super::{
    Area, Axes, DrawResult, LEGEND_WIDTH, LogAxis, PERCENTILE_COLORS, SIZE, Shape, Swatch, Ticks,
    chart_on, draw_line, draw_markers, draw_text, font, frame, legend, log_ms, rate_label,
    subtitle,
};
use crate::report::IntervalSummary;
use crate::report::sweep::{Kind, SweepReport};

/// The chart these steps draw on: seconds along x, a log10 millisecond axis up y.
type TimeChart<'a, 'b> = XyChart<'a, 'b, Linear, Ticks>;

/// Reads one value, in nanoseconds, from an interval.
type IntervalValue = fn(&IntervalSummary) -> u64;

/// The values drawn per interval: name, index into [`PERCENTILE_COLORS`], and the value.
const METRICS: [(&str, usize, IntervalValue); 3] = [
    ("p50", 0, |iv| iv.p50_ns),
    ("p99", 2, |iv| iv.p99_ns),
    ("max", 5, |iv| iv.max_ns),
];

/// The band behind closed-loop runs.
const CLOSED_LOOP_BAND: RGBColor = RGBColor(236, 236, 236);

/// The band behind batches in which the host made the server or the generator wait.
const HOST_WAIT_BAND: RGBColor = RGBColor(253, 224, 196);

/// p50, p99 and max of each interval over the whole sweep.
pub(super) fn over_time(root: &Area<'_>, title: Option<&str>, report: &SweepReport) -> DrawResult {
    let (plot, legend_area) = frame(
        root,
        title,
        "Response time per interval over the sweep",
        &subtitle(report),
    )?;
    let (t_max, axis) = axis_ranges(report);
    let mut chart = chart_on(&plot, 16, Linear::new(0.0..t_max), axis.coord())?;
    // Beneath the grid, so its lines show through.
    closed_loop_bands(&mut chart, report, t_max, &axis)?;
    let host_waits = host_bands(&mut chart, report, t_max, &axis)?;
    let seconds = super::seconds_label(t_max);
    Axes::response_time("time since the sweep started (s)", &seconds)
        .x_labels(10)
        .draw(&mut chart)?;
    interval_lines(&mut chart, report)?;
    run_labels(&mut chart, report, t_max, axis.hi as f64)?;
    let mut entries: Vec<(String, Swatch)> = METRICS
        .iter()
        .map(|(name, p, _)| {
            let swatch = Swatch::dotted(PERCENTILE_COLORS[*p], 2);
            (format!("{name} per interval"), swatch)
        })
        .collect();
    entries.push(("open-loop step".into(), Swatch::Band(WHITE)));
    entries.push(("closed-loop run".into(), Swatch::Band(CLOSED_LOOP_BAND)));
    if host_waits {
        entries.push((
            "host wait (docs/host.md)".into(),
            Swatch::Band(HOST_WAIT_BAND),
        ));
    }
    legend(&legend_area, "response time", &entries)
}

/// The end of the time axis (the last interval's or run's end, with room) and the
/// latency decades that hold every interval's p50, p99 and max.
fn axis_ranges(report: &SweepReport) -> (f64, LogAxis) {
    let mut t_max = 1.0f64;
    let mut all_ms = Vec::new();
    for m in &report.runs {
        for iv in &m.report.intervals {
            t_max = t_max.max(m.started_secs + iv.start_secs + iv.length_secs);
            all_ms.extend([iv.p50_ns, iv.p99_ns, iv.max_ns].map(|ns| ns as f64 / 1e6));
        }
        t_max = t_max.max(m.started_secs + m.report.measured_secs);
    }
    (t_max * 1.02, LogAxis::covering(all_ms))
}

/// Closed-loop runs sit on a gray band, from their start to the next run's, so the
/// open-loop steps stand apart.
fn closed_loop_bands(
    chart: &mut TimeChart<'_, '_>,
    report: &SweepReport,
    t_max: f64,
    axis: &LogAxis,
) -> DrawResult {
    let (y_lo, y_hi) = (axis.lo as f64, axis.hi as f64);
    for (i, m) in report.runs.iter().enumerate() {
        if !m.kind.is_open_loop() {
            let end = report.runs.get(i + 1).map_or(t_max, |n| n.started_secs);
            chart.plotting_area().draw(&Rectangle::new(
                [
                    (on_axis(m.started_secs, t_max), y_lo),
                    (on_axis(end, t_max), y_hi),
                ],
                CLOSED_LOOP_BAND.filled(),
            ))?;
        }
    }
    Ok(())
}

/// `secs` held to the time axis: a band of a hand-edited file may start before the sweep
/// or end past it, and is drawn over the axis only, not across the labels beside it.
fn on_axis(secs: f64, t_max: f64) -> f64 {
    secs.clamp(0.0, t_max)
}

/// Batches in which the host made the server or the generator wait for a CPU (see
/// `judge::host`), on an orange band, adjacent ones as one; whether there were any.
fn host_bands(
    chart: &mut TimeChart<'_, '_>,
    report: &SweepReport,
    t_max: f64,
    axis: &LogAxis,
) -> Result<bool, Box<dyn std::error::Error>> {
    let (y_lo, y_hi) = (axis.lo as f64, axis.hi as f64);
    let mut any = false;
    for m in &report.runs {
        let Some(host) = &m.report.host else { continue };
        let Some(tail) = &host.tail else { continue };
        let batch_secs = host.batches.batch_ms / 1e3;
        let mut spans: Vec<(u32, u32)> = Vec::new();
        for &i in &tail.waiting {
            match spans.last_mut() {
                Some(last) if last.1.checked_add(1) == Some(i) => last.1 = i,
                _ => spans.push((i, i)),
            }
        }
        for (first, last) in spans {
            any = true;
            let from = m.started_secs + f64::from(first) * batch_secs;
            let to = m.started_secs + (f64::from(last) + 1.0) * batch_secs;
            chart.plotting_area().draw(&Rectangle::new(
                [(on_axis(from, t_max), y_lo), (on_axis(to, t_max), y_hi)],
                HOST_WAIT_BAND.filled(),
            ))?;
        }
    }
    Ok(any)
}

/// A run's intervals as drawn: all but a last one shorter than half the others, the
/// drain after sending stopped, whose few light replies would read as a dip.
pub(super) fn drawn_intervals(intervals: &[IntervalSummary]) -> &[IntervalSummary] {
    let longest = intervals
        .iter()
        .map(|iv| iv.length_secs)
        .fold(0.0, f64::max);
    match intervals.split_last() {
        Some((last, rest)) if !rest.is_empty() && last.length_secs < longest / 2.0 => rest,
        _ => intervals,
    }
}

/// Each of [`METRICS`] as a line through every run's intervals (at their midpoints).
fn interval_lines(chart: &mut TimeChart<'_, '_>, report: &SweepReport) -> DrawResult {
    for (_, p, value) in METRICS {
        let color = PERCENTILE_COLORS[p];
        for m in &report.runs {
            let points: Vec<(f64, f64)> = drawn_intervals(&m.report.intervals)
                .iter()
                .filter_map(|iv| {
                    Some((
                        m.started_secs + iv.start_secs + iv.length_secs / 2.0,
                        log_ms(value(iv))?,
                    ))
                })
                .collect();
            draw_line(chart, points.clone(), color, 2, false)?;
            draw_markers(chart, Shape::Circle, points, color, 2)?;
        }
    }
    Ok(())
}

/// Run labels, rotated along each run's start below the top edge `y_hi`, skipped where
/// they would overlap (the heatmap's too).
pub(super) fn run_labels(
    chart: &mut TimeChart<'_, '_>,
    report: &SweepReport,
    t_max: f64,
    y_hi: f64,
) -> DrawResult {
    let mut last_x = f64::NEG_INFINITY;
    let min_gap = t_max * 16.0 / (SIZE.0 - LEGEND_WIDTH) as f64;
    for m in &report.runs {
        if m.started_secs - last_x < min_gap {
            continue;
        }
        last_x = m.started_secs;
        let text = match (m.kind, m.target_rate_per_sec) {
            (Kind::RateCapped, Some(r)) => format!("capped {}", rate_label(r)),
            (Kind::ClosedLoop | Kind::ClosedLoopMax, _) => format!("c={}", m.connections),
            (Kind::Confirm, Some(r)) => format!("{} again", rate_label(r)),
            (_, Some(r)) => rate_label(r),
            (_, None) => String::new(),
        };
        let style = font(12)
            .color(&RGBColor(110, 110, 110))
            .transform(FontTransform::Rotate90)
            .pos(Pos::new(HPos::Left, VPos::Top));
        draw_text(chart, (m.started_secs, y_hi), text, (14, 4), style)?;
    }
    Ok(())
}
