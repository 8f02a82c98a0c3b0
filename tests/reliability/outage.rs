//! A server that goes away and comes back, or cannot keep up: the report names the
//! outage (when, how long, why), counts the reconnects, says what the percentiles leave
//! out, and the self-checks that fail because of it say so instead of blaming the
//! generator.

use super::*;

/// The report's outages, as (start, length, at least, cause, until end).
fn outages(test: &Value) -> Vec<(f64, f64, f64, String, bool)> {
    test["outages"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|o| {
                    (
                        o["start_secs"].as_f64().unwrap(),
                        o["length_secs"].as_f64().unwrap(),
                        o["at_least_secs"].as_f64().unwrap(),
                        o["cause"].as_str().unwrap().to_string(),
                        o["until_end"].as_bool().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The failed checks as (name, meaning).
fn failed_checks(test: &Value) -> Vec<(String, String)> {
    test["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "fail")
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["meaning"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_server_restart_mid_run_is_reported_as_an_outage_with_its_reconnects() {
    let mut server = RedisServer::builder().arg("--hz", "100").start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let watched = Watched::spawn(&[
        "-p",
        &port,
        "--rate",
        "2000",
        "--duration",
        "4s",
        "-c",
        "4",
        "-t",
        "set",
        "--no-progress",
        "--json",
        json.to_str().unwrap(),
    ]);
    thread::sleep(Duration::from_millis(1200));
    server.kill();
    thread::sleep(Duration::from_millis(1000));
    server.restart_same_port();
    let run = watched.wait(RUN_LIMIT);
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    eprintln!("restart: {} {}", test["outages"], test["reconnects"]);

    let found = outages(test);
    assert_eq!(found.len(), 1, "one outage: {}", test["outages"]);
    let (start, length, at_least, cause, until_end) = &found[0];
    // Killed 1.2 s after tailrate started (its start comes a little later), down for 1 s
    // and the restart; reconnects back off up to 1 s, so the end may come that much late.
    assert!((0.6..1.4).contains(start), "start {start}");
    assert!(
        *at_least >= 0.5 && at_least <= length,
        "{at_least} of {length}"
    );
    assert!((0.9..2.6).contains(length), "length {length}");
    // A connect while the server is gone is refused; one that lands as the server is
    // killed is reset.
    assert!(
        cause.contains("Connection refused") || cause.contains("Connection reset"),
        "{cause}"
    );
    assert!(!until_end);
    // The outage is what held the test back, not the client's queue behind it.
    let bottleneck = &test["bottleneck"];
    assert_eq!(bottleneck["verdict"], "outage", "{bottleneck}");
    assert!(
        bottleneck["because"]
            .as_str()
            .unwrap()
            .contains("could not be reached"),
        "{bottleneck}"
    );
    assert!(
        test["reconnects"].as_u64().unwrap() >= 4,
        "every connection reconnected: {}",
        test["reconnects"]
    );

    assert!(
        run.stdout.contains("server unreachable: "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("reconnects: "), "{}", run.stdout);
    // A check the outage fails names the outage, not the generator alone.
    for (name, meaning) in failed_checks(test) {
        if name == "schedule_lag" || name == "poisson_fit" || name == "achieved_rate" {
            assert!(
                meaning.contains("the server was unreachable for"),
                "{name}: {meaning}"
            );
        }
    }
}

#[test]
fn a_server_lost_for_good_in_a_closed_loop_is_an_outage_to_the_end() {
    let mut server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let watched = Watched::spawn(&[
        "-p",
        &port,
        "-n",
        "100000000",
        "-c",
        "2",
        "-t",
        "set",
        "--connect-timeout",
        "1s",
        "--no-progress",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    thread::sleep(Duration::from_millis(500));
    server.kill();
    let run = watched.wait(RUN_LIMIT);
    run.assert_no_panic();
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        error_line(&run).contains("lost the server"),
        "{}",
        run.stderr
    );
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    let found = outages(test);
    assert_eq!(found.len(), 1, "{}", test["outages"]);
    let (_, length, _, cause, until_end) = &found[0];
    assert!(*until_end && *length >= 1.0, "{found:?}");
    assert!(cause.contains("Connection refused"), "{cause}");
    // (A reconnect may have happened: while a killed server's process exits, its
    // listening socket can still take a connection that is then reset.)
}

#[test]
fn an_overload_names_the_requests_never_sent_and_what_the_percentiles_exclude() {
    // A 700 ms pause with 2 connections x 2 in flight and a backlog of 10: nearly every
    // request due in the pause is never sent.
    let server = RedisServer::builder().arg("--hz", "100").start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let watched = Watched::spawn(&[
        "-p",
        &port,
        "--rate",
        "2000",
        "--duration",
        "2s",
        "-c",
        "2",
        "--max-inflight",
        "2",
        "--max-backlog",
        "10",
        "-t",
        "set",
        "--no-progress",
        "--json",
        json.to_str().unwrap(),
    ]);
    thread::sleep(Duration::from_millis(900));
    assert_eq!(server.cmd(&["CLIENT", "PAUSE", "700", "WRITE"]), "OK");
    let run = watched.wait(RUN_LIMIT);
    run.assert_no_panic();
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    let (intended, completed, not_sent) = (
        count(test, "intended"),
        count(test, "completed"),
        count(test, "not_sent"),
    );
    eprintln!("overload: {}", test["counts"]);
    assert!(not_sent > 500, "{}", test["counts"]);
    // Requests never sent are in the percentiles at their age when the run ended.
    assert_eq!(
        count(test, "unanswered_counted"),
        not_sent,
        "{}",
        test["counts"]
    );
    assert_eq!(
        test["excluded_from_latency"].as_u64(),
        Some(intended - completed - not_sent),
        "{}",
        test["counts"]
    );
    let achieved = failed_checks(test)
        .into_iter()
        .find(|(name, _)| name == "achieved_rate")
        .expect("achieved_rate fails");
    assert!(
        achieved
            .1
            .contains(&format!("{not_sent} of {intended} requests"))
            && achieved.1.contains("never sent")
            && achieved.1.contains("percentiles count them at their age"),
        "{}",
        achieved.1
    );
    assert!(
        run.stdout.contains(&format!(
            "the percentiles count {not_sent} of {intended} intended requests that got no reply"
        )) && run.stdout.contains(&format!("{not_sent} never sent")),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("server unreachable"),
        "a pause is no outage"
    );
}
