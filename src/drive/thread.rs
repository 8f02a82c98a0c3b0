//! One generator thread: a current-thread tokio runtime running its connections'
//! loops, the open-loop scheduler and the interval tick over one shared [`Ctx`]; the
//! gate that starts every thread at the same instant; and what the thread reports when
//! it ends.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::Notify;

use super::conn::connection_loop;
use super::ctx::{Ctx, Dial, ThreadPlan};
use super::dispatch::Dispatch;
use super::outcome::{DriveError, Interval, SendCounts, ThreadCpu, ThreadOutcome};
use super::plan::{MAX_START_LATENESS, Mode, Stop};
use super::refresh::refresh_loop;
use super::route::Cluster;
use super::schedule::{Schedule, SpinMeter};
use super::scheduler::scheduler_loop;
use super::shared::Cancel;
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

/// Starts every thread at once: each reports whether it connected; the caller opens the
/// gate.
pub(crate) struct StartGate {
    state: Mutex<GateState>,
    changed: Condvar,
    threads: usize,
}

struct GateState {
    arrived: usize,
    failed: bool,
    start: Option<Instant>,
    opened: bool,
}

impl StartGate {
    pub(crate) fn new(threads: usize) -> Self {
        StartGate {
            state: Mutex::new(GateState {
                arrived: 0,
                failed: false,
                start: None,
                opened: false,
            }),
            changed: Condvar::new(),
            threads,
        }
    }

    /// A thread arrives; returns the common start, or `None` when some thread failed.
    fn arrive(&self, ok: bool) -> Option<Instant> {
        let Ok(mut state) = self.state.lock() else {
            return None;
        };
        state.arrived += 1;
        state.failed |= !ok;
        self.changed.notify_all();
        while !state.opened {
            state = match self.changed.wait(state) {
                Ok(s) => s,
                Err(_) => return None,
            };
        }
        state.start
    }

    /// Waits for every thread, then sets the start: a little ahead so all begin together,
    /// or at `start_at` by the wall clock (`--start-at`), waited for here. Returns how far
    /// after its start the run was let go, in nanoseconds (positive: late), with
    /// `start_at`; a run that would start more than [`MAX_START_LATENESS`] late, or is
    /// interrupted while it waits, lets every thread go with no start.
    pub(crate) fn open_when_ready(
        &self,
        start_at: Option<SystemTime>,
        cancel: &Cancel,
    ) -> Result<Option<i64>, DriveError> {
        {
            let Ok(mut state) = self.state.lock() else {
                return Ok(None);
            };
            while state.arrived < self.threads {
                state = match self.changed.wait(state) {
                    Ok(s) => s,
                    Err(_) => return Ok(None),
                };
            }
        }
        let (start, skew) = match start_at {
            None => (Some(Instant::now() + Duration::from_millis(2)), Ok(None)),
            Some(at) => match wall_clock_start(at, cancel) {
                Ok(Some((start, skew_ns))) => (Some(start), Ok(Some(skew_ns))),
                Ok(None) => (None, Ok(None)),
                Err(late) => (None, Err(late)),
            },
        };
        let Ok(mut state) = self.state.lock() else {
            return skew;
        };
        if !state.failed {
            state.start = start;
        }
        state.opened = true;
        self.changed.notify_all();
        skew
    }
}

/// The monotonic instant of `at` on the wall clock, slept up to (in slices, so Ctrl+C is
/// seen); `None` when interrupted first. The instant is mapped from the wall clock once,
/// just before it, so the host's clock steps while waiting do not move it. Also returns
/// how late the threads were let go (the last sleep's overshoot, or the lateness of a
/// start already past), in nanoseconds.
fn wall_clock_start(at: SystemTime, cancel: &Cancel) -> Result<Option<(Instant, i64)>, DriveError> {
    const SLICE: Duration = Duration::from_millis(20);
    loop {
        if cancel.is_cancelled() {
            return Ok(None);
        }
        let now = Instant::now();
        match at.duration_since(SystemTime::now()) {
            Ok(ahead) if ahead > SLICE => std::thread::sleep((ahead - SLICE).min(SLICE)),
            Ok(ahead) => {
                let start = now + ahead;
                std::thread::sleep(ahead);
                let skew = Instant::now().saturating_duration_since(start);
                return Ok(Some((
                    start,
                    i64::try_from(skew.as_nanos()).unwrap_or(i64::MAX),
                )));
            }
            Err(past) => {
                let late = past.duration();
                if late > MAX_START_LATENESS {
                    return Err(DriveError::LateStart { late });
                }
                let start = now.checked_sub(late).unwrap_or(now);
                return Ok(Some((
                    start,
                    i64::try_from(late.as_nanos()).unwrap_or(i64::MAX),
                )));
            }
        }
    }
}

/// Runs one thread's share of the test; blocks until it ends.
pub(crate) fn thread_main(
    plan: ThreadPlan,
    test: &Test,
    sampler: Sampler,
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
        Ok(drive_thread(plan, test, sampler, dial, shared, tx, conns, start).await)
    })
}

