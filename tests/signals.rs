//! Ctrl+C and SIGTERM at any moment: while connecting (to a server that accepts and never
//! answers, plain or TLS), while the generator opens its connections, during a run at a
//! high rate, and twice in quick succession. Each time tailrate exits 130 within a
//! second of the first signal and leaves a valid `--json` file with what was measured.
//! SIGHUP and SIGQUIT do the same, and a sweep's exit agrees with what its sweep.json
//! says, also when the signal comes while it writes its files at the end.
//!
//! The second is the bound, not a measured spread: on the 2-core test machine
//! under other builds' load, a single signal took 0.29-0.36 s to an exit (its replies
//! get a 250 ms grace, then the report is written), two signals 0.06-0.08 s, a signal
//! while connecting 5-12 ms. Each case runs three times and prints its times.

use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{RedisServer, Reply, read_json, read_reply, tailrate_bin};

/// The bound on the time from a signal to the exit.
const PROMPT: Duration = Duration::from_secs(1);
/// Longest a case may take to reach the moment it signals, on a loaded machine.
const SETTLE_LIMIT: Duration = Duration::from_secs(20);
/// Runs of each case.
const RUNS: usize = 3;

/// A fake server on 127.0.0.1:0 that accepts every connection. With `answer_first`, the
/// first connection gets `+OK` to AUTH and `-ERR` to anything else (what a server that
/// refuses CONFIG and INFO says); every other connection, or all without it, hears
/// nothing back. Stops accepting on drop.
struct Silent {
    port: u16,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl Silent {
    fn start(answer_first: bool) -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (accepted2, stop2) = (accepted.clone(), stop.clone());
        let acceptor = thread::spawn(move || {
            let mut held = Vec::new();
            while !stop2.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let index = accepted2.fetch_add(1, Ordering::Relaxed);
                        if answer_first && index == 0 {
                            thread::spawn(move || answer(stream));
                        } else {
                            held.push(stream);
                        }
                    }
                    Err(_) => thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        Silent {
            port,
            accepted,
            stop,
            acceptor: Some(acceptor),
        }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.acceptor.take() {
            let _ = h.join();
        }
    }
}

/// `+OK` to AUTH, `-ERR` to every other command, until the peer goes.
fn answer(stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let mut out = &stream;
    let mut reader = BufReader::new(&stream);
    while let Ok(Reply::Array(argv)) = read_reply(&mut reader) {
        let name = argv.first().map(|a| a.to_string().to_ascii_uppercase());
        let reply: &[u8] = if name.as_deref() == Some("AUTH") {
            b"+OK\r\n"
        } else {
            b"-ERR unknown command\r\n"
        };
        if out.write_all(reply).is_err() {
            return;
        }
    }
}

/// A tailrate process whose standard error is kept.
struct Running {
    child: Child,
    stderr: JoinHandle<String>,
}

fn spawn(args: &[&str]) -> Running {
    let mut child = Command::new(tailrate_bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stderr.take().unwrap();
    let stderr = thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    });
    Running { child, stderr }
}

impl Running {
    /// Waits until `ready` holds (polled every 10 ms), failing the test after
    /// [`SETTLE_LIMIT`] or if tailrate ends first.
    fn wait_for(&mut self, what: &str, mut ready: impl FnMut() -> bool) {
        let started = Instant::now();
        while !ready() {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("tailrate ended ({status}) before {what}");
            }
            assert!(started.elapsed() < SETTLE_LIMIT, "never {what}");
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends `signals` (`-INT`, `-TERM`) `gap` apart and returns the exit code, the time
    /// from the first signal to the exit, and standard error. Kills it and fails after
    /// ten times [`PROMPT`].
    fn signal(mut self, signals: &[&str], gap: Duration) -> (Option<i32>, Duration, String) {
        let first = Instant::now();
        for (i, which) in signals.iter().enumerate() {
            if i > 0 {
                thread::sleep(gap);
            }
            // Another signal may find it gone already: that is a prompt exit, not an error.
            let _ = Command::new("kill")
                .args([*which, &self.child.id().to_string()])
                .stderr(Stdio::null())
                .status();
        }
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if first.elapsed() > PROMPT * 10 {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "still running {:?} after {signals:?}\n{}",
                    first.elapsed(),
                    self.stderr.join().unwrap_or_default()
                );
            }
            thread::sleep(Duration::from_millis(1));
        };
        let took = first.elapsed();
        (status.code(), took, self.stderr.join().unwrap_or_default())
    }
}

/// Every intended request ended in exactly one count.
fn assert_balanced(test: &Value) {
    let c = |k: &str| test["counts"][k].as_u64().unwrap();
    assert_eq!(
        c("intended"),
        c("completed") + c("errors") + c("timeouts") + c("not_sent") + c("in_flight_at_end"),
        "{}",
        test["counts"]
    );
}

