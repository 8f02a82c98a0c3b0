//! A server that stops answering (SIGSTOP) part way through a run: its unanswered
//! requests count in the response tail at their age when given up, the run fails the
//! `unanswered` check in both loops, a timed closed loop's rates are over its whole
//! duration, and `compare` calls the frozen side slower, never faster.

use std::path::Path;
use std::process::Command;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use super::harness::{RedisServer, assert_success, read_json, run_tailrate};

/// Stops the process `pid` after `delay` (from a thread) and resumes it when dropped,
/// so a failing test still leaves a server the harness can stop.
struct Freeze {
    pid: String,
    stopper: Option<JoinHandle<()>>,
}

impl Freeze {
    fn after(pid: u32, delay: Duration) -> Self {
        let pid = pid.to_string();
        let target = pid.clone();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(delay);
            signal("-STOP", &target);
        });
        Freeze {
            pid,
            stopper: Some(stopper),
        }
    }
}

impl Drop for Freeze {
    fn drop(&mut self) {
        if let Some(stopper) = self.stopper.take() {
            let _ = stopper.join();
        }
        signal("-CONT", &self.pid);
    }
}

fn signal(sig: &str, pid: &str) {
    let status = Command::new("kill").args([sig, pid]).status().unwrap();
    assert!(status.success(), "kill {sig} {pid}");
}

/// The report's only test.
fn only_test(report: &Value) -> &Value {
    &report["tests"][0]
}

/// The check called `name` in `test`, if it has one.
fn check<'a>(test: &'a Value, name: &str) -> Option<&'a Value> {
    test["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
}

/// A 3 s run against `server` (extra `args`), its JSON in `json`, with the server stopped
/// after `freeze` when given.
fn run(server: &RedisServer, json: &Path, args: &[&str], freeze: Option<Duration>) -> String {
    let port = server.port().to_string();
    let json_arg = json.to_str().unwrap();
    let mut all = vec![
        "-p",
        &port,
        "-t",
        "get",
        "--duration",
        "3s",
        "--no-progress",
        "--json",
        json_arg,
    ];
    all.extend(args);
    let frozen = freeze.map(|delay| Freeze::after(server.pid(), delay));
    let out = run_tailrate(&all);
    drop(frozen);
    assert_success(&out)
}

#[test]
fn a_closed_loop_whose_server_froze_fails_a_check_and_counts_the_freeze_in_its_tail() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("frozen.json");
    let stdout = run(&server, &json, &["-c", "8"], Some(Duration::from_secs(1)));
    let report = read_json(&json);
    let test = only_test(&report);
    let counts = &test["counts"];
    let in_flight = counts["in_flight_at_end"].as_u64().unwrap();
    assert!(in_flight > 0, "nothing in flight at the end: {counts}");
    assert_eq!(
        counts["unanswered_counted"].as_u64(),
        Some(in_flight),
        "{counts}"
    );
    let unanswered = check(test, "unanswered").unwrap_or_else(|| panic!("no check: {stdout}"));
    assert_eq!(unanswered["verdict"], "fail", "{unanswered}");
    assert_eq!(test["valid"], false);
    // Replies stopped at about 1 s; the run lasted 3 s and its rates are over all of it.
    let measured = test["measured_secs"].as_f64().unwrap();
    assert!(measured >= 2.9, "measured over {measured} s of a 3 s run");
    // The requests in flight waited from about 1 s to past the end and its 2 s wait.
    let max_ns = test["latency"]["response"]["max_ns"].as_u64().unwrap();
    assert!(max_ns >= 2_000_000_000, "max {max_ns} ns: {stdout}");
    assert!(stdout.contains("got no reply"), "{stdout}");
    // The server is named: it stopped answering while it could be reached.
    let bottleneck = &test["bottleneck"];
    assert_eq!(bottleneck["verdict"], "server", "{bottleneck}");
    assert!(
        bottleneck["because"]
            .as_str()
            .unwrap()
            .contains("stopped answering"),
        "{bottleneck}"
    );
}

