//! Marks drawn in data coordinates on any chart: point markers of a few shapes, solid or
//! dashed polylines, and text anchored at a point. Which marks a chart draws, and in
//! which order, is the chart's business.

use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::DrawResult;
use super::axis::{F64Axis, XyChart};

/// Point marker shapes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Shape {
    Circle,
    Triangle,
    Cross,
    Square,
    Ring,
}

/// Draws a marker of `shape` at each of `points`, `size` pixels in radius.
pub(super) fn draw_markers<XR: F64Axis, YR: F64Axis>(
    chart: &mut XyChart<'_, '_, XR, YR>,
    shape: Shape,
    points: Vec<(f64, f64)>,
    color: RGBColor,
    size: i32,
) -> DrawResult {
    let points = points.into_iter();
    match shape {
        Shape::Circle => {
            chart.draw_series(points.map(|at| Circle::new(at, size, color.filled())))?
        }
        Shape::Triangle => {
            chart.draw_series(points.map(|at| TriangleMarker::new(at, size + 1, color.filled())))?
        }
        Shape::Cross => {
            chart.draw_series(points.map(|at| Cross::new(at, size, color.stroke_width(2))))?
        }
        Shape::Square => chart.draw_series(points.map(|at| {
            EmptyElement::at(at) + Rectangle::new([(-size, -size), (size, size)], color.filled())
        }))?,
        Shape::Ring => {
            chart.draw_series(points.map(|at| Circle::new(at, size, color.stroke_width(2))))?
        }
    };
    Ok(())
}

/// Draws a polyline through `points`, solid or dashed.
pub(super) fn draw_line<XR: F64Axis, YR: F64Axis>(
    chart: &mut XyChart<'_, '_, XR, YR>,
    points: Vec<(f64, f64)>,
    color: RGBColor,
    width: u32,
    dashed: bool,
) -> DrawResult {
    let style = color.stroke_width(width);
    if dashed {
        chart.draw_series(std::iter::once(DashedPathElement::new(points, 6, 4, style)))?;
    } else {
        chart.draw_series(std::iter::once(PathElement::new(points, style)))?;
    }
    Ok(())
}

/// Draws `text` in `style` at the point `at`, moved `offset_px` pixels (right, down).
pub(super) fn draw_text<XR: F64Axis, YR: F64Axis>(
    chart: &mut XyChart<'_, '_, XR, YR>,
    at: (f64, f64),
    text: impl Into<String>,
    offset_px: (i32, i32),
    style: TextStyle<'_>,
) -> DrawResult {
    chart.draw_series(std::iter::once(
        EmptyElement::at(at) + Text::new(text.into(), offset_px, style),
    ))?;
    Ok(())
}
