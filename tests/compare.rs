//! `tailrate compare`: the pure comparison on hand-built latencies (verdicts, the MOVER
//! interval, unbounded sides, the `--fail-if-slower` threshold, matching, old reports);
//! the command on real reports and real servers (identical servers show no difference,
//! a slowed one shows B slower and fails `--fail-if-slower`); and its usage errors.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tailrate::judge::compare;
use tailrate::record::Metric;
use tailrate::report::Latency;
use tailrate::report::compare::{
    Comparison, ComparisonError, DEFAULT_MARGIN, Entry, Metrics, Options, Side, Verdict,
};
use tailrate::stats::confidence::{self, Ci95};
use tailrate::stats::mover::difference_interval;

use super::harness::{
    RedisServer, assert_success, assert_usage_error, read_json, run_tailrate,
    run_tailrate_with_timeout, stderr_of,
};

/// A latency whose six percentiles are `(value, low, high)`, in order p50 .. p99.99.
fn latency(points: [(u64, u64, Option<u64>); 6]) -> Latency {
    let ci = |i: usize| Some(Ci95(points[i].1, points[i].2));
    Latency {
        count: 10_000,
        min_ns: points[0].1,
        mean_ns: points[0].0 as f64,
        p50_ns: points[0].0,
        p50_ci95_ns: ci(0),
        p90_ns: points[1].0,
        p90_ci95_ns: ci(1),
        p95_ns: points[2].0,
        p95_ci95_ns: ci(2),
        p99_ns: points[3].0,
        p99_ci95_ns: ci(3),
        p99_9_ns: points[4].0,
        p99_9_ci95_ns: ci(4),
        p99_99_ns: points[5].0,
        p99_99_ci95_ns: ci(5),
        max_ns: points[5].2.unwrap_or(points[5].0),
        confidence: None,
        chosen: Vec::new(),
        hdr_v2_base64: String::new(),
    }
}

/// Every percentile at `value` ns with an interval of `±spread` ns.
fn flat(value: u64, spread: u64) -> Latency {
    latency([(value, value - spread, Some(value + spread)); 6])
}

/// Asserts that `row`'s interval holds zero and that its verdict is what the margin makes
/// of it: equivalent when the interval lies inside 5% of A's value, else cannot tell.
fn assert_by_margin(row: &compare::Row) {
    let [low, high] = row.difference_ci95_ns.unwrap().map(Option::unwrap);
    assert!(low <= 0 && high >= 0, "{row:?}");
    let margin = DEFAULT_MARGIN * row.a_ns as f64;
    let inside = -margin < low as f64 && (high as f64) < margin;
    let want = if inside {
        Verdict::Equivalent
    } else {
        Verdict::CannotTell
    };
    assert_eq!(row.verdict, want, "{row:?}");
}

/// `a` against `b` row by row with the intervals as given: [`compare::compare_latency`]
/// at 95% per row (where it reads no histogram).
fn rows_at_95(a: &Latency, b: &Latency, fail_if_slower: Option<f64>) -> Vec<compare::Row> {
    let none = tailrate::record::new_histogram();
    let side = |latency| compare::Measured {
        latency,
        histogram: &none,
    };
    compare::compare_latency(
        side(a),
        side(b),
        confidence::CONFIDENCE,
        fail_if_slower,
        DEFAULT_MARGIN,
    )
}

/// A measured latency of `n` samples whose quantile `q` is `quantile(q)` ns, each placed
/// at the middle of its share; its intervals from the histogram, as a run's report has.
fn sampled(n: u64, quantile: impl Fn(f64) -> f64) -> Latency {
    let mut h = tailrate::record::new_histogram();
    for i in 0..n {
        h.record(quantile((i as f64 + 0.5) / n as f64) as u64)
            .unwrap();
    }
    Latency::of(&h, &[])
}

/// `n` samples spread evenly from `low` to `high` ns.
fn uniform(n: u64, low: f64, high: f64) -> Latency {
    sampled(n, |q| low + q * (high - low))
}

fn entry(name: &str, response: Latency) -> Entry {
    Entry {
        name: name.into(),
        invalid: None,
        latency: BTreeMap::from([(Metric::Response, response)]),
        commands: Vec::new(),
        host: None,
        family: name.into(),
        rate: None,
    }
}

fn side(source: &str) -> Side {
    Side {
        source: source.into(),
        kind: "run".into(),
        tool: None,
        server_version: None,
        seed: None,
    }
}

fn options(fail_if_slower: Option<f64>) -> Options {
    Options {
        metrics: Metrics::One(Metric::Response),
        fail_if_slower,
        margin: DEFAULT_MARGIN,
        same_file: None,
    }
}

fn compare_entries(a: &[Entry], b: &[Entry], fail: Option<f64>) -> Comparison {
    compare::compare((side("a"), a), (side("b"), b), &options(fail)).unwrap()
}

