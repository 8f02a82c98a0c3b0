//! The files a command keeps in its `--out` folder: a sweep's `sweep.json`, `sweep.csv`,
//! `steps.csv` and plots; a merge's `merged.json` and `merged.hlog`; the charts
//! `tailrate plot` draws. Pure: each file's name and bytes; writing them is
//! [`super::outputs::Outputs`]'s.

use std::borrow::Cow;

use anyhow::{Context, Result};

use crate::config::{MergeConfig, SweepConfig};
use crate::report::sweep::{self as model, SweepReport};

use super::plot::{self, Chart};
use super::report::Report;

/// One file of `--out`.
pub struct OutFile<'a> {
    /// Its name inside `--out`.
    pub name: String,
    /// Its bytes (borrowed when the report holds them: a merged log is not copied).
    pub bytes: Cow<'a, [u8]>,
}

/// The files of `report` in `--out` (none for a run, a comparison or a search).
pub fn render(report: Report<'_>) -> Result<Vec<OutFile<'_>>> {
    Ok(match report {
        Report::Sweep { report, said } => self::sweep(report, said)?.0,
        Report::Merged { report, log } => {
            // The merged report as merge has always written it: no final newline.
            let json = serde_json::to_vec_pretty(report).context("encoding the merged report")?;
            let mut files = vec![OutFile {
                name: MergeConfig::JSON_FILE.to_string(),
                bytes: Cow::Owned(json),
            }];
            files.extend(log.map(|log| OutFile {
                name: MergeConfig::HLOG_FILE.to_string(),
                bytes: Cow::Borrowed(log),
            }));
            files
        }
        Report::Charts(charts) => charts.iter().map(chart_file).collect(),
        Report::Run(_) | Report::Compare { .. } | Report::Tune(_) => Vec::new(),
    })
}

/// A sweep's files, and the sweep as read back from its `sweep.json`: the plots are
/// drawn from the parsed bytes, exactly as `tailrate plot` reads them back, and the
/// sweep's page is made from the same. `said` is the result's sentence an older
/// `sweep.json` saved (see [`Report::Sweep`]).
pub fn sweep(
    report: &SweepReport,
    said: Option<&str>,
) -> Result<(Vec<OutFile<'static>>, SweepReport)> {
    let json = serde_json::to_vec_pretty(&super::sweep_json::Json::of(report, said))
        .context("encoding the sweep as JSON")?;
    let saved = model::parse(&json)?;
    let csv = super::sweep_csv::csv(report);
    let steps = super::sweep_csv::steps_csv(report);
    let mut files = vec![
        line_ended(SweepConfig::JSON_FILE, json),
        line_ended(SweepConfig::CSV_FILE, csv.trim_end().as_bytes().to_vec()),
        line_ended(
            SweepConfig::STEPS_CSV_FILE,
            steps.trim_end().as_bytes().to_vec(),
        ),
    ];
    let charts = plot::render_sweep(&saved, None)?;
    files.extend(charts.iter().map(chart_file));
    Ok((files, saved))
}

/// A chart's file: its SVG and a final newline.
fn chart_file(chart: &Chart) -> OutFile<'static> {
    line_ended(&chart.file_name, chart.svg.as_bytes().to_vec())
}

/// `bytes` with a final newline, as a file named `name`.
fn line_ended(name: &str, mut bytes: Vec<u8>) -> OutFile<'static> {
    bytes.push(b'\n');
    OutFile {
        name: name.to_string(),
        bytes: Cow::Owned(bytes),
    }
}
