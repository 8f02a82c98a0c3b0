//! The two charts of one sweep read from its histograms and intervals: the
//! latency-by-percentile spectrum (HdrHistogram's standard picture, x = `1/(1-q)` on a
//! log scale; each step's curve in a band of its percentiles' 95% intervals) and
//! p50/p99/max per interval over the whole sweep.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    Area, Axes, DrawResult, INK, LogAxis, PERCENTILE_COLORS, Shape, Swatch, chart_on, draw_line,
    draw_markers, font, frame, legend, log_ms, ramp, rate_label, subtitle,
};
use crate::report::sweep::{Kind, Measurement, SweepReport};

/// Steps between x = 0 and x = 1 (one decade of `1/(1-q)`) on the spectrum.
const SPECTRUM_POINTS_PER_DECADE: u32 = 40;
/// Widest spectrum: up to the 99.9999th percentile.
const SPECTRUM_MAX_DECADES: u32 = 6;

/// The runs drawn on the spectrum: one per coarse rate (of its runs, the one with the
/// median p99), by rate, then the re-measured capacity.
fn spectrum_runs(report: &SweepReport) -> Vec<(&Measurement, String)> {
    let mut runs: Vec<(&Measurement, String)> = Vec::new();
    for (rate, group) in crate::report::sweep::steps::by_rate(&report.runs) {
        let mut steps: Vec<&Measurement> =
            group.into_iter().filter(|m| m.kind == Kind::Step).collect();
        steps.sort_by_key(|m| m.report.response().map_or(0, |l| l.p99_ns));
        if let Some(m) = steps.get(steps.len().saturating_sub(1) / 2) {
            runs.push((m, format!("{}/s", rate_label(rate))));
        }
    }
    let capacity = report.slo.as_ref().and_then(|s| s.capacity_per_sec);
    if let Some(m) = report
        .runs
        .iter()
        .rev()
        .find(|m| m.kind == Kind::Confirm && m.target_rate_per_sec == capacity)
    {
        runs.push((
            m,
            format!("{}/s capacity", rate_label(capacity.unwrap_or(0.0))),
        ));
    }
    runs
}

/// `(x, log10 ms)` points of a run's response-time spectrum, x = log10(1/(1-q)), up to
/// where the histogram has data (the last point is the maximum).
fn spectrum_points(m: &Measurement) -> Vec<(f64, f64)> {
    let Some(h) = m
        .report
        .response()
        .and_then(|l| l.histogram())
        .filter(|h| !h.is_empty())
    else {
        return Vec::new();
    };
    // Beyond x = log10(count) a quantile is the maximum: no sample says more.
    let x_end = (h.len() as f64).log10().min(SPECTRUM_MAX_DECADES as f64);
    let steps = (x_end * SPECTRUM_POINTS_PER_DECADE as f64).floor() as u32;
    let mut points: Vec<(f64, f64)> = (0..=steps)
        .map(|i| i as f64 / SPECTRUM_POINTS_PER_DECADE as f64)
        .filter_map(|x| log_ms(h.value_at_quantile(1.0 - 10f64.powf(-x))).map(|y| (x, y)))
        .collect();
    if let Some(y) = log_ms(h.max()) {
        points.push((x_end.max(points.last().map_or(0.0, |p| p.0)), y));
    }
    points
}

/// Opacity of a step's band on the spectrum: faint, since neighbouring steps' overlap.
const SPECTRUM_BAND_OPACITY: f64 = 0.16;

/// `(x, log10 ms of the low end, of the high end)` of a step's 95% intervals at the
/// reported percentiles, from p50 up to the last one in a row whose interval is bounded.
fn spectrum_band(step: &crate::report::sweep::StepSummary) -> Vec<(f64, f64, f64)> {
    let mut band = Vec::new();
    for p in crate::report::Percentile::ALL {
        let Some(ci) = step.response.get(p.key()).and_then(|s| s.ci95_ns) else {
            break;
        };
        let (Some(low), Some(high)) = (log_ms(ci.low()), ci.high().and_then(log_ms)) else {
            break;
        };
        band.push(((1.0 / (1.0 - p.quantile())).log10(), low, high));
    }
    band
}

