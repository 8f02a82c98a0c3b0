//! One self-contained HTML page per report: a run's, a merge's (a run report with its
//! shards), a sweep's and a comparison's. Each is a pure function from the model to a
//! `String`: inline style sheet, inline SVG plots, no script and no reference to any
//! other host (a content policy in the page forbids every fetch), all text escaped.
//!
//! Every page opens with its answer: a run's headline percentiles with their intervals,
//! validity and bottleneck (as `run_text`'s answer computes them); a sweep's capacity
//! with its band; a comparison's verdicts. The figures come from `report/` and `stats/`
//! through the other exporters' functions: this module only lays them out.
//!
//! `markup` makes the pieces (escaping, tables, badges, inline SVG), `page` the document
//! around them, `run`, `merge`, `sweep` and `compare` each page's sections.

mod compare;
mod markup;
mod merge;
mod page;
mod run;
mod sweep;

pub use compare::render as compare;
pub use run::render as run;
pub use sweep::render as sweep;

use crate::report::sweep::SweepReport;

use super::report::Report;

/// The page of `report`, or `None` for a report with no page (a search, charts).
pub fn render(report: Report<'_>) -> anyhow::Result<Option<String>> {
    Ok(match report {
        Report::Run(run) | Report::Merged { report: run, .. } => Some(self::run(run)),
        Report::Sweep { report, said } => {
            let charts = crate::export::plot::render_sweep(report, None)?;
            Some(self::sweep(report, &charts, said))
        }
        Report::Compare {
            comparison,
            command_line,
        } => Some(self::compare(comparison, command_line)),
        Report::Tune(_) | Report::Charts(_) => None,
    })
}

/// A sweep's page with the plots drawn for it now ([`crate::export::plot::render_sweep`]),
/// for callers that do not hold them already.
pub fn sweep_with_plots(report: &SweepReport) -> Result<String, crate::export::plot::PlotError> {
    let charts = crate::export::plot::render_sweep(report, None)?;
    Ok(sweep(report, &charts, None))
}

#[cfg(test)]
mod tests;
