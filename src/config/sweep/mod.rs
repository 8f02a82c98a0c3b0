//! What a sweep was asked to do, checked: the `--rates` spec, the `--slo` objectives,
//! every sweep-only flag check, and the base run every step starts from. Errors are
//! [`SweepError`]s naming the flag; running the steps is `sweep`'s business.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ConfigError, RunConfig};
use crate::cli::{RunArgs, SweepArgs, SweepOrder};
use crate::drive::{Mode, Stop};
use crate::units::parse_rate;

/// Most steps a `--rates` range may expand to.
pub const MAX_STEPS: usize = 1000;
/// Most runs `--repeat` may ask of each step.
pub const MAX_REPEAT: usize = 100;

/// A sweep flag that cannot run; always names the flag and says what is accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SweepError {
    /// One flag's value is wrong.
    #[error("invalid value for {flag}: {why}")]
    Invalid {
        /// The flag.
        flag: &'static str,
        /// What is wrong and what is accepted.
        why: String,
    },
    /// A run flag that a sweep cannot use.
    #[error("{flag} cannot be used with sweep: {why}")]
    NotWithSweep {
        /// The flag.
        flag: &'static str,
        /// Why, and what to do instead.
        why: &'static str,
    },
}

fn invalid(flag: &'static str, why: impl Into<String>) -> SweepError {
    SweepError::Invalid {
        flag,
        why: why.into(),
    }
}

/// The rates of a sweep: absolute requests per second, or fractions of a closed-loop maximum.
#[derive(Debug, Clone, PartialEq)]
pub enum Rates {
    /// Requests per second, increasing.
    Absolute(Vec<f64>),
    /// Fractions (1.0 = 100%) of the throughput of a closed-loop run measured first, increasing.
    OfClosedLoopMax(Vec<f64>),
}

impl Rates {
    /// The values as given (requests per second or fractions).
    pub fn values(&self) -> &[f64] {
        match self {
            Rates::Absolute(v) | Rates::OfClosedLoopMax(v) => v,
        }
    }
}

/// Parses `10k..200k:10k` (inclusive of the end when a step lands on it), `5k,10k,20k`,
/// or the same shapes in percent (`10%..120%:10%`, `50%,100%`).
pub fn parse_rates(text: &str) -> Result<Rates, SweepError> {
    const FLAG: &str = "--rates";
    let text = text.trim();
    if text.is_empty() {
        return Err(invalid(
            FLAG,
            "empty; give a range like 10k..200k:10k, a list like 5k,10k,20k, or percentages like 10%..120%:10%",
        ));
    }
    let percent = text.contains('%');
    let value = |part: &str| -> Result<f64, SweepError> {
        let part = part.trim();
        match (percent, part.strip_suffix('%')) {
            (true, Some(number)) => {
                let v: f64 = number.trim().parse().map_err(|_| {
                    invalid(FLAG, format!("'{part}' is not a percentage (example: 80%)"))
                })?;
                if !v.is_finite() || v <= 0.0 {
                    return Err(invalid(
                        FLAG,
                        format!("'{part}' must be a positive percentage"),
                    ));
                }
                Ok(v / 100.0)
            }
            (true, None) => Err(invalid(
                FLAG,
                format!("'{part}' has no '%': write every value in percent, or none"),
            )),
            (false, _) => parse_rate(part).map_err(|why| invalid(FLAG, why)),
        }
    };
    let values = if let Some((start, rest)) = text.split_once("..") {
        let (end, step) = rest.split_once(':').ok_or_else(|| {
            invalid(
                FLAG,
                format!("'{text}' has no step: write START..END:STEP, e.g. 10k..200k:10k"),
            )
        })?;
        if start.trim().is_empty() || end.trim().is_empty() || step.trim().is_empty() {
            return Err(invalid(
                FLAG,
                format!("'{text}' is an empty range: write START..END:STEP, e.g. 10k..200k:10k"),
            ));
        }
        let (start, end) = (value(start)?, value(end)?);
        let step = match value(step) {
            Ok(s) => s,
            Err(_) if step.trim().trim_end_matches('%').trim().parse::<f64>() == Ok(0.0) => {
                return Err(invalid(
                    FLAG,
                    "the step is zero; give a positive step such as :10k",
                ));
            }
            Err(e) => return Err(e),
        };
        if end < start {
            return Err(invalid(
                FLAG,
                format!("'{text}' is reversed: the end is below the start"),
            ));
        }
        // Each value is start + i*step (no accumulated error); the end counts when a step
        // lands on it within a part in a billion.
        let count = ((end - start) / step * (1.0 + 1e-9)).floor() + 1.0;
        if count > MAX_STEPS as f64 {
            return Err(invalid(
                FLAG,
                format!("'{text}' makes {count} steps; at most {MAX_STEPS}"),
            ));
        }
        (0..count as usize)
            .map(|i| start + i as f64 * step)
            .collect::<Vec<_>>()
    } else {
        let values = text.split(',').map(value).collect::<Result<Vec<_>, _>>()?;
        if values.windows(2).any(|w| w[1] <= w[0]) {
            return Err(invalid(
                FLAG,
                format!("'{text}': list the rates in increasing order, each once"),
            ));
        }
        values
    };
    Ok(if percent {
        Rates::OfClosedLoopMax(values)
    } else {
        Rates::Absolute(values)
    })
}

