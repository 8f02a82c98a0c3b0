//! What a sweep was asked to do, checked: the `--rates` spec (`rates.rs`), the `--slo`
//! objectives (`config/slo.rs`), the sweep's own flags, and the base run every step starts from.
//! The run flags a sweep does not take are not in its `cli` groups, so clap refuses them;
//! running the steps is `sweep`'s business.

mod rates;
mod replay;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use rates::{MAX_STEPS, Rates, parse_rates};
pub use replay::ReplaySweep;

use super::slo::{Slo, parse_slos};
use super::{ConfigError, RunConfig};
use crate::cli::{RunArgs, SweepArgs, SweepOrder};
use crate::drive::{Mode, Stop};

/// Most runs `--repeat` may ask of each step.
pub const MAX_REPEAT: usize = 100;

/// The order the coarse steps are visited in (`--order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// By increasing rate, each step's repeats one after another.
    #[default]
    Ascending,
    /// Every (rate, repeat) pair in a random permutation drawn from the run's seed.
    Shuffle,
}

impl From<SweepOrder> for Order {
    fn from(order: SweepOrder) -> Self {
        match order {
            SweepOrder::Ascending => Order::Ascending,
            SweepOrder::Shuffle => Order::Shuffle,
        }
    }
}

/// Everything a sweep needs beyond the run config, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPlan {
    /// The rates to step through.
    pub rates: Rates,
    /// Objectives (all must hold).
    pub slos: Vec<Slo>,
    /// Warm-up of each step.
    pub warmup: Duration,
    /// Measured window of each step.
    pub duration: Duration,
    /// Pause between steps.
    pub settle: Duration,
    /// Stop once response p99 exceeds this.
    pub stop_at: Option<Duration>,
    /// Bisection resolution as a fraction of the rate.
    pub resolution: f64,
    /// Closed-loop connection counts.
    pub closed_loop_points: Vec<usize>,
    /// Run a rate-capped closed loop at every step's rate.
    pub rate_capped: bool,
    /// How the rate-capped loop holds its rate.
    pub cap_pacing: crate::drive::CapPacing,
    /// Runs of every open-loop step, search point and re-measurement (at least 1).
    pub repeat: usize,
    /// Order of the coarse steps.
    pub order: Order,
    /// `--budget`: most time spent measuring, from the first run.
    pub budget: Option<Duration>,
}

/// Default measured window of a step.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(5);
/// Default warm-up of a step.
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(1);

/// Checks the sweep's own flags and the values of the run flags a sweep reads
/// differently. Pure: `--out` is checked by [`check_out_dir`].
fn plan(args: &SweepArgs, replay: Option<&ReplaySweep>) -> Result<SweepPlan, ConfigError> {
    super::workload::check_one_test(&args.workload, "a sweep")?;
    let rates = match replay {
        Some(replay) => replay.rates(args.speeds.as_deref().unwrap_or_default())?,
        None => parse_rates(args.rates.as_deref().unwrap_or_default())?,
    };
    let slos = parse_slos(&args.slo)?;
    if !(args.resolution.is_finite() && args.resolution > 0.0 && args.resolution <= 0.5) {
        return Err(ConfigError::invalid(
            "--resolution",
            format!(
                "{} is not a fraction above 0 and at most 0.5 (e.g. 0.02 for 2%) [range: above 0 to 0.5]",
                args.resolution
            ),
        ));
    }
    let repeat = args.repeat.repeat as usize;
    if !(1..=MAX_REPEAT).contains(&repeat) {
        return Err(ConfigError::invalid(
            "--repeat",
            format!("{} runs; give 1 (each step once) to {MAX_REPEAT}", repeat),
        ));
    }
    let duration = args.duration.duration.unwrap_or(DEFAULT_DURATION);
    if duration.is_zero() {
        return Err(ConfigError::invalid(
            "--duration",
            "must be longer than zero",
        ));
    }
    Ok(SweepPlan {
        rates,
        slos,
        // A replay's first seconds are the trace's as much as its last.
        warmup: args.checks.warmup.unwrap_or(if replay.is_some() {
            Duration::ZERO
        } else {
            DEFAULT_WARMUP
        }),
        duration,
        settle: args.settle,
        stop_at: args.stop_at,
        resolution: args.resolution,
        closed_loop_points: args.closed_loop_points.clone(),
        rate_capped: args.rate_capped,
        cap_pacing: args.cap_pacing.cap_pacing,
        repeat,
        order: args.order.into(),
        budget: args.budget,
    })
}