#[expect(
    clippy::too_many_arguments,
    reason = "the thread's whole inputs, passed once"
)]
async fn drive_thread(
    plan: ThreadPlan,
    test: Test,
    sampler: Sampler,
    dial: Dial,
    shared: Arc<Shared>,
    tx: Sender<Interval>,
    conns: Vec<(usize, Connection)>,
    start: Instant,
) -> ThreadOutcome {
    let is_open = matches!(plan.mode, Mode::Open { .. });
    let measure_from = if is_open { start + plan.warmup } else { start };
    let end = match plan.stop {
        Stop::After(d) => Some(measure_from + d),
        Stop::Requests(_) => None,
    };
    let places = plan.topology.as_ref().map_or(1, |t| t.capacity);
    let n_connections = plan.connections * places;
    let n_commands = test.commands.len();
    let max_backlog = match &plan.mode {
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
    let schedule = match plan.mode {
        Mode::Open {
            rate_per_sec,
            arrival,
            ..
        } if end.is_some() => {
            // The rate is this shard's share; the schedule is cut from the whole plan's,
            // as stream `shard.stream(index)` of `count * threads`.
            let streams = plan.shard.count.max(1) as usize * plan.threads;
            Some(Schedule::new(
                arrival,
                rate_per_sec * f64::from(plan.shard.count.max(1)),
                plan.shard.stream(plan.index),
                streams,
                plan.seed,
            ))
        }
        _ => None,
    };
    let next_due = match (&schedule, end) {
        (Some(s), Some(end)) => Some(start + s.peek()).filter(|&first| first < end),
        _ => None,
    };
    let nodes = cluster.as_ref().map_or(1, Cluster::len);
    // The measured window starts at the end of warm-up in open loop (every thread
    // computes the same instant), at the run's first send in closed loop (offered by
    // each thread's first write, see `SendTimes`).
    let intervals = if is_open {
        shared.offer_window_start(measure_from);
        IntervalClock::new(plan.interval, measure_from + plan.interval)
    } else {
        // No reply of this thread comes before now: its first looks the start up.
        IntervalClock::new(plan.interval, Instant::now())
    };
    if let (true, Some(end)) = (is_open, end) {
        intervals.end_window(measure_from, end);
    }
    let offer_first_send = (!is_open).then(|| shared.clone());
    let ctx = Rc::new(Ctx {
        sampler: RefCell::new(sampler),
        counts_hits: test.commands.iter().map(|c| c.counts_hits).collect(),
        dispatch: RefCell::new(dispatch_for(
            n_connections,
            nodes,
            conns.iter().map(|(slot, _)| *slot),
            plan.capacity(),
            max_backlog,
            !is_open,
        )),
        schedule: RefCell::new(schedule),
        next_due: Cell::new(next_due),
        cluster,
        wake: (0..n_connections).map(|_| Rc::new(Notify::new())).collect(),
        woken: RefCell::new(Vec::with_capacity(n_connections)),
        rec: RefCell::new(Recorder::for_timing(n_commands, plan.mode.timing())),
        intervals,
        tx,
        in_flight: Cell::new(0),
        last_reply: Latest::default(),
        last_send: SendTimes::new(offer_first_send),
        sending_done: Cell::new(false),
        live: Cell::new(conns.len()),
        finished: Notify::new(),
        send_counts: RefCell::new(send_counts_for(&plan)),
        warmup_sent: RefCell::new(vec![0; n_commands]),
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
    });
    let cpu_before = thread_cpu_secs();

    let tick = tokio::task::spawn_local(tick_loop(ctx.clone()));
    for (slot, conn) in conns {
        tokio::task::spawn_local(connection_loop(ctx.clone(), slot, Some(conn)));
    }
    let refresh = ctx
        .cluster
        .is_some()
        .then(|| tokio::task::spawn_local(refresh_loop(ctx.clone())));
    if let Mode::Open { pacing, .. } = ctx.plan.mode {
        tokio::task::spawn_local(scheduler_loop(ctx.clone(), pacing));
    }

    // Wait for every connection loop, but not past a hard deadline: a server that never
    // answers must not hold the run (what is still in flight is reported as such).
    let mut cancel_seen: Option<Instant> = None;
    let grace = ctx.plan.timeout.unwrap_or(DRAIN_GRACE);
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
    tick.abort();
    if let Some(refresh) = refresh {
        refresh.abort();
    }
    let ended = Instant::now();
    ctx.end_outages(ended);

    // Requests never written are "not sent"; the window's last interval is sent.
    {
        let mut rec = ctx.rec.borrow_mut();
        let redirected = ctx.dispatch.borrow_mut().abandon(&mut rec);
        // A redirect never sent again is not sent, no longer in flight.
        ctx.in_flight
            .set(ctx.in_flight.get().saturating_sub(redirected));
    }
    let window_end = if is_open {
        Some(match (cancel_seen, ctx.end) {
            (Some(seen), Some(end)) => seen.min(end),
            (_, Some(end)) => end,
            (seen, None) => seen.unwrap_or(ended),
        })
    } else {
        ctx.last_reply.get()
    };
    ctx.finish_intervals(window_end);

    let cpu_secs = thread_cpu_secs() - cpu_before;
    ThreadOutcome {
        in_flight_at_end: ctx.in_flight.get(),
        window_end,
        last_send: ctx.last_send.last(),
        last_reply: ctx.last_reply.get(),
        cpu: ThreadCpu {
            cpu_secs,
            idle_spin_secs: ctx.spin.idle.get().as_secs_f64(),
            wall_secs: ended.saturating_duration_since(ctx.start).as_secs_f64(),
        },
        send_counts: std::mem::take(&mut *ctx.send_counts.borrow_mut()),
        warmup_sent: std::mem::take(&mut *ctx.warmup_sent.borrow_mut()),
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
    let (Mode::Open { rate_per_sec, .. }, Stop::After(duration)) = (&plan.mode, plan.stop) else {
        return SendCounts::default();
    };
    let thread_rate = rate_per_sec / plan.threads.max(1) as f64;
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

/// CPU seconds (user + system) this thread has used, from /proc (Linux); 0 elsewhere.
/// USER_HZ is 100 on every Linux architecture tailrate builds for.
pub(crate) fn thread_cpu_secs() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/thread-self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
        return 0.0;
    };
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}
