//! The validated run: [`RunConfig`] (the driver's [`Plan`] plus outputs and exit policy)
//! from `cli::RunArgs`, with defaults resolved and conflicts refused.

use std::path::PathBuf;
use std::time::Duration;

use super::ConfigError;
use super::endpoint::resolve_endpoint;
use super::shard;
use super::workers::workers_of;
use super::workload::workload_spec;
use crate::cli::RunArgs;
use crate::drive::{MAX_RATE_PER_THREAD, MAX_SLOTS, Mode, Plan, Stop};
use crate::output;
use crate::resp::Limits;
use crate::workload;

/// Most bytes of requests a run may hold for writing at once over all its connections
/// (`-c` times the requests one write carries, times the largest request): each
/// connection's write buffer grows to its largest batch and keeps that memory.
pub const MAX_BATCH_BYTES: u64 = 4 << 30;

/// Everything the core needs to run, validated.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// What the driver runs.
    pub plan: Plan,
    /// Output selection.
    pub output: Output,
    /// Exit non-zero when a self-check fails.
    pub strict: bool,
    /// Loop the tests forever.
    pub loop_forever: bool,
    /// After each open-loop test, the rate-capped and the plain closed loop (`--contrast`).
    pub contrast: bool,
    /// Times each test runs (`--repeat`).
    pub repeat: u32,
    /// Only open connections and wait.
    pub idle: bool,
    /// `--cluster`: the server must be a cluster node.
    pub cluster: bool,
}

/// Which outputs to produce.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// One line per test.
    pub quiet: bool,
    /// CSV on stdout.
    pub csv: bool,
    /// Decimal places for latencies in milliseconds.
    pub precision: usize,
    /// Whole report as JSON.
    pub json: Option<PathBuf>,
    /// HdrHistogram interval log.
    pub hdr_log: Option<PathBuf>,
    /// Live progress on stderr when it is a terminal.
    pub progress: bool,
    /// Read the server's counters around each test (`--no-server-stats` turns it off).
    pub server_stats: bool,
}

