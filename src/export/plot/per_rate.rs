//! A sweep's runs at each rate, together on a chart: grouped by target rate, the median
//! of what they measured, and each rate's 95% intervals drawn as whiskers.

use plotters::prelude::*;

use super::axis::{F64Axis, XyChart};
use super::{DrawResult, log_ms};
use crate::report::sweep::{Measurement, SweepReport};
use crate::stats::median::median_f64;

/// Every open-loop run (coarse, search and re-measurement, every repeat) grouped by
/// target rate, by increasing rate.
pub(super) fn rate_groups(report: &SweepReport) -> Vec<(f64, Vec<&Measurement>)> {
    crate::judge::summary::by_rate(&report.runs)
}

/// The median of what `pick` reads from each run of `group` (the mean of the middle two
/// for an even count, rounded down to a nanosecond), as log10 ms; `None` when no run has
/// it.
pub(super) fn median_log_ms(
    group: &[&Measurement],
    pick: impl Fn(&Measurement) -> Option<u64>,
) -> Option<f64> {
    // Nanoseconds under an hour are exact as f64, and so is the sum of two.
    let values: Vec<f64> = group
        .iter()
        .filter_map(|m| pick(m))
        .map(|v| v as f64)
        .collect();
    if values.is_empty() {
        return None;
    }
    log_ms(median_f64(&values) as u64)
}

/// A step's 95% interval as drawn: `(x, log10 ms of the low end, of the high end or
/// `None` when unbounded, of the median)`.
pub(super) type Whisker = (f64, f64, Option<f64>, f64);

/// Draws each interval of `whiskers` as a vertical line with caps, `dx` pixels right of its
/// x; an unbounded one as a line from its low end up past its median, ending in an open
/// arrowhead.
pub(super) fn draw_whiskers<XR: F64Axis, YR: F64Axis>(
    chart: &mut XyChart<'_, '_, XR, YR>,
    whiskers: &[Whisker],
    color: RGBColor,
    dx: i32,
) -> DrawResult {
    let style = color.stroke_width(1);
    for &(x, low, high, median) in whiskers {
        let (_, y_low) = chart.backend_coord(&(x, low));
        let (_, y_mid) = chart.backend_coord(&(x, median));
        let cap = |y: i32| PathElement::new(vec![(dx - 3, y), (dx + 3, y)], style);
        let element = EmptyElement::at((x, low)) + cap(0);
        match high {
            Some(high) => {
                let (_, y_high) = chart.backend_coord(&(x, high));
                let top = y_high - y_low;
                chart.draw_series(std::iter::once(
                    element + PathElement::new(vec![(dx, 0), (dx, top)], style) + cap(top),
                ))?;
            }
            None => {
                // Past the median by 12 px, then an open arrowhead: no upper end.
                let top = y_mid - y_low - 12;
                chart.draw_series(std::iter::once(
                    element
                        + PathElement::new(vec![(dx, 0), (dx, top)], style)
                        + PathElement::new(
                            vec![(dx - 3, top + 5), (dx, top), (dx + 3, top + 5)],
                            style,
                        ),
                ))?;
            }
        }
    }
    Ok(())
}
