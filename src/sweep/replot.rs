//! `tailrate plot`: redraws saved sweeps, one alone or several overlaid, into `--out`;
//! a run's report gets its response-time heatmap.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::config::PlotConfig;
use crate::export::outputs::Outputs;
use crate::export::plot;
use crate::export::report::Report;
use crate::export::sweep_lines::{self, Line};
use crate::report::sweep as model;

/// A file `plot` cannot read: the user's to fix (exit 2), as every input error is.
#[derive(Debug, thiserror::Error)]
#[error("reading {}: {why}", .path.display())]
pub struct InputError {
    /// The file, or the folder given.
    pub path: PathBuf,
    /// Why.
    pub why: String,
}

/// The file to read for `input`: itself, or the `sweep.json` in it when it is a folder
/// (a sweep's `--out`), as `tailrate report` reads one.
fn input_file(input: &Path) -> Result<PathBuf, InputError> {
    if !input.is_dir() {
        return Ok(input.to_path_buf());
    }
    let inside = input.join(super::JSON_FILE);
    if inside.is_file() {
        Ok(inside)
    } else {
        Err(InputError {
            path: input.to_path_buf(),
            why: format!(
                "a folder with no {}: give a sweep's folder, its sweep.json, or a run's --json \
                 report",
                super::JSON_FILE
            ),
        })
    }
}

/// Re-renders the plots of one saved sweep, or overlays several, into `--out`; or draws
/// one run report's heatmap. Every input is read before `--out` is made, so a wrong input
/// leaves no empty folder behind.
pub fn replot(args: &PlotConfig, out: &mut dyn Write) -> Result<()> {
    let mut inputs = Vec::with_capacity(args.inputs.len());
    for given in &args.inputs {
        let path = &input_file(given)?;
        let bytes = crate::input::read(path).map_err(|e| InputError {
            path: path.clone(),
            why: e.to_string(),
        })?;
        if is_run_report(&bytes) {
            if args.inputs.len() > 1 {
                return Err(crate::report::compare::ComparisonError::NotAReport(format!(
                    "{} is a run's report: tailrate plot draws one run report alone (its heatmap), or sweeps",
                    path.display()
                ))
                .into());
            }
            let charts = match crate::report::compare::parse(&bytes) {
                Ok(crate::report::compare::Report::Run(run)) => {
                    plot::render_run(&run, args.title.as_deref())?
                }
                Ok(_) => Vec::new(),
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("reading the run in {}", path.display()));
                }
            };
            return write_charts(args, &charts, out);
        }
        let report = model::parse(&bytes)
            .with_context(|| format!("reading the sweep in {}", path.display()))?;
        let label = args
            .labels
            .get(inputs.len())
            .cloned()
            .unwrap_or_else(|| default_label(path));
        inputs.push((label, report));
    }
    let charts = match inputs.as_slice() {
        [(_, only)] => plot::render_sweep(only, args.title.as_deref())?,
        _ => plot::render_overlay(&inputs, args.title.as_deref())?,
    };
    write_charts(args, &charts, out)
}

/// Hands `charts` to the outputs, which write them into `--out` (made now, when missing),
/// and names each file written on `out`.
fn write_charts(args: &PlotConfig, charts: &[plot::Chart], out: &mut dyn Write) -> Result<()> {
    let mut sink = std::io::sink();
    let names = Outputs::new(&mut sink, &args.destinations()).save(Report::Charts(charts))?;
    for name in names {
        sweep_lines::write(out, &Line::WroteFile(&args.out.join(name)))?;
    }
    Ok(())
}

/// Whether `bytes` hold a run's report (its `tests`) rather than a sweep (its `runs`).
fn is_run_report(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes)
        .is_ok_and(|v| v.get("tests").is_some() && v.get("runs").is_none())
}

/// A saved sweep's name on an overlay: its file's stem, or its directory's name for the
/// `sweep.json` every sweep writes (`out/redis-7/sweep.json` is `redis-7`).
fn default_label(path: &std::path::Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    let dir = path
        .parent()
        .and_then(|p| p.file_name())
        .map(|d| d.to_string_lossy().into_owned());
    match (stem, dir) {
        (Some(stem), Some(dir)) if stem == "sweep" => dir,
        (Some(stem), _) => stem,
        (None, _) => path.display().to_string(),
    }
}
