//! Ending and leaving traces: signals still write what was measured (never a
//! half-written file), passwords never leak, the default suite changes nothing it
//! was not asked to, and the soak behind `scripts/soak`.

use super::*;

#[test]
fn sigterm_ends_the_run_and_still_writes_what_was_measured() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let watched = Watched::spawn(&[
        "-p",
        &server.port().to_string(),
        "--rate",
        "1000",
        "--duration",
        "60s",
        "-t",
        "get",
        "-q",
        "--no-progress",
        "--json",
        json.to_str().unwrap(),
    ]);
    thread::sleep(Duration::from_millis(1500));
    let signalled = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &watched.pid().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let run = watched.wait(RUN_LIMIT);
    assert!(
        signalled.elapsed() < Duration::from_secs(5),
        "stopped promptly: {:?}",
        signalled.elapsed()
    );
    run.assert_no_panic();
    assert_eq!(run.code, Some(130), "{}", run.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    assert_eq!(test["stopped_early"], "interrupted");
    assert!(count(test, "completed") > 500, "{}", test["counts"]);
    assert!(
        run.stdout.contains("GET: "),
        "the text report was printed too: {}",
        run.stdout
    );
}

/// A small deterministic generator (xorshift64*) so the kill offsets are the same every run.
struct Seeded(u64);

impl Seeded {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

#[test]
fn sigkill_at_random_moments_never_leaves_a_half_written_json_or_hdr_log_line() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let hlog = dir.path().join("r.hlog");
    let mut rng = Seeded(0x7a11_7a7e);
    let mut present = 0;
    let mut tests_seen = Vec::new();
    let mut hlog_lines = Vec::new();
    for _ in 0..10 {
        // -l repeats set,get,incr until killed, so the JSON is rewritten every few ms; the
        // .hlog is appended a line per interval and metric (its format is a log, not a
        // document: it is never rewritten, so its promise is whole lines, not a rename).
        let mut child = Command::new(tailrate_bin())
            .args([
                "-p",
                &port,
                "-n",
                "1000",
                "-c",
                "2",
                "-l",
                "-t",
                "set,get,incr",
                "-q",
                "--no-progress",
            ])
            .args([
                "--json",
                json.to_str().unwrap(),
                "--hdr-log",
                hlog.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        thread::sleep(Duration::from_millis(150 + rng.below(900)));
        child.kill().unwrap();
        child.wait().unwrap();
        if json.exists() {
            present += 1;
            let report = read_json(&json);
            let tests = report["tests"].as_array().unwrap();
            for test in tests {
                assert_balanced(test);
            }
            tests_seen.push(tests.len());
        }
        use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
        let bytes = std::fs::read(&hlog).unwrap_or_default();
        let mut lines = 0;
        for entry in IntervalLogIterator::new(&bytes) {
            let entry =
                entry.unwrap_or_else(|e| panic!("a broken .hlog line after SIGKILL: {e:?}"));
            if let LogEntry::Interval(interval) = entry {
                use base64::Engine;
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(interval.encoded_histogram())
                    .unwrap();
                let h: Result<hdrhistogram::Histogram<u64>, _> =
                    hdrhistogram::serialization::Deserializer::new()
                        .deserialize(&mut raw.as_slice());
                assert!(
                    h.is_ok(),
                    "a truncated histogram in the .hlog after SIGKILL"
                );
                lines += 1;
            }
        }
        hlog_lines.push(lines);
    }
    eprintln!(
        "SIGKILL x10: JSON present after {present} kills, tests in each: {tests_seen:?}; .hlog interval lines: {hlog_lines:?}"
    );
    assert!(
        present >= 8,
        "the JSON was written before most kills ({present} of 10)"
    );
    // Temporary files of killed writers may remain, but only under their temporary names.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name == "r.json" || name == "r.hlog" || name.starts_with(".r.json.tmp-"),
            "unexpected file {name}"
        );
    }
}

#[test]
fn passwords_from_a_uri_never_appear_in_output_json_or_error_messages() {
    let secret = "uri-s3cret-9f2c";
    let server = RedisServer::builder().arg("--requirepass", secret).start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let hlog = dir.path().join("r.hlog");

    let uri = format!("redis://default:{secret}@127.0.0.1:{port}/0");
    let ok = run(&[
        "-u",
        &uri,
        "-n",
        "200",
        "-t",
        "ping,set",
        "--json",
        json.to_str().unwrap(),
        "--hdr-log",
        hlog.to_str().unwrap(),
    ]);
    ok.assert_no_panic();
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    let written = format!(
        "{}{}",
        std::fs::read_to_string(&json).unwrap(),
        std::fs::read_to_string(&hlog).unwrap()
    );
    let everything = format!("{}{}{written}", ok.stdout, ok.stderr);
    assert!(
        !everything.contains(secret),
        "the password leaked:\n{everything}"
    );
    assert!(
        read_json(&json)["command_line"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str().unwrap().contains("default:***@"))
    );

    // A wrong password, a refused URI password, an unreachable server: the message names
    // the server's reason, never the password.
    let wrong = "wr0ng-uri-pass-77";
    let closed_port = crate::harness::free_port();
    for (uri, needle) in [
        (
            format!("redis://default:{wrong}@127.0.0.1:{port}"),
            "WRONGPASS",
        ),
        (format!("redis://:{wrong}@127.0.0.1:{port}"), "WRONGPASS"),
        (
            format!("redis://default:{wrong}@127.0.0.1:{closed_port}"),
            "could not connect",
        ),
    ] {
        let failed = run(&["-u", &uri, "-n", "10", "--connect-timeout", "2s"]);
        failed.assert_no_panic();
        assert_eq!(failed.code, Some(1), "{}", failed.stderr);
        assert!(error_line(&failed).contains(needle), "{}", failed.stderr);
        let everything = format!("{}{}", failed.stdout, failed.stderr);
        assert!(
            !everything.contains(wrong),
            "the password leaked:\n{everything}"
        );
    }
}