#[test]
fn the_mover_interval_combines_each_sides_own_ends() {
    // d = 30; lower = 30 - sqrt(20² + 10²), upper = 30 + sqrt(10² + 20²).
    let (low, high) = difference_interval(100.0, (90.0, Some(120.0)), 130.0, (120.0, Some(150.0)));
    let (low, high) = (low.unwrap(), high.unwrap());
    assert!((low - (30.0 - 500f64.sqrt())).abs() < 1e-9, "{low}");
    assert!((high - (30.0 + 500f64.sqrt())).abs() < 1e-9, "{high}");
    // Lopsided intervals keep their shape: a long upper end on A pulls only the lower end.
    let (low, high) = difference_interval(100.0, (99.0, Some(200.0)), 100.0, (99.0, Some(101.0)));
    let (low, high) = (low.unwrap(), high.unwrap());
    assert!((low - -(100f64.powi(2) + 1.0).sqrt()).abs() < 1e-9, "{low}");
    assert!((high - 2f64.sqrt()).abs() < 1e-9, "{high}");
    // An open upper end on one side opens one end of the difference, not both: A open
    // above leaves the upper end 30 + sqrt(10² + 20²); B open above leaves B at least
    // 30 - sqrt(10² + 10²) slower.
    let (low, high) = difference_interval(100.0, (90.0, None), 130.0, (120.0, Some(150.0)));
    assert_eq!(low, None);
    assert!((high.unwrap() - (30.0 + 500f64.sqrt())).abs() < 1e-9);
    let (low, high) = difference_interval(100.0, (90.0, Some(110.0)), 130.0, (120.0, None));
    assert!((low.unwrap() - (30.0 - 200f64.sqrt())).abs() < 1e-9);
    assert_eq!(high, None);
}

#[test]
fn verdicts_follow_where_the_interval_lies_against_the_margin() {
    // A margin of 10 (ns) either side of zero.
    let m = 10.0;
    assert_eq!(Verdict::of((Some(1.0), Some(5.0)), m), Verdict::BSlower);
    assert_eq!(Verdict::of((Some(-5.0), Some(-1.0)), m), Verdict::BFaster);
    // Inside the margin on both sides: equivalent (both one-sided tests reject).
    assert_eq!(Verdict::of((Some(-1.0), Some(5.0)), m), Verdict::Equivalent);
    assert_eq!(Verdict::of((Some(0.0), Some(5.0)), m), Verdict::Equivalent);
    // Zero inside, but the interval reaches the margin or past it: cannot tell, never
    // "no difference" (`+318% [-260%, +369%]` was once read so).
    assert_eq!(
        Verdict::of((Some(-1.0), Some(10.0)), m),
        Verdict::CannotTell
    );
    assert_eq!(
        Verdict::of((Some(-260.0), Some(369.0)), m),
        Verdict::CannotTell
    );
    assert_eq!(Verdict::of((None, None), m), Verdict::CannotTell);
    // Half-open: one known end decides when it excludes zero, never equivalence.
    assert_eq!(Verdict::of((Some(1.0), None), m), Verdict::BSlower);
    assert_eq!(Verdict::of((Some(-1.0), None), m), Verdict::CannotTell);
    assert_eq!(Verdict::of((None, Some(-1.0)), m), Verdict::BFaster);
    assert_eq!(Verdict::of((None, Some(1.0)), m), Verdict::CannotTell);
}

#[test]
fn a_clear_gap_is_b_slower_or_faster_and_a_narrow_overlap_is_equivalent() {
    let a = flat(1_000_000, 10_000);
    let rows = rows_at_95(&a, &flat(1_200_000, 10_000), None);
    assert_eq!(rows.len(), 6);
    assert!(
        rows.iter().all(|r| r.verdict == Verdict::BSlower),
        "{rows:?}"
    );
    assert_eq!(rows[0].difference_ns, 200_000);
    assert!((rows[0].difference_pct.unwrap() - 20.0).abs() < 1e-9);
    let [low, high] = rows[0].difference_ci95_ns.unwrap().map(Option::unwrap);
    assert!(
        low > 150_000 && low < 200_000 && high > 200_000,
        "{low} {high}"
    );

    let rows = rows_at_95(&a, &flat(800_000, 10_000), None);
    assert!(
        rows.iter().all(|r| r.verdict == Verdict::BFaster),
        "{rows:?}"
    );

    let rows = rows_at_95(&a, &flat(1_005_000, 10_000), None);
    assert!(
        rows.iter().all(|r| r.verdict == Verdict::Equivalent),
        "{rows:?}"
    );
    // The same rows against a margin under their intervals' reach cannot tell.
    let none = tailrate::record::new_histogram();
    let side = |latency| compare::Measured {
        latency,
        histogram: &none,
    };
    let b = flat(1_005_000, 10_000);
    let rows = compare::compare_latency(side(&a), side(&b), confidence::CONFIDENCE, None, 0.001);
    assert!(
        rows.iter().all(|r| r.verdict == Verdict::CannotTell),
        "{rows:?}"
    );
}

#[test]
fn a_side_open_above_keeps_the_end_of_the_difference_that_does_not_rest_on_it() {
    let a = flat(1_000_000, 10_000);
    let mut b = flat(3_000_000, 10_000);
    b.p99_99_ci95_ns = Some(Ci95(2_990_000, None));
    // B open above (a side that stopped answering): still at least about 2 ms slower.
    let rows = rows_at_95(&a, &b, Some(0.05));
    let last = rows.last().unwrap();
    assert_eq!(last.percentile, "p99_99");
    assert_eq!(last.verdict, Verdict::BSlower);
    let [low, high] = last.difference_ci95_ns.unwrap();
    assert!(low.unwrap() > 1_900_000 && high.is_none(), "{last:?}");
    assert!(rows.iter().all(|r| r.slower_than_allowed), "{rows:?}");
    // A open above: B's being slower cannot be told, nor may it fail the threshold.
    let rows = rows_at_95(&b, &a, Some(0.05));
    let last = rows.last().unwrap();
    assert_eq!(last.verdict, Verdict::BFaster);
    let rows = rows_at_95(&b, &flat(4_000_000, 10_000), Some(0.05));
    let last = rows.last().unwrap();
    assert_eq!(last.verdict, Verdict::CannotTell, "{last:?}");
    assert!(!last.slower_than_allowed);
    assert_eq!(last.difference_ci95_ns.unwrap()[0], None);
}

