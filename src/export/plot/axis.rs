//! Axes and their labels: the chart area every plot is built on and the one mesh (grid,
//! ticks, axis descriptions) every chart draws, a linear axis with grid lines at chosen
//! values, a log10 latency axis in whole decades, and the number formats of rates and
//! latencies.

use plotters::coord::ranged1d::{AsRangedCoord, DefaultFormatting, KeyPointHint, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::{Area, DrawResult, GRID, GRID_BOLD, font};

/// A chart on an SVG area with the axes `XR` and `YR`.
pub(super) type XyChart<'a, 'b, XR, YR> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<XR, YR>>;

/// A chart on an SVG area with x and y coordinates of the given kinds.
pub(super) type SvgChart<'a, 'b, X, Y> =
    XyChart<'a, 'b, <X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>;

/// An axis of `f64` values, linear or [`Ticks`]: what every drawing helper takes.
pub(super) trait F64Axis: Ranged<ValueType = f64> {}

impl<R: Ranged<ValueType = f64>> F64Axis for R {}

/// The chart grid inside a plot area: every chart has the same margins and label room
/// (but for the right margin, which leaves room for its last x label), so axes line up
/// when the SVGs are shown side by side.
pub(super) fn chart_on<'a, 'b, X: AsRangedCoord, Y: AsRangedCoord>(
    plot: &'a Area<'b>,
    margin_right_px: u32,
    x: X,
    y: Y,
) -> Result<SvgChart<'a, 'b, X, Y>, DrawingAreaErrorKind<std::io::Error>> {
    ChartBuilder::on(plot)
        .margin_top(14)
        .margin_right(margin_right_px)
        .margin_left(6)
        .margin_bottom(6)
        .x_label_area_size(50)
        .y_label_area_size(66)
        .build_cartesian_2d(x, y)
}

/// Formats one tick value as its label.
pub(super) type TickLabel<'f> = &'f dyn Fn(&f64) -> String;

/// What a chart's two axes say: a description and a tick label format each, and how many
/// ticks plotters aims for where the chart asks (its default otherwise). Every chart draws
/// its mesh through [`Axes::draw`], so grid colours and fonts are the same on all of them.
pub(super) struct Axes<'f> {
    x: (&'static str, TickLabel<'f>),
    y: (&'static str, TickLabel<'f>),
    x_labels: Option<usize>,
    y_labels: Option<usize>,
}

impl<'f> Axes<'f> {
    /// Axes described by `x_desc` and `y_desc`, their ticks labelled by `x_label` and `y_label`.
    pub(super) fn new(
        x_desc: &'static str,
        x_label: TickLabel<'f>,
        y_desc: &'static str,
        y_label: TickLabel<'f>,
    ) -> Self {
        Axes {
            x: (x_desc, x_label),
            y: (y_desc, y_label),
            x_labels: None,
            y_labels: None,
        }
    }

    /// Response time on a [`LogAxis`] up the y axis.
    pub(super) fn response_time(x_desc: &'static str, x_label: TickLabel<'f>) -> Self {
        Axes::new(
            x_desc,
            x_label,
            "response time (ms, log scale)",
            &decade_tick,
        )
    }

    /// About `n` ticks along x.
    pub(super) fn x_labels(self, n: usize) -> Self {
        Axes {
            x_labels: Some(n),
            ..self
        }
    }

    /// About `n` ticks along y.
    pub(super) fn y_labels(self, n: usize) -> Self {
        Axes {
            y_labels: Some(n),
            ..self
        }
    }

    /// Draws the grid, the ticks and their labels, and the axis descriptions on `chart`.
    pub(super) fn draw<XR, YR>(&self, chart: &mut XyChart<'_, '_, XR, YR>) -> DrawResult
    where
        XR: Ranged<ValueType = f64> + ValueFormatter<f64>,
        YR: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(self.x.0)
            .y_desc(self.y.0)
            .x_label_formatter(self.x.1)
            .y_label_formatter(self.y.1)
            .light_line_style(GRID)
            .max_light_lines(4)
            .bold_line_style(GRID_BOLD)
            .axis_desc_style(font(16))
            .label_style(font(14));
        if let Some(n) = self.x_labels {
            mesh.x_labels(n);
        }
        if let Some(n) = self.y_labels {
            mesh.y_labels(n);
        }
        mesh.draw()?;
        Ok(())
    }
}

/// A linear f64 axis whose grid lines and labels sit exactly at given values.
#[derive(Debug, Clone)]
pub(super) struct Ticks {
    pub(super) range: std::ops::Range<f64>,
    pub(super) bold: Vec<f64>,
    pub(super) light: Vec<f64>,
}

