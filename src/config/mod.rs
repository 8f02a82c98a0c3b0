//! From what was typed to what runs: [`Command::from_args`] turns `cli::Args` into one
//! validated [`Command`], with every check across flags done here, once, and errors that
//! name the flag (one [`ConfigError`]). Nothing below this module reads `cli`.
//!
//! One file per concern: `run` (a single run: the driver's plan, outputs, exit policy),
//! `endpoint` (where and how to connect, TLS), `workload` (tests, keys, values,
//! mixes), `workers` (`--workers` batching), [`sweep`], [`tune`] and [`compare`] (their
//! own flags on top of a run's), [`redact`] (the command line as reports keep it), and
//! `error` (the one error type of them all).

pub mod compare;
mod endpoint;
mod error;
pub mod metrics;
pub mod outputs;
pub mod redact;
pub mod replay;
mod run;
pub mod shard;
pub mod slo;
pub mod sweep;
pub mod trace_plan;
pub mod tune;
mod workers;
mod workload;

use std::io::Read;
use std::path::{Path, PathBuf};

pub use compare::CompareConfig;
pub use error::ConfigError;
pub use metrics::MetricsConfig;
pub use outputs::{Destinations, TextForm};
pub use run::{Output, RunConfig};
pub use sweep::SweepConfig;
pub use tune::TuneConfig;
pub use workers::{DEFAULT_PIPELINE_DELAY, DEFAULT_PIPELINE_SIZE, MAX_WORKERS};

use crate::cli;

/// `tailrate merge`, checked: the inputs are read when it runs.
#[derive(Debug, Clone)]
pub struct MergeConfig {
    /// Files and directories as given.
    pub inputs: Vec<PathBuf>,
    /// Where merged.json and merged.hlog go.
    pub out: PathBuf,
    /// Merge with shards missing, marked partial.
    pub partial: bool,
    /// `--html FILE`: the merged report's page.
    pub html: Option<PathBuf>,
}

impl MergeConfig {
    /// The merged report's file in `--out`.
    pub const JSON_FILE: &str = "merged.json";
    /// The merged interval log's file in `--out`.
    pub const HLOG_FILE: &str = "merged.hlog";
}

/// `tailrate report`, checked: the input is read when it runs.
#[derive(Debug, Clone)]
pub struct ReportConfig {
    /// A saved run, merge or comparison JSON, or a sweep's folder or sweep.json.
    pub input: PathBuf,
    /// Where the page goes, if asked for.
    pub html: Option<PathBuf>,
    /// The text's form (`-q`, `--csv`).
    pub text: TextForm,
    /// Decimal places of milliseconds in the text.
    pub precision: usize,
}

/// What the command line asks for, checked.
#[derive(Debug, Clone)]
pub enum Command {
    /// Run the tests (closed or open loop) and report them.
    Run(Box<RunConfig>),
    /// Step through rates (`tailrate sweep`).
    Sweep(Box<SweepConfig>),
    /// Search the `--workers` settings (`tailrate tune`).
    Tune(Box<TuneConfig>),
    /// Redraw saved sweeps (`tailrate plot`).
    Plot(PlotConfig),
    /// Compare two reports or two servers (`tailrate compare`).
    Compare(Box<CompareConfig>),
    /// Add shards' reports (`tailrate merge`).
    Merge(MergeConfig),
    /// Show a saved report again: its text, or its HTML page (`tailrate report`).
    Report(ReportConfig),
    /// Print a shell completion script.
    Completions(clap_complete::Shell),
    /// Print a man page, or write them all into a folder.
    Man {
        /// The subcommand whose page to print; tailrate(1) when `None`.
        page: Option<String>,
        /// The folder to write every page into instead.
        out: Option<PathBuf>,
    },
}

