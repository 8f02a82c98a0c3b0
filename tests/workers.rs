//! `--workers`: logical clients over fewer connections with automatic pipelining. The
//! server sees exactly the requested count, in grouped writes; a partial batch waits
//! `--pipeline-delay` and no longer; each reply's response time is its batch wait plus
//! its service time.

use std::collections::BTreeMap;

use serde_json::Value;

use super::harness::{RedisServer, run_tailrate_json};

/// Commands tailrate and the harness send for their own bookkeeping.
const BOOKKEEPING: &[&str] = &[
    "config|get",
    "config|resetstat",
    "info",
    "hello",
    "client|setinfo",
    "select",
    "auth",
];

fn workload_stats(server: &RedisServer) -> BTreeMap<String, u64> {
    server
        .commandstats()
        .into_iter()
        .filter(|(name, _)| !BOOKKEEPING.contains(&name.as_str()))
        .collect()
}

/// Runs tailrate with `args` and `--json`; returns its first test's report.
fn run_json(args: &[&str]) -> Value {
    run_tailrate_json(&[&["-q"], args].concat()).1["tests"][0].clone()
}

fn stats_field(server: &RedisServer, field: &str) -> u64 {
    server.info_field("stats", field).unwrap().parse().unwrap()
}

/// Mean of a latency metric of a test report, in nanoseconds.
fn mean_ns(test: &Value, metric: &str) -> f64 {
    test["latency"][metric]["mean_ns"].as_f64().unwrap()
}

#[test]
fn workers_send_exactly_the_requested_count_over_threads_and_uneven_shares() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    // 23 workers over 5 connections (5, 5, 5, 4, 4) on 2 threads, batches of at most 3.
    let test = run_json(&[
        "-p",
        &port,
        "--threads",
        "2",
        "-c",
        "5",
        "--workers",
        "23",
        "--pipeline-size",
        "3",
        "-n",
        "20000",
        "-t",
        "incr",
    ]);
    assert_eq!(workload_stats(&server).get("incr"), Some(&20_000));
    assert_eq!(test["counts"]["completed"], 20_000);
    assert_eq!(test["latency"]["response"]["count"], 20_000);
    let mean_per_write = test["batches"]["mean_requests_per_write"].as_f64().unwrap();
    assert!(
        mean_per_write > 1.0 && mean_per_write <= 3.0,
        "{}",
        test["batches"]
    );
    // Each reply: response = batch wait + service, so the means add up (to histogram precision).
    let (response, wait, service) = (
        mean_ns(&test, "response"),
        mean_ns(&test, "queue_wait"),
        mean_ns(&test, "service"),
    );
    assert!(
        (response - wait - service).abs() <= 0.01 * response,
        "response {response} != wait {wait} + service {service}"
    );
    assert_eq!(server.cmd(&["GET", "counter:__rand_int__"]), "20000");

    server.reset_stats();
    let test = run_json(&[
        "-p",
        &port,
        "-c",
        "2",
        "--workers",
        "9",
        "--duration",
        "300ms",
        "-t",
        "get",
    ]);
    let counts = &test["counts"];
    assert!(counts["completed"].as_u64().unwrap() > 100, "{counts}");
    assert_eq!(
        counts["intended"], counts["completed"],
        "a timed run ends with every written request answered: {counts}"
    );
    assert_eq!(
        workload_stats(&server).get("get").copied(),
        counts["completed"].as_u64()
    );
}

#[test]
fn batches_are_written_whole_and_the_server_reads_them_together() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let reads_of = |args: &[&str]| {
        server.reset_stats();
        let test = run_json(args);
        (stats_field(&server, "total_reads_processed"), test)
    };
    // 64 workers on one connection, batches of 16, a delay far longer than the run: every
    // write is a full batch of 16, so 6400 requests take exactly 400 writes.
    let (reads, test) = reads_of(&[
        "-p",
        &port,
        "-c",
        "1",
        "--workers",
        "64",
        "--pipeline-size",
        "16",
        "--pipeline-delay",
        "10s",
        "-n",
        "6400",
        "-t",
        "set",
    ]);
    assert_eq!(workload_stats(&server).get("set"), Some(&6400));
    assert_eq!(test["batches"]["writes"], 400, "{}", test["batches"]);
    // No batch waited for the delay: the last ones are full once the workers run out of requests.
    let max_wait = test["latency"]["queue_wait"]["max_ns"].as_u64().unwrap();
    assert!(max_wait < 1_000_000_000, "a batch waited {max_wait} ns");
    // The server reads the batches whole (about twenty more reads are tailrate's and the
    // harness's own INFO, CONFIG and LATENCY requests, 21 on a CI host once); writes the
    // kernel merged only lower the count, and a batch split in two would double it.
    assert!(
        reads <= 400 + 40,
        "{reads} reads for 400 writes of 16 requests"
    );

    // The same requests without workers: one request per read.
    let (plain_reads, _) = reads_of(&["-p", &port, "-c", "1", "-n", "6400", "-t", "set"]);
    assert!(
        plain_reads >= 6400,
        "{plain_reads} reads for 6400 unbatched requests"
    );
}

#[test]
fn a_partial_batch_waits_the_delay_and_its_wait_counts_in_the_response_time() {
    let server = RedisServer::builder()
        .arg("--enable-debug-command", "yes")
        .start();
    let port = server.port().to_string();
    // Three workers, batches of two: the third request waits alone while the first two take
    // 2 x 100 ms in the server; the 20 ms delay, not their replies, sends it.
    let test = run_json(&[
        "-p",
        &port,
        "-c",
        "1",
        "--workers",
        "3",
        "--pipeline-size",
        "2",
        "--pipeline-delay",
        "20ms",
        "-n",
        "6",
        "DEBUG",
        "SLEEP",
        "0.1",
    ]);
    assert_eq!(test["counts"]["completed"], 6);
    let wait = &test["latency"]["queue_wait"];
    let max_wait = wait["max_ns"].as_u64().unwrap();
    assert!(
        (20_000_000..150_000_000).contains(&max_wait),
        "the lone request waited {max_wait} ns for a 20 ms delay"
    );
    let (response, wait, service) = (
        mean_ns(&test, "response"),
        mean_ns(&test, "queue_wait"),
        mean_ns(&test, "service"),
    );
    assert!(
        (response - wait - service).abs() <= 0.01 * response,
        "response {response} != wait {wait} + service {service}"
    );
    assert!(
        service >= 100e6,
        "every request spends at least its own 100 ms in the server: {service}"
    );
}