/// Checks one case's end: 130, within [`PROMPT`], no panic.
fn assert_prompt(case: &str, code: Option<i32>, took: Duration, stderr: &str) {
    assert!(!stderr.contains("panicked"), "{case}: {stderr}");
    assert_eq!(code, Some(130), "{case}: {stderr}");
    assert!(
        took < PROMPT,
        "{case}: exited {took:?} after the signal\n{stderr}"
    );
}

mod timing {
    use super::*;

    #[test]
    fn a_signal_while_connecting_exits_130_at_once_with_a_json() {
        let silent = Silent::start(false);
        let port = silent.port.to_string();
        let dir = tempfile::tempdir().unwrap();
        let mut times = Vec::new();
        for (transport, extra) in [("plain", &[][..]), ("tls", &["--tls", "--insecure"][..])] {
            for which in ["-INT", "-TERM"] {
                for run in 0..RUNS {
                    let json = dir.path().join(format!("{transport}{which}{run}.json"));
                    let mut args = vec![
                        "-p",
                        &port,
                        "--connect-timeout",
                        "60s",
                        "-t",
                        "get",
                        "-n",
                        "100",
                        "--no-progress",
                        "--json",
                        json.to_str().unwrap(),
                    ];
                    args.extend_from_slice(extra);
                    let before = silent.accepted();
                    let mut running = spawn(&args);
                    running.wait_for("connected", || silent.accepted() > before);
                    // Well into the wait for an answer that never comes.
                    thread::sleep(Duration::from_millis(300));
                    let (code, took, stderr) = running.signal(&[which], Duration::ZERO);
                    let case = format!("{transport} {which} run {run}");
                    assert_prompt(&case, code, took, &stderr);
                    assert!(stderr.contains("interrupted while connecting"), "{stderr}");
                    let report = read_json(&json);
                    assert_eq!(report["tests"], Value::Array(vec![]), "{case}");
                    times.push(took);
                }
            }
        }
        eprintln!("signal while connecting, to exit: {times:?}");
    }

    /// A shard waiting for its `--start-at` instant ends on Ctrl+C at once, not at the
    /// start (it slept up to the instant in one piece and ended 19 s after the signal).
    #[test]
    fn a_signal_while_a_shard_waits_for_its_start_exits_130_at_once() {
        let server = RedisServer::start();
        let port = server.port().to_string();
        let start = std::time::SystemTime::now() + Duration::from_secs(30);
        let at = start
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            .to_string();
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("shard.json");
        let running = spawn(&[
            "-p",
            &port,
            "-t",
            "get",
            "--rate",
            "1000",
            "--duration",
            "1s",
            "--seed",
            "1",
            "--shard",
            "0/2",
            "--start-at",
            &at,
            "--no-progress",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ]);
        // Well into the wait: connections open in milliseconds, the start is 30 s away.
        thread::sleep(Duration::from_millis(1000));
        let (code, took, stderr) = running.signal(&["-INT"], Duration::ZERO);
        assert_prompt("waiting for --start-at", code, took, &stderr);
        // Its report is the shard's, of nothing: a zero-length window, said to be empty,
        // not a rate of 0 that reads as a measurement.
        let report = read_json(&json);
        let test = &report["tests"][0];
        assert_eq!(report["settings"]["shard"]["index"], 0, "{report}");
        assert_eq!(test["measured_secs"], 0.0, "{test}");
        assert_eq!(test["stopped_early"], "interrupted", "{test}");
        assert_eq!(test["counts"]["sent"], 0, "{test}");
        assert_eq!(test["valid"], false, "{test}");
        let rate = crate::harness::check(test, "achieved_rate");
        assert!(
            rate["detail"].as_str().unwrap().starts_with(
                "nothing measured: the run ended (interrupted) before its measured window began"
            ),
            "{rate}"
        );
    }

    /// A sweep, a live compare and tune ask the server about itself first, as a run does:
    /// Ctrl+C there ends them too, before anything is measured.
    #[test]
    fn a_signal_while_a_sweep_compare_or_tune_connects_exits_130_at_once() {
        let silent = Silent::start(false);
        let port = silent.port.to_string();
        let address = format!("127.0.0.1:{port}");
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().to_str().unwrap();
        let cases: [(&str, Vec<&str>); 3] = [
            (
                "sweep",
                vec!["sweep", "-p", &port, "--rates", "1000", "--out", out],
            ),
            (
                "compare --live",
                vec![
                    "compare", "--live", "--a", &address, "--b", &address, "--rate", "1000",
                ],
            ),
            ("tune", vec!["tune", "-p", &port]),
        ];
        for (case, mut args) in cases {
            args.extend(["--connect-timeout", "60s", "-t", "get", "--no-progress"]);
            let before = silent.accepted();
            let mut running = spawn(&args);
            running.wait_for("connected", || silent.accepted() > before);
            thread::sleep(Duration::from_millis(300));
            let (code, took, stderr) = running.signal(&["-INT"], Duration::ZERO);
            assert_prompt(case, code, took, &stderr);
            assert!(
                stderr.contains("interrupted while connecting"),
                "{case}: {stderr}"
            );
        }
    }

