//! `tailrate replay`, checked: the trace read through once (a bad line refused here,
//! with its number, before anything connects), then a single open-loop run whose
//! schedule is the trace's ([`crate::drive::Replay`]) and whose test is the trace's
//! commands, one per name, so that each is reported and checked against `INFO
//! commandstats` apart.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::ConfigError;
use super::run::RunConfig;
use crate::cli::{ConnectionArgs, ReplayArgs, RunArgs, TraceArgs};
use crate::drive::plan::MAX_RUN;
use crate::drive::{
    ArrivalProcess, MAX_CONNECTIONS, MAX_RATE_PER_THREAD, Replay, ReplayOptions, Stop,
};
use crate::report::ReplaySettings;
use crate::workload::replay::{MAX_COMMAND_RECORDS, ReplayFilter, TraceShape, admin_commands};
use crate::workload::{Template, Test};

/// `-c`'s default: a replay refuses any other value (its connections are the trace's).
const DEFAULT_CLIENTS: usize = 50;

/// Connections of a trace without clients, unless `--connections` says.
const CONNECTIONS_WITHOUT_CLIENTS: usize = 50;

/// A trace read through, and how it will be replayed.
#[derive(Debug, Clone)]
pub struct TracePlan {
    /// What the scan found.
    pub shape: TraceShape,
    /// How it is replayed.
    pub options: ReplayOptions,
    /// The test's command names: the trace's, and `select` when one may be needed.
    pub names: Vec<String>,
}

impl TracePlan {
    /// Reads `file` through as `args` say, to replay at `speed` times the recorded pace,
    /// or at a mean `rate`, or as recorded.
    pub fn of(
        file: &Path,
        args: &TraceArgs,
        speed: Option<f64>,
        rate: Option<f64>,
    ) -> Result<TracePlan, ConfigError> {
        let metadata = std::fs::metadata(file).map_err(|e| trace_error(file, e.into()))?;
        if !metadata.is_file() {
            return Err(ConfigError::invalid(
                "FILE",
                format!(
                    "{} is not a regular file: a replay reads its trace twice (once to check \
                     it, once to send it), so save a pipe's output to a file first",
                    file.display()
                ),
            ));
        }
        let lower = |list: &[String]| list.iter().map(|c| c.trim().to_lowercase()).collect();
        let filter = ReplayFilter {
            only: lower(&args.commands),
            exclude: lower(&args.exclude),
            limit: args.limit,
        };
        let shape = TraceShape::scan(file, args.format, args.skip_bad_lines, &filter)
            .map_err(|e| trace_error(file, e))?;
        if shape.commands == 0 {
            let left: Vec<String> = shape
                .left_out
                .iter()
                .map(|(name, n)| format!("{name} {n}"))
                .collect();
            return Err(ConfigError::invalid(
                "FILE",
                format!(
                    "{} holds no command to replay{}",
                    file.display(),
                    if left.is_empty() {
                        String::new()
                    } else {
                        format!(" (left out: {})", left.join(", "))
                    }
                ),
            ));
        }
        refuse_admin_commands(file, &shape, args.allow_admin_commands)?;
        let speed_flag = if rate.is_some() { "--rate" } else { "--speed" };
        let speed = match (speed, rate) {
            (_, Some(rate)) => {
                let Some(mean) = shape.mean_rate_per_sec() else {
                    return Err(ConfigError::invalid(
                        "--rate",
                        "the trace's commands were all recorded at one instant, so it has no \
                         rate to scale: give --speed, or replay it as recorded",
                    ));
                };
                rate / mean
            }
            (Some(speed), None) => speed,
            (None, None) => 1.0,
        };
        // More connections than clients would stay idle: a client's commands keep to one.
        check_pass_length(&shape, speed, speed_flag)?;
        let connections = match (args.connections, shape.clients.len()) {
            (Some(n), 0) => n,
            (Some(n), clients) => n.min(clients),
            (None, 0) => CONNECTIONS_WITHOUT_CLIENTS,
            (None, clients) => clients.min(MAX_CONNECTIONS),
        };
        let mut names: Vec<String> = shape.names.iter().map(|(n, _)| n.clone()).collect();
        if shape.other_databases && !names.iter().any(|n| n == "select") {
            names.push("select".into());
        }
        Ok(TracePlan {
            options: ReplayOptions {
                skip_bad_lines: args.skip_bad_lines,
                filter,
                speed,
                connections,
                repeat: args.repeat_trace,
            },
            shape,
            names,
        })
    }

    /// Refuses more distinct commands times threads than [`MAX_COMMAND_RECORDS`]: each
    /// thread keeps every command's histograms (`threads` as typed; a replay uses at most
    /// one per connection).
    pub fn check_threads(&self, threads: usize) -> Result<(), ConfigError> {
        let threads = threads.min(self.options.connections).max(1);
        let commands = self.names.len();
        if commands.saturating_mul(threads) <= MAX_COMMAND_RECORDS {
            return Ok(());
        }
        let fit = MAX_COMMAND_RECORDS / commands.max(1);
        let fewer = if fit >= 1 {
            format!("give --threads {fit} or fewer, or ")
        } else {
            String::new()
        };
        Err(ConfigError::invalid(
            "--threads",
            format!(
                "the trace has {commands} distinct commands, and each of {threads} threads                  keeps latency histograms for every one: at most {MAX_COMMAND_RECORDS}                  commands times threads; {fewer}leave commands out with --commands or                  --exclude"
            ),
        ))
    }

