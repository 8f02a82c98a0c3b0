//! The two charts with the offered rate on the x axis: response-time percentiles versus
//! rate (with service time, rate-capped and closed-loop points, SLO lines and the
//! capacity), and achieved versus target rate (with the saturation point). Both take
//! one sweep or several to overlay.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    ALERT, Area, CAPACITY, DrawResult, GRID, GRID_BOLD, INK, LogAxis, PERCENTILE_COLORS,
    PERCENTILES, Shape, Swatch, chart_on, decade_label, draw_line, draw_markers, font, frame,
    legend, log_ms, rate_label, subtitle,
};
use crate::report::Latency;
use crate::sweep::model::{Kind, Measurement, SweepReport};
use crate::sweep::search::{SATURATION_FRACTION, achieved_fraction};

/// Colours of overlaid sweeps on the achieved-versus-target chart.
const INPUT_COLORS: [RGBColor; 4] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
];
const GRAY: RGBColor = RGBColor(130, 130, 130);
/// A closed-loop point's label (13-point sans-serif, drawn about 10.5 px high in the
/// SVG): a generous width per character and the height of one line, in pixels.
const LABEL_CHAR_PX: i32 = 7;
const LABEL_LINE_PX: i32 = 13;

/// Open-loop measurements (coarse and search steps) by increasing target rate.
fn open_steps(report: &SweepReport) -> Vec<(f64, &Measurement)> {
    let mut steps: Vec<(f64, &Measurement)> = report
        .runs
        .iter()
        .filter(|m| matches!(m.kind, Kind::Step | Kind::Search))
        .filter_map(|m| Some((m.target_rate_per_sec?, m)))
        .collect();
    steps.sort_by(|a, b| a.0.total_cmp(&b.0));
    steps
}

fn metric<'a>(m: &'a Measurement, name: &str) -> Option<&'a Latency> {
    m.report.latency.get(name)
}

/// The subtitle of a chart of one sweep, or of several overlaid.
fn subtitle_of(inputs: &[(String, &SweepReport)]) -> String {
    match inputs {
        [(_, only)] => subtitle(only),
        _ => inputs
            .iter()
            .map(|(label, r)| {
                let version = r
                    .server
                    .version
                    .as_deref()
                    .map(|v| format!(", redis {v}"))
                    .unwrap_or_default();
                format!("{label}: {} on {}{version}", r.test, r.server.endpoint)
            })
            .collect::<Vec<_>>()
            .join("  vs  "),
    }
}

