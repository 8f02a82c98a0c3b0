//! The exceedance test's unit tests: the pooled arithmetic by hand, the Clopper-Pearson
//! floor, the looks, the interval as the test's inversion, and input no run could give.
//! Its error rates under bursty stalls are `calibration`'s.

#![allow(clippy::unwrap_used)]
use super::*;
use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};
use statrs::distribution::{Beta, ContinuousCDF};

fn w(replies: u64, over: u64) -> Window {
    Window { replies, over }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-3)
}

#[test]
fn pooled_fraction_and_error_are_the_ratio_estimator_over_visits() {
    // E = 12/600 = 0.02. Visit residuals k - E n: -2, -2, 4, so the visits' variance is
    // 3/2 * 24 / 600^2 = 1e-4; the windows' is 5/4 * 22 / 600^2, smaller.
    let visits = vec![
        vec![w(100, 2), w(100, 0)],
        vec![w(100, 1), w(100, 1)],
        vec![w(200, 8)],
    ];
    let p = pool(&visits).unwrap();
    assert_eq!((p.replies, p.over, p.visits), (600, 12, 3));
    assert!(close(p.fraction, 0.02), "{p:?}");
    assert!(close(p.se, 0.01), "{p:?}");
    let t = t_quantile(2, ALPHA_PER_LOOK);
    assert!(close(p.high, 0.02 + t * 0.01), "{p:?}");
    assert_eq!(p.low, 0.0);
}

#[test]
fn the_windows_spread_is_a_floor_when_visits_agree_by_luck() {
    // Two identical visits (no spread between them); inside each, one calm window and one
    // with a burst: 4/3 * 16 / 400^2.
    let visits = vec![vec![w(100, 0), w(100, 4)], vec![w(100, 0), w(100, 4)]];
    let p = pool(&visits).unwrap();
    assert!(
        close(p.se, (4.0 / 3.0 * 16.0 / 160_000.0f64).sqrt()),
        "{p:?}"
    );
}

#[test]
fn t_points_are_the_tables() {
    for (freedom, alpha, table) in [(2, 0.005, 9.9248), (3, 0.005, 5.8409), (15, 0.005, 2.9467)] {
        assert!(
            (t_quantile(freedom, alpha) - table).abs() < 1e-3,
            "{freedom}"
        );
    }
    assert!((t_quantile(3, 0.05) - 2.3534).abs() < 1e-3);
}

#[test]
fn clopper_pearson_bounds_are_the_beta_points() {
    // The textbook 1 in 100 at 97.5% each side: 0.000253..0.05446.
    assert!((upper_clopper_pearson(1, 100, 0.025) - 0.05446).abs() < 1e-5);
    assert!((lower_clopper_pearson(1, 100, 0.025) - 0.000253).abs() < 1e-6);
    // No exceedance: the closed form 1 - alpha^(1/n).
    assert!(close(
        upper_clopper_pearson(0, 1_000, 0.005),
        1.0 - 0.005f64.powf(1e-3)
    ));
    // At counts a sweep sees, the Beta inverse lands where its CDF says it should.
    for (over, replies) in [(3u64, 80_000u64), (480, 80_000), (20_000, 3_000_000)] {
        let (k, n) = (over as f64, replies as f64);
        let high = upper_clopper_pearson(over, replies, 0.005);
        let low = lower_clopper_pearson(over, replies, 0.005);
        assert!(low < k / n && k / n < high, "{over}/{replies}");
        let upper = Beta::new(k + 1.0, n - k).unwrap().cdf(high);
        let lower = Beta::new(k, n - k + 1.0).unwrap().cdf(low);
        assert!((upper - 0.995).abs() < 1e-6, "{over}/{replies}: {upper}");
        assert!((lower - 0.005).abs() < 1e-6, "{over}/{replies}: {lower}");
    }
    assert_eq!(upper_clopper_pearson(5, 5, 0.005), 1.0);
    assert_eq!(lower_clopper_pearson(0, 5, 0.005), 0.0);
}

/// Four visits of one window each, none over the bound, `replies` in all.
fn calm_visits(replies: u64) -> Vec<Vec<Window>> {
    (0..4)
        .map(|i| vec![w(replies / 4 + u64::from(i < replies % 4), 0)])
        .collect()
}

