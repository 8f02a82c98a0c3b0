//! The interval time series against a real redis-server: the JSON `intervals` (and the
//! `.hlog` made from the same histograms) of an open loop, a closed loop and a sweep step
//! tile the run's measured window (starts 0, L, 2L, ...; every length L but a shorter
//! last one; the last ending where the window ends), each holds what its bounds say, and
//! together they hold the run's totals. And a tiny closed loop's window and rate (issue 26).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{RedisServer, assert_success, run_tailrate_json, run_tailrate_with_timeout};

/// Interval length of an open loop of `duration` seconds (a sweep step is one): a tenth
/// of it in whole 50 ms batches, from 100 ms to 1 s.
fn open_loop_interval(duration: f64) -> f64 {
    ((duration * 1000.0 / 10.0 / 50.0).floor().clamp(2.0, 20.0)) * 0.05
}
/// Interval length of a closed loop.
const CLOSED_LOOP_INTERVAL: f64 = 0.25;

/// How far the last interval's end may be from `measured_secs`. Both are the same instant
/// on the measured window's clock, kept in nanoseconds and printed as f64 seconds: they
/// agree to float rounding (about 1e-15 s here). Interval bounds are computed
/// (`start + k * L`) and a reply goes to the interval of its `received` time, so no timer's
/// granularity enters; 1 us is far above the rounding and far below any timer (tokio's is
/// 1 ms), so it tells a computed bound from one taken when a timer fired.
const END_TOLERANCE_SECS: f64 = 1e-6;

