//! What `tailrate tune` was asked to do, checked: its own flags, the one test it
//! measures, and the base run every trial starts from.

use std::path::PathBuf;
use std::time::Duration;

use super::{ConfigError, RunConfig};
use crate::cli::{RunArgs, TuneArgs};
use crate::drive::Stop;

/// Length of one trial when `--duration` is not given.
pub const DEFAULT_TRIAL: Duration = Duration::from_secs(1);

/// A checked `tailrate tune`.
#[derive(Debug, Clone)]
pub struct TuneConfig {
    /// Every trial's run: timed (`--duration`, [`DEFAULT_TRIAL`] when not given), no
    /// per-run files.
    pub base: RunConfig,
    /// Length of one trial.
    pub trial: Duration,
    /// Whether `--duration` was typed (the pasted command line then keeps it).
    pub trial_given: bool,
    /// Words of the custom command, if one was given (the pasted command line keeps them).
    pub custom_words: usize,
    /// Most search trials.
    pub max_trials: usize,
    /// Re-measurements of each of the best settings.
    pub confirm_runs: usize,
    /// Most workers tried.
    pub max_workers: usize,
    /// `--json FILE`: the whole search, rewritten after every trial.
    pub json: Option<PathBuf>,
    /// `--max-p99`: the most a chosen setting's p99 may be, nanoseconds.
    pub max_p99_ns: Option<u64>,
}

impl TuneConfig {
    /// Checks `args` and builds the base run.
    pub fn from_args(args: &TuneArgs) -> Result<Self, ConfigError> {
        check_args(args)?;
        let mut base = RunConfig::from_args(&base_run_args(args), None)?;
        let trial = match base.plan.stop {
            Stop::After(d) => d,
            Stop::Requests(_) => DEFAULT_TRIAL,
        };
        base.plan.stop = Stop::After(trial);
        let json = base.output.json.take();
        Ok(TuneConfig {
            base,
            trial,
            trial_given: args.duration.duration.is_some(),
            custom_words: args.workload.command.len(),
            max_trials: args.max_trials,
            confirm_runs: args.confirm_runs,
            max_workers: args.max_workers,
            json,
            max_p99_ns: args.max_p99.map(crate::record::nanos),
        })
    }
}

/// Checks tune's own flags and the values of the run flags it reads differently; the run
/// flags tune does not take are not in its `cli` groups, so clap refuses them.
fn check_args(args: &TuneArgs) -> Result<(), ConfigError> {
    super::workload::check_one_test(&args.workload, "tune")?;
    if args.max_trials == 0 {
        return Err(ConfigError::invalid(
            "--max-trials",
            "need at least one trial",
        ));
    }
    if args.confirm_runs == 0 {
        return Err(ConfigError::invalid(
            "--confirm-runs",
            "the best settings are measured at least once more",
        ));
    }
    if args.max_workers > super::workers::MAX_WORKERS {
        return Err(ConfigError::invalid(
            "--max-workers",
            format!("at most {}", super::workers::MAX_WORKERS),
        ));
    }
    if args.max_workers < args.connection.clients {
        return Err(ConfigError::invalid(
            "--max-workers",
            format!(
                "{} is below -c {}: every connection needs a worker",
                args.max_workers, args.connection.clients
            ),
        ));
    }
    Ok(())
}

/// The run flags to build the base [`RunConfig`] from: trials are timed,
/// [`DEFAULT_TRIAL`] unless `--duration` says.
fn base_run_args(args: &TuneArgs) -> RunArgs {
    let mut run = args.run_args();
    run.duration.duration.get_or_insert(DEFAULT_TRIAL);
    run
}