#[test]
fn the_default_suite_never_sends_destructive_or_configuring_commands() {
    let server = RedisServer::start();
    let ok = run(&[
        "-p",
        &server.port().to_string(),
        "-n",
        "300",
        "-r",
        "1000",
        "-q",
    ]);
    ok.assert_no_panic();
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    let stats = server.commandstats();
    assert!(stats.len() > 10, "the default suite ran: {stats:?}");
    for (name, calls) in &stats {
        let forbidden = [
            "flushall",
            "flushdb",
            "shutdown",
            "config|set",
            "config|rewrite",
            "config|resetstat",
            "debug",
            "save",
            "bgsave",
        ];
        assert!(
            !forbidden.contains(&name.as_str()),
            "tailrate sent {name} ({calls} calls) without being asked"
        );
    }
}

/// The soak behind `scripts/soak` (not in CI: ignored, and minutes long): an open loop
/// under periodic `CLIENT PAUSE` and one server restart, its RSS sampled every 10 s.
/// Passes when the books balance and memory is flat: RSS at the end at most 8 MiB
/// above RSS at 20 s (a leak of one allocation per request would be megabytes a minute).
#[test]
#[ignore = "a soak of minutes: scripts/soak runs it"]
fn a_soak_with_pauses_and_a_restart_keeps_memory_flat_and_the_books_balanced() {
    let minutes: f64 = std::env::var("TAILRATE_SOAK_MINUTES")
        .ok()
        .and_then(|m| m.parse().ok())
        .unwrap_or(10.0);
    let total = Duration::from_secs_f64(minutes * 60.0);
    let mut server = RedisServer::builder().arg("--hz", "100").start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("soak.json");
    let duration = format!("{}ms", total.as_millis());
    let port = server.port().to_string();
    let watched = Watched::spawn(&[
        "-p",
        &port,
        "--rate",
        "10k",
        "--duration",
        &duration,
        "-c",
        "8",
        "-t",
        "set",
        "--timeout",
        "2s",
        "--no-progress",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let status = format!("/proc/{}/status", watched.pid());
    let started = Instant::now();
    let restart_at = total / 2;
    let (mut restarted, mut next_pause) = (false, Duration::from_secs(30));
    let mut rows: Vec<(u64, u64, u64, String)> = Vec::new();
    println!("{:>6}  {:>9}  {:>9}  event", "t (s)", "RSS KiB", "HWM KiB");
    for tick in 1.. {
        let at = Duration::from_secs(10 * tick);
        if at > total {
            break;
        }
        let mut event = String::new();
        // Faults fall between samples: a 500 ms pause every minute, one restart halfway.
        while started.elapsed() < at {
            let now = started.elapsed();
            if now >= next_pause && next_pause < total {
                let reply = send_command(&server.addr(), &["CLIENT", "PAUSE", "500", "ALL"])
                    .map(|r| r.to_string());
                event += &format!(
                    "CLIENT PAUSE 500 ALL at {:.1}s ({reply:?}); ",
                    now.as_secs_f64()
                );
                next_pause += Duration::from_secs(60);
            }
            if !restarted && now >= restart_at {
                server.kill();
                thread::sleep(Duration::from_secs(1));
                server.restart_same_port();
                event += &format!(
                    "server killed at {:.1}s and restarted 1 s later; ",
                    now.as_secs_f64()
                );
                restarted = true;
            }
            thread::sleep(Duration::from_millis(50));
        }
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        let (rss, hwm) = (
            status_kb(&text, "VmRSS:").unwrap_or(0),
            status_kb(&text, "VmHWM:").unwrap_or(0),
        );
        println!("{:>6}  {rss:>9}  {hwm:>9}  {event}", at.as_secs());
        rows.push((at.as_secs(), rss, hwm, event));
    }
    let run = watched.wait(total + Duration::from_secs(30));
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let test = &read_json(&json)["tests"][0];
    let c = |k: &str| count(test, k);
    println!(
        "counts: intended {} = completed {} + errors {} {} + timeouts {} + not sent {} + in flight {}",
        c("intended"),
        c("completed"),
        c("errors"),
        test["counts"]["errors_by_kind"],
        c("timeouts"),
        c("not_sent"),
        c("in_flight_at_end")
    );
    println!(
        "response p50 {} us, p99 {} us, max {} ms; peak RSS {} KiB",
        test["latency"]["response"]["p50_ns"].as_u64().unwrap() / 1000,
        test["latency"]["response"]["p99_ns"].as_u64().unwrap() / 1000,
        test["latency"]["response"]["max_ns"].as_u64().unwrap() / 1_000_000,
        run.peak_rss_kb
    );
    assert_balanced(test);
    assert!(restarted, "the restart happened");
    assert!(
        c("completed") as f64 > 0.9 * c("intended") as f64,
        "most requests completed: {}",
        test["counts"]
    );
    let early = rows.iter().find(|r| r.0 >= 20).map_or(0, |r| r.1);
    let last = rows.last().map_or(0, |r| r.1);
    assert!(
        last <= early + 8 * 1024,
        "RSS grew from {early} KiB at 20 s to {last} KiB at the end"
    );
    println!("soak passed: RSS {early} KiB at 20 s, {last} KiB at the end; the books balance");
}
