//! SVG plots of a sweep (plotters' SVG backend): latency versus offered rate, the
//! latency-by-percentile spectrum, latency over time, achieved versus target rate, and
//! the response-time heatmap.
//!
//! Rendering is a pure function of the saved [`SweepReport`]: no clock, no hash order,
//! integer pixel coordinates, and text sized by plotters' built-in estimate (no system
//! fonts), so `tailrate plot sweep.json` redraws what the sweep wrote byte for byte.
//! Every chart has a two-line title (what it shows; test, server and version), axis
//! labels with units, and a legend in a panel of its own beside the data. Running the
//! sweep is `sweep`'s business.
//!
//! This file holds the entry points, the palette, fonts and the title frame. The pieces
//! every chart shares: `axis.rs` (the chart area, the mesh, the axes and number formats),
//! `marks.rs` (markers, lines, anchored text), `legend.rs` (the legend panel) and
//! `per_rate.rs` (runs grouped by rate, with their intervals). One chart each: `rate/`,
//! `spectrum.rs`, `time.rs`, `achieved.rs` and `heatmap.rs`.

mod achieved;
mod axis;
mod heatmap;
mod legend;
mod marks;
mod per_rate;
mod rate;
mod spectrum;
mod time;

use axis::{Axes, LogAxis, Ticks, chart_on, log_ms, ms_label, rate_label};
use legend::{Swatch, legend};
use marks::{Shape, draw_line, draw_markers, draw_text};
use per_rate::{Whisker, draw_whiskers, median_log_ms, rate_groups};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::record::Metric;
use crate::report::sweep::{Kind, Measurement, SweepReport};
use crate::report::{Latency, RunReport};

/// Percentile versus offered rate.
pub const LATENCY_VS_RATE: &str = "latency-vs-rate.svg";
/// Latency-by-percentile spectrum, one curve per step.
pub const PERCENTILE_SPECTRUM: &str = "percentile-spectrum.svg";
/// p50/p99/max per interval over the sweep.
pub const LATENCY_OVER_TIME: &str = "latency-over-time.svg";
/// Achieved versus target rate.
pub const ACHIEVED_VS_TARGET: &str = "achieved-vs-target.svg";
/// Share of replies per latency bin and half-second window over the sweep.
pub const LATENCY_HEATMAP: &str = "latency-heatmap.svg";
/// The charts of a sweep, in the order drawn.
pub const FILE_NAMES: [&str; 5] = [
    LATENCY_VS_RATE,
    PERCENTILE_SPECTRUM,
    LATENCY_OVER_TIME,
    ACHIEVED_VS_TARGET,
    LATENCY_HEATMAP,
];

/// Canvas size in pixels; readable at 800 px wide.
pub const SIZE: (u32, u32) = (900, 580);
/// Width of the legend panel at the right.
const LEGEND_WIDTH: u32 = 210;
/// Height of the title block.
const TITLE_HEIGHT: u32 = 58;

/// Picks one summary value out of a [`Latency`].
pub type Pick = fn(&Latency) -> u64;

/// The percentiles drawn as lines, with their legend labels.
pub const PERCENTILES: [(&str, Pick); 6] = [
    ("p50", |l| l.p50_ns),
    ("p90", |l| l.p90_ns),
    ("p99", |l| l.p99_ns),
    ("p99.9", |l| l.p99_9_ns),
    ("p99.99", |l| l.p99_99_ns),
    ("max", |l| l.max_ns),
];

/// Colour of each entry of [`PERCENTILES`] (colour-blind-safe, after Okabe and Ito).
pub const PERCENTILE_COLORS: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(0, 158, 115),
    RGBColor(230, 159, 0),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
    RGBColor(60, 60, 60),
];

const INK: RGBColor = RGBColor(40, 40, 40);
const GRID: RGBColor = RGBColor(225, 225, 225);
const GRID_BOLD: RGBColor = RGBColor(195, 195, 195);
const CAPACITY: RGBColor = RGBColor(0, 130, 60);
const ALERT: RGBColor = RGBColor(200, 30, 30);
/// The capacity's band, where the verdict is uncertain (drawn translucent).
const BAND: RGBColor = RGBColor(240, 200, 60);
/// Opacity of the band.
const BAND_OPACITY: f64 = 0.28;
/// Neutral: reference lines, uncertain verdicts, and legend swatches that stand for a kind
/// of mark rather than for a percentile.
const GRAY: RGBColor = RGBColor(130, 130, 130);
/// Colours of overlaid sweeps on the achieved-versus-target chart.
const INPUT_COLORS: [RGBColor; 4] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
];