#[test]
fn no_exceedance_in_too_few_replies_is_undecided_and_in_enough_holds() {
    let needed = replies_needed(0.01);
    // ln(alpha) / ln(0.99), rounded up.
    let closed_form = (ALPHA_PER_LOOK.ln() / 0.99f64.ln()).ceil() as u64;
    assert!(needed.abs_diff(closed_form) <= 1, "{needed} {closed_form}");
    let (few, p) = decide(&calm_visits(needed - 1), 0.01);
    assert_eq!(few, Decision::Undecided, "{p:?}");
    let (enough, p) = decide(&calm_visits(needed), 0.01);
    assert_eq!(enough, Decision::Holds, "{p:?}");
    assert_eq!(p.unwrap().se, 0.0);
    assert_eq!(replies_needed(0.0), u64::MAX);
    assert_eq!(replies_needed(f64::NAN), u64::MAX);
    assert_eq!(replies_needed(1.0), 1);
}

#[test]
fn a_clearly_broken_objective_is_broken_and_a_clearly_met_one_holds() {
    let visits = |over: [u64; 4]| -> Vec<Vec<Window>> {
        over.iter()
            .map(|&k| vec![w(5_000, k), w(5_000, k + 10)])
            .collect()
    };
    let (broken, p) = decide(&visits([240, 300, 270, 310]), 0.01);
    assert_eq!(broken, Decision::Broken, "{p:?}");
    assert!(p.unwrap().low > 0.01);
    let (holds, p) = decide(&visits([10, 14, 8, 12]), 0.01);
    assert_eq!(holds, Decision::Holds, "{p:?}");
}

#[test]
fn no_decision_before_the_first_look_and_between_looks_the_last_one_stands() {
    let calm = vec![w(5_000, 10); 4];
    let (early, p) = decide(&vec![calm.clone(); LOOKS[0] - 1], 0.01);
    assert_eq!(early, Decision::Undecided);
    assert!(p.unwrap().high < 0.01, "the bounds alone would pass: {p:?}");

    let mut visits = vec![calm.clone(); LOOKS[0]];
    let at_look = decide(&visits, 0.01);
    assert_eq!(at_look.0, Decision::Holds);
    // A stormy visit after the look changes nothing until the next look.
    visits.push(vec![w(5_000, 4_000); 4]);
    assert_eq!(decide(&visits, 0.01), at_look);
    // A visit without replies neither counts nor moves the look.
    let mut with_empty = vec![vec![w(0, 0)]];
    with_empty.extend(vec![calm; LOOKS[0]]);
    assert_eq!(decide(&with_empty, 0.01), at_look);
}

#[test]
fn the_looks_are_counted_and_capped() {
    assert_eq!(next_look(0), Some(LOOKS[0]));
    assert_eq!(next_look(LOOKS[0] - 1), Some(LOOKS[0]));
    assert_eq!(next_look(LOOKS[0]), Some(LOOKS[1]));
    assert_eq!(next_look(LOOKS[2] - 1), Some(LOOKS[2]));
    assert_eq!(next_look(LOOKS[2]), None);
    assert_eq!(next_look(LOOKS[2] + 5), None);
    assert_eq!(counted(LOOKS[0] - 1), LOOKS[0] - 1);
    assert_eq!(counted(LOOKS[1] + 1), LOOKS[1]);
    assert_eq!(counted(LOOKS[2] + 5), LOOKS[2]);
    assert!(LOOKS.windows(2).all(|l| l[0] < l[1]) && LOOKS[2] <= 16);
}

/// `visits` visits of four windows, each of 5000 replies: lognormal latencies around
/// 300 us, with a stall in some windows; seeded.
fn batches(visits: usize, seed: u64) -> Vec<Vec<Batch>> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let calm = LogNormal::new((300_000f64).ln(), 0.5).unwrap();
    let stall = LogNormal::new((2_000_000f64).ln(), 0.3).unwrap();
    (0..visits)
        .map(|v| {
            (0..4)
                .map(|i| {
                    let stalled = if (v + i) % 3 == 0 { 30 } else { 5 };
                    let mut values: Vec<u64> = (0..5_000)
                        .map(|j| {
                            let d = if j < stalled { &stall } else { &calm };
                            d.sample(&mut rng) as u64
                        })
                        .collect();
                    values.sort_unstable();
                    Batch::of_buckets(values.into_iter().map(|v| (v, 1)))
                })
                .collect()
        })
        .collect()
}

