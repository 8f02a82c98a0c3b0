//! The tail's attribution on planted causes: a server that stalls, a host that takes
//! the server's core, a late generator, a short client queue, a server that works
//! through a long stretch, a quiet tail at the floor, and the whole-histogram path.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use super::*;
use crate::record::Metric;
use crate::report::Latency;
use crate::report::host::HostReport;
use crate::report::server::ServerView;
use crate::report::server::events::{ServerEvent, ServerEvents};
use crate::report::tail::Cause;
use crate::report::verdict::Bottleneck;

const MS: u64 = 1_000_000;

/// A test's report and its batches by metric, with its on-time batches.
struct Planted {
    report: TestReport,
    batches: BTreeMap<Metric, Vec<Batch>>,
    on_time: Vec<Batch>,
}

/// A test of `n` 50 ms batches whose every batch holds `per_batch` replies of 40.1 µs
/// (service 30 µs, lag 10 µs, queue wait 0.1 µs), and the replies `planted` adds:
/// `(batch, the part planted, its value, count)`, the other parts at 10 µs.
fn planted(n: usize, per_batch: u64, planted: &[(usize, Metric, u64, u64)]) -> Planted {
    let mut rows: Vec<Row> = (0..n)
        .map(|i| (i, 10_000, 100, 30_000, per_batch))
        .collect();
    for &(i, metric, value, count) in planted {
        let part = |m: Metric| if m == metric { value } else { 10_000 };
        rows.push((
            i,
            part(Metric::Lag),
            part(Metric::QueueWait),
            part(Metric::Service),
            count,
        ));
    }
    recorded(n, &rows)
}

/// `(batch, lag, queue wait, service time, count)`, ns.
type Row = (usize, u64, u64, u64, u64);

/// A test of `n` 50 ms batches holding `rows`' replies.
fn recorded(n: usize, rows: &[Row]) -> Planted {
    let mut hists: BTreeMap<Metric, Vec<Histogram<u64>>> = BTreeMap::new();
    for m in Metric::ALL {
        hists.insert(m, (0..n).map(|_| crate::record::new_histogram()).collect());
    }
    let mut on_time: Vec<Histogram<u64>> = (0..n).map(|_| crate::record::new_histogram()).collect();
    for &(i, lag, queue, service, count) in rows {
        if count == 0 {
            continue;
        }
        for (m, v) in [
            (Metric::Response, lag + queue + service),
            (Metric::Lag, lag),
            (Metric::QueueWait, queue),
            (Metric::Service, service),
        ] {
            hists.get_mut(&m).unwrap()[i].record_n(v, count).unwrap();
        }
        on_time[i].record_n(queue + service, count).unwrap();
    }
    let mut report = crate::judge::fixtures::run(1000.0, 0, None, 1.0).report;
    let mut batches = BTreeMap::new();
    for (m, hs) in &hists {
        let mut total = crate::record::new_histogram();
        for h in hs {
            total.add(h).unwrap();
        }
        report
            .latency
            .insert(*m, Latency::without_intervals(&total));
        batches.insert(*m, hs.iter().map(Batch::of).collect());
    }
    Planted {
        report,
        batches,
        on_time: on_time.iter().map(Batch::of).collect(),
    }
}

/// The host's batches: the server's runs, waits and CPU, the same in every batch but
/// those `changed` sets.
fn host(n: usize, changed: &[(usize, u64, u64, u64)]) -> HostReport {
    let mut h = HostReport::default();
    h.batches.batch_ms = 50.0;
    h.batches.server_runs = vec![60; n];
    h.batches.server_wait_us = vec![60; n];
    h.batches.server_cpu_us = vec![2_000; n];
    h.batches.generator_runs = vec![50; n];
    h.batches.generator_wait_us = vec![50; n];
    h.batches.hiccup_max_us = vec![80; n];
    for &(i, runs, wait, cpu) in changed {
        h.batches.server_runs[i] = runs;
        h.batches.server_wait_us[i] = wait;
        h.batches.server_cpu_us[i] = cpu;
    }
    h
}