impl RunConfig {
    /// Validates `args`; `stdin_arg` is the last custom-command argument read from stdin for `-x`.
    pub fn from_args(args: &RunArgs, stdin_arg: Option<Vec<u8>>) -> Result<Self, ConfigError> {
        let endpoint_and_auth = resolve_endpoint(args)?;
        let (endpoint, handshake) = endpoint_and_auth;

        if args.connection.clients == 0 {
            return Err(ConfigError::invalid("-c", "need at least one connection"));
        }
        if args.connection.threads == 0 {
            return Err(ConfigError::invalid(
                "--threads",
                "need at least one thread",
            ));
        }
        if args.benchmark.pipeline == 0 {
            return Err(ConfigError::invalid("-P", "pipeline must be at least 1"));
        }
        if args.open_loop.max_inflight == 0 {
            return Err(ConfigError::invalid("--max-inflight", "must be at least 1"));
        }
        if args.workload.keyspace == Some(0) {
            return Err(ConfigError::invalid("-r", "keyspace must be at least 1"));
        }
        if args.workload.max_reply_bytes < 16 {
            return Err(ConfigError::invalid(
                "--max-reply-bytes",
                "must be at least 16",
            ));
        }
        if args.benchmark.stdin_last_arg && args.workload.command.is_empty() {
            return Err(ConfigError::Conflict {
                a: "-x",
                b: "the default tests",
                why: "-x reads the last argument of a custom command; give one after the flags",
            });
        }
        if args.connection.user.is_some() && handshake.password.is_none() {
            return Err(ConfigError::Conflict {
                a: "--user",
                b: "no password",
                why: "AUTH with a user needs -a or REDISCLI_AUTH",
            });
        }

        let workers = workers_of(args)?;
        let shard = shard::shard_of(args, &|name| std::env::var(name).ok())?;
        let start_at = shard::start_at_of(args, std::time::SystemTime::now())?;
        let mode = match args.rate.rate {
            Some(rate_per_sec) => {
                check_rate_per_thread(args, rate_per_sec)?;
                // This shard's share: its schedule is cut from the whole plan's (see
                // `Shard::stream`), and its checks judge what it was to send.
                let rate_per_sec = rate_per_sec / f64::from(shard.count);
                if args.benchmark.pipeline != 1 {
                    return Err(ConfigError::Conflict {
                        a: "--rate",
                        b: "-P",
                        why: "open loop pipelines by itself (each request goes when it is due); use --max-inflight to cap requests in flight per connection",
                    });
                }
                Mode::Open {
                    rate_per_sec,
                    arrival: args.open_loop.arrival,
                    pacing: args.open_loop.pacing,
                    max_inflight: args.open_loop.max_inflight,
                    max_backlog: args.open_loop.max_backlog,
                }
            }
            None => Mode::Closed {
                pipeline: args.benchmark.pipeline,
                rate_cap_per_sec: None,
                workers,
            },
        };
        if args.contrast.contrast && args.rate.rate.is_none() {
            return Err(ConfigError::Invalid {
                flag: "--contrast",
                why: "it sets a closed loop beside an open loop at the same rate: give --rate (and --duration)".into(),
            });
        }
        if args.contrast.contrast && args.workers.workers.is_some() {
            return Err(ConfigError::Conflict {
                a: "--contrast",
                b: "--workers",
                why: "the contrast's closed loops are one request in flight per connection, as redis-benchmark's and memtier's",
            });
        }
        if args.checks.warmup.is_some()
            && args.rate.rate.is_none()
            && args.duration.duration.is_none()
        {
            return Err(ConfigError::Conflict {
                a: "--warmup",
                b: "-n",
                why: "warm-up is a time; use it with --duration or --rate",
            });
        }

        let stop = match (args.duration.duration, args.benchmark.requests, &mode) {
            (Some(_), Some(_), _) => {
                return Err(ConfigError::Conflict {
                    a: "--duration",
                    b: "-n",
                    why: "a run ends by time or by count, not both",
                });
            }
            (Some(d), None, _) if d.is_zero() => {
                return Err(ConfigError::invalid(
                    "--duration",
                    "must be longer than zero",
                ));
            }
            (Some(d), None, _) => Stop::After(d),
            (None, Some(0), _) => {
                return Err(ConfigError::invalid("-n", "need at least one request"));
            }
            (None, Some(n), _) if shard.share_of(n) == 0 => {
                return Err(ConfigError::invalid(
                    "-n",
                    format!(
                        "{n} requests cannot be split into {} shards: give -n at least {}",
                        shard.count, shard.count
                    ),
                ));
            }
            (None, Some(n), _) => Stop::Requests(shard.share_of(n)),
            (None, None, Mode::Closed { .. }) => Stop::Requests(shard.share_of(100_000)),
            (None, None, Mode::Open { .. }) => Stop::After(Duration::from_secs(10)),
        };

        check_shard(args, shard, start_at)?;
        // Shards of one plan share its seed; a fresh one would make each its own plan.
        let seed = match (args.checks.seed, shard.is_split()) {
            (Some(seed), _) => seed,
            (None, true) => {
                return Err(ConfigError::invalid(
                    "--shard",
                    "every shard of a plan needs the same --seed (each one's streams are \
                     derived from it): give --seed",
                ));
            }
            (None, false) => workload::fresh_seed(),
        };
        let precision = args.precision.precision.unwrap_or(3);
        if precision > 9 {
            return Err(ConfigError::invalid(
                "--precision",
                "at most 9 decimal places (nanoseconds)",
            ));
        }
        check_slots(args, &mode)?;
        let spec = workload_spec(args, stdin_arg)?;
        // Before building, which makes the values (up to 512 MiB).
        check_batch_bytes(args, &mode, &spec)?;
        let workload = workload::Workload::build(spec, seed)?;
        if start_at.is_some() && workload.tests.len() != 1 {
            return Err(ConfigError::invalid(
                "--start-at",
                format!(
                    "it starts one test at one instant, and this run has {}: give one test \
                     (-t NAME or a command)",
                    workload.tests.len()
                ),
            ));
        }
        // Last, as it touches the file system: every other flag is right by now.
        check_outputs(args)?;

        let plan = Plan {
            endpoint,
            handshake,
            mode,
            stop,
            warmup: args.checks.warmup.unwrap_or_default(),
            connections: shard.share_of(args.connection.clients as u64) as usize,
            threads: args
                .connection
                .threads
                .min(shard.share_of(args.connection.clients as u64) as usize),
            reconnect_each_request: args.keepalive.keepalive == 0,
            workload,
            seed,
            timeout: args.checks.timeout,
            connect_timeout: args.connection.connect_timeout,
            lost_server_wait: args.connection.lost_server_wait,
            limits: Limits {
                max_bulk_bytes: args.workload.max_reply_bytes,
                ..Limits::default()
            },
            exit_on_error: args.checks.exit_on_error,
            batch_latency: args.benchmark.batch_latency,
            shard,
            start_at,
        };
        Ok(RunConfig {
            plan,
            output: Output {
                quiet: args.run_output.quiet,
                csv: args.run_output.csv,
                precision,
                json: args.json.json.clone(),
                hdr_log: args.run_output.hdr_log.clone(),
                progress: !args.progress.no_progress,
                server_stats: !args.progress.no_server_stats,
            },
            strict: args.checks.strict,
            loop_forever: args.benchmark.loop_forever,
            contrast: args.contrast.contrast,
            repeat: args.repeat.repeat,
            idle: args.benchmark.idle,
            cluster: args.connection.cluster,
        })
    }

