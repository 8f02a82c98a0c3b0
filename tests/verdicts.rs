//! The rules behind the words, on real runs against a real redis-server: one objective
//! decided by one test on a single run (far under its bound passes, far over fails);
//! every report's percentile intervals monotone in the percentile; a sweep step's
//! figures pooling exactly the runs its verdict pools; and compare saying what it knows
//! (`same file`, never `no difference`, `equivalent` only inside the margin).

use std::path::Path;

use serde_json::Value;
use tailrate::report::sweep::SweepReport;

use super::harness::{RedisServer, assert_success, read_json, run_tailrate, skip, this_test};

/// Runs tailrate against `server` with `args` and `--json` into `path`; the exit code.
fn run_to(server: &RedisServer, path: &Path, args: &[&str]) -> Option<i32> {
    let port = server.port().to_string();
    let mut all = vec![
        "-p",
        &port,
        "--no-progress",
        "-q",
        "--json",
        path.to_str().unwrap(),
    ];
    all.extend(args);
    run_tailrate(&all).status.code()
}

/// A single open-loop run whose every reply is far under its bound passes by the pooled
/// exceedance test (before, an interval with no upper end left it `uncertain`), and one
/// whose bound is far under every reply fails with exit 1. The passing run has 10,000
/// replies: a pass with none over p99's bound needs about 760 (p99.9's, 7,600).
#[test]
fn slo_of_a_single_run_far_under_its_bound_passes_and_far_over_fails() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("under.json");
    let args = [
        "-t",
        "get",
        "--rate",
        "5000",
        "--duration",
        "2s",
        "-c",
        "2",
        "--slo",
        "p99<=60ms",
    ];
    let code = run_to(&server, &json, &args);
    let report = read_json(&json);
    let test = &report["tests"][0];
    let max = test["latency"]["response"]["max_ns"].as_u64().unwrap();
    if max * 3 > 60_000_000 {
        skip(
            &this_test(),
            &format!("a reply took {max} ns: the host is too busy for a run 3x under 60 ms"),
        );
        return;
    }
    if test["slo"]["valid"] == false {
        // A host busy enough to keep the generator short of its schedule leaves the run
        // out of its own verdict (uncertain, rightly): nothing here to check.
        skip(
            &this_test(),
            &format!("the run fell short of its schedule: {}", test["slo"]["why"]),
        );
        return;
    }
    assert_eq!(test["slo"]["verdict"], "pass", "{}", test["slo"]);
    assert_eq!(code, Some(0), "{}\n{}", test["slo"], test["checks"]);
    let check = &test["slo"]["checks"][0];
    assert_eq!(check["exceedance"]["over"], 0, "{check}");
    assert!(
        check["ci95_ns"][1]
            .as_u64()
            .is_some_and(|h| h <= 60_000_000),
        "{check}"
    );

    let json = dir.path().join("over.json");
    let args = [
        "-t",
        "get",
        "--rate",
        "2000",
        "--duration",
        "1s",
        "-c",
        "2",
        "--slo",
        "p50<=1us",
    ];
    let code = run_to(&server, &json, &args);
    let report = read_json(&json);
    let slo = &report["tests"][0]["slo"];
    let generator_limited = slo["why"]
        .as_str()
        .is_some_and(|w| w.starts_with("limited by the generator"));
    if slo["valid"] == false || (slo["verdict"] == "uncertain" && generator_limited) {
        // A host busy enough to make the generator late, or fail one of its self-checks,
        // leaves the failure possibly the generator's (uncertain, rightly).
        let failed: Vec<&Value> = report["tests"][0]["checks"]
            .as_array()
            .map(|c| c.iter().filter(|c| c["verdict"] == "fail").collect())
            .unwrap_or_default();
        skip(
            &this_test(),
            &format!(
                "the failing run fell short of its schedule or failed a self-check: {}; {failed:?}",
                slo["why"]
            ),
        );
        return;
    }
    assert_eq!(
        report["tests"][0]["slo"]["verdict"], "fail",
        "{}",
        report["tests"][0]["slo"]
    );
    assert_eq!(code, Some(1), "{}", report["tests"][0]["slo"]);
}

/// One list of percentile intervals, `(low, high)` in ns in increasing percentile, with
/// where in the report it was found.
type Intervals = (String, Vec<(u64, Option<u64>)>);

