//! Tests of the parent module.

#![allow(clippy::unwrap_used)]
use super::*;
use crate::judge::capacity::{Point, capacity};
use crate::judge::fixtures::*;
use crate::report::sweep::Verdict::{Fail, Pass, Uncertain};

fn said(points: &[Point]) -> String {
    summary(
        "p99<=1ms",
        &capacity(points).unwrap(),
        true,
        &Landmarks::default(),
        (12, 24.0),
        Estimated::default(),
    )
}

#[test]
fn every_finding_is_said_with_its_band_and_what_limited_it() {
    let s = said(&[
        point(1000.0, Pass),
        point(2000.0, Uncertain),
        point(3000.0, Fail),
    ]);
    assert!(
        s.starts_with("capacity at p99<=1ms: 1000 req/s, confirmed on fresh runs; band 1000..3000 req/s, limited by noise: 2000 req/s was undecided; 3000 req/s failed"),
        "{s}"
    );
    assert!(s.ends_with("12 runs, 24 s measured"), "{s}");
    let s = said(&[point(1000.0, Pass)]);
    assert!(
        s.contains("at least 1000 req/s") && s.contains("extend --rates"),
        "{s}"
    );
    let s = said(&[point(1000.0, Fail)]);
    assert!(
        s.contains("below 1000 req/s, the lowest rate, which failed: try lower --rates"),
        "{s}"
    );
    let s = said(&[point(1000.0, Uncertain), point(2000.0, Fail)]);
    assert!(s.contains("not shown at any rate"), "{s}");
    let s = said(&[point(500.0, Fail), point(1000.0, Pass), point(2000.0, Fail)]);
    assert!(
        s.contains("500 req/s failed under the capacity: a tail at low load"),
        "{s}"
    );
    let many: Vec<Point> = std::iter::once(point(1000.0, Pass))
        .chain((2..=6).map(|k| point(1000.0 * k as f64, Uncertain)))
        .collect();
    let s = said(&many);
    assert!(
        s.contains("limited by noise: 5 rates from 2000 to 6000 req/s were undecided"),
        "{s}"
    );
}

#[test]
fn the_estimate_leads_with_its_interval_and_the_rate_held_on_fresh_runs_follows() {
    let slos = [slo_p99_1ms()];
    let mut f = capacity(&[point(62_000.0, Pass), point(80_000.0, Fail)]).unwrap();
    f.at_capacity = Some(Exceedance {
        fraction: 0.0054,
        low: 0.003,
        high: 0.0079,
        limit: 0.01,
        replies: 1_000_000,
        over: 5_400,
        visits: 16,
    });
    f.at_capacity_objective = Some(0);
    let estimate = ObjectiveEstimate {
        slo: "p99<=1ms".into(),
        binding: true,
        crossing: RateBound::At(67_300.0),
        interval: (RateBound::At(64_200.0), RateBound::At(76_800.0)),
        rates: 11,
        runs: 96,
        with_disturbed: Some(RateBound::At(58_000.0)),
        all_disturbed: false,
    };
    let disturbed = Disturbed {
        runs: 6,
        of: 102,
        most_wait_share: 0.45,
        most_steal_share: 0.0,
    };
    let estimates = [estimate];
    // The sentence of these findings with `estimates` over the runs `disturbed` counts.
    let said_with = |estimates: &[ObjectiveEstimate], disturbed: &Disturbed| {
        summary(
            "p99<=1ms",
            &f,
            true,
            &Landmarks::default(),
            (102, 204.0),
            Estimated {
                slos: &slos,
                estimates,
                disturbed: Some(disturbed),
            },
        )
    };
    let s = said_with(&estimates, &disturbed);
    assert!(
        s.starts_with(
            "capacity 67k req/s (90%: 64k to 77k) at p99<=1ms, estimated from 96 runs at 11 rates; \
             held on 16 fresh runs at 62k req/s: 0.54% of replies over 1 ms (allowed 1%); \
             the host disturbed 6 of 102 runs (the server or the generator waited for a CPU up to 45% of a run), left out of the estimate; with them 58k req/s; \
             band 62000..80000 req/s"
        ),
        "{s}"
    );
    // Every run the host's: the estimate stays, said to be the host's weather.
    let all = ObjectiveEstimate {
        with_disturbed: None,
        all_disturbed: true,
        ..estimates[0].clone()
    };
    let every = Disturbed {
        runs: 102,
        of: 102,
        most_wait_share: 0.7,
        most_steal_share: 0.0,
    };
    let s = said_with(std::slice::from_ref(&all), &every);
    assert!(
        s.starts_with("capacity 67k req/s (90%: 64k to 77k) at p99<=1ms"),
        "{s}"
    );
    assert!(
        s.contains("the host carried the tail of every one of the 102 runs (the server or the generator waited for a CPU up to 70% of a run): the estimate is the host's weather"),
        "{s}"
    );
    assert!(!s.contains("left out of the estimate"), "{s}");
    // A night of steal: the hypervisor's share is named, not a CPU wait that was not.
    for (waited, stolen, said) in [
        (0.002, 0.35, "(the hypervisor took up to 35% of a run)"),
        (
            0.04,
            0.2,
            "(the server or the generator waited for a CPU up to 4% of a run; the hypervisor took up to 20% of a run)",
        ),
        (
            0.04,
            0.004,
            "(the server or the generator waited for a CPU up to 4% of a run)",
        ),
    ] {
        let stormy = Disturbed {
            most_wait_share: waited,
            most_steal_share: stolen,
            ..disturbed.clone()
        };
        let s = said_with(&estimates, &stormy);
        assert!(
            s.contains(&format!(
                "the host disturbed 6 of 102 runs {said}, left out"
            )),
            "{s}"
        );
    }
    // Open ends are said with the rate they lie beyond.
    let open = ObjectiveEstimate {
        crossing: RateBound::Above(250_000.0),
        interval: (RateBound::At(190_000.0), RateBound::Above(250_000.0)),
        with_disturbed: None,
        ..estimates[0].clone()
    };
    assert_eq!(
        estimate_figure(&open),
        "over 250k req/s, the highest rate fitted (90%: 190k to over 250k)"
    );
    assert_eq!(short_rate(4_460.0), "4.5k");
    assert_eq!(short_rate(950.4), "950");
    assert_eq!(bound_ms(250_000), "0.25 ms");
}