    /// True in open loop.
    pub fn is_open_loop(&self) -> bool {
        self.plan.is_open_loop()
    }
}

/// Refuses what a shard cannot split or start together with the others: fewer
/// connections than shards, `--workers` (its logical clients are not split), and with
/// `--start-at` more than one test (only the first would start at the common instant).
fn check_shard(
    args: &RunArgs,
    shard: crate::drive::Shard,
    start_at: Option<std::time::SystemTime>,
) -> Result<(), ConfigError> {
    if shard.share_of(args.connection.clients as u64) == 0 {
        return Err(ConfigError::invalid(
            "-c",
            format!(
                "{} connections cannot be split into {} shards: give -c at least {}",
                args.connection.clients, shard.count, shard.count
            ),
        ));
    }
    if shard.is_split() && args.workers.workers.is_some() {
        return Err(ConfigError::Conflict {
            a: "--shard",
            b: "--workers",
            why: "the logical clients are not split between shards; use -c",
        });
    }
    if start_at.is_some() {
        let several = args.repeat.repeat > 1
            || args.contrast.contrast
            || args.benchmark.loop_forever
            || args.benchmark.idle;
        if several {
            return Err(ConfigError::invalid(
                "--start-at",
                "it starts one test at one instant: give it without --repeat, --contrast, -l \
                 or -I",
            ));
        }
    }
    Ok(())
}

/// Refuses a rate above what the run's threads can plan ([`MAX_RATE_PER_THREAD`] each).
fn check_rate_per_thread(args: &RunArgs, rate_per_sec: f64) -> Result<(), ConfigError> {
    // Each thread has a connection at least: more threads than -c are not started.
    let threads = args.connection.threads.min(args.connection.clients).max(1);
    if rate_per_sec <= MAX_RATE_PER_THREAD * threads as f64 {
        return Ok(());
    }
    let needed = (rate_per_sec / MAX_RATE_PER_THREAD).ceil();
    Err(ConfigError::invalid(
        "--rate",
        format!(
            "{rate_per_sec} per second is more than {threads} thread(s) can plan (at most \
             {MAX_RATE_PER_THREAD} per second each, or the scheduler falls behind its own \
             plan): give --threads {needed} (and -c at least {needed}), or a lower rate"
        ),
    ))
}

