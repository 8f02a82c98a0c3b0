//! Reliability: faults, stalls and hostile input lose nothing.
//!
//! Every request ends in exactly one count (`intended = completed + errors + timeouts +
//! not_sent + in_flight_at_end`), memory stays bounded whatever the server does, a run
//! always ends on time with a one-line reason, results are never lost or half-written,
//! and passwords never leak. Faults come from a real redis-server where it can make
//! them (CLIENT PAUSE, CLIENT KILL, maxmemory) and from fake servers in this module
//! where it cannot (silence, hostile bytes). `timing` holds the tests that measure time
//! or load the CPU; nextest runs them alone.

use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{RedisServer, Reply, read_json, read_reply, send_command, tailrate_bin};

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
        assert!(
            !self.stderr.contains("panicked"),
            "tailrate panicked:\n{}",
            self.stderr
        );
        assert!(
            matches!(self.code, Some(0 | 1 | 130)),
            "exit {:?} (101 is a panic, None a signal)\n{}",
            self.code,
            self.stderr
        );
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
            while let Some(hwm) = std::fs::read_to_string(&status)
                .ok()
                .and_then(|text| status_kb(&text, "VmHWM:"))
            {
                peak = peak.max(hwm);
                thread::sleep(Duration::from_millis(10));
            }
            peak
        });
        Watched {
            child,
            started,
            stdout,
            stderr,
            sampler,
        }
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
                let err =
                    String::from_utf8_lossy(&self.stderr.join().unwrap_or_default()).into_owned();
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
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Runs tailrate to the end (within [`RUN_LIMIT`]).
fn run(args: &[&str]) -> Run {
    Watched::spawn(args).wait(RUN_LIMIT)
}

fn count(test: &Value, key: &str) -> u64 {
    test["counts"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("counts.{key} missing in {}", test["counts"]))
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
    let by_kind: u64 = test["counts"]["errors_by_kind"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(
        by_kind,
        c("errors"),
        "errors_by_kind adds up to errors: {}",
        test["counts"]
    );
    // Finer: what was written ended as a reply, an error, a timeout or still in flight.
    assert_eq!(
        c("intended"),
        c("sent") + c("not_sent"),
        "{}",
        test["counts"]
    );
    if let Some(commands) = test["commands"].as_array().filter(|c| !c.is_empty()) {
        let mut shortfall = 0;
        for cmd in commands {
            let k = |key: &str| count(cmd, key);
            let ended = k("completed") + k("errors") + k("timeouts") + k("not_sent");
            assert!(
                k("intended") >= ended,
                "command {} ended more requests than it intended: {}",
                cmd["command"],
                cmd["counts"]
            );
            shortfall += k("intended") - ended;
        }
        assert_eq!(
            shortfall,
            c("in_flight_at_end"),
            "per-command shortfalls are the requests in flight at the end"
        );
    }
    let accounting_failed = test["checks"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|ch| ch["name"] == "accounting"));
    assert!(
        !accounting_failed,
        "the report flagged its own accounting: {}",
        test["checks"]
    );
}

/// The run's one-line error message (`tailrate: error: ...`).
fn error_line(run: &Run) -> &str {
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("tailrate: error:"))
        .collect();
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
        FakeServer {
            port,
            stop,
            accepted,
            acceptor: Some(acceptor),
        }
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
/// which is answered plainly whatever the behaviour, and the server's introspection
/// (CONFIG, INFO, LATENCY) is refused on every connection, as by a server that does not
/// have it; every write has a timeout, so a
/// peer that stops reading cannot hold the thread for long.
fn serve(
    stream: TcpStream,
    index: usize,
    behaviour: Behaviour,
    first_request: &Mutex<Option<Instant>>,
) -> std::io::Result<()> {
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
        let Reply::Array(argv) = read_reply(&mut reader)? else {
            return Ok(());
        };
        let name = argv
            .first()
            .map(|a| a.to_string().to_ascii_uppercase())
            .unwrap_or_default();
        if name == "CONFIG" || name == "INFO" || name == "LATENCY" || index == 0 {
            out.write_all(b"-ERR unknown command\r\n")?;
            continue;
        }
        served += 1;
        let since_first = first_request
            .lock()
            .unwrap()
            .get_or_insert_with(Instant::now)
            .elapsed();
        match behaviour {
            Behaviour::Silent => {}
            Behaviour::Mixed => {
                let silent = (Duration::from_millis(800)..Duration::from_millis(1100))
                    .contains(&since_first)
                    || since_first > Duration::from_millis(1600);
                if !silent {
                    out.write_all(if served.is_multiple_of(7) {
                        b"-ERR seventh\r\n"
                    } else {
                        b"+OK\r\n"
                    })?;
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
            Behaviour::PushInResp2 => {
                out.write_all(b">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nkey\r\n+OK\r\n")?
            }
            Behaviour::NotResp => {
                out.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")?
            }
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

mod exits;
mod faults;
mod hostile;
mod merge_memory;
mod outage;
mod replay_memory;
mod timing;
mod turned_away;
