//! `tailrate replay`, checked: the trace read through once ([`TracePlan`]), then a
//! single open-loop run whose schedule is the trace's ([`crate::drive::Replay`]) and
//! whose test is the trace's commands, one per name, so that each is reported and
//! checked against `INFO commandstats` apart.

use std::sync::Arc;
use std::time::Duration;

use super::ConfigError;
use super::run::RunConfig;
use super::trace_plan::TracePlan;
use crate::cli::{ConnectionArgs, NOT_A_REPLAYS_FLAGS, ReplayArgs, RunArgs};
use crate::drive::{ArrivalProcess, ArrivalSource, MAX_RATE_PER_THREAD, Mode, Stop};

/// Refuses `--loop` without `--duration`: the passes would go on for ever. A replay's
/// `-c`, `--dbnum` and `--cluster` are clap's to refuse (it has no such flags); a sweep
/// of one refuses them with [`refuse_for_replayed_sweep`].
pub(super) fn refuse_endless_loop(
    repeat_trace: bool,
    duration: Option<Duration>,
) -> Result<(), ConfigError> {
    if repeat_trace && duration.is_none() {
        return Err(ConfigError::invalid(
            "--loop",
            "it replays the trace until --duration: give one (e.g. --duration 60s)",
        ));
    }
    Ok(())
}

/// What a sweep of a replay cannot take: `-c`, `--dbnum` and `--cluster`, each refused
/// when typed at all, its default value included. By hand, not by clap: `sweep` takes
/// them for its sweeps of rates, and `--replay` is only one of its flags.
pub(super) fn refuse_for_replayed_sweep(connection: &ConnectionArgs) -> Result<(), ConfigError> {
    let typed = connection.typed;
    let refused = [typed.clients, typed.dbnum, typed.cluster]
        .into_iter()
        .zip(NOT_A_REPLAYS_FLAGS)
        .find_map(|(typed, refused)| typed.then_some(refused));
    match refused {
        Some((flag, why)) => Err(ConfigError::invalid(flag, why)),
        None => Ok(()),
    }
}

/// `tailrate replay FILE ...` as the run it is.
pub fn replay_config(args: &ReplayArgs) -> Result<RunConfig, ConfigError> {
    refuse_endless_loop(args.trace.repeat_trace, args.duration.duration)?;
    let trace = TracePlan::of(&args.file, &args.trace, args.speed, args.rate)?;
    trace.check_threads(args.connection.link.threads)?;
    let speed_flag = if args.rate.is_some() {
        "--rate"
    } else {
        "--speed"
    };
    let pass = trace.pass_length();
    if args.trace.repeat_trace && trace.shape.span_secs() == 0.0 {
        return Err(ConfigError::invalid(
            "--loop",
            "the trace's commands were all recorded at one instant: its passes would follow \
             each other with no time between",
        ));
    }
    // The warm-up is the trace's first stretch: the measured window is the rest of it.
    let warmup = args.checks.warmup.unwrap_or_default();
    let length = match args.duration.duration {
        Some(d) if args.trace.repeat_trace => d,
        Some(d) => d.min(pass.saturating_sub(warmup)),
        None => pass.saturating_sub(warmup),
    };
    if length.is_zero() {
        return Err(ConfigError::invalid(
            "--warmup",
            format!(
                "the trace takes {:.3} s at this speed, and --warmup would cover all of it",
                pass.as_secs_f64()
            ),
        ));
    }
    // The schedule's mean rate over one pass: what the report calls the target (the
    // achieved-rate check counts against the commands the trace made due).
    let rate = (trace.shape.commands as f64 / pass.as_secs_f64()).max(1e-3);
    let threads = args
        .connection
        .link
        .threads
        .min(trace.options.connections)
        .max(1);
    if rate / threads as f64 > MAX_RATE_PER_THREAD {
        return Err(ConfigError::invalid(
            speed_flag,
            format!(
                "the trace's mean rate would be {rate:.0} commands a second, more than {} \
                 thread(s) plan ({MAX_RATE_PER_THREAD:.0} a second each): give a lower \
                 speed, or --threads up to {} (one per connection of the trace)",
                threads, trace.options.connections
            ),
        ));
    }
    let mut run = run_args_of(args);
    run.connection.clients = trace.options.connections;
    run.duration.duration = Some(length);
    run.rate.rate = Some(rate);
    let mut config = RunConfig::from_args(&run, None)?;
    config.plan.workload.tests = vec![trace.test()];
    config.plan.stop = Stop::After(length);
    if let Mode::Open { arrival, .. } = &mut config.plan.mode {
        *arrival = ArrivalSource::Trace(trace.replay());
    }
    config.replay = Some(Arc::new(trace));
    Ok(config)
}

/// A single run's flags with a replay's groups in place: the rest keep their defaults.
fn run_args_of(args: &ReplayArgs) -> RunArgs {
    let mut run = RunArgs {
        endpoint: args.endpoint.clone(),
        connection: ConnectionArgs {
            link: args.connection.link.clone(),
            session: args.connection.session.clone(),
            ..ConnectionArgs::default()
        },
        open_loop: args.open_loop.clone(),
        repeat: args.repeat.clone(),
        checks: args.checks.clone(),
        objectives: args.objectives.clone(),
        run_output: args.run_output.clone(),
        precision: args.precision.clone(),
        json: args.json.clone(),
        html: args.html.clone(),
        progress: args.progress.clone(),
        metrics: args.metrics.clone(),
        ..RunArgs::default()
    };
    // The trace's arrivals are what they were: no process to test them against.
    run.open_loop.arrival = ArrivalProcess::Constant;
    run
}