/// A service-level objective on the response time: `percentile <= bound`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// As typed, e.g. `p99<=1ms`.
    pub text: String,
    /// Percentile, e.g. 99.9.
    pub percentile: f64,
    /// Bound in nanoseconds.
    pub bound_ns: u64,
}

impl Slo {
    /// The percentile as a quantile in 0..1.
    pub fn quantile(&self) -> f64 {
        self.percentile / 100.0
    }

    /// `p99.9` for a percentile of 99.9.
    pub fn percentile_label(&self) -> String {
        format!("p{}", self.percentile)
    }
}

/// Parses `p99<=1ms`, `p99.9<=500us`, `p50<=2.5ms`, `p99.99<=1s` (units ns, us, ms, s).
pub fn parse_slo(text: &str) -> Result<Slo, SweepError> {
    const FLAG: &str = "--slo";
    let example = "write e.g. 'p99<=1ms' or 'p99.9<=500us'";
    let trimmed = text.trim();
    let Some((left, right)) = trimmed.split_once("<=") else {
        let why = if trimmed.contains('<') {
            format!("'{text}' uses '<'; an objective is an upper bound with '<=': {example}")
        } else {
            format!("'{text}' has no '<=': {example}")
        };
        return Err(invalid(FLAG, why));
    };
    let number = left.trim().strip_prefix('p').ok_or_else(|| {
        invalid(
            FLAG,
            format!("'{left}' is not a percentile like p99: {example}"),
        )
    })?;
    let percentile: f64 = number.parse().map_err(|_| {
        invalid(
            FLAG,
            format!("'{left}' is not a percentile like p99 or p99.9"),
        )
    })?;
    if !(percentile.is_finite() && percentile > 0.0 && percentile < 100.0) {
        return Err(invalid(
            FLAG,
            format!("percentile '{left}' is out of range: use p50 .. p99.999 (above 0, below 100)"),
        ));
    }
    let right = right.trim();
    let split = right
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(right.len());
    let (amount, unit) = right.split_at(split);
    let amount: f64 = amount.parse().map_err(|_| {
        invalid(
            FLAG,
            format!("'{right}' is not a latency like 1ms or 500us"),
        )
    })?;
    let ns_per_unit = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "" => {
            return Err(invalid(
                FLAG,
                format!("'{right}' has no unit: use ns, us, ms or s"),
            ));
        }
        other => {
            return Err(invalid(
                FLAG,
                format!("unknown unit '{other}' in '{right}': use ns, us, ms or s"),
            ));
        }
    };
    let bound_ns = amount * ns_per_unit;
    if !(1.0..3.6e12).contains(&bound_ns) {
        return Err(invalid(
            FLAG,
            format!("'{right}' is out of range: between 1ns and 1h"),
        ));
    }
    Ok(Slo {
        text: trimmed.to_string(),
        percentile,
        bound_ns: bound_ns.round() as u64,
    })
}

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
    /// Runs of every open-loop step, search point and re-measurement (at least 1).
    pub repeat: usize,
    /// Order of the coarse steps.
    pub order: Order,
}

/// Default measured window of a step.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(5);
/// Default warm-up of a step.
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(1);

