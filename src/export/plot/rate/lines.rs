//! A sweep's lines and points on the latency-vs-rate chart: each percentile's line through
//! the value pooled over each rate's runs (and, alone on the chart, the median of their
//! service times), each rate's
//! 95% intervals, rings on rates with a failed self-check, the rate-capped and closed-loop
//! points, and the closed-loop points' labels.

use plotters::prelude::RGBColor;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Layout, RateChart};
use crate::export::plot::{
    ALERT, DrawResult, PERCENTILE_COLORS, PERCENTILES, Pick, Shape, Whisker, draw_line,
    draw_markers, draw_text, draw_whiskers, font, log_ms, median_log_ms, metric, rate_groups,
};
use crate::record::Metric;
use crate::report::Percentile;
use crate::report::sweep::{Kind, Measurement, StepSummary, SweepReport};

/// A closed-loop point's label (13-point sans-serif, drawn about 10.5 px high in the
/// SVG): a generous width per character and the height of one line, in pixels.
const LABEL_CHAR_PX: i32 = 7;
const LABEL_LINE_PX: i32 = 13;

/// Marker shapes of overlaid sweeps, by input.
const INPUT_SHAPES: [Shape; 4] = [Shape::Circle, Shape::Triangle, Shape::Square, Shape::Cross];

/// The marker of the `index`th input's steps.
pub(super) fn input_shape(index: usize) -> Shape {
    INPUT_SHAPES[index % INPUT_SHAPES.len()]
}

/// Runs grouped by target rate, by increasing rate.
type Groups<'r> = [(f64, Vec<&'r Measurement>)];

/// Every percentile of [`PERCENTILES`] for the `index`th input, one after another: its
/// lines, intervals and points.
pub(super) fn percentile_lines(
    chart: &mut RateChart<'_, '_>,
    layout: &Layout<'_>,
    index: usize,
    r: &SweepReport,
    summaries: &[StepSummary],
) -> DrawResult {
    let groups = rate_groups(r);
    for (p, (name, get)) in PERCENTILES.iter().enumerate() {
        let color = PERCENTILE_COLORS[p];
        let response = rate_lines(
            chart,
            (layout, index),
            &groups,
            summaries,
            (name, *get),
            color,
        )?;
        let whiskers = whiskers(summaries, name, (layout.y_lo, layout.y_hi));
        let dx = if layout.overlay {
            0
        } else {
            3 * (p as i32 - 2)
        };
        draw_whiskers(chart, &whiskers, color, dx)?;
        // A rate with a run whose self-checks failed is ringed: its numbers are suspect.
        let invalid = groups
            .iter()
            .filter(|(_, group)| group.iter().any(|m| !m.report.valid))
            .filter_map(|(rate, _)| response.iter().find(|pt| pt.0 == *rate).copied())
            .collect();
        draw_markers(chart, Shape::Ring, invalid, ALERT, 6)?;
        if !layout.overlay {
            closed_loop_points(chart, r, *get, color)?;
        }
    }
    Ok(())
}

