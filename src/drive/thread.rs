//! One generator thread: a current-thread tokio runtime running its connections'
//! loops, the open-loop scheduler and the interval tick over one shared [`Ctx`], built
//! here from the thread's plan; and what the thread reports when it ends. The gate that
//! starts every thread at the same instant is `gate.rs`'s.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::BATCH;
use super::arrivals::Arrivals;
use super::conn;
use super::ctx::{Ctx, Dial, ThreadPlan};
use super::dispatch::Dispatch;
use super::gate::StartGate;
use super::outcome::{DriveError, Interval, SendCounts, ThreadCpu, ThreadOutcome};
use super::plan::{Mode, Stop};
use super::refresh::refresh_loop;
use super::route::Cluster;
use super::schedule::SpinMeter;
use super::scheduler::scheduler_loop;
use super::shared::Shared;
use super::window::{IntervalClock, Latest, SendTimes};
use crate::net::Connection;
use crate::record::Recorder;
use crate::workload::{Sampler, Test};

/// How long in-flight requests may still be answered after the schedule ends, when no
/// `--timeout` is set.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How long in-flight requests may still be answered after Ctrl+C.
const CANCEL_GRACE: Duration = Duration::from_millis(250);
/// Shortest window the Poisson check counts sends in: far longer than the generator's
/// timing jitter, so late wake-ups and batched writes barely move a count.
const SEND_WINDOW_MIN: Duration = Duration::from_millis(10);
/// Sends a window should hold on average for the counts to be informative.
const SEND_WINDOW_MEAN: f64 = 20.0;

/// Runs one thread's share of the test, its open-loop requests taken from `arrivals`;
/// blocks until it ends.
#[expect(
    clippy::too_many_arguments,
    reason = "the thread's whole inputs, passed once"
)]
pub(crate) fn thread_main(
    plan: ThreadPlan,
    test: &Test,
    sampler: Sampler,
    arrivals: Option<Arrivals>,
    dial: Dial,
    shared: Arc<Shared>,
    gate: Arc<StartGate>,
    tx: Sender<Interval>,
) -> Result<ThreadOutcome, DriveError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(DriveError::Runtime)?;
    let local = tokio::task::LocalSet::new();
    let test = test.clone();
    local.block_on(&runtime, async move {
        // Against a cluster each client has a connection to every master: slot k * nodes + n.
        let endpoints: Vec<_> = match &plan.cluster {
            Some(map) => (0..map.nodes.len())
                .map(|n| map.endpoint(n, &dial.endpoint))
                .collect(),
            None => vec![dial.endpoint.clone()],
        };
        // Against a cluster each client also keeps places for masters learned during the
        // run (`Topology::capacity`); their connections open when they are learned.
        let places = plan.topology.as_ref().map_or(1, |t| t.capacity);
        let mut conns = Vec::with_capacity(plan.connections * endpoints.len());
        let mut failure = None;
        let mut interrupted = false;
        for (client, node) in
            (0..plan.connections).flat_map(|c| (0..endpoints.len()).map(move |n| (c, n)))
        {
            let slot = client * places + node;
            // Ctrl+C ends a connect or handshake that is waiting out --connect-timeout.
            let opening = dial.open(&endpoints[node]);
            let Some(opened) = shared.cancel.or_cancelled(opening).await else {
                interrupted = true;
                break;
            };
            match opened {
                Ok(c) => conns.push((slot, c)),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        // An interrupted thread keeps the run from starting, as a failed one does, but
        // it is no failure: the run reports it measured nothing and was interrupted.
        let start = gate.arrive(failure.is_none() && !interrupted);
        if let Some(e) = failure {
            return Err(DriveError::Connect(e));
        }
        let Some(start) = start else {
            return Ok(ThreadOutcome::default());
        };
        let thread = drive_thread(
            plan, test, sampler, arrivals, dial, shared, tx, conns, start,
        );
        Ok(thread.await)
    })
}

/// Runs the thread's tasks over the connections `conns` opened, from `start` until the
/// run ends, and reports what the thread measured.
#[expect(
    clippy::too_many_arguments,
    reason = "the thread's whole inputs, passed once"
)]
async fn drive_thread(
    plan: ThreadPlan,
    test: Test,
    sampler: Sampler,
    arrivals: Option<Arrivals>,
    dial: Dial,
    shared: Arc<Shared>,
    tx: Sender<Interval>,
    conns: Vec<(usize, Connection)>,
    start: Instant,
) -> ThreadOutcome {
    let connected: Vec<usize> = conns.iter().map(|(slot, _)| *slot).collect();
    let ctx = Rc::new(new_ctx(
        plan, test, sampler, arrivals, dial, shared, tx, &connected, start,
    ));
    let cpu_before = ThreadClock::now();

    let tick = tokio::task::spawn_local(tick_loop(ctx.clone()));
    for (slot, conn) in conns {
        conn::spawn(&ctx, slot, Some(conn));
    }
    let refresh = ctx
        .cluster
        .is_some()
        .then(|| tokio::task::spawn_local(refresh_loop(ctx.clone())));
    if let Mode::Open { pacing, .. } = ctx.plan.run.mode {
        tokio::task::spawn_local(scheduler_loop(ctx.clone(), pacing));
    }

    let cancel_seen = wait_for_loops(&ctx).await;
    tick.abort();
    if let Some(refresh) = refresh {
        refresh.abort();
    }
    ctx.stop_connections().await;
    let ended = Instant::now();
    ctx.end_outages(ended);
    finish(&ctx, cancel_seen, ended, cpu_before)
}

