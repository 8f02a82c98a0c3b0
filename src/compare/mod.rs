//! `tailrate compare`: A against B, percentile by percentile, each difference with a 95%
//! interval and a verdict. The sides are two saved reports (run reports matched by test
//! name, sweeps by measurement kind and rate), or two servers measured here in turns by
//! the duet of `live`. The comparison itself is pure and lives in
//! [`crate::report::compare`]; this module reads the files, runs the duet, hands the
//! comparison to [`crate::export`] (the table, and `--json`), and turns
//! `--fail-if-slower` into the exit status.
//!
//! A report that cannot be read or understood, two that share nothing, or a metric they
//! lack are the user's to fix: they end the command as [`InputError`]s, which `main`
//! exits 2 on, like any other bad usage.

mod live;

use std::path::Path;

use anyhow::Result;

use crate::app::{Io, Status};
use crate::config::compare::{CompareConfig, Source};
use crate::drive::Cancel;
use crate::export::outputs::Outputs;
use crate::judge::compare;
use crate::report::compare::{Comparison, ComparisonError, Metrics, Options, Report};

/// Input that cannot be compared: the user's to fix (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file cannot be read.
    #[error("cannot read {side} report {}", .path.display())]
    Read {
        /// `A` or `B`.
        side: &'static str,
        /// The file as given.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a report this tailrate reads.
    #[error("{side} report {}", .path.display())]
    Parse {
        /// `A` or `B`.
        side: &'static str,
        /// The file as given.
        path: std::path::PathBuf,
        /// Why.
        source: ComparisonError,
    },
    /// The two files cannot be compared (different kinds, nothing in common).
    #[error("comparing {} with {}", .a.display(), .b.display())]
    Files {
        /// A's file.
        a: std::path::PathBuf,
        /// B's file.
        b: std::path::PathBuf,
        /// Why.
        source: ComparisonError,
    },
    /// The two sides cannot be compared (a metric neither measured).
    #[error(transparent)]
    Compare(#[from] ComparisonError),
}

/// Runs the comparison `config` describes and prints or writes it.
pub fn run(
    config: &CompareConfig,
    command_line: Vec<String>,
    cancel: &Cancel,
    io: Io<'_>,
) -> Result<Status> {
    let Io {
        stdout,
        stderr,
        stderr_is_terminal,
        metrics: live_metrics,
    } = io;
    let options = Options {
        metrics: match config.metric {
            Some(m) => Metrics::One(m),
            None => Metrics::All,
        },
        fail_if_slower: config.fail_if_slower,
        margin: config.margin,
        same_file: None,
    };
    let (comparison, status) = match &config.source {
        Source::Files { a, b } => (Some(compare_files(a, b, &options)?), Status::Completed),
        Source::Live(duet) => {
            let outcome = live::run(
                duet,
                &options,
                cancel,
                stderr,
                stderr_is_terminal,
                live_metrics,
            )?;
            (outcome.comparison, outcome.status)
        }
    };
    let Some(comparison) = comparison else {
        return Ok(status);
    };
    Outputs::new(stdout, &config.destinations()).end(crate::export::report::Report::Compare {
        comparison: &comparison,
        command_line: Some(&command_line),
    })?;
    if status != Status::Completed {
        return Ok(status);
    }
    let breaches = comparison.breaches();
    Ok(match (config.fail_if_slower, breaches.as_slice()) {
        (Some(share), [first, rest @ ..]) => Status::Failed(format!(
            "--fail-if-slower {}%: B is slower than A by more than that at {} percentile{} with \
             95% confidence ({first}{})",
            share * 100.0,
            breaches.len(),
            if breaches.len() == 1 { "" } else { "s" },
            if rest.is_empty() { "" } else { "; ..." }
        )),
        _ => Status::Completed,
    })
}

/// Reads both files and compares them.
fn compare_files(a: &Path, b: &Path, options: &Options) -> Result<Comparison> {
    let (ra, bytes_a) = load("A", a)?;
    let (rb, bytes_b) = load("B", b)?;
    let same_path = matches!(
        (std::fs::canonicalize(a), std::fs::canonicalize(b)),
        (Ok(x), Ok(y)) if x == y
    );
    let mut options = options.clone();
    options.same_file = if same_path {
        Some("the same path".into())
    } else if bytes_a == bytes_b {
        Some("files of the same bytes".into())
    } else {
        None
    };
    let options = &options;
    let files = |source| InputError::Files {
        a: a.to_path_buf(),
        b: b.to_path_buf(),
        source,
    };
    if ra.kind() != rb.kind() {
        return Err(files(ComparisonError::Mixed {
            a: ra.kind(),
            b: rb.kind(),
        })
        .into());
    }
    let (ea, eb) = (ra.entries(), rb.entries());
    let mut comparison = compare::compare(
        (ra.side(a.display().to_string()), &ea),
        (rb.side(b.display().to_string()), &eb),
        options,
    )
    .map_err(files)?;
    if let (Report::Sweep(sa), Report::Sweep(sb)) = (&ra, &rb) {
        comparison.capacity = crate::judge::capacities::compare(sa, sb);
    }
    Ok(comparison)
}

/// One report file, parsed, and its bytes.
fn load(side: &'static str, path: &Path) -> Result<(Report, Vec<u8>), InputError> {
    let bytes = crate::input::read(path).map_err(|source| InputError::Read {
        side,
        path: path.to_path_buf(),
        source,
    })?;
    let report = compare::parse(&bytes).map_err(|source| InputError::Parse {
        side,
        path: path.to_path_buf(),
        source,
    })?;
    Ok((report, bytes))
}
