//! The driver: one loop per connection, configured by data, for closed and open loop.
//!
//! [`run`] spreads connections over OS threads, started together by one gate (`gate`),
//! each a single-threaded tokio runtime (`thread`) whose tasks share one per-thread
//! context (`ctx`). Every connection runs the
//! same loop (`conn`), fed by the `feed` chosen when it starts: in closed loop it claims
//! up to `-P` requests, writes them in one batch and waits for every reply; with
//! `--workers`, logical clients share each closed-loop connection and their requests are
//! batched by the policy in `batch`; in open loop a scheduler task per thread
//! (`scheduler`) turns the schedule into requests with computed intended times and hands
//! them to connections with room, or to a bounded backlog (`dispatch`); against a
//! cluster, requests go to a connection of their key's master (`route`), and a layout
//! that changes during the run is read again (`refresh`) and shared (`topology`). Replies are
//! taken in order (`inflight`, `reply`), and a request's times become the durations
//! recorded in one place (`request`), into the thread's interval [`Recorder`]. The
//! thread's interval clock (`window`) says which interval of the measured window those
//! records are for: a read past an interval's end, or the tick when none comes, hands
//! the interval to the caller.
//!
//! The context sits above the pieces it ties together (`dispatch`, `route`, `batch`,
//! `inflight`, `schedule`, `request`, `window`), which never import it; the tasks that
//! use it (`conn` with its `feed` and `reply`, `scheduler`, `thread`) sit above it.

mod arrivals;
mod batch;
mod cancel;
pub mod cap;
mod conn;
mod ctx;
mod dispatch;
mod feed;
mod gate;
mod inflight;
mod outcome;
pub mod plan;
mod refresh;
mod replay;
mod reply;
mod request;
mod route;
pub mod schedule;
mod scheduler;
mod shared;
mod thread;
mod topology;
pub mod trace;
mod window;

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

pub use cancel::Cancel;
pub use cap::{CapPacing, RateCap};
pub use outcome::{
    ConnectionEvents, DriveError, Interval, MAX_OUTAGES, Outage, RunOutcome, SendCounts, ThreadCpu,
};
pub use plan::{
    ArrivalSource, MAX_BACKLOG, MAX_CONNECTIONS, MAX_DEPTH, MAX_SHARDS, MAX_SLOTS,
    MAX_START_LATENESS, MAX_THREADS, Mode, Plan, Shard, Stop, Workers,
};
pub use replay::{Replay, ReplayOptions};
pub use schedule::{ArrivalProcess, MAX_RATE_PER_THREAD, Pacing};
pub use topology::{LayoutChange, LayoutHistory, MAX_LAYOUT_CHANGES};
pub use trace::{FeedClosed, TraceFeed, TraceSender, TraceSource};

use ctx::{Dial, ThreadPlan};
use gate::StartGate;
use outcome::ThreadOutcome;
use shared::Shared;
use topology::Topology;

use crate::net::cluster::ClusterMap;
use crate::record::Recorder;
use crate::workload::{Sampler, Test};

/// The length of a run's intervals: a quarter second in closed loop (whose runs are
/// often short); in open loop a tenth of the run, in whole [`BATCH`]es, from 100 ms to a
/// second, so that a sweep's 2 s step is twenty points over time, not two.
pub fn interval_length(plan: &Plan) -> Duration {
    if !plan.is_open_loop() {
        return Duration::from_millis(250);
    }
    match plan.stop {
        Stop::After(d) => {
            let batches = (d.as_nanos() / 10 / BATCH.as_nanos()).clamp(2, 20);
            BATCH * u32::try_from(batches).unwrap_or(20)
        }
        Stop::Requests(_) => Duration::from_secs(1),
    }
}

/// The names the generator's threads are given (`tailrate-gen-N`), by which the host
/// meter (and `top -H`) tells them from the rest.
pub const GENERATOR_THREAD: &str = "tailrate-gen";

/// How often a thread sends its records: the batches a percentile's interval is measured
/// from (the report's intervals are whole numbers of them). Short, so that a two-second
/// run has forty; each costs a thread a swap of its records and the collector a merge and
/// a pass over the histograms' buckets.
pub const BATCH: Duration = Duration::from_millis(50);

/// Hands this thread's core to whatever else is runnable there, as each piece of the
/// collector's and the host meter's work ends. Either may share a pinned generator's
/// core, which spins between sends and so is always runnable: a send then waits for one
/// piece (tens of µs), not for the whole of a batch's work (0.6 ms at 50k/s).
pub fn share_core() {
    std::thread::yield_now();
}