/// The context the thread's tasks share, for its share `plan` of the run starting at
/// `start`, whose connections in places `connected` are open.
#[expect(
    clippy::too_many_arguments,
    reason = "the thread's whole inputs, passed once"
)]
fn new_ctx(
    plan: ThreadPlan,
    test: Test,
    sampler: Sampler,
    arrivals: Option<Arrivals>,
    dial: Dial,
    shared: Arc<Shared>,
    tx: Sender<Interval>,
    connected: &[usize],
    start: Instant,
) -> Ctx {
    let is_open = plan.is_open();
    let measure_from = if is_open {
        start + plan.run.warmup
    } else {
        start
    };
    let end = match plan.run.stop {
        Stop::After(d) => Some(measure_from + d),
        Stop::Requests(_) => None,
    };
    let places = plan.topology.as_ref().map_or(1, |t| t.capacity);
    let n_connections = plan.connections * places;
    let n_commands = test.commands.len();
    let max_backlog = match &plan.run.mode {
        Mode::Open { max_backlog, .. } => *max_backlog,
        Mode::Closed { .. } => 0,
    };
    let cluster = match (&plan.cluster, &plan.topology) {
        (Some(map), Some(topology)) => Some(Cluster::new(
            map,
            topology.clone(),
            &dial.endpoint,
            plan.connections,
        )),
        _ => None,
    };
    // An open loop's source, for a run with an end.
    let mut arrivals = arrivals.filter(|_| end.is_some());
    let next_due = arrivals
        .as_mut()
        .zip(end)
        .and_then(|(arrivals, end)| arrivals.first_due(start, end));
    // A replayed command waits for its own connection, as a closed loop's does.
    let keep_pending = !is_open || arrivals.as_ref().is_some_and(Arrivals::is_trace);
    let nodes = cluster.as_ref().map_or(1, Cluster::len);
    let intervals = interval_clock(&plan, &shared, measure_from, end);
    let offer_first_send = (!is_open).then(|| shared.clone());
    Ctx {
        sampler: RefCell::new(sampler),
        counts_hits: test.commands.iter().map(|c| c.counts_hits).collect(),
        dispatch: RefCell::new(dispatch_for(
            n_connections,
            nodes,
            connected.iter().copied(),
            plan.capacity(),
            max_backlog,
            keep_pending,
        )),
        arrivals: RefCell::new(arrivals),
        next_due: Cell::new(next_due),
        cluster,
        wake: (0..n_connections).map(|_| Rc::new(Notify::new())).collect(),
        woken: RefCell::new(Vec::with_capacity(n_connections)),
        rec: RefCell::new(Recorder::for_timing(n_commands, plan.timing)),
        intervals,
        tx,
        in_flight: Cell::new(0),
        last_reply: Latest::default(),
        last_send: SendTimes::new(offer_first_send),
        sending_done: Cell::new(false),
        live: Cell::new(connected.len()),
        finished: Notify::new(),
        connection_tasks: RefCell::new(Vec::new()),
        send_counts: RefCell::new(send_counts_for(&plan)),
        unrecorded_sent: RefCell::new(vec![0; n_commands]),
        down: RefCell::new(vec![None; n_connections]),
        connections: RefCell::default(),
        spin: SpinMeter::default(),
        plan,
        test,
        shared,
        dial,
        start,
        measure_from,
        end,
    }
}

