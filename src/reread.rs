//! `tailrate report INPUT`: results saved earlier, shown again: the text the command
//! printed (`-q` and `--csv` as a run takes them), and with `--html FILE` the page. The
//! input is told apart by its fields: a comparison (`groups`), a sweep (`runs`; a sweep's
//! folder means its `sweep.json`), or a run or a merge (`tests`). Reading and showing
//! are the same as the commands' own: `report::compare::parse` and
//! `report::sweep::parse` read, and the report is handed to the same
//! [`crate::export::outputs::Outputs`] a command ends with (a sweep's plots drawn again
//! for its page, as `tailrate plot` draws them).
//!
//! A sweep's result is said again from its fields; an older `sweep.json` kept its
//! sentence but not all the figures it was said from, so that sentence is read beside
//! the sweep and handed to the outputs as saved.
//!
//! An input that cannot be read or is not one of those, or that holds a number no run
//! writes (`report::scan`), is the user's to fix: an [`InputError`] naming the file
//! and what in it is wrong, which `main` exits 2 on.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::config::ReportConfig;
use crate::export::outputs::Outputs;
use crate::export::report::Report as Reported;
use crate::report::RunReport;
use crate::report::compare::{COMPARE_SCHEMA_VERSION, Comparison, Report};
use crate::report::scan::{self, TopKeys};
use crate::report::sweep::SweepReport;

/// A saved report that cannot be read back: the user's to fix (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file cannot be read.
    #[error("cannot read {}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a report this tailrate reads; `why` names the field.
    #[error("{}: {why}", .path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the field.
        why: String,
    },
}

/// Reads `config.input` and hands it to the outputs: its text on `out`, its page to
/// `--html` when given (and says so on standard error, beside the text).
pub fn run(config: &ReportConfig, out: &mut dyn Write, err: &mut dyn Write) -> Result<()> {
    let path = input_file(&config.input)?;
    let bytes = crate::input::read(&path).map_err(|source| InputError::Read {
        path: path.clone(),
        source,
    })?;
    let saved = read(&bytes).map_err(|why| InputError::Parse {
        path: path.clone(),
        why,
    })?;
    let report = match &saved {
        Saved::Run(run) if run.merge.is_some() => Reported::Merged {
            report: run,
            log: None,
        },
        Saved::Run(run) => Reported::Run(run),
        Saved::Sweep { report, said } => Reported::Sweep {
            report,
            said: said.as_deref(),
        },
        Saved::Compare(comparison) => Reported::Compare {
            comparison,
            command_line: None,
        },
    };
    Outputs::new(out, &config.destinations()).end(report)?;
    if let Some(html) = &config.html {
        writeln!(err, "wrote {}", html.display())?;
    }
    Ok(())
}

/// A saved report, read.
#[derive(Debug)]
enum Saved {
    /// A run's or a merge's.
    Run(Box<RunReport>),
    /// A sweep's, with its result's sentence as an older file saved it (see
    /// [`saved_sentence`]).
    Sweep {
        /// The sweep.
        report: Box<SweepReport>,
        /// The sentence of an older file.
        said: Option<String>,
    },
    /// A comparison's.
    Compare(Box<Comparison>),
}

/// The file to read: `input`, or the `sweep.json` in it when it is a folder; a folder
/// without one is named as such, not as a missing file the user did not type.
fn input_file(input: &Path) -> Result<PathBuf, InputError> {
    if !input.is_dir() {
        return Ok(input.to_path_buf());
    }
    let json = input.join(crate::sweep::JSON_FILE);
    if json.exists() {
        Ok(json)
    } else {
        Err(InputError::Parse {
            path: input.to_path_buf(),
            why: format!(
                "a folder without {}: give a sweep's folder (its --out), or a run's, a \
                 merge's or a comparison's JSON file",
                crate::sweep::JSON_FILE
            ),
        })
    }
}

