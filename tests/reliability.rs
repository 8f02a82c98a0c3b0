//! Reliability: faults, stalls and hostile input lose nothing.
//!
//! Every request ends in exactly one count (`intended = completed + errors + timeouts +
//! not_sent + in_flight_at_end`), memory stays bounded whatever the server does, a run
//! always ends on time with a one-line reason, results are never lost or half-written,
//! and passwords never leak. Faults come from a real redis-server where it can make
//! them (CLIENT PAUSE, CLIENT KILL, maxmemory) and from fake servers in this file
//! where it cannot (silence, hostile bytes). `timing` holds the tests that measure time
//! or load the CPU; nextest runs them alone.

use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{RedisServer, Reply, read_reply, send_command, tailrate_bin};

/// Hard limit on any one tailrate run here: a hang fails the test instead of blocking it.
const RUN_LIMIT: Duration = Duration::from_secs(30);

/// Peak RSS a tailrate process may reach against any hostile server. Its normal
/// footprint is ~10-20 MB (measured); a decoder that believed a hostile length or
/// buffered an endless reply would pass this at once (10^12 bytes, 4 GB of elements).
const HOSTILE_RSS_LIMIT_KB: u64 = 200 * 1024;

// ---------------------------------------------------------------------------------------
// Running and watching tailrate
// ---------------------------------------------------------------------------------------

/// A tailrate process whose peak memory (VmHWM) is sampled every 10 ms while it runs.
struct Watched {
    child: Child,
    started: Instant,
    stdout: JoinHandle<Vec<u8>>,
    stderr: JoinHandle<Vec<u8>>,
    sampler: JoinHandle<u64>,
}

/// What a watched run did.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    /// Largest VmHWM (the kernel's peak resident set) seen, in KiB.
    peak_rss_kb: u64,
}

impl Run {
    /// No panic, no abort: exit 0 or 1 (130 for a signal we sent), never 101 or a signal.
    fn assert_no_panic(&self) {
        assert!(!self.stderr.contains("panicked"), "tailrate panicked:\n{}", self.stderr);
        assert!(matches!(self.code, Some(0 | 1 | 130)), "exit {:?} (101 is a panic, None a signal)\n{}", self.code, self.stderr);
    }
}

impl Watched {
    fn spawn(args: &[&str]) -> Watched {
        let mut child = Command::new(tailrate_bin())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn tailrate: {e}"));
        let started = Instant::now();
        let stdout = drain(child.stdout.take().unwrap());
        let stderr = drain(child.stderr.take().unwrap());
        let status = format!("/proc/{}/status", child.id());
        // Stops when the process is gone (or a zombie: then the VmRSS line is missing).
        let sampler = thread::spawn(move || {
            let mut peak = 0;
            while let Some(hwm) = std::fs::read_to_string(&status).ok().and_then(|text| status_kb(&text, "VmHWM:")) {
                peak = peak.max(hwm);
                thread::sleep(Duration::from_millis(10));
            }
            peak
        });
        Watched { child, started, stdout, stderr, sampler }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the exit; kills the process and panics after `limit`.
    fn wait(mut self, limit: Duration) -> Run {
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if self.started.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let err = String::from_utf8_lossy(&self.stderr.join().unwrap_or_default()).into_owned();
                panic!("tailrate still running after {limit:?}: killed it\n--- stderr ---\n{err}");
            }
            thread::sleep(Duration::from_millis(5));
        };
        let elapsed = self.started.elapsed();
        Run {
            code: status.code(),
            stdout: String::from_utf8_lossy(&self.stdout.join().unwrap_or_default()).into_owned(),
            stderr: String::from_utf8_lossy(&self.stderr.join().unwrap_or_default()).into_owned(),
            elapsed,
            peak_rss_kb: self.sampler.join().unwrap_or(0),
        }
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}

/// `VmRSS:    11736 kB` -> 11736.
fn status_kb(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|l| l.strip_prefix(field)).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Runs tailrate to the end (within [`RUN_LIMIT`]).
fn run(args: &[&str]) -> Run {
    Watched::spawn(args).wait(RUN_LIMIT)
}

fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn count(test: &Value, key: &str) -> u64 {
    test["counts"][key].as_u64().unwrap_or_else(|| panic!("counts.{key} missing in {}", test["counts"]))
}

fn error_kind(test: &Value, kind: &str) -> u64 {
    test["counts"]["errors_by_kind"][kind].as_u64().unwrap_or(0)
}

/// The accounting identity, for the test and (summed) for its commands: every intended
/// request ended in exactly one count. Per-command counts carry no in-flight figure, so
/// their shortfalls must add up to the test's `in_flight_at_end`.
fn assert_balanced(test: &Value) {
    let c = |k: &str| count(test, k);
    assert_eq!(
        c("intended"),
        c("completed") + c("errors") + c("timeouts") + c("not_sent") + c("in_flight_at_end"),
        "accounting identity broken: {}",
        test["counts"]
    );
    let by_kind: u64 = test["counts"]["errors_by_kind"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(by_kind, c("errors"), "errors_by_kind adds up to errors: {}", test["counts"]);
    // Finer: what was written ended as a reply, an error, a timeout or still in flight.
    assert_eq!(c("intended"), c("sent") + c("not_sent"), "{}", test["counts"]);
    if let Some(commands) = test["commands"].as_array().filter(|c| !c.is_empty()) {
        let mut shortfall = 0;
        for cmd in commands {
            let k = |key: &str| count(cmd, key);
            let ended = k("completed") + k("errors") + k("timeouts") + k("not_sent");
            assert!(k("intended") >= ended, "command {} ended more requests than it intended: {}", cmd["command"], cmd["counts"]);
            shortfall += k("intended") - ended;
        }
        assert_eq!(shortfall, c("in_flight_at_end"), "per-command shortfalls are the requests in flight at the end");
    }
    let accounting_failed = test["checks"].as_array().is_some_and(|cs| cs.iter().any(|ch| ch["name"] == "accounting"));
    assert!(!accounting_failed, "the report flagged its own accounting: {}", test["checks"]);
}

/// The run's one-line error message (`tailrate: error: ...`).
fn error_line(run: &Run) -> &str {
    let lines: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("tailrate: error:")).collect();
    assert_eq!(lines.len(), 1, "one error line expected:\n{}", run.stderr);
    lines[0]
}

// ---------------------------------------------------------------------------------------
// Fake servers
// ---------------------------------------------------------------------------------------

/// What a fake server does with the workload's requests (startup queries, CONFIG and
/// INFO, always get `-ERR unknown command`: tailrate notes that and carries on).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Behaviour {
    /// Reads everything, never answers: requests can only time out.
    Silent,
    /// `+OK` to most requests, `-ERR` to every 7th; silent for 300 ms from 0.8 s after
    /// the first request, and for good from 1.6 s.
    Mixed,
    /// Answers the first request with a bulk length of 10^12.
    HugeBulk,
    /// Answers with `*1\r\n` a million times: an aggregate nested a million deep.
    DeepNesting,
    /// Answers with `+` and then 1 MiB of bytes with no CRLF.
    EndlessLine,
    /// Sends `+OK\r\n` as soon as a workload connection opens, before any request, then
    /// answers every request with `+OK`.
    Unsolicited,
    /// Sends a RESP3 push before each `+OK` reply (tailrate speaks RESP2 here).
    PushInResp2,
    /// Answers with an HTTP error page.
    NotResp,
    /// Answers with an array announcing 4 billion elements, then 8 MiB of `:1\r\n`.
    EndlessAggregate,
    /// Answers the first two requests of a connection with `+OK`, then closes it.
    TwoThenClose,
}

/// Workload connections a fake accepts before it starts dropping them (a reconnect storm stays bounded).
const FAKE_MAX_CONNECTIONS: usize = 200;

/// A fake RESP server on 127.0.0.1:0, one thread per connection; stops accepting on drop.
struct FakeServer {
    port: u16,
    stop: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
    acceptor: Option<JoinHandle<()>>,
}

