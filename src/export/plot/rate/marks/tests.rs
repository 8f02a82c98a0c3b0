//! Tests of the parent module: the capacity the latency-vs-rate chart marks.

#![allow(clippy::unwrap_used)]
use super::*;

/// A result held at 24.6k/s with a band to 199.4k/s, and `estimates` beside it.
fn result(estimates: serde_json::Value) -> SloResult {
    serde_json::from_value(serde_json::json!({
        "slos": [], "capacity_per_sec": 24_600.0, "searched_per_sec": 24_600.0,
        "first_failing_per_sec": 199_400.0, "confirmed": false,
        "capacity_band_per_sec": [24_600.0, 199_400.0], "limited_by": "noise",
        "estimates": estimates,
    }))
    .unwrap()
}

#[test]
fn the_chart_marks_the_estimate_the_text_leads_with_and_shades_its_interval() {
    let estimated = result(serde_json::json!([{
        "slo": "p99<=1ms", "binding": true, "crossing": {"at": 57_700.0},
        "interval": [{"at": 53_200.0}, {"at": 62_200.0}], "rates": 6, "runs": 70,
    }]));
    let mark = capacity_mark(&estimated, Some(10_000.0)).unwrap();
    assert_eq!(
        (mark.rate, mark.line, mark.text.as_str()),
        (
            57_700.0,
            true,
            "capacity 57.7k/s (90%: 53.2k to 62.2k/s), held at 24.6k/s"
        )
    );
    assert_eq!(band(&estimated, 300_000.0), Some((53_200.0, 62_200.0)));
    // Beyond the rates fitted: no line, the rate it lies beyond, an open end at the edge.
    let open = result(serde_json::json!([{
        "slo": "p99<=1ms", "binding": true, "crossing": {"above": 250_000.0},
        "interval": [{"at": 190_000.0}, {"above": 250_000.0}], "rates": 6, "runs": 70,
    }]));
    let mark = capacity_mark(&open, Some(10_000.0)).unwrap();
    assert!(!mark.line);
    assert_eq!(
        mark.text,
        "capacity over 250k/s (90%: 190k to over 250k/s), held at 24.6k/s"
    );
    assert_eq!(band(&open, 300_000.0), Some((190_000.0, 300_000.0)));
    // Open at both ends on the crossing's side: the interval adds nothing to it.
    let beyond = result(serde_json::json!([{
        "slo": "p99<=1ms", "binding": true, "crossing": {"above": 6_000.0},
        "interval": [{"above": 6_000.0}, {"above": 6_000.0}], "rates": 3, "runs": 6,
    }]));
    let mark = capacity_mark(&beyond, Some(2_000.0)).unwrap();
    assert_eq!(mark.text, "capacity over 6k/s, held at 24.6k/s");
    // A sweep without an estimate keeps the held rate and its band.
    let held = result(serde_json::json!([]));
    let mark = capacity_mark(&held, Some(10_000.0)).unwrap();
    assert_eq!(
        mark.text,
        "capacity 24.6k/s, band to 199.4k/s (the runs' noise)"
    );
    assert_eq!(band(&held, 300_000.0), Some((24_600.0, 199_400.0)));
}
