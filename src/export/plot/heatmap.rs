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

/// Colours by share of a window's replies, highest share first, with their legend
/// labels (a sequential palette after viridis, light for rare so that a stall's few
/// slow replies still show against the white page).
const SHARES: [(f64, RGBColor, &str); 5] = [
    (0.1, RGBColor(68, 1, 84), "10% or more"),
    (0.01, RGBColor(49, 104, 142), "1% to 10%"),
    (0.001, RGBColor(33, 145, 140), "0.1% to 1%"),
    (1e-4, RGBColor(94, 201, 98), "0.01% to 0.1%"),
    (0.0, RGBColor(253, 231, 37), "under 0.01%"),
];

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
/// axis) and the legend of [`SHARES`].
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
        let color = SHARES
            .iter()
            .find(|(from, _, _)| share >= *from)
            .map_or(SHARES[SHARES.len() - 1].1, |s| s.1);
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
    let entries: Vec<(String, Swatch)> = SHARES
        .iter()
        .map(|(_, color, label)| ((*label).to_string(), Swatch::Band(*color)))
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
}
