//! Confidence intervals against a real redis-server: every percentile of every metric
//! carries one, in text, JSON and CSV; `--repeat` keeps each repeat and summarises them;
//! and (in `timing`, run alone) the intervals of repeated runs at one rate hold the
//! median of those runs' percentiles, as 95% intervals should.

use serde_json::Value;

use super::harness::{RedisServer, run_tailrate, run_tailrate_json};

const PERCENTILES: [&str; 6] = ["p50", "p90", "p95", "p99", "p99_9", "p99_99"];

/// `[low, high]` of `latency[key_ci95_ns]`; high `None` when unbounded.
fn interval(latency: &Value, key: &str) -> (u64, Option<u64>) {
    let ci = &latency[format!("{key}_ci95_ns")];
    let low = ci[0]
        .as_u64()
        .unwrap_or_else(|| panic!("{key}_ci95_ns missing: {latency}"));
    (low, ci[1].as_u64())
}

#[test]
fn every_percentile_of_every_metric_has_an_interval_that_holds_it() {
    let server = RedisServer::start();
    let (_, report) = run_tailrate_json(&[
        "-p",
        &server.port().to_string(),
        "--rate",
        "5k",
        "--duration",
        "2s",
        "--warmup",
        "200ms",
        "-t",
        "get,set",
        "-c",
        "4",
    ]);
    let tests = report["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2);
    for test in tests {
        for metric in ["response", "service", "lag", "queue_wait"] {
            let l = &test["latency"][metric];
            let conf = &l["confidence"];
            // 2 s of 50 ms batches.
            let batches = conf["batches"].as_u64().unwrap();
            assert!((30..=41).contains(&batches), "{batches} batches: {conf}");
            assert!(
                conf["method"].as_str().unwrap().starts_with("batch means"),
                "{conf}"
            );
            let count = l["count"].as_u64().unwrap();
            for key in PERCENTILES {
                let value = l[format!("{key}_ns")].as_u64().unwrap();
                let (low, high) = interval(l, key);
                assert!(low <= value, "{metric} {key}: {low} > {value}");
                let beyond = conf["beyond"][key].as_u64().unwrap();
                assert!(beyond < count);
                if let Some(h) = high {
                    assert!(h >= value, "{metric} {key}: {h} < {value}");
                    assert!(beyond >= 10, "{metric} {key} bounded with k = {beyond}");
                }
                assert!(conf["design_effect"][key].as_f64().unwrap() >= 1.0);
            }
            // About 10k replies: p99.99 has 1 beyond it, too few to bound.
            assert_eq!(interval(l, "p99_99").1, None, "{metric}: {l}");
        }
    }
}

#[test]
fn text_and_csv_show_the_intervals() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let args = [
        "-p",
        &port,
        "--rate",
        "2k",
        "--duration",
        "1s",
        "--warmup",
        "100ms",
        "-t",
        "get",
    ];
    let out = run_tailrate(&args);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let head = text
        .lines()
        .find(|l| l.contains("95% confidence intervals (msec;"))
        .unwrap_or_else(|| panic!("no interval table:\n{text}"));
    assert!(head.contains("batches of 50 ms"), "{head}");
    // The table's row, not the answer's line above it.
    let p50 = text
        .lines()
        .skip_while(|l| !l.contains("95% confidence intervals (msec;"))
        .find(|l| l.trim_start().starts_with("p50 ") && l.contains('['))
        .unwrap();
    assert!(p50.matches('[').count() == 4, "four metrics: {p50}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("p99.99") && l.ends_with("too few beyond to bound")),
        "{text}"
    );
    let csv = run_tailrate(&[args.as_slice(), &["--csv"]].concat());
    let csv = String::from_utf8_lossy(&csv.stdout);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.len(), row.len(), "{csv}");
    let col = |name: &str| {
        let i = header
            .iter()
            .position(|h| *h == format!("\"{name}\""))
            .unwrap_or_else(|| panic!("no {name}: {header:?}"));
        row[i].trim_matches('"').to_string()
    };
    let p99: f64 = col("p99_latency_ms").parse().unwrap();
    let low: f64 = col("p99_ci95_low_ms").parse().unwrap();
    assert!(low <= p99, "{low} > {p99}");
    // 2000 replies: p99.99 has none beyond, and no high end.
    assert_eq!(col("p99_99_ci95_high_ms"), "");
}

