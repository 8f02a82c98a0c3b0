//! Generator self-checks: did the run measure the server, or the generator?
//!
//! Each check has a verdict and a sentence saying what a failure means. They are
//! computed from a finished run's outcome and printed with every report; `--strict`
//! turns a failure into a non-zero exit (that decision is `main`'s).
//!
//! This file holds [`checks`], the open loop's list, with the two checks of the
//! generator's own pace (`achieved_rate`, `generator_cpu`); the others each have a file:
//! `lag` (the schedule lag), `arrivals` (the Poisson fit and the sends per window),
//! `steady` (the generator's pace through the run) and `counts` (accounting, error replies, the server's
//! count). Their public items are re-exported here.

mod arrivals;
mod counts;
mod lag;
mod steady;

pub use arrivals::{DISPERSION_Z, arrival_windows, dispersion_z, poisson_fit};
pub use counts::{
    MOST_FAILED_FRACTION, STALLED_NS, accounting, error_replies, server_count, unanswered,
};
pub use lag::{LAG_DISTORTION, LAG_MOVE_NS, LAG_QUANTILES, Objective};
pub use steady::{
    BACKLOG_GROWTH, GENERATOR_SHARE, STEADY_MIN_BATCHES, TREND_Z, server_backlog_grew, steady_state,
};

use crate::config::RunConfig;
use crate::drive::{ArrivalProcess, Mode, Pacing, RunOutcome, ThreadCpu};
use crate::record::CommandRecord;
use crate::report::verdict::{Check, Measure, Verdict};

/// Largest relative shortfall of the achieved rate against the target.
pub const RATE_TOLERANCE: f64 = 0.01;
/// A generator thread busier than this fraction of its wall time is saturated.
pub const CPU_SATURATION: f64 = 0.9;
/// The share of its wall time a generator thread may wait for a CPU (in waits longer
/// than an idle core's wake-up, [`WAKE_UP_US`]) before another task is taking its core.
/// A spinning thread also yields its core to tailrate's own collector and host meter:
/// docs/verdicts.md states the tolerance and the tests that hold the check to it.
pub const GENERATOR_WAIT_SHARE: f64 = 0.1;
/// The longest mean wait per run on a CPU that an idle CPU's wake-up explains, µs
/// (measured on this project's 2-core VMs: 0.3-3 µs on a quiet machine, per batch
/// rarely past 15 µs at low rates; 13-39 µs with a busy process on the same core).
pub const WAKE_UP_US: f64 = 8.0;

/// The self-checks of an open-loop run (closed loop has no schedule to keep).
pub fn checks(config: &RunConfig, outcome: &RunOutcome, total: &CommandRecord) -> Vec<Check> {
    let (
        Mode::Open {
            arrival, pacing, ..
        },
        Some(rate_per_sec),
    ) = (&config.plan.mode, config.plan.own_rate_per_sec())
    else {
        return Vec::new();
    };
    let (arrival, pacing) = (arrival.process(), *pacing);
    // A failure during an outage is the outage's: each check's meaning names it.
    let outage = outage_clause(&outcome.connections);
    let mut out = vec![
        achieved_rate(outcome, total, rate_per_sec, outage.as_deref()),
        lag::schedule_lag(total, &objectives(config), pacing, outage.as_deref()),
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

/// The run's objectives, as the lag check and the tail's attribution weigh them.
pub fn objectives(config: &RunConfig) -> Vec<Objective<'_>> {
    config
        .slos
        .iter()
        .map(|s| Objective {
            text: &s.text,
            quantile: s.quantile(),
            bound_ns: s.bound_ns,
        })
        .collect()
}

/// Whether every generator thread had the CPU it needed: busy under [`CPU_SATURATION`]
/// of its wall time, its idle spinning left out by the thread's own CPU clock (time on a
/// CPU only, so a thread kept off its core does not read idle); and not waiting for a CPU
/// [`GENERATOR_WAIT_SHARE`] of its wall time in waits longer than an idle core's wake-up
/// (another task took its core: the schedule slipped in each wait, whatever the thread's
/// own load). "cannot check" when no thread's clock was read.
fn generator_cpu(outcome: &RunOutcome, pacing: Pacing) -> Check {
    let name = "generator_cpu".to_string();
    let threads: Vec<&ThreadCpu> = outcome
        .thread_cpu
        .iter()
        .filter(|t| t.wall_secs > 0.0)
        .collect();
    let Some(busiest) = threads
        .iter()
        .map(|t| t.busy_fraction())
        .max_by(f64::total_cmp)
    else {
        return Check {
            name,
            verdict: Verdict::Skipped,
            detail: "no generator thread ran the workload: no CPU to read".into(),
            meaning: String::new(),
            measure: None,
        };
    };
    // The thread that waited longest for a CPU, with how long each wait was on average.
    let waited = threads
        .iter()
        .filter_map(|t| Some((t.waited_fraction()?, t.wait_per_run_us()?, **t)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let saturated = busiest >= CPU_SATURATION;
    let crowded = waited
        .is_some_and(|(share, per_run, _)| share >= GENERATOR_WAIT_SHARE && per_run >= WAKE_UP_US);
    let waits = match waited {
        Some((share, per_run, t)) => format!(
            "; the thread that waited longest for a CPU waited {:.0} ms ({:.1}% of its time, {:.0} µs per run)",
            t.waited_secs.unwrap_or(0.0) * 1e3,
            share * 100.0,
            per_run
        ),
        None => "; its waits for a CPU are not known here".into(),
    };
    let meaning = match (saturated, waited) {
        (true, _) => "a generator thread ran out of CPU: the schedule slipped while it worked; add --threads or lower the rate".to_string(),
        (false, Some((share, per_run, t))) => format!(
            "another task took the generator's core: a thread waited {:.0} ms for a CPU ({:.0}% of its time, {:.0} µs each time), and its schedule slipped in each wait whatever its own load; give tailrate a core of its own (taskset), or stop what shares it",
            t.waited_secs.unwrap_or(0.0) * 1e3,
            share * 100.0,
            per_run
        ),
        (false, None) => String::new(),
    };
    let spinning = pacing != Pacing::Sleep;
    Check {
        name,
        verdict: if saturated || crowded {
            Verdict::Fail
        } else {
            Verdict::Pass
        },
        detail: format!(
            "busiest generator thread {:.0}% busy on its CPU{}{waits}; bound: under {:.0}% busy, and under {:.0}% of its time waiting for a CPU in waits over {WAKE_UP_US:.0} µs",
            busiest * 100.0,
            if spinning {
                " (idle spinning excluded)"
            } else {
                ""
            },
            CPU_SATURATION * 100.0,
            GENERATOR_WAIT_SHARE * 100.0,
        ),
        meaning,
        measure: if saturated || !crowded {
            Measure::of(busiest, CPU_SATURATION, "fraction")
        } else {
            Measure::of(
                waited.map_or(0.0, |w| w.0),
                GENERATOR_WAIT_SHARE,
                "fraction",
            )
        },
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