/// A checked `tailrate sweep`.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// The base of every step: timed by the plan, open loop at a placeholder rate (each
    /// step sets its own with [`SweepConfig::open_mode`]), no per-run files.
    pub base: RunConfig,
    /// The steps, objectives and their timing.
    pub plan: SweepPlan,
    /// `--rates` as typed, for the report.
    pub rates_text: String,
    /// `--threads` as typed: a step uses at most one thread per connection.
    pub threads: usize,
    /// `--out`: where every file goes (created and checked writable).
    pub out: PathBuf,
    /// `--html FILE`: the sweep's page, rewritten with the other files.
    pub html: Option<PathBuf>,
    /// `--replay FILE --speeds`: the trace each step replays at its speed.
    pub replay: Option<ReplaySweep>,
}

impl SweepConfig {
    /// The sweep's JSON in `--out`.
    pub const JSON_FILE: &str = "sweep.json";
    /// The sweep's CSV in `--out`.
    pub const CSV_FILE: &str = "sweep.csv";
    /// One row per step and objective, with the share over the bound that decided it.
    pub const STEPS_CSV_FILE: &str = "steps.csv";

    /// Checks `args`, creates `--out`, and builds the base run.
    pub fn from_args(args: &SweepArgs) -> Result<Self, ConfigError> {
        let replay = match &args.replay {
            Some(file) => Some(ReplaySweep::of(file, args)?),
            None => None,
        };
        let plan = plan(args, replay.as_ref())?;
        let run_args = base_run_args(args);
        // A step is a run at its rate: what `--rate` refuses, `--rates` refuses (and a rate
        // of 1e308 would name a .hlog file of 309 digits).
        if let Rates::Absolute(rates) = &plan.rates {
            for &rate in rates {
                super::run::check_rate_per_thread(&run_args, rate, "--rates")?;
            }
        }
        check_out_dir(&args.out)?;
        if let Some(html) = &args.html.html {
            super::check_html(html)?;
        }
        let mut base = RunConfig::from_args(&run_args, None)?;
        base.plan.warmup = plan.warmup;
        base.plan.stop = Stop::After(plan.duration);
        base.plan.mode = Mode::Open {
            rate_per_sec: 1.0,
            arrival: args.open_loop.arrival.into(),
            pacing: args.open_loop.pacing,
            max_inflight: args.open_loop.max_inflight,
            max_backlog: args.open_loop.max_backlog,
        };
        if let Some(replay) = &replay {
            replay.base(&mut base);
        }
        let rates_text = match &replay {
            Some(_) => format!("speeds {}", args.speeds.as_deref().unwrap_or_default()),
            None => args.rates.clone().unwrap_or_default(),
        };
        Ok(SweepConfig {
            replay,
            base,
            plan,
            rates_text,
            threads: args.connection.link.threads,
            out: args.out.clone(),
            html: args.html.html.clone(),
        })
    }

    /// The base's open loop at `rate_per_sec`.
    pub fn open_mode(&self, rate_per_sec: f64) -> Mode {
        match &self.base.plan.mode {
            Mode::Open {
                arrival,
                pacing,
                max_inflight,
                max_backlog,
                ..
            } => Mode::Open {
                rate_per_sec,
                arrival: arrival.clone(),
                pacing: *pacing,
                max_inflight: *max_inflight,
                max_backlog: *max_backlog,
            },
            closed => closed.clone(),
        }
    }
}

/// The run flags to build the base [`RunConfig`] from: a sweep's steps are timed, so
/// `--warmup` without `--duration` is fine here (the step length defaults to 5 s).
fn base_run_args(args: &SweepArgs) -> RunArgs {
    let mut run = args.run_args();
    run.duration.duration.get_or_insert(DEFAULT_DURATION);
    run
}

/// Creates `dir` if needed and checks a file can be written in it, before any step runs.
pub fn check_out_dir(dir: &Path) -> Result<(), ConfigError> {
    let fail = |why: String| ConfigError::invalid("--out", format!("{}: {why}", dir.display()));
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create the directory ({e})")))?;
    let probe = dir.join(format!(".tailrate-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| fail(format!("cannot write in the directory ({e})")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Checks that the folder `dir`, not there yet, can be made: the nearest folder above it
/// that exists is a writable folder. Nothing is created.
pub fn check_out_parent(dir: &Path) -> Result<(), ConfigError> {
    let fail = |why: String| ConfigError::invalid("--out", format!("{}: {why}", dir.display()));
    let above = dir
        .ancestors()
        .skip(1)
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .find(|p| p.exists())
        .unwrap_or(Path::new("."));
    let meta = std::fs::metadata(above).map_err(|e| fail(format!("{}: {e}", above.display())))?;
    if !meta.is_dir() {
        return Err(fail(format!("{} is not a directory", above.display())));
    }
    if meta.permissions().readonly() {
        return Err(fail(format!("{} is read-only", above.display())));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