/// `p`'s tail over `bound_ns` (the objective p99 under it).
fn attributed(p: &Planted, bound_ns: u64) -> TailCauses {
    let get = |m: Metric| p.batches.get(&m).map_or(&[][..], Vec::as_slice);
    let placed = Batches {
        response: get(Metric::Response),
        on_time: &p.on_time,
        service: get(Metric::Service),
        lag: get(Metric::Lag),
    };
    let objective = Objective {
        text: "p99<=T",
        quantile: 0.99,
        bound_ns,
    };
    let b = bound(
        &p.report.response().unwrap().histogram().unwrap(),
        &[objective],
    )
    .unwrap();
    attribute(&p.report, &b, Some(&placed)).unwrap().0
}

#[test]
fn three_freezes_of_the_server_off_its_cpu_are_named_as_stalls_with_its_slow_log() {
    // 3 s at 1k/s: the server sleeps 200 ms from 0.5 s, 1.5 s and 2.5 s; the replies held
    // arrive in the batch after, their service times up to 200 ms.
    let mut planted_replies = Vec::new();
    let mut off = Vec::new();
    for start in [10, 30, 50] {
        for (v, count) in [(200u64, 20u64), (150, 10), (100, 10), (50, 10)] {
            planted_replies.push((start + 4, Metric::Service, v * MS, count));
        }
        for i in start..start + 4 {
            off.push((i, 1, 5, 50));
        }
    }
    let mut p = planted(60, 50, &planted_replies);
    p.report.host = Some(host(60, &off));
    let view = ServerView {
        events: Some(ServerEvents {
            events: [0.0, 1.0, 2.0]
                .iter()
                .map(|&at| ServerEvent {
                    source: "slowlog".into(),
                    event: "DEBUG".into(),
                    at_secs: at,
                    length_ms: 200.1,
                    in_tail: None,
                })
                .collect(),
            ..ServerEvents::default()
        }),
        ..ServerView::default()
    };
    p.report.server = Some(view);
    let tail = attributed(&p, MS);
    assert_eq!(
        leading(&tail).unwrap().cause,
        Cause::ServerStall,
        "{tail:#?}"
    );
    assert!(tail.share(Cause::ServerStall) > 0.9, "{tail:#?}");
    assert_eq!(tail.stalls.len(), 3, "{:#?}", tail.stalls);
    for s in &tail.stalls {
        assert_eq!(s.off_cpu, Some(true), "{s:?}");
        assert_eq!(
            s.events,
            vec!["DEBUG 200.1 ms (slowlog)".to_string()],
            "{s:?}"
        );
        assert!((150.0..=210.0).contains(&s.length_ms), "{s:?}");
    }
    let (verdict, because) = words::named(&p.report, &tail).unwrap();
    assert_eq!(verdict, Bottleneck::Server);
    assert!(because.starts_with("3 stalls of"), "{because}");
    assert!(
        because.contains("off its CPU and not runnable"),
        "{because}"
    );
}

#[test]
fn a_server_waiting_for_its_core_through_the_slow_replies_is_the_host() {
    // The server waited 20 ms of every 50 ms batch, 400 µs a run: replies of 30-60 ms.
    let planted_replies: Vec<_> = (2..40)
        .map(|i| (i, Metric::Service, (30 + i as u64) * MS, 2))
        .collect();
    let mut p = planted(40, 100, &planted_replies);
    let waits: Vec<_> = (0..40).map(|i| (i, 50, 20_000, 8_000)).collect();
    p.report.host = Some(host(40, &waits));
    let tail = attributed(&p, MS);
    assert_eq!(leading(&tail).unwrap().cause, Cause::Host, "{tail:#?}");
    assert_eq!(tail.host_parts[0].0, "server");
    assert!(tail.stalls.is_empty());
}

