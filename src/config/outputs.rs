//! Where a command's report goes, decided once from its flags: the form of the text on
//! standard output, `--json`, `--hdr-log`, `--html` and the files of `--out`. Every
//! command's configuration answers with one [`Destinations`]; `export::outputs::Outputs`
//! is built from it and is the only writer of them.

use std::path::PathBuf;

use super::{CompareConfig, MergeConfig, PlotConfig, ReportConfig, RunConfig, SweepConfig};
use super::{TuneConfig, run::Output};

/// The form of the text on standard output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TextForm {
    /// The whole text report.
    #[default]
    Full,
    /// One line per test (`-q`).
    Quiet,
    /// CSV (`--csv`).
    Csv,
}

/// Every destination of one command's report.
#[derive(Debug, Clone, Default)]
pub struct Destinations {
    /// The text on standard output, unless an output given `-` has it.
    pub text: TextForm,
    /// Decimal places of milliseconds in the text (`--precision`).
    pub precision: usize,
    /// `--json`: a path, or `-`.
    pub json: Option<PathBuf>,
    /// `--hdr-log`: a path, or `-`.
    pub hdr_log: Option<PathBuf>,
    /// `--html`: a file.
    pub html: Option<PathBuf>,
    /// `--out`: the folder a command's own files go into (a sweep's, a merge's, a plot's).
    pub out: Option<PathBuf>,
}

/// The text form `quiet` and `csv` ask for (the configuration refused both at once).
pub fn text_form(quiet: bool, csv: bool) -> TextForm {
    match (csv, quiet) {
        (true, _) => TextForm::Csv,
        (false, true) => TextForm::Quiet,
        (false, false) => TextForm::Full,
    }
}

impl Output {
    /// A run's destinations.
    pub fn destinations(&self) -> Destinations {
        Destinations {
            text: text_form(self.quiet, self.csv),
            precision: self.precision,
            json: self.json.clone(),
            hdr_log: self.hdr_log.clone(),
            html: self.html.clone(),
            out: None,
        }
    }
}

impl RunConfig {
    /// The run's destinations (see [`Output::destinations`]).
    pub fn destinations(&self) -> Destinations {
        self.output.destinations()
    }
}

impl SweepConfig {
    /// The sweep's destinations: its lines as text, its files in `--out`, `--html`.
    pub fn destinations(&self) -> Destinations {
        Destinations {
            precision: self.base.output.precision,
            html: self.html.clone(),
            out: Some(self.out.clone()),
            ..Destinations::default()
        }
    }
}

impl TuneConfig {
    /// The search's destinations: its lines as text and `--json`.
    pub fn destinations(&self) -> Destinations {
        Destinations {
            precision: 3,
            json: self.json.clone(),
            ..Destinations::default()
        }
    }
}

impl CompareConfig {
    /// The comparison's destinations: its table, `--json` and `--html`.
    pub fn destinations(&self) -> Destinations {
        Destinations {
            precision: self.precision,
            json: self.json.clone(),
            html: self.html.clone(),
            ..Destinations::default()
        }
    }
}

impl MergeConfig {
    /// The merge's destinations: the `-q` line of each merged test, the merged files in
    /// `--out`, `--html`.
    pub fn destinations(&self) -> Destinations {
        Destinations {
            text: TextForm::Quiet,
            precision: 3,
            html: self.html.clone(),
            out: Some(self.out.clone()),
            ..Destinations::default()
        }
    }
}

impl PlotConfig {
    /// The plots' destinations: the charts in `--out`.
    pub fn destinations(&self) -> Destinations {
        Destinations {
            precision: 3,
            out: Some(self.out.clone()),
            ..Destinations::default()
        }
    }
}

impl ReportConfig {
    /// A saved report's destinations: its text (`-q`, `--csv`), `--html` when given.
    pub fn destinations(&self) -> Destinations {
        Destinations {
            text: self.text,
            precision: self.precision,
            html: self.html.clone(),
            ..Destinations::default()
        }
    }
}
