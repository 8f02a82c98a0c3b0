//! Open loop against a real redis-server: latency from the intended send time,
//! accounting, outputs, faults; and (in `timing`, run alone) the measurements that
//! prove it: coordinated omission under stalls, M/D/1 queueing, rate accuracy.

use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{
    RedisServer, assert_success, run_tailrate, run_tailrate_json, skip, tailrate_bin, this_test,
};

/// Runs tailrate with `--json` and returns (stdout, report).
fn run_json(args: &[&str]) -> (String, Value) {
    run_tailrate_json(args)
}

fn ms(test: &Value, metric: &str, field: &str) -> f64 {
    test["latency"][metric][field]
        .as_f64()
        .unwrap_or_else(|| panic!("{metric}.{field} missing"))
        / 1e6
}

fn assert_balanced(test: &Value) {
    let c = &test["counts"];
    let n = |k: &str| c[k].as_u64().unwrap();
    assert_eq!(
        n("intended"),
        n("completed") + n("errors") + n("timeouts") + n("not_sent") + n("in_flight_at_end"),
        "accounting: {c}"
    );
}

#[test]
fn an_open_loop_run_reports_four_metrics_and_balances_its_books() {
    let server = RedisServer::start();
    let (stdout, report) = run_json(&[
        "-p",
        &server.port().to_string(),
        "--rate",
        "2k",
        "--seed",
        "1",
        "--duration",
        "1s",
        "--warmup",
        "300ms",
        "-t",
        "get",
        "-c",
        "4",
    ]);
    let test = &report["tests"][0];
    for metric in ["response", "service", "lag", "queue_wait"] {
        assert!(
            test["latency"][metric]["count"].as_u64().unwrap() > 1500,
            "{metric}"
        );
        assert!(
            !test["latency"][metric]["hdr_v2_base64"]
                .as_str()
                .unwrap()
                .is_empty()
        );
    }
    assert_balanced(test);
    // Warm-up requests are sent but not counted: about 2000 measured, not 2600 (seeded: an
    // unseeded count over 1 s at 2k/s has a standard deviation of 45, and left this band
    // about one run in 40).
    let intended = test["counts"]["intended"].as_u64().unwrap();
    assert!((1900..=2100).contains(&intended), "intended {intended}");
    assert!(
        stdout.contains("latency by metric") && stdout.contains("self-checks:"),
        "{stdout}"
    );
    assert_eq!(report["settings"]["arrival"], "poisson");
    assert!(report["seed"].as_u64().is_some());
    // What the seeded draw offered, against the target: the schedule's own count over
    // the measured window, in the JSON and in the answer block.
    let offered = test["offered_rate_per_sec"].as_f64().unwrap();
    let measured = test["measured_secs"].as_f64().unwrap();
    assert!(
        (offered - intended as f64 / measured).abs() < 1e-6 * offered,
        "offered {offered} against {intended} in {measured} s"
    );
    let excess = (offered / 2000.0 - 1.0) * 100.0;
    let line = format!("  offered {offered:.1}/s by the schedule ({excess:+.2}% ");
    assert!(stdout.contains(&line), "{line:?} not in\n{stdout}");
}

#[test]
fn open_loop_csv_keeps_redis_benchmarks_columns_first() {
    let server = RedisServer::start();
    let out = assert_success(&run_tailrate(&[
        "-p",
        &server.port().to_string(),
        "--rate",
        "1000",
        "--duration",
        "500ms",
        "-t",
        "set,get",
        "--csv",
    ]));
    let mut lines = out.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with(
        r#""test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms","target_rps""#
    ));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2);
    assert!(rows[0].starts_with("\"SET\"") && rows[1].starts_with("\"GET\""));
    assert_eq!(rows[0].split(',').count(), header.split(',').count());
}

