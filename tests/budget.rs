//! A sweep's `--budget`, its plan, its estimate and the arrivals of its runs, against a
//! real redis-server: the sweep ends within 10% of its budget with an estimate and its
//! interval, says before its first run what it plans, and every open-loop run draws its
//! own arrivals (a seed of its own, recorded in `sweep.json`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use super::harness::{RedisServer, assert_success, read_json, run_tailrate_with_timeout};

/// Timing tests: each runs alone (see .config/nextest.toml).
mod timing {
    use super::*;

    /// A search that wants more than 20 s (a p99 pass waits for 16 runs at a rate, each
    /// 0.75 s here) is cut by `--budget 20s`: the sweep ends within 10% of it, gives its
    /// estimate with an interval and what more time would buy, and printed its plan and the
    /// time left on every run's line. Its runs at one rate each drew their own arrivals:
    /// the seeds differ, and so do the rates the runs sent at.
    #[test]
    fn a_sweep_with_a_20s_budget_ends_within_10_percent_with_an_estimate() {
        let server = RedisServer::builder().start();
        let dir = tempfile::tempdir().unwrap();
        let port = server.port().to_string();
        #[rustfmt::skip]
        let argv = [
            "sweep", "-p", &port, "--seed", "7", "--no-progress", "--out",
            dir.path().to_str().unwrap(), "-t", "get", "-c", "4",
            "--rates", "1k,2k,4k", "--repeat", "2", "--order", "shuffle",
            "--duration", "500ms", "--warmup", "150ms", "--settle", "50ms",
            "--slo", "p99<=1ms", "--slo", "p50<=1ms", "--budget", "20s",
        ];
        let started = Instant::now();
        let out = run_tailrate_with_timeout(&argv, Duration::from_secs(120));
        let took = started.elapsed().as_secs_f64();
        let stdout = assert_success(&out);
        let first = stdout.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("plan: 6 steps, the capacity search (about 64 runs)")
                && first.contains("--budget 20 s keeps it to about"),
            "{stdout}"
        );
        assert!(
            stdout.contains("s of the budget left]"),
            "no line says the time left\n{stdout}"
        );
        let report = read_json(&dir.path().join("sweep.json"));
        let slo = &report["slo"];
        let ended = slo["budget_ended"]
            .as_str()
            .unwrap_or_else(|| panic!("the search ended before the budget: {slo}\n{stdout}"));
        assert!(ended.contains("more runs"), "{ended}");
        // From the process's start: the server's probe and the files written count too.
        assert!(
            (18.0..=22.0).contains(&took),
            "a 20 s budget took {took:.1} s\n{stdout}"
        );
        let estimates = slo["estimates"].as_array().unwrap();
        assert_eq!(estimates.len(), 2, "{slo}");
        let binding: Vec<&serde_json::Value> =
            estimates.iter().filter(|e| e["binding"] == true).collect();
        assert_eq!(binding.len(), 1, "{slo}");
        // The estimates rest on six runs at least, or on fewer where the host disturbed
        // the rest (left out of them, counted in `disturbed`): a night of steal on this
        // machine left 5 of its runs to an estimate.
        let disturbed = slo["disturbed"]["runs"].as_u64().unwrap_or(0);
        for e in estimates {
            assert!(e["crossing"].is_object() && e["interval"].is_array(), "{e}");
            let runs = e["runs"].as_u64().unwrap();
            assert!(runs + disturbed >= 6, "{e}\n{slo}");
            if runs < 6 {
                super::super::harness::skip(
                    "budget: the estimate's six runs",
                    &format!("the host disturbed {disturbed} runs; {runs} were left to it"),
                );
            }
        }
        let summary = slo["summary"].as_str().unwrap();
        assert!(summary.starts_with("capacity "), "{summary}");
        assert!(summary.contains("(90%: "), "{summary}");
        assert!(
            stdout.contains(summary),
            "the line printed is not the one saved"
        );

        // Every open-loop run its own seed, and runs at one rate sent at different rates.
        let open: Vec<&serde_json::Value> = report["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["target_rate_per_sec"].is_number())
            .collect();
        let mut seeds: Vec<u64> = open.iter().map(|r| r["seed"].as_u64().unwrap()).collect();
        let n = seeds.len();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), n, "two runs share a seed");
        for rate in [1000.0, 2000.0, 4000.0] {
            let mut achieved: Vec<i64> = open
                .iter()
                .filter(|r| r["target_rate_per_sec"].as_f64() == Some(rate))
                .map(|r| {
                    (r["report"]["achieved_rate_per_sec"].as_f64().unwrap() * 10.0).round() as i64
                })
                .collect();
            let runs = achieved.len();
            achieved.sort_unstable();
            achieved.dedup();
            assert!(
                runs < 2 || achieved.len() > 1,
                "all {runs} runs at {rate}/s sent at one rate: one arrival draw replayed"
            );
        }
    }
}
