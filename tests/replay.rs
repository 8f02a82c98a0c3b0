//! `tailrate replay` against real redis-servers: traffic captured with MONITOR from a
//! known bursty workload, replayed at 1x and 2x against fresh servers, arrives with the
//! capture's command counts (INFO commandstats) and bursts (the replaying server's own
//! MONITOR); a CLIENT PAUSE during a replay lands in the response tail and not in the
//! service time; a trace of a gigabyte replays in bounded memory; bad lines are named;
//! a sweep over speeds gives a capacity in multiples of the recorded traffic; and the
//! connection flags a replay does not take are refused whenever they are typed.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::harness::{
    RedisServer, assert_success, check, read_json, run_tailrate, run_with_timeout, stderr_of,
    tailrate_bin,
};

/// Commands the bursty workload sends, in turn.
const VERBS: [&str; 4] = ["set", "get", "incr", "hset"];

/// Commands in each 100 ms window of the workload: quiet and busy windows, so that the
/// arrival pattern has bursts to keep.
const BURSTS: [usize; 8] = [10, 120, 30, 0, 200, 60, 5, 150];

/// Windows of the workload (2.4 s).
const WINDOWS: usize = 24;

/// A MONITOR session: every line the server reports, as `redis-cli MONITOR` prints it.
struct Monitor {
    stream: TcpStream,
    reader: JoinHandle<Vec<String>>,
}

impl Monitor {
    fn start(port: u16) -> Monitor {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect for MONITOR");
        stream.write_all(b"MONITOR\r\n").unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut ok = String::new();
        reader.read_line(&mut ok).unwrap();
        assert_eq!(ok.trim_end(), "+OK", "MONITOR's answer");
        let reader = std::thread::spawn(move || {
            let mut lines = Vec::new();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if let Some(text) = line.trim_end_matches(['\r', '\n']).strip_prefix('+') {
                    lines.push(text.to_string());
                }
                line.clear();
            }
            lines
        });
        Monitor { stream, reader }
    }

    /// Stops the session (after what is in flight has arrived) and returns its lines.
    fn stop(self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(200));
        let _ = self.stream.shutdown(Shutdown::Both);
        self.reader.join().unwrap()
    }
}

/// Sends the bursty workload to `port` on four connections, each command answered
/// before the next; returns how many of each verb were sent.
fn bursty_workload(port: u16) -> BTreeMap<String, u64> {
    let mut clients: Vec<(TcpStream, BufReader<TcpStream>)> = (0..4)
        .map(|_| {
            let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.set_nodelay(true).unwrap();
            let r = BufReader::new(s.try_clone().unwrap());
            (s, r)
        })
        .collect();
    let mut sent = BTreeMap::new();
    let start = Instant::now();
    let mut j = 0usize;
    for w in 0..WINDOWS {
        let n = BURSTS[w % BURSTS.len()];
        let window_start = start + Duration::from_millis(100 * w as u64);
        for k in 0..n {
            // Each window's commands are spread over its first half.
            let due = window_start + Duration::from_micros((50_000 * k / n.max(1)) as u64);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            let verb = VERBS[j % VERBS.len()];
            let key = format!("key:{}", j % 100);
            let args: Vec<&str> = match verb {
                "set" => vec!["SET", &key, "value with \"quotes\" and\ttab"],
                "get" => vec!["GET", &key],
                "incr" => vec!["INCR", "counter"],
                _ => vec!["HSET", "hash", &key, "v"],
            };
            let (stream, reader) = &mut clients[j % 4];
            stream
                .write_all(&crate::harness::encode_command(&args))
                .unwrap();
            crate::harness::read_reply(reader).unwrap();
            *sent.entry(verb.to_string()).or_insert(0) += 1;
            j += 1;
        }
    }
    sent
}