#[test]
fn the_hdr_log_holds_one_line_per_interval_and_metric() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let hlog = dir.path().join("run.hlog");
    // Seeded: an unseeded Poisson count over 2 s at 1000/s has a standard deviation of
    // 45, and the hlog's total is checked against the run's own completed count anyway.
    let (_, report) = run_json(&[
        "-p",
        &server.port().to_string(),
        "--rate",
        "1000",
        "--seed",
        "1",
        "--duration",
        "2s",
        "-t",
        "get",
        "-q",
        "--hdr-log",
        hlog.to_str().unwrap(),
    ]);
    let completed = report["tests"][0]["counts"]["completed"].as_u64().unwrap();
    let bytes = std::fs::read(&hlog).unwrap();
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let mut response_intervals = 0;
    let mut total = 0u64;
    for entry in IntervalLogIterator::new(&bytes) {
        if let LogEntry::Interval(i) = entry.unwrap()
            && i.tag().map(|t| t.as_str()) == Some("GET.response")
        {
            response_intervals += 1;
            let mut raw = base64_decode(i.encoded_histogram());
            let h: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
                .deserialize(&mut raw.as_slice())
                .unwrap();
            total += h.len();
            raw.clear();
        }
    }
    // A 2 s run's intervals are a tenth of it: 0.2 s, ten of them (one more when the
    // window's end falls past the tenth).
    assert!(
        (10..=11).contains(&response_intervals),
        "{response_intervals} intervals"
    );
    // Every measured reply is in exactly one interval; the seeded schedule plans ~2000.
    assert_eq!(total, completed, "values in the hlog vs completed requests");
    assert!((1800..=2200).contains(&total), "{total} values");
}

/// The histogram of `metric` embedded in a test's JSON report.
fn histogram(test: &Value, metric: &str) -> hdrhistogram::Histogram<u64> {
    let raw = base64_decode(test["latency"][metric]["hdr_v2_base64"].as_str().unwrap());
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut raw.as_slice())
        .unwrap()
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

#[test]
fn ctrl_c_ends_the_run_and_still_writes_what_was_measured() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let child = Command::new(tailrate_bin())
        .args([
            "-p",
            &server.port().to_string(),
            "--rate",
            "1000",
            "--duration",
            "60s",
            "-t",
            "get",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_millis(1500));
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "it stopped promptly"
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let test = &report["tests"][0];
    let completed = test["counts"]["completed"].as_u64().unwrap();
    assert!(
        (700..=2500).contains(&completed),
        "{completed} completed in ~1.5 s at 1000/s"
    );
    assert_eq!(test["stopped_early"], "interrupted");
    assert_balanced(test);
    assert!(String::from_utf8_lossy(&out.stdout).contains("GET: "));
}

