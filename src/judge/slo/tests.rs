//! The SLO verdicts of runs and steps, on hand-made runs.

#![allow(clippy::unwrap_used)]
use super::*;
use crate::judge::fixtures::*;
use Verdict::{Fail, Pass, Uncertain};

#[test]
fn a_step_passes_under_the_bound_fails_over_it_and_is_uncertain_across_or_unbounded() {
    assert_eq!(verdict(ci(0.4, Some(0.9)), MS), Pass);
    assert_eq!(verdict(ci(0.4, Some(1.0)), MS), Pass);
    assert_eq!(verdict(ci(1.01, Some(3.0)), MS), Fail);
    assert_eq!(verdict(ci(1.01, None), MS), Fail);
    assert_eq!(verdict(ci(0.9, Some(1.1)), MS), Uncertain);
    assert_eq!(verdict(ci(0.2, None), MS), Uncertain);
    assert_eq!(verdict(None, MS), Uncertain);
    assert_eq!(all_of([Pass, Pass]), Pass);
    assert_eq!(all_of([Pass, Uncertain]), Uncertain);
    assert_eq!(all_of([Uncertain, Fail]), Fail);
    assert_eq!(all_of([]), Uncertain);
}

#[test]
fn a_rate_not_carried_cannot_pass_and_fails_when_no_run_carried_it() {
    use Sends::{Kept, Overloaded, Short};
    assert_eq!(with_sends(Pass, &[Kept, Kept]), Pass);
    assert_eq!(with_sends(Pass, &[Kept, Short]), Uncertain);
    assert_eq!(with_sends(Pass, &[Kept, Overloaded]), Uncertain);
    assert_eq!(with_sends(Pass, &[Overloaded, Overloaded]), Fail);
    assert_eq!(with_sends(Uncertain, &[Overloaded]), Fail);
    assert_eq!(with_sends(Fail, &[Short]), Fail);
    let r = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 1.0).report;
    assert_eq!(sends(&r), Kept);
    let r = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 0.97).report;
    assert_eq!(sends(&r), Short);
    let r = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 0.9).report;
    assert_eq!(sends(&r), Overloaded);
}

#[test]
fn a_run_is_judged_on_its_own_interval_and_keeps_its_point_estimate() {
    let pass = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 1.0);
    let v = pass.slo.as_ref().unwrap();
    assert!(v.met && v.valid);
    assert_eq!(v.verdict, Some(Pass));
    assert_eq!(v.checks[0].ci95_ns, ci(0.4, Some(0.6)));
    // Met by its point estimate, not with confidence.
    let close = run(1000.0, 9 * MS / 10, ci(0.8, Some(1.2)), 1.0);
    let v = close.slo.as_ref().unwrap();
    assert!(v.met);
    assert_eq!(v.verdict, Some(Uncertain));
}

#[test]
fn a_step_is_decided_on_the_share_over_the_bound_pooled_over_its_runs() {
    let slos = [slo_p99_1ms()];
    let runs = |n: usize, over_per_window: u64| -> Vec<Measurement> {
        (0..n)
            .map(|_| windowed_run(1000.0, 5000, &[over_per_window; 4]))
            .collect()
    };
    let judged = |runs: &[Measurement]| judge_step(&runs.iter().collect::<Vec<_>>(), &slos);
    // 0.2% over 1 ms in 16 runs: well under the 1% p99 allows.
    let v = judged(&runs(16, 10));
    assert_eq!(v.verdict, Pass, "{}", v.why);
    let e = v.checks[0].exceedance.unwrap();
    assert!((e.fraction - 0.002).abs() < 1e-9 && e.visits == 16, "{e:?}");
    // On 8 runs its bound is under 1% already, but a pass waits for the 16th run.
    let v = judged(&runs(8, 10));
    assert_eq!(v.verdict, Uncertain, "{}", v.why);
    assert!(v.why.contains("8 of the 16 runs a pass needs"), "{}", v.why);
    assert!(
        v.checks[0].summary.value_ns < MS,
        "{:?}",
        v.checks[0].summary
    );
    // 3% over: fails.
    assert_eq!(judged(&runs(8, 150)).verdict, Fail);
    // Two runs are fewer than the first look: not decided yet, and it says why.
    let v = judged(&runs(2, 10));
    assert_eq!(v.verdict, Uncertain, "{}", v.why);
    assert!(
        v.why.contains("of the 4 runs a decision needs"),
        "{}",
        v.why
    );
    // One run that stalled weighs by its replies: the pooled p99 shows it.
    let mut stalled = runs(7, 0);
    stalled.push(windowed_run(1000.0, 5000, &[2500, 0, 0, 0]));
    let v = judged(&stalled);
    assert!(
        v.checks[0].summary.value_ns > MS,
        "{:?}",
        v.checks[0].summary
    );
    let failed = |name: &str| crate::report::Check {
        name: name.into(),
        verdict: crate::report::verdict::Verdict::Fail,
        detail: String::new(),
        meaning: String::new(),
        measure: None,
    };
    let with = |mut runs: Vec<Measurement>, check: &str, n: usize| {
        for m in runs.iter_mut().take(n) {
            m.report.checks.push(failed(check));
            m.report.valid = false;
        }
        runs
    };
    // Runs whose counts are wrong are left out; most of them: not decided.
    let v = judged(&with(runs(8, 10), "error_replies", 5));
    assert!(v.generator_limited && v.verdict == Uncertain, "{}", v.why);
    assert!(v.why.contains("limited by the generator"), "{}", v.why);
    // A lagging generator only added to what was measured: a pass stands...
    assert_eq!(
        judged(&with(runs(16, 10), "schedule_lag", 16)).verdict,
        Pass
    );
    // ...a failure measured on such runs may be the generator's.
    let v = judged(&with(runs(8, 150), "generator_cpu", 8));
    assert!(v.generator_limited && v.verdict == Uncertain, "{}", v.why);
    assert_eq!(judged(&with(runs(8, 150), "poisson_fit", 8)).verdict, Fail);
    // Every run overloaded: fail whatever the latency of what was sent.
    let dropped = [
        run(1000.0, MS / 2, ci(0.4, Some(0.6)), 0.5),
        run(1000.0, MS / 2, ci(0.4, Some(0.6)), 0.6),
    ];
    let v = judge_step(&dropped.iter().collect::<Vec<_>>(), &slos);
    assert_eq!(v.verdict, Fail);
    assert!(v.why.contains("no run carried the rate"), "{}", v.why);
}