fn n(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn describe(intervals: &[Value]) -> String {
    intervals
        .iter()
        .map(|iv| {
            format!(
                "({}, {}, {}+{})",
                f(iv, "start_secs"),
                f(iv, "length_secs"),
                n(iv, "completed"),
                n(iv, "errors")
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Asserts that `report`'s intervals tile its measured window in intervals of `length`
/// seconds and add up to its counts; returns them.
fn assert_tiles(report: &Value, length: f64, what: &str) -> Vec<Value> {
    let intervals = report["intervals"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no intervals"))
        .clone();
    let measured = f(report, "measured_secs");
    let seen = describe(&intervals);
    assert!(!intervals.is_empty(), "{what}: no intervals");
    let last = intervals.len() - 1;
    for (k, iv) in intervals.iter().enumerate() {
        let (start, len) = (f(iv, "start_secs"), f(iv, "length_secs"));
        assert!(
            (start - k as f64 * length).abs() < 1e-9,
            "{what}: interval {k} starts at {start}, not {}: {seen}",
            k as f64 * length
        );
        if k < last {
            assert!(
                (len - length).abs() < 1e-9,
                "{what}: interval {k} is {len} s long, not {length}: {seen}"
            );
        } else {
            assert!(
                len >= 0.0 && len <= length + 1e-9,
                "{what}: the last interval is {len} s long: {seen}"
            );
        }
    }
    let end = f(&intervals[last], "start_secs") + f(&intervals[last], "length_secs");
    assert!(
        (end - measured).abs() <= END_TOLERANCE_SECS,
        "{what}: the last interval ends at {end}, the measured window at {measured}: {seen}"
    );
    let sum = |key: &str| intervals.iter().map(|iv| n(iv, key)).sum::<u64>();
    let counts = &report["counts"];
    assert_eq!(
        (sum("completed"), sum("errors")),
        (n(counts, "completed"), n(counts, "errors")),
        "{what}: the intervals' completed and errors against the run's: {seen}"
    );
    intervals
}

/// Asserts that every whole interval of an open loop at `rate` per second holds about a
/// second's replies: half to one and a half times `rate * L` (constant arrivals; a reply
/// moves to the next interval only when it is late by as much as it is from the bound).
fn assert_each_holds_its_share(intervals: &[Value], rate: f64, length: f64, what: &str) {
    let seen = describe(intervals);
    // A host's pause moves replies into the next interval: up to a quarter second of
    // them, or half the interval when that is more.
    let slack = (0.5 * length).max(0.25);
    for iv in &intervals[..intervals.len() - 1] {
        let completed = n(iv, "completed") as f64;
        assert!(
            completed > 0.0
                && (rate * (length - slack)..=rate * (length + slack)).contains(&completed),
            "{what}: an interval of {length} s at {rate}/s holds {completed}: {seen}"
        );
    }
}

/// The response-time histogram counts and lengths of `tag`'s lines in an `.hlog`.
fn hlog_intervals(path: &Path, tag: &str) -> Vec<(f64, f64, u64)> {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(&bytes) {
        if let LogEntry::Interval(i) = entry.unwrap()
            && i.tag().map(|t| t.as_str()) == Some(tag)
        {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(i.encoded_histogram())
                .unwrap();
            let h: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
                .deserialize(&mut raw.as_slice())
                .unwrap();
            out.push((
                i.start_timestamp().as_secs_f64(),
                i.duration().as_secs_f64(),
                h.len(),
            ));
        }
    }
    out
}

/// Asserts that the `.hlog`'s `tag` lines are the JSON intervals that hold anything: the
/// same histogram counts, the same lengths, one interval length apart (the log keeps
/// milliseconds).
fn assert_hlog_matches(path: &Path, tag: &str, intervals: &[Value], length: f64) {
    let logged = hlog_intervals(path, tag);
    let held: Vec<&Value> = intervals
        .iter()
        .filter(|iv| n(iv, "completed") > 0)
        .collect();
    let counts: Vec<u64> = logged.iter().map(|l| l.2).collect();
    let expected: Vec<u64> = held.iter().map(|iv| n(iv, "completed")).collect();
    assert_eq!(counts, expected, "{tag}: .hlog counts against the JSON's");
    for (l, iv) in logged.iter().zip(&held) {
        assert!(
            (l.1 - f(iv, "length_secs")).abs() < 0.002,
            "{tag}: .hlog length {} against {}",
            l.1,
            f(iv, "length_secs")
        );
    }
    for (a, b) in logged.iter().zip(logged.iter().skip(1)) {
        let gap = b.0 - a.0;
        assert!(
            (gap / length - (gap / length).round()).abs() < 0.002 / length && gap > 0.0,
            "{tag}: .hlog starts {} and {} are not whole intervals apart",
            a.0,
            b.0
        );
    }
}

#[test]
fn open_loop_intervals_tile_the_measured_window_from_the_end_of_warm_up() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let hlog = dir.path().join("run.hlog");
    let (_, report) = run_tailrate_json(&[
        "-p",
        &server.port().to_string(),
        "--rate",
        "5000",
        "--arrival",
        "constant",
        "--duration",
        "3s",
        "--warmup",
        "1s",
        "-t",
        "get",
        "-q",
        "--hdr-log",
        hlog.to_str().unwrap(),
    ]);
    let test = &report["tests"][0];
    let length = open_loop_interval(3.0);
    let intervals = assert_tiles(test, length, "open loop");
    assert_eq!(
        intervals.len(),
        10,
        "3 s of 0.3 s intervals: {}",
        describe(&intervals)
    );
    assert_each_holds_its_share(&intervals, 5000.0, length, "open loop");
    assert_hlog_matches(&hlog, "GET.response", &intervals, length);
}

#[test]
fn open_loop_intervals_of_a_window_not_a_whole_number_of_intervals_end_short() {
    let server = RedisServer::start();
    let (_, report) = run_tailrate_json(&[
        "-p",
        &server.port().to_string(),
        "--rate",
        "2000",
        "--arrival",
        "constant",
        "--duration",
        "2.3s",
        "--warmup",
        "0.3s",
        "--threads",
        "2",
        "-c",
        "4",
        "-t",
        "get",
        "-q",
    ]);
    let test = &report["tests"][0];
    // 2.3 s of 0.2 s intervals: eleven whole, and one of 0.1 s.
    let length = open_loop_interval(2.3);
    let intervals = assert_tiles(test, length, "open loop, 2 threads");
    assert_eq!(intervals.len(), 12, "{}", describe(&intervals));
    let last = f(&intervals[11], "length_secs");
    assert!((last - 0.1).abs() < 1e-6, "last interval {last} s");
    assert_each_holds_its_share(&intervals, 2000.0, length, "open loop");
}

#[test]
fn closed_loop_intervals_tile_the_window_from_the_first_send_to_the_last_reply() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let hlog = dir.path().join("run.hlog");
    let (_, timed) = run_tailrate_json(&[
        "-p",
        &port,
        "--duration",
        "2s",
        "-c",
        "4",
        "-t",
        "get",
        "-q",
        "--hdr-log",
        hlog.to_str().unwrap(),
    ]);
    let intervals = assert_tiles(&timed["tests"][0], CLOSED_LOOP_INTERVAL, "--duration 2s");
    assert!(
        (8..=9).contains(&intervals.len()),
        "{}",
        describe(&intervals)
    );
    assert_hlog_matches(&hlog, "GET.response", &intervals, CLOSED_LOOP_INTERVAL);

    // Several threads and commands: each test's intervals add every thread's, and tile.
    let (_, counted) = run_tailrate_json(&[
        "-p",
        &port,
        "-n",
        "30000",
        "-c",
        "8",
        "--threads",
        "2",
        "-t",
        "set,lpush",
        "-q",
    ]);
    for test in counted["tests"].as_array().unwrap() {
        let name = test["name"].as_str().unwrap().to_string();
        assert_eq!(n(&test["counts"], "completed"), 30000, "{name}");
        assert_tiles(test, CLOSED_LOOP_INTERVAL, &name);
    }
}

#[test]
fn sweep_step_intervals_tile_the_step_after_its_warm_up() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let out = run_tailrate_with_timeout(
        &[
            "sweep",
            "-p",
            &server.port().to_string(),
            "--no-progress",
            "--out",
            dir.path().to_str().unwrap(),
            "--rates",
            "2000,3000",
            "--arrival",
            "constant",
            "--duration",
            "2s",
            "--warmup",
            "0.5s",
            "--settle",
            "0s",
            "-t",
            "get",
        ],
        Duration::from_secs(60),
    );
    assert_success(&out);
    let bytes = std::fs::read(dir.path().join("sweep.json")).unwrap();
    let sweep: Value = serde_json::from_slice(&bytes).unwrap();
    let steps: Vec<&Value> = sweep["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "step")
        .collect();
    assert_eq!(steps.len(), 2);
    for step in steps {
        let rate = f(step, "target_rate_per_sec");
        let what = format!("step at {rate}/s");
        let length = open_loop_interval(2.0);
        let intervals = assert_tiles(&step["report"], length, &what);
        assert_eq!(intervals.len(), 10, "{what}: {}", describe(&intervals));
        assert_each_holds_its_share(&intervals, rate, length, &what);
        let hlog = dir.path().join(step["hlog"].as_str().unwrap());
        assert_hlog_matches(&hlog, "GET.response", &intervals, length);
    }
}

/// The rate in `-q`'s line: `GET: 1234.56 requests per second, p50=...`.
fn quiet_rate(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.contains("requests per second"))
        .unwrap_or_else(|| panic!("no rate in {stdout:?}"));
    let after = line.split(':').nth(1).unwrap().trim();
    after.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn a_tiny_closed_loop_measures_from_its_first_send_to_its_last_reply() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    for (requests, clients) in [(3u64, "1"), (101, "100")] {
        for attempt in 0..4 {
            let what = format!("-n {requests} -c {clients}, run {attempt}");
            let began = Instant::now();
            let (stdout, report) = run_tailrate_json(&[
                "-p",
                &port,
                "-t",
                "get",
                "-n",
                &requests.to_string(),
                "-c",
                clients,
                "-q",
            ]);
            let wall = began.elapsed().as_secs_f64();
            let test = &report["tests"][0];
            let measured = f(test, "measured_secs");
            let rate = f(test, "throughput_per_sec");
            let completed = n(&test["counts"], "completed");
            assert_eq!(completed, requests, "{what}");
            assert!(
                measured > 0.0 && rate > 0.0,
                "{what}: {measured} s, {rate}/s"
            );
            // The report's own numbers agree: the rate is the requests over the window,
            // the window holds every request's whole response time, and it is inside the
            // process's own run.
            assert!(
                (rate * measured / completed as f64 - 1.0).abs() < 1e-6,
                "{what}: {rate}/s over {measured} s is not {completed} requests"
            );
            let max = f(&test["latency"]["response"], "max_ns") / 1e9;
            let min = f(&test["latency"]["response"], "min_ns") / 1e9;
            // (A histogram's max is the top of its bucket: up to 0.1% above the value.)
            assert!(
                measured >= max * 0.999,
                "{what}: window {measured} s < max latency {max} s"
            );
            assert!(
                measured < wall,
                "{what}: window {measured} s > process {wall} s"
            );
            if clients == "1" {
                // One connection sends one request at a time: the window holds them all.
                assert!(
                    measured >= requests as f64 * min,
                    "{what}: window {measured} s < {requests} x min latency {min} s"
                );
            }
            let printed = quiet_rate(&stdout);
            assert!(
                (printed / rate - 1.0).abs() < 0.01,
                "{what}: -q says {printed}/s, the JSON {rate}/s"
            );
        }
    }
}
