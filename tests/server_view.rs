//! The server's own view of each test: its command counts, CPU and execution-time
//! histogram read before and after the test (`INFO commandstats`, `INFO cpu`, `LATENCY
//! HISTOGRAM`), set beside tailrate's numbers, and the check of its count against
//! tailrate's.

use std::thread;
use std::time::Duration;

use serde_json::Value;

use super::harness::{RedisServer, check, run_tailrate, run_tailrate_json, send_command};

fn server_command<'a>(test: &'a Value, command: &str) -> &'a Value {
    test["server"]["commands"]
        .as_array()
        .unwrap_or_else(|| panic!("no server view: {test}"))
        .iter()
        .find(|c| c["command"].as_str().unwrap().eq_ignore_ascii_case(command))
        .unwrap_or_else(|| panic!("no {command} in {}", test["server"]))
}

#[test]
fn the_server_counts_exactly_what_a_closed_loop_sent_and_its_cpu_and_histogram_are_reported() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let (_, report) = run_tailrate_json(&["-p", &port, "-t", "set,get", "-n", "3000", "-q"]);
    for test in report["tests"].as_array().unwrap() {
        let name = test["name"].as_str().unwrap();
        let c = server_command(test, name);
        assert_eq!(
            (c["calls"].as_u64(), c["sent_by_tailrate"].as_u64()),
            (Some(3000), Some(3000)),
            "{c}"
        );
        let p = &c["exec_usec_at_most"];
        assert!(
            p["p50"].as_u64().unwrap() <= p["p99_9"].as_u64().unwrap(),
            "{c}"
        );
        assert!(c["mean_exec_usec"].as_f64().unwrap() > 0.0, "{c}");
        assert!(
            test["server"]["cpu_secs"].as_f64().unwrap() > 0.0,
            "{}",
            test["server"]
        );
        assert_eq!(check(test, "server_count")["verdict"], "pass");
    }
}

/// A mix whose entries share a verb (`GET a`, `GET b`) is one command to the server: its
/// count is checked against what every entry sent, not the first entry's share.
#[test]
fn a_mix_whose_commands_share_a_verb_is_counted_as_the_server_counts_it() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let (_, report) = run_tailrate_json(&[
        "-p",
        &port,
        "-n",
        "2000",
        "-q",
        "--command",
        "GET a",
        "--command",
        "GET b",
    ]);
    let test = &report["tests"][0];
    let get = server_command(test, "get");
    assert_eq!(
        (get["calls"].as_u64(), get["sent_by_tailrate"].as_u64()),
        (Some(2000), Some(2000)),
        "{get}"
    );
    assert_eq!(
        check(test, "server_count")["verdict"],
        "pass",
        "{}",
        test["checks"]
    );
}

#[test]
fn an_open_loops_warm_up_is_in_the_servers_count_and_another_client_fails_the_check() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let args = [
        "-p",
        &port,
        "--rate",
        "2000",
        "--duration",
        "1s",
        "--warmup",
        "300ms",
        "-t",
        "incr",
        "-q",
    ];
    let (_, report) = run_tailrate_json(&args);
    let test = &report["tests"][0];
    let c = server_command(test, "incr");
    let sent = test["counts"]["sent"].as_u64().unwrap();
    // The warm-up's ~600 requests were written and executed, though not measured.
    assert!(
        c["sent_by_tailrate"].as_u64().unwrap() >= sent + 500,
        "{c} vs {sent} measured"
    );
    assert_eq!(c["calls"], c["sent_by_tailrate"], "{c}");
    assert_eq!(check(test, "server_count")["verdict"], "pass");

    // Another client sending the same command meanwhile: the server's figures are not
    // this run's, and the check says so.
    let addr = server.addr();
    let other = thread::spawn(move || {
        for _ in 0..200 {
            send_command(&addr, &["INCR", "other"]).unwrap();
            thread::sleep(Duration::from_millis(2));
        }
    });
    let (_, report) = run_tailrate_json(&args);
    other.join().unwrap();
    let test = &report["tests"][0];
    let count = check(test, "server_count");
    assert_eq!(count["verdict"], "fail", "{count}");
    assert!(
        count["meaning"]
            .as_str()
            .unwrap()
            .contains("another client"),
        "{count}"
    );
    assert_eq!(test["valid"], false);
}

#[test]
fn a_server_sleeping_1ms_per_command_shows_it_in_its_execution_time() {
    let server = RedisServer::builder()
        .arg("--enable-debug-command", "yes")
        .start();
    let port = server.port().to_string();
    // Each attempt must count every call and never show an execution shorter than the
    // sleep (usleep never returns early) or longer than tailrate's service time, which
    // holds it. That the sleep is most of what the client waits (within 20% of the
    // service time, which adds a round trip of ~0.1 ms) and that Redis files it in the
    // 1 ms buckets are the machine's to keep: a loaded host stretches the round trip
    // (and usleep's oversleep) past that, so one attempt in three must show them.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let (_, report) = run_tailrate_json(&[
            "-p", &port, "-c", "1", "-n", "200", "-q", "DEBUG", "SLEEP", "0.001",
        ]);
        let test = &report["tests"][0];
        let c = server_command(test, "debug");
        assert_eq!(c["calls"], 200);
        let mean = c["mean_exec_usec"].as_f64().unwrap();
        let service = test["latency"]["response"]["mean_ns"].as_f64().unwrap() / 1e3;
        assert!(
            mean >= 1000.0 && mean <= service,
            "mean execution {mean:.1} µs for a 1 ms sleep, mean service time {service:.1} µs"
        );
        let p50 = c["exec_usec_at_most"]["p50"].as_u64().unwrap();
        // Redis's buckets double from 1 µs, rounded (..., 528, 1056, 2113): 1 ms lies in
        // the 1056 or the 2113 bucket.
        if mean >= 0.8 * service && [1056, 2113].contains(&p50) {
            return;
        }
        seen.push(format!(
            "mean execution {mean:.1} µs, mean service {service:.1} µs, p50 bucket {p50} µs"
        ));
    }
    panic!(
        "in no attempt was a 1 ms sleep most of the service time in the 1 ms buckets: {}",
        seen.join("; ")
    );
}

