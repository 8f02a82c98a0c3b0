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