#[test]
fn an_undecided_rate_says_whether_it_reached_the_last_look_or_stopped_short() {
    let points = [
        point(1000.0, Pass),
        point(2000.0, Uncertain),
        point(3000.0, Fail),
    ];
    let mut f = capacity(&points).unwrap();
    f.uncertain_runs = vec![24];
    assert!(limit(&f).ends_with("2000 req/s was undecided at the last look, 24 runs: the share sits at the bound within the runs' noise"), "{}", limit(&f));
    f.uncertain_runs = vec![8];
    assert!(
        limit(&f).ends_with("undecided on at most 8 runs, short of a pass's look"),
        "{}",
        limit(&f)
    );
}

#[test]
fn a_generator_that_falls_behind_is_named_and_lower_rates_are_not_advised() {
    let mut lagging = point(2000.0, Uncertain);
    lagging.generator_limited = true;
    let s = said(&[point(1000.0, Pass), lagging]);
    assert!(s.contains("limited by the generator"), "{s}");
    assert!(!s.contains("--rates"), "{s}");
}

#[test]
fn saturation_is_said_with_the_servers_maximum_its_core_and_the_generators_own_limit() {
    let l = Landmarks {
        saturation_per_sec: Some(250_884.0),
        open_loop_max: Some(crate::report::sweep::OpenLoopMax {
            replies_per_sec: 205_000.0,
            at_offered_per_sec: 251_000.0,
            reached: true,
        }),
        closed_loop_max_per_sec: Some(145_207.0),
        server_near_core_per_sec: Some(191_464.0),
        generator_limit_per_sec: Some(370_000.0),
        ..Landmarks::default()
    };
    let parts = landmark_text(&l);
    assert_eq!(
        parts,
        [
            "saturation at 250884 req/s (the server's open-loop maximum 205k replies/s at 251k req/s offered; the closed loop's 145k req/s; the server near a core from 191k req/s)",
            "the generator fell behind from 370000 req/s (its own limit, not the server's)",
        ],
    );
    // Without a floor there is no knee to speak of, nor a claim the tail stayed there.
    assert!(!parts.iter().any(|p| p.contains("knee")), "{parts:?}");
}

#[test]
fn a_speed_capacity_is_said_in_multiples_of_the_recorded_pace() {
    let held = SpeedCapacity::of(1000.0, Some(2300.0), (2300.0, Some(2500.0)));
    assert_eq!(
        speed(&held),
        "as a speed of the recorded traffic: 2.30x, band 2.30x..2.50x"
    );
    let none = SpeedCapacity::of(1000.0, None, (0.0, None));
    assert_eq!(
        speed(&none),
        "as a speed of the recorded traffic: none passed, band 0.00x.. (open above)"
    );
}

#[test]
fn a_bound_the_plan_implied_is_said_as_the_sweeps_not_as_a_budget() {
    use crate::report::sweep::{BudgetDeciding, BudgetEnded};
    let mut ended = BudgetEnded {
        budget_secs: 363.0,
        implied: true,
        deciding: Some(BudgetDeciding {
            rate_per_sec: 65284.0,
            confirming: false,
            runs: 8,
            more_runs: 4,
            more_secs: 10.2,
        }),
    };
    assert_eq!(
        budget_ended(&ended),
        "the sweep's time bound (363 s, three times its plan; --budget sets it) ended during \
         the decision at 65284 req/s, on 8 runs: about 4 more runs (10 s) would reach its next look"
    );
    ended.implied = false;
    assert!(budget_ended(&ended).starts_with("--budget 363 s ended during"));
}