/// Refuses a merge whose `--out` is one of its input folders, or holds an input file it
/// writes (`merged.json`, `merged.hlog`): the merged files would be read back as a shard
/// by the next merge of the same folders.
fn refuse_out_among_inputs(out: &Path, inputs: &[PathBuf]) -> Result<(), ConfigError> {
    let Ok(out_dir) = std::fs::canonicalize(out) else {
        return Ok(());
    };
    for input in inputs {
        let Ok(input) = std::fs::canonicalize(input) else {
            continue;
        };
        let written = input.parent() == Some(out_dir.as_path())
            && input
                .file_name()
                .is_some_and(|n| n == MergeConfig::JSON_FILE || n == MergeConfig::HLOG_FILE);
        if input == out_dir || written {
            return Err(ConfigError::invalid(
                "--out",
                format!(
                    "{} is also an input: the merged files would be read as a shard by the next merge of it; give another folder",
                    out.display()
                ),
            ));
        }
    }
    Ok(())
}

/// A checked `tailrate plot`.
#[derive(Debug, Clone)]
pub struct PlotConfig {
    /// The saved `sweep.json` files, in order.
    pub inputs: Vec<PathBuf>,
    /// Where the SVG files go (checked writable when there, made after the inputs are read
    /// when not).
    pub out: PathBuf,
    /// `--label`: the names of the first inputs on an overlay, in order.
    pub labels: Vec<String>,
    /// `--title`: put before every chart's own heading.
    pub title: Option<String>,
}

impl Command {
    /// Checks `args`; `stdin` is read only for `-x` (the last argument from stdin).
    pub fn from_args(args: &cli::Args, stdin: &mut dyn Read) -> Result<Self, ConfigError> {
        let command = match &args.subcommand {
            Some(cli::Command::Sweep(sweep)) => {
                refuse_stdout_dir(&sweep.out)?;
                Command::Sweep(Box::new(SweepConfig::from_args(sweep)?))
            }
            Some(cli::Command::Replay(replay)) => {
                Command::Run(Box::new(replay::replay_config(replay)?))
            }
            Some(cli::Command::Tune(tune)) => Command::Tune(Box::new(TuneConfig::from_args(tune)?)),
            Some(cli::Command::Plot(plot)) => {
                refuse_stdout_dir(&plot.out)?;
                // A folder not there yet is made once the inputs are read (a wrong input
                // leaves none behind); its parent must be there.
                if plot.out.exists() {
                    sweep::check_out_dir(&plot.out)?;
                } else {
                    sweep::check_out_parent(&plot.out)?;
                }
                if plot.labels.len() > plot.inputs.len() {
                    return Err(ConfigError::invalid(
                        "--label",
                        format!(
                            "{} labels for {} sweeps: give at most one per SWEEP_JSON, in order",
                            plot.labels.len(),
                            plot.inputs.len()
                        ),
                    ));
                }
                Command::Plot(PlotConfig {
                    inputs: plot.inputs.clone(),
                    out: plot.out.clone(),
                    labels: plot.labels.clone(),
                    title: plot.title.clone(),
                })
            }
            Some(cli::Command::Compare(compare)) => {
                Command::Compare(Box::new(CompareConfig::from_args(compare)?))
            }
            Some(cli::Command::Merge(merge)) => {
                refuse_stdout_dir(&merge.out)?;
                sweep::check_out_dir(&merge.out)?;
                refuse_out_among_inputs(&merge.out, &merge.inputs)?;
                if let Some(html) = &merge.html.html {
                    check_html(html)?;
                }
                Command::Merge(MergeConfig {
                    inputs: merge.inputs.clone(),
                    out: merge.out.clone(),
                    partial: merge.partial,
                    html: merge.html.html.clone(),
                })
            }
            Some(cli::Command::Report(report)) => {
                if let Some(html) = &report.html {
                    check_html(html)?;
                }
                let precision = report.precision.precision.unwrap_or(3);
                if precision > 9 {
                    return Err(ConfigError::invalid(
                        "--precision",
                        "at most 9 decimal places (nanoseconds)",
                    ));
                }
                Command::Report(ReportConfig {
                    input: report.input.clone(),
                    html: report.html.clone(),
                    text: outputs::text_form(report.quiet, report.csv),
                    precision,
                })
            }
            Some(cli::Command::Completions { shell }) => Command::Completions(*shell),
            Some(cli::Command::Man(man)) => Command::Man {
                page: man.page.clone(),
                out: man.out.clone(),
            },
            None => {
                let stdin_arg = if args.run.benchmark.stdin_last_arg {
                    Some(read_last_arg(stdin)?)
                } else {
                    None
                };
                Command::Run(Box::new(RunConfig::from_args(&args.run, stdin_arg)?))
            }
        };
        // Only a single run is split into shards so far: a sweep's, a search's or a
        // comparison's steps would each need the shared clock.
        if !matches!(command, Command::Run(_))
            && command
                .base_runs()
                .iter()
                .any(|r| r.plan.shard.is_split() || r.plan.start_at.is_some())
        {
            return Err(ConfigError::invalid(
                "--shard",
                "sweep, tune and compare do not run as shards (nor with --start-at); a single \
                 run does (from --shard, JOB_COMPLETION_INDEX with --shards, or srun's \
                 SLURM_PROCID)",
            ));
        }
        Ok(command)
    }

