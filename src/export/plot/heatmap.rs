//! The response-time heatmap of a sweep or of a run: time along x, log-spaced latency
//! bins up y, each cell coloured by the share of its window's replies that fell in it.
//! A stall shows as a column reaching up, a bimodal tail as two bands, where a
//! percentile line hides both. Drawn from the saved response windows (half a second
//! each, longer past two minutes), so it needs no interval log.

use plotters::prelude::*;

use super::axis::{Linear, XyChart};
use super::{
    Area, Axes, DrawResult, LogAxis, Swatch, Ticks, chart_on, frame, legend, subtitle,
    time::run_labels,
};
use crate::report::RunReport;
use crate::report::sweep::SweepReport;
use crate::stats::confidence::Batch;

/// The chart the cells are drawn on: seconds along x, a log10 millisecond axis up y.
type HeatChart<'a, 'b> = XyChart<'a, 'b, Linear, Ticks>;

/// Latency bins per decade.
const BINS_PER_DECADE: u32 = 10;

/// Colour classes per decade of share: a spread tail (0.25 to 16 ms, each bin 1% to 10%
/// of a window's replies) shows its slope in three colours, not one.
const CLASSES_PER_DECADE: i32 = 3;
/// Decades of share coloured apart; shares under `10^-SHARE_DECADES` (0.01%) take the
/// lightest colour.
const SHARE_DECADES: i32 = 4;
/// The colour classes: 0 holds the highest shares.
const CLASSES: usize = (CLASSES_PER_DECADE * SHARE_DECADES + 1) as usize;
/// The ramp the classes are spread along, highest share first (after viridis, light for
/// rare so that a stall's few slow replies still show against the white page).
const RAMP: [RGBColor; 5] = [
    RGBColor(68, 1, 84),
    RGBColor(49, 104, 142),
    RGBColor(33, 145, 140),
    RGBColor(94, 201, 98),
    RGBColor(253, 231, 37),
];

/// The class of `share` (of a window's replies in one cell).
fn class(share: f64) -> usize {
    if share <= 0.0 {
        return CLASSES - 1;
    }
    // A hair under, so a share on a class's edge (10%) is in the class it opens.
    let k = (-share.log10() * f64::from(CLASSES_PER_DECADE) - 1e-9).ceil() - 1.0;
    (k.max(0.0) as usize).min(CLASSES - 1)
}

/// The colour of class `k`, along [`RAMP`].
fn class_color(k: usize) -> RGBColor {
    let t = k as f64 / (CLASSES - 1) as f64 * (RAMP.len() - 1) as f64;
    let i = (t.floor() as usize).min(RAMP.len() - 2);
    let f = t - i as f64;
    let (a, b) = (RAMP[i], RAMP[i + 1]);
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The colour of a cell holding `share` of its window's replies.
fn share_color(share: f64) -> RGBColor {
    class_color(class(share))
}

/// The legend's words for class `k`: `46% or more`, `4.6% to 10%`, `under 0.01%`.
fn class_label(k: usize) -> String {
    let edge = |j: usize| percent(10f64.powf(-(j as f64) / f64::from(CLASSES_PER_DECADE)));
    match k {
        0 => format!("{} or more", edge(1)),
        k if k == CLASSES - 1 => format!("under {}", edge(k)),
        k => format!("{} to {}", edge(k + 1), edge(k)),
    }
}

/// A share as a percentage to two significant figures: `46%`, `4.6%`, `0.1%`.
fn percent(share: f64) -> String {
    let p = share * 100.0;
    let decimals = (1.0 - p.log10().floor()).max(0.0) as usize;
    let text = format!("{p:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text}%")
}

/// One window of one run: where it starts on the sweep's clock, how long it is, and its
/// replies.
struct Column<'a> {
    start_secs: f64,
    length_secs: f64,
    replies: &'a Batch,
}

/// The heatmap of `report`'s runs, one after another.
pub(super) fn heatmap(root: &Area<'_>, title: Option<&str>, report: &SweepReport) -> DrawResult {
    let head = (
        "Response-time heatmap over the sweep",
        subtitle(report),
        "time since the sweep started (s)",
    );
    draw_heatmap(root, title, head, &columns(report), |chart, t_max, y_hi| {
        run_labels(chart, report, t_max, y_hi)
    })
}

