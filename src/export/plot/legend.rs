//! The legend panel beside every chart: how each entry's swatch is drawn (a line, a
//! marker or a band) and the rows of entries under a heading. What goes into a chart's
//! legend is the chart's business.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Area, DrawResult, GRID_BOLD, Shape, bold, font};

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy)]
pub(super) enum Swatch {
    /// A line, solid or dashed, with an optional circle.
    Line {
        color: RGBColor,
        width: u32,
        dashed: bool,
        dot: bool,
    },
    /// A marker alone.
    Marker { color: RGBColor, shape: Shape },
    /// A filled band.
    Band(RGBColor),
    /// A word as the chart writes it (the bottlenecks along a chart's foot).
    Word(&'static str, RGBColor),
}

impl Swatch {
    /// A solid line.
    pub(super) fn line(color: RGBColor, width: u32) -> Swatch {
        Swatch::Line {
            color,
            width,
            dashed: false,
            dot: false,
        }
    }

    /// A dashed line.
    pub(super) fn dashed(color: RGBColor, width: u32) -> Swatch {
        Swatch::Line {
            color,
            width,
            dashed: true,
            dot: false,
        }
    }

    /// A solid line through a dot, for a line drawn through markers.
    pub(super) fn dotted(color: RGBColor, width: u32) -> Swatch {
        Swatch::Line {
            color,
            width,
            dashed: false,
            dot: true,
        }
    }

    /// A marker alone.
    pub(super) fn marker(color: RGBColor, shape: Shape) -> Swatch {
        Swatch::Marker { color, shape }
    }
}

/// Draws the legend panel: a heading, then one row per entry.
pub(super) fn legend(area: &Area<'_>, heading: &str, entries: &[(String, Swatch)]) -> DrawResult {
    let (x0, mut y) = (8, 14);
    area.draw_text(heading, &bold(15), (x0, y))?;
    y += 24;
    for (label, swatch) in entries {
        let mid = y + 7;
        match *swatch {
            Swatch::Line {
                color,
                width,
                dashed,
                dot,
            } => {
                let style = color.stroke_width(width);
                if dashed {
                    area.draw(&DashedPathElement::new(
                        vec![(x0, mid), (x0 + 30, mid)],
                        5,
                        3,
                        style,
                    ))?;
                } else {
                    area.draw(&PathElement::new(vec![(x0, mid), (x0 + 30, mid)], style))?;
                }
                if dot {
                    area.draw(&Circle::new((x0 + 15, mid), 3, color.filled()))?;
                }
            }
            Swatch::Marker { color, shape } => {
                let at = (x0 + 15, mid);
                match shape {
                    Shape::Circle => area.draw(&Circle::new(at, 4, color.filled()))?,
                    Shape::Triangle => area.draw(&TriangleMarker::new(at, 5, color.filled()))?,
                    Shape::Cross => area.draw(&Cross::new(at, 4, color.stroke_width(2)))?,
                    Shape::Square => area.draw(&Rectangle::new(
                        [(at.0 - 4, at.1 - 4), (at.0 + 4, at.1 + 4)],
                        color.filled(),
                    ))?,
                    Shape::Ring => area.draw(&Circle::new(at, 6, color.stroke_width(2)))?,
                }
            }
            Swatch::Word(word, color) => {
                let style = font(12)
                    .color(&color)
                    .pos(Pos::new(HPos::Center, VPos::Center));
                area.draw_text(word, &style, (x0 + 15, mid))?;
            }
            Swatch::Band(color) => {
                area.draw(&Rectangle::new(
                    [(x0, y + 1), (x0 + 30, y + 13)],
                    color.filled(),
                ))?;
                area.draw(&Rectangle::new(
                    [(x0, y + 1), (x0 + 30, y + 13)],
                    GRID_BOLD.stroke_width(1),
                ))?;
            }
        }
        area.draw_text(
            label,
            &font(15).pos(Pos::new(HPos::Left, VPos::Center)),
            (x0 + 38, mid),
        )?;
        y += 20;
    }
    Ok(())
}