/// Response-time percentiles versus offered rate.
pub(super) fn latency_vs_rate(root: &Area<'_>, inputs: &[(String, &SweepReport)]) -> DrawResult {
    let overlay = inputs.len() > 1;
    let (plot, legend_area) = frame(
        root,
        "Response-time percentiles vs offered rate",
        &subtitle_of(inputs),
    )?;

    let mut xs = vec![1.0f64];
    let mut ys_ms = Vec::new();
    for (_, r) in inputs {
        for (rate, m) in open_steps(r) {
            xs.push(rate.max(m.report.achieved_rate_per_sec));
            for name in ["response", "service"] {
                if let Some(l) = metric(m, name).filter(|_| name == "response" || !overlay) {
                    ys_ms.extend(PERCENTILES.iter().map(|(_, get)| get(l) as f64 / 1e6));
                }
            }
        }
        for m in r
            .runs
            .iter()
            .filter(|m| {
                matches!(
                    m.kind,
                    Kind::RateCapped | Kind::ClosedLoop | Kind::ClosedLoopMax
                )
            })
            .filter(|_| !overlay)
        {
            xs.push(
                m.target_rate_per_sec
                    .unwrap_or(0.0)
                    .max(m.report.throughput_per_sec),
            );
            if let Some(l) = metric(m, "response") {
                ys_ms.extend(PERCENTILES.iter().map(|(_, get)| get(l) as f64 / 1e6));
            }
        }
        ys_ms.extend(r.plan.slos.iter().map(|s| s.bound_ns as f64 / 1e6));
    }
    let x_max = xs.iter().copied().fold(0.0, f64::max) * 1.08;
    let axis = LogAxis::covering(ys_ms);

    let mut chart = chart_on(&plot, 0f64..x_max, axis.coord())?;
    chart
        .configure_mesh()
        .x_desc("offered rate (requests/s)")
        .y_desc("response time (ms, log scale)")
        .x_label_formatter(&|v| rate_label(*v))
        .y_label_formatter(&|v| decade_label(*v))
        .x_labels(8)
        .light_line_style(GRID)
        .max_light_lines(4)
        .bold_line_style(GRID_BOLD)
        .axis_desc_style(font(16))
        .label_style(font(14))
        .draw()?;

    let (y_lo, y_hi) = (axis.lo as f64, axis.hi as f64);
    for (slo_index, slo) in inputs[0].1.plan.slos.iter().enumerate() {
        let y = (slo.bound_ns as f64 / 1e6).log10();
        draw_line(&mut chart, vec![(0.0, y), (x_max, y)], INK, 1, true)?;
        let text = format!(
            "SLO {} ≤ {}",
            slo.percentile_label(),
            super::ms_label(slo.bound_ns)
        );
        let style = font(14).pos(Pos::new(HPos::Right, VPos::Bottom));
        chart.draw_series(std::iter::once(
            EmptyElement::at((x_max, y)) + Text::new(text, (-6, -3 - 16 * slo_index as i32), style),
        ))?;
    }

    for (index, (label, r)) in inputs.iter().enumerate() {
        let steps = open_steps(r);
        let dashed = index % 2 == 1;
        let shape = [Shape::Circle, Shape::Triangle, Shape::Square, Shape::Cross][index % 4];
        for (p, (_, get)) in PERCENTILES.iter().enumerate() {
            let color = PERCENTILE_COLORS[p];
            let points = |name: &str| -> Vec<(f64, f64)> {
                steps
                    .iter()
                    .filter_map(|(rate, m)| Some((*rate, log_ms(get(metric(m, name)?))?)))
                    .collect()
            };
            if !overlay {
                draw_line(&mut chart, points("service"), color, 1, true)?;
            }
            let response = points("response");
            draw_line(&mut chart, response.clone(), color, 2, dashed)?;
            draw_markers(&mut chart, shape, response, color, 3)?;
            if !overlay {
                let capped = r.runs.iter().filter(|m| m.kind == Kind::RateCapped);
                let points = capped
                    .filter_map(|m| {
                        Some((m.target_rate_per_sec?, log_ms(get(metric(m, "response")?))?))
                    })
                    .collect();
                draw_markers(&mut chart, Shape::Triangle, points, color, 5)?;
                let closed = r
                    .runs
                    .iter()
                    .filter(|m| matches!(m.kind, Kind::ClosedLoop | Kind::ClosedLoopMax));
                let points = closed
                    .filter_map(|m| {
                        Some((
                            m.report.throughput_per_sec,
                            log_ms(get(metric(m, "response")?))?,
                        ))
                    })
                    .collect();
                draw_markers(&mut chart, Shape::Cross, points, color, 5)?;
            }
        }
        if !overlay {
            // Labels that would land on each other (the closed-loop maximum and the closed
            // loop at the same connection count can) are stacked, each a line above the last.
            let mut placed: Vec<(i32, i32, i32)> = Vec::new(); // left, right and bottom, in pixels
            for m in r
                .runs
                .iter()
                .filter(|m| matches!(m.kind, Kind::ClosedLoop | Kind::ClosedLoopMax))
            {
                let Some(top) = metric(m, "response").and_then(|l| log_ms(l.max_ns)) else {
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
                chart.draw_series(std::iter::once(
                    EmptyElement::at((m.report.throughput_per_sec, top))
                        + Text::new(text, (0, dy), style),
                ))?;
            }
        }
        if let Some(result) = &r.slo {
            let (rate, color, text) = match (result.capacity_per_sec, result.searched_per_sec) {
                (Some(c), _) => (c, CAPACITY, format!("capacity {}/s", rate_label(c))),
                (None, Some(s)) => (
                    s,
                    ALERT,
                    format!("searched {}/s, did not hold", rate_label(s)),
                ),
                (None, None) => continue,
            };
            let text = if overlay {
                format!("{label}: {text}")
            } else {
                text
            };
            draw_line(
                &mut chart,
                vec![(rate, y_lo), (rate, y_hi)],
                color,
                2,
                dashed,
            )?;
            // Left of the line when it sits in the right half, so the label stays inside.
            let (anchor, dx) = if rate > x_max / 2.0 {
                (HPos::Right, -6)
            } else {
                (HPos::Left, 6)
            };
            let style = font(15).color(&color).pos(Pos::new(anchor, VPos::Top));
            chart.draw_series(std::iter::once(
                EmptyElement::at((rate, y_hi))
                    + Text::new(text, (dx, 4 + 18 * index as i32), style),
            ))?;
        }
    }

    let mut entries: Vec<(String, Swatch)> = PERCENTILES
        .iter()
        .zip(PERCENTILE_COLORS)
        .map(|((name, _), color)| {
            (
                name.to_string(),
                Swatch::Line {
                    color,
                    width: 2,
                    dashed: false,
                    dot: !overlay,
                },
            )
        })
        .collect();
    if overlay {
        for (index, (label, _)) in inputs.iter().enumerate() {
            let shape = [Shape::Circle, Shape::Triangle, Shape::Square, Shape::Cross][index % 4];
            entries.push((
                label.clone(),
                Swatch::Line {
                    color: GRAY,
                    width: 2,
                    dashed: index % 2 == 1,
                    dot: false,
                },
            ));
            entries.push((
                format!("{label} steps"),
                Swatch::Marker { color: GRAY, shape },
            ));
        }
    } else {
        let r = inputs[0].1;
        entries.push((
            "service time (dashed)".into(),
            Swatch::Line {
                color: GRAY,
                width: 1,
                dashed: true,
                dot: false,
            },
        ));
        if r.runs.iter().any(|m| m.kind == Kind::RateCapped) {
            entries.push((
                "rate-capped closed loop".into(),
                Swatch::Marker {
                    color: GRAY,
                    shape: Shape::Triangle,
                },
            ));
        }
        if r.runs
            .iter()
            .any(|m| matches!(m.kind, Kind::ClosedLoop | Kind::ClosedLoopMax))
        {
            entries.push((
                "closed loop, x=throughput".into(),
                Swatch::Marker {
                    color: GRAY,
                    shape: Shape::Cross,
                },
            ));
        }
    }
    if !inputs[0].1.plan.slos.is_empty() {
        entries.push((
            "SLO".into(),
            Swatch::Line {
                color: INK,
                width: 1,
                dashed: true,
                dot: false,
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
    legend(&legend_area, "response time", &entries)
}

/// The first coarse step, by rate, that achieved under [`SATURATION_FRACTION`] of its planned rate.
fn saturation_point(report: &SweepReport) -> Option<(f64, f64)> {
    open_steps(report)
        .into_iter()
        .filter(|(_, m)| m.kind == Kind::Step)
        .find(|(_, m)| achieved_fraction(&m.report) < SATURATION_FRACTION)
        .map(|(rate, m)| (rate, m.report.achieved_rate_per_sec))
}

/// Achieved versus target rate, with y = x and the saturation point.
pub(super) fn achieved_vs_target(root: &Area<'_>, inputs: &[(String, &SweepReport)]) -> DrawResult {
    let overlay = inputs.len() > 1;
    let (plot, legend_area) = frame(root, "Achieved vs target rate", &subtitle_of(inputs))?;
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
    let mut chart = ChartBuilder::on(&plot)
        .margin_top(14)
        .margin_right(20)
        .margin_left(6)
        .margin_bottom(6)
        .x_label_area_size(50)
        .y_label_area_size(66)
        .build_cartesian_2d(0f64..max, 0f64..max)?;
    chart
        .configure_mesh()
        .x_desc("target rate (requests/s)")
        .y_desc("achieved rate (requests/s)")
        .x_label_formatter(&|v| rate_label(*v))
        .y_label_formatter(&|v| rate_label(*v))
        .x_labels(8)
        .y_labels(8)
        .light_line_style(GRID)
        .max_light_lines(4)
        .bold_line_style(GRID_BOLD)
        .axis_desc_style(font(16))
        .label_style(font(14))
        .draw()?;
    draw_line(&mut chart, vec![(0.0, 0.0), (max, max)], GRAY, 1, true)?;

    let mut notes: Vec<(f64, f64, String, RGBColor)> = Vec::new();
    for (index, (label, r)) in inputs.iter().enumerate() {
        let steps = open_steps(r);
        let color = if overlay {
            INPUT_COLORS[index % INPUT_COLORS.len()]
        } else {
            INPUT_COLORS[0]
        };
        let achieved: Vec<(f64, f64)> = steps
            .iter()
            .map(|(rate, m)| (*rate, m.report.achieved_rate_per_sec))
            .collect();
        draw_line(&mut chart, achieved.clone(), color, 2, false)?;
        draw_markers(&mut chart, Shape::Circle, achieved, color, 3)?;
        let replies: Vec<(f64, f64)> = steps
            .iter()
            .map(|(rate, m)| (*rate, m.report.throughput_per_sec))
            .collect();
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