/// The thread's interval clock. The measured window starts at the end of warm-up in open
/// loop (every thread computes the same instant), at the run's first send in closed loop
/// (offered by each thread's first write, see `SendTimes`).
fn interval_clock(
    plan: &ThreadPlan,
    shared: &Shared,
    measure_from: Instant,
    end: Option<Instant>,
) -> IntervalClock {
    let is_open = plan.is_open();
    let intervals = if is_open {
        shared.offer_window_start(measure_from);
        IntervalClock::new(BATCH, measure_from + BATCH)
    } else {
        // No reply of this thread comes before now: its first looks the start up.
        IntervalClock::new(BATCH, Instant::now())
    };
    if let (true, Some(end)) = (is_open, end) {
        intervals.end_window(measure_from, end);
    }
    intervals
}

/// Waits for every connection loop, but not past a hard deadline: a server that never
/// answers must not hold the run (what is still in flight is reported as such). Returns
/// when this thread saw the run cancelled, if it was.
async fn wait_for_loops(ctx: &Ctx) -> Option<Instant> {
    let is_open = ctx.plan.is_open();
    let mut cancel_seen: Option<Instant> = None;
    let grace = ctx.plan.run.timeout.unwrap_or(DRAIN_GRACE);
    loop {
        if ctx.live.get() == 0 {
            break;
        }
        let _ = tokio::time::timeout(Duration::from_millis(20), ctx.finished.notified()).await;
        let now = Instant::now();
        if ctx.shared.cancel.is_cancelled() {
            if cancel_seen.is_none() && is_open {
                // An open loop's window ends where this thread saw it stopped.
                ctx.end_window(now);
            }
            let seen = *cancel_seen.get_or_insert(now);
            ctx.sending_done.set(true);
            for w in &ctx.wake {
                w.notify_one();
            }
            // A second Ctrl+C (hurry) leaves the replies in flight unawaited.
            if now > seen + CANCEL_GRACE || ctx.shared.cancel.is_hurried() {
                break;
            }
        }
        if ctx.end.is_some_and(|end| now > end + grace) {
            break;
        }
    }
    cancel_seen
}

/// What the thread reports once its tasks ended at `ended`: requests never written are
/// "not sent", and the window's last interval is sent.
fn finish(
    ctx: &Ctx,
    cancel_seen: Option<Instant>,
    ended: Instant,
    cpu_before: ThreadClock,
) -> ThreadOutcome {
    {
        let mut rec = ctx.rec.borrow_mut();
        let redirected = ctx.dispatch.borrow_mut().abandon(&mut rec, ended);
        // A redirect never sent again is not sent, no longer in flight.
        ctx.in_flight
            .set(ctx.in_flight.get().saturating_sub(redirected));
    }
    let window_end = if ctx.plan.is_open() {
        Some(match (cancel_seen, ctx.end) {
            (Some(seen), Some(end)) => seen.min(end),
            (_, Some(end)) => end,
            (seen, None) => seen.unwrap_or(ended),
        })
    } else {
        // A timed closed loop lasted until its end (or its interrupt) even when replies
        // stopped before it (a server that froze): its rates are over the whole of it.
        let planned_end = ctx
            .end
            .map(|end| cancel_seen.map_or(end, |seen| seen.min(end)));
        match (ctx.last_reply.get(), planned_end) {
            (Some(reply), Some(end)) => Some(reply.max(end)),
            (reply, end) => reply.or(end),
        }
    };
    ctx.finish_intervals(window_end);

    let cpu = ThreadClock::now().since(cpu_before);
    ThreadOutcome {
        in_flight_at_end: ctx.in_flight.get(),
        window_end,
        last_send: ctx.last_send.last(),
        last_reply: ctx.last_reply.get(),
        cpu: ThreadCpu {
            cpu_secs: cpu.cpu.as_secs_f64(),
            idle_spin_secs: ctx.spin.idle.get().as_secs_f64(),
            wall_secs: ended.saturating_duration_since(ctx.start).as_secs_f64(),
            waited_secs: cpu.waited.map(|w| w.as_secs_f64()),
            runs: cpu.runs,
        },
        send_counts: std::mem::take(&mut *ctx.send_counts.borrow_mut()),
        unrecorded_sent: std::mem::take(&mut *ctx.unrecorded_sent.borrow_mut()),
        connections: std::mem::take(&mut *ctx.connections.borrow_mut()),
    }
}