#[test]
fn a_server_restarted_mid_run_is_reconnected_and_the_gap_shows_in_the_tail() {
    let mut server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let child = Command::new(tailrate_bin())
        .args([
            "-p",
            &port,
            "--rate",
            "1000",
            "--duration",
            "4s",
            "-c",
            "4",
            "-t",
            "get",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_millis(1000));
    server.kill();
    thread::sleep(Duration::from_millis(500));
    server.restart_same_port();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let test = &report["tests"][0];
    assert_balanced(test);
    let c = &test["counts"];
    // About 3.5 s of the 4 s had a server: most requests completed, after the restart too.
    assert!(c["completed"].as_u64().unwrap() > 3000, "{c}");
    // Requests intended while the server was down waited for the reconnect: the tail shows the ~0.5 s gap.
    assert!(
        ms(test, "response", "max_ns") > 300.0,
        "max {} ms",
        ms(test, "response", "max_ns")
    );
    let server_gets = server.commandstats().get("get").copied().unwrap_or(0);
    assert!(
        server_gets > 1500,
        "the restarted server got {server_gets} GETs"
    );
}

/// Timing tests: each runs alone (see .config/nextest.toml) and states its tolerance.
mod timing {
    use super::*;

    /// Issues `CLIENT PAUSE pause_ms ALL` at each offset from `start`; returns when the last is sent.
    fn pause_at(
        server_addr: String,
        start: Instant,
        offsets: Vec<Duration>,
        pause_ms: u64,
    ) -> thread::JoinHandle<()> {
        thread::spawn(move || {
            for offset in offsets {
                let when = start + offset;
                if let Some(wait) = when.checked_duration_since(Instant::now()) {
                    thread::sleep(wait);
                }
                let reply = super::super::harness::send_command(
                    &server_addr,
                    &["CLIENT", "PAUSE", &pause_ms.to_string(), "ALL"],
                )
                .unwrap();
                assert_eq!(reply.to_string(), "OK");
            }
        })
    }

    fn spawn_json(args: &[&str], json: &std::path::Path) -> std::process::Child {
        Command::new(tailrate_bin())
            .args(args)
            .args(["--json", json.to_str().unwrap(), "-q"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn finish(child: std::process::Child, json: &std::path::Path) -> Value {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
        report["tests"][0].clone()
    }

    /// Coordinated omission, measured on a real server.
    ///
    /// Constant arrivals at R = 2000/s for T = 4 s (after 0.5 s of warm-up), and three
    /// `CLIENT PAUSE 200 ALL` stalls inside the window. A request arriving `t` into a
    /// stall of length S waits about `S - t`, so the fraction of requests whose response
    /// time exceeds x (x < S) is `n (S - x) / T`, and the q-quantile is
    /// `x_q = S - (1 - q) T / n`: p90 = 67 ms, p99 = 187 ms, p99.9 = 199 ms for S = 200 ms.
    /// Tolerances: at `--hz 100` a pause lasts S to S + 10 ms. After a stall the
    /// R (S + 10 ms) queued requests drain over c connections with one request in flight
    /// each, at c / rtt per second while R more arrive: that takes
    /// `drain = R (S + 10 ms) / (c / rtt - R)`, and every request caught in it waits up
    /// to that much longer. `rtt` is the run's own service-time p90 (so a loaded machine
    /// widens the bound by what it measurably costs). Each measured percentile must lie
    /// in [x_q(S) - 5 ms, x_q(S + 10 ms) + drain + 5 ms].
    ///
    /// A GET on loopback takes ~0.1 ms, so the backlog drains in ~15 ms. When the host is
    /// so loaded that the run's own service p90 puts the drain over [`MAX_DRAIN_MS`]
    /// (seen in CI: 1.9 ms, a 187 ms drain), the stalls are no longer the only thing
    /// shaping the tail and the bound says little: such a run is repeated (at most
    /// [`STALL_ATTEMPTS`] times) and, if every run was that slow, recorded as skipped.
    #[test]
    fn open_loop_percentiles_match_the_stall_pattern_and_closed_loop_hides_it() {
        let server = RedisServer::builder().arg("--hz", "100").start();
        let port = server.port().to_string();
        let dir = tempfile::tempdir().unwrap();
        let (stall_ms, stalls, window_s) = (200.0, 3.0, 4.0);
        let offsets = vec![
            Duration::from_millis(1300),
            Duration::from_millis(2300),
            Duration::from_millis(3300),
        ];

        let (rate, connections) = (2000.0, 8.0);
        let mut open = None;
        let mut slowest_rtt_ms = 0.0f64;
        for attempt in 1..=STALL_ATTEMPTS {
            let json = dir.path().join(format!("open-{attempt}.json"));
            let start = Instant::now();
            let child = spawn_json(
                &[
                    "-p",
                    &port,
                    "--rate",
                    "2000",
                    "--arrival",
                    "constant",
                    "--duration",
                    "4s",
                    "--warmup",
                    "500ms",
                    "-c",
                    "8",
                    "--max-inflight",
                    "1",
                    "-t",
                    "get",
                ],
                &json,
            );
            pause_at(server.addr(), start, offsets.clone(), 200)
                .join()
                .unwrap();
            let run = finish(child, &json);
            assert_balanced(&run);
            assert_eq!(run["counts"]["not_sent"], 0);
            let rtt_s = ms(&run, "service", "p90_ns") / 1000.0;
            let drain_ms =
                1000.0 * rate * (stall_ms + 10.0) / 1000.0 / (connections / rtt_s - rate);
            if drain_ms > 0.0 && drain_ms < MAX_DRAIN_MS {
                open = Some((run, drain_ms));
                break;
            }
            slowest_rtt_ms = slowest_rtt_ms.max(rtt_s * 1000.0);
            eprintln!(
                "attempt {attempt} disturbed: service p90 {:.3} ms, so a stall's backlog takes \
                 {drain_ms:.0} ms to drain (limit {MAX_DRAIN_MS} ms)",
                rtt_s * 1000.0
            );
        }
        let Some((open, drain_ms)) = open else {
            skip(
                &this_test(),
                &format!(
                    "stall pattern not checked: in all {STALL_ATTEMPTS} runs the machine was too \
                     slow to drain a stall's backlog within {MAX_DRAIN_MS} ms (service p90 up to \
                     {slowest_rtt_ms:.3} ms for a GET on loopback)"
                ),
            );
            return;
        };
        let expected = |q: f64, s: f64| s - (1.0 - q) * window_s * 1000.0 / stalls;
        for (field, q) in [("p90_ns", 0.90), ("p99_ns", 0.99), ("p99_9_ns", 0.999)] {
            let measured = ms(&open, "response", field);
            let (low, high) = (
                expected(q, stall_ms) - 5.0,
                expected(q, stall_ms + 10.0) + drain_ms + 5.0,
            );
            assert!(
                (low..=high).contains(&measured),
                "response {field}: {measured:.1} ms, expected {low:.1}..{high:.1} ms"
            );
        }
        // With one request in flight per connection, only the (at most 8) requests written
        // to the connections once a stall has begun see it in their service time: 24 of
        // 8000 is 0.3%, so the service-time p99 is a normal request's, where one that saw
        // a stall would be most of its 200 ms. A normal request's is 0.1 ms on a quiet
        // machine and was 11.8 ms on a loaded CI host, so the bound is a quarter of the
        // stall: far above any host's weather, far below what a stall gives.
        let (service_p99, response_p99) = (
            ms(&open, "service", "p99_ns"),
            ms(&open, "response", "p99_ns"),
        );
        assert!(
            service_p99 < stall_ms / 4.0 && response_p99 > 150.0,
            "service p99 {service_p99:.2} ms vs response p99 {response_p99:.1} ms"
        );

        // The same stalls against a closed loop: each connection loses one request to each
        // stall and then waits, so the stall is 24 samples among hundreds of thousands.
        let json = dir.path().join("closed.json");
        let start = Instant::now();
        let child = spawn_json(
            &["-p", &port, "--duration", "4s", "-c", "8", "-t", "get"],
            &json,
        );
        pause_at(server.addr(), start, offsets, 200).join().unwrap();
        let closed = finish(child, &json);
        let closed_p99 = ms(&closed, "response", "p99_ns");
        assert!(
            closed_p99 * 10.0 < response_p99,
            "closed-loop p99 {closed_p99:.2} ms vs open-loop p99 {response_p99:.1} ms"
        );
        assert!(
            ms(&closed, "response", "max_ns") >= stall_ms - 5.0,
            "the closed loop did see the stalls, in its max only"
        );
    }

    /// Pollaczek-Khinchine on a real server. One connection with `--max-inflight 1`
    /// and a workload of `DEBUG SLEEP 0.001` is a single server with a (nearly) fixed
    /// service time `s`: each request occupies the connection for the server's sleep plus
    /// the round trip, and arrivals that find it busy wait in the client's queue, still
    /// timed from their intended time. (With many connections the server would take
    /// several queued requests per event-loop pass and write their replies together at
    /// its end: a batch queue, not M/D/1.) `s` and its variance `v` are measured first by
    /// the same connection sending back to back. Under Poisson arrivals at utilisation
    /// `rho = lambda s` the mean response time is `s + lambda (v + s^2) / (2 (1 - rho))`;
    /// with `v = 0` that is M/D/1's `s (1 + rho / (2 (1 - rho)))`. Tolerance 15%: at
    /// rho = 0.8 the queue's correlation time is ~25 s, so 15 s holds ~600 independent
    /// stretches and the mean's standard error is ~5%.
    ///
    /// The model assumes the service time is fixed. On this VM the whole machine stalls
    /// now and then for tens of milliseconds; one 100 ms stall adds ~2 X^2 = 20,000
    /// ms-requests of wait at rho 0.8, i.e. +65% on a 15 s run's mean (seen: one run in
    /// three at 12 s, with a service-time cv^2 of 0.07-0.13 instead of ~0.005). Such a
    /// run breaks the model's premise rather than testing the tool, and it shows in the
    /// run's own numbers: a service time or a schedule lag of more than ten service
    /// times, which a 1 ms sleep on an undisturbed machine never has, or a service time
    /// that is no longer fixed (cv^2 over [`MAX_SERVICE_CV2`]). Those runs are
    /// set aside and repeated (at most [`PK_ATTEMPTS`] times, each printed). Stalls
    /// shorter than that limit, many of them, can still move a run's mean past 15%, so an
    /// undisturbed run that misses is repeated too: one run must match, and two misses
    /// with no match fail (a tool whose timing is off misses in every run). When the host
    /// stalls in every attempt (seen on busy hours of this VM at rho 0.8: five 15 s runs
    /// in a row with service cv^2 0.09-0.19 and a mean response of 6-51 ms where 3.8 ms
    /// is due), or in all but one that missed, that utilisation cannot be tested on this
    /// machine at that time: the test records it as skipped (`harness::skip`, listed by
    /// `scripts/test` after the run) rather than count it as a failure of the tool, or as
    /// a pass.
    #[test]
    fn poisson_arrivals_on_a_fixed_service_time_match_pollaczek_khinchine() {
        let tested = pollaczek_khinchine_holds_at(&[(0.5, "5s"), (0.8, "15s")]);
        eprintln!("Pollaczek-Khinchine tested at utilisations {tested:?}");
    }

    /// Runs per utilisation before a disturbed machine has it recorded as skipped.
    const PK_ATTEMPTS: usize = 5;
    /// Runs of the stall test before it is recorded as skipped.
    const STALL_ATTEMPTS: usize = 3;
    /// The longest backlog drain under which the stall pattern is checked.
    const MAX_DRAIN_MS: f64 = 100.0;
    /// Largest service-time cv^2 of a run that still has a fixed service time: ~0.005 on
    /// a quiet machine, 0.07-0.26 in the runs the machine's load disturbed.
    const MAX_SERVICE_CV2: f64 = 0.03;

    /// Checks the model at each utilisation that gets an undisturbed run and returns
    /// those; records each one that gets none as skipped.
    fn pollaczek_khinchine_holds_at(utilisations: &[(f64, &str)]) -> Vec<f64> {
        let server = RedisServer::builder()
            .arg("--enable-debug-command", "yes")
            .start();
        let port = server.port().to_string();
        let calibration = run_json(&[
            "-p", &port, "-c", "1", "-n", "500", "DEBUG", "SLEEP", "0.001",
        ])
        .1;
        let service = histogram(&calibration["tests"][0], "service");
        let s_ms = service.mean() / 1e6;
        assert!(
            (1.0..3.0).contains(&s_ms),
            "DEBUG SLEEP 0.001 takes {s_ms:.3} ms"
        );

        let mut tested = Vec::new();
        for &(rho, duration) in utilisations {
            let lambda_per_ms = rho / s_ms;
            let rate = format!("{:.1}", lambda_per_ms * 1000.0);
            // Spin pacing keeps the generator's thread awake (no wake-up latency per reply).
            let args = [
                "-p",
                &port,
                "--rate",
                &rate,
                "--duration",
                duration,
                "--warmup",
                "500ms",
                "-c",
                "1",
                "--max-inflight",
                "1",
                "--pacing",
                "spin",
                "DEBUG",
                "SLEEP",
                "0.001",
            ];
            let disturbed_above_ms = 10.0 * s_ms;
            // What the disturbed attempts saw, for the skip's reason: the largest service
            // time and schedule lag, and the range of the service time's cv^2.
            let (mut worst_ms, mut cv2_range) = (0.0f64, (f64::INFINITY, 0.0f64));
            // Undisturbed runs that missed the model, each in words.
            let mut misses = Vec::new();
            let mut held = false;
            for attempt in 1..=PK_ATTEMPTS {
                let test = run_json(&args).1["tests"][0].clone();
                assert_balanced(&test);
                let (service_max, lag_max) =
                    (ms(&test, "service", "max_ns"), ms(&test, "lag", "max_ns"));
                let service = histogram(&test, "service");
                let cv2 = (service.stdev() / service.mean()).powi(2);
                if service_max > disturbed_above_ms
                    || lag_max > disturbed_above_ms
                    || cv2 > MAX_SERVICE_CV2
                {
                    worst_ms = worst_ms.max(service_max).max(lag_max);
                    cv2_range = (cv2_range.0.min(cv2), cv2_range.1.max(cv2));
                    eprintln!(
                        "rho {rho}: attempt {attempt} disturbed (service max {service_max:.1} ms, lag max {lag_max:.1} ms, limit {disturbed_above_ms:.1} ms; service cv^2 {cv2:.3}, limit {MAX_SERVICE_CV2}); mean response {:.3} ms",
                        ms(&test, "response", "mean_ns")
                    );
                    continue;
                }
                // The service time under load, measured in the same run: a request's time
                // on the connection can grow a little when the generator is busy, and at
                // rho = 0.8 the wait is so sensitive to it (1 / (1 - rho)) that the
                // calibration is not enough.
                let (s_run, v_run) = (service.mean() / 1e6, service.stdev().powi(2) / 1e12);
                let rho_run = lambda_per_ms * s_run;
                assert!(
                    rho_run < 0.95,
                    "utilisation {rho_run:.2}: the server was slower under load than calibrated ({s_run:.3} vs {s_ms:.3} ms)"
                );
                let predicted =
                    s_run + lambda_per_ms * (v_run + s_run * s_run) / (2.0 * (1.0 - rho_run));
                let md1 = s_ms * (1.0 + rho / (2.0 * (1.0 - rho)));
                let measured = ms(&test, "response", "mean_ns");
                let seen = format!(
                    "rho {rho} ({rho_run:.3} as run, attempt {attempt}): mean response {measured:.3} ms, Pollaczek-Khinchine {predicted:.3} ms ({:+.1}%; M/D/1 at calibration {md1:.3} ms; s {s_ms:.3} ms, {s_run:.3} ms as run, cv^2 {:.3})",
                    (measured / predicted - 1.0) * 100.0,
                    v_run / (s_run * s_run)
                );
                eprintln!("{seen}");
                if (measured / predicted - 1.0).abs() <= 0.15 {
                    held = true;
                    break;
                }
                misses.push(seen);
            }
            if held {
                tested.push(rho);
                continue;
            }
            assert!(
                misses.len() < 2,
                "the mean response missed Pollaczek-Khinchine by more than 15% in {} undisturbed runs and held in none: {}",
                misses.len(),
                misses.join("; ")
            );
            skip(
                &this_test(),
                &format!(
                    "Pollaczek-Khinchine not checked at rho {rho}: the machine stalled in {} of \
                     {PK_ATTEMPTS} runs, so the model's fixed service time did not hold \
                     (service time or lag up to {worst_ms:.1} ms, limit \
                     {disturbed_above_ms:.1} ms; service cv^2 {:.3}-{:.3}, limit \
                     {MAX_SERVICE_CV2}){}",
                    PK_ATTEMPTS - misses.len(),
                    cv2_range.0,
                    cv2_range.1,
                    misses
                        .first()
                        .map(|m| format!(", and the one run it did not show missed: {m}"))
                        .unwrap_or_default()
                ),
            );
        }
        tested
    }

    /// The server counts what arrived: R x (warm-up + duration) requests, within 1%,
    /// and the report's achieved rate is within 1% of the target. The Poisson run is
    /// seeded: a Poisson count over 2 s at 10k/s has a standard deviation of 0.7% of
    /// itself, so an unseeded schedule alone would leave the 1% band one run in six. The
    /// schedule of seed 1 plans 19,924 measured requests (0.4% under the target).
    #[test]
    fn achieved_rates_are_within_one_percent_of_the_target() {
        let server = RedisServer::start();
        let port = server.port().to_string();
        for (rate, arrival) in [
            (1_000.0, "constant"),
            (10_000.0, "poisson"),
            (50_000.0, "constant"),
        ] {
            server.reset_stats();
            let rate_text = format!("{rate}");
            let (_, report) = run_json(&[
                "-p",
                &port,
                "--rate",
                &rate_text,
                "--arrival",
                arrival,
                "--duration",
                "2s",
                "--warmup",
                "200ms",
                "-c",
                "8",
                "-t",
                "get",
                "--seed",
                "1",
            ]);
            let test = &report["tests"][0];
            let achieved = test["achieved_rate_per_sec"].as_f64().unwrap();
            assert!(
                (achieved / rate - 1.0).abs() <= 0.01,
                "{arrival} {rate}/s: achieved {achieved:.1}/s"
            );
            let seen = server.commandstats().get("get").copied().unwrap_or(0) as f64;
            let expected = rate * 2.2;
            assert!(
                (seen / expected - 1.0).abs() <= 0.01,
                "{arrival} {rate}/s: the server saw {seen} GETs, expected {expected}"
            );
        }
    }
}

/// Sleep pacing wakes on tokio's 1 ms timer wheel and sends what came due meanwhile, so
/// a request is late by up to a millisecond: against a server that answers in tens of
/// microseconds, that lateness is most of every percentile, and the lag check fails
/// naming the percentile it moved most and by how much.
#[test]
fn sleep_pacing_on_a_fast_server_fails_the_lag_check_naming_the_percentile() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let (_, report) = run_json(&[
        "-p",
        &port,
        "--rate",
        "20k",
        "--duration",
        "1s",
        "--pacing",
        "sleep",
        "-t",
        "get",
        "-q",
    ]);
    let test = &report["tests"][0];
    let lag = crate::harness::check(test, "schedule_lag");
    assert_eq!(lag["verdict"], "fail", "{lag}");
    let detail = lag["detail"].as_str().unwrap();
    assert!(
        ["p50", "p90", "p99", "p99.9"]
            .iter()
            .any(|q| detail.contains(&format!("the most, {q}, from"))),
        "{detail}"
    );
    assert!(
        lag["meaning"].as_str().unwrap().contains("--pacing spin"),
        "{lag}"
    );
    assert_eq!(test["valid"], false);
}

/// `--contrast`: its timing test runs alone.
mod contrast {
    mod timing {
        use super::super::*;

        /// `--contrast` against a server that stalls for 200 ms every second: the open loop's
        /// p99 is the stall's (a request arriving `t` into a stall waits `S - t`; with n stalls
        /// in T the p99 is `S - 0.01 T / n`, about 190 ms here), and both closed loops, which
        /// wait through each stall with one request per connection instead of timing it, report
        /// a p99 far below, all in one table.
        #[test]
        fn contrast_sets_the_open_loops_stall_tail_beside_the_closed_loops_that_hide_it() {
            let server = RedisServer::builder().arg("--hz", "100").start();
            let port = server.port().to_string();
            let dir = tempfile::tempdir().unwrap();
            let json = dir.path().join("contrast.json");
            let child = Command::new(tailrate_bin())
                .args([
                    "-p",
                    &port,
                    "--rate",
                    "2000",
                    "--arrival",
                    "constant",
                    "--duration",
                    "3s",
                    "--warmup",
                    "300ms",
                    "-c",
                    "8",
                    "--max-inflight",
                    "1",
                    "-t",
                    "get",
                    "--contrast",
                    "--json",
                ])
                .arg(&json)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // Stalls every second for as long as the three loops run (bounded: 15 at most).
            let addr = server.addr();
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let pauses = {
                let stop = stop.clone();
                thread::spawn(move || {
                    for _ in 0..15 {
                        thread::sleep(Duration::from_millis(1000));
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                        let _ =
                            crate::harness::send_command(&addr, &["CLIENT", "PAUSE", "200", "ALL"]);
                    }
                })
            };
            let out = child.wait_with_output().unwrap();
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            pauses.join().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                stdout.contains("open and closed loop at 2000 requests per second"),
                "{stdout}"
            );
            let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
            let loops = report["contrasts"][0]["loops"].as_array().unwrap();
            let kinds: Vec<&str> = loops.iter().map(|l| l["kind"].as_str().unwrap()).collect();
            assert_eq!(kinds, ["open", "rate-capped", "closed"]);
            let p99 = |i: usize| loops[i]["response_ms"][2].as_f64().unwrap();
            assert!(
                p99(0) >= 150.0,
                "open-loop p99 {:.1} ms, the stalls' is ~190 ms",
                p99(0)
            );
            for i in [1, 2] {
                assert!(
                    p99(i) * 10.0 < p99(0),
                    "{} p99 {:.2} ms beside the open loop's {:.1} ms",
                    kinds[i],
                    p99(i),
                    p99(0)
                );
            }
            // The rate-capped loop was held near the rate; the plain one ran free.
            let achieved = |i: usize| loops[i]["achieved_rate_per_sec"].as_f64().unwrap();
            assert!(achieved(1) < 2200.0, "rate-capped at {:.0}/s", achieved(1));
            assert_eq!(report["tests"].as_array().unwrap().len(), 3);
        }
    }
}

#[test]
fn contrast_without_a_rate_is_a_usage_error_naming_both_flags() {
    let out = run_tailrate(&["-p", "1", "--contrast", "-t", "get", "-n", "10"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--contrast") && stderr.contains("--rate"),
        "{stderr}"
    );
}

/// A server that takes 1 ms a request cannot answer 1500/s on one connection: the backlog
/// grows through the run, in tailrate's queue for the connection the server had not freed
/// (queue wait, part of the on-time response), so the steady-state check names it the
/// server's and passes: the open loop measured what clients offered that load would see.
/// At 300/s it keeps up, and no backlog is named (both far from the capacity, whatever the
/// machine's load). One request in flight keeps the backlog in tailrate's queue, so
/// replies come one by one: a deep pipeline would have the server read hundreds of
/// requests at once and answer them in a few clumps, and a loaded host left 6 of the 40
/// batches with replies (too few to judge).
#[test]
fn the_steady_state_check_passes_a_backlog_the_server_grew_and_says_whose_it_was() {
    let server = RedisServer::builder()
        .arg("--enable-debug-command", "yes")
        .start();
    let port = server.port().to_string();
    let verdict = |rate: &str| {
        let (_, report) = run_json(&[
            "-p",
            &port,
            "--rate",
            rate,
            "--duration",
            "2s",
            "--warmup",
            "0s",
            "-c",
            "1",
            "--max-inflight",
            "1",
            "DEBUG",
            "SLEEP",
            "0.001",
        ]);
        let checks = report["tests"][0]["checks"].as_array().unwrap().clone();
        let check = checks
            .iter()
            .find(|c| c["name"] == "steady_state")
            .unwrap_or_else(|| panic!("no steady_state check: {checks:?}"))
            .clone();
        (
            check["verdict"].as_str().unwrap().to_string(),
            check["detail"].as_str().unwrap().to_string(),
        )
    };
    let (past, detail) = verdict("1500");
    assert_eq!(past, "pass", "{detail}");
    assert!(detail.starts_with("the server's backlog grew:"), "{detail}");
    let (within, detail) = verdict("300");
    assert_eq!(within, "pass", "{detail}");
    assert!(!detail.contains("backlog"), "{detail}");
}

mod rate_cap {
    mod timing {
        use super::super::*;

        /// A rate-capped closed loop on one connection holds its cap when the server's
        /// round trip leaves room for it: then only the limiter's wake-ups decide (with a
        /// 2 ms allowance, late wake-ups on a busy host cost up to 40% of the rate; measured
        /// 4.9-5.05k/s since, on a loaded machine).
        #[test]
        fn a_rate_capped_closed_loop_on_one_connection_holds_its_rate() {
            const NAME: &str = "open_loop::rate_cap::timing::a_rate_capped_closed_loop_on_one_connection_holds_its_rate";
            let server = RedisServer::start();
            // On a loaded host one wake-up late by more than the allowance costs rate, and
            // a clean-clone run at load 5 reached 4212/s once: the best of three attempts
            // must hold (with a 2 ms allowance the best of three was still under 4.5k/s).
            // An attempt counts only where the uncapped loop beside it (--contrast) reached
            // twice the cap: a CI host once held one connection to 3.3k/s round trips, and
            // no limiter can send faster than the replies come.
            let mut seen = Vec::new();
            for _ in 0..3 {
                let (_, report) = run_json(&[
                    "-p",
                    &server.port().to_string(),
                    "-c",
                    "1",
                    "-t",
                    "get",
                    "--rate",
                    "5k",
                    "--duration",
                    "2s",
                    "--warmup",
                    "0s",
                    "--contrast",
                ]);
                let uncapped = report["tests"][2]["achieved_rate_per_sec"]
                    .as_f64()
                    .unwrap();
                assert!(
                    report["tests"][2]["name"]
                        .as_str()
                        .unwrap()
                        .contains("(closed loop)")
                );
                let capped = &report["tests"][1];
                assert!(capped["name"].as_str().unwrap().contains("rate-capped"));
                let achieved = capped["achieved_rate_per_sec"].as_f64().unwrap();
                assert!(
                    achieved <= 5_100.0,
                    "rate-capped at 5000/s sent {achieved:.0}/s"
                );
                if uncapped < 10_000.0 {
                    seen.push(format!(
                        "{achieved:.0}/s (uncapped {uncapped:.0}/s, not judged)"
                    ));
                    continue;
                }
                if achieved >= 4_750.0 {
                    return;
                }
                seen.push(format!("{achieved:.0}/s (uncapped {uncapped:.0}/s)"));
            }
            if seen.iter().all(|s| s.contains("not judged")) {
                skip(
                    NAME,
                    &format!(
                        "one connection's round trips never left room for 5000/s: {}",
                        seen.join(", ")
                    ),
                );
                return;
            }
            panic!(
                "rate-capped at 5000/s achieved {} in three attempts",
                seen.join(", ")
            );
        }
    }
}

/// `--cap-pacing` names how the contrast's rate-capped loop held its rate, and its row
/// says so: memtier's per-connection ticks by default, one shared limiter when asked.
#[test]
fn the_contrast_says_how_its_rate_capped_loop_was_paced() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    for (pacing, says) in [
        (None, "memtier --rate-limiting"),
        (Some("shared"), "one limiter"),
    ] {
        let mut args = vec![
            "-p",
            &port,
            "-c",
            "4",
            "-t",
            "get",
            "--rate",
            "2k",
            "--duration",
            "500ms",
            "--warmup",
            "0s",
            "--contrast",
        ];
        if let Some(p) = pacing {
            args.extend(["--cap-pacing", p]);
        }
        let (_, report) = run_json(&args);
        let capped = &report["contrasts"][0]["loops"][1];
        assert_eq!(capped["kind"], "rate-capped");
        let stands_for = capped["stands_for"].as_str().unwrap();
        assert!(stands_for.contains(says), "{pacing:?}: {stands_for}");
        let achieved = capped["achieved_rate_per_sec"].as_f64().unwrap();
        assert!(
            achieved <= 2_100.0,
            "{pacing:?}: capped at 2000/s sent {achieved:.0}/s"
        );
    }
}