/// The report in `bytes`, or what is wrong with it.
fn read(bytes: &[u8]) -> Result<Saved, String> {
    // A number or a list no run writes is refused here, as the file is walked and before
    // anything of it is built, so a page neither sums nor divides by it, and a list of
    // millions costs no memory.
    scan::beyond_any_run(bytes)?;
    let keys = TopKeys::of(bytes).map_err(|e| crate::report::not_json(&e))?;
    if keys.groups.is_some() && keys.method.is_some() {
        return comparison(bytes, &keys).map(|c| Saved::Compare(Box::new(c)));
    }
    if keys.runs.is_none() && keys.tests.is_none() {
        return Err(if keys.trials.is_some() {
            "a tune report (tailrate tune --json), which is not read back: give a run's, a \
             merge's, a sweep's or a comparison's"
                .into()
        } else {
            "not a report of tailrate's: it has no `tests` (a run's or a merge's --json), no \
             `runs` (a sweep's sweep.json) and no `groups` (a comparison's --json)"
                .into()
        });
    }
    match crate::report::compare::parse(bytes).map_err(|e| e.to_string())? {
        Report::Run(run) => Ok(Saved::Run(run)),
        Report::Sweep(sweep) => Ok(Saved::Sweep {
            said: saved_sentence(&sweep, bytes),
            report: sweep,
        }),
    }
}

/// The sentence `slo.summary` an older `sweep.json` saved, when its result cannot be
/// said again: it lacks the search's span (`slo.span`), and what `--budget` cut short
/// it kept in words only. `None` for a file that keeps them, or has no result.
fn saved_sentence(sweep: &SweepReport, bytes: &[u8]) -> Option<String> {
    /// The one field of an older file read here.
    #[derive(serde::Deserialize)]
    struct File {
        slo: Option<Slo>,
    }
    #[derive(serde::Deserialize)]
    struct Slo {
        summary: Option<String>,
    }
    if sweep.slo.as_ref()?.span.is_some() {
        return None;
    }
    serde_json::from_slice::<File>(bytes).ok()?.slo?.summary
}

/// A comparison's JSON of this layout version.
fn comparison(bytes: &[u8], keys: &TopKeys) -> Result<Comparison, String> {
    match keys.version() {
        Some(v) if v == u64::from(COMPARE_SCHEMA_VERSION) => {}
        found => {
            return Err(format!(
                "a comparison of schema_version {}; this tailrate reads {COMPARE_SCHEMA_VERSION}",
                found.map_or("(none)".to_string(), |v| v.to_string())
            ));
        }
    }
    serde_json::from_slice(bytes)
        .map_err(|e| format!("not a comparison layout this tailrate reads: {e}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn what_is_not_a_report_is_named_by_the_field_it_lacks() {
        let e = read(b"{\"schema_version\": 1}").unwrap_err();
        assert!(e.contains("`tests`") && e.contains("`groups`"), "{e}");
        let e = read(b"{\"trials\": []}").unwrap_err();
        assert!(e.contains("tune report"), "{e}");
        let e = read(b"not json").unwrap_err();
        assert!(e.starts_with("is not JSON (at line"), "{e}");
        let e = read(b"{\"schema_version\": 2, \"groups\": [], \"method\": \"m\"}").unwrap_err();
        assert!(e.contains("missing field"), "{e}");
        let e = read(b"{\"tests\": [{\"measured_secs\": 1e308}]}").unwrap_err();
        assert!(
            e.starts_with("tests[0].measured_secs is 1e308: no run"),
            "{e}"
        );
    }

    /// An older sweep's result, whose file kept its sentence but not the search's span,
    /// is said as saved; a newer one's from its fields, the saved words left unread.
    #[test]
    fn an_older_sweeps_sentence_is_read_as_saved_and_a_newer_ones_is_said_again() {
        let golden = include_bytes!("../tests/golden/sweep/sweep.json");
        let mut file: serde_json::Value = serde_json::from_slice(golden).unwrap();
        file["slo"] = serde_json::json!({
            "slos": [],
            "capacity_per_sec": 2000.0,
            "searched_per_sec": null,
            "first_failing_per_sec": null,
            "confirmed": false,
            "budget_ended": "--budget 10 s ended before the capacity search",
            "summary": "capacity 2000 req/s, as saved",
        });
        let said = |file: &serde_json::Value| match read(&serde_json::to_vec(file).unwrap()) {
            Ok(Saved::Sweep { said, .. }) => said,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            said(&file).as_deref(),
            Some("capacity 2000 req/s, as saved")
        );
        file["slo"]["span"] = serde_json::json!({
            "lowest_per_sec": 2000.0,
            "highest_per_sec": 4000.0,
        });
        assert_eq!(said(&file), None);
    }
}
