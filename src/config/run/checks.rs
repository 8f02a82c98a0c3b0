//! The checks of a single run that span several flags: counts and pairs, shards, the
//! rate one thread can plan, the requests in flight, write-buffer bytes and outputs.

use super::{MAX_BATCH_BYTES, RunArgs};
use crate::config::ConfigError;
use crate::drive::{MAX_RATE_PER_THREAD, MAX_SLOTS, Mode};
use crate::net::Handshake;
use crate::output;
use crate::workload;

/// Checks the flags that are wrong alone (counts of zero) or beside the defaults: `-x`
/// without a custom command, `--user` without a password.
pub(super) fn check_counts(args: &RunArgs, handshake: &Handshake) -> Result<(), ConfigError> {
    if args.connection.clients == 0 {
        return Err(ConfigError::invalid("-c", "need at least one connection"));
    }
    if args.connection.link.threads == 0 {
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
    if args.connection.link.user.is_some() && handshake.password.is_none() {
        return Err(ConfigError::Conflict {
            a: "--user",
            b: "no password",
            why: "AUTH with a user needs -a or REDISCLI_AUTH",
        });
    }
    Ok(())
}

/// Checks `--contrast` (an open loop's, without workers) and `--warmup` (a time).
pub(super) fn check_contrast_and_warmup(args: &RunArgs) -> Result<(), ConfigError> {
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
    if args.checks.warmup.is_some() && args.rate.rate.is_none() && args.duration.duration.is_none()
    {
        return Err(ConfigError::Conflict {
            a: "--warmup",
            b: "-n",
            why: "warm-up is a time; use it with --duration or --rate",
        });
    }
    Ok(())
}

/// Refuses what a shard cannot split or start together with the others: fewer
/// connections than shards, `--workers` (its logical clients are not split), and with
/// `--start-at` more than one test (only the first would start at the common instant).
pub(super) fn check_shard(
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

/// Refuses a rate above what the run's threads can plan ([`MAX_RATE_PER_THREAD`] each);
/// `flag` is the flag that gave it (`--rate`, or a sweep's `--rates`).
pub(in crate::config) fn check_rate_per_thread(
    args: &RunArgs,
    rate_per_sec: f64,
    flag: &'static str,
) -> Result<(), ConfigError> {
    // Each thread has a connection at least: more threads than -c are not started.
    let threads = args
        .connection
        .link
        .threads
        .min(args.connection.clients)
        .max(1);
    if rate_per_sec <= MAX_RATE_PER_THREAD * threads as f64 {
        return Ok(());
    }
    let needed = (rate_per_sec / MAX_RATE_PER_THREAD).ceil();
    Err(ConfigError::invalid(
        flag,
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
pub(super) fn check_slots(args: &RunArgs, mode: &Mode) -> Result<(), ConfigError> {
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
pub(super) fn check_batch_bytes(
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

/// Checks `--json`, `--hdr-log` and `--html` before anything runs, so a path that cannot be
/// written fails the command at once instead of losing a finished run.
pub(super) fn check_outputs(args: &RunArgs) -> Result<(), ConfigError> {
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
    for (flag, other) in [
        ("--json", &args.json.json),
        ("--hdr-log", &args.run_output.hdr_log),
    ] {
        if let (Some(html), Some(other)) = (&args.html.html, other)
            && output::same_place(html, other)
        {
            return Err(ConfigError::SameOutput {
                a: flag,
                b: "--html",
                place: html.display().to_string(),
            });
        }
    }
    if let Some(html) = &args.html.html {
        super::super::check_html(html)?;
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
