//! Achieved versus target rate, with y = x and the saturation point; one sweep or
//! several overlaid.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{Linear, XyChart};
use super::{
    ALERT, Area, Axes, CAPACITY, DrawResult, GRAY, INPUT_COLORS, PERCENTILE_COLORS, Shape, Swatch,
    chart_on, draw_line, draw_markers, draw_text, font, frame, legend, open_steps, rate_label,
    subtitle_of,
};
use crate::judge::saturation::{SATURATION_FRACTION, achieved_fraction};
use crate::report::sweep::{Kind, Measurement, SweepReport};
use crate::stats::median::median_f64;

/// The chart these steps draw on: linear rates on both axes.
type RatesChart<'a, 'b> = XyChart<'a, 'b, Linear, Linear>;

/// A label pointing at `(x, y)`, drawn after every sweep's lines so none covers it.
struct Note {
    x: f64,
    y: f64,
    text: String,
    color: RGBColor,
    /// Set just above its point (a label along a line), not centred on it.
    above: bool,
}

/// Where the sweep saturated, with the median rate its runs there sent: the step the
/// sweep's own finding names (`slo.landmarks`), or else the first coarse step, by
/// rate, that achieved under [`SATURATION_FRACTION`] of its planned rate.
fn saturation_point(report: &SweepReport) -> Option<(f64, f64)> {
    let named = report
        .slo
        .as_ref()
        .and_then(|s| s.landmarks.saturation_per_sec);
    if let Some(rate) = named
        && let Some(step) = report.steps.iter().find(|s| s.target_rate_per_sec == rate)
    {
        return Some((rate, step.achieved_rate_per_sec));
    }
    open_steps(report)
        .into_iter()
        .filter(|(_, m)| m.kind == Kind::Step)
        .find(|(_, m)| achieved_fraction(&m.report) < SATURATION_FRACTION)
        .map(|(rate, m)| (rate, m.report.achieved_rate_per_sec))
}

/// Achieved versus target rate, with y = x and the saturation point.
pub(super) fn achieved_vs_target(
    root: &Area<'_>,
    title: Option<&str>,
    inputs: &[(String, &SweepReport)],
) -> DrawResult {
    let overlay = inputs.len() > 1;
    let (plot, legend_area) = frame(root, title, "Achieved vs target rate", &subtitle_of(inputs))?;
    let max = axis_max(inputs);
    let mut chart = chart_on(&plot, 20, Linear::new(0.0..max.0), Linear::new(0.0..max.1))?;
    let rate = |v: &f64| rate_label(*v);
    Axes::new(
        "target rate (requests/s)",
        &rate,
        "achieved rate (requests/s)",
        &rate,
    )
    .x_labels(8)
    .y_labels(8)
    .draw(&mut chart)?;
    let diagonal = max.0.min(max.1);
    draw_line(
        &mut chart,
        vec![(0.0, 0.0), (diagonal, diagonal)],
        GRAY,
        1,
        true,
    )?;

    let mut notes: Vec<Note> = Vec::new();
    for (index, (label, r)) in inputs.iter().enumerate() {
        let color = if overlay {
            INPUT_COLORS[index % INPUT_COLORS.len()]
        } else {
            INPUT_COLORS[0]
        };
        rate_lines(&mut chart, overlay, color, r)?;
        // Only an overlay's labels say whose they are.
        let who = if overlay {
            format!("{label}: ")
        } else {
            String::new()
        };
        notes.extend(limit_marks(&mut chart, max, (index, &who, color), r)?);
    }
    draw_notes(&mut chart, max, notes)?;
    legend(&legend_area, "rates", &legend_entries(inputs))
}

