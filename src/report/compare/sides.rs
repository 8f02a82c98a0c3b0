//! The sides of a comparison as they come from files: a run report or a sweep report,
//! told apart by their fields ([`parse`]), and the [`Entry`]s each holds (a test, or a
//! sweep's measurement named by its kind and rate). Matching them is the comparison's.

use std::collections::BTreeMap;

use super::{ComparisonError, Side};
use crate::report::sweep::{self, SweepReport};
use crate::report::{Latency, RunReport, TestReport};

/// A test, or a sweep's measurement, of one side.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// What it is called, as matched against the other side.
    pub name: String,
    /// Why it is marked invalid, when a self-check failed.
    pub invalid: Option<String>,
    /// Latency by metric.
    pub latency: BTreeMap<String, Latency>,
    /// By command, for a test that sends several.
    pub commands: Vec<(String, BTreeMap<String, Latency>)>,
    /// The host's figures, where the side measured them.
    pub host: Option<crate::report::host::HostReport>,
}

impl Entry {
    /// `test` as an entry called `name`; a repeat of `--repeat` is named with its number,
    /// so that repeats match repeats.
    fn of_test(name: String, test: &TestReport) -> Self {
        Entry {
            name: match test.repeat {
                Some(r) => format!("{name} (repeat {r})"),
                None => name,
            },
            invalid: (!test.valid).then(|| test.why_invalid()),
            latency: test.latency.clone(),
            commands: test
                .commands
                .iter()
                .map(|c| (c.command.clone(), c.latency.clone()))
                .collect(),
            host: test.host.clone(),
        }
    }
}

/// The entries of a run report: one per test, by its name.
pub fn entries_of_run(report: &RunReport) -> Vec<Entry> {
    report
        .tests
        .iter()
        .map(|t| Entry::of_test(t.name.clone(), t))
        .collect()
}

/// The entries of a sweep: one per measurement, named by the test, its kind and its
/// target rate (or connections, for a closed loop without one).
pub fn entries_of_sweep(report: &SweepReport) -> Vec<Entry> {
    report
        .runs
        .iter()
        .map(|m| {
            let at = match m.target_rate_per_sec {
                Some(rate) => format!("at {rate:.0} req/s"),
                None => format!("with {} connections", m.connections),
            };
            let name = format!("{} {} {at}", report.test, m.kind.name());
            Entry::of_test(name, &m.report)
        })
        .collect()
}

/// A report read from a file: a run's or a sweep's.
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    /// `tailrate ... --json FILE`.
    Run(Box<RunReport>),
    /// `tailrate sweep`'s `sweep.json`.
    Sweep(Box<SweepReport>),
}

impl Report {
    /// `run` or `sweep`.
    pub fn kind(&self) -> &'static str {
        match self {
            Report::Run(_) => "run",
            Report::Sweep(_) => "sweep",
        }
    }

    /// The side it is, read from `source`.
    pub fn side(&self, source: String) -> Side {
        let header = match self {
            Report::Run(r) => &r.header,
            Report::Sweep(s) => &s.header,
        };
        Side {
            source,
            kind: self.kind().into(),
            tool: Some(header.tool.clone()),
            server_version: header.server.version.clone(),
            seed: Some(header.seed),
        }
    }

    /// Its entries.
    pub fn entries(&self) -> Vec<Entry> {
        match self {
            Report::Run(r) => entries_of_run(r),
            Report::Sweep(s) => entries_of_sweep(s),
        }
    }
}

/// Parses a run report or a sweep report, telling which from its fields.
pub fn parse(bytes: &[u8]) -> Result<Report, ComparisonError> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(ComparisonError::NotJson)?;
    let has = |key: &str| value.get(key).is_some();
    if has("runs") {
        return Ok(Report::Sweep(Box::new(sweep::parse(bytes)?)));
    }
    if !has("tests") {
        let what = if has("trials") {
            "a tune report (tailrate tune --json): it holds throughputs, not latency distributions"
        } else if has("groups") && has("method") {
            "a comparison (tailrate compare --json), not a report"
        } else {
            "not a report of tailrate's: a run's --json FILE (with tests) or a sweep's sweep.json (with runs)"
        };
        return Err(ComparisonError::NotAReport(what.into()));
    }
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(crate::report::SCHEMA_VERSION) => {}
        found => {
            return Err(ComparisonError::NotAReport(format!(
                "a run report of schema_version {}; this tailrate reads {}",
                found.map_or("(none)".to_string(), |v| v.to_string()),
                crate::report::SCHEMA_VERSION
            )));
        }
    }
    let run: RunReport = serde_json::from_slice(bytes).map_err(ComparisonError::Layout)?;
    if let Some(why) = run
        .tests
        .iter()
        .find_map(crate::report::plausible::implausible)
    {
        return Err(ComparisonError::NotAReport(why));
    }
    Ok(Report::Run(Box::new(run)))
}
