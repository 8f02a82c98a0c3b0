//! The validated run configuration: every check across flags happens here, once.
//!
//! `cli::RunArgs` is what the user typed; [`RunConfig`] is what the core needs, with
//! defaults resolved and conflicts refused by a [`ConfigError`] naming the flags.

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{Arrival, Pacing, RunArgs};
use crate::net::{Endpoint, Handshake};
use crate::resp::Limits;
use crate::workload::{self, WorkloadError};

/// A flag, or a combination of flags, that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Two flags that cannot be used together.
    #[error("{a} cannot be used with {b}: {why}")]
    Conflict {
        /// The first flag.
        a: &'static str,
        /// The second flag.
        b: &'static str,
        /// Why, and what to do instead.
        why: &'static str,
    },
    /// One flag's value is out of range.
    #[error("invalid value for {flag}: {why}")]
    Invalid {
        /// The flag.
        flag: &'static str,
        /// What is wrong and what is accepted.
        why: String,
    },
    /// The workload (tests or custom command) is wrong.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
}

impl ConfigError {
    fn invalid(flag: &'static str, why: impl Into<String>) -> Self {
        ConfigError::Invalid { flag, why: why.into() }
    }
}

/// Whether requests follow replies (closed) or a schedule (open).
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// Each connection keeps `pipeline` requests in flight; the next batch goes when all replies are in.
    Closed {
        /// Requests per batch (`-P`).
        pipeline: u32,
        /// Hold sends to this many requests per second (a `governor` limiter), timing each
        /// from its actual send: what rate-limited closed-loop tools report.
        rate_cap_per_sec: Option<f64>,
    },
    /// Requests go at `rate_per_sec` whatever the server does.
    Open {
        /// Target requests per second over all connections.
        rate_per_sec: f64,
        /// Arrival process.
        arrival: Arrival,
        /// How the scheduler waits.
        pacing: Pacing,
        /// Most requests in flight on one connection.
        max_inflight: usize,
        /// Most requests waiting client-side for a free connection.
        max_backlog: usize,
    },
}

/// How long a run lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this many requests (closed loop `-n`).
    Requests(u64),
    /// After this long.
    After(Duration),
}

/// Everything the core needs to run, validated.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Where to connect.
    pub endpoint: Endpoint,
    /// What to send on connect.
    pub handshake: Handshake,
    /// Closed or open loop.
    pub mode: Mode,
    /// When each test ends.
    pub stop: Stop,
    /// Requests sent before recording starts (open loop).
    pub warmup: Duration,
    /// Connections per test.
    pub connections: usize,
    /// OS threads.
    pub threads: usize,
    /// Reconnect for every request (`-k 0`).
    pub reconnect_each_request: bool,
    /// The tests to run, in order.
    pub workload: workload::Workload,
    /// Seed of every random choice.
    pub seed: u64,
    /// Per-request timeout.
    pub timeout: Option<Duration>,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Reply size limits.
    pub limits: Limits,
    /// Output selection.
    pub output: Output,
    /// Exit non-zero when a self-check fails.
    pub strict: bool,
    /// Stop at the first error reply.
    pub exit_on_error: bool,
    /// redis-benchmark's batch latency with -P.
    pub batch_latency: bool,
    /// Loop the tests forever.
    pub loop_forever: bool,
    /// Only open connections and wait.
    pub idle: bool,
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
}