/// One percentile's lines: response time (a marker at each rate, dashed for every second
/// input) through the value pooled over each rate's runs, where its whisker is centred
/// ([`response_points`]), and, for one sweep alone,
/// service time (dashed) through the median of the runs, which have no pooled service
/// time. The lines join the coarse steps only: the search's rates crowd near the
/// capacity, where the generator or the host often limit a run, and a line through them
/// zigzags into a tangle; they keep their markers. Returns the response-time points.
fn rate_lines(
    chart: &mut RateChart<'_, '_>,
    (layout, index): (&Layout<'_>, usize),
    groups: &Groups<'_>,
    summaries: &[StepSummary],
    (name, get): (&str, Pick),
    color: RGBColor,
) -> Result<Vec<(f64, f64)>, Box<dyn std::error::Error>> {
    let coarse = |group: &Vec<&Measurement>| group.iter().any(|m| m.kind == Kind::Step);
    let joined = groups.iter().filter(|(_, g)| coarse(g)).count() >= 2;
    let on_line =
        |rate: f64| !joined || groups.iter().any(|(r, group)| *r == rate && coarse(group));
    if !layout.overlay {
        let service = groups
            .iter()
            .filter(|(rate, _)| on_line(*rate))
            .filter_map(|(rate, group)| {
                Some((
                    *rate,
                    median_log_ms(group, |m| Some(get(metric(m, Metric::Service)?)))?,
                ))
            })
            .collect();
        draw_line(chart, service, color, 1, true)?;
    }
    let response = response_points(groups, summaries, (name, get));
    let line = response.iter().copied().filter(|p| on_line(p.0)).collect();
    draw_line(chart, line, color, 2, index % 2 == 1)?;
    draw_markers(chart, input_shape(index), response.clone(), color, 3)?;
    Ok(response)
}

/// Each rate's response time at the percentile called `name` (read from a run's
/// latencies by `get`) where its marker goes: pooled over exactly the runs the rate's
/// verdict pools, or the median of its runs where it has no pooled value.
pub(super) fn response_points(
    groups: &Groups<'_>,
    summaries: &[StepSummary],
    (name, get): (&str, Pick),
) -> Vec<(f64, f64)> {
    let pooled = pooled_points(summaries, name);
    groups
        .iter()
        .filter_map(|(rate, group)| {
            let at = pooled.iter().find(|p| p.0 == *rate).map(|p| p.1);
            let y =
                at.or_else(|| median_log_ms(group, |m| Some(get(metric(m, Metric::Response)?))))?;
            Some((*rate, y))
        })
        .collect()
}

/// Each rate's response time at the percentile called `name`, pooled over exactly the
/// runs its verdict pools, on the chart's log axis.
fn pooled_points(summaries: &[StepSummary], name: &str) -> Vec<(f64, f64)> {
    let Some(key) = Percentile::ALL.into_iter().find(|q| q.label() == name) else {
        return Vec::new();
    };
    summaries
        .iter()
        .filter_map(|s| {
            let y = log_ms(s.response.get(key.key())?.value_ns)?;
            Some((s.target_rate_per_sec, y))
        })
        .collect()
}

/// Each rate's 95% interval of the percentile called `name` (the wider of within a run
/// and across its runs), clipped to the latency axis `(y_lo, y_hi)`.
fn whiskers(summaries: &[StepSummary], name: &str, (y_lo, y_hi): (f64, f64)) -> Vec<Whisker> {
    let Some(key) = Percentile::ALL.into_iter().find(|q| q.label() == name) else {
        return Vec::new();
    };
    summaries
        .iter()
        .filter_map(|s| {
            let ci = s.response.get(key.key())?.ci95_ns?;
            let median = log_ms(s.response.get(key.key())?.value_ns)?;
            let low = log_ms(ci.low())?.max(y_lo);
            let high = ci.high().and_then(log_ms).map(|h| h.min(y_hi));
            Some((s.target_rate_per_sec, low, high, median))
        })
        .collect()
}

/// One percentile of the rate-capped runs (triangles at their target rate) and of the
/// closed-loop runs (crosses at their throughput).
fn closed_loop_points(
    chart: &mut RateChart<'_, '_>,
    r: &SweepReport,
    get: Pick,
    color: RGBColor,
) -> DrawResult {
    let capped = r.runs.iter().filter(|m| m.kind == Kind::RateCapped);
    let points = capped
        .filter_map(|m| {
            Some((
                m.target_rate_per_sec?,
                log_ms(get(metric(m, Metric::Response)?))?,
            ))
        })
        .collect();
    draw_markers(chart, Shape::Triangle, points, color, 5)?;
    let points = closed_loop_runs(r)
        .filter_map(|m| {
            Some((
                m.report.throughput_per_sec,
                log_ms(get(metric(m, Metric::Response)?))?,
            ))
        })
        .collect();
    draw_markers(chart, Shape::Cross, points, color, 5)
}

/// The closed-loop runs of a sweep, its maximum included.
fn closed_loop_runs(r: &SweepReport) -> impl Iterator<Item = &Measurement> {
    r.runs
        .iter()
        .filter(|m| matches!(m.kind, Kind::ClosedLoop | Kind::ClosedLoopMax))
}

/// Each closed-loop point's connection count above its maximum. Labels that would land on
/// each other (the closed-loop maximum and the closed loop at the same connection count
/// can) are stacked, each a line above the last.
pub(super) fn closed_loop_labels(chart: &mut RateChart<'_, '_>, r: &SweepReport) -> DrawResult {
    let mut placed: Vec<(i32, i32, i32)> = Vec::new(); // left, right and bottom, in pixels
    for m in closed_loop_runs(r) {
        let Some(top) = metric(m, Metric::Response).and_then(|l| log_ms(l.max_ns)) else {
            continue;
        };
        let text = if m.kind == Kind::ClosedLoopMax {
            format!("c={} (100%)", m.connections)
        } else {
            format!("c={}", m.connections)
        };
        let (x, y) = chart.backend_coord(&(m.report.throughput_per_sec, top));
        let half_width = LABEL_CHAR_PX * text.chars().count() as i32 / 2;
        let mut dy = -8;
        while placed.iter().any(|&(l, r, b)| {
            x - half_width < r && x + half_width > l && (y + dy - b).abs() < LABEL_LINE_PX
        }) {
            dy -= LABEL_LINE_PX;
        }
        placed.push((x - half_width, x + half_width, y + dy));
        let style = font(13).pos(Pos::new(HPos::Center, VPos::Bottom));
        draw_text(
            chart,
            (m.report.throughput_per_sec, top),
            text,
            (0, dy),
            style,
        )?;
    }
    Ok(())
}