/// The windows of `visits` over `value_ns`, as a caller builds them.
fn over(visits: &[Vec<Batch>], value_ns: u64) -> Vec<Vec<Window>> {
    visits
        .iter()
        .map(|v| {
            v.iter()
                .map(|b| w(b.len(), b.len() - b.at_most(value_ns)))
                .collect()
        })
        .collect()
}

#[test]
fn the_interval_holds_the_pooled_percentile_and_turns_where_the_verdict_does() {
    for (visits, seed) in [(LOOKS[0], 1), (LOOKS[1], 2), (LOOKS[1] + 3, 3)] {
        let visits = batches(visits, seed);
        let point = pooled_quantile(&visits, 0.99).unwrap();
        let (low, high) = quantile_interval(&visits, 0.99).unwrap();
        let high = high.unwrap();
        assert!(low <= point && point <= high, "{low} {point} {high}");
        // Every bucket value a window holds, below and above each end.
        let mut values: Vec<u64> = visits.iter().flatten().flat_map(Batch::values).collect();
        values.sort_unstable();
        values.dedup();
        let below = |x: u64| values.iter().copied().rfind(|&v| v < x).unwrap();
        let above = |x: u64| values.iter().copied().find(|&v| v > x).unwrap();
        let verdict = |x: u64| decide(&over(&visits, x), 0.01).0;
        assert_eq!(verdict(high), Decision::Holds);
        assert_ne!(verdict(below(high)), Decision::Holds);
        assert!(low > 0, "this much data should break p99 <= {low}");
        assert_eq!(verdict(low), Decision::Broken);
        assert_ne!(verdict(above(low)), Decision::Broken);
    }
}

#[test]
fn the_interval_is_shown_before_the_first_look_and_opens_with_one_visit() {
    let three = batches(LOOKS[0] - 1, 4);
    let (_, high) = quantile_interval(&three, 0.99).unwrap();
    assert!(high.is_some());
    // One visit says nothing of the weather between visits.
    let one = batches(1, 5);
    assert_eq!(quantile_interval(&one, 0.99), Some((0, None)));
    let p = pool(&over(&one, 1_000_000)).unwrap();
    assert_eq!((p.se, p.low, p.high), (f64::INFINITY, 0.0, 1.0));
}

#[test]
fn input_no_run_could_give_is_answered_without_a_panic() {
    assert_eq!(pool(&[]), None);
    assert_eq!(pool(&[vec![], vec![w(0, 0)]]), None);
    // More slow replies than replies: all slow.
    let p = pool(&vec![vec![w(10, 50)]; 4]).unwrap();
    assert_eq!((p.over, p.fraction), (40, 1.0));
    assert_eq!(decide(&vec![vec![w(10, 50)]; 4], 0.01).0, Decision::Broken);
    // Sums that would overflow saturate.
    let huge = vec![vec![w(u64::MAX, u64::MAX), w(u64::MAX, 1)]; 4];
    let p = pool(&huge).unwrap();
    assert!(
        (0.0..=1.0).contains(&p.fraction) && p.low <= p.high,
        "{p:?}"
    );
    // A limit that is no fraction decides nothing.
    assert_eq!(
        decide(&calm_visits(10_000), f64::NAN).0,
        Decision::Undecided
    );
    assert_eq!(quantile_interval(&[], 0.99), None);
    assert_eq!(quantile_interval(&[vec![Batch::default()]], 0.99), None);
    assert_eq!(pooled_quantile(&[vec![Batch::default()]], 0.99), None);
    let visits = batches(LOOKS[0], 6);
    for q in [f64::NAN, -1.0, 0.0, 1.0, 2.0] {
        let _ = quantile_interval(&visits, q);
        let _ = pooled_quantile(&visits, q);
    }
}