/// `0%`, `50%`, `90%`, `99%`, `99.9%` ... for x = log10(1/(1-q)).
fn percentile_label(x: f64) -> String {
    if (x - 2f64.log10()).abs() < 1e-9 {
        return "50%".into();
    }
    let d = x.round() as i32;
    match d {
        0 => "0%".into(),
        1 => "90%".into(),
        _ => format!("{:.*}%", (d - 2) as usize, 100.0 - 10f64.powi(2 - d)),
    }
}

/// Latency by percentile, one curve per step with its band of 95% intervals.
pub(super) fn spectrum(root: &Area<'_>, title: Option<&str>, report: &SweepReport) -> DrawResult {
    let (plot, legend_area) = frame(
        root,
        title,
        "Response time by percentile, one curve per step",
        &subtitle(report),
    )?;
    let runs = spectrum_runs(report);
    let curves: Vec<Vec<(f64, f64)>> = runs.iter().map(|(m, _)| spectrum_points(m)).collect();
    let decades = curves
        .iter()
        .flatten()
        .map(|p| p.0.ceil() as u32)
        .max()
        .unwrap_or(3)
        .clamp(2, SPECTRUM_MAX_DECADES);
    let axis = LogAxis::covering(curves.iter().flatten().map(|p| 10f64.powf(p.1)));
    let mut keys: Vec<f64> = (0..=decades).map(f64::from).collect();
    keys.insert(1, 2f64.log10());
    let x_coord = super::Ticks {
        range: 0f64..decades as f64,
        bold: keys,
        light: Vec::new(),
    };
    let mut chart = chart_on(&plot, 24, x_coord, axis.coord())?;
    Axes::response_time("percentile (log scale of 1/(1-q))", &|v| {
        percentile_label(*v)
    })
    .draw(&mut chart)?;
    // Each rate's 95% intervals at the reported percentiles as a translucent band around
    // its curve, up to the last percentile whose interval is bounded, beneath every line.
    let summaries = crate::report::sweep::steps_of(report);
    let mut banded = false;
    for (i, (m, label)) in runs.iter().enumerate() {
        if label.ends_with("capacity") {
            continue;
        }
        let Some(step) = summaries
            .iter()
            .find(|s| Some(s.target_rate_per_sec) == m.target_rate_per_sec)
        else {
            continue;
        };
        let band = spectrum_band(step);
        if band.len() >= 2 {
            banded = true;
            let mut outline: Vec<(f64, f64)> = band.iter().map(|b| (b.0, b.2)).collect();
            outline.extend(band.iter().rev().map(|b| (b.0, b.1)));
            chart.draw_series(std::iter::once(Polygon::new(
                outline,
                ramp(i, runs.len()).mix(SPECTRUM_BAND_OPACITY).filled(),
            )))?;
        }
    }
    let mut entries = Vec::new();
    for (i, ((_, label), points)) in runs.iter().zip(curves).enumerate() {
        let capacity = label.ends_with("capacity");
        let color = if capacity { INK } else { ramp(i, runs.len()) };
        let style = color.stroke_width(if capacity { 3 } else { 2 });
        chart.draw_series(std::iter::once(PathElement::new(points, style)))?;
        entries.push((
            label.clone(),
            Swatch::Line {
                color,
                width: if capacity { 3 } else { 2 },
                dashed: false,
                dot: false,
            },
        ));
    }
    if banded {
        entries.push((
            "95% intervals (band)".into(),
            Swatch::Band(RGBColor(215, 220, 235)),
        ));
    }
    legend(&legend_area, "target rate", &entries)
}