/// `--repeat`'s objectives are a sweep step's verdict on the same runs, each run's own
/// verdict read from its report (where a run of `--slo` keeps it).
#[test]
fn repeats_are_judged_as_a_sweep_judges_the_step_of_the_same_runs() {
    let slos = [slo_p99_1ms()];
    let mut verdicts = Vec::new();
    for over in [[10, 0, 0, 5], [150, 150, 150, 150], [10, 10, 2500, 10]] {
        let runs: Vec<Measurement> = (0..4)
            .map(|i| windowed_run(1000.0, 5000, &over.map(|k| k + i)))
            .collect();
        let step = judge_step(&runs.iter().collect::<Vec<_>>(), &slos);
        let reports: Vec<TestReport> = runs
            .iter()
            .map(|m| TestReport {
                slo: m.slo.clone(),
                ..m.report.clone()
            })
            .collect();
        let repeats: Vec<&TestReport> = reports.iter().collect();
        assert_eq!(judge_repeats(&repeats, &slos).as_ref(), Some(&step));
        verdicts.push((step.verdict, step.met_runs));
        // A closed loop (no target rate) and a run without objectives are not judged.
        assert_eq!(judge_repeats(&repeats, &[]), None);
        let closed = TestReport {
            target_rate_per_sec: None,
            ..reports[0].clone()
        };
        assert_eq!(judge_repeats(&[&closed, &closed], &slos), None);
    }
    // The runs' own verdicts are counted, and the cases differ: four runs well under the
    // bound cannot pass a p99 yet (its pass waits for run 16), four far over it fail.
    assert_eq!(verdicts[0], (Uncertain, 4), "{verdicts:?}");
    assert_eq!(verdicts[1].0, Fail, "{verdicts:?}");
}

#[test]
fn a_step_whose_runs_lost_their_server_is_not_limited_by_the_generator() {
    use crate::report::{Bottleneck, Judgement};
    let slos = [slo_p99_1ms()];
    // Runs short of their schedule: a lost server's (the bottleneck names it), or a
    // generator's that fell behind (nothing named).
    let short = |named: Option<Bottleneck>| {
        let mut m = windowed_run(1000.0, 5000, &[10; 4]);
        m.report.achieved_rate_per_sec = 970.0;
        m.report.bottleneck = named.map(|verdict| Judgement {
            verdict,
            because: String::new(),
            server_busy: None,
        });
        m
    };
    let lost: Vec<Measurement> = (0..4).map(|_| short(Some(Bottleneck::Server))).collect();
    let v = judge_step(&lost.iter().collect::<Vec<_>>(), &slos);
    assert!(!v.generator_limited, "{}", v.why);
    assert_eq!(v.verdict, Uncertain, "{}", v.why);
    assert!(v.why.starts_with("no run counted: 4 of 4"), "{}", v.why);
    let behind: Vec<Measurement> = (0..4).map(|_| short(None)).collect();
    let v = judge_step(&behind.iter().collect::<Vec<_>>(), &slos);
    assert!(v.generator_limited, "{}", v.why);
    assert!(v.why.contains("limited by the generator"), "{}", v.why);
}

#[test]
fn a_sweep_fails_when_every_rate_lost_its_server_and_not_when_one_kept_it() {
    use crate::judge::summary::lost_server;
    use crate::report::OutageReport;
    let lost = |rate: f64, until_end: bool| {
        let mut m = windowed_run(rate, 5000, &[10; 4]);
        m.report.outages.push(OutageReport {
            start_secs: 0.5,
            length_secs: 1.5,
            at_least_secs: 1.4,
            cause: "Connection refused".into(),
            until_end,
        });
        m
    };
    let every = [lost(1000.0, true), lost(2000.0, true), lost(2000.0, false)];
    let why = lost_server(&every).unwrap();
    assert!(
        why.contains("every rate swept (2) lost its server"),
        "{why}"
    );
    // One rate kept its server to the end: the sweep measured something.
    let one_kept = [lost(1000.0, true), lost(2000.0, false)];
    assert_eq!(lost_server(&one_kept), None);
    assert_eq!(lost_server(&[]), None);
}
