//! Shards of one plan: `--shard I/K` and the engines' variables, `--start-at`, and
//! `tailrate merge` of the shards' reports and logs, against a real redis-server.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::harness::{
    RedisServer, assert_usage_error, read_json, run_tailrate, send_command, stderr_of, tailrate_bin,
};

/// A start this far ahead leaves time to start every shard and connect (the harness
/// starts them a few milliseconds apart; a loaded host may take a few hundred).
const LEAD: Duration = Duration::from_millis(1500);

/// `--start-at` for a start `LEAD` from now, in Unix seconds with milliseconds.
pub(crate) fn start_in_a_moment() -> String {
    let at = SystemTime::now() + LEAD;
    format!(
        "{:.3}",
        at.duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
    )
}

/// Starts shard `index` of `count` of an open loop at `rate` on `server`, writing
/// `dir/shard-I.json` and `dir/shard-I.hlog`.
pub(crate) fn spawn_shard(
    server: &RedisServer,
    dir: &Path,
    index: u32,
    count: u32,
    start_at: &str,
    extra: &[&str],
) -> Child {
    let port = server.port().to_string();
    let json = dir.join(format!("shard-{index}.json"));
    let hlog = dir.join(format!("shard-{index}.hlog"));
    Command::new(tailrate_bin())
        .args([
            "-p",
            &port,
            "-t",
            "get",
            "--seed",
            "11",
            "--no-progress",
            "-q",
        ])
        .args([
            "--shard",
            &format!("{index}/{count}"),
            "--start-at",
            start_at,
        ])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .arg("--hdr-log")
        .arg(&hlog)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a shard and returns its report's only test.
pub(crate) fn finish(child: Child, json: &Path) -> Value {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let report: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    report["tests"][0].clone()
}

fn calls(server: &RedisServer, command: &str) -> u64 {
    server
        .commandstats()
        .get(command)
        .copied()
        .unwrap_or_default()
}

#[test]
fn shard_flags_outside_their_range_are_usage_errors() {
    assert_usage_error(
        &["--rate", "1000", "--shard", "2/2", "--seed", "1"],
        &["--shard"],
    );
    assert_usage_error(
        &["--rate", "1000", "--shard", "x", "--seed", "1"],
        &["--shard"],
    );
    assert_usage_error(
        &["--rate", "1000", "--shard", "0/2"],
        &["--shard", "--seed"],
    );
    assert_usage_error(
        &["--rate", "1000", "--shards", "2", "--seed", "1"],
        &["--shards"],
    );
    assert_usage_error(
        &["--rate", "1000", "-c", "1", "--shard", "1/2", "--seed", "1"],
        &["-c"],
    );
    assert_usage_error(
        &["-t", "get", "--rate", "1000", "--start-at", "1000000000"],
        &["--start-at"],
    );
    assert_usage_error(
        &["-t", "get,set", "--rate", "1000", "--start-at", "+30s"],
        &["--start-at"],
    );
}

/// `at` as RFC 3339 at UTC+05:00: `2026-12-04T20:31:06.846757+05:00`, with `,` for `.`
/// (`date -Ins`) when `comma`, and no fraction when `fraction` is false.
fn at_plus_five_hours(at: SystemTime, fraction: bool, comma: bool) -> String {
    let nanos = at.duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let local = time::OffsetDateTime::from_unix_timestamp_nanos(nanos as i128)
        .unwrap()
        .to_offset(time::UtcOffset::from_hms(5, 0, 0).unwrap());
    let mut text = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        local.year(),
        u8::from(local.month()),
        local.day(),
        local.hour(),
        local.minute(),
        local.second()
    );
    if fraction {
        text.push(if comma { ',' } else { '.' });
        text.push_str(&format!("{:06}", local.microsecond()));
    }
    text + "+05:00"
}

