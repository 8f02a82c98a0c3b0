//! Axes and their labels: a linear axis with grid lines at chosen values, a log10
//! latency axis in whole decades, and the number formats of rates and latencies.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;

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
        limit.0 + (f64::from(limit.1 - limit.0) * t).round() as i32
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