/// A server that executed in 33 µs at 7% of a core, the host's batches quiet but for
/// steal of `steal_ms` over the 2 s run, counted in lumps away from the slow replies.
fn fast_server_on_a_stolen_host(steal_ms: f64) -> Planted {
    let planted_replies: Vec<_> = (2..40)
        .step_by(4)
        .map(|i| (i, Metric::Service, 3 * MS, 3))
        .collect();
    let mut p = planted(40, 100, &planted_replies);
    p.report.measured_secs = 2.0;
    p.report.server = Some(ServerView {
        cpu_utilisation: Some(0.07),
        commands: vec![crate::report::server::ServerCommand {
            command: "GET".into(),
            exec_usec_at_most: Some(crate::report::server::ExecPercentiles {
                p99: 33,
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    });
    let mut h = host(40, &[]);
    let lumps = [4, 14, 24, 35, 39];
    h.batches.steal_us = (0..40)
        .map(|i| {
            if lumps.contains(&i) {
                (steal_ms * 1e3 / lumps.len() as f64) as u64
            } else {
                0
            }
        })
        .collect();
    h.steal_ms = Some(steal_ms);
    p.report.host = Some(h);
    p
}

#[test]
fn a_tail_a_fast_server_cannot_explain_is_the_hosts_where_the_hypervisor_took_the_cpus() {
    // 410 ms stolen of a 2 s run, in five lumps the slow replies do not fall in.
    let tail = attributed(&fast_server_on_a_stolen_host(410.0), MS);
    assert_eq!(leading(&tail).unwrap().cause, Cause::Host, "{tail:#?}");
    assert!(
        tail.host_parts.iter().any(|(part, _)| *part == "steal"),
        "{tail:#?}"
    );
    // One tick stolen, as on a quiet machine: the network's and the kernel's.
    let tail = attributed(&fast_server_on_a_stolen_host(10.0), MS);
    assert_eq!(
        leading(&tail).unwrap().cause,
        Cause::NetworkKernel,
        "{tail:#?}"
    );
}

#[test]
fn a_generator_yielding_to_its_own_collector_is_not_the_host_and_one_a_busy_loop_holds_is() {
    // A quiet pinned run: the generator waited 0.8 ms of every 50 ms batch, 40 µs a run
    // (tailrate's own collector and host meter), and the replies over 0.25 ms were the
    // server's service time. The waits were in every batch, the slow replies' too.
    let planted_replies: Vec<_> = (0..40).map(|i| (i, Metric::Service, 300_000, 2)).collect();
    let mut p = planted(40, 100, &planted_replies);
    let mut h = host(40, &[]);
    h.batches.generator_runs = vec![20; 40];
    h.batches.generator_wait_us = vec![800; 40];
    p.report.host = Some(h.clone());
    let tail = attributed(&p, 250_000);
    assert_ne!(leading(&tail).unwrap().cause, Cause::Host, "{tail:#?}");
    // A busy loop on the generator's core: 20 ms of each batch, 2 ms a run.
    h.batches.generator_runs = vec![10; 40];
    h.batches.generator_wait_us = vec![20_000; 40];
    p.report.host = Some(h);
    let tail = attributed(&p, 250_000);
    assert_eq!(leading(&tail).unwrap().cause, Cause::Host, "{tail:#?}");
    assert_eq!(tail.host_parts[0].0, "generator");
}

#[test]
fn lateness_the_generator_did_not_wait_for_is_the_generators() {
    let planted_replies: Vec<_> = (0..40).map(|i| (i, Metric::Lag, 3 * MS, 3)).collect();
    let mut p = planted(40, 100, &planted_replies);
    p.report.host = Some(host(40, &[]));
    let tail = attributed(&p, MS);
    assert_eq!(leading(&tail).unwrap().cause, Cause::Generator, "{tail:#?}");
    assert!(tail.share(Cause::Generator) > 0.9, "{tail:#?}");
}

#[test]
fn a_queue_for_connections_while_the_server_answers_fast_is_the_clients() {
    let planted_replies: Vec<_> = (0..40).map(|i| (i, Metric::QueueWait, 2 * MS, 3)).collect();
    let p = planted(40, 100, &planted_replies);
    let tail = attributed(&p, MS);
    assert_eq!(
        leading(&tail).unwrap().cause,
        Cause::ClientQueue,
        "{tail:#?}"
    );
}

#[test]
fn a_long_stretch_the_server_worked_through_is_its_queueing_not_a_stall() {
    // Replies of 80 ms whose stretch the server spent on its CPU (45 of 50 ms a batch).
    let planted_replies: Vec<_> = (2..40).map(|i| (i, Metric::Service, 80 * MS, 2)).collect();
    let mut p = planted(40, 100, &planted_replies);
    let busy: Vec<_> = (0..40).map(|i| (i, 900, 60, 45_000)).collect();
    p.report.host = Some(host(40, &busy));
    let tail = attributed(&p, MS);
    assert_eq!(leading(&tail).unwrap().cause, Cause::Server, "{tail:#?}");
    assert!(tail.stalls.is_empty(), "{:#?}", tail.stalls);
}

#[test]
fn a_quiet_tail_sits_at_the_floor() {
    // A p99 of 90 µs against a median service time of 30 µs.
    let planted_replies: Vec<_> = (0..40).map(|i| (i, Metric::Service, 80_000, 2)).collect();
    let mut p = planted(40, 100, &planted_replies);
    p.report.host = Some(host(40, &[]));
    let tail = attributed(&p, 60_000);
    assert!(at_floor(&tail), "{tail:#?}");
    assert!(words::named(&p.report, &tail).is_none());
    assert!(words::floor(&tail).starts_with("the tail sits at the floor"));
    let judged = judged(p.report, tail, &[]);
    assert_eq!(judged.verdict, Bottleneck::None, "{judged:?}");
}

/// `report` with `tail` as its attribution and the checks `failed` failed, judged.
fn judged(
    mut report: TestReport,
    tail: TailCauses,
    failed: &[&str],
) -> crate::report::verdict::Judgement {
    report.tail = Some(tail);
    report.checks = failed
        .iter()
        .map(|name| crate::report::verdict::Check {
            name: (*name).to_string(),
            verdict: crate::report::verdict::Verdict::Fail,
            detail: String::new(),
            meaning: String::new(),
            measure: None,
        })
        .collect();
    report.valid = failed.is_empty();
    crate::judge::bottleneck::judge(&report)
}

/// `p`'s tail over its response p99 (no objective).
fn attributed_p99(p: &Planted) -> TailCauses {
    let get = |m: Metric| p.batches.get(&m).map_or(&[][..], Vec::as_slice);
    let placed = Batches {
        response: get(Metric::Response),
        on_time: &p.on_time,
        service: get(Metric::Service),
        lag: get(Metric::Lag),
    };
    let b = bound(&p.report.response().unwrap().histogram().unwrap(), &[]).unwrap();
    attribute(&p.report, &b, Some(&placed)).unwrap().0
}

/// The checks a busy host failed at 50k/s.
const GENERATOR_FAILED: [&str; 3] = ["schedule_lag", "generator_cpu", "poisson_fit"];

#[test]
fn a_loaded_host_raises_the_median_service_time_but_not_the_floor() {
    // A loaded 2-core host at 50k/s: median service 5 ms, lag p99 16 ms, response p99
    // 31 ms, a tenth of the replies still served in 1 ms. Against the median, the p99 is
    // 6 times it ("none"); against the floor, 31.
    let rows: Vec<Row> = (0..40)
        .flat_map(|i| {
            [
                (i, 10_000, 100, MS, 10),
                (i, MS, 100, 5 * MS, 50),
                (i, 8 * MS, 100, 6 * MS, 36),
                (i, 16 * MS, 100, 15 * MS, 3),
                (i, 18 * MS, 100, 20 * MS, 1),
            ]
        })
        .collect();
    let p = recorded(40, &rows);
    let latency = |m: Metric| p.report.latency[&m].clone();
    let (service, lag, response) = (
        latency(Metric::Service),
        latency(Metric::Lag),
        latency(Metric::Response),
    );
    assert!(
        (4_200_000..=7_400_000).contains(&service.p50_ns),
        "{service:?}"
    );
    assert!((14 * MS..=18 * MS).contains(&lag.p99_ns), "{lag:?}");
    assert!(
        (30 * MS..=43 * MS).contains(&response.p99_ns),
        "{response:?}"
    );
    assert!(response.p99_ns as f64 <= FLOOR_FACTOR * service.p50_ns as f64);
    let tail = attributed_p99(&p);
    assert!(tail.floor_ns <= MS + MS / 100, "{tail:#?}");
    assert!(!at_floor(&tail), "{tail:#?}");
    let judged = judged(p.report, tail, &GENERATOR_FAILED);
    assert!(
        matches!(judged.verdict, Bottleneck::Generator | Bottleneck::Host),
        "{judged:?}"
    );
}

/// A loaded host whose every reply was slow: service 4.2-7.4 ms, lag p99 14 ms, response
/// p99 30 ms; the floor (4.2 ms) rose with the tail.
fn slow_everywhere() -> Planted {
    let rows: Vec<Row> = (0..40)
        .flat_map(|i| {
            [
                (i, MS, 100, 4_200_000, 60),
                (i, 8 * MS, 100, 7_400_000, 36),
                (i, 14 * MS, 100, 16 * MS, 3),
                (i, 18 * MS, 100, 25 * MS, 1),
            ]
        })
        .collect();
    recorded(40, &rows)
}

#[test]
fn a_tail_at_a_raised_floor_with_the_generators_checks_failed_names_the_generator_or_host() {
    let p = slow_everywhere();
    let tail = attributed_p99(&p);
    assert!(at_floor(&tail), "{tail:#?}");
    let judged = judged(p.report, tail, &GENERATOR_FAILED);
    // generator_cpu failed on a thread that was not busy: it waited for a CPU.
    assert_eq!(judged.verdict, Bottleneck::Host, "{judged:?}");
    assert!(
        judged
            .because
            .contains("schedule_lag, generator_cpu, poisson_fit failed"),
        "{}",
        judged.because
    );
}

#[test]
fn a_tail_at_a_raised_floor_the_lag_carries_names_the_generator() {
    // The checks passed (as a recorded report may say), but the lateness put every reply
    // over the p99 over it, with a lag p99 of 14 ms.
    let p = slow_everywhere();
    let tail = attributed_p99(&p);
    assert!(at_floor(&tail), "{tail:#?}");
    assert!(tail.share(Cause::Generator) > 0.5, "{tail:#?}");
    let judged = judged(p.report, tail, &[]);
    assert_eq!(judged.verdict, Bottleneck::Generator, "{judged:?}");
    assert!(
        judged.because.contains("its lateness carries"),
        "{}",
        judged.because
    );
}

#[test]
fn without_batches_the_whole_histograms_still_give_each_parts_share() {
    let planted_replies: Vec<_> = (0..40).map(|i| (i, Metric::Lag, 3 * MS, 3)).collect();
    let p = planted(40, 100, &planted_replies);
    let objective = Objective {
        text: "p99<=1ms",
        quantile: 0.99,
        bound_ns: MS,
    };
    let b = bound(
        &p.report.response().unwrap().histogram().unwrap(),
        &[objective],
    )
    .unwrap();
    let (tail, in_waits) = attribute(&p.report, &b, None).unwrap();
    assert!(!tail.localised);
    assert!(in_waits.is_none());
    assert_eq!(leading(&tail).unwrap().cause, Cause::Generator, "{tail:#?}");
}

#[test]
fn the_bound_is_the_objective_nearest_to_failing_else_the_p99() {
    let mut h = crate::record::new_histogram();
    h.record_n(50_000, 980).unwrap();
    h.record_n(3 * MS, 20).unwrap();
    let objective = |text, quantile, bound_ns| Objective {
        text,
        quantile,
        bound_ns,
    };
    let b = bound(
        &h,
        &[
            objective("p50<=1ms", 0.5, MS),
            objective("p99<=1ms", 0.99, MS),
        ],
    )
    .unwrap();
    assert_eq!((b.label.as_str(), b.over_ns), ("p99<=1ms", MS));
    let b = bound(&h, &[]).unwrap();
    assert_eq!(b.label, "p99");
    assert!(b.over_ns >= 2 * MS, "{b:?}");
}
