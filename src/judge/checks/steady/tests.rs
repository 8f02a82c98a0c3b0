//! The steady-state check on planted batches: backlogs the server grew or drained pass,
//! the generator's lateness growing or shrinking fails, noise passes, and without on-time
//! batches any backlog fails as one whose owner is not known.

#![allow(clippy::unwrap_used)]
use super::*;

/// A batch of 100 replies from `median_ns` up to twice it.
fn batch(median_ns: u64) -> Batch {
    let mut h = crate::record::new_histogram();
    for i in 0..100 {
        h.record(median_ns + i * median_ns / 100).unwrap();
    }
    Batch::of(&h)
}

/// 40 batches whose medians are `median_ns(i)`.
fn series(median_ns: impl Fn(u64) -> u64) -> Vec<Batch> {
    (0..40).map(|i| batch(median_ns(i))).collect()
}

/// Noise around 50 µs: no trend, no move.
fn noise(i: u64) -> u64 {
    50_000 + (i * 7919 % 13) * 2_000
}

/// Past the server's capacity: its queue grows linearly through the run.
fn server_queue(i: u64) -> u64 {
    50_000 + i * 20_000
}

#[test]
fn a_backlog_the_server_grew_passes_and_says_whose_it_was() {
    // The response is the on-time response plus a lag of a few µs that does not move.
    let on_time = series(server_queue);
    let response = series(|i| server_queue(i) + 4_000);
    let check = steady_state(&response, &on_time);
    assert_eq!(check.verdict, Verdict::Pass, "{}", check.detail);
    assert!(
        check.detail.starts_with("the server's backlog grew:")
            && check.detail.contains("in the first quarter")
            && check.detail.contains("trend z = +")
            && check.detail.contains("on time")
            && check.detail.contains("past its capacity at this rate"),
        "{}",
        check.detail
    );
    let measure = check.measure.clone().unwrap();
    assert_eq!(measure.unit, "fraction");
    assert!(measure.value < 0.1, "{measure:?}");
    assert_eq!(measure.bound, GENERATOR_SHARE);
    assert!(server_backlog_grew(&check));
}

#[test]
fn a_generator_that_falls_behind_fails() {
    // The server answers at one level; the lateness grows by 20 µs a batch.
    let on_time = series(noise);
    let response = series(|i| noise(i) + i * 20_000);
    let check = steady_state(&response, &on_time);
    assert_eq!(check.verdict, Verdict::Fail, "{}", check.detail);
    assert!(
        check.detail.starts_with("the generator fell behind:"),
        "{}",
        check.detail
    );
    assert!(
        check
            .meaning
            .contains("fell further and further behind its schedule"),
        "{}",
        check.meaning
    );
    assert!(check.measure.unwrap().value > 0.9);
    // A sweep does not count the generator's lateness toward the server's saturation.
    assert!(!server_backlog_grew(&steady_state(&response, &on_time)));
}

#[test]
fn a_lateness_that_carries_most_of_a_shared_move_fails() {
    // The server's queue trebles (50 to 150 µs), and the lateness adds 850 µs more.
    let on_time = series(|i| 50_000 + i * 2_600);
    let response = series(|i| 50_000 + i * 2_600 + i * 22_000);
    let check = steady_state(&response, &on_time);
    assert_eq!(check.verdict, Verdict::Fail, "{}", check.detail);
    // One whose on-time response moved a little less than twofold, as the response did
    // a little more: the server's, whatever side of the 2x line each fell.
    let on_time = series(|i| 40_000 + i * 1_500);
    let response = series(|i| 40_000 + i * 1_800);
    let check = steady_state(&response, &on_time);
    assert_eq!(check.verdict, Verdict::Pass, "{}", check.detail);
    assert!(
        check.detail.starts_with("the server's backlog grew"),
        "{}",
        check.detail
    );
}