/// The dispatcher of `n_connections` places over `nodes` nodes, of which only those in
/// `connected` have a connection at the start.
fn dispatch_for(
    n_connections: usize,
    nodes: usize,
    connected: impl Iterator<Item = usize>,
    cap: usize,
    max_backlog: usize,
    keep_pending: bool,
) -> Dispatch {
    let mut dispatch = Dispatch::new(n_connections, nodes, cap, max_backlog, keep_pending);
    let mut up = vec![false; n_connections];
    for slot in connected {
        up[slot] = true;
    }
    for (slot, _) in up.iter().enumerate().filter(|(_, up)| !**up) {
        dispatch.not_connected(slot);
    }
    dispatch
}

/// Windows long enough to hold ~20 sends of this thread, for the whole measured run.
fn send_counts_for(plan: &ThreadPlan) -> SendCounts {
    let (Some(rate_per_sec), Stop::After(duration)) = (plan.run.own_rate_per_sec(), plan.run.stop)
    else {
        return SendCounts::default();
    };
    let thread_rate = rate_per_sec / plan.threads() as f64;
    let window = SEND_WINDOW_MIN.max(Duration::from_secs_f64(
        SEND_WINDOW_MEAN / thread_rate.max(1e-9),
    ));
    let windows = (duration.as_secs_f64() / window.as_secs_f64()).ceil() as usize + 1;
    // Bounded: a very long, very slow run keeps at most a million windows.
    SendCounts {
        window,
        counts: vec![0; windows.min(1_000_000)],
    }
}

/// Moves the interval records on at each interval's end when no reply did (an idle or
/// stalled thread still sends every interval, on time), until the window's last.
async fn tick_loop(ctx: Rc<Ctx>) {
    while let Some(ends) = ctx.intervals.current_end() {
        if ctx.window_start().is_some() {
            tokio::time::sleep_until(ends.into()).await;
        } else {
            // A closed loop before its first send: no clock to wait on yet.
            tokio::time::sleep(ctx.intervals.length).await;
        }
        // The tick's own clock read, once per interval: it only decides when to move
        // on; what each interval holds is decided by the replies' times.
        ctx.advance_intervals(Instant::now());
    }
}

/// This thread's scheduling counters at one instant: its CPU clock, and from
/// `/proc/thread-self/schedstat` how long it waited on a run queue (runnable, another
/// task on its CPU or the CPU waking up) and how many times it was put on a CPU.
#[derive(Debug, Clone, Copy)]
struct ThreadClock {
    cpu: Duration,
    /// `None` where schedstat cannot be read (no procfs, a kernel without schedstats).
    waited: Option<Duration>,
    runs: Option<u64>,
}

impl ThreadClock {
    fn now() -> Self {
        let sched = std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|text| {
                let mut f = text.split_ascii_whitespace().map(|f| f.parse::<u64>().ok());
                Some((f.next()??, f.next()??, f.next()??))
            });
        ThreadClock {
            cpu: super::schedule::thread_cpu_time(),
            waited: sched.map(|(_, delay_ns, _)| Duration::from_nanos(delay_ns)),
            runs: sched.map(|(_, _, runs)| runs),
        }
    }

    /// What happened between `earlier` and this reading.
    fn since(self, earlier: ThreadClock) -> ThreadClock {
        ThreadClock {
            cpu: self.cpu.saturating_sub(earlier.cpu),
            waited: self
                .waited
                .zip(earlier.waited)
                .map(|(a, b)| a.saturating_sub(b)),
            runs: self
                .runs
                .zip(earlier.runs)
                .map(|(a, b)| a.saturating_sub(b)),
        }
    }
}