/// The heatmap of a run report's tests, one after another on the time they measured.
pub(super) fn run_heatmap(root: &Area<'_>, title: Option<&str>, report: &RunReport) -> DrawResult {
    let mut columns = Vec::new();
    let mut starts = Vec::new();
    let mut at = 0.0;
    for test in &report.tests {
        starts.push((at, test.name.as_str()));
        if let Some(windows) = &test.response_windows {
            for (i, replies) in windows.windows.iter().enumerate() {
                columns.push(Column {
                    start_secs: at + i as f64 * windows.window_secs,
                    length_secs: windows.window_secs,
                    replies,
                });
            }
        }
        at += test.measured_secs;
    }
    let rate = report.tests.first().and_then(|t| t.target_rate_per_sec);
    let head = (
        "Response-time heatmap over the run",
        format!(
            "{} on {}{} · {}{}",
            report
                .tests
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            report.header.server.endpoint,
            super::server_version(&report.header),
            super::connections(report.settings.clients),
            rate.map(|r| format!(" · open loop at {r:.0} req/s"))
                .unwrap_or_default()
        ),
        "time since the measured window started (s)",
    );
    draw_heatmap(root, title, head, &columns, |chart, _, y_hi| {
        for &(x, name) in starts.iter().skip(usize::from(starts.len() < 2)) {
            let style = super::font(12).color(&RGBColor(110, 110, 110));
            super::draw_text(chart, (x, y_hi), name.to_string(), (4, 4), style)?;
        }
        Ok(())
    })
}

