//! `tailrate sweep --replay FILE --speeds ...`: a sweep whose steps replay one trace at
//! its speeds. Speed `x` is the rate `x` times the recorded mean, so the steps, the
//! search and the capacity are the sweep's as ever, and the capacity is also said as a
//! multiple of the recorded traffic.

use std::sync::Arc;
use std::time::Duration;

use super::rates::{Rates, parse_rates};
use crate::cli::SweepArgs;
use crate::config::ConfigError;
use crate::config::RunConfig;
use crate::config::replay::{refuse_endless_loop, refuse_for_replayed_sweep};
use crate::config::trace_plan::{TracePlan, check_pass_length};
use crate::drive::{ArrivalProcess, ArrivalSource, Mode, ReplayOptions, Stop};

/// The trace a sweep replays, read through once.
#[derive(Debug, Clone)]
pub struct ReplaySweep {
    trace: TracePlan,
    /// Commands per second as recorded: speed 1.
    pub recorded_rate_per_sec: f64,
}

impl ReplaySweep {
    /// Checks what a replayed sweep cannot do, and reads the trace.
    pub fn of(file: &std::path::Path, args: &SweepArgs) -> Result<Self, ConfigError> {
        if !args.closed_loop_points.is_empty() || args.rate_capped {
            return Err(ConfigError::invalid(
                "--replay",
                "a closed loop has no trace to follow: drop --closed-loop-points and \
                 --rate-capped",
            ));
        }
        refuse_for_replayed_sweep(&args.connection)?;
        refuse_endless_loop(args.trace.repeat_trace, args.duration.duration)?;
        let trace = TracePlan::of(file, &args.trace, None, None)?;
        trace.check_threads(args.connection.link.threads)?;
        let Some(recorded_rate_per_sec) = trace.shape.mean_rate_per_sec() else {
            return Err(ConfigError::invalid(
                "--speeds",
                "the trace's commands were all recorded at one instant: it has no pace to \
                 take multiples of",
            ));
        };
        Ok(ReplaySweep {
            trace,
            recorded_rate_per_sec,
        })
    }

    /// `--speeds` as the rates the sweep steps through.
    pub fn rates(&self, speeds: &str) -> Result<Rates, ConfigError> {
        match parse_rates(speeds).map_err(|e| rename(e, "--speeds"))? {
            Rates::Absolute(speeds) => {
                for &x in &speeds {
                    check_pass_length(&self.trace.shape, x, "--speeds")?;
                }
                Ok(Rates::Absolute(
                    speeds
                        .iter()
                        .map(|x| x * self.recorded_rate_per_sec)
                        .collect(),
                ))
            }
            Rates::OfClosedLoopMax(_) => Err(ConfigError::invalid(
                "--speeds",
                "speeds are multiples of the recorded pace (0.5..4:0.5, or 1,2,4), not \
                 percentages of a closed loop",
            )),
        }
    }

    /// Makes `base` a replay of the trace: its connections, its test, its arrivals.
    pub fn base(&self, base: &mut RunConfig) {
        base.plan.connections = self.trace.options.connections;
        base.plan.workload.tests = vec![self.trace.test()];
        if let Mode::Open { arrival, .. } = &mut base.plan.mode {
            *arrival = ArrivalProcess::Constant.into();
        }
        base.replay = Some(Arc::new(self.trace.clone()));
    }

    /// Makes `config`, a step at `rate_per_sec`, replay the trace at the matching speed,
    /// for one pass after its warm-up (or, with `--loop`, for `looped_for`).
    pub fn step(&self, config: &mut RunConfig, rate_per_sec: f64, looped_for: Duration) {
        let speed = rate_per_sec / self.recorded_rate_per_sec;
        let at_speed = Arc::new(TracePlan {
            options: ReplayOptions {
                speed,
                ..self.trace.options.clone()
            },
            ..self.trace.clone()
        });
        // The warm-up is the trace's first stretch: the measured window is the rest.
        let rest = at_speed
            .pass_length()
            .saturating_sub(config.plan.warmup)
            .max(Duration::from_millis(1));
        config.plan.stop = Stop::After(if at_speed.options.repeat {
            looped_for
        } else {
            rest
        });
        if let Mode::Open { arrival, .. } = &mut config.plan.mode {
            *arrival = ArrivalSource::Trace(at_speed.replay());
        }
        if config.replay.is_some() {
            config.replay = Some(at_speed);
        }
    }
}

/// `e`, about `--rates`, as about `flag`.
fn rename(e: ConfigError, flag: &'static str) -> ConfigError {
    match e {
        ConfigError::Invalid { why, .. } => ConfigError::Invalid { flag, why },
        other => other,
    }
}