impl RunConfig {
    /// Validates `args`; `stdin_arg` is the last custom-command argument read from stdin for `-x`.
    pub fn from_args(args: &RunArgs, stdin_arg: Option<Vec<u8>>) -> Result<Self, ConfigError> {
        let endpoint_and_auth = resolve_endpoint(args)?;
        let (endpoint, handshake) = endpoint_and_auth;

        if args.clients == 0 {
            return Err(ConfigError::invalid("-c", "need at least one connection"));
        }
        if args.threads == 0 {
            return Err(ConfigError::invalid("--threads", "need at least one thread"));
        }
        if args.pipeline == 0 {
            return Err(ConfigError::invalid("-P", "pipeline must be at least 1"));
        }
        if args.max_inflight == 0 {
            return Err(ConfigError::invalid("--max-inflight", "must be at least 1"));
        }
        if args.keyspace == Some(0) {
            return Err(ConfigError::invalid("-r", "keyspace must be at least 1"));
        }
        if args.max_reply_bytes < 16 {
            return Err(ConfigError::invalid("--max-reply-bytes", "must be at least 16"));
        }
        if args.stdin_last_arg && args.command.is_empty() {
            return Err(ConfigError::Conflict {
                a: "-x",
                b: "the default tests",
                why: "-x reads the last argument of a custom command; give one after the flags",
            });
        }
        if args.user.is_some() && handshake.password.is_none() {
            return Err(ConfigError::Conflict { a: "--user", b: "no password", why: "AUTH with a user needs -a or REDISCLI_AUTH" });
        }

        let mode = match args.rate {
            Some(rate_per_sec) => {
                if args.pipeline != 1 {
                    return Err(ConfigError::Conflict {
                        a: "--rate",
                        b: "-P",
                        why: "open loop pipelines by itself (each request goes when it is due); use --max-inflight to cap requests in flight per connection",
                    });
                }
                if args.requests.is_some() {
                    return Err(ConfigError::Conflict {
                        a: "--rate",
                        b: "-n",
                        why: "an open-loop run lasts --duration; its request count follows from the rate",
                    });
                }
                if args.batch_latency {
                    return Err(ConfigError::Conflict {
                        a: "--rate",
                        b: "--batch-latency",
                        why: "batch latency only has meaning with -P in closed loop",
                    });
                }
                Mode::Open {
                    rate_per_sec,
                    arrival: args.arrival,
                    pacing: args.pacing,
                    max_inflight: args.max_inflight,
                    max_backlog: args.max_backlog,
                }
            }
            None => Mode::Closed { pipeline: args.pipeline, rate_cap_per_sec: None },
        };
        if args.warmup.is_some() && args.rate.is_none() && args.duration.is_none() {
            return Err(ConfigError::Conflict { a: "--warmup", b: "-n", why: "warm-up is a time; use it with --duration or --rate" });
        }

        let stop = match (args.duration, args.requests, &mode) {
            (Some(_), Some(_), _) => {
                return Err(ConfigError::Conflict { a: "--duration", b: "-n", why: "a run ends by time or by count, not both" });
            }
            (Some(d), None, _) if d.is_zero() => return Err(ConfigError::invalid("--duration", "must be longer than zero")),
            (Some(d), None, _) => Stop::After(d),
            (None, Some(0), _) => return Err(ConfigError::invalid("-n", "need at least one request")),
            (None, Some(n), _) => Stop::Requests(n),
            (None, None, Mode::Closed { .. }) => Stop::Requests(100_000),
            (None, None, Mode::Open { .. }) => Stop::After(Duration::from_secs(10)),
        };

        let seed = args.seed.unwrap_or_else(workload::fresh_seed);
        let precision = args.precision.unwrap_or(3);
        if precision > 9 {
            return Err(ConfigError::invalid("--precision", "at most 9 decimal places (nanoseconds)"));
        }
        let workload = workload::Workload::from_args(args, stdin_arg, seed)?;

        Ok(RunConfig {
            endpoint,
            handshake,
            mode,
            stop,
            warmup: args.warmup.unwrap_or_default(),
            connections: args.clients,
            threads: args.threads.min(args.clients),
            reconnect_each_request: args.keepalive == 0,
            workload,
            seed,
            timeout: args.timeout,
            connect_timeout: args.connect_timeout,
            limits: Limits { max_bulk_bytes: args.max_reply_bytes, ..Limits::default() },
            output: Output {
                quiet: args.quiet,
                csv: args.csv,
                precision,
                json: args.json.clone(),
                hdr_log: args.hdr_log.clone(),
                progress: !args.no_progress,
            },
            strict: args.strict,
            exit_on_error: args.exit_on_error,
            batch_latency: args.batch_latency,
            loop_forever: args.loop_forever,
            idle: args.idle,
        })
    }

    /// True in open loop.
    pub fn is_open_loop(&self) -> bool {
        matches!(self.mode, Mode::Open { .. })
    }
}

/// Resolves -h/-p/-s/-u/-a/--user/--dbnum/-3 into an endpoint and a handshake.
fn resolve_endpoint(args: &RunArgs) -> Result<(Endpoint, Handshake), ConfigError> {
    let mut handshake = Handshake {
        user: args.user.clone(),
        password: args.password.clone(),
        db: args.dbnum,
        resp3: args.resp3,
        tracking: args.enable_tracking,
    };
    let mut endpoint = match &args.socket {
        Some(path) => Endpoint::Unix(path.clone()),
        None => Endpoint::Tcp { host: args.host.clone(), port: args.port },
    };
    if let Some(uri) = &args.uri {
        let parsed = crate::net::parse_uri(uri).map_err(|why| ConfigError::invalid("-u", why))?;
        endpoint = parsed.endpoint;
        if parsed.user.is_some() {
            handshake.user = parsed.user;
        }
        if parsed.password.is_some() {
            handshake.password = parsed.password;
        }
        if let Some(db) = parsed.db {
            handshake.db = db;
        }
    }
    Ok((endpoint, handshake))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::cli::Args;
    use clap::Parser;

    fn config(argv: &[&str]) -> Result<RunConfig, ConfigError> {
        let mut full = vec!["tailrate"];
        full.extend_from_slice(argv);
        let args = Args::try_parse_from(full).unwrap();
        RunConfig::from_args(&args.run, None)
    }

    #[test]
    fn rate_with_pipeline_is_refused_naming_both_flags() {
        let err = config(&["--rate", "1000", "-P", "16"]).unwrap_err().to_string();
        assert!(err.contains("--rate") && err.contains("-P"), "{err}");
    }

    #[test]
    fn closed_loop_defaults_match_redis_benchmark() {
        let cfg = config(&[]).unwrap();
        assert_eq!(cfg.stop, Stop::Requests(100_000));
        assert_eq!(cfg.connections, 50);
        assert_eq!(cfg.mode, Mode::Closed { pipeline: 1, rate_cap_per_sec: None });
    }

    #[test]
    fn duration_and_count_together_are_refused() {
        let err = config(&["--duration", "1s", "-n", "10"]).unwrap_err().to_string();
        assert!(err.contains("--duration") && err.contains("-n"), "{err}");
    }

    #[test]
    fn uri_sets_endpoint_and_credentials() {
        let cfg = config(&["-u", "redis://bob:secret@10.0.0.1:7000/3"]).unwrap();
        assert_eq!(cfg.endpoint, Endpoint::Tcp { host: "10.0.0.1".into(), port: 7000 });
        assert_eq!(cfg.handshake.user.as_deref(), Some("bob"));
        assert_eq!(cfg.handshake.password.as_deref(), Some("secret"));
        assert_eq!(cfg.handshake.db, 3);
    }
}
