//! Response-time percentiles versus offered rate, with service time, rate-capped and
//! closed-loop points, SLO lines, each rate's 95% intervals and verdict, and the
//! capacity with its band; one sweep or several overlaid. Lines run through the median
//! of each rate's runs.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    ALERT, Area, Axes, BAND, BAND_OPACITY, CAPACITY, DrawResult, GRAY, INK, LogAxis,
    PERCENTILE_COLORS, PERCENTILES, Shape, Swatch, Whisker, chart_on, draw_line, draw_markers,
    draw_whiskers, font, frame, legend, log_ms, median_log_ms, metric, open_steps, rate_groups,
    rate_label, subtitle_of,
};
use crate::report::sweep::{Kind, Limit, Measurement, SweepReport, Verdict};
use crate::report::{Bottleneck, Percentile};

/// A closed-loop point's label (13-point sans-serif, drawn about 10.5 px high in the
/// SVG): a generous width per character and the height of one line, in pixels.
const LABEL_CHAR_PX: i32 = 7;
const LABEL_LINE_PX: i32 = 13;

/// Response-time percentiles versus offered rate.
pub(super) fn latency_vs_rate(
    root: &Area<'_>,
    title: Option<&str>,
    inputs: &[(String, &SweepReport)],
) -> DrawResult {
    let overlay = inputs.len() > 1;
    let (plot, legend_area) = frame(
        root,
        title,
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

    let mut chart = chart_on(&plot, 16, 0f64..x_max, axis.coord())?;
    Axes::response_time("offered rate (requests/s)", &|v| rate_label(*v))
        .x_labels(8)
        .draw(&mut chart)?;

    let (y_lo, y_hi) = (axis.lo as f64, axis.hi as f64);
    // Every input's objectives, each drawn once.
    let mut slos: Vec<&crate::config::sweep::Slo> = Vec::new();
    for slo in inputs.iter().flat_map(|(_, r)| &r.plan.slos) {
        if !slos.iter().any(|s| s.text == slo.text) {
            slos.push(slo);
        }
    }
    for (slo_index, slo) in slos.iter().enumerate() {
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

    // Beneath the lines, so the shading covers none of them.
    if let [(_, r)] = inputs {
        bottleneck_marks(&mut chart, &open_steps(r), (y_lo, y_hi), x_max)?;
    }
    for (index, (_, r)) in inputs.iter().enumerate() {
        if let Some((low, high)) = r.slo.as_ref().and_then(|s| s.capacity_band_per_sec) {
            let high = high.unwrap_or(x_max);
            // One sweep's band spans the chart; overlaid ones are bars along the top, so
            // none hides another's lines.
            let (bottom, top) = if overlay {
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
    }
    let verdict_y = slos.first().map(|s| (s.bound_ns as f64 / 1e6).log10());
    for (index, (label, r)) in inputs.iter().enumerate() {
        let groups = rate_groups(r);
        let summaries = crate::report::sweep::steps_of(r);
        let dashed = index % 2 == 1;
        let shape = [Shape::Circle, Shape::Triangle, Shape::Square, Shape::Cross][index % 4];
        for (p, (name, get)) in PERCENTILES.iter().enumerate() {
            let color = PERCENTILE_COLORS[p];
            // Through the median of each rate's runs.
            let points = |metric_name: &str| -> Vec<(f64, f64)> {
                groups
                    .iter()
                    .filter_map(|(rate, group)| {
                        let median = median_log_ms(group, |m| Some(get(metric(m, metric_name)?)))?;
                        Some((*rate, median))
                    })
                    .collect()
            };
            if !overlay {
                draw_line(&mut chart, points("service"), color, 1, true)?;
            }
            let response = points("response");
            draw_line(&mut chart, response.clone(), color, 2, dashed)?;
            draw_markers(&mut chart, shape, response.clone(), color, 3)?;
            // Each rate's 95% interval (the wider of within a run and across its runs).
            let key = Percentile::ALL.into_iter().find(|q| q.label() == *name);
            let whiskers: Vec<Whisker> = key
                .map(|key| {
                    summaries
                        .iter()
                        .filter_map(|s| {
                            let ci = s.response.get(key.key())?.ci95_ns?;
                            let median = log_ms(s.response.get(key.key())?.median_ns)?;
                            let low = log_ms(ci.low())?.max(y_lo);
                            let high = ci.high().and_then(log_ms).map(|h| h.min(y_hi));
                            Some((s.target_rate_per_sec, low, high, median))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let dx = if overlay { 0 } else { 3 * (p as i32 - 2) };
            draw_whiskers(&mut chart, &whiskers, color, dx)?;
            // A rate with a run whose self-checks failed is ringed: its numbers are suspect.
            let invalid = groups
                .iter()
                .filter(|(_, group)| group.iter().any(|m| !m.report.valid))
                .filter_map(|(rate, _)| response.iter().find(|pt| pt.0 == *rate).copied())
                .collect();
            draw_markers(&mut chart, Shape::Ring, invalid, ALERT, 6)?;
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
        // Each rate's verdict on the (first) objective's line.
        if let (Some(y), false) = (verdict_y, overlay) {
            for (verdict, shape, color) in [
                (Verdict::Pass, Shape::Circle, CAPACITY),
                (Verdict::Uncertain, Shape::Square, GRAY),
                (Verdict::Fail, Shape::Cross, ALERT),
            ] {
                let marks = summaries
                    .iter()
                    .filter(|s| s.slo.as_ref().is_some_and(|v| v.verdict == verdict))
                    .map(|s| (s.target_rate_per_sec, y))
                    .collect();
                draw_markers(&mut chart, shape, marks, color, 4)?;
            }
        }
        if let Some(result) = &r.slo {
            // What limited the band, unless nothing was named.
            let limit = result
                .limited_by
                .filter(|l| *l != Limit::None)
                .map(|l| format!(": {}", l.name()))
                .unwrap_or_default();
            let lowest = summaries.first().map(|s| s.target_rate_per_sec);
            // The line and its label: the capacity, or where the band ends without one.
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
                    let text =
                        format!("capacity below {}/s, the lowest rate{limit}", rate_label(h));
                    (h, false, ALERT, text)
                }
                (None, Some((_, high)), _) => {
                    let to = high.map_or("open above".to_string(), |h| {
                        format!("0-{}/s", rate_label(h))
                    });
                    let text = format!("no rate passed with confidence, band {to}{limit}");
                    (high.unwrap_or(0.0), false, ALERT, text)
                }
                (None, None, Some(s)) => (
                    s,
                    true,
                    ALERT,
                    format!("searched {}/s, did not hold", rate_label(s)),
                ),
                (None, None, None) => continue,
            };
            let text = if overlay {
                format!("{label}: {text}")
            } else {
                text
            };
            if line {
                draw_line(
                    &mut chart,
                    vec![(rate, y_lo), (rate, y_hi)],
                    color,
                    2,
                    dashed,
                )?;
            }
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
    if inputs
        .iter()
        .any(|(_, r)| open_steps(r).iter().any(|(_, m)| !m.report.valid))
    {
        entries.push((
            "invalid step (check failed)".into(),
            Swatch::Marker {
                color: ALERT,
                shape: Shape::Ring,
            },
        ));
    }
    if !slos.is_empty() {
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
    if !overlay {
        let steps = crate::report::sweep::steps_of(inputs[0].1);
        for (verdict, text, shape, color) in [
            (Verdict::Pass, "SLO pass (95%)", Shape::Circle, CAPACITY),
            (Verdict::Uncertain, "SLO uncertain", Shape::Square, GRAY),
            (Verdict::Fail, "SLO fail (95%)", Shape::Cross, ALERT),
        ] {
            if steps
                .iter()
                .any(|s| s.slo.as_ref().is_some_and(|v| v.verdict == verdict))
            {
                entries.push((text.into(), Swatch::Marker { color, shape }));
            }
        }
    }
    if inputs.iter().any(|(_, r)| {
        crate::report::sweep::steps_of(r)
            .iter()
            .any(|s| s.response.values().any(|p| p.ci95_ns.is_some()))
    }) {
        entries.push((
            "95% interval (^ open)".into(),
            Swatch::Line {
                color: GRAY,
                width: 1,
                dashed: false,
                dot: false,
            },
        ));
    }
    if inputs.iter().any(|(_, r)| {
        r.slo
            .as_ref()
            .is_some_and(|s| s.capacity_band_per_sec.is_some())
    }) {
        entries.push(("capacity band".into(), Swatch::Band(BAND)));
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

/// Each open-loop step's bottleneck, written under it along the foot of the chart, and
/// the rates from the first step at which the server was saturated (busy nearly all the
/// time by its own clock) shaded: the knee, with its cause on it.
fn bottleneck_marks<XR, YR>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<XR, YR>>,
    steps: &[(f64, &Measurement)],
    (y_lo, y_hi): (f64, f64),
    x_max: f64,
) -> DrawResult
where
    XR: Ranged<ValueType = f64>,
    YR: Ranged<ValueType = f64>,
{
    let verdict = |m: &Measurement| m.report.bottleneck.as_ref().map(|b| b.verdict);
    let saturated = |m: &Measurement| {
        m.report
            .bottleneck
            .as_ref()
            .is_some_and(|b| b.server_saturated())
    };
    if let Some((from, _)) = steps.iter().find(|(_, m)| saturated(m)) {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(*from, y_lo), (x_max, y_hi)],
            RGBColor(252, 234, 234).filled(),
        )))?;
        let style = font(13)
            .color(&ALERT)
            .pos(Pos::new(HPos::Left, VPos::Bottom));
        chart.draw_series(std::iter::once(
            EmptyElement::at((*from, y_lo)) + Text::new("server saturated", (4, -20), style),
        ))?;
    }
    // Steps in order of rate; a label that would touch the last one drawn is left out
    // (a search's steps crowd near the capacity, and share its verdict).
    let mut by_rate: Vec<&(f64, &Measurement)> = steps.iter().collect();
    by_rate.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut last_right = i32::MIN;
    for (rate, m) in by_rate {
        let short = match verdict(m) {
            Some(Bottleneck::Server) => "server",
            Some(Bottleneck::Generator) => "gen",
            Some(Bottleneck::ClientQueue) => "queue",
            Some(Bottleneck::NetworkKernel) => "net",
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
        chart.draw_series(std::iter::once(
            EmptyElement::at((*rate, y_lo)) + Text::new(short, (0, -4), style),
        ))?;
    }
    Ok(())
}