/// Runs one test as `plan` says; `on_interval` takes every interval of every thread as
/// the thread sends it (see [`Interval`]), and may give back a record of the run's shape
/// that it is done with (the interval's own, or one it kept), for the threads to record
/// into next rather than a fresh one.
pub fn run(
    plan: &Plan,
    cluster: Option<&Arc<ClusterMap>>,
    test: &Test,
    test_index: usize,
    cancel: &Cancel,
    on_interval: &mut dyn FnMut(Interval) -> Option<Recorder>,
) -> Result<RunOutcome, DriveError> {
    let threads = plan.threads.max(1);
    let shared = Arc::new(Shared::new(plan, cancel));
    let gate = Arc::new(StartGate::new(threads));
    let (tx, rx) = mpsc::channel::<Interval>();
    let topology = cluster.map(|map| Arc::new(Topology::new(map, room_for_masters(map))));
    // With --start-at the test starts at that instant (the wait is the gate's).
    let started_at = plan.start_at.unwrap_or_else(SystemTime::now);
    // The run's totals are the sum of its intervals: one recording path, added exactly.
    let mut totals = Recorder::new(test.commands.len());

    // Shared by the threads, which read it through their `ThreadPlan`.
    let shared_plan = Arc::new(plan.clone());
    let mut opened = Ok(None);
    let mut trace_read = Ok(());
    let results: Vec<Result<ThreadOutcome, DriveError>> = std::thread::scope(|scope| {
        let (feed, reader) =
            trace::start_reading(scope, plan.mode.trace().map(Arc::as_ref), threads, cancel);
        let mut handles = Vec::with_capacity(threads);
        for index in 0..threads {
            let thread_plan = ThreadPlan::new(
                shared_plan.clone(),
                index,
                cluster.cloned(),
                topology.clone(),
                test_index,
            );
            // The thread's source: its part of the trace, or its stream of the process.
            let arrivals = thread_plan.arrivals(feed.as_ref());
            let (shared, thread_gate, tx) = (shared.clone(), gate.clone(), tx.clone());
            let dial = Dial {
                endpoint: plan.endpoint.clone(),
                handshake: plan.handshake.clone(),
                connect_timeout: plan.connect_timeout,
                limits: plan.limits,
            };
            let sampler = Sampler::new(&plan.workload, thread_plan.seed);
            let spawned = std::thread::Builder::new()
                .name(format!("{GENERATOR_THREAD}-{index}"))
                .spawn_scoped(scope, move || {
                    let (plan, gate) = (thread_plan, thread_gate);
                    thread::thread_main(plan, test, sampler, arrivals, dial, shared, gate, tx)
                });
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(e) => {
                    gate.abandon();
                    return vec![Err(DriveError::Runtime(e))];
                }
            }
        }
        drop(tx);
        // Each thread holds its own end of the trace's channels; with this one gone, a
        // thread that ends releases the reader from waiting on it.
        drop(feed);
        // Every thread connects first; the run starts for all at once, or not at all.
        opened = gate.open_when_ready(plan.start_at, cancel);
        for item in rx.iter() {
            totals.add(&item.record);
            share_core();
            if let Some(spare) = on_interval(item) {
                // Two per thread: one being filled, one on its way here.
                shared.give_back(spare, 2 * threads);
            }
        }
        trace_read = reader.map_or(Ok(()), trace::Reader::finish);
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(DriveError::Runtime(std::io::Error::other(
                        "generator thread panicked",
                    )))
                })
            })
            .collect()
    });

    let mut outcomes = Vec::with_capacity(threads);
    for result in results {
        match result {
            Ok(outcome) => outcomes.push(outcome),
            // Ctrl+C while connecting: the run was asked to end before it began, and it
            // ends as interrupted with nothing measured, whatever a connect said first.
            Err(DriveError::Connect(_)) if cancel.is_cancelled() => {
                outcomes.push(ThreadOutcome::default());
            }
            Err(e) => return Err(e),
        }
    }
    let start_skew_ns = opened?;
    let mut stopped_early = shared.stopped_early();
    if let Err(e) = trace_read {
        stopped_early.get_or_insert(format!("the trace could not be read to its end: {e}"));
    }
    let mut outcome = RunOutcome::merge(
        outcomes,
        totals,
        shared.window_start(),
        plan.is_open_loop(),
        started_at,
        stopped_early,
        start_skew_ns,
    );
    outcome.layout = topology.map(|t| t.history());
    Ok(outcome)
}

/// Places kept per client for a cluster's masters: those of the starting layout, as
/// many again for replicas promoted in their place, and a few for masters added during
/// the run. A place costs memory only; its connections open when it is first used.
pub(crate) fn room_for_masters(map: &ClusterMap) -> usize {
    (2 * map.nodes.len() + 4).min(usize::from(u16::MAX) - 1)
}
