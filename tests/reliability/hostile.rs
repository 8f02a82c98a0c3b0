//! Hostile servers (fakes that send what no Redis sends): each is a protocol error
//! naming the fault, with no panic and bounded memory; RESP3 pushes are skipped cleanly.

use super::*;

/// Runs open loop against a hostile fake and checks the common promises: a one-line
/// protocol error naming the fault, exit 1, no panic, bounded memory, the books balanced.
fn assert_hostile_server_fails_cleanly(behaviour: Behaviour, extra: &[&str], needle: &str) -> Run {
    let fake = FakeServer::start(behaviour);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let port = fake.port();
    let mut argv = vec![
        "-p",
        &port,
        "--rate",
        "50",
        "--duration",
        "3s",
        "-c",
        "2",
        "-t",
        "get",
        "--no-progress",
        "-q",
    ];
    argv.extend(extra);
    argv.extend(["--json", json.to_str().unwrap()]);
    let run = run(&argv);
    run.assert_no_panic();
    assert_eq!(
        run.code,
        Some(1),
        "{behaviour:?}: a protocol error fails the run\n{}",
        run.stderr
    );
    let line = error_line(&run);
    assert!(
        line.contains("protocol error from 127.0.0.1:") && line.contains(needle),
        "{behaviour:?}: {line}"
    );
    assert!(
        run.peak_rss_kb < HOSTILE_RSS_LIMIT_KB,
        "{behaviour:?}: peak RSS {} KiB",
        run.peak_rss_kb
    );
    assert!(
        run.elapsed < Duration::from_secs(10),
        "{behaviour:?}: the first protocol error ends the 3 s run early ({:?})",
        run.elapsed
    );
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    assert!(
        test["stopped_early"].as_str().unwrap().contains(needle),
        "{behaviour:?}: {}",
        test["stopped_early"]
    );
    assert!(
        fake.connections() <= 4,
        "{behaviour:?}: no reconnect storm ({} connections)",
        fake.connections()
    );
    eprintln!(
        "{behaviour:?}: exit {:?} in {:.2?}, peak RSS {} KiB, {}; {line}",
        run.code, run.elapsed, run.peak_rss_kb, test["counts"]
    );
    run
}

#[test]
fn a_bulk_length_of_ten_to_the_twelfth_is_a_protocol_error_not_an_allocation() {
    assert_hostile_server_fails_cleanly(Behaviour::HugeBulk, &[], "bulk length 1000000000000");
}

#[test]
fn an_aggregate_nested_a_million_deep_is_a_protocol_error() {
    assert_hostile_server_fails_cleanly(Behaviour::DeepNesting, &[], "nests 513 deep");
}

#[test]
fn a_line_that_never_ends_is_a_protocol_error_after_64_kib() {
    assert_hostile_server_fails_cleanly(
        Behaviour::EndlessLine,
        &[],
        "longer than the limit of 65536 bytes",
    );
}

#[test]
fn a_reply_nobody_asked_for_is_a_protocol_error_even_on_an_idle_connection() {
    assert_hostile_server_fails_cleanly(Behaviour::Unsolicited, &[], "no request was waiting for");
}

#[test]
fn a_resp3_push_on_a_resp2_connection_is_a_protocol_error() {
    assert_hostile_server_fails_cleanly(
        Behaviour::PushInResp2,
        &[],
        "RESP3 push on a RESP2 connection",
    );
}

#[test]
fn invalidation_pushes_on_a_resp3_connection_are_skipped_and_every_request_is_answered() {
    // The contrast to the RESP2 case: with HELLO 3 and CLIENT TRACKING, Redis pushes an
    // invalidation to tailrate's connection whenever this test rewrites a key it read.
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let port = server.port().to_string();
    let watched = Watched::spawn(&[
        "-p",
        &port,
        "-3",
        "--enable-tracking",
        "--rate",
        "2000",
        "--duration",
        "1500ms",
        "-c",
        "2",
        "-r",
        "10",
        "--no-progress",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "GET",
        "key:__rand_int__",
    ]);
    let (mut rewrites, mut tracking_clients) = (0, 0);
    while rewrites < 200 {
        thread::sleep(Duration::from_millis(10));
        let key = format!("key:{:012}", rewrites % 10);
        assert_eq!(server.cmd(&["SET", &key, "v"]), "OK");
        rewrites += 1;
        if rewrites == 100 {
            tracking_clients = server
                .info_field("clients", "tracking_clients")
                .unwrap()
                .parse()
                .unwrap();
        }
    }
    let run = watched.wait(RUN_LIMIT);
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    assert_eq!(count(test, "errors"), 0, "{}", test["counts"]);
    assert!(count(test, "completed") > 2000, "{}", test["counts"]);
    assert_eq!(
        tracking_clients, 2,
        "both connections had tracking on while keys they read were rewritten"
    );
}

#[test]
fn bytes_that_are_not_resp_are_a_protocol_error() {
    assert_hostile_server_fails_cleanly(Behaviour::NotResp, &[], "not a RESP type byte");
}

#[test]
fn an_endless_aggregate_of_small_values_stops_at_the_reply_size_limit() {
    assert_hostile_server_fails_cleanly(
        Behaviour::EndlessAggregate,
        &["--max-reply-bytes", "1m"],
        "over the limit of 1065536 bytes",
    );
}
