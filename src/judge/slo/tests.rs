//! The SLO verdicts of runs and steps, on hand-made runs.

#![allow(clippy::unwrap_used)]
use super::*;
use crate::judge::fixtures::*;
use crate::report::sweep::steps::{StepWhy, Wanting};
use Verdict::{Fail, Pass, Uncertain};

#[test]
fn every_objective_together_fails_on_one_fail_and_passes_only_when_all_pass() {
    assert_eq!(all_of([Pass, Pass]), Pass);
    assert_eq!(all_of([Pass, Uncertain]), Uncertain);
    assert_eq!(all_of([Uncertain, Fail]), Fail);
    assert_eq!(all_of([]), Uncertain);
}

#[test]
fn a_rate_not_carried_cannot_pass_and_fails_when_no_run_carried_it() {
    use Sends::{Kept, Overloaded, Short};
    let slos = [slo_p99_1ms()];
    let judged = |achieved: f64| {
        let mut m = windowed_run(1000.0, 5000, &[0; 8]);
        m.report.achieved_rate_per_sec = 1000.0 * achieved;
        m.report.counts.completed = (1000.0 * achieved) as u64;
        judge(&m.report, &slos).verdict.unwrap()
    };
    // Far under the bound: a pass on a run that kept its schedule, at best uncertain on
    // one short of it, a fail on one that did not carry the rate.
    assert_eq!(judged(1.0), Pass);
    assert_eq!(judged(0.97), Uncertain);
    assert_eq!(judged(0.3), Fail);
    let r = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 1.0).report;
    assert_eq!(sends(&r), Kept);
    let r = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 0.97).report;
    assert_eq!(sends(&r), Short);
    let r = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 0.9).report;
    assert_eq!(sends(&r), Overloaded);
}

/// One rule per question: a single run is decided by the pooled exceedance test with its
/// windows as clusters, so a run every reply of which is far under the bound passes
/// (however few replies are beyond the percentile), one far over it fails, and the
/// interval shown is that test's inversion, never open beside a pass.
#[test]
fn a_single_run_is_decided_on_its_share_over_the_bound_with_its_windows_as_clusters() {
    let slos = [slo_p99_1ms()];
    // Every reply 0.2 ms, five times under the bound.
    let under = windowed_run(1000.0, 500, &[0; 6]);
    let v = judge(&under.report, &slos);
    assert_eq!(v.verdict, Some(Pass), "{v:?}");
    assert!(v.met && v.valid);
    let c = &v.checks[0];
    assert!(
        c.ci95_ns.is_some_and(|i| i.high().is_some_and(|h| h <= MS)),
        "{c:?}"
    );
    assert!(
        c.exceedance
            .is_some_and(|e| e.over == 0 && e.high <= e.limit)
    );
    // Every window with 5% of its replies at 2 ms: the p99 is twice the bound.
    let over = windowed_run(1000.0, 500, &[25; 6]);
    let v = judge(&over.report, &slos);
    assert_eq!(v.verdict, Some(Fail), "{v:?}");
    assert!(!v.met);
    assert!(v.checks[0].measured_ns.is_some_and(|m| m > MS), "{v:?}");
    // Three windows are too few to measure their spread: the replies' own (binomial)
    // bounds decide, a pass on 1,500 calm replies, a fail on all over, and nothing on
    // 300 replies, too few to show a p99 under its bound.
    let short = windowed_run(1000.0, 500, &[0; 3]);
    assert_eq!(judge(&short.report, &slos).verdict, Some(Pass));
    let over = windowed_run(1000.0, 500, &[500; 3]);
    assert_eq!(judge(&over.report, &slos).verdict, Some(Fail));
    let few = windowed_run(1000.0, 100, &[0; 3]);
    let v = judge(&few.report, &slos);
    assert_eq!(v.verdict, Some(Uncertain), "{v:?}");
    assert!(
        matches!(wanting(v.why.as_ref()), Some(Wanting::Replies { .. })),
        "{v:?}"
    );
    // A run without windows (an older file) is not decided.
    let bare = run(1000.0, MS / 2, ci(0.4, Some(0.6)), 1.0);
    assert_eq!(bare.slo.as_ref().unwrap().verdict, Some(Uncertain));
}