/// One drawn chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// File name inside the output directory.
    pub file_name: String,
    /// The SVG document.
    pub svg: String,
}

/// A chart that could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("drawing {file}: {why}")]
pub struct PlotError {
    /// The chart's file name.
    pub file: String,
    /// What plotters said.
    pub why: String,
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// The four charts of one sweep, with `title` before each chart's own heading.
pub fn render_sweep(report: &SweepReport, title: Option<&str>) -> Result<Vec<Chart>, PlotError> {
    if !report.runs.iter().any(|m| m.report.counts.completed > 0) {
        return FILE_NAMES
            .into_iter()
            .map(|file| draw(file, |a| nothing_measured(a, title, report)))
            .collect();
    }
    let one = [(String::new(), report)];
    Ok(vec![
        draw(LATENCY_VS_RATE, |a| rate::latency_vs_rate(a, title, &one))?,
        draw(PERCENTILE_SPECTRUM, |a| {
            spectrum::spectrum(a, title, report)
        })?,
        draw(LATENCY_OVER_TIME, |a| time::over_time(a, title, report))?,
        draw(ACHIEVED_VS_TARGET, |a| {
            achieved::achieved_vs_target(a, title, &one)
        })?,
        draw(LATENCY_HEATMAP, |a| heatmap::heatmap(a, title, report))?,
    ])
}

/// The charts of one run report: the response-time heatmap of its tests.
pub fn render_run(report: &RunReport, title: Option<&str>) -> Result<Vec<Chart>, PlotError> {
    Ok(vec![draw(LATENCY_HEATMAP, |a| {
        heatmap::run_heatmap(a, title, report)
    })?])
}

/// Several sweeps (labelled, e.g. by file stem) overlaid on the latency-vs-rate and
/// achieved-vs-target charts; the spectrum, time and heatmap charts are drawn once per
/// sweep, named `<label>-percentile-spectrum.svg`, `<label>-latency-over-time.svg` and
/// `<label>-latency-heatmap.svg`.
pub fn render_overlay(
    inputs: &[(String, SweepReport)],
    title: Option<&str>,
) -> Result<Vec<Chart>, PlotError> {
    let labels = distinct_labels(inputs.iter().map(|(l, _)| l.as_str()));
    let labelled: Vec<(String, &SweepReport)> = labels
        .iter()
        .cloned()
        .zip(inputs.iter().map(|(_, r)| r))
        .collect();
    let mut charts = vec![
        draw(LATENCY_VS_RATE, |a| {
            rate::latency_vs_rate(a, title, &labelled)
        })?,
        draw(ACHIEVED_VS_TARGET, |a| {
            achieved::achieved_vs_target(a, title, &labelled)
        })?,
    ];
    for (label, report) in &labelled {
        let stem: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        charts.push(draw(&format!("{stem}-{PERCENTILE_SPECTRUM}"), |a| {
            spectrum::spectrum(a, title, report)
        })?);
        charts.push(draw(&format!("{stem}-{LATENCY_OVER_TIME}"), |a| {
            time::over_time(a, title, report)
        })?);
        charts.push(draw(&format!("{stem}-{LATENCY_HEATMAP}"), |a| {
            heatmap::heatmap(a, title, report)
        })?);
    }
    Ok(charts)
}

/// Labels made distinct by numbering repeats (`sweep`, `sweep#2`).
fn distinct_labels<'a>(labels: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for label in labels {
        let mut candidate = label.to_string();
        let mut n = 1;
        while out.contains(&candidate) {
            n += 1;
            candidate = format!("{label}#{n}");
        }
        out.push(candidate);
    }
    out
}

/// One chart named `file`: a white canvas of [`SIZE`] that `body` draws on, as SVG.
fn draw(file: &str, body: impl FnOnce(&Area<'_>) -> DrawResult) -> Result<Chart, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let result = root
            .fill(&WHITE)
            .map_err(Into::into)
            .and_then(|()| body(&root))
            .and_then(|()| root.present().map_err(Into::into));
        result.map_err(|e| PlotError {
            file: file.to_string(),
            why: e.to_string(),
        })?;
    }
    Ok(Chart {
        file_name: file.to_string(),
        svg,
    })
}

/// A chart of a sweep that measured nothing (interrupted before any run got a reply):
/// its heading and a note, not axes whose ticks would read `0 0 0 1 1 1`.
fn nothing_measured(root: &Area<'_>, title: Option<&str>, report: &SweepReport) -> DrawResult {
    let (plot, _) = frame(root, title, "No complete step", &subtitle(report))?;
    let why = if report.interrupted {
        "the sweep was interrupted before any run got a reply"
    } else {
        "no run of the sweep got a reply"
    };
    plot.draw_text(why, &font(18), (40, 60))?;
    Ok(())
}