#[test]
fn a_backlog_the_server_drained_passes_and_one_the_generator_caught_up_fails() {
    // A median that fell 30x, the server's: a run that began in a backlog and drained it.
    let drain = |i: u64| 565_000u64.saturating_sub(i * 14_000).max(18_700);
    let check = steady_state(&series(drain), &series(|i| drain(i) - 3_000));
    assert_eq!(check.verdict, Verdict::Pass, "{}", check.detail);
    assert!(
        check.detail.starts_with("the server's backlog drained:"),
        "{}",
        check.detail
    );
    assert!(!server_backlog_grew(&check));
    // The same fall with the on-time response at one level: the generator caught up.
    let check = steady_state(&series(drain), &series(|_| 18_000));
    assert_eq!(check.verdict, Verdict::Fail, "{}", check.detail);
    assert!(
        check.detail.starts_with("the generator caught up:"),
        "{}",
        check.detail
    );
    assert!(
        check
            .meaning
            .contains("started behind its schedule and caught up"),
        "{}",
        check.meaning
    );
}

#[test]
fn noise_a_late_stall_and_a_slow_drift_pass() {
    let mut response = series(noise);
    let mut on_time = series(|i| noise(i) - 3_000);
    let check = steady_state(&response, &on_time);
    assert_eq!(check.verdict, Verdict::Pass, "{}", check.detail);
    assert!(
        !check.detail.contains("backlog") && check.detail.contains("on time"),
        "{}",
        check.detail
    );
    assert_eq!(check.measure.unwrap().unit, "ratio");
    // One stall of 4 batches near the end, in both series or in the response alone.
    for b in &mut response[30..34] {
        *b = batch(5_000_000);
    }
    assert_eq!(steady_state(&response, &on_time).verdict, Verdict::Pass);
    for b in &mut on_time[30..34] {
        *b = batch(4_990_000);
    }
    assert_eq!(steady_state(&response, &on_time).verdict, Verdict::Pass);
    // A slow drift: a trend, but far from a backlog, even in the response alone.
    let drift = series(|i| 50_000 + i * 500);
    assert_eq!(
        steady_state(&drift, &series(|_| 45_000)).verdict,
        Verdict::Pass
    );
    // A fall to a quarter at the start, without a trend through the run.
    let mut one_dip = series(|_| 50_000);
    for b in &mut one_dip[..3] {
        *b = batch(200_000);
    }
    assert_eq!(
        steady_state(&one_dip, &series(|_| 45_000)).verdict,
        Verdict::Pass
    );
}

#[test]
fn without_on_time_batches_any_backlog_fails_as_one_whose_owner_is_not_known() {
    let growing = series(server_queue);
    let check = steady_state(&growing, &[]);
    assert_eq!(check.verdict, Verdict::Fail, "{}", check.detail);
    assert!(
        check.detail.contains("whose it cannot tell"),
        "{}",
        check.detail
    );
    assert!(
        check
            .meaning
            .starts_with("response time grew through the run"),
        "{}",
        check.meaning
    );
    assert_eq!(check.measure.clone().unwrap().unit, "ratio");
    assert!(server_backlog_grew(&check));
    let drain = series(|i| 565_000u64.saturating_sub(i * 14_000).max(18_700));
    let check = steady_state(&drain, &[]);
    assert_eq!(check.verdict, Verdict::Fail, "{}", check.detail);
    assert!(
        check.meaning.contains("fell through the run"),
        "{}",
        check.meaning
    );
    assert!(!server_backlog_grew(&check));
    // Too few on-time batches with replies is none at all.
    let check = steady_state(&growing, &growing[..5]);
    assert!(
        check.detail.contains("whose it cannot tell"),
        "{}",
        check.detail
    );
    assert_eq!(steady_state(&series(noise), &[]).verdict, Verdict::Pass);
    assert_eq!(
        steady_state(&growing[..5], &growing[..5]).verdict,
        Verdict::Skipped
    );
}

#[test]
fn a_saved_failure_from_before_on_time_batches_counts_as_a_grown_backlog() {
    let saved = Check {
        name: STEADY_STATE.to_string(),
        verdict: Verdict::Fail,
        detail: "batch median response 56.0 µs in the first quarter, 180.0 µs in the last"
            .to_string(),
        meaning: "response time grew through the run: a backlog built up".to_string(),
        measure: None,
    };
    assert!(server_backlog_grew(&saved));
    let other = Check {
        name: "schedule_lag".to_string(),
        ..saved.clone()
    };
    assert!(!server_backlog_grew(&other));
}
