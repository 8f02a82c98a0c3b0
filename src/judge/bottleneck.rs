//! Who held a test back: the generator, the server, the client's own queue, or the
//! network and kernel between them; or nothing, when the server kept up with room.
//!
//! The verdict is read off facts the report already has (the self-checks, generator
//! CPU, the four client-side times, and the server's own CPU and execution time), in
//! the order a fault would distort the others. The server's own clock comes first: its
//! CPU and the time it spent executing are its own, and no client fault makes them
//! larger. Then the generator: a starved generator makes every client-side time late.
//! Then the server's share of the service time, and last the client's queue, which
//! grows behind any of the others.

use super::checks::CPU_SATURATION;
use crate::drive::ThreadCpu;
use crate::report::TestReport;
use crate::report::verdict::{Bottleneck, Judgement, SERVER_CPU_SATURATION, Verdict};

/// The share of the mean service time that the server's mean execution time must reach
/// for the server's work to be what the client waits on.
pub const EXECUTION_SHARE: f64 = 0.5;
/// The share of the response time at p50 or p99 that waiting for a free connection
/// must reach for the client's own queue to be what the client waits on.
pub const QUEUE_SHARE: f64 = 0.5;

/// Judges `test` from its checks, times and server view.
pub fn judge(test: &TestReport) -> Judgement {
    let mut judgement = judge_without_busy(test);
    judgement.server_busy = server_busy(test);
    judgement
}

/// The larger of the server's CPU share and its executing share, where reported.
fn server_busy(test: &TestReport) -> Option<f64> {
    let s = test.server.as_ref()?;
    let usec: f64 = s
        .commands
        .iter()
        .filter_map(|c| Some(c.mean_exec_usec? * c.calls as f64))
        .sum();
    let executing = (s.span_secs > 0.0).then(|| usec / 1e6 / s.span_secs);
    match (s.cpu_utilisation, executing) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn judge_without_busy(test: &TestReport) -> Judgement {
    let said = |verdict, because: String| Judgement {
        verdict,
        because,
        server_busy: None,
    };
    let open = test.target_rate_per_sec.is_some();
    let failed = |name: &str| {
        test.checks
            .iter()
            .any(|c| c.name == name && c.verdict == Verdict::Fail)
    };
    let busiest = test
        .generator_cpu
        .iter()
        .map(ThreadCpu::busy_fraction)
        .fold(0.0, f64::max);
    let metric = |name: &str| test.latency.get(name);
    let service_mean_us = metric("service").map_or(0.0, |l| l.mean_ns / 1e3);
    let server = test.server.as_ref();
    let server_cpu = server.and_then(|s| s.cpu_utilisation);
    if let Some(cpu) = server_cpu.filter(|&c| c >= SERVER_CPU_SATURATION) {
        return said(
            Bottleneck::Server,
            format!("the server used {:.0}% of one core", cpu * 100.0),
        );
    }
    // Mean execution over all the test's commands, weighted by calls.
    let execution = server.and_then(|s| {
        let (calls, usec) = s
            .commands
            .iter()
            .filter_map(|c| Some((c.calls as f64, c.mean_exec_usec? * c.calls as f64)))
            .fold((0.0, 0.0), |(n, t), (cn, ct)| (n + cn, t + ct));
        (calls > 0.0).then(|| usec / calls)
    });
    // The server's own clock: the share of the test it spent executing commands. A
    // command that waits (DEBUG SLEEP, a blocking script) holds a single-threaded server
    // without using its CPU.
    let executing = server.and_then(|s| {
        let usec: f64 = s
            .commands
            .iter()
            .filter_map(|c| Some(c.mean_exec_usec? * c.calls as f64))
            .sum();
        (s.span_secs > 0.0).then(|| usec / 1e6 / s.span_secs)
    });
    if let Some(share) = executing.filter(|&e| e >= SERVER_CPU_SATURATION) {
        return said(
            Bottleneck::Server,
            format!(
                "the server spent {:.0}% of the test executing its commands",
                share * 100.0
            ),
        );
    }
    if busiest >= CPU_SATURATION {
        return said(
            Bottleneck::Generator,
            format!(
                "the busiest generator thread was {:.0}% busy; add --threads",
                busiest * 100.0
            ),
        );
    }
    if open && failed("schedule_lag") {
        return said(
            Bottleneck::Generator,
            "the generator's lateness moved the response percentiles (see schedule_lag)".into(),
        );
    }

    if let Some(exec_us) =
        execution.filter(|&e| service_mean_us > 0.0 && e >= EXECUTION_SHARE * service_mean_us)
    {
        return said(
            Bottleneck::Server,
            format!(
                "the server's mean execution time, {exec_us:.1} µs, is {:.0}% of the mean service time",
                100.0 * exec_us / service_mean_us
            ),
        );
    }

    if open {
        let (response, wait) = (metric("response"), metric("queue_wait"));
        if let (Some(r), Some(w)) = (response, wait) {
            let share = |w: u64, r: u64| if r == 0 { 0.0 } else { w as f64 / r as f64 };
            let (at_p50, at_p99) = (share(w.p50_ns, r.p50_ns), share(w.p99_ns, r.p99_ns));
            if at_p50.max(at_p99) >= QUEUE_SHARE || test.counts.not_sent > 0 {
                return said(
                    Bottleneck::ClientQueue,
                    format!(
                        "waiting for a free connection was {:.0}% of the response p50 and {:.0}% of its p99{}; raise -c or --max-inflight",
                        at_p50 * 100.0,
                        at_p99 * 100.0,
                        if test.counts.not_sent > 0 {
                            format!(", and {} requests were never sent", test.counts.not_sent)
                        } else {
                            String::new()
                        }
                    ),
                );
            }
        }
        if failed("achieved_rate") {
            return said(
                Bottleneck::NetworkKernel,
                "the rate was not reached, with neither the generator nor the server busy".into(),
            );
        }
        return said(
            Bottleneck::None,
            match server_cpu {
                Some(cpu) => format!("the server kept up, using {:.0}% of one core", cpu * 100.0),
                None => "the server kept up (its CPU was not reported)".into(),
            },
        );
    }
    // A closed loop always runs as fast as something lets it: with neither end busy,
    // that is the round trip.
    match (server_cpu, execution) {
        (Some(cpu), Some(exec_us)) => said(
            Bottleneck::NetworkKernel,
            format!(
                "neither end was busy (server {:.0}% of one core, generator {:.0}%): the round trip, {service_mean_us:.1} µs on average against {exec_us:.1} µs of execution, sets the pace; raise -c or -P",
                cpu * 100.0,
                busiest * 100.0
            ),
        ),
        _ => said(
            Bottleneck::NetworkKernel,
            format!(
                "the generator was {:.0}% busy and the server's CPU was not reported: the round trip (or the server) sets the pace",
                busiest * 100.0
            ),
        ),
    }
}
