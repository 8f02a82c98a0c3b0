//! Who held a test back: the generator, the server, the host, the client's own queue,
//! or the network and kernel between them; or nothing, when the server kept up with room.
//!
//! The verdict is read off facts the report already has (the self-checks, generator
//! CPU, the four client-side times, the server's own CPU and execution time, and the
//! host's waits), in the order a fault would distort the others. An outage comes first:
//! while the server could not be reached, every other time measured the reconnect. Then
//! the server's own clock: its CPU and the time it spent executing are its own, and no
//! client fault makes them larger. Then a generator out of CPU, which makes every
//! client-side time late. Then a server that stopped answering (requests timed out or
//! left in flight at the end), which every time after it only reflects. Then the host's
//! waits for a CPU, ahead of a late generator
//! only when the lateness is small against the tail (`host_over_lateness`). Then
//! the server's share of the service time, and last the client's queue, which grows
//! behind any of the others.

use super::checks::CPU_SATURATION;
use crate::drive::ThreadCpu;
use crate::report::TestReport;
use crate::report::server::ServerView;
use crate::report::verdict::{Bottleneck, Judgement, SERVER_CPU_SATURATION, Verdict};

/// The share of the mean service time that the server's mean execution time must reach
/// for the server's work to be what the client waits on.
pub const EXECUTION_SHARE: f64 = 0.5;
/// The share of the response time at p50 or p99 that waiting for a free connection
/// must reach for the client's own queue to be what the client waits on.
pub const QUEUE_SHARE: f64 = 0.5;

/// The share of a test the server may be unreachable for before the outage is the
/// verdict (an outage of a second or more always is).
pub const OUTAGE_SHARE: f64 = 0.05;

/// Judges `test` from its checks, times and server view.
pub fn judge(test: &TestReport) -> Judgement {
    let mut judgement = judge_without_busy(test);
    judgement.server_busy = server_busy(test);
    judgement
}

