//! Who held a test back: the generator, the server, the host, the client's own queue,
//! or the network and kernel between them; or nothing, when the tail sits at the floor.
//!
//! First what distorts every other figure, in order: an outage (while the server could
//! not be reached, every time measured the reconnect); the server's own clock (its CPU
//! or its time executing near one core: saturated, and no client fault makes them
//! larger); a generator thread out of CPU, which makes every client-side time late; a
//! server that stopped answering (requests timed out or left in flight at the end),
//! which every time after it only reflects. Then the tail: the replies over the
//! objective's bound (or the response p99) attributed to their causes
//! (`super::tail`), and the cause that carries the most named with its share and
//! figure. Where the tail names nothing, an open loop whose generator failed one of its
//! own checks, or whose lateness carries a share of the tail, names the generator (or
//! the host, when the generator's threads waited for a CPU); `none` only when the tail
//! sits at the floor without that. A closed loop, which always runs as
//! fast as something lets it, takes from the tail only a server's stalls and the host's
//! waits, and is otherwise read as before: the server's share of the service time, else
//! the round trip.

use super::checks::{CPU_SATURATION, LAG_MOVE_NS};
use crate::drive::ThreadCpu;
use crate::record::Metric;
use crate::report::TestReport;
use crate::report::server::ServerView;
use crate::report::tail::{Cause, TailCauses};
use crate::report::verdict::{Bottleneck, Judgement, Verdict};

/// The server's share of one core at which a single-threaded server is saturated.
pub const SERVER_CPU_SATURATION: f64 = 0.9;
/// The share of the mean service time that the server's mean execution time must reach
/// for the server's work to be what the client waits on.
pub const EXECUTION_SHARE: f64 = 0.5;
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
    let tail = tail_of(test);
    outage(test)
        .or_else(|| server_clock(&facts))
        .or_else(|| generator_busy(&facts))
        .or_else(|| stalled(test))
        .or_else(|| tail_named(test, tail.as_ref(), facts.open))
        .or_else(|| never_sent(test, &facts))
        .or_else(|| generator_touched(test, tail.as_ref(), &facts))
        .or_else(|| (!facts.open).then(|| server_share(&facts)).flatten())
        .unwrap_or_else(|| network_kernel(test, &facts, tail.as_ref()))
}

/// The test's tail attribution: the one its report holds (placed in time, with the
/// host), else one from its whole histograms over the response p99 (a merged report, or
/// one written before attributions were kept).
fn tail_of(test: &TestReport) -> Option<TailCauses> {
    if let Some(t) = &test.tail {
        return Some(t.clone());
    }
    let response = test.response()?.histogram()?;
    let bound = super::tail::bound(&response, &[])?;
    super::tail::attribute(test, &bound, None).map(|(t, _)| t)
}

/// The cause that carries the tail, when the tail names one (open loop); a closed loop
/// takes only a server's stalls and the host's waits from it.
fn tail_named(test: &TestReport, tail: Option<&TailCauses>, open: bool) -> Option<Judgement> {
    let tail = tail?;
    let lead = super::tail::leading(tail)?.cause;
    if !open && !matches!(lead, Cause::ServerStall | Cause::Host) {
        return None;
    }
    let (verdict, because) = super::tail::words::named(test, tail)?;
    Some(said(verdict, because))
}

/// The generator's own checks: a run that failed one was paced by the generator, not
/// only by the server.
pub const GENERATOR_CHECKS: [&str; 3] = ["schedule_lag", "generator_cpu", "poisson_fit"];
/// The share of the replies over the bound the generator's lateness (its own, or its
/// threads' waits for a CPU) must carry, with a lag p99 over the schedule-lag check's
/// [`LAG_MOVE_NS`], for the tail not to be the floor's.
pub const LAG_SHARE: f64 = 0.05;

