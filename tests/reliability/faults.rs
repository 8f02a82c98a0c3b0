//! Faults from a real server (errors, closed and killed connections, maxmemory, a
//! batch cut short): every request still ends in exactly one count.

use super::*;

#[test]
fn every_request_ends_in_exactly_one_count_when_all_five_outcomes_happen_in_one_run() {
    let fake = FakeServer::start(Behaviour::Mixed);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    // 2 connections x 2 in flight, a backlog of 5: the 300 ms silence overflows it (not
    // sent) and outlasts --timeout (timeouts); the final silence leaves requests in flight.
    let run = run(&[
        "-p",
        &fake.port(),
        "--rate",
        "400",
        "--duration",
        "1800ms",
        "-c",
        "2",
        "--max-inflight",
        "2",
        "--max-backlog",
        "5",
        "--timeout",
        "250ms",
        "-t",
        "set,get",
        "--no-progress",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    run.assert_no_panic();
    let report = read_json(&json);
    for test in report["tests"].as_array().unwrap() {
        assert_balanced(test);
    }
    let first = &report["tests"][0];
    let c = |k: &str| count(first, k);
    eprintln!("mixed outcomes: {}", first["counts"]);
    assert!(
        c("completed") > 100 && c("errors") > 10 && c("timeouts") > 0 && c("not_sent") > 0,
        "{}",
        first["counts"]
    );
    assert_eq!(
        error_kind(first, "ERR"),
        c("errors"),
        "only the server's error replies are errors here"
    );
    assert_eq!(
        first["valid"], false,
        "requests were never sent: the run is marked invalid"
    );
}

#[test]
fn a_batch_cut_short_by_a_closed_connection_still_counts_the_replies_it_got() {
    // -P 4 --batch-latency holds each reply until the batch's last: here the batch never
    // completes (2 replies, then the server closes), and the run ends right after.
    let fake = FakeServer::start(Behaviour::TwoThenClose);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let run = run(&[
        "-p",
        &fake.port(),
        "-c",
        "1",
        "-P",
        "4",
        "--batch-latency",
        "-n",
        "4",
        "-t",
        "get",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    assert_eq!(
        (count(test, "completed"), count(test, "errors")),
        (2, 2),
        "{}",
        test["counts"]
    );
    assert_eq!(
        test["latency"]["response"]["count"], 2,
        "both replies have a latency"
    );
}

#[test]
fn maxmemory_oom_errors_are_counted_by_kind_and_the_run_goes_on_unless_told_to_stop() {
    let server = RedisServer::builder()
        .arg("--maxmemory", "2mb")
        .arg("--maxmemory-policy", "noeviction")
        .start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    // 1000-byte values on random keys: the first ~1000 fit, the rest are refused.
    let base = [
        "-p",
        &port,
        "-d",
        "1000",
        "-r",
        "1000000",
        "-c",
        "4",
        "-t",
        "set",
        "--no-progress",
    ];
    let mut args = base.to_vec();
    args.extend([
        "--rate",
        "4000",
        "--duration",
        "1s",
        "--json",
        json.to_str().unwrap(),
    ]);
    let goes_on = run(&args);
    goes_on.assert_no_panic();
    assert_eq!(goes_on.code, Some(0), "{}", goes_on.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    let oom = error_kind(test, "OOM");
    eprintln!("maxmemory: {}", test["counts"]);
    assert!(
        oom > 1000 && count(test, "completed") > 100,
        "{}",
        test["counts"]
    );
    assert_eq!(oom, count(test, "errors"), "every error is an OOM");
    assert!(
        goes_on.stdout.contains("OOM: "),
        "the text report names the kind: {}",
        goes_on.stdout
    );

    let mut args = base.to_vec();
    args.extend(["-n", "100000", "--exit-on-error"]);
    let stopped = run(&args);
    stopped.assert_no_panic();
    assert_eq!(stopped.code, Some(1), "{}", stopped.stderr);
    assert!(
        error_line(&stopped).contains("OOM command not allowed when used memory > 'maxmemory'"),
        "{}",
        stopped.stderr
    );
    assert!(
        stopped.elapsed < Duration::from_secs(15),
        "stopped at the first error, not after 100000 requests"
    );
}

#[test]
fn killed_connections_are_reconnected_and_their_requests_counted_as_closed() {
    let server = RedisServer::builder().arg("--hz", "100").start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let connections_before = total_connections(&server);
    let watched = Watched::spawn(&[
        "-p",
        &port,
        "--rate",
        "2000",
        "--duration",
        "3s",
        "-c",
        "4",
        "-t",
        "set",
        "--no-progress",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    thread::sleep(Duration::from_millis(1200));
    // Hold the SETs (CLIENT LIST and KILL still run) so requests are in flight when the
    // connections die, then kill every connection but this test's own and tailrate's
    // readings of the server's counters.
    assert_eq!(server.cmd(&["CLIENT", "PAUSE", "300", "WRITE"]), "OK");
    thread::sleep(Duration::from_millis(100));
    let list = server.cmd(&["CLIENT", "LIST"]);
    let victims: Vec<&str> = list
        .lines()
        .filter(|l| !l.contains("cmd=client|list") && !l.contains("name=tailrate-readings"))
        .filter_map(|l| l.split(' ').find_map(|f| f.strip_prefix("addr=")))
        .collect();
    assert_eq!(victims.len(), 4, "tailrate's 4 connections:\n{list}");
    for addr in &victims {
        assert_eq!(
            server.cmd(&["CLIENT", "KILL", "ADDR", addr]),
            "1",
            "one connection killed"
        );
    }
    let run = watched.wait(RUN_LIMIT);
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    let closed = error_kind(test, "connection_closed") + error_kind(test, "connection_reset");
    eprintln!(
        "client kill: {} ({} connections reopened)",
        test["counts"],
        total_connections(&server) - connections_before - 5
    );
    assert!(
        closed > 0 && closed == count(test, "errors"),
        "the killed requests, and only they, are errors: {}",
        test["counts"]
    );
    // The open loop went on: the last second (after the kill and the pause) completed requests.
    let late: u64 = test["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["start_secs"].as_f64().unwrap() >= 2.0)
        .map(|i| i["completed"].as_u64().unwrap())
        .sum();
    assert!(late > 1000, "{late} completed after the kill");
    // 1 startup connection + 4, then at least 4 reconnections.
    assert!(
        total_connections(&server) - connections_before >= 9,
        "reconnected"
    );
}

fn total_connections(server: &RedisServer) -> u64 {
    server
        .info_field("stats", "total_connections_received")
        .unwrap()
        .parse()
        .unwrap()
}
