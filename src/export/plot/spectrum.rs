//! The latency-by-percentile spectrum of one sweep, read from its histograms and
//! intervals: HdrHistogram's standard picture, x = `1/(1-q)` on a log scale, each step's
//! curve in a band of its percentiles' 95% intervals.

use plotters::prelude::*;

use super::axis::SvgChart;
use super::{
    Area, Axes, DrawResult, INK, LogAxis, Swatch, Ticks, chart_on, frame, legend, log_ms, ramp,
    rate_label, subtitle,
};
use crate::report::sweep::{Kind, Measurement, StepSummary, SweepReport};

/// Steps between x = 0 and x = 1 (one decade of `1/(1-q)`) on the spectrum.
const SPECTRUM_POINTS_PER_DECADE: u32 = 40;
/// Widest spectrum: up to the 99.9999th percentile.
const SPECTRUM_MAX_DECADES: u32 = 6;

/// The runs drawn on the spectrum: one per coarse rate (of its runs, the one with the
/// median p99), by rate, then the re-measured capacity (a confirmation run: the one run
/// of its kind drawn, in ink).
fn spectrum_runs(report: &SweepReport) -> Vec<(&Measurement, String)> {
    let mut runs: Vec<(&Measurement, String)> = Vec::new();
    for (rate, group) in crate::judge::summary::by_rate(&report.runs) {
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
        // Held, where the capacity the text leads with is the estimate.
        let estimated = report.slo.as_ref().and_then(|s| s.binding_estimate());
        let word = if estimated.is_some() {
            "held"
        } else {
            "capacity"
        };
        let rate = rate_label(capacity.unwrap_or(0.0));
        runs.push((m, format!("{rate}/s {word}")));
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
fn spectrum_band(step: &StepSummary) -> Vec<(f64, f64, f64)> {
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
    let axis = LogAxis::covering(curves.iter().flatten().map(|p| 10f64.powf(p.1)));
    let mut chart = chart_on(&plot, 24, percentile_axis(&curves), axis.coord())?;
    Axes::response_time("percentile (log scale of 1/(1-q))", &|v| {
        percentile_label(*v)
    })
    .draw(&mut chart)?;
    let banded = draw_bands(&mut chart, report, &runs)?;
    let mut entries = Vec::new();
    for (i, ((m, label), points)) in runs.iter().zip(curves).enumerate() {
        let capacity = m.kind == Kind::Confirm;
        let color = if capacity { INK } else { ramp(i, runs.len()) };
        let width = if capacity { 3 } else { 2 };
        chart.draw_series(std::iter::once(PathElement::new(
            points,
            color.stroke_width(width),
        )))?;
        entries.push((label.clone(), Swatch::line(color, width)));
    }
    if banded {
        entries.push((
            "95% intervals (band)".into(),
            Swatch::Band(RGBColor(215, 220, 235)),
        ));
    }
    legend(&legend_area, "target rate", &entries)
}

/// The percentile axis: whole decades of `1/(1-q)` as far as the longest curve reaches
/// (at least two, at most [`SPECTRUM_MAX_DECADES`]), with a tick at the median too.
fn percentile_axis(curves: &[Vec<(f64, f64)>]) -> Ticks {
    let decades = curves
        .iter()
        .flatten()
        .map(|p| p.0.ceil() as u32)
        .max()
        .unwrap_or(3)
        .clamp(2, SPECTRUM_MAX_DECADES);
    let mut keys: Vec<f64> = (0..=decades).map(f64::from).collect();
    keys.insert(1, 2f64.log10());
    Ticks {
        range: 0f64..decades as f64,
        bold: keys,
        light: Vec::new(),
    }
}

/// Each rate's 95% intervals at the reported percentiles as a translucent band around
/// its curve, up to the last percentile whose interval is bounded, beneath every line.
/// Returns whether any band was drawn.
fn draw_bands(
    chart: &mut SvgChart<'_, '_, Ticks, Ticks>,
    report: &SweepReport,
    runs: &[(&Measurement, String)],
) -> Result<bool, Box<dyn std::error::Error>> {
    let summaries = crate::judge::summary::steps_of(report);
    let mut banded = false;
    for (i, (m, _)) in runs.iter().enumerate() {
        if m.kind == Kind::Confirm {
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
    Ok(banded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steps_band_runs_from_p50_to_the_last_bounded_interval() {
        use crate::report::sweep::{PooledPercentile, StepSummary};
        use crate::stats::confidence::Ci95;
        let at = |ci: Ci95| PooledPercentile {
            value_ns: ci.low(),
            ci95_ns: Some(ci),
            runs: 1,
            values_ns: Vec::new(),
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
            short_runs: 0,
            pooled_runs: 1,
            left_out: Vec::new(),
            backlog_runs: 0,
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