/// The user's title before the chart's own heading, joined by one colon (`--title 'X:'`
/// already ends in its own).
fn heading_text(title: Option<&str>, heading: &str) -> String {
    match title.map(str::trim_end) {
        Some(title) if title.ends_with(':') => format!("{title} {heading}"),
        Some(title) => format!("{title}: {heading}"),
        None => heading.to_string(),
    }
}

/// Splits the canvas into the title block, the plot and the legend panel; draws the title.
/// `title` is the user's (`tailrate plot --title`), put before the chart's own `heading`.
fn frame<'a>(
    root: &Area<'a>,
    title: Option<&str>,
    heading: &str,
    subtitle: &str,
) -> Result<(Area<'a>, Area<'a>), Box<dyn std::error::Error>> {
    let (top, rest) = root.split_vertically(TITLE_HEIGHT);
    let heading = heading_text(title, heading);
    top.draw_text(&heading, &bold(22), (14, 10))?;
    top.draw_text(subtitle, &font(15).color(&RGBColor(90, 90, 90)), (14, 36))?;
    let (plot, legend) = rest.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    Ok((plot, legend))
}

/// The subtitle naming the test, server and version, and the load shape.
fn subtitle(report: &SweepReport) -> String {
    let version = server_version(&report.header);
    let arrival = match (&report.settings.replay, report.settings.arrival) {
        (Some(_), _) => ", arrivals as recorded".to_string(),
        (None, Some(a)) => format!(", {} arrivals", format!("{a:?}").to_lowercase()),
        (None, None) => String::new(),
    };
    format!(
        "{} on {}{version} · {}{arrival} · {} s steps",
        report.test,
        report.header.server.endpoint,
        connections(report.settings.clients),
        report.plan.duration_secs
    )
}

/// `1 connection`, `50 connections`.
fn connections(n: usize) -> String {
    format!("{n} connection{}", if n == 1 { "" } else { "s" })
}

/// `, redis 7.2.4` when the run or sweep saw the server's version, else nothing.
fn server_version(header: &crate::report::Header) -> String {
    header
        .server
        .version
        .as_deref()
        .map(|v| format!(", redis {v}"))
        .unwrap_or_default()
}

/// A font of plotters size `size` (the SVG gets `size / 1.24` px).
fn font(size: u32) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", size).into_font()).color(&INK)
}

/// A bold [`font`].
fn bold(size: u32) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", size).into_font().style(FontStyle::Bold)).color(&INK)
}

/// Colour `i` of `n` along a dark-blue to dark-red ramp (no pale middle, readable on white).
fn ramp(i: usize, n: usize) -> RGBColor {
    const ANCHORS: [(f64, f64, f64); 6] = [
        (49.0, 54.0, 149.0),
        (69.0, 117.0, 180.0),
        (60.0, 160.0, 170.0),
        (230.0, 150.0, 50.0),
        (215.0, 48.0, 39.0),
        (140.0, 0.0, 40.0),
    ];
    let t = if n <= 1 {
        0.0
    } else {
        i as f64 / (n - 1) as f64
    } * (ANCHORS.len() - 1) as f64;
    let k = (t.floor() as usize).min(ANCHORS.len() - 2);
    let f = t - k as f64;
    let (a, b) = (ANCHORS[k], ANCHORS[k + 1]);
    let mix = |x: f64, y: f64| (x + (y - x) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

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

/// The latency of `metric` (response, service) of a run, where it has one.
fn metric(m: &Measurement, metric: Metric) -> Option<&Latency> {
    m.report.latency.get(&metric)
}

/// The subtitle of a chart of one sweep, or of several overlaid.
fn subtitle_of(inputs: &[(String, &SweepReport)]) -> String {
    match inputs {
        [(_, only)] => subtitle(only),
        _ => inputs
            .iter()
            .map(|(label, r)| {
                let version = server_version(&r.header);
                format!(
                    "{label}: {} on {}{version}",
                    r.test, r.header.server.endpoint
                )
            })
            .collect::<Vec<_>>()
            .join("  vs  "),
    }
}

#[cfg(test)]
mod tests;

/// Labels of a time axis ending at `t_max` seconds: whole seconds, or tenths on an axis of
/// under ten seconds (whose ten ticks would otherwise read `0 0 0 1 1 1`).
pub(super) fn seconds_label(t_max: f64) -> impl Fn(&f64) -> String {
    let decimals = usize::from(t_max < 10.0);
    move |v: &f64| format!("{v:.decimals$}")
}