impl FakeServer {
    fn start(behaviour: Behaviour) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let first_request: Arc<Mutex<Option<Instant>>> = Arc::default();
        let (stop2, accepted2) = (stop.clone(), accepted.clone());
        let acceptor = thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let index = accepted2.fetch_add(1, Ordering::Relaxed);
                        if index > FAKE_MAX_CONNECTIONS {
                            continue;
                        }
                        let first_request = first_request.clone();
                        thread::spawn(move || {
                            let _ = serve(stream, index, behaviour, &first_request);
                        });
                    }
                    Err(_) => thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        FakeServer { port, stop, accepted, acceptor: Some(acceptor) }
    }

    fn port(&self) -> String {
        self.port.to_string()
    }

    fn connections(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.acceptor.take() {
            let _ = h.join();
        }
    }
}

/// Serves one connection. Connection 0 is tailrate's startup connection (server facts),
/// which is answered plainly whatever the behaviour; every write has a timeout, so a
/// peer that stops reading cannot hold the thread for long.
fn serve(stream: TcpStream, index: usize, behaviour: Behaviour, first_request: &Mutex<Option<Instant>>) -> std::io::Result<()> {
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    stream.set_read_timeout(Some(RUN_LIMIT))?;
    stream.set_nodelay(true)?;
    let mut out = &stream;
    let mut reader = BufReader::new(&stream);
    if behaviour == Behaviour::Unsolicited && index > 0 {
        out.write_all(b"+OK\r\n")?;
    }
    let mut served = 0u64;
    loop {
        let Reply::Array(argv) = read_reply(&mut reader)? else { return Ok(()) };
        let name = argv.first().map(|a| a.to_string().to_ascii_uppercase()).unwrap_or_default();
        if name == "CONFIG" || name == "INFO" || index == 0 {
            out.write_all(b"-ERR unknown command\r\n")?;
            continue;
        }
        served += 1;
        let since_first = first_request.lock().unwrap().get_or_insert_with(Instant::now).elapsed();
        match behaviour {
            Behaviour::Silent => {}
            Behaviour::Mixed => {
                let silent = (Duration::from_millis(800)..Duration::from_millis(1100)).contains(&since_first)
                    || since_first > Duration::from_millis(1600);
                if !silent {
                    out.write_all(if served % 7 == 0 { b"-ERR seventh\r\n" } else { b"+OK\r\n" })?;
                }
            }
            Behaviour::HugeBulk => out.write_all(b"$1000000000000\r\n")?,
            Behaviour::DeepNesting => out.write_all(&b"*1\r\n".repeat(1_000_000))?,
            Behaviour::EndlessLine => {
                out.write_all(b"+")?;
                let chunk = [b'a'; 64 * 1024];
                for _ in 0..16 {
                    out.write_all(&chunk)?;
                }
            }
            Behaviour::Unsolicited => out.write_all(b"+OK\r\n")?,
            Behaviour::PushInResp2 => out.write_all(b">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nkey\r\n+OK\r\n")?,
            Behaviour::NotResp => out.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")?,
            Behaviour::TwoThenClose => {
                out.write_all(b"+OK\r\n")?;
                if served == 2 {
                    return Ok(());
                }
            }
            Behaviour::EndlessAggregate => {
                out.write_all(b"*4000000000\r\n")?;
                let chunk = b":1\r\n".repeat(16 * 1024);
                for _ in 0..128 {
                    out.write_all(&chunk)?;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

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
    assert!(c("completed") > 100 && c("errors") > 10 && c("timeouts") > 0 && c("not_sent") > 0, "{}", first["counts"]);
    assert_eq!(error_kind(first, "ERR"), c("errors"), "only the server's error replies are errors here");
    assert_eq!(first["valid"], false, "requests were never sent: the run is marked invalid");
}

#[test]
fn a_batch_cut_short_by_a_closed_connection_still_counts_the_replies_it_got() {
    // -P 4 --batch-latency holds each reply until the batch's last: here the batch never
    // completes (2 replies, then the server closes), and the run ends right after.
    let fake = FakeServer::start(Behaviour::TwoThenClose);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let run =
        run(&["-p", &fake.port(), "-c", "1", "-P", "4", "--batch-latency", "-n", "4", "-t", "get", "-q", "--json", json.to_str().unwrap()]);
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    assert_eq!((count(test, "completed"), count(test, "errors")), (2, 2), "{}", test["counts"]);
    assert_eq!(test["latency"]["response"]["count"], 2, "both replies have a latency");
}

#[test]
fn maxmemory_oom_errors_are_counted_by_kind_and_the_run_goes_on_unless_told_to_stop() {
    let server = RedisServer::builder().arg("--maxmemory", "2mb").arg("--maxmemory-policy", "noeviction").start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    // 1000-byte values on random keys: the first ~1000 fit, the rest are refused.
    let base = ["-p", &port, "-d", "1000", "-r", "1000000", "-c", "4", "-t", "set", "--no-progress"];
    let mut args = base.to_vec();
    args.extend(["--rate", "4000", "--duration", "1s", "--json", json.to_str().unwrap()]);
    let goes_on = run(&args);
    goes_on.assert_no_panic();
    assert_eq!(goes_on.code, Some(0), "{}", goes_on.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    let oom = error_kind(test, "OOM");
    eprintln!("maxmemory: {}", test["counts"]);
    assert!(oom > 1000 && count(test, "completed") > 100, "{}", test["counts"]);
    assert_eq!(oom, count(test, "errors"), "every error is an OOM");
    assert!(goes_on.stdout.contains("OOM: "), "the text report names the kind: {}", goes_on.stdout);

    let mut args = base.to_vec();
    args.extend(["-n", "100000", "--exit-on-error"]);
    let stopped = run(&args);
    stopped.assert_no_panic();
    assert_eq!(stopped.code, Some(1), "{}", stopped.stderr);
    assert!(error_line(&stopped).contains("OOM command not allowed when used memory > 'maxmemory'"), "{}", stopped.stderr);
    assert!(stopped.elapsed < Duration::from_secs(15), "stopped at the first error, not after 100000 requests");
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
    // connections die, then kill every connection but this test's own.
    assert_eq!(server.cmd(&["CLIENT", "PAUSE", "300", "WRITE"]), "OK");
    thread::sleep(Duration::from_millis(100));
    let list = server.cmd(&["CLIENT", "LIST"]);
    let victims: Vec<&str> = list
        .lines()
        .filter(|l| !l.contains("cmd=client|list"))
        .filter_map(|l| l.split(' ').find_map(|f| f.strip_prefix("addr=")))
        .collect();
    assert_eq!(victims.len(), 4, "tailrate's 4 connections:\n{list}");
    for addr in &victims {
        assert_eq!(server.cmd(&["CLIENT", "KILL", "ADDR", addr]), "1", "one connection killed");
    }
    let run = watched.wait(RUN_LIMIT);
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    let closed = error_kind(test, "connection_closed") + error_kind(test, "connection_reset");
    eprintln!("client kill: {} ({} connections reopened)", test["counts"], total_connections(&server) - connections_before - 5);
    assert!(closed > 0 && closed == count(test, "errors"), "the killed requests, and only they, are errors: {}", test["counts"]);
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
    assert!(total_connections(&server) - connections_before >= 9, "reconnected");
}

fn total_connections(server: &RedisServer) -> u64 {
    server.info_field("stats", "total_connections_received").unwrap().parse().unwrap()
}

/// Runs open loop against a hostile fake and checks the common promises: a one-line
/// protocol error naming the fault, exit 1, no panic, bounded memory, the books balanced.
fn assert_hostile_server_fails_cleanly(behaviour: Behaviour, extra: &[&str], needle: &str) -> Run {
    let fake = FakeServer::start(behaviour);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let port = fake.port();
    let mut argv = vec!["-p", &port, "--rate", "50", "--duration", "3s", "-c", "2", "-t", "get", "--no-progress", "-q"];
    argv.extend(extra);
    argv.extend(["--json", json.to_str().unwrap()]);
    let run = run(&argv);
    run.assert_no_panic();
    assert_eq!(run.code, Some(1), "{behaviour:?}: a protocol error fails the run\n{}", run.stderr);
    let line = error_line(&run);
    assert!(line.contains("protocol error from 127.0.0.1:") && line.contains(needle), "{behaviour:?}: {line}");
    assert!(run.peak_rss_kb < HOSTILE_RSS_LIMIT_KB, "{behaviour:?}: peak RSS {} KiB", run.peak_rss_kb);
    assert!(run.elapsed < Duration::from_secs(10), "{behaviour:?}: the first protocol error ends the 3 s run early ({:?})", run.elapsed);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    assert!(test["stopped_early"].as_str().unwrap().contains(needle), "{behaviour:?}: {}", test["stopped_early"]);
    assert!(fake.connections() <= 4, "{behaviour:?}: no reconnect storm ({} connections)", fake.connections());
    eprintln!("{behaviour:?}: exit {:?} in {:.2?}, peak RSS {} KiB, {}; {line}", run.code, run.elapsed, run.peak_rss_kb, test["counts"]);
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
    assert_hostile_server_fails_cleanly(Behaviour::EndlessLine, &[], "longer than the limit of 65536 bytes");
}

#[test]
fn a_reply_nobody_asked_for_is_a_protocol_error_even_on_an_idle_connection() {
    assert_hostile_server_fails_cleanly(Behaviour::Unsolicited, &[], "no request was waiting for");
}

#[test]
fn a_resp3_push_on_a_resp2_connection_is_a_protocol_error() {
    assert_hostile_server_fails_cleanly(Behaviour::PushInResp2, &[], "RESP3 push on a RESP2 connection");
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
            tracking_clients = server.info_field("clients", "tracking_clients").unwrap().parse().unwrap();
        }
    }
    let run = watched.wait(RUN_LIMIT);
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    assert_eq!(count(test, "errors"), 0, "{}", test["counts"]);
    assert!(count(test, "completed") > 2000, "{}", test["counts"]);
    assert_eq!(tracking_clients, 2, "both connections had tracking on while keys they read were rewritten");
}

#[test]
fn bytes_that_are_not_resp_are_a_protocol_error() {
    assert_hostile_server_fails_cleanly(Behaviour::NotResp, &[], "not a RESP type byte");
}

#[test]
fn an_endless_aggregate_of_small_values_stops_at_the_reply_size_limit() {
    assert_hostile_server_fails_cleanly(Behaviour::EndlessAggregate, &["--max-reply-bytes", "1m"], "over the limit of 1065536 bytes");
}

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
    assert!(Command::new("kill").args(["-TERM", &watched.pid().to_string()]).status().unwrap().success());
    let run = watched.wait(RUN_LIMIT);
    assert!(signalled.elapsed() < Duration::from_secs(5), "stopped promptly: {:?}", signalled.elapsed());
    run.assert_no_panic();
    assert_eq!(run.code, Some(130), "{}", run.stderr);
    let test = &read_json(&json)["tests"][0];
    assert_balanced(test);
    assert_eq!(test["stopped_early"], "interrupted");
    assert!(count(test, "completed") > 500, "{}", test["counts"]);
    assert!(run.stdout.contains("GET: "), "the text report was printed too: {}", run.stdout);
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
            .args(["-p", &port, "-n", "1000", "-c", "2", "-l", "-t", "set,get,incr", "-q", "--no-progress"])
            .args(["--json", json.to_str().unwrap(), "--hdr-log", hlog.to_str().unwrap()])
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
            let entry = entry.unwrap_or_else(|e| panic!("a broken .hlog line after SIGKILL: {e:?}"));
            if let LogEntry::Interval(interval) = entry {
                use base64::Engine;
                let raw = base64::engine::general_purpose::STANDARD.decode(interval.encoded_histogram()).unwrap();
                let h: Result<hdrhistogram::Histogram<u64>, _> =
                    hdrhistogram::serialization::Deserializer::new().deserialize(&mut raw.as_slice());
                assert!(h.is_ok(), "a truncated histogram in the .hlog after SIGKILL");
                lines += 1;
            }
        }
        hlog_lines.push(lines);
    }
    eprintln!("SIGKILL x10: JSON present after {present} kills, tests in each: {tests_seen:?}; .hlog interval lines: {hlog_lines:?}");
    assert!(present >= 8, "the JSON was written before most kills ({present} of 10)");
    // Temporary files of killed writers may remain, but only under their temporary names.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(name == "r.json" || name == "r.hlog" || name.starts_with(".r.json.tmp-"), "unexpected file {name}");
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
    let ok = run(&["-u", &uri, "-n", "200", "-t", "ping,set", "--json", json.to_str().unwrap(), "--hdr-log", hlog.to_str().unwrap()]);
    ok.assert_no_panic();
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    let written = format!("{}{}", std::fs::read_to_string(&json).unwrap(), std::fs::read_to_string(&hlog).unwrap());
    let everything = format!("{}{}{written}", ok.stdout, ok.stderr);
    assert!(!everything.contains(secret), "the password leaked:\n{everything}");
    assert!(read_json(&json)["command_line"].as_array().unwrap().iter().any(|a| a.as_str().unwrap().contains("default:***@")));

    // A wrong password, a refused URI password, an unreachable server: the message names
    // the server's reason, never the password.
    let wrong = "wr0ng-uri-pass-77";
    let closed_port = super::harness::free_port();
    for (uri, needle) in [
        (format!("redis://default:{wrong}@127.0.0.1:{port}"), "WRONGPASS"),
        (format!("redis://:{wrong}@127.0.0.1:{port}"), "WRONGPASS"),
        (format!("redis://default:{wrong}@127.0.0.1:{closed_port}"), "could not connect"),
    ] {
        let failed = run(&["-u", &uri, "-n", "10", "--connect-timeout", "2s"]);
        failed.assert_no_panic();
        assert_eq!(failed.code, Some(1), "{}", failed.stderr);
        assert!(error_line(&failed).contains(needle), "{}", failed.stderr);
        let everything = format!("{}{}", failed.stdout, failed.stderr);
        assert!(!everything.contains(wrong), "the password leaked:\n{everything}");
    }
}