    /// Schedule time of one pass over the trace at its speed: from the first command to
    /// just past the last.
    pub fn pass_length(&self) -> Duration {
        let secs = self.shape.span_secs() / self.options.speed;
        Duration::from_secs_f64(secs) + Duration::from_millis(1)
    }

    /// The run's test: one command per name, weighted by its count (the weights only
    /// describe the mix; the trace picks each command).
    pub fn test(&self) -> Test {
        let templates = self
            .names
            .iter()
            .map(|n| Template::command(&[n.as_bytes()], false))
            .collect();
        let weights: Vec<u64> = self
            .names
            .iter()
            .map(|n| {
                let count = self.shape.names.iter().find(|(m, _)| m == n);
                count.map_or(1, |(_, c)| (*c).max(1))
            })
            .collect();
        Test::weighted("REPLAY".into(), templates, &weights)
    }

    /// What the report says of the replay.
    pub fn settings(&self, file: &Path) -> ReplaySettings {
        ReplaySettings {
            file: file.display().to_string(),
            format: self
                .shape
                .format
                .and_then(|f| clap::ValueEnum::to_possible_value(&f))
                .map_or_else(String::new, |v| v.get_name().to_string()),
            speed: self.options.speed,
            connections: self.options.connections,
            recorded_clients: self.shape.clients.len() as u64,
            commands: self.shape.commands,
            recorded_span_secs: self.shape.span_secs(),
            recorded_rate_per_sec: self.shape.mean_rate_per_sec(),
            left_out: self.shape.left_out.iter().cloned().collect(),
            bad_lines: self.shape.bad_lines,
            first_bad_line: self.shape.first_bad.clone(),
            out_of_order: self.shape.out_of_order,
            looped: self.options.repeat,
        }
    }
}

/// What a replay (or a sweep of one) cannot take: `-c` and `--dbnum` (its connections and
/// databases are the trace's), `--cluster` (a client's commands would be split by key), `--loop` without a length.
pub(super) fn refuse_for_replay(
    connection: &ConnectionArgs,
    repeat_trace: bool,
    duration: Option<Duration>,
) -> Result<(), ConfigError> {
    if connection.clients != DEFAULT_CLIENTS {
        return Err(ConfigError::invalid(
            "-c",
            "a replay opens one connection per recorded client: fold them onto fewer with \
             --connections N",
        ));
    }
    if connection.dbnum != 0 {
        return Err(ConfigError::invalid(
            "--dbnum",
            "a replay runs each command in the database it was recorded in (a SELECT goes \
             first where needed): replay against a server whose databases hold the data",
        ));
    }
    if connection.cluster {
        return Err(ConfigError::invalid(
            "--cluster",
            "a replay sends each client's commands in order on one connection, which a \
             cluster would split by key: replay against one node (or a proxy in front)",
        ));
    }
    if repeat_trace && duration.is_none() {
        return Err(ConfigError::invalid(
            "--loop",
            "it replays the trace until --duration: give one (e.g. --duration 60s)",
        ));
    }
    Ok(())
}

/// Refuses a trace holding commands that change the server beyond its keys, naming each
/// with its count, unless `allowed` (`--allow-admin-commands`).
fn refuse_admin_commands(
    file: &Path,
    shape: &TraceShape,
    allowed: bool,
) -> Result<(), ConfigError> {
    let admin = admin_commands(&shape.names);
    if allowed || admin.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = admin.iter().map(|(n, c)| format!("{n} {c}")).collect();
    let names: Vec<&str> = admin.iter().map(|(n, _)| n.as_str()).collect();
    Err(ConfigError::invalid(
        "FILE",
        format!(
            "{} holds commands that change the server beyond the keys it replays ({}): \
             replay them with --allow-admin-commands, or leave them out with --exclude {}",
            file.display(),
            listed.join(", "),
            names.join(",")
        ),
    ))
}

/// Refuses a speed at which one pass over the trace would outlast a run's longest.
pub(super) fn check_pass_length(
    shape: &TraceShape,
    speed: f64,
    flag: &'static str,
) -> Result<(), ConfigError> {
    let secs = shape.span_secs() / speed;
    if secs.is_finite() && secs <= MAX_RUN.as_secs_f64() {
        return Ok(());
    }
    Err(ConfigError::invalid(
        flag,
        format!(
            "at {speed:e}x the trace's {:.3} s would take {secs:.3e} s, more than a run may \
             last (30 days)",
            shape.span_secs()
        ),
    ))
}

fn trace_error(file: &Path, error: crate::workload::trace::TraceError) -> ConfigError {
    ConfigError::Trace {
        path: file.to_path_buf(),
        error,
    }
}

/// `tailrate replay FILE ...` as the run it is.
pub fn replay_config(args: &ReplayArgs) -> Result<RunConfig, ConfigError> {
    refuse_for_replay(
        &args.connection,
        args.trace.repeat_trace,
        args.duration.duration,
    )?;
    let trace = TracePlan::of(&args.file, &args.trace, args.speed, args.rate)?;
    trace.check_threads(args.connection.threads)?;
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
    config.replay = Some(Box::new(trace.settings(&args.file)));
    config.plan.trace = Some(Arc::new(Replay::new(
        args.file.clone(),
        &trace.shape,
        &trace.names,
        trace.options,
    )));
    Ok(config)
}

/// A single run's flags with a replay's groups in place: the rest keep their defaults.
fn run_args_of(args: &ReplayArgs) -> RunArgs {
    let mut run = RunArgs {
        endpoint: args.endpoint.clone(),
        connection: args.connection.clone(),
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