/// p50, p99 and max of each interval over the whole sweep.
pub(super) fn over_time(root: &Area<'_>, title: Option<&str>, report: &SweepReport) -> DrawResult {
    let (plot, legend_area) = frame(
        root,
        title,
        "Response time per interval over the sweep",
        &subtitle(report),
    )?;
    const METRICS: [(&str, usize); 3] = [("p50", 0), ("p99", 2), ("max", 5)];
    let value = |iv: &crate::report::IntervalSummary, k: usize| match k {
        0 => iv.p50_ns,
        1 => iv.p99_ns,
        _ => iv.max_ns,
    };
    let mut t_max = 1.0f64;
    let mut all_ms = Vec::new();
    for m in &report.runs {
        for iv in &m.report.intervals {
            t_max = t_max.max(m.started_secs + iv.start_secs + iv.length_secs);
            all_ms.extend([iv.p50_ns, iv.p99_ns, iv.max_ns].map(|ns| ns as f64 / 1e6));
        }
        t_max = t_max.max(m.started_secs + m.report.measured_secs);
    }
    let t_max = t_max * 1.02;
    let axis = LogAxis::covering(all_ms);
    let mut chart = chart_on(&plot, 16, 0f64..t_max, axis.coord())?;
    let (y_lo, y_hi) = (axis.lo as f64, axis.hi as f64);
    // Closed-loop runs sit on a gray band so the open-loop steps stand apart.
    let band = RGBColor(236, 236, 236);
    for (i, m) in report.runs.iter().enumerate() {
        if !m.kind.is_open_loop() {
            let end = report.runs.get(i + 1).map_or(t_max, |n| n.started_secs);
            chart.plotting_area().draw(&Rectangle::new(
                [(m.started_secs, y_lo), (end, y_hi)],
                band.filled(),
            ))?;
        }
    }
    Axes::response_time("time since the sweep started (s)", &|v| format!("{v:.0}"))
        .x_labels(10)
        .draw(&mut chart)?;
    for (k, (_, p)) in METRICS.iter().enumerate() {
        let color = PERCENTILE_COLORS[*p];
        for m in &report.runs {
            let points: Vec<(f64, f64)> = m
                .report
                .intervals
                .iter()
                .filter_map(|iv| {
                    Some((
                        m.started_secs + iv.start_secs + iv.length_secs / 2.0,
                        log_ms(value(iv, k))?,
                    ))
                })
                .collect();
            draw_line(&mut chart, points.clone(), color, 2, false)?;
            draw_markers(&mut chart, Shape::Circle, points, color, 2)?;
        }
    }
    // Run labels, rotated along each run's start, skipped where they would overlap.
    let mut last_x = f64::NEG_INFINITY;
    let min_gap = t_max * 16.0 / (super::SIZE.0 - super::LEGEND_WIDTH) as f64;
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
        chart.draw_series(std::iter::once(
            EmptyElement::at((m.started_secs, y_hi)) + Text::new(text, (14, 4), style),
        ))?;
    }
    let mut entries: Vec<(String, Swatch)> = METRICS
        .iter()
        .map(|(name, p)| {
            (
                format!("{name} per interval"),
                Swatch::Line {
                    color: PERCENTILE_COLORS[*p],
                    width: 2,
                    dashed: false,
                    dot: true,
                },
            )
        })
        .collect();
    entries.push(("open-loop step".into(), Swatch::Band(WHITE)));
    entries.push(("closed-loop run".into(), Swatch::Band(band)));
    legend(&legend_area, "response time", &entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steps_band_runs_from_p50_to_the_last_bounded_interval() {
        use crate::report::sweep::{PercentileSummary, StepSummary};
        use crate::stats::confidence::Ci95;
        let at = |ci: Ci95| PercentileSummary {
            median_ns: ci.low(),
            within_ci95_ns: Some(ci),
            repeats_ci95_ns: None,
            repeats_coverage: None,
            ci95_ns: Some(ci),
        };
        let response = [
            ("p50", at(Ci95(100_000, Some(110_000)))),
            ("p90", at(Ci95(200_000, Some(230_000)))),
            ("p95", at(Ci95(300_000, None))),
            ("p99", at(Ci95(400_000, Some(500_000)))),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let step = StepSummary {
            target_rate_per_sec: 1000.0,
            runs: 1,
            achieved_rate_per_sec: 1000.0,
            response,
            bottleneck: None,
            slo: None,
        };
        let band = spectrum_band(&step);
        assert_eq!(band.len(), 2, "{band:?}");
        assert!((band[0].0 - 2f64.log10()).abs() < 1e-12 && (band[1].0 - 1.0).abs() < 1e-12);
        assert!((band[1].2 - 0.23f64.log10()).abs() < 1e-9, "{band:?}");
    }

    #[test]
    fn spectrum_ticks_read_as_percentiles() {
        assert_eq!(percentile_label(0.0), "0%");
        assert_eq!(percentile_label(2f64.log10()), "50%");
        assert_eq!(percentile_label(1.0), "90%");
        assert_eq!(percentile_label(2.0), "99%");
        assert_eq!(percentile_label(3.0), "99.9%");
        assert_eq!(percentile_label(5.0), "99.999%");
    }
}