impl Ranged for Ticks {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        let t = if span > 0.0 {
            (value - self.range.start) / span
        } else {
            0.5
        };
        to_pixel(t, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

/// A linear f64 axis with plotters' own grid values, mapping as [`Ticks`] does: held to
/// the pixels near the plot (plotters' `RangedCoordf64` overflows an i32 on a value far
/// outside its range, and a hand-edited report can hold one).
#[derive(Clone)]
pub(super) struct Linear(RangedCoordf64);

impl Linear {
    /// The axis from `range.start` to `range.end`, each held to ±1e300 and the end past
    /// the start (plotters looks for grid values forever on an infinite range).
    pub(super) fn new(range: std::ops::Range<f64>) -> Linear {
        let finite = |v: f64| {
            if v.is_nan() {
                0.0
            } else {
                v.clamp(-1e300, 1e300)
            }
        };
        let start = finite(range.start);
        let end = finite(range.end);
        Linear((start..if end > start { end } else { start + 1.0 }).into())
    }
}

impl Ranged for Linear {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let range = self.0.range();
        let span = range.end - range.start;
        let t = if span > 0.0 {
            (value - range.start) / span
        } else {
            0.5
        };
        to_pixel(t, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        self.0.key_points(hint)
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.0.range()
    }
}

/// The pixel at fraction `t` of the way from `limit.0` to `limit.1`, `t` held to a few
/// plot widths either side (what lies there is off the chart either way).
fn to_pixel(t: f64, limit: (i32, i32)) -> i32 {
    let t = if t.is_nan() { 0.0 } else { t.clamp(-4.0, 5.0) };
    limit.0 + (f64::from(limit.1 - limit.0) * t).round() as i32
}

/// A log10 latency axis in milliseconds: whole decades, labelled 0.01, 0.1, 1, 10 ...
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LogAxis {
    pub(super) lo: i32,
    pub(super) hi: i32,
}

impl LogAxis {
    /// The decades that hold every positive value of `ms`, with a little room.
    pub(super) fn covering(ms: impl IntoIterator<Item = f64>) -> LogAxis {
        let (mut min, mut max) = (f64::INFINITY, 0.0f64);
        for v in ms.into_iter().filter(|v| v.is_finite() && *v > 0.0) {
            min = min.min(v);
            max = max.max(v);
        }
        if max <= 0.0 {
            return LogAxis { lo: -2, hi: 1 };
        }
        let lo = (min * 0.8).log10().floor() as i32;
        let hi = ((max * 1.25).log10().ceil() as i32).max(lo + 1);
        LogAxis { lo, hi }
    }

    pub(super) fn range(&self) -> std::ops::Range<f64> {
        self.lo as f64..self.hi as f64
    }

    pub(super) fn coord(&self) -> Ticks {
        let bold: Vec<f64> = (self.lo..=self.hi).map(f64::from).collect();
        let light: Vec<f64> = (self.lo..self.hi)
            .flat_map(|d| [2.0f64, 5.0].map(|m| d as f64 + m.log10()))
            .collect();
        Ticks {
            range: self.range(),
            bold,
            light,
        }
    }
}

/// Position of `ms` on a [`LogAxis`], or `None` when it cannot be drawn (zero).
pub(super) fn log_ms(ns: u64) -> Option<f64> {
    (ns > 0).then(|| (ns as f64 / 1e6).log10())
}

/// Label of a decade on a millisecond log axis: 0.001, 0.01, 0.1, 1, 10, 100 ...
pub(super) fn decade_label(exponent: f64) -> String {
    let e = exponent.round() as i32;
    if (exponent - e as f64).abs() > 1e-9 {
        return String::new();
    }
    if e < 0 {
        format!("{:.*}", (-e) as usize, 10f64.powi(e))
    } else {
        format!("{}", 10u64.pow(e as u32))
    }
}

/// [`decade_label`] of a tick.
fn decade_tick(exponent: &f64) -> String {
    decade_label(*exponent)
}

/// A rate for an axis or a label: 500, 2.5k, 20k, 1.2M.
pub(super) fn rate_label(rate: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if rate.abs() >= 1e6 {
        format!("{}M", trim(format!("{:.2}", rate / 1e6)))
    } else if rate.abs() >= 1e3 {
        format!("{}k", trim(format!("{:.1}", rate / 1e3)))
    } else {
        trim(format!("{rate:.0}"))
    }
}

/// A latency in ms for a label: three significant digits.
pub(super) fn ms_label(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else if ms >= 1.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.3} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_far_off_either_axis_maps_past_the_plot_edge_without_overflow() {
        let limit = (50, 850);
        let linear = Linear::new(0.0..10.0);
        let ticks = Ticks {
            range: 0.0..10.0,
            bold: vec![],
            light: vec![],
        };
        for value in [1e300, -1e300, f64::INFINITY, f64::NAN, u64::MAX as f64] {
            for pixel in [linear.map(&value, limit), ticks.map(&value, limit)] {
                assert!((-3_200..=4_050).contains(&pixel), "{value} at {pixel}");
            }
        }
        assert_eq!(linear.map(&5.0, limit), 450);
        for range in [
            0.0..f64::INFINITY,
            f64::NAN..1.0,
            5.0..5.0,
            -f64::MAX..f64::MAX,
        ] {
            let axis = Linear::new(range.clone());
            assert!(!axis.key_points(10).is_empty(), "{range:?}");
        }
        assert_eq!(ticks.map(&10.0, limit), 850);
    }
}