/// The requests one connection may have in flight, and the flag that says so; `None`
/// with `--workers`, whose total `--workers` bounds.
fn depth_of(args: &RunArgs, mode: &Mode) -> Option<(u64, &'static str)> {
    match mode {
        Mode::Open { max_inflight, .. } => Some((*max_inflight as u64, "--max-inflight")),
        Mode::Closed { workers: None, .. } => Some((u64::from(args.benchmark.pipeline), "-P")),
        Mode::Closed {
            workers: Some(_), ..
        } => None,
    }
}

/// Refuses more request slots than a run allocates up front ([`MAX_SLOTS`]).
fn check_slots(args: &RunArgs, mode: &Mode) -> Result<(), ConfigError> {
    let Some((depth, flag)) = depth_of(args, mode) else {
        return Ok(());
    };
    let slots = (args.connection.clients as u64).saturating_mul(depth);
    if slots <= MAX_SLOTS {
        return Ok(());
    }
    Err(ConfigError::invalid(
        flag,
        format!(
            "-c {} connections with {flag} {depth} each is {slots} requests in flight, above \
             {MAX_SLOTS}, the most a run allocates room for: lower -c or {flag}",
            args.connection.clients
        ),
    ))
}

/// Refuses requests so large that the write buffers of every connection together could
/// hold more than [`MAX_BATCH_BYTES`]; names the flag that makes them large.
fn check_batch_bytes(
    args: &RunArgs,
    mode: &Mode,
    spec: &workload::WorkloadSpec,
) -> Result<(), ConfigError> {
    let (per_write, depth_flag) = match (mode.workers(), depth_of(args, mode)) {
        (Some(w), _) => (w.pipeline_size.min(w.count) as u64, "--pipeline-size"),
        (None, Some(depth)) => depth,
        (None, None) => (1, "-P"),
    };
    let request = spec.most_request_bytes();
    let total = (args.connection.clients as u64)
        .saturating_mul(per_write)
        .saturating_mul(request);
    if total <= MAX_BATCH_BYTES {
        return Ok(());
    }
    let value = spec.sizes.max();
    let key = args.workload.key_size.unwrap_or(0);
    let stdin_bytes = spec
        .custom
        .as_ref()
        .and_then(|c| c.stdin_arg.as_ref())
        .map_or(0, Vec::len);
    let size_flag = if stdin_bytes >= value && stdin_bytes as u64 >= key {
        "-x"
    } else if key > value as u64 {
        "--key-size"
    } else if args.workload.data_size_range.is_some() {
        "--data-size-range"
    } else if args.workload.data_size_list.is_some() {
        "--data-size-list"
    } else {
        "-d"
    };
    Err(ConfigError::invalid(
        size_flag,
        format!(
            "requests of up to {request} bytes, {per_write} per write ({depth_flag}) on each of \
             -c {} connections, could hold {total} bytes in write buffers, above {MAX_BATCH_BYTES} \
             (4 GiB), the most a run holds: lower -c, {depth_flag} or the size",
            args.connection.clients
        ),
    ))
}

/// Checks `--json` and `--hdr-log` before anything runs, so a path that cannot be
/// written fails the command at once instead of losing a finished run.
fn check_outputs(args: &RunArgs) -> Result<(), ConfigError> {
    if let (Some(json), Some(hdr_log)) = (&args.json.json, &args.run_output.hdr_log)
        && output::same_place(json, hdr_log)
    {
        return Err(ConfigError::SameOutput {
            a: "--json",
            b: "--hdr-log",
            place: if output::is_stdout(json) {
                "standard output (-)".into()
            } else {
                json.display().to_string()
            },
        });
    }
    for (flag, path) in [
        ("--json", &args.json.json),
        ("--hdr-log", &args.run_output.hdr_log),
    ] {
        if let Some(path) = path {
            output::check(path).map_err(|why| ConfigError::Output {
                flag,
                path: path.clone(),
                why,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