/// The larger of the server's CPU share and its executing share, where reported.
fn server_busy(test: &TestReport) -> Option<f64> {
    let s = test.server.as_ref()?;
    match (s.cpu_utilisation, executing_share(s)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The share of the server's span it spent executing the test's commands, by its own
/// clock; `None` for an empty span.
fn executing_share(s: &ServerView) -> Option<f64> {
    (s.span_secs > 0.0).then(|| s.exec_usec_total() / 1e6 / s.span_secs)
}

/// The verdict, by the first rule that holds, in the order a fault would distort the
/// others (see the module's doc).
fn judge_without_busy(test: &TestReport) -> Judgement {
    let facts = Facts::of(test);
    outage(test)
        .or_else(|| server_clock(&facts))
        .or_else(|| generator_busy(&facts))
        .or_else(|| stalled(test))
        .or_else(|| host_over_lateness(test, &facts))
        .or_else(|| generator_late(test, &facts))
        .or_else(|| super::host::verdict(test, facts.execution_p99_us))
        .or_else(|| server_share(&facts))
        .or_else(|| client_queue(test, &facts))
        .unwrap_or_else(|| network_kernel(test, &facts))
}

/// What the rules read of a test, taken once.
struct Facts {
    /// An open loop (it had a target rate).
    open: bool,
    /// The busiest generator thread's busy fraction.
    busiest: f64,
    /// The mean service time, µs (0 when not reported).
    service_mean_us: f64,
    /// The server's share of one core.
    server_cpu: Option<f64>,
    /// The server's mean execution time over all the test's commands, weighted by
    /// calls, µs.
    execution_us: Option<f64>,
    /// The share of the test the server spent executing commands.
    executing: Option<f64>,
    /// The server's execution time at p99, µs (the bound of its histogram's bucket), the
    /// largest over the test's commands.
    execution_p99_us: Option<u64>,
}

impl Facts {
    /// Reads them off `test`.
    fn of(test: &TestReport) -> Self {
        let server = test.server.as_ref();
        let execution_us = server.and_then(|s| {
            let calls: f64 = s
                .commands
                .iter()
                .filter(|c| c.mean_exec_usec.is_some())
                .map(|c| c.calls as f64)
                .sum();
            (calls > 0.0).then(|| s.exec_usec_total() / calls)
        });
        Facts {
            open: test.target_rate_per_sec.is_some(),
            busiest: test
                .generator_cpu
                .iter()
                .map(ThreadCpu::busy_fraction)
                .fold(0.0, f64::max),
            service_mean_us: test.latency.get("service").map_or(0.0, |l| l.mean_ns / 1e3),
            server_cpu: server.and_then(|s| s.cpu_utilisation),
            execution_us,
            executing: server.and_then(executing_share),
            execution_p99_us: server.and_then(|s| {
                s.commands
                    .iter()
                    .filter_map(|c| Some(c.exec_usec_at_most?.p99))
                    .max()
            }),
        }
    }
}

/// `verdict`, because of `because`; the server's busy share is added by [`judge`].
fn said(verdict: Bottleneck, because: String) -> Judgement {
    Judgement {
        verdict,
        because,
        server_busy: None,
    }
}

/// Whether the check `name` failed.
fn failed(test: &TestReport, name: &str) -> bool {
    test.checks
        .iter()
        .any(|c| c.name == name && c.verdict == Verdict::Fail)
}

/// The server's own clock: its CPU near one core, or the share of the test it spent
/// executing commands. A command that waits (DEBUG SLEEP, a blocking script) holds a
/// single-threaded server without using its CPU.
fn server_clock(f: &Facts) -> Option<Judgement> {
    if let Some(cpu) = f.server_cpu.filter(|&c| c >= SERVER_CPU_SATURATION) {
        return Some(said(
            Bottleneck::Server,
            format!("the server used {:.0}% of one core", cpu * 100.0),
        ));
    }
    let share = f.executing.filter(|&e| e >= SERVER_CPU_SATURATION)?;
    Some(said(
        Bottleneck::Server,
        format!(
            "the server spent {:.0}% of the test executing its commands",
            share * 100.0
        ),
    ))
}

/// The generator: a thread out of CPU.
fn generator_busy(f: &Facts) -> Option<Judgement> {
    (f.busiest >= CPU_SATURATION).then(|| {
        said(
            Bottleneck::Generator,
            format!(
                "the busiest generator thread was {:.0}% busy; add --threads",
                f.busiest * 100.0
            ),
        )
    })
}

/// The host, ahead of a late generator when the lateness is small against the tail the
/// host's waits made: a generator a few tens of µs late moves a p50 of tens of µs (and
/// fails `schedule_lag`), not a p99 of milliseconds.
fn host_over_lateness(test: &TestReport, f: &Facts) -> Option<Judgement> {
    let lag_p99 = test.latency.get("lag")?.p99_ns;
    let response_p99 = test.response()?.p99_ns;
    if LATENESS_AGAINST_TAIL * lag_p99 > response_p99 {
        return None;
    }
    super::host::verdict(test, f.execution_p99_us)
}

/// How many times the generator's lag p99 the response p99 must be for the host's waits,
/// not the lateness, to be the tail's cause.
const LATENESS_AGAINST_TAIL: u64 = 4;

/// The generator (open loop): its lateness moved the percentiles.
fn generator_late(test: &TestReport, f: &Facts) -> Option<Judgement> {
    (f.open && failed(test, "schedule_lag")).then(|| {
        said(
            Bottleneck::Generator,
            format!(
                "the generator's lateness moved the response percentiles (see schedule_lag){}",
                super::host::generator_waits(test).unwrap_or_default()
            ),
        )
    })
}

/// The server's share: its mean execution time is most of the mean service time.
fn server_share(f: &Facts) -> Option<Judgement> {
    let service_mean_us = f.service_mean_us;
    let exec_us = f
        .execution_us
        .filter(|&e| service_mean_us > 0.0 && e >= EXECUTION_SHARE * service_mean_us)?;
    Some(said(
        Bottleneck::Server,
        format!(
            "the server's mean execution time, {exec_us:.1} µs, is {:.0}% of the mean service time",
            100.0 * exec_us / service_mean_us
        ),
    ))
}

/// The client's queue (open loop): waiting for a free connection is most of the
/// response time at p50 or p99, or requests were never sent.
fn client_queue(test: &TestReport, f: &Facts) -> Option<Judgement> {
    if !f.open {
        return None;
    }
    let (r, w) = (
        test.latency.get("response")?,
        test.latency.get("queue_wait")?,
    );
    let share = |w: u64, r: u64| if r == 0 { 0.0 } else { w as f64 / r as f64 };
    let (at_p50, at_p99) = (share(w.p50_ns, r.p50_ns), share(w.p99_ns, r.p99_ns));
    if at_p50.max(at_p99) < QUEUE_SHARE && test.counts.not_sent == 0 {
        return None;
    }
    Some(said(
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
    ))
}

/// An outage: the server could not be reached for a part of the test that matters, at
/// least [`OUTAGE_SHARE`] of it or one reconnect backoff (a second).
fn outage(test: &TestReport) -> Option<Judgement> {
    let lost: f64 = test.outages.iter().map(|o| o.length_secs).sum();
    let share = if test.measured_secs > 0.0 {
        lost / test.measured_secs
    } else {
        0.0
    };
    if test.outages.is_empty() || (share < OUTAGE_SHARE && lost < 1.0) {
        return None;
    }
    let n = test.outages.len() + test.outages_left_out as usize;
    Some(said(
        Bottleneck::Outage,
        format!(
            "the server could not be reached for {lost:.2} s in {n} outage{} ({:.0}% of the test){}",
            if n == 1 { "" } else { "s" },
            share * 100.0,
            if test.outages.iter().any(|o| o.until_end) {
                ", still at the end"
            } else {
                ""
            }
        ),
    ))
}

/// A server that stopped answering while it could be reached (frozen, stalled in a
/// command, or losing requests): the `unanswered` check failed. After a busy generator,
/// which reads replies late enough to time them out itself.
fn stalled(test: &TestReport) -> Option<Judgement> {
    if !failed(test, "unanswered") {
        return None;
    }
    let c = &test.counts;
    let mut parts = Vec::new();
    if c.timeouts > 0 {
        parts.push(format!("{} timed out", c.timeouts));
    }
    if c.in_flight_at_end > 0 {
        parts.push(format!(
            "{} were still in flight when the run gave up, the oldest written {:.2} s before",
            c.in_flight_at_end,
            c.longest_unanswered_ns as f64 / 1e9
        ));
    }
    Some(said(
        Bottleneck::Server,
        format!(
            "the server stopped answering while it could be reached: {}",
            parts.join(", and ")
        ),
    ))
}

/// What is left: the network and kernel between the ends, when an open loop missed its
/// rate or a closed loop went no faster with neither end busy; else nothing held the
/// test back.
fn network_kernel(test: &TestReport, f: &Facts) -> Judgement {
    if f.open {
        if failed(test, "achieved_rate") {
            return said(
                Bottleneck::NetworkKernel,
                "the rate was not reached, with neither the generator nor the server busy".into(),
            );
        }
        return said(
            Bottleneck::None,
            match f.server_cpu {
                Some(cpu) => format!("the server kept up, using {:.0}% of one core", cpu * 100.0),
                None => "the server kept up (its CPU was not reported)".into(),
            },
        );
    }
    // A closed loop always runs as fast as something lets it: with neither end busy,
    // that is the round trip.
    match (f.server_cpu, f.execution_us) {
        (Some(cpu), Some(exec_us)) => said(
            Bottleneck::NetworkKernel,
            format!(
                "neither end was busy (server {:.0}% of one core, generator {:.0}%): the round trip, {:.1} µs on average against {exec_us:.1} µs of execution, sets the pace; raise -c or -P",
                cpu * 100.0,
                f.busiest * 100.0,
                f.service_mean_us
            ),
        ),
        _ => said(
            Bottleneck::NetworkKernel,
            format!(
                "the generator was {:.0}% busy and the server's CPU was not reported: the round trip (or the server) sets the pace",
                f.busiest * 100.0
            ),
        ),
    }
}