/// The percentile intervals found in `v` (a report of any kind), each list in increasing
/// percentile, with where it was found.
fn interval_lists(v: &Value, at: &str, out: &mut Vec<Intervals>) {
    const FIXED: [&str; 6] = ["p50", "p90", "p95", "p99", "p99_9", "p99_99"];
    let pair = |ci: &Value| -> Option<(u64, Option<u64>)> {
        Some((ci.get(0)?.as_u64()?, ci.get(1).and_then(Value::as_u64)))
    };
    match v {
        Value::Object(map) => {
            // A latency: `p50_ci95_ns` ...
            let fixed: Vec<_> = FIXED
                .iter()
                .filter_map(|k| map.get(&format!("{k}_ci95_ns")).and_then(pair))
                .collect();
            if fixed.len() > 1 {
                out.push((format!("{at} (latency)"), fixed));
            }
            // A step's pooled percentiles by key: `{"p50": {"ci95_ns": ...}}`.
            let pooled: Vec<_> = FIXED
                .iter()
                .filter_map(|k| map.get(*k)?.get("ci95_ns").and_then(pair))
                .collect();
            if pooled.len() > 1 {
                out.push((format!("{at} (pooled)"), pooled));
            }
            for (k, child) in map {
                interval_lists(child, &format!("{at}.{k}"), out);
            }
        }
        Value::Array(items) => {
            // Chosen percentiles and a repeat's rows: objects with a percentile each.
            let mut ranked: Vec<(f64, (u64, Option<u64>))> = items
                .iter()
                .filter_map(|i| {
                    let p = i.get("percentile")?;
                    let rank = p.as_f64().or_else(|| {
                        let key = p.as_str()?;
                        FIXED.iter().position(|k| *k == key).map(|r| r as f64)
                    })?;
                    let ci = i
                        .get("ci95_ns")
                        .or_else(|| i.get("pooled")?.get("ci95_ns"))?;
                    Some((rank, pair(ci)?))
                })
                .collect();
            if ranked.len() > 1 {
                ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
                out.push((
                    format!("{at} (list)"),
                    ranked.into_iter().map(|r| r.1).collect(),
                ));
            }
            for (i, child) in items.iter().enumerate() {
                interval_lists(child, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Every report the tests make here — an open loop, a closed loop, chosen percentiles,
/// `--repeat` and a sweep — shows intervals whose low ends and high ends never fall as the
/// percentile rises (an open high end counts as the highest).
#[test]
fn verdict_intervals_are_monotone_in_the_percentile_in_every_report() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let runs: [&[&str]; 4] = [
        &["-t", "get", "--rate", "3000", "--duration", "1s", "-c", "2"],
        &["-t", "set", "-n", "20000", "-c", "4"],
        &[
            "-t",
            "get",
            "--rate",
            "2000",
            "--duration",
            "500ms",
            "--percentiles",
            "99.99,50,99,99.9,90",
        ],
        &[
            "-t",
            "get",
            "--rate",
            "2000",
            "--duration",
            "400ms",
            "--repeat",
            "3",
            "--slo",
            "p99<=50ms",
        ],
    ];
    let mut reports = Vec::new();
    for (i, args) in runs.iter().enumerate() {
        let json = dir.path().join(format!("run{i}.json"));
        let code = run_to(&server, &json, args);
        assert!(matches!(code, Some(0 | 1)), "{args:?}: exit {code:?}");
        reports.push(read_json(&json));
    }
    let sweep_dir = dir.path().join("sweep");
    super::sweep::short_sweep(&server, &sweep_dir);
    reports.push(read_json(&sweep_dir.join("sweep.json")));
    let mut lists = Vec::new();
    for (i, r) in reports.iter().enumerate() {
        interval_lists(r, &format!("report {i}"), &mut lists);
    }
    assert!(
        lists.len() >= 10,
        "too few interval lists found: {}",
        lists.len()
    );
    assert!(
        lists.iter().any(|(at, _)| at.contains("(pooled)")),
        "no step's figures"
    );
    assert!(
        lists.iter().any(|(at, _)| at.contains("(list)")),
        "no chosen or repeat rows"
    );
    for (at, list) in &lists {
        for w in list.windows(2) {
            let high = |h: Option<u64>| h.unwrap_or(u64::MAX);
            assert!(
                w[0].0 <= w[1].0 && high(w[0].1) <= high(w[1].1),
                "{at}: not monotone: {list:?}"
            );
        }
    }
}

/// A sweep's steps: the figures (`steps[].response`, what the table, CSV and plots show)
/// pool exactly the runs the verdict pools: as many runs, and the verdict's own pooled
/// percentile is the figure shown; the runs left out are counted with why, and add up.
#[test]
fn verdict_and_figures_of_a_sweep_step_pool_the_same_runs() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    super::sweep::short_sweep(&server, dir.path());
    let bytes = std::fs::read(dir.path().join("sweep.json")).unwrap();
    let report: SweepReport = serde_json::from_slice(&bytes).unwrap();
    assert!(!report.steps.is_empty());
    let groups = tailrate::judge::summary::by_rate(&report.runs);
    assert_eq!(groups.len(), report.steps.len());
    for (step, (rate, group)) in report.steps.iter().zip(&groups) {
        assert_eq!(step.target_rate_per_sec, *rate);
        let left: usize = step.left_out.iter().map(|l| l.runs).sum();
        assert_eq!(step.pooled_runs + left, step.runs, "{step:?}");
        assert!(
            step.left_out
                .iter()
                .all(|l| !l.why.to_string().is_empty() && l.runs > 0)
        );
        let (visits, left_out) = tailrate::judge::counted::counted(group);
        assert_eq!(visits.len(), step.pooled_runs);
        // Read back, a reason is its words: compare what each says.
        let said = |l: &[tailrate::report::sweep::steps::LeftOut]| -> Vec<(String, usize)> {
            l.iter().map(|l| (l.why.to_string(), l.runs)).collect()
        };
        assert_eq!(said(&left_out), said(&step.left_out));
        for pooled in step.response.values() {
            assert_eq!(pooled.runs, step.pooled_runs, "{step:?}");
        }
        let verdict = step
            .slo
            .as_ref()
            .expect("a sweep with --slo judges each step");
        for check in &verdict.checks {
            let key = check
                .slo
                .split("<=")
                .next()
                .unwrap()
                .trim()
                .replace('.', "_");
            assert_eq!(
                step.response.get(&key),
                Some(&check.summary),
                "{rate}: the figure and the verdict's percentile differ"
            );
            if let Some(e) = check.exceedance {
                assert_eq!(e.visits, step.pooled_runs.min(e.visits));
            }
        }
    }
}

/// Two runs of the same configuration on one server, compared from their files: no row
/// reads `no difference`; a row reads `equivalent` only when its whole interval lies
/// inside the margin (5% of A's value), `cannot tell` when it holds zero and reaches past
/// it. A file compared with itself, or with a copy of itself, reads `same file`.
#[test]
fn compare_of_identical_runs_never_says_no_difference_and_a_file_with_itself_is_same_file() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let args = ["-t", "get", "--rate", "3000", "--duration", "1s", "-c", "2"];
    for path in [&a, &b] {
        assert_eq!(run_to(&server, path, &args), Some(0));
    }
    let compared = |x: &Path, y: &Path, extra: &[&str]| -> (String, Value) {
        let out = dir.path().join("c.json");
        let mut all = vec![
            "compare",
            x.to_str().unwrap(),
            y.to_str().unwrap(),
            "--json",
            out.to_str().unwrap(),
        ];
        all.extend(extra);
        let stdout = assert_success(&run_tailrate(&all));
        (stdout, read_json(&out))
    };
    let rows = |c: &Value| -> Vec<Value> {
        c["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["rows"].as_array().unwrap().clone())
            .collect()
    };
    let (text, c) = compared(&a, &b, &[]);
    let all = rows(&c);
    assert!(!all.is_empty());
    let mut equivalent = 0;
    for r in &all {
        let verdict = r["verdict"].as_str().unwrap();
        assert_ne!(verdict, "no_difference", "{r}");
        let ends = &r["difference_ci95_pct"];
        let (low, high) = (ends[0].as_f64(), ends[1].as_f64());
        let holds_zero = low.is_none_or(|l| l <= 0.0) && high.is_none_or(|h| h >= 0.0);
        let inside = low.is_some_and(|l| l > -5.0) && high.is_some_and(|h| h < 5.0);
        match verdict {
            "equivalent" => {
                equivalent += 1;
                assert!(inside, "{r}");
            }
            "cannot_tell" => assert!(holds_zero && !inside, "{r}"),
            "b_slower" | "b_faster" => assert!(!holds_zero, "{r}"),
            other => panic!("unexpected verdict {other}: {r}"),
        }
    }
    assert!(text.contains("equivalent within 5%"), "{text}");
    // A margin so wide that every bounded interval holding zero lies inside it.
    let (_, wide) = compared(&a, &b, &["--margin", "100000%"]);
    let wide_equivalent = rows(&wide)
        .iter()
        .filter(|r| r["verdict"] == "equivalent")
        .count();
    assert!(
        wide_equivalent >= equivalent,
        "{wide_equivalent} < {equivalent}"
    );

    let copy = dir.path().join("copy.json");
    std::fs::copy(&a, &copy).unwrap();
    for (other, why) in [(&a, "the same path"), (&copy, "files of the same bytes")] {
        let (text, c) = compared(&a, other, &[]);
        assert!(text.contains("same file") && text.contains(why), "{text}");
        assert_eq!(c["same_file"], why);
        assert!(rows(&c).iter().all(|r| r["verdict"] == "same_file"), "{c}");
    }
}