#[test]
fn fail_if_slower_needs_the_lower_end_above_the_share_of_a() {
    // d = 100 µs on 1 ms (10%); the lower end is about 100 - sqrt(10² + 10²) ≈ 85.8 µs.
    let a = flat(1_000_000, 10_000);
    let b = flat(1_100_000, 10_000);
    let at = |share| rows_at_95(&a, &b, Some(share))[0].clone();
    let row = at(0.05);
    assert_eq!(row.verdict, Verdict::BSlower);
    let low_pct = row.difference_ci95_pct.unwrap()[0].unwrap();
    assert!((8.0..8.6).contains(&low_pct), "{low_pct}");
    assert!(at(0.05).slower_than_allowed);
    assert!(at(0.08).slower_than_allowed);
    // Slower with confidence, but not by 9% with confidence.
    assert!(!at(0.09).slower_than_allowed);
    assert_eq!(at(0.09).verdict, Verdict::BSlower);
    // Faster is never slower than allowed, even at 0%.
    let faster = rows_at_95(&b, &a, Some(0.0));
    assert!(faster.iter().all(|r| !r.slower_than_allowed));

    // Measured sides, 20% apart everywhere: past 5% with confidence at the five bounded
    // percentiles, nowhere past 30%.
    let a = uniform(20_000, 1_000_000.0, 2_000_000.0);
    let b = uniform(20_000, 1_200_000.0, 2_400_000.0);
    let c = compare_entries(
        &[entry("GET", a.clone())],
        &[entry("GET", b.clone())],
        Some(0.05),
    );
    assert_eq!(c.breaches().len(), 5, "{:?}", c.groups[0].rows);
    let c = compare_entries(&[entry("GET", a)], &[entry("GET", b)], Some(0.30));
    assert!(c.breaches().is_empty(), "{:?}", c.breaches());
}

/// Many rows share the 95%: each side's interval is taken at `1 - 0.05 / m` from its
/// histogram, so a difference that one row alone would claim at 95% can be "no
/// difference" among six; and at 95% the histogram gives back the reported interval.
#[test]
fn the_95_percent_is_the_comparisons_shared_by_its_rows() {
    let a = uniform(10_000, 1_000_000.0, 2_000_000.0);
    let h = a.histogram().unwrap();
    for p in tailrate::report::Percentile::ALL {
        assert_eq!(
            a.interval_at(&h, p, confidence::CONFIDENCE),
            a.at(p).ci95,
            "{p:?}"
        );
    }
    // p50 of A at 1.5 ms, its 95% interval about ±10 µs: B's p50 at +15 µs is a
    // difference at 95% for that row alone, not at 99.2% for each of six.
    let b = sampled(10_000, |q| {
        1_000_000.0 + q * 1_000_000.0 + if q < 0.6 { 15_000.0 } else { 0.0 }
    });
    let (ha, hb) = (a.histogram().unwrap(), b.histogram().unwrap());
    let measured = |latency, histogram| compare::Measured { latency, histogram };
    let alone = compare::compare_latency(
        measured(&a, &ha),
        measured(&b, &hb),
        0.95,
        None,
        DEFAULT_MARGIN,
    );
    assert_eq!(alone[0].verdict, Verdict::BSlower, "{:?}", alone[0]);
    let c = compare_entries(&[entry("GET", a.clone())], &[entry("GET", b.clone())], None);
    assert_eq!(c.family_rows, 5);
    assert!(
        (c.row_confidence - 0.99).abs() < 1e-12,
        "{}",
        c.row_confidence
    );
    let row = &c.groups[0].rows[0];
    assert_by_margin(row);
    let width = |r: &compare::Row| {
        let [l, h] = r.difference_ci95_ns.unwrap().map(Option::unwrap);
        h - l
    };
    assert!(width(row) > width(&alone[0]), "{row:?} {:?}", alone[0]);
    // The same rows compared in one family of one: the verdict alone is back.
    let one = Options {
        metrics: Metrics::One(Metric::Response),
        fail_if_slower: None,
        margin: DEFAULT_MARGIN,
        same_file: None,
    };
    let mut single_a = a.clone();
    let mut single_b = b.clone();
    for l in [&mut single_a, &mut single_b] {
        l.p90_ci95_ns = Some(Ci95(l.p90_ns, None));
        l.p95_ci95_ns = Some(Ci95(l.p95_ns, None));
        l.p99_ci95_ns = Some(Ci95(l.p99_ns, None));
        l.p99_9_ci95_ns = Some(Ci95(l.p99_9_ns, None));
    }
    let c = compare::compare(
        (side("a"), &[entry("GET", single_a)]),
        (side("b"), &[entry("GET", single_b)]),
        &one,
    )
    .unwrap();
    assert_eq!(c.family_rows, 1);
    assert_eq!(c.groups[0].rows[0].verdict, Verdict::BSlower);
}

