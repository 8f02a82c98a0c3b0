//! `tailrate tune` against a local server: it finds a setting far above the plain closed
//! loop, prints it as a command line, and that command run directly reproduces the
//! throughput tune reported; flags it searches or cannot use are usage errors.
//!
//! Throughput against a server on the same 2 cores is set by the CPU the pair gets, and
//! on this shared machine that swings: single 300 ms runs of one setting measured 0.40M
//! to 1.5M req/s while other builds and spinning tests ran, medians of five moved by
//! 10-40% between phases lasting seconds, and pinning the pair to one core did not hold
//! them within 10%. So the reproduction test puts a relay between tailrate and the server
//! that holds every chunk 1 ms each way: throughput is then set by round trips (workers
//! per 2.3 ms), which a busy machine barely moves. Measured through it: single runs of
//! the best setting 46k-54k req/s, medians of five within 4% of each other. Medians of
//! five on both sides, and up to three rounds of direct runs, absorb the rest (a generator
//! starved for 0.8 s by another job's real-time benchmark was seen once in 25 runs).
//! Against the local server without the relay, tune is only checked to find a setting
//! far above the plain closed loop, a margin that no noise here comes near.

use super::harness::assert_usage_error;

#[test]
fn tune_refuses_the_flags_it_searches_and_those_it_cannot_use() {
    assert_usage_error(
        &["tune", "-c", "1", "--workers", "10"],
        &["--workers", "tune"],
    );
    assert_usage_error(
        &["tune", "-c", "1", "--pipeline-delay", "1ms"],
        &["--pipeline-delay", "tune"],
    );
    assert_usage_error(&["tune", "-n", "1000"], &["-n", "tune"]);
    assert_usage_error(&["tune", "--rate", "1000"], &["--rate", "tune"]);
    assert_usage_error(&["tune", "-P", "16"], &["-P", "tune"]);
    assert_usage_error(&["tune", "-k", "0"], &["-k", "tune"]);
    assert_usage_error(&["tune", "--hdr-log", "x.hlog"], &["--hdr-log", "tune"]);
    assert_usage_error(&["tune", "--max-trials", "0"], &["--max-trials"]);
    assert_usage_error(&["tune", "--max-trials", "lots"], &["--max-trials", "lots"]);
    assert_usage_error(&["tune", "--confirm-runs", "0"], &["--confirm-runs"]);
    assert_usage_error(
        &["tune", "--max-workers", "10"],
        &["--max-workers", "-c 50"],
    );
    assert_usage_error(&["tune", "-t", "get,set"], &["-t", "one"]);
    assert_usage_error(&["tune", "--duration", "0s"], &["--duration"]);
}

/// The reproduction test measures throughput: nextest runs it alone.
mod timing {
    use std::path::Path;
    use std::process::Command;
    use std::time::{Duration, Instant};

    use serde_json::Value;

    use super::super::harness::{
        DelayRelay, RedisServer, assert_success, run_with_timeout, tailrate_bin,
    };

    /// Relative gap allowed between tune's throughput and a direct run's median.
    const TOLERANCE: f64 = 0.10;
    /// Direct runs per round.
    const RUNS: usize = 5;
    /// Rounds before giving up.
    const ROUNDS: usize = 3;
    /// How long the relay holds each chunk, each way.
    const ONE_WAY: Duration = Duration::from_millis(1);

    fn tailrate(args: &[&str]) -> Command {
        let mut cmd = Command::new(tailrate_bin());
        cmd.args(args);
        cmd
    }

    fn read_json(path: &Path) -> Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    #[test]
    fn tune_against_the_local_server_beats_the_plain_closed_loop_many_times() {
        let server = RedisServer::start();
        let port = server.port().to_string();
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("tune.json");
        let tune = [
            "tune",
            "-p",
            &port,
            "-c",
            "1",
            "-t",
            "get",
            "--duration",
            "200ms",
            "--max-trials",
            "3",
            "--confirm-runs",
            "1",
            "--json",
            json.to_str().unwrap(),
        ];
        let stdout = assert_success(&run_with_timeout(tailrate(&tune), Duration::from_secs(60)));
        let report = read_json(&json);
        let (best, baseline) = (
            &report["best"],
            report["baseline_per_sec"].as_f64().unwrap(),
        );
        let reported = best["throughput_per_sec"].as_f64().unwrap();
        // 16 or more requests per round trip against one: measured 15-60 times the baseline.
        assert!(best["workers"].as_u64().unwrap() >= 16, "{stdout}");
        assert!(
            reported > 5.0 * baseline,
            "best {reported:.0} req/s against {baseline:.0} without workers\n{stdout}"
        );
        assert!(
            stdout.contains("best: ") && stdout.contains("the plain closed loop on -c 1"),
            "{stdout}"
        );
    }