    #[test]
    fn a_signal_while_the_generator_opens_its_connections_exits_130_with_a_json() {
        // The first connection (the probe's) is answered; the generator's AUTH is not.
        let dir = tempfile::tempdir().unwrap();
        let mut times = Vec::new();
        for run in 0..RUNS {
            let fake = Silent::start(true);
            let port = fake.port.to_string();
            let json = dir.path().join(format!("{run}.json"));
            let mut running = spawn(&[
                "-p",
                &port,
                "-a",
                "pw",
                "-c",
                "4",
                "--connect-timeout",
                "60s",
                "--no-server-stats",
                "-t",
                "get",
                "-n",
                "100",
                "--no-progress",
                "--json",
                json.to_str().unwrap(),
            ]);
            running.wait_for("the generator connected", || fake.accepted() >= 2);
            thread::sleep(Duration::from_millis(300));
            let (code, took, stderr) = running.signal(&["-INT"], Duration::ZERO);
            assert_prompt(&format!("run {run}"), code, took, &stderr);
            let test = &read_json(&json)["tests"][0];
            assert_eq!(test["stopped_early"], "interrupted", "{test}");
            assert_eq!(test["counts"]["completed"], 0, "{}", test["counts"]);
            assert_balanced(test);
            times.push(took);
        }
        eprintln!("signal while the generator connects, to exit: {times:?}");
    }

    /// A run at 2M requests a second (above what the server or the generator can do, so
    /// the backlog is full and the scheduler busy), signalled once it is measuring.
    fn high_rate_case(signals: &[&str], gap: Duration) -> Vec<Duration> {
        let server = RedisServer::start();
        let port = server.port().to_string();
        let dir = tempfile::tempdir().unwrap();
        let mut times = Vec::new();
        for run in 0..RUNS {
            let json = dir.path().join(format!("{run}.json"));
            server.reset_stats();
            let mut running = spawn(&[
                "-p",
                &port,
                "-c",
                "4",
                "--rate",
                "2M",
                "--duration",
                "60s",
                "-t",
                "get",
                "--no-progress",
                "--json",
                json.to_str().unwrap(),
            ]);
            running.wait_for("measuring", || {
                server.commandstats().get("get").copied().unwrap_or(0) > 20_000
            });
            let (code, took, stderr) = running.signal(signals, gap);
            assert_prompt(&format!("{signals:?} run {run}"), code, took, &stderr);
            let test = &read_json(&json)["tests"][0];
            assert_eq!(test["stopped_early"], "interrupted", "{test}");
            assert!(
                test["counts"]["completed"].as_u64().unwrap() > 0,
                "{}",
                test["counts"]
            );
            assert_balanced(test);
            times.push(took);
        }
        times
    }

    #[test]
    fn a_signal_at_a_high_rate_exits_130_within_a_second_with_what_was_measured() {
        let times = high_rate_case(&["-INT"], Duration::ZERO);
        eprintln!("one SIGINT at 2M/s, to exit: {times:?}");
    }

    /// SIGHUP (a closed SSH session) and SIGQUIT end a run as SIGTERM does: what was
    /// measured is written and the exit is 130 (they killed it with nothing written).
    #[test]
    fn a_hangup_or_a_quit_writes_what_was_measured_as_sigterm_does() {
        for which in ["-HUP", "-QUIT"] {
            let times = high_rate_case(&[which], Duration::ZERO);
            eprintln!("one SIG{} at 2M/s, to exit: {times:?}", &which[1..]);
        }
    }

    #[test]
    fn two_quick_signals_still_write_what_was_measured() {
        let times = high_rate_case(&["-INT", "-INT"], Duration::from_millis(5));
        eprintln!("two SIGINTs 5 ms apart at 2M/s, to exit: {times:?}");
        let times = high_rate_case(&["-TERM", "-INT"], Duration::from_millis(5));
        eprintln!("SIGTERM then SIGINT 5 ms apart at 2M/s, to exit: {times:?}");
    }

    /// A sweep hung up on while it measures writes sweep.json, marked interrupted.
    #[test]
    fn a_hangup_during_a_sweep_writes_its_report_marked_interrupted() {
        let server = RedisServer::start();
        let port = server.port().to_string();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().to_str().unwrap();
        #[rustfmt::skip]
        let mut running = spawn(&[
            "sweep", "-p", &port, "--rates", "2000", "--duration", "30s", "--warmup", "0s",
            "--seed", "1", "-t", "get", "--no-progress", "--out", out,
        ]);
        running.wait_for("measuring", || {
            server.commandstats().get("get").copied().unwrap_or(0) > 1_000
        });
        let (code, took, stderr) = running.signal(&["-HUP"], Duration::ZERO);
        assert_prompt("sweep -HUP", code, took, &stderr);
        let report = read_json(&dir.path().join("sweep.json"));
        assert_eq!(report["interrupted"], true, "{report}");
        assert_eq!(report["complete"], false, "{report}");
    }