/// A heatmap of `columns` with its heading, subtitle and x label (`head`), the labels
/// `label` draws (given the chart, the end of the time axis and the top of the latency
/// axis) and the legend of the share classes.
fn draw_heatmap(
    root: &Area<'_>,
    title: Option<&str>,
    (heading, subtitle, x_label): (&str, String, &'static str),
    columns: &[Column<'_>],
    label: impl FnOnce(&mut HeatChart<'_, '_>, f64, f64) -> DrawResult,
) -> DrawResult {
    let (plot, legend_area) = frame(root, title, heading, &subtitle)?;
    let t_max = columns
        .iter()
        .map(|c| c.start_secs + c.length_secs)
        .fold(1.0f64, f64::max)
        * 1.02;
    let axis = LogAxis::covering(
        columns
            .iter()
            .flat_map(|c| c.replies.values())
            .map(|ns| ns as f64 / 1e6),
    );
    let mut chart = chart_on(&plot, 16, Linear::new(0.0..t_max), axis.coord())?;
    let seconds = super::seconds_label(t_max);
    Axes::response_time(x_label, &seconds)
        .x_labels(10)
        .draw(&mut chart)?;
    let step = 1.0 / f64::from(BINS_PER_DECADE);
    // Adjacent bins of one column in one colour are one rectangle: a third of the
    // elements, and of the file.
    let mut runs: Vec<(usize, RGBColor, f64, f64)> = Vec::new();
    for (i, low, share) in cells(columns, axis) {
        let color = share_color(share);
        match runs.last_mut() {
            Some(last) if last.0 == i && last.1 == color && (last.3 - low).abs() < 1e-9 => {
                last.3 = low + step;
            }
            _ => runs.push((i, color, low, low + step)),
        }
    }
    for (i, color, low, high) in runs {
        let c = &columns[i];
        chart.plotting_area().draw(&Rectangle::new(
            [(c.start_secs, low), (c.start_secs + c.length_secs, high)],
            color.filled(),
        ))?;
    }
    label(&mut chart, t_max, axis.hi as f64)?;
    let entries: Vec<(String, Swatch)> = (0..CLASSES)
        .map(|k| (class_label(k), Swatch::Band(class_color(k))))
        .collect();
    legend(&legend_area, "share of a window's replies", &entries)
}

/// Every run's response windows on the sweep's clock: a run's first window starts after
/// its warm-up (an open loop's; a closed loop has none).
fn columns(report: &SweepReport) -> Vec<Column<'_>> {
    let mut out = Vec::new();
    for m in &report.runs {
        let Some(windows) = &m.report.response_windows else {
            continue;
        };
        let warmup = if m.kind.is_open_loop() {
            report.plan.warmup_secs
        } else {
            0.0
        };
        for (i, replies) in windows.windows.iter().enumerate() {
            out.push(Column {
                start_secs: m.started_secs + warmup + i as f64 * windows.window_secs,
                length_secs: windows.window_secs,
                replies,
            });
        }
    }
    out
}

/// The cells with replies: for each of `columns` (by index) and each bin of `axis`
/// ([`BINS_PER_DECADE`] a decade, by its low end on the axis), the share of the
/// column's replies in the bin.
fn cells(columns: &[Column<'_>], axis: LogAxis) -> Vec<(usize, f64, f64)> {
    let per = BINS_PER_DECADE as i32;
    let step = 1.0 / f64::from(BINS_PER_DECADE);
    let mut out = Vec::new();
    for (i, c) in columns.iter().enumerate() {
        let total = c.replies.len();
        if total == 0 {
            continue;
        }
        for b in axis.lo * per..axis.hi * per {
            let low = f64::from(b) * step;
            let count =
                at_most_ms(c.replies, low + step).saturating_sub(at_most_ms(c.replies, low));
            if count > 0 {
                out.push((i, low, count as f64 / total as f64));
            }
        }
    }
    out
}

/// Replies at or under `log10_ms` (a position on the latency axis) in `replies`.
fn at_most_ms(replies: &Batch, log10_ms: f64) -> u64 {
    let ns = 10f64.powf(log10_ms) * 1e6;
    // Just under the bin's edge, so that a value on it counts in the bin above.
    replies.at_most((ns as u64).saturating_sub(1))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A window of `n` replies at 60 µs, and `slow` more at 150 ms (both well inside a
    /// bin: a bucket of the windows is 1% wide).
    fn window(n: u64, slow: u64) -> Batch {
        let mut h = crate::record::new_histogram();
        h.record_n(60_000, n).unwrap();
        if slow > 0 {
            h.record_n(150_000_000, slow).unwrap();
        }
        Batch::of(&h)
    }

    #[test]
    fn a_stall_is_a_column_reaching_up_and_calm_windows_stay_low() {
        let windows: Vec<Batch> = (0..10)
            .map(|i| window(1_000, if i == 3 || i == 7 { 50 } else { 0 }))
            .collect();
        let columns: Vec<Column<'_>> = windows
            .iter()
            .enumerate()
            .map(|(i, replies)| Column {
                start_secs: i as f64 * 0.5,
                length_secs: 0.5,
                replies,
            })
            .collect();
        let axis = LogAxis { lo: -2, hi: 3 };
        let cells = cells(&columns, axis);
        // 150 ms is 10^2.18 ms: in the bin from 2.1 to 2.2 on the axis.
        let slow: Vec<usize> = cells
            .iter()
            .filter(|(_, low, _)| *low > 2.0)
            .map(|&(i, _, _)| i)
            .collect();
        assert_eq!(slow, vec![3, 7], "{cells:?}");
        for &(i, low, share) in &cells {
            if low > 2.0 {
                assert!((share - 50.0 / 1050.0).abs() < 1e-9, "{share}");
                assert!((low - 2.1).abs() < 1e-9, "{low}");
            } else {
                // 60 us is 10^-1.22 ms.
                assert!((low + 1.3).abs() < 1e-9, "{i} {low}");
            }
        }
        assert_eq!(cells.len(), 12, "{cells:?}");
    }

    #[test]
    fn a_tail_spread_over_0_25_to_16_ms_shows_its_slope_in_several_colours() {
        // Eighteen bins (10^-0.6 to 10^1.2 ms, 0.25 to 16 ms), each a value at its middle,
        // their counts falling from 100 to 15: every share between 1% and 10%.
        let mut h = crate::record::new_histogram();
        for b in 0..18u64 {
            let log10_ms = -0.6 + 0.1 * b as f64 + 0.05;
            let ns = (10f64.powf(log10_ms) * 1e6) as u64;
            h.record_n(ns, 100 - 5 * b).unwrap();
        }
        let replies = Batch::of(&h);
        let columns = [Column {
            start_secs: 0.0,
            length_secs: 0.5,
            replies: &replies,
        }];
        let cells = cells(&columns, LogAxis { lo: -1, hi: 2 });
        let inside: Vec<&(usize, f64, f64)> = cells
            .iter()
            .filter(|(_, low, _)| *low >= 0.25f64.log10() - 1e-9 && *low < 16f64.log10())
            .collect();
        assert_eq!(inside.len(), 18, "{cells:?}");
        assert!(
            inside.iter().all(|c| (0.01..0.1).contains(&c.2)),
            "{cells:?}"
        );
        let mut colors: Vec<RGBColor> = inside.iter().map(|c| share_color(c.2)).collect();
        colors.dedup();
        assert!(colors.len() >= 3, "{} colours: {colors:?}", colors.len());
    }

    #[test]
    fn the_share_classes_are_labelled_in_order_and_coloured_apart() {
        let labels: Vec<String> = (0..CLASSES).map(class_label).collect();
        assert_eq!(labels[0], "46% or more");
        assert_eq!(labels[3], "4.6% to 10%");
        assert_eq!(labels[CLASSES - 1], "under 0.01%");
        assert_eq!(class(0.1), 2);
        assert_eq!(class(1.0), 0);
        assert_eq!(class(0.099), 3);
        assert_eq!(class(0.0), CLASSES - 1);
        let mut colors: Vec<RGBColor> = (0..CLASSES).map(class_color).collect();
        colors.dedup();
        assert_eq!(colors.len(), CLASSES);
    }
}