#[test]
fn repeats_are_kept_and_pooled() {
    let server = RedisServer::start();
    let (stdout, report) = run_tailrate_json(&[
        "-p",
        &server.port().to_string(),
        "--rate",
        "2k",
        "--duration",
        "500ms",
        "--warmup",
        "100ms",
        "-t",
        "get",
        "--repeat",
        "3",
    ]);
    let tests = report["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 3, "{stdout}");
    for (i, t) in tests.iter().enumerate() {
        assert_eq!(t["repeat"].as_u64(), Some(i as u64 + 1));
        assert!(t["response_windows"]["windows"].is_array(), "{t}");
    }
    let summary = &report["repeats"][0];
    assert_eq!(summary["repeats"].as_u64(), Some(3));
    // The pooled value is the percentile of the three histograms added.
    let mut total: Option<hdrhistogram::Histogram<u64>> = None;
    for t in tests {
        let h = tailrate::report::decode_histogram(
            t["latency"]["response"]["hdr_v2_base64"].as_str().unwrap(),
        )
        .unwrap();
        match &mut total {
            Some(total) => total.add(&h).unwrap(),
            None => total = Some(h),
        }
    }
    let total = total.unwrap();
    for row in summary["metrics"]["response"].as_array().unwrap() {
        let key = row["percentile"].as_str().unwrap();
        let q = match key {
            "p50" => 0.5,
            "p90" => 0.9,
            "p95" => 0.95,
            "p99" => 0.99,
            "p99_9" => 0.999,
            _ => 0.9999,
        };
        assert_eq!(
            row["value_ns"].as_u64(),
            Some(total.value_at_quantile(q)),
            "{key}"
        );
        let each: Vec<u64> = tests
            .iter()
            .map(|t| {
                t["latency"]["response"][format!("{key}_ns")]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        let values: Vec<u64> = row["values_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(values, each, "{key}");
        // Its interval holds it.
        if let Some(ci) = row["ci95_ns"].as_array() {
            let value = row["value_ns"].as_u64().unwrap();
            assert!(ci[0].as_u64().unwrap() <= value, "{key}: {row}");
            assert!(ci[1].as_u64().is_none_or(|h| value <= h), "{key}: {row}");
        }
    }
}

#[test]
fn repeat_zero_is_a_usage_error() {
    let out = run_tailrate(&["--repeat", "0", "-t", "get"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--repeat"));
}

mod timing {
    use super::*;

    /// Twelve open-loop runs of 2 s at one rate: each run's p99 interval is a 95%
    /// statement about the p99 at that rate, so the median of the twelve p99s lies inside
    /// most of them (9 of 12 asked; independent 95% intervals miss it in 12 runs more than
    /// 3 times with probability under 0.3%).
    ///
    /// Ignored (so listed as skipped) until it holds on a shared host: there the drift
    /// between runs is larger than any run's own interval, which is what `--repeat`'s
    /// interval across repeats is for. The misses are quiet runs with tight intervals
    /// when runs that met one of the host's rare stalls raise the median: a 2 s run that
    /// met none cannot know how often they come.
    #[test]
    #[ignore = "within-run intervals do not cover host drift between runs on a loaded host"]
    fn the_median_of_repeated_runs_p99_lies_inside_most_runs_intervals() {
        let server = RedisServer::start();
        let (stdout, report) = run_tailrate_json(&[
            "-p",
            &server.port().to_string(),
            "--rate",
            "10k",
            "--duration",
            "2s",
            "--warmup",
            "200ms",
            "-t",
            "get",
            "-c",
            "10",
            "--repeat",
            "12",
        ]);
        let tests = report["tests"].as_array().unwrap();
        assert_eq!(tests.len(), 12, "{stdout}");
        let median = report["repeats"][0]["metrics"]["response"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["percentile"] == "p99")
            .unwrap()["value_ns"]
            .as_u64()
            .unwrap();
        let rows: Vec<String> = tests
            .iter()
            .map(|t| {
                let l = &t["latency"]["response"];
                let (low, high) = interval(l, "p99");
                let holds = low <= median && high.is_none_or(|h| median <= h);
                format!(
                    "p99 {} [{low}, {high:?}] holds {median}: {holds}",
                    l["p99_ns"]
                )
            })
            .collect();
        let held = rows.iter().filter(|r| r.ends_with("true")).count();
        println!("{}", rows.join("\n"));
        assert!(
            held >= 9,
            "{held} of 12 intervals hold the median p99 {median}:\n{}",
            rows.join("\n")
        );
    }
}