#[test]
fn a_user_who_may_not_run_info_or_latency_still_runs_and_is_told_what_is_missing() {
    let server = RedisServer::start();
    assert_eq!(
        server.cmd(&[
            "ACL", "SETUSER", "bench", "on", ">pw", "~*", "+@all", "-info", "-latency"
        ]),
        "OK"
    );
    let port = server.port().to_string();
    let out = run_tailrate(&[
        "-p", &port, "--user", "bench", "-a", "pw", "-t", "get", "-n", "1000",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1000 requests completed"), "{stdout}");
    for fact in ["INFO commandstats", "INFO cpu", "LATENCY HISTOGRAM"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.contains("not given: ") && l.contains(fact) && l.contains("NOPERM")),
            "{fact} not named missing:\n{stdout}"
        );
    }
}

fn bottleneck(test: &Value) -> (String, String) {
    let b = &test["bottleneck"];
    (
        b["verdict"]
            .as_str()
            .unwrap_or_else(|| panic!("no bottleneck: {test}"))
            .to_string(),
        b["because"].as_str().unwrap().to_string(),
    )
}

/// The bottleneck verdicts, each from a run made to have that bottleneck. They run alone
/// (see .config/nextest.toml): a starved generator is a verdict too, and parallel tests
/// would starve it.
mod timing {
    use super::*;

    #[test]
    fn a_server_driven_past_one_over_its_service_time_is_the_bottleneck() {
        let server = RedisServer::builder()
            .arg("--enable-debug-command", "yes")
            .start();
        let port = server.port().to_string();
        // 1 ms per command: at most 1000/s, and 1500/s are offered.
        let (_, report) = run_tailrate_json(&[
            "-p",
            &port,
            "--rate",
            "1500",
            "--duration",
            "1s",
            "-c",
            "4",
            "-q",
            "DEBUG",
            "SLEEP",
            "0.001",
        ]);
        let test = &report["tests"][0];
        let (verdict, because) = bottleneck(test);
        assert_eq!(verdict, "server", "{because}");
        assert!(because.contains("executing its commands"), "{because}");
        let c = server_command(test, "debug");
        assert_eq!(c["calls"], c["sent_by_tailrate"], "{c}");
    }

    #[test]
    fn one_connection_with_one_request_in_flight_below_the_rate_is_the_client_queue() {
        let server = RedisServer::start();
        let port = server.port().to_string();
        // One round trip on loopback is ~30-100 µs: one connection carries at most ~30k/s.
        let (_, report) = run_tailrate_json(&[
            "-p",
            &port,
            "--rate",
            "60k",
            "--duration",
            "1s",
            "-c",
            "1",
            "--max-inflight",
            "1",
            "-t",
            "get",
            "-q",
        ]);
        let (verdict, because) = bottleneck(&report["tests"][0]);
        assert_eq!(verdict, "client-queue", "{because}");
        assert!(because.contains("--max-inflight"), "{because}");
    }

    #[test]
    fn a_generator_sharing_its_core_with_a_busy_process_is_the_bottleneck() {
        let Some(taskset) = super::super::harness::find_in_path("taskset") else {
            super::super::harness::skip(
                &super::super::harness::this_test(),
                "taskset (util-linux) is not installed",
            );
            return;
        };
        let server = RedisServer::start();
        let port = server.port().to_string();
        // A busy loop pinned to the core the generator is pinned to: the generator gets
        // about half of it, in slices of milliseconds, and is late by that much.
        let mut busy = std::process::Command::new(&taskset)
            .args(["-c", "1", "sh", "-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let out = std::process::Command::new(&taskset)
            .args(["-c", "1"])
            .arg(super::super::harness::tailrate_bin())
            .args([
                "-p",
                &port,
                "--rate",
                "20k",
                "--duration",
                "1s",
                "--pacing",
                "spin",
                "-t",
                "get",
                "-q",
                "--json",
                json.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        busy.kill().unwrap();
        busy.wait().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let (verdict, because) = bottleneck(&report["tests"][0]);
        // The generator's lateness carries the tail; where its threads' waits for the CPU
        // the busy loop held cover it, the host's part is named.
        assert!(
            verdict == "generator" || (verdict == "host" && because.contains("threads waited")),
            "{verdict}: {because}"
        );
        let cpu = super::super::harness::check(&report["tests"][0], "generator_cpu");
        assert_eq!(cpu["verdict"], "fail", "{cpu}");
    }
}

#[test]
fn no_server_stats_sends_the_server_nothing_but_the_workload() {
    let server = RedisServer::start();
    server.reset_stats();
    let port = server.port().to_string();
    let (_, report) = run_tailrate_json(&[
        "-p",
        &port,
        "-t",
        "get",
        "-n",
        "500",
        "-q",
        "--no-server-stats",
    ]);
    let test = &report["tests"][0];
    assert!(test.get("server").is_none(), "{}", test["server"]);
    let stats = server.commandstats();
    for asked in ["latency|histogram", "client|setname"] {
        assert!(!stats.contains_key(asked), "{asked} sent: {stats:?}");
    }
    assert_eq!(stats.get("get"), Some(&500));
}