#[test]
fn an_open_loop_whose_server_froze_is_slower_in_compare_not_faster() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (normal, frozen) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let open = ["--rate", "1000", "-c", "2", "--seed", "5"];
    run(&server, &normal, &open, None);
    run(&server, &frozen, &open, Some(Duration::from_secs(1)));

    let b = read_json(&frozen);
    let test = only_test(&b);
    let counts = &test["counts"];
    let unanswered = counts["unanswered_counted"].as_u64().unwrap_or(0);
    let intended = counts["intended"].as_u64().unwrap();
    // Frozen for 2 of 3 s: about two thirds of the requests got no reply, and each one
    // counts in the response times.
    assert!(
        3 * unanswered >= intended,
        "{unanswered} of {intended} counted: {counts}"
    );
    assert_eq!(
        counts["completed"].as_u64().unwrap() + unanswered,
        test["latency"]["response"]["count"].as_u64().unwrap(),
        "{counts}"
    );
    assert_eq!(check(test, "unanswered").unwrap()["verdict"], "fail");
    assert_eq!(
        test["bottleneck"]["verdict"], "server",
        "{}",
        test["bottleneck"]
    );

    let out = run_tailrate(&[
        "compare",
        normal.to_str().unwrap(),
        frozen.to_str().unwrap(),
        "--fail-if-slower",
        "5%",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("faster at 0"), "{stdout}");
    assert!(!stdout.contains("B slower at 0"), "{stdout}");
}

#[test]
fn a_live_duet_whose_b_froze_calls_b_slower_and_fails_the_threshold() {
    let (a, b) = (RedisServer::start(), RedisServer::start());
    // Frozen from its second turn on: 4 or 5 of B's 6 turns get no reply.
    let frozen = Freeze::after(b.pid(), Duration::from_millis(1700));
    #[rustfmt::skip]
    let out = run_tailrate(&[
        "compare", "--live", "--a", &a.addr(), "--b", &b.addr(), "--rate", "1k",
        "--rounds", "6", "--round-duration", "500ms", "-t", "get", "-c", "2",
        "--no-progress", "--fail-if-slower", "5%",
    ]);
    drop(frozen);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("faster at 0"), "{stdout}");
    assert!(!stdout.contains("B slower at 0"), "{stdout}");
    assert!(stdout.contains("unanswered failed"), "{stdout}");
}

/// A duet whose B is gone at a turn's start ends there, exit 1 naming the round, with the
/// whole rounds before it compared and written; one whose B answers every request with
/// an error ends at its first turn, saying so (not a usage error, exit 2, as before).
#[test]
fn a_live_duet_whose_b_is_gone_keeps_the_rounds_it_measured() {
    let a = RedisServer::start();
    let mut b = RedisServer::start();
    let (a_addr, b_addr) = (a.addr(), b.addr());
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("live.json");
    let json_arg = json.to_str().unwrap().to_string();
    let duet = std::thread::spawn(move || {
        #[rustfmt::skip]
        let out = run_tailrate(&[
            "compare", "--live", "--a", &a_addr, "--b", &b_addr, "--rate", "1k",
            "--rounds", "8", "--round-duration", "500ms", "-t", "get", "-c", "2",
            "--no-progress", "--json", &json_arg,
        ]);
        out
    });
    // A round takes a second at least (two turns of 0.5 s): B goes after the first.
    std::thread::sleep(Duration::from_millis(3000));
    b.kill();
    let out = duet.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("on B") && stderr.contains("round"),
        "{stderr}"
    );
    let comparison = read_json(&json);
    let rounds = comparison["live"]["rounds"].as_u64().unwrap();
    assert!((1..8).contains(&rounds), "{rounds} rounds: {stderr}");

    // B answers every SET with an error (OOM: no memory to spare): the duet says so.
    let c = RedisServer::builder()
        .arg("--maxmemory", "1")
        .arg("--maxmemory-policy", "noeviction")
        .start();
    #[rustfmt::skip]
    let out = run_tailrate(&[
        "compare", "--live", "--a", &a.addr(), "--b", &c.addr(), "--rate", "1k",
        "--rounds", "2", "--round-duration", "200ms", "-t", "set", "--no-progress",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("round 1 on B"), "{stderr}");
}