#[test]
fn entries_match_by_name_in_order_and_the_rest_is_listed() {
    let one = || uniform(1_000, 500_000.0, 1_500_000.0);
    let two = || uniform(1_000, 1_500_000.0, 2_500_000.0);
    let a = [
        entry("GET", one()),
        entry("SET", one()),
        entry("SET", two()),
        entry("LPUSH", one()),
    ];
    let b = [
        entry("SET", one()),
        entry("GET", one()),
        entry("SET", two()),
        entry("INCR", one()),
    ];
    let c = compare_entries(&a, &b, None);
    let names: Vec<&str> = c.groups.iter().map(|g| g.test.as_str()).collect();
    assert_eq!(names, ["GET", "SET", "SET"]);
    // The second SET of A meets the second of B (both about 2 ms): no difference.
    let second = &c.groups[2].rows[0];
    assert_eq!(second.a_ns, second.b_ns);
    assert!(second.a_ns > c.groups[1].rows[0].a_ns * 3 / 2, "{second:?}");
    assert_by_margin(second);
    assert_eq!(c.only_in_a, ["LPUSH"]);
    assert_eq!(c.only_in_b, ["INCR"]);
}

#[test]
fn nothing_in_common_is_an_error_that_says_what_each_side_has() {
    let a = [entry("GET", flat(1_000_000, 10_000))];
    let b = [entry("SET", flat(1_000_000, 10_000))];
    let e = compare::compare((side("a"), &a), (side("b"), &b), &options(None)).unwrap_err();
    assert!(matches!(e, ComparisonError::NothingMatched { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("GET") && text.contains("SET"), "{text}");

    let wrong_metric = Options {
        metrics: Metrics::One(Metric::QueueWait),
        fail_if_slower: None,
        margin: DEFAULT_MARGIN,
        same_file: None,
    };
    let e = compare::compare((side("a"), &a), (side("b"), &a), &wrong_metric)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("queue_wait") && e.contains("--metric") && e.contains("response"),
        "{e}"
    );
}

#[test]
fn a_report_without_intervals_gets_binomial_ones_from_its_histogram() {
    let mut h = tailrate::record::new_histogram();
    for v in 1..=20_000u64 {
        h.record(50_000 + v * 7).unwrap();
    }
    let old = Latency::without_intervals(&h);
    assert!(old.p50_ci95_ns.is_none());
    let new = Latency::of(&h, &[]);
    let c = compare_entries(&[entry("GET", old)], &[entry("GET", new)], None);
    let row = &c.groups[0].rows[3];
    assert_eq!(row.percentile, "p99");
    let expected = confidence::estimate(&h, &[], 0.99).unwrap().ci95;
    assert_eq!(row.a_ci95_ns, expected);
    assert_by_margin(row);
    assert!(
        c.groups[0].a_intervals.starts_with("recomputed"),
        "{:?}",
        c.groups[0]
    );
    assert!(
        c.notes
            .iter()
            .any(|n| n.starts_with("A was written before") && n.contains("binomial")),
        "{:?}",
        c.notes
    );

    // No intervals and no histogram: nothing to recompute from.
    let mut bare = Latency::without_intervals(&h);
    bare.hdr_v2_base64 = "not base64".into();
    let e = compare::compare(
        (side("a"), &[entry("GET", bare)]),
        (side("b"), &[entry("GET", Latency::of(&h, &[]))]),
        &options(None),
    )
    .unwrap_err();
    assert!(
        matches!(e, ComparisonError::NoHistogram { side: "A", .. }),
        "{e}"
    );
}

/// The table and the JSON of a fixed comparison: every verdict, a breach of
/// `--fail-if-slower`, an entry on one side only, a note. A spreads evenly over 1-11 ms;
/// B is 0.5 ms slower up to its 70th percentile, 0.3 ms faster around its 90th, and the
/// same as A from its 94th up (the 99.99th has one sample beyond: unbounded).
#[test]
fn the_table_and_the_json_keep_their_shape() {
    let a = uniform(10_000, 1_000_000.0, 11_000_000.0);
    let b = sampled(10_000, |q| {
        let shift = match q {
            q if q < 0.7 => 500_000.0,
            q if q < 0.8 => 500_000.0 - (q - 0.7) / 0.1 * 800_000.0,
            q if q < 0.92 => -300_000.0,
            q if q < 0.94 => -300_000.0 + (q - 0.92) / 0.02 * 300_000.0,
            _ => 0.0,
        };
        1_000_000.0 + q * 10_000_000.0 + shift
    });
    let mut invalid = entry("GET", b);
    invalid.invalid = Some("schedule_lag failed".into());
    let c = compare_entries(
        &[
            entry("GET", a),
            entry("SET", uniform(1_000, 1_000_000.0, 2_000_000.0)),
        ],
        &[invalid],
        Some(0.05),
    );
    let verdicts: Vec<Verdict> = c.groups[0].rows.iter().map(|r| r.verdict).collect();
    assert_eq!(
        verdicts,
        [
            Verdict::BSlower,
            Verdict::BFaster,
            Verdict::Equivalent,
            Verdict::Equivalent,
            Verdict::Equivalent,
            Verdict::CannotTell
        ]
    );
    let mut text = Vec::new();
    tailrate::export::compare_text::write(&mut text, &c, 3).unwrap();
    insta::assert_snapshot!("compare_table", String::from_utf8(text).unwrap());
    let mut json = serde_json::to_value(&c).unwrap();
    json["tool"] = "tailrate VERSION".into();
    insta::assert_json_snapshot!("compare_json", json);
}

#[test]
fn compare_refuses_bad_flags_naming_them() {
    assert_usage_error(&["compare"], &["two reports", "--live"]);
    assert_usage_error(&["compare", "a.json"], &["two reports", "1 given"]);
    assert_usage_error(&["compare", "a", "b", "c"], &["two reports", "3 given"]);
    assert_usage_error(
        &["compare", "a", "b", "--rounds", "3"],
        &["--rounds", "--live"],
    );
    assert_usage_error(&["compare", "a", "b", "--a", "h:1"], &["--a", "--live"]);
    assert_usage_error(&["compare", "a", "b", "-c", "5"], &["-c", "--live"]);
    assert_usage_error(
        &["compare", "a", "b", "--fail-if-slower", "five"],
        &["--fail-if-slower", "five"],
    );
    assert_usage_error(
        &["compare", "a", "b", "--fail-if-slower", "-2%"],
        &["--fail-if-slower"],
    );
    assert_usage_error(
        &["compare", "a", "b", "--metric", "latency"],
        &["--metric", "response"],
    );
    assert_usage_error(
        &["compare", "a", "b", "--metric", "lag", "--all-metrics"],
        &["--metric", "--all-metrics"],
    );
    let live = [
        "compare",
        "--live",
        "--a",
        "127.0.0.1:1",
        "--b",
        "127.0.0.1:2",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        live.iter().chain(extra).copied().collect()
    };
    assert_usage_error(&live, &["--rate"]);
    assert_usage_error(
        &["compare", "--live", "--rate", "1k", "--a", "127.0.0.1:1"],
        &["--b"],
    );
    assert_usage_error(&with(&["--rate", "1k", "--rounds", "0"]), &["--rounds"]);
    assert_usage_error(
        &with(&["--rate", "1k", "--round-duration", "0s"]),
        &["--round-duration"],
    );
    assert_usage_error(
        &with(&["--rate", "1k", "--duration", "5s"]),
        &["--duration", "compare"],
    );
    assert_usage_error(
        &with(&["--rate", "1k", "--hdr-log", "x.hlog"]),
        &["--hdr-log"],
    );
    assert_usage_error(
        &with(&["--rate", "1k", "--repeat", "3"]),
        &["--repeat", "compare"],
    );
    assert_usage_error(&with(&["--rate", "1k", "a.json"]), &["REPORT", "--live"]);
    assert_usage_error(
        &[
            "compare",
            "--live",
            "--rate",
            "1k",
            "--a",
            "nohost",
            "--b",
            "127.0.0.1:2",
        ],
        &["--a", "HOST:PORT"],
    );
}

/// A short open-loop run report of `-t get` against `port`, written to `path`.
fn run_report(port: u16, path: &Path, extra: &[&str]) {
    let port = port.to_string();
    let mut args = vec![
        "-p",
        &port,
        "--rate",
        "2000",
        "--duration",
        "500ms",
        "-c",
        "2",
        "-q",
        "--no-progress",
        "--json",
        path.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    assert_success(&run_tailrate(&args));
}

/// Removes every `*_ci95_ns` and `confidence` key: a report as written before intervals.
fn strip_intervals(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|k, _| !k.ends_with("_ci95_ns") && k != "confidence");
            map.values_mut().for_each(strip_intervals);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_intervals),
        _ => {}
    }
}