    /// A signal while a sweep writes its files after its last run: the sweep is complete,
    /// the write finishes and the exit is 0, as sweep.json says (it exited 130 beside a
    /// sweep.json saying `complete: true`). The CSV is a FIFO, so each write of the files
    /// waits for a reader: the signal lands inside the final write, after sweep.json and
    /// before the CSV.
    #[test]
    fn a_signal_during_a_sweeps_final_write_exits_as_its_report_says() {
        let server = RedisServer::start();
        // A reader slow to see the end of the step's CSV can take the final one too, and
        // then the window is missed: that attempt is thrown away.
        let (status, stderr, report) = (0..5)
            .find_map(|_| sweep_signalled_in_its_final_write(&server))
            .expect("the final write was never caught in 5 sweeps");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_eq!(
            status.code() == Some(130),
            report["interrupted"] == true,
            "exit {status} beside interrupted {}\n{stderr}",
            report["interrupted"]
        );
        assert_eq!(status.code(), Some(0), "{stderr}");
        assert_eq!(report["complete"], true, "{report}");
        assert_eq!(report["interrupted"], false, "{report}");
    }

    /// One sweep of one step whose CSV is a FIFO, sent SIGINT while its final write waits
    /// to open the CSV: its exit, standard error and sweep.json; `None` when the reader of
    /// the step's CSV also took the final one, so that no write was waiting.
    fn sweep_signalled_in_its_final_write(
        server: &RedisServer,
    ) -> Option<(std::process::ExitStatus, String, Value)> {
        let port = server.port().to_string();
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("sweep.csv");
        let json = dir.path().join("sweep.json");
        let made = Command::new("mkfifo").arg(&csv).status().unwrap();
        assert!(made.success(), "mkfifo failed");
        let read_csv = || {
            let csv = csv.clone();
            thread::spawn(move || String::from_utf8(std::fs::read(&csv).unwrap()).unwrap())
        };
        let step_write = read_csv();
        #[rustfmt::skip]
        let mut running = spawn(&[
            "sweep", "-p", &port, "--rates", "1000", "--duration", "300ms", "--warmup",
            "100ms", "--seed", "1", "-t", "get", "--no-progress", "--out",
            dir.path().to_str().unwrap(),
        ]);
        let complete = || {
            std::fs::read(&json).ok().is_some_and(|bytes| {
                serde_json::from_slice::<Value>(&bytes).is_ok_and(|r| r["complete"] == true)
            })
        };
        running.wait_for("the final write", complete);
        // Ends once the step's CSV is read, or the final one with it.
        let step_csv = step_write.join().unwrap();
        let writes = step_csv.matches("\"kind\",").count();
        if writes != 1 {
            let _ = running.child.kill();
            let _ = running.child.wait();
            return None;
        }
        // No reader is left: tailrate waits to open the CSV of its final write.
        let _ = Command::new("kill")
            .args(["-INT", &running.child.id().to_string()])
            .status();
        thread::sleep(Duration::from_millis(200));
        let final_write = read_csv();
        let started = Instant::now();
        let status = loop {
            if let Some(status) = running.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > SETTLE_LIMIT {
                let _ = running.child.kill();
                panic!("still running {SETTLE_LIMIT:?} after the signal");
            }
            thread::sleep(Duration::from_millis(10));
        };
        let final_csv = final_write.join().unwrap();
        assert_eq!(final_csv.matches("\"kind\",").count(), 1, "{final_csv}");
        let stderr = running.stderr.join().unwrap_or_default();
        Some((status, stderr, read_json(&json)))
    }
}

/// `-q` after Ctrl+C: the one line a quiet run prints says it was cut short.
#[test]
fn a_quiet_run_interrupted_says_so_on_its_one_line() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let mut child = Command::new(tailrate_bin())
        .args([
            "-p",
            &port,
            "-t",
            "get",
            "--rate",
            "1000",
            "--duration",
            "20s",
            "--no-progress",
            "-q",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Well into the measured window (connecting takes milliseconds; warm-up is off by default).
    thread::sleep(Duration::from_millis(1500));
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < PROMPT * 10,
            "still running after SIGINT"
        );
        thread::sleep(Duration::from_millis(10));
    }
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{stdout}");
    assert!(
        stdout.contains("GET: ") && stdout.contains("(stopped early: interrupted)"),
        "{stdout}"
    );
}
