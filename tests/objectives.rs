//! `--slo` on a single run: each objective judged on the percentile's 95% interval
//! (pass under the bound, fail above, uncertain across), in the text, `-q` and JSON;
//! exit 1 when one fails, and when one is undecided under `--strict`; and each check's
//! figure and bound as numbers in the JSON.

use serde_json::Value;

use super::harness::{RedisServer, assert_usage_error, read_json, run_tailrate, stderr_of};

/// A run of GET against `server` with `args`, its JSON report and (exit code, stdout,
/// stderr).
fn run(server: &RedisServer, args: &[&str]) -> (Option<i32>, String, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let port = server.port().to_string();
    let mut all = vec![
        "-p",
        &port,
        "-t",
        "get",
        "--no-progress",
        "--json",
        json.to_str().unwrap(),
    ];
    all.extend(args);
    let out = run_tailrate(&all);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), stdout, stderr_of(&out), read_json(&json))
}

/// Each objective's verdict in `report`'s first test.
fn verdicts(report: &Value) -> Vec<String> {
    report["tests"][0]["slo"]["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("no objectives: {}", report["tests"][0]))
        .iter()
        .map(|c| c["verdict"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_run_passes_an_objective_far_above_it_and_fails_one_far_below_with_exit_1() {
    let server = RedisServer::start();
    let (code, stdout, stderr, report) = run(
        &server,
        &[
            "-n", "20000", "-c", "4", "--slo", "p50<=1s", "--slo", "p99<=1us",
        ],
    );
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert_eq!(verdicts(&report), ["pass", "fail"]);
    assert_eq!(report["tests"][0]["slo"]["verdict"], "fail");
    assert!(
        stderr.contains("failed its objectives") && stderr.contains("p99<=1us fail"),
        "{stderr}"
    );
    assert!(stdout.contains("objectives (--slo"), "{stdout}");

    // Open loop, one objective that holds: exit 0, and the -q line says so. (A p50:
    // beside a parallel test, 50 ms batches can differ so much that a p90's interval
    // reaches past the largest reply, and no bound is then shown to hold.)
    let (code, stdout, stderr, report) = run(
        &server,
        &[
            "--rate",
            "2000",
            "--duration",
            "2s",
            "-q",
            "--slo",
            "p50<=1s",
        ],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(verdicts(&report), ["pass"], "{}", report["tests"][0]["slo"]);
    assert!(stdout.contains("(objectives: p50<=1s pass)"), "{stdout}");
    // Each check with one figure against one bound has them as numbers too.
    let checks = report["tests"][0]["checks"].as_array().unwrap();
    let achieved = checks
        .iter()
        .find(|c| c["name"] == "achieved_rate")
        .unwrap();
    assert_eq!(achieved["bound"].as_f64(), Some(0.01), "{achieved}");
    assert_eq!(achieved["unit"], "fraction", "{achieved}");
    assert!(achieved["value"].as_f64().is_some(), "{achieved}");
    let lag = checks.iter().find(|c| c["name"] == "schedule_lag").unwrap();
    assert_eq!(lag["bound"].as_f64(), Some(0.1), "{lag}");
}

#[test]
fn an_undecided_objective_exits_0_and_1_under_strict() {
    let server = RedisServer::start();
    // 500 replies leave fewer than 10 beyond the p99.99: its interval has no upper end.
    let args = ["-n", "500", "-c", "1", "--slo", "p99.99<=10s"];
    let (code, stdout, stderr, report) = run(&server, &args);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(verdicts(&report), ["uncertain"]);
    assert!(stdout.contains("undecided: measure longer"), "{stdout}");
    let strict: Vec<&str> = args.iter().copied().chain(["--strict"]).collect();
    let (code, _, stderr, _) = run(&server, &strict);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("undecided and --strict"), "{stderr}");
}

#[test]
fn a_malformed_objective_is_a_usage_error_naming_the_flag() {
    assert_usage_error(&["--slo", "p99<1ms", "-t", "get"], &["--slo", "'<='"]);
    assert_usage_error(
        &["--slo", "p100<=1ms", "-t", "get"],
        &["--slo", "out of range"],
    );
}

/// With `--repeat`, the objectives are decided on the repeats pooled, by a sweep step's
/// rule: four counted repeats reach its first look and decide; three do not, and the run says
/// how many more a decision needs. A bound far above passes, one far below fails with
/// exit 1 naming the pooled repeats.
#[test]
fn repeats_decide_the_objectives_pooled_as_a_sweep_step_does() {
    let server = RedisServer::start();
    let base = [
        "--rate",
        "1000",
        "--duration",
        "600ms",
        "--warmup",
        "100ms",
        "-c",
        "2",
    ];
    let pooled = |report: &Value| report["repeats"][0]["objectives"].clone();

    let (code, stdout, stderr, report) = run(
        &server,
        &[&base[..], &["--repeat", "4", "--slo", "p50<=2s"]].concat(),
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(pooled(&report)["verdict"], "pass", "{}", pooled(&report));
    assert!(
        stdout.contains("objectives over the 4 repeats pooled: PASS"),
        "{stdout}"
    );

    let (code, stdout, stderr, report) = run(
        &server,
        &[&base[..], &["--repeat", "5", "--slo", "p99<=1us"]].concat(),
    );
    let judged = pooled(&report);
    let too_few = judged["why"]
        .as_str()
        .is_some_and(|w| w.contains("runs a decision needs"));
    if judged["verdict"] == "uncertain" && (judged["generator_limited"] == true || too_few) {
        // Runs whose generator fell behind are left out of the decision, and a failure
        // measured mostly on them is not the server's (the rule's own guards): a host this
        // busy cannot show the failure.
        super::harness::skip(
            "objectives::repeats_decide_the_objectives_pooled_as_a_sweep_step_does",
            &format!(
                "the generator fell behind in most repeats: {}",
                judged["why"]
            ),
        );
        return;
    }
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert_eq!(judged["verdict"], "fail", "{judged}");
    assert!(
        stderr.contains("over its 5 repeats pooled failed its objectives"),
        "{stderr}"
    );

    let (code, stdout, stderr, report) = run(
        &server,
        &[&base[..], &["--repeat", "3", "--slo", "p99<=1us"]].concat(),
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        pooled(&report)["verdict"],
        "uncertain",
        "{}",
        pooled(&report)
    );
    // Undecided for want of runs, or (on a busy host) because the generator fell behind.
    let why = pooled(&report)["why"].as_str().unwrap().to_string();
    assert!(
        why.contains("3 of the 4 runs a decision needs")
            || why.contains("limited by the generator"),
        "{why}"
    );
}

/// Where a verdict asked for is read: in the open loop's answer block (before its blank
/// line, above redis-benchmark's blocks), and at the top of a closed loop's report.
#[test]
fn the_objectives_verdict_is_in_the_answer_block_at_the_top() {
    let server = RedisServer::start();
    let open = [
        "--rate",
        "2000",
        "--duration",
        "500ms",
        "-c",
        "2",
        "--slo",
        "p50<=1s",
    ];
    let closed = ["-n", "2000", "-c", "2", "--slo", "p50<=1s"];
    for args in [&open[..], &closed[..]] {
        let (_, stdout, stderr, _) = run(&server, args);
        let lines: Vec<&str> = stdout.lines().collect();
        let at = |needle: &str| {
            lines
                .iter()
                .position(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("no {needle:?} in\n{stdout}\n{stderr}"))
        };
        let objectives = at("objectives (--slo");
        assert!(
            objectives < at("Latency by percentile distribution"),
            "{stdout}"
        );
        // In the first block: no blank line between the title and the verdict.
        let title = at("====== GET ======");
        assert!(
            lines[title..=objectives + 1].iter().all(|l| !l.is_empty()),
            "the verdict is not in the block under the title:\n{stdout}"
        );
    }
}
