//! The validated run: [`RunConfig`] (the driver's [`Plan`] plus outputs and exit policy)
//! from `cli::RunArgs`, with defaults resolved and conflicts refused.

use std::path::PathBuf;
use std::time::Duration;

use super::ConfigError;
use super::endpoint::resolve_endpoint;
use super::workers::workers_of;
use super::workload::workload_spec;
use crate::cli::RunArgs;
use crate::drive::{Mode, Plan, Stop};
use crate::resp::Limits;
use crate::workload;

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
            return Err(ConfigError::invalid(
                "--threads",
                "need at least one thread",
            ));
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
            return Err(ConfigError::invalid(
                "--max-reply-bytes",
                "must be at least 16",
            ));
        }
        if args.stdin_last_arg && args.command.is_empty() {
            return Err(ConfigError::Conflict {
                a: "-x",
                b: "the default tests",
                why: "-x reads the last argument of a custom command; give one after the flags",
            });
        }
        if args.user.is_some() && handshake.password.is_none() {
            return Err(ConfigError::Conflict {
                a: "--user",
                b: "no password",
                why: "AUTH with a user needs -a or REDISCLI_AUTH",
            });
        }

        let workers = workers_of(args)?;
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
            None => Mode::Closed {
                pipeline: args.pipeline,
                rate_cap_per_sec: None,
                workers,
            },
        };
        if args.warmup.is_some() && args.rate.is_none() && args.duration.is_none() {
            return Err(ConfigError::Conflict {
                a: "--warmup",
                b: "-n",
                why: "warm-up is a time; use it with --duration or --rate",
            });
        }

        let stop = match (args.duration, args.requests, &mode) {
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
            (None, Some(n), _) => Stop::Requests(n),
            (None, None, Mode::Closed { .. }) => Stop::Requests(100_000),
            (None, None, Mode::Open { .. }) => Stop::After(Duration::from_secs(10)),
        };

        let seed = args.seed.unwrap_or_else(workload::fresh_seed);
        let precision = args.precision.unwrap_or(3);
        if precision > 9 {
            return Err(ConfigError::invalid(
                "--precision",
                "at most 9 decimal places (nanoseconds)",
            ));
        }
        let workload = workload::Workload::build(workload_spec(args, stdin_arg)?, seed)?;

        let plan = Plan {
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
            limits: Limits {
                max_bulk_bytes: args.max_reply_bytes,
                ..Limits::default()
            },
            exit_on_error: args.exit_on_error,
            batch_latency: args.batch_latency,
        };
        Ok(RunConfig {
            plan,
            output: Output {
                quiet: args.quiet,
                csv: args.csv,
                precision,
                json: args.json.clone(),
                hdr_log: args.hdr_log.clone(),
                progress: !args.no_progress,
            },
            strict: args.strict,
            loop_forever: args.loop_forever,
            idle: args.idle,
            cluster: args.cluster,
        })
    }

    /// True in open loop.
    pub fn is_open_loop(&self) -> bool {
        self.plan.is_open_loop()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::cli::Args;
    use crate::config::DEFAULT_PIPELINE_SIZE;
    use crate::drive::Workers;
    use crate::net::{Endpoint, TlsSettings};
    use clap::Parser;

    fn config(argv: &[&str]) -> Result<RunConfig, ConfigError> {
        let mut full = vec!["tailrate"];
        full.extend_from_slice(argv);
        let args = Args::try_parse_from(full).unwrap();
        RunConfig::from_args(&args.run, None)
    }

    #[test]
    fn rate_with_pipeline_is_refused_naming_both_flags() {
        let err = config(&["--rate", "1000", "-P", "16"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--rate") && err.contains("-P"), "{err}");
    }

    #[test]
    fn closed_loop_defaults_match_redis_benchmark() {
        let cfg = config(&[]).unwrap();
        assert_eq!(cfg.plan.stop, Stop::Requests(100_000));
        assert_eq!(cfg.plan.connections, 50);
        assert_eq!(
            cfg.plan.mode,
            Mode::Closed {
                pipeline: 1,
                rate_cap_per_sec: None,
                workers: None
            }
        );
    }

    #[test]
    fn workers_default_to_batches_of_100_written_at_once() {
        let cfg = config(&["-c", "4", "--workers", "64"]).unwrap();
        let w = Workers {
            count: 64,
            pipeline_size: DEFAULT_PIPELINE_SIZE,
            pipeline_delay: Duration::ZERO,
        };
        assert_eq!(
            cfg.plan.mode,
            Mode::Closed {
                pipeline: 1,
                rate_cap_per_sec: None,
                workers: Some(w)
            }
        );
        let cfg = config(&[
            "-c",
            "1",
            "--workers",
            "8",
            "--pipeline-size",
            "4",
            "--pipeline-delay",
            "50us",
        ])
        .unwrap();
        assert_eq!(
            cfg.plan
                .mode
                .workers()
                .map(|w| (w.pipeline_size, w.pipeline_delay)),
            Some((4, Duration::from_micros(50)))
        );
    }

    #[test]
    fn bad_worker_flags_are_refused_naming_the_flag() {
        refused(&["--workers", "0"], &["--workers", "at least one"]);
        refused(&["--workers", "2000000"], &["--workers", "at most 1000000"]);
        refused(
            &["-c", "1", "--workers", "4", "--pipeline-size", "0"],
            &["--pipeline-size"],
        );
        refused(&["--pipeline-size", "8"], &["--pipeline-size", "--workers"]);
        refused(
            &["--pipeline-delay", "1ms"],
            &["--pipeline-delay", "--workers"],
        );
        refused(
            &["--workers", "100", "--rate", "1000"],
            &["--workers", "--rate"],
        );
        refused(&["--workers", "100", "-P", "16"], &["--workers", "-P"]);
        refused(
            &["--workers", "100", "--batch-latency"],
            &["--workers", "--batch-latency"],
        );
        refused(&["--workers", "100", "-k", "0"], &["--workers", "-k 0"]);
        refused(&["--workers", "10"], &["--workers", "-c", "50"]);
    }

    #[test]
    fn duration_and_count_together_are_refused() {
        let err = config(&["--duration", "1s", "-n", "10"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--duration") && err.contains("-n"), "{err}");
    }

    /// The error of `argv`, checked to be one line naming every needle.
    fn refused(argv: &[&str], needles: &[&str]) {
        let err = config(argv).map(|_| ()).unwrap_err().to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
        for needle in needles {
            assert!(
                err.contains(needle),
                "{argv:?}: {needle:?} missing in {err}"
            );
        }
    }

    #[test]
    fn bad_mixes_are_refused_naming_the_flag() {
        refused(
            &[
                "--command",
                "GET a",
                "--command",
                "GET b",
                "--command-weights",
                "1,2,3",
            ],
            &["--command-weights", "3 weights for 2"],
        );
        refused(
            &[
                "--command",
                "GET a",
                "--command",
                "GET b",
                "--command-weights",
                "1,0",
            ],
            &["--command-weights", "'0'"],
        );
        refused(
            &[
                "--command",
                "GET a",
                "--command",
                "GET b",
                "--command-weights",
                "1,x",
            ],
            &["--command-weights", "'x'"],
        );
        refused(&["--command-weights", "1"], &["--command-weights"]);
        refused(
            &["--command", "GET __nosuch__"],
            &["--command", "__nosuch__"],
        );
        refused(&["--command", "GET \"k"], &["--command", "unbalanced"]);
        refused(&["--command", "  "], &["--command", "empty"]);
        refused(&["GET", "__nosuch__"], &["COMMAND", "__nosuch__"]);
        refused(&["--ratio", "1-10"], &["--ratio", "1-10"]);
        refused(&["--ratio", "0:0"], &["--ratio"]);
        refused(&["--read-ratio", "1.5"], &["--read-ratio"]);
        refused(&["--read-ratio", "-0.5"], &["--read-ratio"]);
        refused(
            &["--ratio", "1:10", "--command", "GET a"],
            &["--ratio", "--command"],
        );
        refused(
            &["--ratio", "1:10", "--read-ratio", "0.5"],
            &["--ratio", "--read-ratio"],
        );
        refused(
            &["--ratio", "1:10", "GET", "k"],
            &["--ratio", "custom command"],
        );
        refused(&["-t", "get", "--command", "GET a"], &["-t", "--command"]);
        refused(
            &["-t", "get", "--read-ratio", "0.5"],
            &["-t", "--read-ratio"],
        );
    }

    #[test]
    fn bad_keys_and_values_are_refused_naming_the_flag() {
        refused(
            &[
                "--keyspace",
                "100",
                "--key-pattern",
                "zipf",
                "--zipf-exponent",
                "0",
            ],
            &["--zipf-exponent"],
        );
        refused(
            &[
                "--keyspace",
                "100",
                "--key-pattern",
                "zipf",
                "--zipf-exponent",
                "-1",
            ],
            &["--zipf-exponent"],
        );
        refused(
            &["--keyspace", "100", "--zipf-exponent", "1.2"],
            &["--zipf-exponent", "zipf"],
        );
        refused(&["--key-pattern", "zipf"], &["--key-pattern", "--keyspace"]);
        refused(
            &["-r", "100", "--key-pattern", "gaussian"],
            &["-r", "--key-pattern"],
        );
        refused(&["-r", "100", "--keyspace", "100"], &["-r", "--keyspace"]);
        refused(&["--keyspace", "0"], &["--keyspace"]);
        refused(
            &["--keyspace", "2000000000000"],
            &["--keyspace", "12 digits"],
        );
        refused(
            &["--ratio", "1:1", "--keyspace", "1000000", "--key-size", "8"],
            &["--key-size", "at least 10"],
        );
        refused(
            &[
                "--ratio",
                "1:1",
                "--key-prefix",
                "a-long-prefix:",
                "--key-size",
                "10",
            ],
            &["--key-size", "a-long-prefix:"],
        );
        refused(
            &["-t", "get", "--key-size", "32"],
            &["--key-size", "__key__"],
        );
        refused(&["--key-prefix", "k:"], &["--key-prefix", "__key__"]);
        refused(
            &["--data-size-range", "1024-32"],
            &["--data-size-range", "reversed"],
        );
        refused(&["--data-size-range", "32"], &["--data-size-range"]);
        refused(&["--data-size-list", "32:0"], &["--data-size-list"]);
    }

    #[test]
    fn workload_flags_that_fit_together_are_accepted() {
        let cfg = config(&[
            "--ratio",
            "1:10",
            "--keyspace",
            "1M",
            "--key-pattern",
            "zipf",
            "--zipf-exponent",
            "0.99",
            "--key-size",
            "16",
        ])
        .unwrap();
        assert_eq!(cfg.plan.workload.tests[0].name, "MIX (SET:GET 1:10)");
        assert_eq!(cfg.plan.workload.key_format.key_len(), 16);
        assert_eq!(cfg.plan.workload.keyspace, Some(1_000_000));
        let cfg = config(&[
            "-t",
            "set",
            "--keyspace",
            "100",
            "--data-size-list",
            "10:1,20:3",
        ])
        .unwrap();
        assert_eq!(cfg.plan.workload.data_size, 20);
        let cfg = config(&["--keyspace", "100", "--key-pattern", "uniform", "-r", "100"]);
        assert!(
            cfg.is_err(),
            "-r and --keyspace are two spellings of one thing"
        );
        assert!(config(&["-r", "100", "--key-pattern", "uniform"]).is_ok());
    }

    #[test]
    fn tls_flags_need_tls_and_each_other() {
        refused(&["--cacert", "ca.pem"], &["--cacert", "--tls"]);
        refused(&["--insecure"], &["--insecure", "--tls"]);
        refused(&["-u", "redis://h", "--sni", "h"], &["--sni", "rediss://"]);
        refused(&["--tls", "--cert", "c.pem"], &["--cert", "--key"]);
        refused(&["--tls", "--key", "k.pem"], &["--key", "--cert"]);
        refused(
            &["--tls", "--insecure", "--cacert", "ca.pem"],
            &["--insecure", "--cacert"],
        );
        refused(&["--tls", "-s", "/tmp/redis.sock"], &["--tls", "-s"]);
        refused(
            &["--tls", "-u", "unix:///tmp/redis.sock"],
            &["--tls", "unix://"],
        );
        refused(
            &["--tls", "--cacert", "/nonexistent/ca.pem"],
            &["--cacert", "/nonexistent/ca.pem", "cannot read"],
        );
    }

    #[test]
    fn rediss_and_tls_make_a_tls_endpoint() {
        let cfg = config(&["-u", "rediss://:pw@127.0.0.1:6380/2", "--insecure"]).unwrap();
        assert_eq!(cfg.plan.endpoint.to_string(), "tls:127.0.0.1:6380");
        assert!(
            cfg.plan
                .endpoint
                .tls()
                .is_some_and(TlsSettings::is_insecure)
        );
        assert_eq!(
            (
                cfg.plan.handshake.password.as_deref(),
                cfg.plan.handshake.db
            ),
            (Some("pw"), 2)
        );
        let cfg = config(&["--tls", "--insecure", "-h", "::1", "-p", "7000"]).unwrap();
        assert_eq!(cfg.plan.endpoint.to_string(), "tls:[::1]:7000");
        let copy = cfg.clone();
        assert_eq!(
            copy.plan.endpoint, cfg.plan.endpoint,
            "a cloned config shares its TLS configuration"
        );
    }

    #[test]
    fn uri_sets_endpoint_and_credentials() {
        let cfg = config(&["-u", "redis://bob:secret@10.0.0.1:7000/3"]).unwrap();
        assert_eq!(
            cfg.plan.endpoint,
            Endpoint::Tcp {
                host: "10.0.0.1".into(),
                port: 7000
            }
        );
        assert_eq!(cfg.plan.handshake.user.as_deref(), Some("bob"));
        assert_eq!(cfg.plan.handshake.password.as_deref(), Some("secret"));
        assert_eq!(cfg.plan.handshake.db, 3);
    }
}