/// Checks every sweep flag and the run flags a sweep cannot use. Pure: `--out` is
/// checked by [`check_out_dir`].
fn plan(args: &SweepArgs) -> Result<SweepPlan, SweepError> {
    let run = &args.run;
    if run.requests.is_some() {
        return Err(SweepError::NotWithSweep {
            flag: "-n",
            why: "each step is timed; set its length with --duration",
        });
    }
    if run.pipeline != 1 {
        return Err(SweepError::NotWithSweep {
            flag: "-P",
            why: "steps are open loop, which pipelines by itself; use --max-inflight to cap requests in flight per connection",
        });
    }
    if run.rate.is_some() {
        return Err(SweepError::NotWithSweep {
            flag: "--rate",
            why: "the sweep sets each step's rate from --rates",
        });
    }
    if let Some(flag) = [
        (run.workers.is_some(), "--workers"),
        (run.pipeline_size.is_some(), "--pipeline-size"),
        (run.pipeline_delay.is_some(), "--pipeline-delay"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
    {
        return Err(SweepError::NotWithSweep {
            flag,
            why: "steps are open loop; workers are closed-loop clients (find their best setting with `tailrate tune`)",
        });
    }
    if run.loop_forever {
        return Err(SweepError::NotWithSweep {
            flag: "-l",
            why: "a sweep ends after its last step",
        });
    }
    if run.idle {
        return Err(SweepError::NotWithSweep {
            flag: "-I",
            why: "a sweep sends requests",
        });
    }
    if run.json.is_some() || run.hdr_log.is_some() {
        return Err(SweepError::NotWithSweep {
            flag: if run.json.is_some() {
                "--json"
            } else {
                "--hdr-log"
            },
            why: "the sweep writes sweep.json and one .hlog per step into --out",
        });
    }
    if run.command.is_empty()
        && let Some(tests) = &run.tests
        && crate::workload::select_tests(Some(tests.as_str()))
            .map(|t| t.len())
            .unwrap_or(1)
            > 1
    {
        return Err(invalid(
            "-t",
            format!(
                "'{tests}' selects more than one test; a sweep measures one: give one test or a custom command"
            ),
        ));
    }
    let rates = parse_rates(&args.rates)?;
    let slos = args
        .slo
        .iter()
        .map(|s| parse_slo(s))
        .collect::<Result<Vec<_>, _>>()?;
    if !(args.resolution.is_finite() && args.resolution > 0.0 && args.resolution <= 0.5) {
        return Err(invalid(
            "--resolution",
            format!(
                "{} is not a fraction above 0 and at most 0.5 (e.g. 0.02 for 2%) [range: above 0 to 0.5]",
                args.resolution
            ),
        ));
    }
    let repeat = args.run.repeat as usize;
    if !(1..=MAX_REPEAT).contains(&repeat) {
        return Err(invalid(
            "--repeat",
            format!("{} runs; give 1 (each step once) to {MAX_REPEAT}", repeat),
        ));
    }
    let duration = run.duration.unwrap_or(DEFAULT_DURATION);
    if duration.is_zero() {
        return Err(invalid("--duration", "must be longer than zero"));
    }
    Ok(SweepPlan {
        rates,
        slos,
        warmup: run.warmup.unwrap_or(DEFAULT_WARMUP),
        duration,
        settle: args.settle,
        stop_at: args.stop_at,
        resolution: args.resolution,
        closed_loop_points: args.closed_loop_points.clone(),
        rate_capped: args.rate_capped,
        repeat,
        order: args.order.into(),
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
}

impl SweepConfig {
    /// Checks `args`, creates `--out`, and builds the base run.
    pub fn from_args(args: &SweepArgs) -> Result<Self, ConfigError> {
        let plan = plan(args)?;
        check_out_dir(&args.out)?;
        let mut base = RunConfig::from_args(&base_run_args(args), None)?;
        base.plan.warmup = plan.warmup;
        base.plan.stop = Stop::After(plan.duration);
        base.plan.mode = Mode::Open {
            rate_per_sec: 1.0,
            arrival: args.run.arrival,
            pacing: args.run.pacing,
            max_inflight: args.run.max_inflight,
            max_backlog: args.run.max_backlog,
        };
        base.output.json = None;
        base.output.hdr_log = None;
        Ok(SweepConfig {
            base,
            plan,
            rates_text: args.rates.clone(),
            threads: args.run.threads,
            out: args.out.clone(),
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
                arrival: *arrival,
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
    let mut run = args.run.clone();
    if run.requests.is_none() {
        run.duration.get_or_insert(DEFAULT_DURATION);
    }
    run
}

/// Creates `dir` if needed and checks a file can be written in it, before any step runs.
pub fn check_out_dir(dir: &Path) -> Result<(), SweepError> {
    let fail = |why: String| invalid("--out", format!("{}: {why}", dir.display()));
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create the directory ({e})")))?;
    let probe = dir.join(format!(".tailrate-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| fail(format!("cannot write in the directory ({e})")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

#[cfg(test)]
mod tests;