/// The three paths — a single run, `--repeat` and a sweep's step — are one function: on
/// the same runs, `--repeat` and the step give the same verdict and figures, and a single
/// run's verdict is that function's with the windows as clusters.
#[test]
fn a_run_a_repeat_and_a_step_give_the_same_answer_on_the_same_data() {
    let slos = [slo_p99_1ms()];
    for over in [[0u64; 6], [25; 6], [10, 0, 0, 0, 0, 60], [5; 6]] {
        let runs: Vec<Measurement> = (0..5).map(|_| windowed_run(1000.0, 500, &over)).collect();
        let reports: Vec<&TestReport> = runs.iter().map(|m| &m.report).collect();
        let refs: Vec<&Measurement> = runs.iter().collect();
        let repeat = judge_repeats(&reports, &slos).unwrap();
        let step = judge_step(&refs, &slos, Clusters::Runs);
        assert_eq!(repeat.verdict, step.verdict, "{over:?}");
        assert_eq!(repeat.checks, step.checks, "{over:?}");
        let steps = judge_steps(&runs, &slos);
        assert_eq!(steps[0].slo.as_ref().unwrap().verdict, step.verdict);
        let one = judge(&runs[0].report, &slos);
        let by_windows = judge_step(&refs[..1], &slos, Clusters::Windows);
        assert_eq!(one.verdict, Some(by_windows.verdict), "{over:?}");
        assert_eq!(one.checks[0].verdict, Some(by_windows.checks[0].verdict));
        assert_eq!(one.checks[0].ci95_ns, by_windows.checks[0].summary.ci95_ns);
    }
}

#[test]
fn a_step_is_decided_on_the_share_over_the_bound_pooled_over_its_runs() {
    let slos = [slo_p99_1ms()];
    let runs = |n: usize, over_per_window: u64| -> Vec<Measurement> {
        (0..n)
            .map(|_| windowed_run(1000.0, 5000, &[over_per_window; 4]))
            .collect()
    };
    let judged =
        |runs: &[Measurement]| judge_step(&runs.iter().collect::<Vec<_>>(), &slos, Clusters::Runs);
    // 0.2% over 1 ms in 16 runs: well under the 1% p99 allows.
    let v = judged(&runs(16, 10));
    assert_eq!(v.verdict, Pass, "{}", v.why);
    let e = v.checks[0].exceedance.unwrap();
    assert!((e.fraction - 0.002).abs() < 1e-9 && e.visits == 16, "{e:?}");
    // On 8 runs its bound is under 1% already, but a pass waits for the 16th run.
    let v = judged(&runs(8, 10));
    assert_eq!(v.verdict, Uncertain, "{}", v.why);
    assert_eq!(
        wanting(Some(&v.why)),
        Some(Wanting::PassRuns { have: 8, need: 16 }),
        "{}",
        v.why
    );
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
        wanting(Some(&v.why)) == Some(Wanting::DecisionRuns { have: 2, need: 4 }),
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
    assert!(
        matches!(v.why, StepWhy::GeneratorLimited { .. }),
        "{}",
        v.why
    );
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
    let v = judge_step(&dropped.iter().collect::<Vec<_>>(), &slos, Clusters::Runs);
    assert_eq!(v.verdict, Fail);
    assert!(
        matches!(
            v.why,
            StepWhy::NoRunCarried {
                short: 2,
                runs: 2,
                ..
            }
        ),
        "{}",
        v.why
    );
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
        let step = judge_step(&runs.iter().collect::<Vec<_>>(), &slos, Clusters::Runs);
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
    let v = judge_step(&lost.iter().collect::<Vec<_>>(), &slos, Clusters::Runs);
    assert!(!v.generator_limited, "{}", v.why);
    assert_eq!(v.verdict, Uncertain, "{}", v.why);
    assert_eq!(
        v.why,
        StepWhy::NoRunCounted {
            invalid: 4,
            runs: 4
        },
        "{}",
        v.why
    );
    let behind: Vec<Measurement> = (0..4).map(|_| short(None)).collect();
    let v = judge_step(&behind.iter().collect::<Vec<_>>(), &slos, Clusters::Runs);
    assert!(v.generator_limited, "{}", v.why);
    assert!(
        matches!(v.why, StepWhy::GeneratorLimited { .. }),
        "{}",
        v.why
    );
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

/// What the first objective of `why` still wants, when it was decided on objectives.
fn wanting(why: Option<&StepWhy>) -> Option<Wanting> {
    match why? {
        StepWhy::Objectives(each) => each.first()?.wanting,
        _ => None,
    }
}