#[test]
fn the_default_suite_never_sends_destructive_or_configuring_commands() {
    let server = RedisServer::start();
    let ok = run(&["-p", &server.port().to_string(), "-n", "300", "-r", "1000", "-q"]);
    ok.assert_no_panic();
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    let stats = server.commandstats();
    assert!(stats.len() > 10, "the default suite ran: {stats:?}");
    for (name, calls) in &stats {
        let forbidden = ["flushall", "flushdb", "shutdown", "config|set", "config|rewrite", "config|resetstat", "debug", "save", "bgsave"];
        assert!(!forbidden.contains(&name.as_str()), "tailrate sent {name} ({calls} calls) without being asked");
    }
}

/// The soak behind `scripts/soak` (not in CI: ignored, and minutes long): an open loop
/// under periodic `CLIENT PAUSE` and one server restart, its RSS sampled every 10 s.
/// Passes when the books balance and memory is flat: RSS at the end at most 8 MiB
/// above RSS at 20 s (a leak of one allocation per request would be megabytes a minute).
#[test]
#[ignore = "a soak of minutes: scripts/soak runs it"]
fn a_soak_with_pauses_and_a_restart_keeps_memory_flat_and_the_books_balanced() {
    let minutes: f64 = std::env::var("TAILRATE_SOAK_MINUTES").ok().and_then(|m| m.parse().ok()).unwrap_or(10.0);
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
                let reply = send_command(&server.addr(), &["CLIENT", "PAUSE", "500", "ALL"]).map(|r| r.to_string());
                event += &format!("CLIENT PAUSE 500 ALL at {:.1}s ({reply:?}); ", now.as_secs_f64());
                next_pause += Duration::from_secs(60);
            }
            if !restarted && now >= restart_at {
                server.kill();
                thread::sleep(Duration::from_secs(1));
                server.restart_same_port();
                event += &format!("server killed at {:.1}s and restarted 1 s later; ", now.as_secs_f64());
                restarted = true;
            }
            thread::sleep(Duration::from_millis(50));
        }
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        let (rss, hwm) = (status_kb(&text, "VmRSS:").unwrap_or(0), status_kb(&text, "VmHWM:").unwrap_or(0));
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
    assert!(c("completed") as f64 > 0.9 * c("intended") as f64, "most requests completed: {}", test["counts"]);
    let early = rows.iter().find(|r| r.0 >= 20).map_or(0, |r| r.1);
    let last = rows.last().map_or(0, |r| r.1);
    assert!(last <= early + 8 * 1024, "RSS grew from {early} KiB at 20 s to {last} KiB at the end");
    println!("soak passed: RSS {early} KiB at 20 s, {last} KiB at the end; the books balance");
}

