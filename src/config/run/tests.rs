//! Unit tests of `config/run.rs`.

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
            rate_cap: None,
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
            rate_cap: None,
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

/// The error of `argv`, clap's (its first line) or the check's, checked to be one line
/// naming every needle.
fn refused(argv: &[&str], needles: &[&str]) {
    let mut full = vec!["tailrate"];
    full.extend_from_slice(argv);
    let err = match Args::try_parse_from(full) {
        Ok(args) => RunConfig::from_args(&args.run, None)
            .map(|_| ())
            .unwrap_err()
            .to_string(),
        Err(e) => e.to_string().lines().next().unwrap().to_string(),
    };
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

#[test]
fn a_rate_above_what_the_threads_plan_is_refused_naming_the_threads_needed() {
    refused(
        &["--rate", "1e9", "--duration", "1s"],
        &["--rate", "--threads 200", "-c at least 200"],
    );
    // Threads beyond -c do not count: each needs a connection.
    refused(
        &[
            "--rate",
            "20M",
            "--threads",
            "8",
            "-c",
            "2",
            "--duration",
            "1s",
        ],
        &["--rate", "2 thread(s)"],
    );
    assert!(config(&["--rate", "20M", "--threads", "4", "-c", "4"]).is_ok());
}

#[test]
fn more_request_slots_than_a_run_allocates_are_refused_naming_both_flags() {
    refused(
        &["-c", "1000", "--rate", "100", "--max-inflight", "100000"],
        &["--max-inflight", "-c 1000", "16777216"],
    );
    refused(&["-c", "100", "-P", "1000000"], &["-P", "-c 100"]);
    assert!(config(&["-c", "16", "-P", "1000000", "-t", "ping"]).is_ok());
}

#[test]
fn write_buffers_above_4_gib_are_refused_before_the_values_are_made() {
    let started = std::time::Instant::now();
    refused(&["-c", "50", "-d", "536870912"], &["-d", "4 GiB", "-c 50"]);
    refused(
        &["-t", "mset", "-c", "1", "-d", "536870912"],
        &["-d", "4 GiB"],
    );
    refused(
        &["-t", "set", "-c", "1", "--rate", "10", "-d", "100000000"],
        &["-d", "--max-inflight"],
    );
    refused(
        &["-t", "set", "-c", "9", "--data-size-range", "1-536870912"],
        &["--data-size-range"],
    );
    // Making a 512 MiB value takes a while: a refusal does not wait for it.
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}

#[test]
fn the_estimate_of_a_request_bounds_every_request_built() {
    let cases: &[&[&str]] = &[
        &["-d", "1000"],
        &["-t", "mset,set,lpush,xadd", "-d", "77", "-r", "100"],
        &["--ratio", "1:1", "--keyspace", "1000", "--key-size", "300"],
        &["--data-size-list", "10:1,5000:2", "-t", "set"],
        &["--command", "SET __key__ x__data__y", "--keyspace", "10"],
        &["SET", "a", "__data__", "b"],
    ];
    for argv in cases {
        let mut full = vec!["tailrate"];
        full.extend_from_slice(argv);
        let args = Args::try_parse_from(full).unwrap();
        let spec = workload_spec(&args.run, None).unwrap();
        let estimate = spec.most_request_bytes();
        let built = workload::Workload::build(spec, 1).unwrap();
        let actual = built.most_request_bytes();
        assert!(
            estimate >= actual && estimate <= 2 * actual + 1024,
            "{argv:?}: estimated {estimate}, built {actual}"
        );
    }
}