#[test]
fn bad_reports_are_usage_errors_that_name_the_file() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let get = dir.path().join("get.json");
    let set = dir.path().join("set.json");
    run_report(server.port(), &get, &["-t", "get"]);
    run_report(server.port(), &set, &["-t", "set"]);
    let get_arg = get.to_str().unwrap();
    let missing = dir.path().join("missing.json");
    assert_usage_error(
        &["compare", get_arg, missing.to_str().unwrap()],
        &["B report", "missing.json"],
    );
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "{ not json").unwrap();
    assert_usage_error(
        &["compare", garbage.to_str().unwrap(), get_arg],
        &[
            "A report",
            "garbage.json",
            "is not JSON (at line 1, column 3): give a report tailrate wrote with --json",
        ],
    );
    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"{"schema_version": 1, "hello": []}"#).unwrap();
    assert_usage_error(
        &["compare", get_arg, other.to_str().unwrap()],
        &["other.json", "not a report"],
    );
    assert_usage_error(
        &["compare", get_arg, set.to_str().unwrap()],
        &[
            "get.json with",
            "set.json",
            "nothing to compare",
            "GET",
            "SET",
        ],
    );

    // A report from before intervals is compared from its histograms, and says so.
    let mut old = read_json(&get);
    strip_intervals(&mut old);
    assert!(!old.to_string().contains("ci95"));
    let old_path = dir.path().join("old.json");
    std::fs::write(&old_path, old.to_string()).unwrap();
    let out = run_tailrate(&["compare", old_path.to_str().unwrap(), get_arg]);
    let stdout = assert_success(&out);
    assert!(stdout.contains("recomputed from the histogram"), "{stdout}");
    assert!(
        stdout.contains("A was written before reports had intervals"),
        "{stdout}"
    );
    // The same histograms on both sides: no percentile differs.
    assert!(stdout.contains("B slower at 0, faster at 0"), "{stdout}");
}

