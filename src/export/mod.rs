//! Every printed or written form of a report: the run's text (redis-benchmark's formats
//! and tailrate's sections), CSV, JSON, HdrHistogram logs, the sweep, tune and compare
//! tables, the lines a command writes to standard error, and the SVG plots. Conversions
//! from nanoseconds to display units happen only here. What can be reported is one enum,
//! [`report::Report`]; each form renders from it ([`text`], [`json`], [`html`],
//! [`out_dir`]), and [`outputs::Outputs`] hands it to every destination and decides which
//! of them has standard output: the runners only hand their reports over.

use std::io::{self, Write};

use crate::report::{RunReport, TestReport};

pub mod capacity_text;
pub mod compare_text;
pub mod contrast_text;
pub mod csv;
pub mod duet_lines;
pub mod events_text;
pub mod hlog;
pub mod hlog_encoder;
pub mod html;
pub mod json;
pub mod merge_lines;
pub mod metrics;
pub mod objective_text;
pub mod out_dir;
pub mod outputs;
pub mod plot;
pub mod reasons;
pub mod repeats_text;
pub mod report;
pub mod run_lines;
pub mod run_text;
pub mod sweep_csv;
pub mod sweep_json;
pub mod sweep_lines;
pub mod sweep_text;
pub mod text;
pub mod tune_text;

/// Something that shows results as they come: once per test, and once at the end.
pub trait Exporter {
    /// A test finished.
    fn test_done(
        &mut self,
        out: &mut dyn Write,
        report: &RunReport,
        test: &TestReport,
    ) -> io::Result<()>;
    /// The run finished (or was interrupted).
    fn run_done(&mut self, _out: &mut dyn Write, _report: &RunReport) -> io::Result<()> {
        Ok(())
    }
}

/// Milliseconds with `precision` decimals, from nanoseconds.
pub fn ms(ns: impl Into<f64>, precision: usize) -> String {
    format!("{:.*}", precision, ns.into() / 1e6)
}
