//! What can be reported: one arm per kind of report a command produces. Every output
//! form renders from a [`Report`] (`text`, `json`, `html`, `out_dir`), and
//! [`super::outputs::Outputs`] hands one to each destination; a new kind of report is
//! one arm here and one in each render that has a form of it.

use crate::report::RunReport;
use crate::report::compare::Comparison;
use crate::report::sweep::SweepReport;
use crate::report::tune::TuneReport;

use super::plot::Chart;

/// One report of a command, borrowed from its runner.
#[derive(Clone, Copy)]
pub enum Report<'a> {
    /// A run's (a replay's too): its tests, repeats and contrasts.
    Run(&'a RunReport),
    /// A merge of shards: the merged run report, and the merged interval log when the
    /// shards' logs were given.
    Merged {
        /// The merged report.
        report: &'a RunReport,
        /// The merged `.hlog`'s bytes.
        log: Option<&'a [u8]>,
    },
    /// A rate sweep, as far as it went; `said` is its result's sentence as an older
    /// `sweep.json` saved it, when read back from one (a result of a newer file, or of a
    /// sweep made now, is said from its own fields).
    Sweep {
        /// The sweep.
        report: &'a SweepReport,
        /// The saved sentence of an older file, said when the result cannot be.
        said: Option<&'a str>,
    },
    /// A comparison of A and B; `command_line` is the one that made it, when it was made
    /// now (a page made again from its JSON has none).
    Compare {
        /// The comparison.
        comparison: &'a Comparison,
        /// The command line that made it.
        command_line: Option<&'a [String]>,
    },
    /// A `--workers` search.
    Tune(&'a TuneReport),
    /// Charts drawn again from saved sweeps or a run (`tailrate plot`).
    Charts(&'a [Chart]),
}

impl Report<'_> {
    /// What the report is, in a few words, for a message naming a form it has not.
    pub fn kind(&self) -> &'static str {
        match self {
            Report::Run(_) => "a run",
            Report::Merged { .. } => "a merge",
            Report::Sweep { .. } => "a sweep",
            Report::Compare { .. } => "a comparison",
            Report::Tune(_) => "a tune report",
            Report::Charts(_) => "charts",
        }
    }
}