#[test]
fn sweeps_match_by_kind_and_rate_pooled_repeats_by_number_and_neither_mixes_with_runs() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let port = server.port().to_string();
    let out = run_tailrate_with_timeout(
        &[
            "sweep",
            "-p",
            &port,
            "-t",
            "get",
            "-c",
            "2",
            "--rates",
            "1k,2k",
            "--duration",
            "300ms",
            "--settle",
            "0s",
            "--no-progress",
            "--seed",
            "3",
            "--out",
            dir.path().to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert_success(&out);
    let sweep = dir.path().join("sweep.json");
    let sweep_arg = sweep.to_str().unwrap();
    let json = dir.path().join("cmp.json");
    let out = run_tailrate(&[
        "compare",
        sweep_arg,
        sweep_arg,
        "--all-metrics",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = assert_success(&out);
    assert!(
        stdout.contains("GET open loop at 1000 req/s: response time"),
        "{stdout}"
    );
    let c = read_json(&json);
    let tests: Vec<&str> = c["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["test"].as_str().unwrap())
        .collect();
    assert!(tests.contains(&"GET open loop at 2000 req/s"), "{tests:?}");
    let metrics: Vec<&str> = c["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["metric"].as_str().unwrap())
        .collect();
    assert!(
        metrics.contains(&"service") && metrics.contains(&"lag"),
        "{metrics:?}"
    );
    // A file against itself: every difference is exactly zero, and reads `same file`.
    assert!(stdout.contains("same file"), "{stdout}");
    for g in c["groups"].as_array().unwrap() {
        for r in g["rows"].as_array().unwrap() {
            assert_eq!(r["difference_ns"], 0, "{r}");
            assert_eq!(r["verdict"], "same_file", "{r}");
        }
    }

    let run = dir.path().join("run.json");
    run_report(server.port(), &run, &["-t", "get", "--repeat", "2"]);
    assert_usage_error(
        &["compare", run.to_str().unwrap(), sweep_arg],
        &["run report", "sweep report"],
    );
    // Repeats match repeats, by number.
    let out = run_tailrate(&["compare", run.to_str().unwrap(), run.to_str().unwrap()]);
    let stdout = assert_success(&out);
    assert!(stdout.contains("GET (repeat 1): response time"), "{stdout}");
    assert!(stdout.contains("GET (repeat 2): response time"), "{stdout}");
}

/// The duet's shape, not its numbers: rounds alternate AB, BA; both sides share a seed;
/// each side's replies are the sum of its turns; too few rounds are noted.
#[test]
fn a_duet_alternates_its_order_and_says_when_its_rounds_are_too_few() {
    let server = RedisServer::start();
    let addr = server.addr();
    let out = run_tailrate_with_timeout(
        &[
            "compare",
            "--live",
            "--a",
            &addr,
            "--b",
            &addr,
            "-t",
            "get",
            "-c",
            "2",
            "--rate",
            "1000",
            "--rounds",
            "3",
            "--round-duration",
            "100ms",
            "--seed",
            "9",
            "--json",
            "-",
        ],
        Duration::from_secs(30),
    );
    let stderr = stderr_of(&out);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    let turns: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("round "))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        turns,
        ["1/3 A", "1/3 B", "2/3 B", "2/3 A", "3/3 A", "3/3 B"],
        "{stderr}"
    );
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["live"]["orders"], serde_json::json!(["AB", "BA", "AB"]));
    assert_eq!(c["a"]["seed"], 9);
    assert_eq!(c["b"]["seed"], 9);
    let group = &c["groups"][0];
    // Three turns of 100 ms at 1000/s: about 300 replies a side, the same schedule on each.
    let count = group["a_count"].as_u64().unwrap();
    assert!((200..=400).contains(&count), "{group}");
    // The same schedule on both sides: only a reply still in flight at a turn's end
    // can set their counts apart.
    let b_count = group["b_count"].as_u64().unwrap();
    assert!(count.abs_diff(b_count) <= count / 50, "{group}");
    assert!(
        group["a_intervals"]
            .as_str()
            .unwrap()
            .starts_with("binomial only (3 rounds"),
        "{group}"
    );
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("only 3 rounds") && notes.contains("--rounds 10"),
        "{notes}"
    );
}

/// Tests that measure latency: nextest runs each alone (see .config/nextest.toml).
mod timing {
    use statrs::distribution::{Binomial, DiscreteCDF};

    use super::*;
    use crate::harness::{DelayRelay, skip, this_test};

    /// Seeded comparisons of two identical servers.
    const SEEDS: u64 = 20;
    /// Most of them that may claim a difference (see the test that uses it).
    const MOST_NOISY_DUETS: u64 = 5;
    /// Rounds of each duet, of 25 ms per side: with 20 batches rather than 10 the spread
    /// between rounds is measured at two batch lengths and on more degrees of freedom, so
    /// a side's interval is less often too narrow on a host whose noise changes from round
    /// to round; a duet still takes about 1.5 s.
    const ROUNDS: &str = "20";
    /// How long the relay holds each chunk, each way: B is 4 ms further away than A.
    const ONE_WAY: Duration = Duration::from_millis(2);
    /// Duets tried for a verdict the host's noise may hide.
    const ATTEMPTS: u64 = 3;
    /// Above this, A's own p50 interval says the host drowned the server's few tens of
    /// microseconds (on a quiet host it ends well under 0.2 ms).
    const DISTURBED_NS: u64 = 1_000_000;

    /// A live duet of `a` against `b`, JSON on standard output; the exit code, the JSON,
    /// and standard error.
    fn duet(a: &str, b: &str, seed: u64, extra: &[&str]) -> (Option<i32>, Value, String) {
        let seed = seed.to_string();
        let mut args = vec![
            "compare",
            "--live",
            "--a",
            a,
            "--b",
            b,
            "-t",
            "get",
            "-c",
            "4",
            "--rate",
            "2000",
            "--rounds",
            ROUNDS,
            "--round-duration",
            "25ms",
            "--seed",
            &seed,
            "--no-progress",
            "--json",
            "-",
        ];
        args.extend_from_slice(extra);
        let out = run_tailrate_with_timeout(&args, Duration::from_secs(30));
        let stderr = stderr_of(&out);
        let json = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("no comparison JSON ({e}): {stderr}"));
        (out.status.code(), json, stderr)
    }

    fn verdicts(c: &Value) -> Vec<(String, String)> {
        c["groups"][0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["percentile"].as_str().unwrap().to_string(),
                    r["verdict"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// The upper end of the p50 interval of side `side` (`a` or `b`), unbounded as max.
    fn p50_high(c: &Value, side: &str) -> u64 {
        c["groups"][0]["rows"][0][format!("{side}_ci95_ns")][1]
            .as_u64()
            .unwrap_or(u64::MAX)
    }

    /// Two servers started alike, measured in turns: the comparison's intervals hold zero
    /// together with 95% confidence (Bonferroni over its rows), and more where the two
    /// sides share the host's noise (MOVER assumes them independent), so a comparison
    /// claims a difference anywhere (in any metric at any percentile) at most one time
    /// in twenty. Of twenty, a tool at exactly that rate makes more than
    /// [`MOST_NOISY_DUETS`] such claims one time in three thousand, so more fails it. p50
    /// must be bounded in each, so that "cannot tell" everywhere cannot pass it; and
    /// `--fail-if-slower` fails only a comparison that says B slower somewhere.
    #[test]
    fn two_identical_servers_rarely_show_a_difference_in_20_seeded_duets() {
        let a = RedisServer::start();
        let b = RedisServer::start();
        let mut quiet = 0;
        let (mut decided, mut claims) = (0usize, 0usize);
        let mut claimed_slower = 0;
        let mut failed_threshold = 0;
        let mut seen = Vec::new();
        for seed in 1..=SEEDS {
            let (code, c, stderr) = duet(&a.addr(), &b.addr(), seed, &["--fail-if-slower", "5%"]);
            assert!(matches!(code, Some(0 | 1)), "exit {code:?}: {stderr}");
            failed_threshold += usize::from(code == Some(1));
            let v = verdicts(&c);
            // Bounded, not decided: an interval a little wider than the margin reads
            // "cannot tell", and that is a right answer for two identical servers.
            let p50 = &c["groups"][0]["rows"][0]["difference_ci95_ns"];
            assert!(
                p50[0].is_i64() && p50[1].is_i64(),
                "seed {seed}: p50 unbounded ({p50}): {v:?}"
            );
            let all = all_verdicts(&c);
            let claim = |verdict: &str| verdict == "b_slower" || verdict == "b_faster";
            decided += all.iter().filter(|(_, v)| v != "cannot_tell").count();
            let claimed: Vec<&(String, String)> = all.iter().filter(|(_, v)| claim(v)).collect();
            claims += claimed.len();
            quiet += usize::from(claimed.is_empty());
            claimed_slower += usize::from(all.iter().any(|(_, v)| v == "b_slower"));
            seen.push(format!(
                "seed {seed}: {} rows with a verdict, each at {}; claims {claimed:?}",
                c["family_rows"], c["row_confidence"]
            ));
        }
        println!(
            "{quiet}/{SEEDS} without a difference; {claims} claims in {decided} verdicts\n{}",
            seen.join("\n")
        );
        // The bound is the binomial's: at a 5% rate per duet, more than this many of
        // twenty is rarer than 1 in 1,000 (two of twenty is one run in four).
        let rarer = |k: u64| {
            let binomial = Binomial::new(0.05, SEEDS).unwrap();
            1.0 - binomial.cdf(k) < 1e-3
        };
        assert!(rarer(MOST_NOISY_DUETS) && !rarer(MOST_NOISY_DUETS - 1));
        assert!(
            SEEDS as usize - quiet <= MOST_NOISY_DUETS as usize,
            "{quiet} of {SEEDS} comparisons of identical servers without a difference:\n{}",
            seen.join("\n")
        );
        assert!(
            failed_threshold <= claimed_slower,
            "--fail-if-slower 5% failed {failed_threshold} times, B slower in {claimed_slower}"
        );
    }

    /// Every row's verdict, named `metric percentile`.
    fn all_verdicts(c: &Value) -> Vec<(String, String)> {
        c["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| {
                g["rows"].as_array().unwrap().iter().map(move |r| {
                    (
                        format!(
                            "{} {}",
                            g["metric"].as_str().unwrap(),
                            r["percentile"].as_str().unwrap()
                        ),
                        r["verdict"].as_str().unwrap().to_string(),
                    )
                })
            })
            .collect()
    }

    /// Duets of `a` against `b` until one gives `want` at p50 (at most [`ATTEMPTS`]):
    /// its exit code, JSON and standard error; `None` when the host hid it every time
    /// (the fast side's own p50 interval reached past [`DISTURBED_NS`]), after recording
    /// the skip. A wrong verdict on an undisturbed host fails the test.
    fn duet_until(a: &str, b: &str, want: &str) -> Option<(Option<i32>, Value, String)> {
        let fast = if want == "b_slower" { "a" } else { "b" };
        let mut seen = Vec::new();
        for seed in 1..=ATTEMPTS {
            let (code, c, stderr) = duet(a, b, seed, &["--fail-if-slower", "5%"]);
            let v = verdicts(&c);
            if v[0].1 == want {
                return Some((code, c, stderr));
            }
            let high = p50_high(&c, fast);
            assert!(
                high > DISTURBED_NS,
                "seed {seed}: p50 is {} though the fast side's interval ends at {high} ns: {}",
                v[0].1,
                c["groups"][0]["rows"][0]
            );
            seen.push(format!("seed {seed}: {v:?}, fast p50 up to {high} ns"));
        }
        skip(
            &this_test(),
            &format!("the host's noise hid a 4 ms difference in every duet: {seen:?}"),
        );
        None
    }

    /// B behind a relay that holds every chunk 2 ms each way: every reply takes at least
    /// 4 ms longer, against tens of microseconds for A. The duet says B slower at p50 by
    /// about 4 ms, and `--fail-if-slower 5%` exits 1; turned round, B is faster and it
    /// exits 0; two saved runs compared from their files say B slower too.
    #[test]
    fn a_slowed_server_is_b_slower_and_fails_the_threshold() {
        let server = RedisServer::start();
        let relay = DelayRelay::start(&server.addr(), ONE_WAY);
        let slow = format!("127.0.0.1:{}", relay.port());
        let Some((code, c, stderr)) = duet_until(&server.addr(), &slow, "b_slower") else {
            return;
        };
        assert_eq!(code, Some(1), "{:?}\n{stderr}", verdicts(&c));
        assert!(stderr.contains("--fail-if-slower 5%"), "{stderr}");
        let p50 = &c["groups"][0]["rows"][0];
        assert_eq!(p50["slower_than_allowed"], true, "{p50}");
        let d_ms = p50["difference_ns"].as_f64().unwrap() / 1e6;
        assert!(
            (3.5..20.0).contains(&d_ms),
            "p50 difference {d_ms} ms: {p50}"
        );
        println!(
            "p50: A {} ns, B {} ns, B-A interval {}",
            p50["a_ns"], p50["b_ns"], p50["difference_ci95_ns"]
        );

        let Some((code, c, stderr)) = duet_until(&slow, &server.addr(), "b_faster") else {
            return;
        };
        assert_eq!(code, Some(0), "{:?}\n{stderr}", verdicts(&c));

        // Two saved runs, the second through the relay.
        let dir = tempfile::tempdir().unwrap();
        let (fast_json, slow_json) = (dir.path().join("a.json"), dir.path().join("b.json"));
        run_report(server.port(), &fast_json, &["-t", "get"]);
        run_report(relay.port(), &slow_json, &["-t", "get"]);
        let json = dir.path().join("cmp.json");
        let out = run_tailrate(&[
            "compare",
            fast_json.to_str().unwrap(),
            slow_json.to_str().unwrap(),
            "--fail-if-slower",
            "5%",
            "--json",
            json.to_str().unwrap(),
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let c = read_json(&json);
        if verdicts(&c)[0].1 != "b_slower" && p50_high(&c, "a") > DISTURBED_NS {
            skip(
                &this_test(),
                &format!("a stall hid the difference of the saved runs: {stdout}"),
            );
            return;
        }
        assert_eq!(out.status.code(), Some(1), "{stdout}\n{}", stderr_of(&out));
        assert!(stdout.contains("B slower"), "{stdout}");
    }
}

#[test]
fn sweeps_at_rates_within_the_resolution_meet_and_their_capacities_are_compared() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let port = server.port().to_string();
    let sweep_at = |rates: &str, name: &str| {
        let out = dir.path().join(name);
        let run = run_tailrate_with_timeout(
            &[
                "sweep",
                "-p",
                &port,
                "-t",
                "get",
                "-c",
                "2",
                "--rates",
                rates,
                "--duration",
                "300ms",
                "--warmup",
                "100ms",
                "--settle",
                "0s",
                // A p50 far under its bound passes on 4 runs (a p99 waits for 16), so the
                // highest rate passes even when a busy host leaves some runs out.
                "--slo",
                "p50<=100ms",
                "--no-progress",
                "--seed",
                "3",
                "--out",
                out.to_str().unwrap(),
            ],
            Duration::from_secs(120),
        );
        assert_success(&run);
        out.join("sweep.json")
    };
    // B's rates 1% above A's: within the default resolution of 2%.
    let (a, b) = (sweep_at("1k,2k", "a"), sweep_at("1010,2020", "b"));
    let json = dir.path().join("cmp.json");
    let out = run_tailrate(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = assert_success(&out);
    let c = read_json(&json);
    let tests: Vec<&str> = c["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["test"].as_str().unwrap())
        .collect();
    for wanted in [
        "GET open loop at 1000 req/s (B at 1010 req/s)",
        "GET open loop at 2000 req/s (B at 2020 req/s)",
    ] {
        assert!(tests.contains(&wanted), "{tests:?}\n{stdout}");
    }
    assert_eq!(c["only_in_a"], serde_json::json!([]), "{stdout}");
    assert_eq!(c["only_in_b"], serde_json::json!([]), "{stdout}");
    // Both pass at their highest rate with nothing failing above: open bands that meet.
    let cap = &c["capacity"];
    assert_eq!(cap["objectives"], "p50<=100ms", "{cap}");
    assert_eq!(cap["verdict"], "cannot_tell", "{cap}");
    assert_eq!(cap["a_per_sec"], 2000.0, "{cap}");
    assert!(
        stdout.contains("capacity at p50<=100ms: A 2000 req/s (band 2000..open), B 2020 req/s (band 2020..open): cannot tell"),
        "{stdout}"
    );
}