    /// The runs every measurement of this command starts from (none for `plot`, a
    /// comparison of files, `completions` and `man`; both sides of a live comparison).
    pub fn base_runs(&self) -> Vec<&RunConfig> {
        match self {
            Command::Run(run) => vec![run],
            Command::Sweep(sweep) => vec![&sweep.base],
            Command::Tune(tune) => vec![&tune.base],
            Command::Compare(compare) => match &compare.source {
                compare::Source::Live(live) => vec![&live.a, &live.b],
                compare::Source::Files { .. } => Vec::new(),
            },
            Command::Plot(_)
            | Command::Merge(_)
            | Command::Report(_)
            | Command::Completions(_)
            | Command::Man { .. } => Vec::new(),
        }
    }
}

/// Reads `-x`'s argument: all of `stdin`, refused past what a server takes in one
/// argument. Reading stops one byte past it, so a larger input costs no more than that.
fn read_last_arg(stdin: &mut dyn Read) -> Result<Vec<u8>, ConfigError> {
    let most = crate::workload::MAX_VALUE_SIZE as u64;
    let mut buf = Vec::new();
    stdin
        .take(most + 1)
        .read_to_end(&mut buf)
        .map_err(ConfigError::Stdin)?;
    if buf.len() as u64 > most {
        return Err(ConfigError::invalid(
            "-x",
            format!(
                "standard input holds more than {most} bytes (512 MiB, Redis's default \
                 proto-max-bulk-len): a server refuses a larger argument"
            ),
        ));
    }
    Ok(buf)
}

/// Checks `--html FILE` before anything runs or is read: a page is a file to open in a
/// browser, so never `-`, a device or a FIFO; a regular file (or a new one) in a
/// directory that takes one ([`crate::output::check`]).
pub(crate) fn check_html(path: &Path) -> Result<(), ConfigError> {
    let refuse = |why: &str| ConfigError::Output {
        flag: "--html",
        path: path.to_path_buf(),
        why: why.into(),
    };
    if crate::output::is_stdout(path) {
        return Err(refuse(
            "a page is a file to open in a browser, not standard output; give a file name",
        ));
    }
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
        && !meta.is_dir()
    {
        return Err(refuse(
            "not a regular file (a device or a FIFO); give a file name",
        ));
    }
    crate::output::check(path).map_err(|why| ConfigError::Output {
        flag: "--html",
        path: path.to_path_buf(),
        why,
    })
}

/// `--out -`: a directory of several files has no standard-output form.
fn refuse_stdout_dir(out: &std::path::Path) -> Result<(), ConfigError> {
    if crate::output::is_stdout(out) {
        return Err(ConfigError::Output {
            flag: "--out",
            path: out.to_path_buf(),
            why: "a directory for several files cannot be standard output; give a directory".into(),
        });
    }
    Ok(())
}