    #[test]
    fn tune_finds_a_setting_whose_direct_runs_reproduce_its_throughput() {
        let started = Instant::now();
        let server = RedisServer::start();
        let relay = DelayRelay::start(&server.addr(), ONE_WAY);
        let port = relay.port().to_string();
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("tune.json");
        let tune = [
            "tune",
            "-p",
            &port,
            "-c",
            "1",
            "-t",
            "get",
            "--duration",
            "300ms",
            "--max-trials",
            "10",
            "--max-workers",
            "128",
            "--confirm-runs",
            "5",
            "--json",
            json.to_str().unwrap(),
        ];
        let stdout = assert_success(&run_with_timeout(tailrate(&tune), Duration::from_secs(60)));
        let report = read_json(&json);
        assert_eq!(report["complete"], true, "{stdout}");
        let trials = report["trials"].as_array().unwrap();
        assert_eq!(
            trials.iter().filter(|t| t["phase"] == "search").count(),
            10,
            "{stdout}"
        );
        assert_eq!(
            trials.iter().filter(|t| t["phase"] == "confirm").count(),
            10,
            "{stdout}"
        );
        let best = &report["best"];
        let reported = best["throughput_per_sec"].as_f64().unwrap();
        let baseline = report["baseline_per_sec"].as_f64().unwrap();
        // One request per round trip without workers; with 64 or more batched per round
        // trip, tens of times that.
        assert!(best["workers"].as_u64().unwrap() >= 64, "{stdout}");
        assert!(
            reported > 20.0 * baseline,
            "best {reported:.0} req/s against {baseline:.0} without workers\n{stdout}"
        );

        // The printed command line is the JSON's, and names the setting.
        let line: Vec<String> = best["command_line"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect();
        assert!(stdout.contains(&line.join(" ")), "{stdout}");
        assert_eq!(
            line[..3],
            [
                "tailrate".to_string(),
                "--workers".into(),
                best["workers"].to_string()
            ]
        );
        assert!(
            !line
                .iter()
                .any(|w| w == "tune" || w == "--json" || w == "--max-trials"),
            "{line:?}"
        );

        let direct = dir.path().join("direct.json");
        let mut args: Vec<&str> = line[1..].iter().map(String::as_str).collect();
        args.splice(
            0..0,
            ["-q", "--no-progress", "--json", direct.to_str().unwrap()],
        );
        let mut medians = Vec::new();
        for _ in 0..ROUNDS {
            let runs: Vec<f64> = (0..RUNS)
                .map(|_| {
                    assert_success(&run_with_timeout(tailrate(&args), Duration::from_secs(30)));
                    read_json(&direct)["tests"][0]["throughput_per_sec"]
                        .as_f64()
                        .unwrap()
                })
                .collect();
            medians.push(median(runs));
            if (medians[medians.len() - 1] / reported - 1.0).abs() <= TOLERANCE {
                break;
            }
        }
        eprintln!(
            "{stdout}tune {reported:.0} req/s; direct medians {medians:.0?}; {:?}",
            started.elapsed()
        );
        let last = medians[medians.len() - 1];
        assert!(
            (last / reported - 1.0).abs() <= TOLERANCE,
            "tune reported {reported:.0} req/s; medians of {RUNS} direct runs: {medians:.0?}\n{stdout}"
        );
    }
}

/// `--max-p99`: a bound no setting can meet (a microsecond, under any loopback round
/// trip) leaves nothing to recommend, said as such; a bound every setting meets gives the
/// fastest, with its median p99 beside its throughput. Not a timing test: nothing here
/// depends on how fast the machine is.
#[test]
fn tune_with_a_latency_bound_chooses_only_settings_within_it() {
    use super::harness::{RedisServer, assert_success, run_tailrate};
    let server = RedisServer::start();
    let port = server.port().to_string();
    let tune = |bound: &str| {
        #[rustfmt::skip]
        let out = run_tailrate(&[
            "tune", "-p", &port, "-c", "1", "-t", "get", "--duration", "200ms",
            "--max-trials", "3", "--confirm-runs", "1", "--max-p99", bound, "--no-progress",
        ]);
        assert_success(&out)
    };
    let none = tune("1us");
    assert!(
        none.contains("no setting kept its p99 within --max-p99 0.001 ms"),
        "{none}"
    );
    let loose = tune("10s");
    let best = loose
        .lines()
        .find(|l| l.starts_with("best: "))
        .unwrap_or_else(|| panic!("{loose}"));
    assert!(best.contains(", p99 ") && best.ends_with(" ms)"), "{best}");
}