/// Recorded times (seconds) of the MONITOR lines whose command is one of [`VERBS`].
fn workload_times(lines: &[String]) -> Vec<f64> {
    lines
        .iter()
        .filter(|l| {
            let verb = l
                .split("] \"")
                .nth(1)
                .unwrap_or("")
                .split('"')
                .next()
                .unwrap_or("");
            VERBS.contains(&verb.to_ascii_lowercase().as_str())
        })
        .map(|l| l.split(' ').next().unwrap().parse::<f64>().unwrap())
        .collect()
}

/// Commands per window of `window` seconds, from the first time on.
fn per_window(times: &[f64], window: f64) -> Vec<f64> {
    let first = times.iter().copied().fold(f64::INFINITY, f64::min);
    let mut counts = Vec::new();
    for t in times {
        let i = ((t - first) / window) as usize;
        if counts.len() <= i {
            counts.resize(i + 1, 0.0);
        }
        counts[i] += 1.0;
    }
    counts
}

/// Pearson's correlation of two series, over their common length.
fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mean = |x: &[f64]| x.iter().sum::<f64>() / n as f64;
    let (ma, mb) = (mean(a), mean(b));
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let var = |x: &[f64], m: f64| x.iter().map(|v| (v - m).powi(2)).sum::<f64>();
    cov / (var(a, ma) * var(b, mb)).sqrt()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tailrate-replay-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Replays `trace` against a fresh server at `speed`, watching it with MONITOR; returns
