//! What `tailrate tune` was asked to do, checked: its own flags, the run flags a search
//! of `--workers` cannot use, and the base run every trial starts from.

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
        base.output.hdr_log = None;
        Ok(TuneConfig {
            base,
            trial,
            trial_given: args.run.duration.is_some(),
            custom_words: args.run.command.len(),
            max_trials: args.max_trials,
            confirm_runs: args.confirm_runs,
            max_workers: args.max_workers,
            json,
        })
    }
}

/// A tune flag that cannot run; names the flag and says what is accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TuneError {
    /// One flag's value is wrong.
    #[error("invalid value for {flag}: {why}")]
    Invalid {
        /// The flag.
        flag: &'static str,
        /// What is wrong and what is accepted.
        why: String,
    },
    /// A run flag that tune cannot use.
    #[error("{flag} cannot be used with tune: {why}")]
    NotWithTune {
        /// The flag.
        flag: &'static str,
        /// Why, and what to do instead.
        why: &'static str,
    },
}

/// Checks tune's own flags and the run flags it cannot use.
fn check_args(args: &TuneArgs) -> Result<(), TuneError> {
    let run = &args.run;
    let refused = [
        (
            run.workers.is_some(),
            "--workers",
            "tune searches it (up to --max-workers)",
        ),
        (
            run.pipeline_size.is_some(),
            "--pipeline-size",
            "tune searches it",
        ),
        (
            run.pipeline_delay.is_some(),
            "--pipeline-delay",
            "tune searches it",
        ),
        (
            run.requests.is_some(),
            "-n",
            "each trial is timed; set its length with --duration",
        ),
        (run.rate.is_some(), "--rate", "trials are closed loop"),
        (
            run.pipeline != 1,
            "-P",
            "workers are batched by --pipeline-size, which tune searches",
        ),
        (
            run.batch_latency,
            "--batch-latency",
            "workers time each reply from its own request",
        ),
        (
            run.keepalive == 0,
            "-k 0",
            "workers share long-lived connections",
        ),
        (run.loop_forever, "-l", "tune ends after its last trial"),
        (run.idle, "-I", "tune sends requests"),
        (
            run.hdr_log.is_some(),
            "--hdr-log",
            "tune writes no interval logs; --json FILE records every trial",
        ),
    ];
    if let Some((_, flag, why)) = refused.into_iter().find(|(given, ..)| *given) {
        return Err(TuneError::NotWithTune { flag, why });
    }
    if run.command.is_empty()
        && let Some(tests) = &run.tests
        && crate::workload::select_tests(Some(tests.as_str()))
            .map(|t| t.len())
            .unwrap_or(1)
            > 1
    {
        return Err(TuneError::Invalid {
            flag: "-t",
            why: format!(
                "'{tests}' selects more than one test; tune measures one: give one test or a custom command"
            ),
        });
    }
    if args.max_trials == 0 {
        return Err(TuneError::Invalid {
            flag: "--max-trials",
            why: "need at least one trial".into(),
        });
    }
    if args.confirm_runs == 0 {
        return Err(TuneError::Invalid {
            flag: "--confirm-runs",
            why: "the best settings are measured at least once more".into(),
        });
    }
    if args.max_workers > super::workers::MAX_WORKERS {
        return Err(TuneError::Invalid {
            flag: "--max-workers",
            why: format!("at most {}", super::workers::MAX_WORKERS),
        });
    }
    if args.max_workers < run.clients {
        return Err(TuneError::Invalid {
            flag: "--max-workers",
            why: format!(
                "{} is below -c {}: every connection needs a worker",
                args.max_workers, run.clients
            ),
        });
    }
    Ok(())
}

/// The run flags to build the base [`RunConfig`] from: trials are timed,
/// [`DEFAULT_TRIAL`] unless `--duration` says.
fn base_run_args(args: &TuneArgs) -> RunArgs {
    let mut run = args.run.clone();
    run.duration.get_or_insert(DEFAULT_TRIAL);
    run
}