/// A start written with an offset starts then, not five hours later, and the spellings
/// `date` writes are taken (an offset after a fraction was read as UTC, one without a
/// fraction and `date -Ins`'s comma were refused).
#[test]
fn a_start_written_with_its_utc_offset_starts_on_time() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    for (fraction, comma) in [(true, false), (false, false), (true, true)] {
        // Whole seconds only without a fraction: one more second of lead covers the cut.
        let at = SystemTime::now() + LEAD + Duration::from_secs(1);
        let text = at_plus_five_hours(at, fraction, comma);
        let mut child = spawn_shard(
            &server,
            dir.path(),
            0,
            1,
            &text,
            &["--rate", "1000", "--duration", "500ms"],
        );
        let deadline = SystemTime::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            if SystemTime::now() > deadline {
                let _ = child.kill();
                panic!("--start-at {text}: still waiting 20 s later");
            }
            thread::sleep(Duration::from_millis(50));
        }
        let test = finish(child, &dir.path().join("shard-0.json"));
        assert!(
            test["counts"]["sent"].as_u64().unwrap() > 0,
            "{text}: {test}"
        );
    }
}

#[test]
fn the_engines_index_comes_from_the_environment() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let run = |envs: &[(&str, &str)], extra: &[&str]| {
        let out = Command::new(tailrate_bin())
            .args(["-p", &server.port().to_string(), "-t", "get", "-c", "2"])
            .args(["-n", "100", "--seed", "3", "--no-progress", "-q", "--json"])
            .arg(&json)
            .args(extra)
            .env_remove("SLURM_PROCID")
            .env_remove("SLURM_NTASKS")
            .env_remove("JOB_COMPLETION_INDEX")
            .envs(envs.iter().copied())
            .output()
            .unwrap();
        assert!(out.status.success(), "{envs:?}: {}", stderr_of(&out));
        let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        report
    };
    let k8s = run(&[("JOB_COMPLETION_INDEX", "1")], &["--shards", "2"]);
    assert_eq!(k8s["settings"]["shard"]["index"], 1);
    assert_eq!(k8s["settings"]["shard"]["count"], 2);
    // -n 100 and -c 2 are the plan's: this shard sends half of each.
    assert_eq!(k8s["settings"]["clients"], 1);
    assert_eq!(k8s["tests"][0]["counts"]["completed"], 50);
    let slurm = run(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2")], &[]);
    assert_eq!(slurm["settings"]["shard"]["index"], 0);
    assert_eq!(slurm["tests"][0]["counts"]["completed"], 50);
    let whole = run(&[], &[]);
    assert!(whole["settings"].get("shard").is_none());
    assert_eq!(whole["tests"][0]["counts"]["completed"], 100);
}

#[test]
fn a_shard_ready_after_its_start_refuses_to_run() {
    let server = RedisServer::builder()
        .arg("--enable-debug-command", "yes")
        .start();
    let addr = server.addr();
    // The server answers nothing for 2.5 s: the shard's probe waits that long, so it is
    // ready more than a second after a start 0.5 s ahead.
    let sleeper = thread::spawn(move || send_command(&addr, &["DEBUG", "SLEEP", "2.5"]));
    thread::sleep(Duration::from_millis(100));
    let at = SystemTime::now() + Duration::from_millis(500);
    let at = format!(
        "{:.3}",
        at.duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
    );
    let out = run_tailrate(&[
        "-p",
        &server.port().to_string(),
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
    ]);
    sleeper.join().unwrap().unwrap();
    let text = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(text.trim_end().lines().count(), 1, "{text}");
    assert!(
        text.contains("--start-at") && text.contains("late"),
        "{text}"
    );
    assert_eq!(calls(&server, "get"), 0, "a late shard sent requests");
}

/// Runs `tailrate merge` with `args`; returns its exit code and stderr.
fn merge(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let out = Command::new(tailrate_bin())
        .arg("merge")
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), stderr_of(&out))
}

