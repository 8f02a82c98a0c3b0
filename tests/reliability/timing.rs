//! Tests that measure time or load the CPU: nextest runs them alone.

use super::*;

/// A server paused for 3 s at 50k req/s: 50 connections x 64 in flight fill up at
/// once, the 20000-request backlog within 0.4 s, and the rest of the pause is counted
/// as not sent. Memory: a waiting request is an `Arrival` of 56 bytes (a unit test in
/// drive/dispatch.rs holds it there), so the backlog may add at most 20000 x 56 B,
/// doubled for the VecDeque's growth (2.2 MB), to what
/// the same run takes unpaused; 1.5 MiB more covers the spread of peak RSS measured
/// across runs (+-0.6 MiB). Measured: unpaused 15.0-15.6 MiB, paused 14.9-15.0 MiB, and
/// paused with an unbounded backlog 19.1-19.9 MiB (150k waiting requests), which
/// this bound rejects.
#[test]
fn a_paused_server_fills_a_bounded_backlog_counts_the_overflow_and_ends_on_time() {
    let server = RedisServer::builder().arg("--hz", "100").start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let args = |duration: &'static str| {
        let mut a = vec![
            "-p",
            &port,
            "--rate",
            "50k",
            "--duration",
            duration,
            "-c",
            "50",
            "--max-backlog",
            "20000",
            "-t",
            "set",
        ];
        a.extend(["--no-progress", "-q", "--json", json.to_str().unwrap()]);
        a
    };
    let reference = run(&args("4s"));
    assert_eq!(reference.code, Some(0), "{}", reference.stderr);

    let (duration, grace) = (Duration::from_secs(4), Duration::from_secs(2));
    let watched = Watched::spawn(&args("4s"));
    thread::sleep(Duration::from_millis(1000));
    // CLIENT PAUSE ALL also holds CLIENT UNPAUSE, so the pause is given its length.
    assert_eq!(
        send_command(&server.addr(), &["CLIENT", "PAUSE", "3000", "ALL"])
            .unwrap()
            .to_string(),
        "OK"
    );
    let run = watched.wait(RUN_LIMIT);
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let bound_kb = reference.peak_rss_kb + 20_000 * 56 * 2 / 1024 + 1536;
    let test = &read_json(&json)["tests"][0];
    eprintln!(
        "pause: peak RSS {} KiB (unpaused {} KiB, bound {bound_kb} KiB), {:.2?}, {}",
        run.peak_rss_kb, reference.peak_rss_kb, run.elapsed, test["counts"]
    );
    assert!(
        run.peak_rss_kb <= bound_kb,
        "peak RSS {} KiB, over {bound_kb} KiB",
        run.peak_rss_kb
    );
    assert_balanced(test);
    // At least 2 s of the 3 s pause overflowed: 100k requests at 50k/s (runs count ~125k).
    assert!(count(test, "not_sent") > 80_000, "{}", test["counts"]);
    assert_eq!(test["valid"], false);
    let rate_check = test["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "achieved_rate")
        .unwrap();
    assert_eq!(rate_check["verdict"], "fail");
    assert!(
        rate_check["detail"].as_str().unwrap().contains("not sent"),
        "{rate_check}"
    );
    // After the pause the backlog drains: the last second completes requests.
    let last = test["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["start_secs"].as_f64().unwrap() >= 3.0);
    assert!(
        last.map(|i| i["completed"].as_u64().unwrap()).sum::<u64>() > 10_000,
        "the backlog drained after the pause"
    );
    // Startup (~0.2 s) + 4 s + the drain grace, with 3 s of slack for a loaded machine.
    assert!(
        run.elapsed < duration + grace + Duration::from_secs(3),
        "took {:?}",
        run.elapsed
    );
}

/// A server that never answers: every request times out after --timeout (its
/// connection is reset and reopened), and the run ends at its duration plus at most
/// one timeout, not later.
#[test]
fn requests_to_a_server_that_never_answers_time_out_and_the_run_ends_on_time() {
    let fake = FakeServer::start(Behaviour::Silent);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let run = run(&[
        "-p",
        &fake.port(),
        "--rate",
        "200",
        "--duration",
        "1500ms",
        "-c",
        "2",
        "--timeout",
        "200ms",
        "-t",
        "get",
        "--no-progress",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    run.assert_no_panic();
    // Nothing was answered: the run fails (exit 1), and says how its requests ended.
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("timed out"), "{}", run.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    eprintln!(
        "silent server: {:.2?}, {} connections, {}",
        run.elapsed,
        fake.connections(),
        test["counts"]
    );
    assert_eq!(count(test, "completed"), 0);
    // Only those sent in the last 200 ms may still be in flight; the rest timed out.
    assert!(
        count(test, "timeouts") > count(test, "intended") / 2,
        "{}",
        test["counts"]
    );
    assert!(
        fake.connections() > 4,
        "timed-out connections were reopened"
    );
    // Startup (< 0.5 s) + 1.5 s + one 200 ms timeout, with 1.5 s of slack.
    assert!(
        run.elapsed < Duration::from_millis(1500 + 200 + 2000),
        "took {:?}",
        run.elapsed
    );
}
