//! Unit tests of `export/plot/mod.rs` and `export/plot/axis.rs`.

use super::axis::decade_label;
use super::*;

#[test]
fn decade_labels_read_as_milliseconds() {
    assert_eq!(decade_label(-2.0), "0.01");
    assert_eq!(decade_label(0.0), "1");
    assert_eq!(decade_label(3.0), "1000");
    assert_eq!(decade_label(0.5), "");
}

#[test]
fn the_log_axis_covers_every_value_in_whole_decades() {
    assert_eq!(LogAxis::covering([0.05, 3.0]), LogAxis { lo: -2, hi: 1 });
    assert_eq!(LogAxis::covering([0.1, 0.1]), LogAxis { lo: -2, hi: 0 });
    assert_eq!(LogAxis::covering([0.0]), LogAxis { lo: -2, hi: 1 });
}

#[test]
fn rates_are_labelled_short() {
    assert_eq!(rate_label(20_000.0), "20k");
    assert_eq!(rate_label(12_500.0), "12.5k");
    assert_eq!(rate_label(1_500_000.0), "1.5M");
    assert_eq!(rate_label(500.0), "500");
    assert_eq!(rate_label(0.0), "0");
}

#[test]
fn repeated_labels_are_numbered() {
    assert_eq!(
        distinct_labels(["sweep", "sweep", "b"].into_iter()),
        ["sweep", "sweep#2", "b"]
    );
}

#[test]
fn a_title_ending_in_a_colon_is_not_given_a_second() {
    assert_eq!(heading_text(Some("X:"), "Latency"), "X: Latency");
    assert_eq!(heading_text(Some("X"), "Latency"), "X: Latency");
    assert_eq!(heading_text(None, "Latency"), "Latency");
}

#[test]
fn a_short_last_interval_the_drain_is_not_drawn() {
    let iv = |start_secs: f64, length_secs: f64| crate::report::IntervalSummary {
        start_secs,
        length_secs,
        completed: 1,
        errors: 0,
        p50_ns: 1,
        p99_ns: 1,
        max_ns: 1,
    };
    let drain = [iv(0.0, 0.25), iv(0.25, 0.25), iv(0.5, 0.05)];
    assert_eq!(super::time::drawn_intervals(&drain).len(), 2);
    let whole = [iv(0.0, 0.25), iv(0.25, 0.2)];
    assert_eq!(super::time::drawn_intervals(&whole).len(), 2);
    assert_eq!(super::time::drawn_intervals(&drain[2..]).len(), 1);
}

#[test]
fn a_short_time_axis_is_labelled_in_tenths() {
    assert_eq!(seconds_label(2.04)(&0.4), "0.4");
    assert_eq!(seconds_label(300.0)(&40.0), "40");
}
