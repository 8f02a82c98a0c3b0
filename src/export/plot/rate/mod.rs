//! Response-time percentiles versus offered rate, with service time, rate-capped and
//! closed-loop points, SLO lines, each rate's 95% intervals and verdict, and the
//! capacity with its band; one sweep or several overlaid. Response-time lines run through
//! the value pooled over each rate's runs, where the rate's interval is centred.
//!
//! This file lays the chart out (its axis ranges and objectives) and draws in order: the
//! objectives, the shading beneath the lines, then each sweep in turn. `lines.rs` draws a
//! sweep's percentile lines and points, `marks.rs` the objectives, verdicts, capacity and
//! bottlenecks, `place.rs` finds room for the capacity's and the floor's labels, and
//! `entries.rs` chooses the legend's rows.

mod entries;
mod lines;
mod marks;
mod place;

use super::axis::{Linear, XyChart};
use super::{
    Area, Axes, DrawResult, LogAxis, PERCENTILES, Ticks, chart_on, frame, legend, metric,
    open_steps, rate_label, subtitle_of,
};
use crate::config::slo::Slo;
use crate::record::Metric;
use crate::report::sweep::{Kind, SweepReport};

/// The chart these steps draw on: a linear rate axis, a log10 millisecond axis.
type RateChart<'a, 'b> = XyChart<'a, 'b, Linear, Ticks>;

/// What every step of drawing the chart needs to know about its inputs and axes.
struct Layout<'r> {
    /// The sweeps drawn, with their labels.
    inputs: &'r [(String, &'r SweepReport)],
    /// Several sweeps overlaid: service time, closed-loop points and verdicts are left out.
    overlay: bool,
    /// The right end of the rate axis, in requests per second.
    x_max: f64,
    /// The bottom and top of the latency axis, in log10 ms.
    y_lo: f64,
    y_hi: f64,
    /// Every input's objectives, each once, in the order first seen.
    slos: Vec<&'r Slo>,
    /// Lines of capacity labels drawn so far along the top, each sweep's below the last's.
    label_rows: std::cell::Cell<i32>,
}

/// Response-time percentiles versus offered rate.
pub(super) fn latency_vs_rate(
    root: &Area<'_>,
    title: Option<&str>,
    inputs: &[(String, &SweepReport)],
) -> DrawResult {
    let (plot, legend_area) = frame(
        root,
        title,
        "Response-time percentiles vs offered rate",
        &subtitle_of(inputs),
    )?;
    let (x_max, axis) = axis_ranges(inputs);
    let mut chart = chart_on(&plot, 16, Linear::new(0.0..x_max), axis.coord())?;
    Axes::response_time("offered rate (requests/s)", &|v| rate_label(*v))
        .x_labels(8)
        .draw(&mut chart)?;
    let layout = Layout {
        inputs,
        overlay: inputs.len() > 1,
        x_max,
        y_lo: axis.lo as f64,
        y_hi: axis.hi as f64,
        slos: objectives(inputs),
        label_rows: std::cell::Cell::new(0),
    };
    marks::slo_lines(&mut chart, &layout)?;
    // Beneath the lines, so the shading covers none of them.
    if let [(_, r)] = inputs {
        let saturation = r.slo.as_ref().and_then(|s| s.landmarks.saturation_per_sec);
        marks::bottleneck_marks(&mut chart, &open_steps(r), saturation, &layout)?;
    }
    marks::capacity_bands(&mut chart, &layout)?;
    if let [(_, r)] = inputs {
        marks::landmarks(&mut chart, &layout, r, &crate::judge::summary::steps_of(r))?;
    }
    for (index, (label, r)) in inputs.iter().enumerate() {
        draw_sweep(&mut chart, &layout, index, label, r)?;
    }
    legend(
        &legend_area,
        "response time",
        &entries::legend_entries(&layout),
    )
}

/// The right end of the rate axis (every step's offered or achieved rate, and, for one
/// sweep, every closed-loop point's throughput, with room) and the latency decades that
/// hold every drawn percentile and objective.
fn axis_ranges(inputs: &[(String, &SweepReport)]) -> (f64, LogAxis) {
    let overlay = inputs.len() > 1;
    let mut xs = vec![1.0f64];
    let mut ys_ms = Vec::new();
    for (_, r) in inputs {
        for (rate, m) in open_steps(r) {
            xs.push(rate.max(m.report.achieved_rate_per_sec));
            for name in [Metric::Response, Metric::Service] {
                if let Some(l) = metric(m, name).filter(|_| name == Metric::Response || !overlay) {
                    ys_ms.extend(PERCENTILES.iter().map(|(_, get)| get(l) as f64 / 1e6));
                }
            }
        }
        let closed = r.runs.iter().filter(|m| {
            matches!(
                m.kind,
                Kind::RateCapped | Kind::ClosedLoop | Kind::ClosedLoopMax
            )
        });
        for m in closed.filter(|_| !overlay) {
            xs.push(
                m.target_rate_per_sec
                    .unwrap_or(0.0)
                    .max(m.report.throughput_per_sec),
            );
            if let Some(l) = metric(m, Metric::Response) {
                ys_ms.extend(PERCENTILES.iter().map(|(_, get)| get(l) as f64 / 1e6));
            }
        }
        ys_ms.extend(r.plan.slos.iter().map(|s| s.bound_ns as f64 / 1e6));
    }
    let x_max = xs.iter().copied().fold(0.0, f64::max) * 1.08;
    (x_max, LogAxis::covering(ys_ms))
}

/// Every input's objectives, each drawn once.
fn objectives<'r>(inputs: &[(String, &'r SweepReport)]) -> Vec<&'r Slo> {
    let mut slos: Vec<&Slo> = Vec::new();
    for slo in inputs.iter().flat_map(|(_, r)| &r.plan.slos) {
        if !slos.iter().any(|s| s.text == slo.text) {
            slos.push(slo);
        }
    }
    slos
}

/// One sweep, the `index`th input: its percentile lines and points, then, alone on the
/// chart, its closed-loop labels and verdicts, then its capacity.
fn draw_sweep(
    chart: &mut RateChart<'_, '_>,
    layout: &Layout<'_>,
    index: usize,
    label: &str,
    r: &SweepReport,
) -> DrawResult {
    let summaries = crate::judge::summary::steps_of(r);
    lines::percentile_lines(chart, layout, index, r, &summaries)?;
    if !layout.overlay {
        lines::closed_loop_labels(chart, r)?;
        marks::verdicts(chart, layout, &summaries)?;
    }
    marks::capacity(chart, layout, index, label, r, &summaries)
}
