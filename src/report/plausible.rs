//! Whether a run report read back from a file holds numbers a run could have produced,
//! before `merge` adds them or `compare` tests them: counts no run reaches (sums of a few
//! thousand shards would wrap), rates and durations that are negative, not a number or
//! beyond any clock, and histograms that do not decode. A report tailrate wrote always
//! passes; a hand-edited or hostile one is refused with the test and the field.

use super::host::HostReport;
use super::latency::ResponseWindows;
use super::{Counts, TestReport};

/// The most any count of one report may be: 10^15 requests (a year at 30 million a
/// second); ten thousand shards of it still add inside a u64.
pub const MOST_COUNT: u64 = 1_000_000_000_000_000;
/// The most requests or bytes a second: a rate, a throughput.
pub const MOST_RATE: f64 = 1e12;
/// The longest a run may have measured, in seconds: a century.
pub const MOST_SECS: f64 = 100.0 * 365.25 * 86_400.0;

/// `v` as a reader takes it in: `1e308`, not its 309 digits.
pub(super) fn shown(v: f64) -> String {
    if v.is_finite() && (v.abs() >= 1e15 || (v != 0.0 && v.abs() < 1e-6)) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Why `test` holds a number no run could have, naming the field; `None` when it holds
/// none.
pub fn implausible(test: &TestReport) -> Option<String> {
    let at = |field: &str, why: String| Some(format!("test {:?}: {field} {why}", test.name));
    if let Some(why) = counts(&test.counts) {
        return at("counts", why);
    }
    for c in &test.commands {
        if let Some(why) = counts(&c.counts) {
            return at(&format!("command {:?}'s counts", c.command), why);
        }
    }
    let rates = [
        (
            "target_rate_per_sec",
            test.target_rate_per_sec.unwrap_or(0.0),
        ),
        ("achieved_rate_per_sec", test.achieved_rate_per_sec),
        (
            "offered_rate_per_sec",
            test.offered_rate_per_sec.unwrap_or(0.0),
        ),
        ("throughput_per_sec", test.throughput_per_sec),
        ("sent_bytes_per_sec", test.sent_bytes_per_sec),
        ("received_bytes_per_sec", test.received_bytes_per_sec),
    ];
    for (field, value) in rates {
        if !(value.is_finite() && (0.0..=MOST_RATE).contains(&value)) {
            return at(
                field,
                format!("is {}: a rate is 0 to {MOST_RATE:e} a second", shown(value)),
            );
        }
    }
    if !(test.measured_secs.is_finite() && (0.0..=MOST_SECS).contains(&test.measured_secs)) {
        return at(
            "measured_secs",
            format!(
                "is {}: a run measures 0 to {MOST_SECS:e} s",
                shown(test.measured_secs)
            ),
        );
    }
    for (field, value) in [
        ("sent_bytes", test.sent_bytes),
        ("received_bytes", test.received_bytes),
    ] {
        // A petabyte: ten thousand shards of it still add inside a u64.
        if value > MOST_COUNT {
            return at(field, format!("is {value}: more than any run sends"));
        }
    }
    let latencies = test
        .latency
        .iter()
        .map(|(metric, l)| (metric.to_string(), l))
        .chain(test.commands.iter().flat_map(|c| {
            c.latency
                .iter()
                .map(move |(metric, l)| (format!("{}.{metric}", c.command), l))
        }));
    for (metric, latency) in latencies {
        if latency.hdr_v2_base64.is_empty() {
            continue;
        }
        if let Err(why) = super::hdr_decode::decode(&latency.hdr_v2_base64) {
            return at(&format!("latency.{metric}.hdr_v2_base64"), why);
        }
    }
    if let Some(windows) = &test.response_windows
        && !(windows.window_secs.is_finite()
            && windows.window_secs > 0.0
            && windows.window_secs <= MOST_SECS)
    {
        return at(
            "response_windows.window_secs",
            format!(
                "is {}: a window lasts over 0 and at most {MOST_SECS:e} s",
                shown(windows.window_secs)
            ),
        );
    }
    if let Some(windows) = &test.response_windows
        && windows.windows.len() > ResponseWindows::MOST
    {
        return at(
            "response_windows.windows",
            format!(
                "holds {} windows: a run keeps at most {}",
                windows.windows.len(),
                ResponseWindows::MOST
            ),
        );
    }
    if let Some(host) = &test.host
        && let Some(why) = host_batches(host)
    {
        return at("host", why);
    }
    None
}

/// The largest number any field of a report may hold: counts stop at [`MOST_COUNT`],
/// rates at [`MOST_RATE`], a century in microseconds is 3.2e15; past 2^53 an f64 no
/// longer holds every integer, and a page's sums and shares of such numbers are
/// `inf%` or a count of 2^64.
pub const MOST_NUMBER: f64 = 9_007_199_254_740_992.0;
/// The smallest non-zero magnitude a field may hold: a page divides by durations and
/// counts, and 1e-320 s of wall time made a thread's CPU `inf%`.
pub const LEAST_NUMBER: f64 = 1e-100;

/// Why the number `v` (written `is`) at `path`, in the field `key`, is one no run writes:
/// past [`MOST_NUMBER`] (a century for a field in nanoseconds, `*_ns`), or not zero and
/// under [`LEAST_NUMBER`]. Seeds (any u64) are the caller's to pass by.
pub(super) fn beyond(path: &str, key: &str, v: f64, is: &str) -> Option<String> {
    let (most, most_text) = if key.ends_with("_ns") {
        (MOST_SECS * 1e9, "a century in nanoseconds (3.2e18)")
    } else {
        (MOST_NUMBER, "2^53 (9.0e15)")
    };
    if v.is_nan() || v.abs() > most {
        return Some(format!(
            "{path} is {is}: no run writes a number past {most_text}"
        ));
    }
    (v != 0.0 && v.abs() < LEAST_NUMBER).then(|| {
        format!("{path} is {is}: no run writes a number so near 0 (under {LEAST_NUMBER:e})")
    })
}

/// The most runs of one step a sweep repeats (`--repeat`).
pub const MOST_REPEATS: usize = 1_000_000;

/// Why a sweep's run could not have started `started_secs` into the sweep as its step's
/// repeat `repeat` (from 0), naming the field; `None` when it could.
pub fn implausible_place(started_secs: f64, repeat: usize) -> Option<String> {
    if !(started_secs.is_finite() && (0.0..=MOST_SECS).contains(&started_secs)) {
        return Some(format!(
            "started_secs is {}: a run starts 0 to {MOST_SECS:e} s into its sweep",
            shown(started_secs)
        ));
    }
    (repeat >= MOST_REPEATS).then(|| {
        format!("repeat is {repeat}: a sweep repeats a step fewer than {MOST_REPEATS} times")
    })
}

/// Why the host's batches could not be a run's: a batch no clock measures, or a
/// waiting batch past the last one (the plots place them in time).
fn host_batches(host: &HostReport) -> Option<String> {
    let batch_ms = host.batches.batch_ms;
    if !(batch_ms.is_finite() && batch_ms > 0.0 && batch_ms <= MOST_SECS * 1e3) {
        return Some(format!(
            "batches.batch_ms is {}: a batch lasts over 0 and at most {MOST_SECS:e} s",
            shown(batch_ms)
        ));
    }
    let tail = host.tail.as_ref()?;
    if tail.batches > MOST_COUNT {
        return Some(format!(
            "tail.batches is {}: more than {MOST_COUNT:e}",
            tail.batches
        ));
    }
    tail.waiting
        .iter()
        .find(|&&i| u64::from(i) >= tail.batches)
        .map(|i| format!("tail.waiting holds batch {i} of {}", tail.batches))
}

/// Why a count is beyond any run, naming it.
fn counts(c: &Counts) -> Option<String> {
    let named = [
        ("intended", c.intended),
        ("sent", c.sent),
        ("completed", c.completed),
        ("errors", c.errors),
        ("timeouts", c.timeouts),
        ("not_sent", c.not_sent),
        ("in_flight_at_end", c.in_flight_at_end),
        ("unanswered_counted", c.unanswered_counted),
        ("redirects", c.redirects),
        ("hits", c.hits.unwrap_or(0)),
        ("misses", c.misses.unwrap_or(0)),
    ];
    let by_kind = c.errors_by_kind.values().map(|n| ("errors_by_kind", *n));
    named
        .into_iter()
        .chain(by_kind)
        .find(|(_, n)| *n > MOST_COUNT)
        .map(|(field, n)| format!("{field} is {n}: more than {MOST_COUNT:e}, no run sends so many"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn report() -> TestReport {
        crate::report::fixtures::test_report(1000.0, 800_000, None, 1.0)
    }

    #[test]
    fn a_report_tailrate_writes_passes_and_each_impossible_number_is_named() {
        let t = report();
        assert_eq!(implausible(&t), None);
        let mut bad = t.clone();
        bad.counts.completed = 1 << 63;
        assert!(implausible(&bad).unwrap().contains("completed"));
        let mut bad = t.clone();
        bad.achieved_rate_per_sec = -5e5;
        assert!(implausible(&bad).unwrap().contains("achieved_rate_per_sec"));
        let mut bad = t.clone();
        bad.measured_secs = f64::NAN;
        assert!(implausible(&bad).unwrap().contains("measured_secs"));
        let mut bad = t.clone();
        bad.throughput_per_sec = f64::INFINITY;
        assert!(implausible(&bad).unwrap().contains("throughput_per_sec"));
        let mut bad = t.clone();
        bad.response_windows = Some(crate::report::latency::ResponseWindows {
            window_secs: 1e308,
            windows: Vec::new(),
        });
        let why = implausible(&bad).unwrap();
        assert!(why.contains("window_secs is 1e308"), "{why}");
        assert_eq!(implausible_place(12.5, 2), None);
        assert!(
            implausible_place(-1.0, 0)
                .unwrap()
                .contains("started_secs is -1")
        );
        assert!(
            implausible_place(1e300, 0)
                .unwrap()
                .contains("started_secs is 1e300")
        );
        assert!(
            implausible_place(1.0, usize::MAX)
                .unwrap()
                .contains("repeat is")
        );
        let mut bad = t.clone();
        let mut host = HostReport::default();
        host.batches.batch_ms = u64::MAX as f64;
        bad.host = Some(host.clone());
        assert!(implausible(&bad).unwrap().contains("batch_ms"));
        host.batches.batch_ms = 50.0;
        host.tail = Some(super::super::host::TailInWaits {
            batches: 10,
            waiting: vec![3, u32::MAX],
            ..Default::default()
        });
        bad.host = Some(host);
        assert!(implausible(&bad).unwrap().contains("tail.waiting"));
        let mut bad = t.clone();
        bad.response_windows = Some(crate::report::latency::ResponseWindows {
            window_secs: 0.5,
            windows: vec![Default::default(); ResponseWindows::MOST + 1],
        });
        let why = implausible(&bad).unwrap();
        assert!(why.contains("response_windows.windows holds 241"), "{why}");
    }

    #[test]
    fn numbers_no_run_writes_are_named_by_their_path_and_seeds_pass() {
        let mut v = serde_json::to_value(report()).unwrap();
        v["seed"] = u64::MAX.into();
        v["stop_at_ns"] = 3_000_000_000_000_000_000u64.into();
        let scan = |v: &serde_json::Value| {
            super::super::scan::beyond_any_run(&serde_json::to_vec(v).unwrap())
        };
        assert_eq!(scan(&v), Ok(()));
        for (field, bad) in [
            ("counts", serde_json::json!({"sent": u64::MAX})),
            ("achieved_rate_per_sec", 1e308.into()),
            ("measured_secs", (-1e308).into()),
            ("measured_secs", 1e-320.into()),
        ] {
            let mut w = serde_json::json!({"tests": [v.clone()]});
            w["tests"][0][field] = bad;
            let why = scan(&w).unwrap_err();
            assert!(why.starts_with(&format!("tests[0].{field}")), "{why}");
        }
    }
}