/// The ends of the axes, with room: along x every run's target and achieved rate and the
/// closed-loop maximum's throughput; up y only what is drawn there (achieved and reply
/// rates, the closed-loop maximum), so a server that saturated well under the highest
/// target does not leave the top of the chart empty.
fn axis_max(inputs: &[(String, &SweepReport)]) -> (f64, f64) {
    let (mut x, mut y) = (1.0f64, 1.0f64);
    for (_, r) in inputs {
        for m in &r.runs {
            let achieved = m.report.achieved_rate_per_sec;
            x = x.max(m.target_rate_per_sec.unwrap_or(0.0)).max(achieved);
            y = y.max(achieved).max(m.report.throughput_per_sec);
            if m.kind == Kind::ClosedLoopMax {
                x = x.max(m.report.throughput_per_sec);
            }
        }
    }
    (x * 1.08, y * 1.15)
}

/// The median of what `pick` reads from the steps at each rate (the mean of the middle two
/// for an even count), by rate; `steps` are ordered by rate.
fn medians(steps: &[(f64, &Measurement)], pick: fn(&Measurement) -> f64) -> Vec<(f64, f64)> {
    let mut rates: Vec<f64> = steps.iter().map(|(rate, _)| *rate).collect();
    rates.dedup();
    rates
        .into_iter()
        .map(|rate| {
            let v: Vec<f64> = steps
                .iter()
                .filter(|(r, _)| *r == rate)
                .map(|(_, m)| pick(m))
                .collect();
            (rate, median_f64(&v))
        })
        .collect()
}

/// A sweep's sent and reply rates: lines through the median of each rate's runs, a marker
/// for every run sent, and, for one sweep alone, its rate-capped runs.
fn rate_lines(
    chart: &mut RatesChart<'_, '_>,
    overlay: bool,
    color: RGBColor,
    r: &SweepReport,
) -> DrawResult {
    let steps = open_steps(r);
    let achieved: Vec<(f64, f64)> = steps
        .iter()
        .map(|(rate, m)| (*rate, m.report.achieved_rate_per_sec))
        .collect();
    let sent = medians(&steps, |m| m.report.achieved_rate_per_sec);
    draw_line(chart, sent, color, 2, false)?;
    draw_markers(chart, Shape::Circle, achieved, color, 3)?;
    let replies = medians(&steps, |m| m.report.throughput_per_sec);
    let replies_color = if overlay { color } else { PERCENTILE_COLORS[1] };
    draw_line(chart, replies, replies_color, 1, true)?;
    if !overlay {
        let capped = r.runs.iter().filter(|m| m.kind == Kind::RateCapped);
        let points = capped
            .filter_map(|m| Some((m.target_rate_per_sec?, m.report.achieved_rate_per_sec)))
            .collect();
        draw_markers(chart, Shape::Triangle, points, PERCENTILE_COLORS[2], 5)?;
    }
    Ok(())
}

/// What limits the `index`th sweep: its closed-loop maximum (a dashed line across), its
/// saturation point (a ring) and its capacity (a vertical line, dashed for every second
/// input). Returns their labels, each starting with `who`.
fn limit_marks(
    chart: &mut RatesChart<'_, '_>,
    (x_max, y_max): (f64, f64),
    (index, who, color): (usize, &str, RGBColor),
    r: &SweepReport,
) -> Result<Vec<Note>, Box<dyn std::error::Error>> {
    let mut notes = Vec::new();
    if let Some(m) = r.runs.iter().find(|m| m.kind == Kind::ClosedLoopMax) {
        let y = m.report.throughput_per_sec;
        draw_line(chart, vec![(0.0, y), (x_max, y)], color, 1, true)?;
        let text = format!("closed-loop max, c={}: {}/s", m.connections, rate_label(y));
        notes.push(Note {
            x: x_max * 0.02,
            y,
            text,
            color,
            above: true,
        });
    }
    if let Some((rate, achieved)) = saturation_point(r) {
        draw_markers(chart, Shape::Ring, vec![(rate, achieved)], ALERT, 9)?;
        let (at, sent) = (rate_label(rate), rate_label(achieved));
        notes.push(Note {
            x: rate,
            y: achieved,
            text: format!("{who}saturation at {at}: {sent}/s sent"),
            color: ALERT,
            // Past saturation the line runs flat through the point: the label sits above.
            above: true,
        });
    }
    if let Some(c) = r.slo.as_ref().and_then(|s| s.capacity_per_sec) {
        draw_line(
            chart,
            vec![(c, 0.0), (c, y_max)],
            CAPACITY,
            2,
            index % 2 == 1,
        )?;
        notes.push(Note {
            x: c,
            y: y_max,
            text: format!("{who}{} {}/s", held_words(r).0, rate_label(c)),
            color: CAPACITY,
            above: false,
        });
    }
    Ok(notes)
}