#[test]
fn merging_one_runs_intervals_gives_back_its_totals_value_for_value() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (json, hlog) = (dir.path().join("run.json"), dir.path().join("run.hlog"));
    let out = Command::new(tailrate_bin())
        .args([
            "-p",
            &server.port().to_string(),
            "-t",
            "get,set",
            "--rate",
            "3000",
        ])
        .args([
            "--duration",
            "2s",
            "--seed",
            "5",
            "--no-progress",
            "-q",
            "--json",
        ])
        .arg(&json)
        .arg("--hdr-log")
        .arg(&hlog)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let merged_dir = dir.path().join("merged");
    let (code, err) = merge(&[
        json.as_os_str(),
        hlog.as_os_str(),
        "--out".as_ref(),
        merged_dir.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let run = read_json(&json);
    let merged = read_json(&merged_dir.join("merged.json"));
    assert_eq!(run["tests"].as_array().unwrap().len(), 2);
    for (a, b) in run["tests"]
        .as_array()
        .unwrap()
        .iter()
        .zip(merged["tests"].as_array().unwrap())
    {
        assert_eq!(a["counts"], b["counts"], "{}", a["name"]);
        for (metric, latency) in a["latency"].as_object().unwrap() {
            // The histogram itself, so every value it holds, and what is derived from it.
            for field in [
                "hdr_v2_base64",
                "count",
                "p50_ns",
                "p99_ns",
                "p99_9_ns",
                "max_ns",
            ] {
                assert_eq!(
                    latency[field], b["latency"][metric][field],
                    "{} {metric} {field}",
                    a["name"]
                );
            }
        }
        let per = |t: &Value| -> Vec<(u64, u64)> {
            t["intervals"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| {
                    (
                        i["completed"].as_u64().unwrap(),
                        i["p99_ns"].as_u64().unwrap(),
                    )
                })
                .collect()
        };
        assert_eq!(per(a), per(b), "{}", a["name"]);
    }
    assert_eq!(merged["merge"]["shards"], 1);
    let log = std::fs::read_to_string(merged_dir.join("merged.hlog")).unwrap();
    assert!(
        log.starts_with("#tailrate") && log.contains("Tag=GET.response,"),
        "{log}"
    );
}

/// Two shards of a short constant-rate plan, run together.
fn two_shards(dir: &Path, server: &RedisServer) {
    let at = start_in_a_moment();
    let extra = [
        "--rate",
        "2000",
        "--duration",
        "1s",
        "--arrival",
        "constant",
    ];
    let children: Vec<Child> = (0..2)
        .map(|i| spawn_shard(server, dir, i, 2, &at, &extra))
        .collect();
    for (i, c) in children.into_iter().enumerate() {
        finish(c, &dir.join(format!("shard-{i}.json")));
    }
}

#[test]
fn a_missing_shard_or_another_plan_is_refused_in_one_line_and_partial_is_marked() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    two_shards(dir.path(), &server);
    let shard = |i: u32| dir.path().join(format!("shard-{i}.json"));
    let out = dir.path().join("out");
    let out_arg = ["--out".as_ref(), out.as_os_str()];
    let (code, err) = merge(&[shard(0).as_os_str(), out_arg[0], out_arg[1]]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("shard 1 of 2 missing"), "{err}");

    let (code, err) = merge(&[
        shard(0).as_os_str(),
        "--partial".as_ref(),
        out_arg[0],
        out_arg[1],
    ]);
    assert_eq!(code, Some(0), "{err}");
    let merged = read_json(&out.join("merged.json"));
    assert_eq!(merged["merge"]["partial"], true);
    assert_eq!(merged["merge"]["missing"], serde_json::json!([1]));
    assert_eq!(merged["tests"][0]["valid"], false);

    let (code, err) = merge(&[
        shard(0).as_os_str(),
        shard(0).as_os_str(),
        out_arg[0],
        out_arg[1],
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("both shard 0"), "{err}");

    // Shard 1 of another plan: another seed.
    let mut other = read_json(&shard(1));
    other["seed"] = serde_json::json!(12);
    let other_path = dir.path().join("other.json");
    std::fs::write(&other_path, serde_json::to_vec(&other).unwrap()).unwrap();
    let (code, err) = merge(&[
        shard(0).as_os_str(),
        other_path.as_os_str(),
        out_arg[0],
        out_arg[1],
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("not shards of one plan") && err.contains("seed"),
        "{err}"
    );

    // A log of another run beside a report.
    let (code, err) = merge(&[
        shard(0).as_os_str(),
        shard(1).as_os_str(),
        dir.path().join("shard-1.hlog").as_os_str(),
        dir.path().join("shard-0.hlog").as_os_str(),
        out_arg[0],
        out_arg[1],
    ]);
    assert_eq!(
        code,
        Some(0),
        "logs pair with reports by the shard in their header: {err}"
    );
}

/// The merged server count fails when another client ran the same command on the server
/// while the shards ran (its GETs are in the server's count, not in the shards' writes),
/// and passes on the same shards' run alone; a partial merge does not judge it.
#[test]
fn the_merged_server_count_fails_when_another_client_sends_the_same_command() {
    for other_client in [false, true] {
        let server = RedisServer::start();
        let dir = tempfile::tempdir().unwrap();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let meddler = other_client.then(|| {
            let (addr, done) = (server.addr(), done.clone());
            thread::spawn(move || {
                let mut sent = 0;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    send_command(&addr, &["GET", "elsewhere"]).unwrap();
                    sent += 1;
                    thread::sleep(Duration::from_millis(5));
                }
                sent
            })
        });
        two_shards(dir.path(), &server);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let meddled = meddler.map(|t| t.join().unwrap());
        let out = dir.path().join("merged");
        let (code, err) = merge(&[dir.path().as_os_str(), "--out".as_ref(), out.as_os_str()]);
        assert_eq!(code, Some(0), "{err}");
        let m = &read_json(&out.join("merged.json"))["tests"][0];
        let count = crate::harness::check(m, "server_count");
        let get = &m["server"]["commands"][0];
        let (calls, sent) = (
            get["calls"].as_u64().unwrap(),
            get["sent_by_tailrate"].as_u64().unwrap(),
        );
        if other_client {
            assert_eq!(count["verdict"], "fail", "{meddled:?} other GETs: {count}");
            assert_eq!(m["valid"], false);
            assert!(calls > sent, "{get}");
        } else {
            assert_eq!(count["verdict"], "pass", "{count}");
            // Exact unless a request was still unanswered when a shard ended (the check
            // allows for those).
            if m["counts"]["in_flight_at_end"] == 0 && m["counts"]["errors"] == 0 {
                assert_eq!(calls, sent, "{get}");
            }
        }
        // Shard 1 missing: the server counted its requests too, so nothing is judged,
        // and the merged view says why.
        let partial = dir.path().join("partial");
        let (code, err) = merge(&[
            dir.path().join("shard-0.json").as_os_str(),
            "--partial".as_ref(),
            "--out".as_ref(),
            partial.as_os_str(),
        ]);
        assert_eq!(code, Some(0), "{err}");
        let p = &read_json(&partial.join("merged.json"))["tests"][0];
        assert!(
            p["checks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["name"] != "server_count"),
            "{p}"
        );
        assert!(
            p["server"]["missing"][0]
                .as_str()
                .unwrap()
                .contains("shards 1, missing"),
            "{p}"
        );
    }
}

mod timing {
    use super::*;

    /// Two shards at half the rate each, started together: together they send the plan
    /// (a constant schedule's arrivals exactly; a Poisson one's within its spread), the
    /// server counts what they completed, and each names its shard and its start skew.
    #[test]
    fn two_shards_at_half_the_rate_send_the_whole_plan() {
        for arrival in ["constant", "poisson"] {
            let server = RedisServer::start();
            let dir = tempfile::tempdir().unwrap();
            let at = start_in_a_moment();
            let extra = [
                "--rate",
                "4000",
                "--duration",
                "1s",
                "-c",
                "4",
                "--arrival",
                arrival,
            ];
            let children: Vec<Child> = (0..2)
                .map(|i| spawn_shard(&server, dir.path(), i, 2, &at, &extra))
                .collect();
            let tests: Vec<Value> = children
                .into_iter()
                .enumerate()
                .map(|(i, c)| finish(c, &dir.path().join(format!("shard-{i}.json"))))
                .collect();
            let mut intended = 0;
            let mut completed = 0;
            for t in &tests {
                assert_eq!(t["target_rate_per_sec"], 2000.0);
                let skew = t["start_skew_ns"].as_i64().unwrap();
                assert!(
                    (0..200_000_000).contains(&skew),
                    "{arrival}: skew {skew} ns"
                );
                intended += t["counts"]["intended"].as_u64().unwrap();
                completed += t["counts"]["completed"].as_u64().unwrap();
                assert!(
                    t["checks"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|c| c["name"] != "server_count"),
                    "a shard cannot judge the server's count alone"
                );
            }
            if arrival == "constant" {
                assert_eq!(
                    intended, 4000,
                    "the union is the constant schedule at 4000/s"
                );
            } else {
                // Poisson at 4000 over 1 s: standard deviation 63; 5 sigma.
                assert!(intended.abs_diff(4000) < 320, "poisson: {intended}");
            }
            assert_eq!(calls(&server, "get"), completed, "{arrival}");
            // The merge of the directory: counts are the sum of the JSONs', and so are
            // the merged log's intervals.
            let out = dir.path().join("merged");
            let (code, err) = merge(&[dir.path().as_os_str(), "--out".as_ref(), out.as_os_str()]);
            assert_eq!(code, Some(0), "{err}");
            let merged = read_json(&out.join("merged.json"));
            let m = &merged["tests"][0];
            assert_eq!(m["counts"]["intended"], intended);
            assert_eq!(m["counts"]["completed"], completed);
            assert_eq!(m["target_rate_per_sec"], 4000.0);
            assert_eq!(m["latency"]["response"]["count"], completed);
            let in_intervals: u64 = m["intervals"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["completed"].as_u64().unwrap())
                .sum();
            assert_eq!(in_intervals, completed, "{arrival}");
            assert_eq!(merged["merge"]["parts"].as_array().unwrap().len(), 2);
            // The server's count, judged on the shards together: what it executed
            // between the earliest and the latest of their readings is every GET it
            // ever ran here, and what the shards wrote.
            let count = crate::harness::check(m, "server_count");
            assert_eq!(count["verdict"], "pass", "{arrival}: {count}");
            let get = &m["server"]["commands"][0];
            assert_eq!(get["calls"], calls(&server, "get"), "{arrival}: {get}");
            let sent: u64 = tests
                .iter()
                .map(|t| {
                    t["server"]["commands"][0]["sent_by_tailrate"]
                        .as_u64()
                        .unwrap()
                })
                .sum();
            assert_eq!(get["sent_by_tailrate"], sent, "{arrival}: {get}");
            // The rest of the server's view adds the same way: its execution histogram
            // holds every call, and its CPU is over the span of all the readings.
            assert!(get["exec_usec_at_most"]["p99"].as_u64().is_some(), "{get}");
            let span = m["server"]["span_secs"].as_f64().unwrap();
            let longest = tests
                .iter()
                .map(|t| t["server"]["span_secs"].as_f64().unwrap())
                .fold(0.0, f64::max);
            assert!(
                span >= longest - 0.01,
                "{arrival}: span {span} s, a shard's {longest} s"
            );
            assert!(
                m["server"]["cpu_secs"].as_f64().unwrap() > 0.0,
                "{}",
                m["server"]
            );
            assert!(m["bottleneck"]["verdict"].is_string(), "{m}");
            // Poisson shards write their sends per window, and the merge judges the
            // shards' sends together: window by window the sum of the two.
            let windows = |t: &Value| -> Option<(u64, Vec<u64>)> {
                let a = t.get("arrivals")?;
                let counts = a["counts"].as_array()?.iter().map(|n| n.as_u64().unwrap());
                Some((a["window_ns"].as_u64()?, counts.collect()))
            };
            if arrival == "constant" {
                assert!(windows(&tests[0]).is_none() && windows(m).is_none(), "{m}");
                continue;
            }
            let (w0, c0) = windows(&tests[0]).expect("shard 0's arrivals");
            let (w1, c1) = windows(&tests[1]).expect("shard 1's arrivals");
            let (wm, cm) = windows(m).expect("the merged arrivals");
            assert_eq!((w0, w1), (wm, wm));
            assert_eq!(cm.len(), c0.len().min(c1.len()));
            for (i, n) in cm.iter().enumerate() {
                assert_eq!(*n, c0[i] + c1[i], "window {i}");
            }
            let fit = crate::harness::check(m, "poisson_fit");
            let detail = fit["detail"].as_str().unwrap();
            assert!(
                detail.starts_with("the shards' arrivals together: index-of-dispersion test")
                    && detail.contains(&format!("({} windows,", cm.len())),
                "{fit}"
            );
        }
    }
}