/// Tests that measure time or load the CPU: nextest runs them alone.
mod timing {
    use super::*;

    /// A server paused for 3 s at 50k req/s: 50 connections x 64 in flight fill up at
    /// once, the 20000-request backlog within 0.4 s, and the rest of the pause is counted
    /// as not sent. Memory: a waiting request is an `Arrival` of 40 bytes, so the backlog
    /// may add at most 20000 x 40 B, doubled for the VecDeque's growth (1.6 MB), to what
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
            let mut a = vec!["-p", &port, "--rate", "50k", "--duration", duration, "-c", "50", "--max-backlog", "20000", "-t", "set"];
            a.extend(["--no-progress", "-q", "--json", json.to_str().unwrap()]);
            a
        };
        let reference = run(&args("4s"));
        assert_eq!(reference.code, Some(0), "{}", reference.stderr);

        let (duration, grace) = (Duration::from_secs(4), Duration::from_secs(2));
        let watched = Watched::spawn(&args("4s"));
        thread::sleep(Duration::from_millis(1000));
        // CLIENT PAUSE ALL also holds CLIENT UNPAUSE, so the pause is given its length.
        assert_eq!(send_command(&server.addr(), &["CLIENT", "PAUSE", "3000", "ALL"]).unwrap().to_string(), "OK");
        let run = watched.wait(RUN_LIMIT);
        run.assert_no_panic();
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let bound_kb = reference.peak_rss_kb + 20_000 * 40 * 2 / 1024 + 1536;
        let test = &read_json(&json)["tests"][0];
        eprintln!(
            "pause: peak RSS {} KiB (unpaused {} KiB, bound {bound_kb} KiB), {:.2?}, {}",
            run.peak_rss_kb, reference.peak_rss_kb, run.elapsed, test["counts"]
        );
        assert!(run.peak_rss_kb <= bound_kb, "peak RSS {} KiB, over {bound_kb} KiB", run.peak_rss_kb);
        assert_balanced(test);
        // At least 2 s of the 3 s pause overflowed: 100k requests at 50k/s (runs count ~125k).
        assert!(count(test, "not_sent") > 80_000, "{}", test["counts"]);
        assert_eq!(test["valid"], false);
        let rate_check = test["checks"].as_array().unwrap().iter().find(|c| c["name"] == "achieved_rate").unwrap();
        assert_eq!(rate_check["verdict"], "fail");
        assert!(rate_check["detail"].as_str().unwrap().contains("not sent"), "{rate_check}");
        // After the pause the backlog drains: the last second completes requests.
        let last = test["intervals"].as_array().unwrap().iter().filter(|i| i["start_secs"].as_f64().unwrap() >= 3.0);
        assert!(last.map(|i| i["completed"].as_u64().unwrap()).sum::<u64>() > 10_000, "the backlog drained after the pause");
        // Startup (~0.2 s) + 4 s + the drain grace, with 3 s of slack for a loaded machine.
        assert!(run.elapsed < duration + grace + Duration::from_secs(3), "took {:?}", run.elapsed);
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
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let test = &read_json(&json)["tests"][0];
        assert_balanced(test);
        eprintln!("silent server: {:.2?}, {} connections, {}", run.elapsed, fake.connections(), test["counts"]);
        assert_eq!(count(test, "completed"), 0);
        // Only those sent in the last 200 ms may still be in flight; the rest timed out.
        assert!(count(test, "timeouts") > count(test, "intended") / 2, "{}", test["counts"]);
        assert!(fake.connections() > 4, "timed-out connections were reopened");
        // Startup (< 0.5 s) + 1.5 s + one 200 ms timeout, with 1.5 s of slack.
        assert!(run.elapsed < Duration::from_millis(1500 + 200 + 2000), "took {:?}", run.elapsed);
    }
}