#[test]
fn a_runs_heatmap_shows_each_pause_as_a_column_reaching_up() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let addr = format!("127.0.0.1:{}", server.port());
    // Two pauses of 300 ms, 2 s apart, inside an 8 s open loop (1 s of warm-up first).
    let pauser = std::thread::spawn(move || {
        for at in [3.0, 5.5] {
            std::thread::sleep(Duration::from_secs_f64(if at == 3.0 { at } else { 2.5 }));
            let reply =
                super::harness::send_command(&addr, &["CLIENT", "PAUSE", "300", "ALL"]).unwrap();
            assert_eq!(reply.to_string(), "OK");
        }
    });
    let port = server.port().to_string();
    assert_success(&run_tailrate(&[
        "-p",
        &port,
        "-t",
        "get",
        "--rate",
        "2000",
        "--duration",
        "8s",
        "--warmup",
        "1s",
        "--no-progress",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]));
    pauser.join().unwrap();
    // The windows the heatmap draws: the pauses' replies over 100 ms sit in two or
    // three of them (a pause may straddle two), and no other window has any.
    let report = read_json(&json);
    let windows = only_test(&report)["response_windows"]["windows"]
        .as_array()
        .unwrap();
    let slow: Vec<usize> = windows
        .iter()
        .enumerate()
        .filter(|(_, w)| {
            let cumulative = w.as_array().unwrap();
            let total = cumulative.last().unwrap()[1].as_u64().unwrap();
            // Buckets are 64 an octave: 100 ms is in octave 26 (2^26 ns = 67 ms).
            let under = cumulative
                .iter()
                .filter(|b| b[0].as_u64().unwrap() < 26 * 64 + 32)
                .map(|b| b[1].as_u64().unwrap())
                .max()
                .unwrap_or(0);
            total > under
        })
        .map(|(i, _)| i)
        .collect();
    assert!(
        (2..=4).contains(&slow.len()) && slow.windows(2).any(|p| p[1] - p[0] >= 3),
        "windows with replies over 100 ms: {slow:?} of {}",
        windows.len()
    );
    let out = dir.path().join("plots");
    let plotted = assert_success(&run_tailrate(&[
        "plot",
        json.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    let svg = std::fs::read_to_string(out.join("latency-heatmap.svg")).unwrap();
    assert!(plotted.contains("latency-heatmap.svg"), "{plotted}");
    assert!(
        svg.contains("Response-time heatmap over the run") && svg.matches("<rect").count() > 50,
        "{} rects",
        svg.matches("<rect").count()
    );
}

/// A closed loop of `-n` requests whose server froze waits for replies that never come,
/// until Ctrl+C: the run is interrupted, and its requests that had waited since the
/// freeze fail the `unanswered` check (a request the interruption itself cut short
/// would not), so `--strict` cannot pass it.
#[test]
fn a_request_count_run_interrupted_while_its_server_is_frozen_fails_unanswered() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("frozen.json");
    let port = server.port().to_string();
    let frozen = Freeze::after(server.pid(), Duration::from_millis(300));
    let child = Command::new(super::harness::tailrate_bin())
        .args([
            "-p",
            &port,
            "-n",
            "100000000",
            "-c",
            "4",
            "-t",
            "get",
            "--strict",
            "-q",
        ])
        .args(["--no-progress", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Frozen from 0.3 s; interrupted at 2.5 s, the oldest request then about 2 s old.
    std::thread::sleep(Duration::from_millis(2500));
    signal("-INT", &child.id().to_string());
    let out = child.wait_with_output().unwrap();
    drop(frozen);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = read_json(&json);
    let test = only_test(&report);
    assert!(
        test["counts"]["in_flight_at_end"].as_u64().unwrap() > 0,
        "{}",
        test["counts"]
    );
    let unanswered = check(test, "unanswered").unwrap_or_else(|| panic!("{}", test["checks"]));
    assert_eq!(unanswered["verdict"], "fail", "{unanswered}");
    assert_eq!(test["valid"], false);
}