/// the server's command counts, the replayed commands' times there and the JSON report.
fn replay_fresh(
    trace: &Path,
    speed: &str,
    dir: &Path,
) -> (BTreeMap<String, u64>, Vec<f64>, serde_json::Value) {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let json = dir.join(format!("replay-{speed}.json"));
    let monitor = Monitor::start(server.port());
    let out = run_tailrate(&[
        "replay",
        trace.to_str().unwrap(),
        "-p",
        &port,
        "--speed",
        speed,
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_success(&out);
    let lines = monitor.stop();
    (
        server.commandstats(),
        workload_times(&lines),
        read_json(&json),
    )
}

/// `tailrate replay TRACE -p PORT -q --json JSON EXTRA...`, to start beside something
/// done to the server meanwhile.
fn replay_command(trace: &Path, port: u16, json: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(tailrate_bin());
    cmd.args(["replay", trace.to_str().unwrap(), "-p", &port.to_string()])
        .args(extra)
        .args(["-q", "--json", json.to_str().unwrap()]);
    cmd
}

/// A JSON-lines trace of one client sending GETs at `rate` for `secs`.
fn steady_trace(path: &Path, rate: u64, secs: u64) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in 0..rate * secs {
        let t = i as f64 / rate as f64;
        writeln!(
            out,
            "{{\"time\": {t:.6}, \"client\": \"c1\", \"args\": [\"GET\", \"k{}\"]}}",
            i % 10
        )
        .unwrap();
    }
    out.flush().unwrap();
}

/// The tests that time a replay: alone on the machine (see .config/nextest.toml), since
/// the lag and the bursts they check are the generator's timing.
mod timing {
    use super::*;

    /// The share of a run the generator's threads may wait for a CPU before its lag is
    /// the host's: three times what a quiet machine shows (about 1%, most of it the
    /// generator handing its core to tailrate's own collector).
    const HOST_WAIT_SHARE: f64 = 0.03;

    #[test]
    fn a_captured_workload_replays_with_its_counts_and_bursts_at_1x_and_2x() {
        let dir = temp_dir("capture");
        let source = RedisServer::start();
        let monitor = Monitor::start(source.port());
        let sent = bursty_workload(source.port());
        let captured = monitor.stop();
        let trace = dir.join("capture.monitor");
        std::fs::write(&trace, format!("OK\n{}\n", captured.join("\n"))).unwrap();
        let captured_times = workload_times(&captured);
        assert_eq!(
            captured_times.len() as u64,
            sent.values().sum::<u64>(),
            "MONITOR saw every command of the workload"
        );
        let recorded = per_window(&captured_times, 0.1);

        for (speed, factor) in [("1", 1.0), ("2", 2.0)] {
            let (stats, times, report) = replay_fresh(&trace, speed, &dir);
            for (verb, n) in &sent {
                assert_eq!(
                    stats.get(verb).copied().unwrap_or(0),
                    *n,
                    "at {speed}x the server ran {verb} as often as the capture: {stats:?}"
                );
            }
            let test = &report["tests"][0];
            for name in ["achieved_rate", "server_count"] {
                assert_eq!(
                    check(test, name)["verdict"],
                    "pass",
                    "{name} at {speed}x: {test:#}"
                );
            }
            let lag_p99_ns = test["latency"]["lag"]["p99_ns"].as_f64().unwrap();
            eprintln!("replay at {speed}x: lag p99 {lag_p99_ns} ns");
            // A lag p99 over 1 ms at 1x while the generator's threads waited for a CPU
            // is the host's weather (CI saw 2.9 ms on a loaded runner): the pacing is
            // then not what this can check, and says so.
            let waited = test["host"]["generator"]["run_queue_wait_share"]
                .as_f64()
                .unwrap_or(0.0);
            if speed == "1" && lag_p99_ns >= 1e6 && waited >= HOST_WAIT_SHARE {
                crate::harness::skip(
                    &crate::harness::this_test(),
                    &format!(
                        "lag p99 at 1x {lag_p99_ns} ns while the generator waited {:.1}% of the run for a CPU",
                        waited * 100.0
                    ),
                );
            } else if speed == "1" {
                assert!(
                    lag_p99_ns < 1e6,
                    "lag p99 at 1x under 1 ms: {lag_p99_ns} ns (the generator waited {:.2}% of the run for a CPU)",
                    waited * 100.0
                );
            }
            let replayed = per_window(&times, 0.1 / factor);
            let r = correlation(&recorded, &replayed);
            eprintln!("replay at {speed}x: burst correlation {r:.4}");
            assert!(
                r > 0.9,
                "bursts kept at {speed}x: correlation {r:.3} of\n{recorded:?}\n{replayed:?}"
            );
            let span = times.iter().copied().fold(f64::MIN, f64::max)
                - times.iter().copied().fold(f64::MAX, f64::min);
            let recorded_span = captured_times.iter().copied().fold(f64::MIN, f64::max)
                - captured_times.iter().copied().fold(f64::MAX, f64::min);
            assert!(
                (span * factor - recorded_span).abs() < 0.05 * recorded_span,
                "at {speed}x the replay took {span:.3} s for {recorded_span:.3} s recorded"
            );
            assert_eq!(report["settings"]["replay"]["recorded_clients"], 4);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_paused_server_shows_in_the_response_tail_not_the_service_time() {
        let dir = temp_dir("pause");
        let trace = dir.join("steady.jsonl");
        steady_trace(&trace, 2000, 2);
        let server = RedisServer::start();
        let addr = server.addr();
        let json = dir.join("paused.json");
        let cmd = replay_command(&trace, server.port(), &json, &["--max-inflight", "1"]);
        let pause = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(800));
            crate::harness::send_command(&addr, &["CLIENT", "PAUSE", "300", "ALL"]).unwrap();
        });
        let out = run_with_timeout(cmd, Duration::from_secs(30));
        pause.join().unwrap();
        assert_success(&out);
        let report = read_json(&json);
        let latency = &report["tests"][0]["latency"];
        let response_p99 = latency["response"]["p99_ns"].as_f64().unwrap();
        let response_max = latency["response"]["max_ns"].as_f64().unwrap();
        let service_p99 = latency["service"]["p99_ns"].as_f64().unwrap();
        assert!(
            response_max > 250e6,
            "the 300 ms pause in the tail: max {response_max} ns"
        );
        assert!(
            response_p99 > 100e6,
            "p99 holds the pause: {response_p99} ns"
        );
        assert!(
            service_p99 < response_p99 / 5.0,
            "service p99 {service_p99} ns, response p99 {response_p99} ns: the wait was client-side"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn commands_a_dead_server_never_received_count_in_the_tail_at_their_age() {
    let dir = temp_dir("dead");
    let trace = dir.join("steady.jsonl");
    steady_trace(&trace, 2000, 2);
    let mut server = RedisServer::start();
    let json = dir.join("dead.json");
    let cmd = replay_command(&trace, server.port(), &json, &[]);
    let child = std::thread::spawn(move || run_with_timeout(cmd, Duration::from_secs(30)));
    std::thread::sleep(Duration::from_millis(700));
    server.kill();
    let out = child.join().unwrap();
    // A server gone to the end fails the replay (exit 1), its report still written.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("could not be reached at the end"),
        "{stderr}"
    );
    let test = &read_json(&json)["tests"][0];
    let not_sent = test["counts"]["not_sent"].as_u64().unwrap();
    assert!(
        not_sent > 1000,
        "most of the trace never reached the server: {test:#}"
    );
    // Over a third of the commands waited from when they were due to the run's end, up
    // to a second and more: the tail holds them, not only the answered ones.
    let p99_ns = test["latency"]["response"]["p99_ns"].as_f64().unwrap();
    assert!(
        p99_ns > 500e6,
        "response p99 {p99_ns} ns holds the unsent commands' ages"
    );
    assert_eq!(check(test, "achieved_rate")["verdict"], "fail");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_thread_whose_next_command_is_far_ahead_keeps_sending_its_others() {
    // Client 2's two PINGs, 6 s apart, are its thread's only commands; client 1's INCR
    // every millisecond fill the other thread's read-ahead meanwhile. The first PING's
    // thread must not stop while the reader is seconds ahead on the other's behalf.
    let dir = temp_dir("skew");
    let trace = dir.join("skew.monitor");
    let mut lines = String::from("OK\n");
    for i in 0..7000u64 {
        let t = format!("{}.{:06}", 1_700_000_000 + i / 1000, (i % 1000) * 1000);
        lines.push_str(&format!("{t} [0 127.0.0.1:1] \"INCR\" \"c\"\n"));
        if i == 0 || i == 6000 {
            lines.push_str(&format!("{t} [0 127.0.0.1:2] \"PING\"\n"));
        }
    }
    std::fs::write(&trace, lines).unwrap();
    let server = RedisServer::start();
    let json = dir.join("skew.json");
    let cmd = replay_command(&trace, server.port(), &json, &["--threads", "2"]);
    assert_success(&run_with_timeout(cmd, Duration::from_secs(60)));
    let test = &read_json(&json)["tests"][0];
    let ping = test["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command"] == "ping")
        .expect("ping reported");
    assert_eq!(ping["counts"]["completed"], 2, "{ping:#}");
    let max_ns = ping["latency"]["response"]["max_ns"].as_f64().unwrap();
    assert!(max_ns < 200e6, "a PING waited {max_ns} ns for its thread");
    assert_eq!(server.commandstats().get("incr"), Some(&7000));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_connection_opened_again_selects_its_database_before_going_on() {
    // One client's INCRs in database 1 for 3 s; its connection killed 1 s in.
    let dir = temp_dir("reselect");
    let trace = dir.join("db1.monitor");
    let lines: String = (0..6000u64)
        .map(|i| {
            let us = i * 500;
            format!(
                "{}.{:06} [1 127.0.0.1:1] \"INCR\" \"ctr\"\n",
                1_700_000_000 + us / 1_000_000,
                us % 1_000_000
            )
        })
        .collect();
    std::fs::write(&trace, lines).unwrap();
    let server = RedisServer::start();
    let addr = server.addr();
    let json = dir.join("reselect.json");
    let cmd = replay_command(&trace, server.port(), &json, &[]);
    let kill = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1000));
        // The replay's connection only: the one reading the server's counters stays.
        let Ok(crate::harness::Reply::Bulk(list)) =
            crate::harness::send_command(&addr, &["CLIENT", "LIST"])
        else {
            panic!("CLIENT LIST did not answer");
        };
        let replaying = list
            .lines()
            .find(|l| l.contains("cmd=incr"))
            .and_then(|l| l.split(' ').find_map(|f| f.strip_prefix("addr=")))
            .unwrap_or_else(|| panic!("no connection sending INCR in {list}"))
            .to_string();
        crate::harness::send_command(&addr, &["CLIENT", "KILL", "ADDR", &replaying]).unwrap();
    });
    let out = run_with_timeout(cmd, Duration::from_secs(30));
    kill.join().unwrap();
    assert_success(&out);
    let in_db = |db: &str| {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        s.write_all(&crate::harness::encode_command(&["SELECT", db]))
            .unwrap();
        crate::harness::read_reply(&mut r).unwrap();
        s.write_all(&crate::harness::encode_command(&["GET", "ctr"]))
            .unwrap();
        format!("{:?}", crate::harness::read_reply(&mut r).unwrap())
    };
    let db0 = in_db("0");
    let db1 = in_db("1");
    assert!(
        !db0.contains(char::is_numeric),
        "nothing counted in db 0: {db0}"
    );
    let test = &read_json(&json)["tests"][0];
    assert!(
        test["reconnects"].as_u64() >= Some(1),
        "the connection was killed: {test:#}"
    );
    assert!(
        db1.contains("59") || db1.contains("60"),
        "db 1 holds the run's INCRs: {db1}"
    );
    // The SELECT written again is the server's to count, and tailrate's too.
    assert_eq!(check(test, "server_count")["verdict"], "pass", "{test:#}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_scripts_own_calls_are_not_sent_again_and_the_server_count_holds() {
    // MONITOR writes the commands a script runs after its EVAL, as client `lua`.
    let dir = temp_dir("scripts");
    let trace = dir.join("scripts.monitor");
    let mut lines = String::from("OK\n");
    for i in 0..300u64 {
        let at = |k: u64| format!("1700000000.{:06}", i * 3000 + k);
        lines += &format!("{} [0 127.0.0.1:1] \"GET\" \"k\"\n", at(0));
        lines += &format!(
            "{} [0 127.0.0.1:2] \"EVAL\" \"return redis.call('get','k')\" \"0\"\n",
            at(1)
        );
        lines += &format!("{} [0 lua] \"get\" \"k\"\n", at(2));
    }
    std::fs::write(&trace, lines).unwrap();
    let server = RedisServer::start();
    let json = dir.join("scripts.json");
    let out = run_with_timeout(
        replay_command(&trace, server.port(), &json, &[]),
        Duration::from_secs(30),
    );
    assert_success(&out);
    let stats = server.commandstats();
    // 300 GETs of the client's own and 300 of the scripts', none replayed twice.
    assert_eq!(
        (stats.get("get"), stats.get("eval")),
        (Some(&600), Some(&300)),
        "{stats:?}"
    );
    let report = read_json(&json);
    assert_eq!(
        report["settings"]["replay"]["left_out"]["get (run by a script)"], 300,
        "{:#}",
        report["settings"]
    );
    let test = &report["tests"][0];
    assert_eq!(check(test, "server_count")["verdict"], "pass", "{test:#}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_gigabyte_trace_replays_in_bounded_memory() {
    let dir = temp_dir("large");
    let trace = dir.join("large.monitor");
    let value = "v".repeat(16 * 1024);
    let mut bytes = 0u64;
    let mut lines = 0u64;
    {
        let mut out =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&trace).unwrap());
        writeln!(out, "OK").unwrap();
        while bytes < 1 << 30 {
            // 10,000 a second, recorded; four clients.
            let line = format!(
                "{}.{:06} [0 127.0.0.1:{}] \"SET\" \"k{}\" \"{value}\"\n",
                1_700_000_000 + lines / 10_000,
                (lines % 10_000) * 100,
                40_000 + lines % 4,
                lines % 1000
            );
            out.write_all(line.as_bytes()).unwrap();
            bytes += line.len() as u64;
            lines += 1;
        }
    }
    let server = RedisServer::start();
    let json = dir.join("large.json");
    let mut child = std::process::Command::new(tailrate_bin())
        .args([
            "replay",
            trace.to_str().unwrap(),
            "-p",
            &server.port().to_string(),
            "-q",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut max_rss_kb = 0u64;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            max_rss_kb = max_rss_kb.max(kb);
        }
        assert!(
            Instant::now() < deadline,
            "the replay of 1 GB took over 120 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "replay failed: {status}");
    let report = read_json(&json);
    assert_eq!(report["settings"]["replay"]["commands"], lines);
    assert_eq!(report["tests"][0]["counts"]["completed"], lines);
    assert!(
        max_rss_kb > 0 && max_rss_kb < 100 * 1024,
        "RSS of a {bytes}-byte replay: {max_rss_kb} kB (bound 100 MB)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_line_is_named_or_skipped_when_asked() {
    let dir = temp_dir("bad");
    let trace = dir.join("bad.monitor");
    std::fs::write(
        &trace,
        "1700000000.000000 [0 127.0.0.1:1] \"SET\" \"a\" \"1\"\n\
         1700000000.001000 [0 127.0.0.1:1] \"GET\" \"a\"\n\
         1700000000.002000 [0 127.0.0.1:1] \"GET\" \"a\n\
         1700000000.003000 [0 127.0.0.1:1] \"GET\" \"a\"\n",
    )
    .unwrap();
    let server = RedisServer::start();
    let port = server.port().to_string();
    let out = run_tailrate(&["replay", trace.to_str().unwrap(), "-p", &port, "-q"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("bad.monitor") && err.contains("line 3"),
        "{err}"
    );
    assert!(
        !server.commandstats().contains_key("get"),
        "nothing sent: {err}"
    );

    let json = dir.join("skipped.json");
    let out = run_tailrate(&[
        "replay",
        trace.to_str().unwrap(),
        "-p",
        &port,
        "--skip-bad-lines",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = assert_success(&out);
    assert!(
        text.contains("1 lines that did not parse were skipped (first: line 3"),
        "{text}"
    );
    let report = read_json(&json);
    assert_eq!(report["settings"]["replay"]["bad_lines"], 1);
    assert_eq!(server.commandstats().get("get"), Some(&2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-c`, `--dbnum` and `--cluster` are refused by a replay (and a sweep of one) whenever
/// they are typed, with their default values too: `-c 50` once went through silently
/// because 50 is `-c`'s default. A replay has no such flags, and clap refuses them as
/// unexpected; a sweep takes them for its rates, and refuses them with `--replay`. The
/// refusal names the flag (and `--connections` for `-c`), exits 2, and sends nothing.
#[test]
fn a_replay_refuses_c_even_at_its_default_and_names_connections() {
    let dir = temp_dir("refuse-c");
    let trace = dir.join("four-clients.jsonl");
    let lines: String = (0..200)
        .map(|i| {
            format!(
                "{{\"time\": {:.6}, \"client\": \"c{}\", \"args\": [\"GET\", \"k\"]}}\n",
                f64::from(i) / 1000.0,
                i % 4
            )
        })
        .collect();
    std::fs::write(&trace, lines).unwrap();
    let server = RedisServer::start();
    let port = server.port().to_string();
    let path = trace.to_str().unwrap();
    let replay = ["replay", path, "-p", &port, "-q"];
    let sweep = ["sweep", "--replay", path, "--speeds", "1", "-p", &port];
    let unexpected = |flag: &str| format!("unexpected argument '{flag}'");
    let refused = |flag: &str| format!("for {flag}: ");
    for (command, extra, flag, named) in [
        (&replay[..], &["-c", "50"][..], "-c", unexpected("-c")),
        (&replay[..], &["-c", "7"][..], "-c", unexpected("-c")),
        (
            &replay[..],
            &["--dbnum", "0"][..],
            "--dbnum",
            unexpected("--dbnum"),
        ),
        (
            &replay[..],
            &["--cluster"][..],
            "--cluster",
            unexpected("--cluster"),
        ),
        (&sweep[..], &["-c", "50"][..], "-c", refused("-c")),
    ] {
        let argv: Vec<&str> = command.iter().chain(extra).copied().collect();
        let out = run_tailrate(&argv);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
        assert!(err.contains(&named), "{argv:?} names {flag}: {err}");
        if flag == "-c" {
            assert!(err.contains("--connections"), "{argv:?}: {err}");
        }
    }
    assert!(
        !server.commandstats().contains_key("get"),
        "a refused replay sent nothing"
    );
    // The replay's own count of connections is taken.
    let json = dir.join("folded.json");
    let out = run_tailrate(&[
        "replay",
        path,
        "-p",
        &port,
        "--connections",
        "3",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_success(&out);
    assert_eq!(read_json(&json)["settings"]["clients"], 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sweep_over_speeds_gives_the_capacity_in_multiples_of_the_recording() {
    let dir = temp_dir("sweep");
    let trace = dir.join("steady.jsonl");
    steady_trace(&trace, 1000, 1);
    let server = RedisServer::start();
    let out_dir = dir.join("out");
    let out = run_tailrate(&[
        "sweep",
        "--replay",
        trace.to_str().unwrap(),
        "--speeds",
        "1,2,4",
        // A p50 far under its bound passes on 4 runs (a p99 waits for 16): the search
        // over speeds stays short on a busy host.
        "--slo",
        "p50<=50ms",
        "--settle",
        "0",
        "-p",
        &server.port().to_string(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let text = assert_success(&out);
    assert!(
        text.contains("as a speed of the recorded traffic: "),
        "{text}"
    );
    let report = read_json(&out_dir.join("sweep.json"));
    let speed = &report["slo"]["capacity_speed"];
    let recorded = speed["recorded_rate_per_sec"].as_f64().unwrap();
    assert!((recorded - 1000.0).abs() < 1.0, "recorded pace {recorded}");
    let capacity = speed["speed"].as_f64().expect("a speed passed");
    assert!(
        (1.0..=4.0 + 1e-9).contains(&capacity),
        "capacity {capacity}x"
    );
    let band_low = speed["band"][0].as_f64().unwrap();
    assert!(
        (band_low - capacity).abs() < 1e-9,
        "band starts at the capacity: {speed}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_trace_that_flushes_the_server_is_refused_unless_allowed_and_the_key_kept() {
    let server = RedisServer::start();
    server.cmd(&["SET", "keep", "1"]);
    let dir = temp_dir("admin");
    let trace = dir.join("flush.monitor");
    let mut text = String::from(
        "100.000000 [0 127.0.0.1:1] \"SET\" \"a\" \"1\"\n\
         100.010000 [0 127.0.0.1:1] \"FLUSHALL\"\n\
         100.020000 [0 127.0.0.1:1] \"CONFIG\" \"SET\" \"maxmemory-samples\" \"7\"\n\
         100.030000 [0 127.0.0.1:2] \"flushall\" \"ASYNC\"\n",
    );
    for i in 0..20 {
        text.push_str(&format!(
            "100.{:06} [0 127.0.0.1:2] \"GET\" \"keep\"\n",
            40_000 + i * 1000
        ));
    }
    std::fs::write(&trace, text).unwrap();
    let file = trace.to_str().unwrap();
    let port = server.port().to_string();
    let out = run_tailrate(&["replay", file, "-p", &port, "--no-progress", "-q"]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for needle in [
        "flush.monitor",
        "flushall 2",
        "config|set 1",
        "--allow-admin-commands",
        "--exclude flushall,config|set",
    ] {
        assert!(err.contains(needle), "{needle:?} missing in {err}");
    }
    // Nothing was sent: the key is there, the setting as it was.
    let stats = server.commandstats();
    assert_eq!(stats.get("flushall"), None, "{stats:?}");
    assert_eq!(
        stats.get("set"),
        Some(&1),
        "only this test's SET: {stats:?}"
    );
    assert_eq!(server.cmd(&["GET", "keep"]), "1");
    assert_eq!(server.config_get("maxmemory-samples"), "5");

    let json = dir.join("allowed.json");
    let out = run_tailrate(&[
        "replay",
        file,
        "-p",
        &port,
        "--no-progress",
        "-q",
        "--allow-admin-commands",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_success(&out);
    assert_eq!(server.commandstats().get("flushall"), Some(&2));
    assert_eq!(server.config_get("maxmemory-samples"), "7");
    assert_eq!(server.cmd(&["EXISTS", "keep"]), "0", "flushed, as allowed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_csv_quote_left_open_on_row_501_of_2000_is_named_or_skipped() {
    let dir = temp_dir("csvquote");
    let trace = dir.join("open.csv");
    let mut text = String::from("time,client,db,command\n");
    for i in 0..2000 {
        if i == 500 {
            text.push_str("0.25,c1,0,SET,\"unclosed,v\n");
        } else {
            text.push_str(&format!("{:.4},c1,0,SET,k{i},v\n", i as f64 / 2000.0));
        }
    }
    std::fs::write(&trace, text).unwrap();
    let server = RedisServer::start();
    let port = server.port().to_string();
    let file = trace.to_str().unwrap();
    let out = run_tailrate(&["replay", file, "-p", &port, "-q"]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("open.csv") && err.contains("line 502") && err.contains("past the end"),
        "{err}"
    );
    assert_eq!(
        server.commandstats().get("set"),
        None,
        "nothing sent: {err}"
    );

    let json = dir.join("skipped.json");
    let out = run_tailrate(&[
        "replay",
        file,
        "-p",
        &port,
        "-q",
        "--skip-bad-lines",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_success(&out);
    let report = read_json(&json);
    assert_eq!(report["settings"]["replay"]["bad_lines"], 1);
    assert_eq!(report["settings"]["replay"]["commands"], 1999);
    assert_eq!(server.commandstats().get("set"), Some(&1999));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A replay's header says what a replay has: its speed as typed (`1x`), the trace's own
/// payloads (not `-d`'s 3 bytes); a speed refused for a pass too long reads the same way.
#[test]
fn a_replays_header_reads_its_speed_as_typed_and_its_payload_as_the_traces() {
    let dir = temp_dir("header");
    let trace = dir.join("two.jsonl");
    std::fs::write(
        &trace,
        "{\"time\": 0.0, \"client\": \"c1\", \"args\": [\"SET\", \"k\", \"a-longer-value\"]}\n\
         {\"time\": 0.01, \"client\": \"c1\", \"args\": [\"GET\", \"k\"]}\n",
    )
    .unwrap();
    let server = RedisServer::start();
    let port = server.port().to_string();
    let text = assert_success(&run_tailrate(&[
        "replay",
        trace.to_str().unwrap(),
        "-p",
        &port,
        "--no-progress",
    ]));
    assert!(text.contains(", at 1x on 1 connections"), "{text}");
    assert!(
        text.contains("  payload as recorded in the trace"),
        "{text}"
    );
    assert!(!text.contains("bytes payload"), "{text}");

    // 56 years between two commands: one pass at 1x would outlast any run.
    let long = dir.join("long.jsonl");
    std::fs::write(
        &long,
        "{\"time\": 0.0, \"client\": \"c1\", \"args\": [\"GET\", \"k\"]}\n\
         {\"time\": 1770000000.0, \"client\": \"c1\", \"args\": [\"GET\", \"k\"]}\n",
    )
    .unwrap();
    let out = run_tailrate(&[
        "replay",
        long.to_str().unwrap(),
        "-p",
        &port,
        "--speed",
        "1",
    ]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--speed") && err.contains("at 1x the trace's") && !err.contains("1e0"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