/// The generator or the host, where the tail names nothing (it sits at the floor, or
/// its parts only added up) but the generator touched the run: one of its own checks
/// failed, or its lateness carries [`LAG_SHARE`] of the tail with a lag p99 over
/// [`LAG_MOVE_NS`]. A loaded host raises the floor with the tail, so "none" there would
/// hide the run's own cause. The host when the generator's threads waited for a CPU
/// (by the host's figures, the tail's, or a `generator_cpu` failed on waits rather than
/// on its own work), else the generator.
fn generator_touched(test: &TestReport, tail: Option<&TailCauses>, f: &Facts) -> Option<Judgement> {
    if !f.open {
        return None;
    }
    let failed_checks: Vec<&str> = GENERATOR_CHECKS
        .into_iter()
        .filter(|n| failed(test, n))
        .collect();
    let lag_p99 = test.latency.get(&Metric::Lag).map_or(0, |l| l.p99_ns);
    let waited_in_tail = tail.map_or(0, |t| {
        t.host_parts
            .iter()
            .filter(|(p, _)| p == "generator")
            .map(|(_, n)| *n)
            .sum()
    });
    let lag_share = tail.map_or(0.0, |t| {
        t.share(Cause::Generator) + waited_in_tail as f64 / t.replies.max(1) as f64
    });
    let lag_carries = lag_share >= LAG_SHARE && lag_p99 > LAG_MOVE_NS;
    if failed_checks.is_empty() && !lag_carries {
        return None;
    }
    let mut why = Vec::new();
    if !failed_checks.is_empty() {
        why.push(format!("{} failed", failed_checks.join(", ")));
    }
    if lag_carries {
        why.push(format!(
            "its lateness carries {:.0}% of the replies over the tail's bound",
            lag_share * 100.0
        ));
    }
    let response_p99 = test.response().map_or(0, |l| l.p99_ns);
    let figures = format!(
        "lag p99 {:.3} ms beside a response p99 of {:.3} ms",
        lag_p99 as f64 / 1e6,
        response_p99 as f64 / 1e6
    );
    let waits = super::host::generator_waits(test);
    let host = waits.is_some()
        || waited_in_tail > 0
        || (failed(test, "generator_cpu") && f.busiest < CPU_SATURATION);
    Some(if host {
        said(
            Bottleneck::Host,
            format!(
                "the generator's threads waited for a CPU another task held ({}; {figures}){}; give tailrate a core of its own",
                why.join(", "),
                waits.unwrap_or_default()
            ),
        )
    } else {
        said(
            Bottleneck::Generator,
            format!(
                "the generator was late ({}; {figures}); use --pacing spin, add --threads, or lower the rate",
                why.join(", ")
            ),
        )
    })
}

/// Requests never sent (open loop): they found every connection at its cap and the
/// client-side backlog full.
fn never_sent(test: &TestReport, f: &Facts) -> Option<Judgement> {
    (f.open && test.counts.not_sent > 0).then(|| {
        said(
            Bottleneck::ClientQueue,
            format!(
                "{} requests were never sent: every connection was at --max-inflight and the client-side backlog full; raise -c, --max-inflight or --max-backlog",
                test.counts.not_sent
            ),
        )
    })
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
            service_mean_us: test
                .latency
                .get(&Metric::Service)
                .map_or(0.0, |l| l.mean_ns / 1e3),
            server_cpu: server.and_then(|s| s.cpu_utilisation),
            execution_us,
            executing: server.and_then(executing_share),
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
/// test back: its tail sits at the floor (or no part of it alone was over the bound).
fn network_kernel(test: &TestReport, f: &Facts, tail: Option<&TailCauses>) -> Judgement {
    if f.open {
        if failed(test, "achieved_rate") {
            return said(
                Bottleneck::NetworkKernel,
                "the rate was not reached, with neither the generator nor the server busy".into(),
            );
        }
        return said(
            Bottleneck::None,
            match tail {
                Some(t) if t.replies == 0 || super::tail::at_floor(t) => {
                    super::tail::words::floor(t)
                }
                Some(t) => format!(
                    "no part of the replies over {} ms alone (lag, queue wait, service) was over it: they added up",
                    t.over_ns as f64 / 1e6
                ),
                None => "no reply to judge the tail on".into(),
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
