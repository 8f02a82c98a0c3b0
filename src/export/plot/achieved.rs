//! Achieved versus target rate, with y = x and the saturation point; one sweep or
//! several overlaid.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    ALERT, Area, Axes, CAPACITY, DrawResult, GRAY, INPUT_COLORS, PERCENTILE_COLORS, Shape, Swatch,
    chart_on, draw_line, draw_markers, font, frame, legend, open_steps, rate_label, subtitle_of,
};
use crate::report::sweep::{
    Kind, Measurement, SATURATION_FRACTION, SweepReport, achieved_fraction,
};

/// The first coarse step, by rate, that achieved under [`SATURATION_FRACTION`] of its planned rate.
fn saturation_point(report: &SweepReport) -> Option<(f64, f64)> {
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
    let mut max = 1.0f64;
    for (_, r) in inputs {
        for m in &r.runs {
            max = max
                .max(m.target_rate_per_sec.unwrap_or(0.0))
                .max(m.report.achieved_rate_per_sec);
            if m.kind == Kind::ClosedLoopMax {
                max = max.max(m.report.throughput_per_sec);
            }
        }
    }
    let max = max * 1.08;
    let mut chart = chart_on(&plot, 20, 0f64..max, 0f64..max)?;
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
    draw_line(&mut chart, vec![(0.0, 0.0), (max, max)], GRAY, 1, true)?;

    let mut notes: Vec<(f64, f64, String, RGBColor)> = Vec::new();
    for (index, (label, r)) in inputs.iter().enumerate() {
        let steps = open_steps(r);
        let color = if overlay {
            INPUT_COLORS[index % INPUT_COLORS.len()]
        } else {
            INPUT_COLORS[0]
        };
        // Lines through the median of each rate's runs; a marker for every run.
        let median_at = |pick: fn(&Measurement) -> f64| -> Vec<(f64, f64)> {
            let mut rates: Vec<f64> = steps.iter().map(|(rate, _)| *rate).collect();
            rates.dedup();
            rates
                .into_iter()
                .map(|rate| {
                    let mut v: Vec<f64> = steps
                        .iter()
                        .filter(|(r, _)| *r == rate)
                        .map(|(_, m)| pick(m))
                        .collect();
                    v.sort_by(f64::total_cmp);
                    let n = v.len();
                    let median = if n % 2 == 1 {
                        v[n / 2]
                    } else {
                        (v[n / 2 - 1] + v[n / 2]) / 2.0
                    };
                    (rate, median)
                })
                .collect()
        };
        let achieved: Vec<(f64, f64)> = steps
            .iter()
            .map(|(rate, m)| (*rate, m.report.achieved_rate_per_sec))
            .collect();
        draw_line(
            &mut chart,
            median_at(|m| m.report.achieved_rate_per_sec),
            color,
            2,
            false,
        )?;
        draw_markers(&mut chart, Shape::Circle, achieved, color, 3)?;
        let replies = median_at(|m| m.report.throughput_per_sec);
        let replies_color = if overlay { color } else { PERCENTILE_COLORS[1] };
        draw_line(&mut chart, replies, replies_color, 1, true)?;
        if !overlay {
            let capped = r.runs.iter().filter(|m| m.kind == Kind::RateCapped);
            let points = capped
                .filter_map(|m| Some((m.target_rate_per_sec?, m.report.achieved_rate_per_sec)))
                .collect();
            draw_markers(&mut chart, Shape::Triangle, points, PERCENTILE_COLORS[2], 5)?;
        }
        if let Some(m) = r.runs.iter().find(|m| m.kind == Kind::ClosedLoopMax) {
            let y = m.report.throughput_per_sec;
            draw_line(&mut chart, vec![(0.0, y), (max, y)], color, 1, true)?;
            notes.push((
                max * 0.02,
                y,
                format!("closed-loop max, c={}: {}/s", m.connections, rate_label(y)),
                color,
            ));
        }
        if let Some((rate, achieved)) = saturation_point(r) {
            draw_markers(&mut chart, Shape::Ring, vec![(rate, achieved)], ALERT, 9)?;
            let who = if overlay {
                format!("{label}: ")
            } else {
                String::new()
            };
            notes.push((
                rate,
                achieved,
                format!(
                    "{who}saturation at {}: {}/s sent",
                    rate_label(rate),
                    rate_label(achieved)
                ),
                ALERT,
            ));
        }
        if let Some(c) = r.slo.as_ref().and_then(|s| s.capacity_per_sec) {
            draw_line(
                &mut chart,
                vec![(c, 0.0), (c, max)],
                CAPACITY,
                2,
                index % 2 == 1,
            )?;
            let who = if overlay {
                format!("{label}: ")
            } else {
                String::new()
            };
            notes.push((
                c,
                max,
                format!("{who}capacity {}/s", rate_label(c)),
                CAPACITY,
            ));
        }
    }
    for (i, (x, y, text, color)) in notes.into_iter().enumerate() {
        // Labels point into the chart: left of points in its right half, below the top edge.
        let (h, dx) = if x > max * 0.5 {
            (HPos::Right, -12)
        } else {
            (HPos::Left, 12)
        };
        let (v, dy) = if y >= max * 0.98 {
            (VPos::Top, 6 + 18 * i as i32)
        } else {
            (VPos::Center, 0)
        };
        let style = font(14).color(&color).pos(Pos::new(h, v));
        chart.draw_series(std::iter::once(
            EmptyElement::at((x, y)) + Text::new(text, (dx, dy), style),
        ))?;
    }

    let mut entries: Vec<(String, Swatch)> = vec![(
        "achieved = target".into(),
        Swatch::Line {
            color: GRAY,
            width: 1,
            dashed: true,
            dot: false,
        },
    )];
    if overlay {
        for (index, (label, _)) in inputs.iter().enumerate() {
            let color = INPUT_COLORS[index % INPUT_COLORS.len()];
            entries.push((
                format!("{label}: sent/s"),
                Swatch::Line {
                    color,
                    width: 2,
                    dashed: false,
                    dot: true,
                },
            ));
            entries.push((
                format!("{label}: replies/s"),
                Swatch::Line {
                    color,
                    width: 1,
                    dashed: true,
                    dot: false,
                },
            ));
        }
    } else {
        entries.push((
            "achieved (sent/s)".into(),
            Swatch::Line {
                color: INPUT_COLORS[0],
                width: 2,
                dashed: false,
                dot: true,
            },
        ));
        entries.push((
            "replies/s".into(),
            Swatch::Line {
                color: PERCENTILE_COLORS[1],
                width: 1,
                dashed: true,
                dot: false,
            },
        ));
        if inputs[0].1.runs.iter().any(|m| m.kind == Kind::RateCapped) {
            entries.push((
                "rate-capped closed loop".into(),
                Swatch::Marker {
                    color: PERCENTILE_COLORS[2],
                    shape: Shape::Triangle,
                },
            ));
        }
    }
    if inputs.iter().any(|(_, r)| saturation_point(r).is_some()) {
        entries.push((
            format!("saturation (< {:.0}%)", SATURATION_FRACTION * 100.0),
            Swatch::Marker {
                color: ALERT,
                shape: Shape::Ring,
            },
        ));
    }
    if inputs
        .iter()
        .any(|(_, r)| r.slo.as_ref().is_some_and(|s| s.capacity_per_sec.is_some()))
    {
        entries.push((
            "capacity (meets SLO)".into(),
            Swatch::Line {
                color: CAPACITY,
                width: 2,
                dashed: false,
                dot: false,
            },
        ));
    }
    legend(&legend_area, "rates", &entries)
}
