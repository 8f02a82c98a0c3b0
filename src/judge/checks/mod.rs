//! Generator self-checks: did the run measure the server, or the generator?
//!
//! Each check has a verdict and a sentence saying what a failure means. They are
//! computed from a finished run's outcome and printed with every report; `--strict`
//! turns a failure into a non-zero exit (that decision is `main`'s).
//!
//! This file holds [`checks`], the open loop's list, with the two checks of the
//! generator's own pace (`achieved_rate`, `generator_cpu`); the others each have a file:
//! `lag` (the schedule lag), `arrivals` (the Poisson fit and the sends per window),
//! `steady` (the steady state) and `counts` (accounting, error replies, the server's
//! count). Their public items are re-exported here.

mod arrivals;
mod counts;
mod lag;
mod steady;

pub use arrivals::{DISPERSION_Z, arrival_windows, dispersion_z, poisson_fit};
pub use counts::{
    MOST_FAILED_FRACTION, STALLED_NS, accounting, error_replies, server_count, unanswered,
};
pub use lag::{LAG_DISTORTION, LAG_QUANTILES};
pub use steady::{BACKLOG_GROWTH, STEADY_MIN_BATCHES, TREND_Z, steady_state};

use crate::config::RunConfig;
use crate::drive::{ArrivalProcess, Mode, Pacing, RunOutcome, ThreadCpu};
use crate::record::CommandRecord;
use crate::report::verdict::{Check, Measure, Verdict};
use crate::stats::confidence::Batch;

/// Largest relative shortfall of the achieved rate against the target.
pub const RATE_TOLERANCE: f64 = 0.01;
/// A generator thread busier than this fraction of its wall time is saturated.
pub const CPU_SATURATION: f64 = 0.9;

/// The self-checks of an open-loop run (closed loop has no schedule to keep).
/// `response_batches` are the run's response times cut in batches, in time order: the
/// lag check weighs a percentile's move against the interval they give it.
pub fn checks(
    config: &RunConfig,
    outcome: &RunOutcome,
    total: &CommandRecord,
    response_batches: &[Batch],
) -> Vec<Check> {
    let (
        Mode::Open {
            arrival, pacing, ..
        },
        Some(rate_per_sec),
    ) = (&config.plan.mode, config.plan.own_rate_per_sec())
    else {
        return Vec::new();
    };
    let (arrival, pacing) = (*arrival, *pacing);
    // A failure during an outage is the outage's: each check's meaning names it.
    let outage = outage_clause(&outcome.connections);
    let mut out = vec![
        achieved_rate(outcome, total, rate_per_sec, outage.as_deref()),
        lag::schedule_lag(total, response_batches, pacing, outage.as_deref()),
        generator_cpu(outcome, pacing),
    ];
    if arrival == ArrivalProcess::Poisson {
        let (counts, window) = arrivals::window_counts(outcome);
        out.push(poisson_fit(&counts, window, "", outage.as_deref()));
    }
    out
}

