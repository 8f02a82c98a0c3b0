//! The sides of a comparison as they come from files: a run report or a sweep report,
//! told apart by their fields ([`parse`]), and the [`Entry`]s each holds (a test, or a
//! sweep's runs of one kind at one rate or number of connections, pooled). Matching
//! them is the comparison's.

use std::collections::BTreeMap;

use super::{ComparisonError, Side};
use crate::record::Metric;
use crate::report::sweep::{self, Kind, SweepReport};
use crate::report::{Latency, RunReport, TestReport};

/// A test, or a sweep's measurement, of one side.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// What it is called, as matched against the other side.
    pub name: String,
    /// Why it is marked invalid, when a self-check failed.
    pub invalid: Option<String>,
    /// Latency by metric.
    pub latency: BTreeMap<Metric, Latency>,
    /// By command, for a test that sends several.
    pub commands: Vec<(String, BTreeMap<Metric, Latency>)>,
    /// The host's figures, where the side measured them.
    pub host: Option<crate::report::host::HostReport>,
    /// What it measured, without its rate (`GET open loop`): entries of one family at
    /// rates within [`Entry::rate`]'s resolution of each other match.
    pub family: String,
    /// A sweep entry's target rate and its sweep's `--resolution` (a fraction).
    pub rate: Option<(f64, f64)>,
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
            family: String::new(),
            rate: None,
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

/// The entries of a sweep: its runs pooled by what they measured: the open loop at each
/// target rate (coarse steps, search and confirmation runs alike), the rate-capped closed
/// loop at each rate, and the closed loop at each number of connections (its maximum
/// among them); valid runs only, unless none was. An entry at a rate carries it with the
/// sweep's resolution, so that two sweeps whose rates were placed by two measured
/// maxima still meet.
pub fn entries_of_sweep(report: &SweepReport) -> Vec<Entry> {
    let mut groups: Vec<(String, Option<f64>, Vec<&TestReport>)> = Vec::new();
    for m in &report.runs {
        let (family, rate) = match (m.kind, m.target_rate_per_sec) {
            (Kind::RateCapped, Some(r)) => ("rate-capped", Some(r)),
            (kind, Some(r)) if kind.is_open_loop() => ("open loop", Some(r)),
            _ => ("closed loop", None),
        };
        let name = match rate {
            Some(r) => format!("{} {family} at {r:.0} req/s", report.test),
            None => format!(
                "{} {family} with {} connections",
                report.test, m.connections
            ),
        };
        match groups.iter_mut().find(|(n, _, _)| *n == name) {
            Some((_, _, runs)) => runs.push(&m.report),
            None => groups.push((name, rate, vec![&m.report])),
        }
    }
    groups
        .into_iter()
        .map(|(name, rate, runs)| {
            let family = match rate {
                Some(_) => name[..name.rfind(" at ").unwrap_or(name.len())].to_string(),
                None => name.clone(),
            };
            let mut entry = pooled_entry(name, &runs);
            entry.family = family;
            entry.rate = rate.map(|r| (r, report.plan.resolution));
            entry
        })
        .collect()
}

/// `runs` as one entry called `name`: each metric's histograms added over the valid
/// runs (all of them when none is), with [`Latency::pooled`]'s intervals.
fn pooled_entry(name: String, runs: &[&TestReport]) -> Entry {
    let valid: Vec<&TestReport> = runs.iter().copied().filter(|t| t.valid).collect();
    let used: &[&TestReport] = if valid.is_empty() { runs } else { &valid };
    if let [one] = used {
        let mut entry = Entry::of_test(name, one);
        entry.host = None;
        return entry;
    }
    let method = format!(
        "{} runs pooled, each percentile's interval from the largest design effect a run measured there{}",
        used.len(),
        if used.len() < runs.len() {
            format!(" ({} invalid runs left out)", runs.len() - used.len())
        } else {
            String::new()
        }
    );
    let pool = |maps: Vec<&BTreeMap<Metric, Latency>>| -> BTreeMap<Metric, Latency> {
        let mut out = BTreeMap::new();
        let Some(first) = maps.first() else {
            return out;
        };
        for key in first.keys() {
            let parts: Vec<&Latency> = maps.iter().filter_map(|m| m.get(key)).collect();
            let mut sum = crate::record::new_histogram();
            for part in &parts {
                if let Some(h) = part.histogram() {
                    // Every histogram spans tailrate's bounds: adding cannot fail.
                    let _ = sum.add(&h);
                }
            }
            out.insert(*key, Latency::pooled(&sum, &parts, method.clone()));
        }
        out
    };
    let mut commands = Vec::new();
    for c in &used[0].commands {
        let maps: Vec<&BTreeMap<Metric, Latency>> = used
            .iter()
            .filter_map(|t| t.commands.iter().find(|x| x.command == c.command))
            .map(|x| &x.latency)
            .collect();
        commands.push((c.command.clone(), pool(maps)));
    }
    Entry {
        name,
        invalid: valid
            .is_empty()
            .then(|| format!("every run was invalid, e.g. {}", runs[0].why_invalid())),
        latency: pool(used.iter().map(|t| &t.latency).collect()),
        commands,
        host: None,
        family: String::new(),
        rate: None,
    }
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
    let keys = crate::report::scan::TopKeys::of(bytes).map_err(ComparisonError::NotJson)?;
    if keys.runs.is_some() {
        return Ok(Report::Sweep(Box::new(sweep::parse(bytes)?)));
    }
    if keys.tests.is_none() {
        let what = if keys.trials.is_some() {
            "a tune report (tailrate tune --json): it holds throughputs, not latency distributions"
        } else if keys.groups.is_some() && keys.method.is_some() {
            "a comparison (tailrate compare --json), not a report"
        } else {
            "not a report of tailrate's: a run's --json FILE (with tests) or a sweep's sweep.json (with runs)"
        };
        return Err(ComparisonError::NotAReport(what.into()));
    }
    match keys.version() {
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
