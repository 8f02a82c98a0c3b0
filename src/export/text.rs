//! The text of a whole report as a command printed it, in the form asked for (`-q`,
//! `--csv`): a run's or a merge's tests as they ended and its closing sections, a
//! sweep's steps, its capacity and its closed loops, a comparison's table, a search's
//! summary. A run prints its tests as they end through the same exporters
//! ([`super::outputs::Outputs`]), so a saved report read back prints what its run
//! printed.

use std::io::Write;

use crate::config::TextForm;
use crate::report::RunReport;
use crate::report::sweep::{Kind, SweepReport};

use super::Exporter;
use super::csv::Csv;
use super::report::Report;
use super::run_text::Text;
use super::sweep_lines::{self, Line};

/// A form the report has no text in (a comparison's CSV, a sweep's `-q`).
#[derive(Debug, thiserror::Error)]
#[error("{flag}: {kind} has no {what}; {instead}")]
pub struct NoSuchForm {
    /// The flag that asked for it.
    pub flag: &'static str,
    /// The report's kind.
    pub kind: &'static str,
    /// The form asked for.
    pub what: &'static str,
    /// What to give instead.
    pub instead: &'static str,
}

/// The exporter a run's text streams through in `form`.
pub fn run_exporter(form: TextForm, precision: usize) -> Box<dyn Exporter> {
    match form {
        TextForm::Csv => Box::new(Csv::default()),
        TextForm::Full | TextForm::Quiet => Box::new(Text {
            quiet: form == TextForm::Quiet,
            precision,
        }),
    }
}

/// The whole text of `report` in `form`, with `precision` decimals of milliseconds.
pub fn render(report: Report<'_>, form: TextForm, precision: usize) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    match report {
        Report::Run(run) | Report::Merged { report: run, .. } => {
            run_text(&mut out, run, form, precision)?;
        }
        Report::Sweep {
            report: sweep,
            said,
        } => match form {
            TextForm::Full => sweep_closing(&mut out, sweep, said)?,
            TextForm::Csv => {
                out.extend_from_slice(super::sweep_csv::csv(sweep).trim_end().as_bytes());
                out.push(b'\n');
            }
            TextForm::Quiet => return Err(no_quiet(report.kind()).into()),
        },
        Report::Compare { comparison, .. } => match form {
            TextForm::Full => super::compare_text::write(&mut out, comparison, precision)?,
            TextForm::Quiet => return Err(no_quiet(report.kind()).into()),
            TextForm::Csv => return Err(no_csv(report.kind()).into()),
        },
        Report::Tune(tune) => match form {
            TextForm::Full => out.extend_from_slice(super::tune_text::summary(tune).as_bytes()),
            TextForm::Quiet => return Err(no_quiet(report.kind()).into()),
            TextForm::Csv => return Err(no_csv(report.kind()).into()),
        },
        Report::Charts(_) => {}
    }
    Ok(out)
}

/// A sweep's closing text as it printed it: the steps by rate, the capacity, and a line
/// per plain closed loop (`--closed-loop-points`, measured after the open loop). The lines
/// it printed as each open-loop run ended and the files it wrote are not the report's.
/// `saved` is the result's sentence an older `sweep.json` kept (see [`Report::Sweep`]).
fn sweep_closing(
    out: &mut dyn Write,
    sweep: &SweepReport,
    saved: Option<&str>,
) -> std::io::Result<()> {
    super::sweep_text::write_steps(out, sweep)?;
    if let Some(sentence) = super::capacity_text::said(sweep, saved) {
        sweep_lines::write(out, &Line::Said(&sentence))?;
    }
    for m in sweep.runs.iter().filter(|m| m.kind == Kind::ClosedLoop) {
        let line = Line::ClosedLoop {
            connections: m.connections,
            measurement: m,
        };
        sweep_lines::write(out, &line)?;
    }
    Ok(())
}

/// A run's tests as each ended, then its closing sections.
fn run_text(
    out: &mut dyn Write,
    run: &RunReport,
    form: TextForm,
    precision: usize,
) -> std::io::Result<()> {
    let mut exporter = run_exporter(form, precision);
    for test in &run.tests {
        exporter.test_done(out, run, test)?;
    }
    exporter.run_done(out, run)
}

fn no_quiet(kind: &'static str) -> NoSuchForm {
    NoSuchForm {
        flag: "-q",
        kind,
        what: "one line per test",
        instead: "leave -q out for its text",
    }
}

fn no_csv(kind: &'static str) -> NoSuchForm {
    NoSuchForm {
        flag: "--csv",
        kind,
        what: "CSV form",
        instead: "leave --csv out for its text, or give --html for its page",
    }
}
