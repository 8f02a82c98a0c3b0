//! Measured windows and interval time series against a real redis-server (issue 26): a
//! tiny closed loop's window and rate.

use std::time::Instant;

use serde_json::Value;

use super::harness::{RedisServer, run_tailrate_json};

fn n(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// The rate in `-q`'s line: `GET: 1234.56 requests per second, p50=...`.
fn quiet_rate(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.contains("requests per second"))
        .unwrap_or_else(|| panic!("no rate in {stdout:?}"));
    let after = line.split(':').nth(1).unwrap().trim();
    after.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn a_tiny_closed_loop_measures_from_its_first_send_to_its_last_reply() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    for (requests, clients) in [(3u64, "1"), (101, "100")] {
        for attempt in 0..4 {
            let what = format!("-n {requests} -c {clients}, run {attempt}");
            let began = Instant::now();
            let (stdout, report) = run_tailrate_json(&[
                "-p",
                &port,
                "-t",
                "get",
                "-n",
                &requests.to_string(),
                "-c",
                clients,
                "-q",
            ]);
            let wall = began.elapsed().as_secs_f64();
            let test = &report["tests"][0];
            let measured = f(test, "measured_secs");
            let rate = f(test, "throughput_per_sec");
            let completed = n(&test["counts"], "completed");
            assert_eq!(completed, requests, "{what}");
            assert!(
                measured > 0.0 && rate > 0.0,
                "{what}: {measured} s, {rate}/s"
            );
            // The report's own numbers agree: the rate is the requests over the window,
            // the window holds every request's whole response time, and it is inside the
            // process's own run.
            assert!(
                (rate * measured / completed as f64 - 1.0).abs() < 1e-6,
                "{what}: {rate}/s over {measured} s is not {completed} requests"
            );
            let max = f(&test["latency"]["response"], "max_ns") / 1e9;
            let min = f(&test["latency"]["response"], "min_ns") / 1e9;
            // (A histogram's max is the top of its bucket: up to 0.1% above the value.)
            assert!(
                measured >= max * 0.999,
                "{what}: window {measured} s < max latency {max} s"
            );
            assert!(
                measured < wall,
                "{what}: window {measured} s > process {wall} s"
            );
            if clients == "1" {
                // One connection sends one request at a time: the window holds them all.
                assert!(
                    measured >= requests as f64 * min,
                    "{what}: window {measured} s < {requests} x min latency {min} s"
                );
            }
            let printed = quiet_rate(&stdout);
            assert!(
                (printed / rate - 1.0).abs() < 0.01,
                "{what}: -q says {printed}/s, the JSON {rate}/s"
            );
        }
    }
}