/// The labels, pointing into the chart: left of points in its right half, below the top
/// edge (stacked, for labels at the top), a line's just above it.
fn draw_notes(
    chart: &mut RatesChart<'_, '_>,
    (x_max, y_max): (f64, f64),
    notes: Vec<Note>,
) -> DrawResult {
    for (i, note) in notes.into_iter().enumerate() {
        let (h, dx) = if note.x > x_max * 0.5 {
            (HPos::Right, -12)
        } else {
            (HPos::Left, 12)
        };
        let (v, dy) = if note.y >= y_max * 0.98 {
            (VPos::Top, 6 + 18 * i as i32)
        } else if note.above {
            (VPos::Bottom, -8)
        } else {
            (VPos::Center, 0)
        };
        let style = font(14).color(&note.color).pos(Pos::new(h, v));
        draw_text(chart, (note.x, note.y), note.text, (dx, dy), style)?;
    }
    Ok(())
}

/// The legend's rows: y = x, each sweep's sent and reply rates (and, alone, its
/// rate-capped runs), then the saturation and capacity where the chart has them.
fn legend_entries(inputs: &[(String, &SweepReport)]) -> Vec<(String, Swatch)> {
    let mut entries = vec![("achieved = target".into(), Swatch::dashed(GRAY, 1))];
    if let [(_, r)] = inputs {
        entries.push((
            "achieved (sent/s)".into(),
            Swatch::dotted(INPUT_COLORS[0], 2),
        ));
        entries.push(("replies/s".into(), Swatch::dashed(PERCENTILE_COLORS[1], 1)));
        if r.runs.iter().any(|m| m.kind == Kind::RateCapped) {
            let marker = Swatch::marker(PERCENTILE_COLORS[2], Shape::Triangle);
            entries.push(("rate-capped closed loop".into(), marker));
        }
    } else {
        for (index, (label, _)) in inputs.iter().enumerate() {
            let color = INPUT_COLORS[index % INPUT_COLORS.len()];
            entries.push((format!("{label}: sent/s"), Swatch::dotted(color, 2)));
            entries.push((format!("{label}: replies/s"), Swatch::dashed(color, 1)));
        }
    }
    if inputs.iter().any(|(_, r)| saturation_point(r).is_some()) {
        let label = format!("saturation (< {:.0}%)", SATURATION_FRACTION * 100.0);
        entries.push((label, Swatch::marker(ALERT, Shape::Ring)));
    }
    if let Some((_, r)) = inputs
        .iter()
        .find(|(_, r)| r.slo.as_ref().is_some_and(|s| s.capacity_per_sec.is_some()))
    {
        let entry = format!("{} (meets SLO)", held_words(r).1);
        entries.push((entry, Swatch::line(CAPACITY, 2)));
    }
    entries
}

/// What the rate the runs showed to hold is called on its line and in the legend: held,
/// where the sweep's capacity is its estimate (the latency chart draws that one); the
/// capacity, in a sweep without one.
fn held_words(r: &SweepReport) -> (&'static str, &'static str) {
    if r.slo.as_ref().and_then(|s| s.binding_estimate()).is_some() {
        ("held at", "rate held")
    } else {
        ("capacity", "capacity")
    }
}