/// Whether the generator sent at the rate its schedule planned, within
/// [`RATE_TOLERANCE`], and sent every request; `rate_per_sec` is the target.
fn achieved_rate(
    outcome: &RunOutcome,
    total: &CommandRecord,
    rate_per_sec: f64,
    outage: Option<&str>,
) -> Check {
    // The generator is judged against the schedule it drew: a Poisson schedule's own
    // count over a short window differs from rate x window by chance (sqrt(n)), which is
    // no fault of the generator. `planned` is what the schedule asked for.
    let measured_secs = outcome.measured.as_secs_f64();
    let planned = if measured_secs > 0.0 {
        total.intended as f64 / measured_secs
    } else {
        rate_per_sec
    };
    let shortfall = 1.0 - outcome.achieved_rate_per_sec / planned;
    if measured_secs == 0.0 && total.intended == 0 {
        // Ended before its window began (Ctrl+C while a shard waited for --start-at, or
        // while connecting): the report is empty, and says so rather than "0 req/s".
        let how = match outcome.stopped_early.as_deref() {
            Some("interrupted") => " (interrupted)",
            _ => "",
        };
        return Check {
            name: "achieved_rate".into(),
            verdict: Verdict::Fail,
            detail: format!(
                "nothing measured: the run ended{how} before its measured window began; \
                 planned {rate_per_sec:.1} req/s"
            ),
            meaning: "no request was sent in the measured window: every figure of this test \
                      is empty, not a measurement of the server"
                .into(),
            measure: None,
        };
    }
    let within = shortfall <= RATE_TOLERANCE && total.not_sent == 0;
    Check {
        name: "achieved_rate".into(),
        verdict: if within { Verdict::Pass } else { Verdict::Fail },
        detail: format!(
            "sent {:.1} req/s against {:.1} planned by the schedule ({:+.2}%; target \
             {:.1}), {} not sent; bound: within {:.0}%",
            outcome.achieved_rate_per_sec,
            planned,
            -shortfall * 100.0,
            rate_per_sec,
            total.not_sent,
            RATE_TOLERANCE * 100.0
        ),
        meaning: achieved_meaning(total, outage),
        // The shortfall against the schedule (negative: ahead of it).
        measure: Measure::of(shortfall, RATE_TOLERANCE, "fraction"),
    }
}

/// What a failed `achieved_rate` means: the server saw less load than asked, and why
/// (requests never sent, an outage).
fn achieved_meaning(total: &CommandRecord, outage: Option<&str>) -> String {
    match (total.not_sent, outage) {
        (0, None) => {
            "the generator did not send at the target rate; the server saw less load than asked"
                .to_string()
        }
        (0, Some(outage)) => format!(
            "the generator did not send at the target rate: {outage}, and the requests due meanwhile were held back; the server saw less load than asked"
        ),
        (not_sent, outage) => format!(
            "{not_sent} of {} requests ({:.1}%) were never sent: they found every connection at --max-inflight and the client-side backlog (--max-backlog) full, or were still waiting at the end{}; the server saw less load than asked, and the latency percentiles count them at their age when the run ended (lower bounds)",
            total.intended,
            100.0 * not_sent as f64 / total.intended.max(1) as f64,
            outage.map(|o| format!(" ({o})")).unwrap_or_default()
        ),
    }
}

/// Whether every generator thread stayed under [`CPU_SATURATION`] of its wall time.
fn generator_cpu(outcome: &RunOutcome, pacing: Pacing) -> Check {
    let busiest = outcome
        .thread_cpu
        .iter()
        .map(ThreadCpu::busy_fraction)
        .fold(0.0, f64::max);
    let spinning = pacing != Pacing::Sleep;
    Check {
        name: "generator_cpu".into(),
        verdict: if busiest < CPU_SATURATION {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        detail: format!(
            "busiest generator thread {:.0}% busy{}; bound: under {:.0}%",
            busiest * 100.0,
            if spinning {
                " (idle spinning excluded)"
            } else {
                ""
            },
            CPU_SATURATION * 100.0
        ),
        meaning: "a generator thread ran out of CPU; add --threads or lower the rate".into(),
        measure: Measure::of(busiest, CPU_SATURATION, "fraction"),
    }
}

/// "the server was unreachable for 1.02 s from 1.21 s" (or "for 2.50 s in 3 outages, the
/// first from 1.21 s"), or `None` when it always was reachable.
fn outage_clause(events: &crate::drive::ConnectionEvents) -> Option<String> {
    let first = events.outages.first()?;
    let count = events.outages.len() as u64 + events.outages_left_out;
    let total = events.unreachable().as_secs_f64();
    let from = first.start.as_secs_f64();
    Some(if count == 1 {
        format!("the server was unreachable for {total:.2} s from {from:.2} s")
    } else {
        format!(
            "the server was unreachable for {total:.2} s in {count} outages, the first from {from:.2} s"
        )
    })
}
