//! `--workers`, `--pipeline-size` and `--pipeline-delay`: logical clients over fewer
//! connections, checked against each other and the other flags.

use std::time::Duration;

use super::ConfigError;
use crate::cli::RunArgs;
use crate::drive::Workers;

/// `--pipeline-size` when not given: large enough that a connection's ready workers
/// usually go in one write, small enough to bound one write (about 4 KiB of small GETs).
pub const DEFAULT_PIPELINE_SIZE: usize = 100;
/// Most `--workers`: each one keeps about 72 bytes of request state on its connection,
/// allocated at the start, so a million is 72 MB.
pub const MAX_WORKERS: usize = 1_000_000;
/// `--pipeline-delay` when not given: write as soon as the connection has nothing else
/// to read, so batching adds no wait of its own.
pub const DEFAULT_PIPELINE_DELAY: Duration = Duration::ZERO;

/// Checks `--workers`, `--pipeline-size` and `--pipeline-delay` against each other and
/// the other flags; `None` without `--workers`.
pub(super) fn workers_of(args: &RunArgs) -> Result<Option<Workers>, ConfigError> {
    let Some(count) = args.workers.workers else {
        let given = [
            (args.workers.pipeline_size.is_some(), "--pipeline-size"),
            (args.workers.pipeline_delay.is_some(), "--pipeline-delay"),
        ];
        return match given.into_iter().find(|(on, _)| *on) {
            Some((_, flag)) => Err(ConfigError::invalid(
                flag,
                "batches the requests of --workers; add --workers N (without workers, -P N writes N requests at a time)",
            )),
            None => Ok(None),
        };
    };
    if count == 0 {
        return Err(ConfigError::invalid(
            "--workers",
            "need at least one worker",
        ));
    }
    if count > MAX_WORKERS {
        return Err(ConfigError::invalid(
            "--workers",
            format!("at most {MAX_WORKERS} (each holds request state allocated up front)"),
        ));
    }
    if args.workers.pipeline_size == Some(0) {
        return Err(ConfigError::invalid(
            "--pipeline-size",
            "a batch holds at least one request",
        ));
    }
    if args.workers.pipeline_size.is_some_and(|n| n > MAX_WORKERS) {
        return Err(ConfigError::invalid(
            "--pipeline-size",
            format!("at most {MAX_WORKERS}: no connection has more workers to wait for"),
        ));
    }
    if args.benchmark.pipeline != 1 {
        return Err(ConfigError::Conflict {
            a: "--workers",
            b: "-P",
            why: "workers are batched per connection by --pipeline-size and --pipeline-delay; -P is the fixed batch of a connection without workers",
        });
    }
    if args.keepalive.keepalive == 0 {
        return Err(ConfigError::Conflict {
            a: "--workers",
            b: "-k 0",
            why: "workers share long-lived connections; drop -k 0",
        });
    }
    if count < args.connection.clients {
        return Err(ConfigError::invalid(
            "--workers",
            format!(
                "{count} workers cannot keep {} connections busy (-c, default 50): give at least -c workers, or a smaller -c",
                args.connection.clients
            ),
        ));
    }
    Ok(Some(Workers {
        count,
        pipeline_size: args.workers.pipeline_size.unwrap_or(DEFAULT_PIPELINE_SIZE),
        pipeline_delay: args
            .workers
            .pipeline_delay
            .unwrap_or(DEFAULT_PIPELINE_DELAY),
    }))
}
