//! One generator thread: a current-thread tokio runtime running its connections'
//! loops, the open-loop scheduler, and the interval tick; and the gate that starts
//! every thread at the same instant.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::dispatch::Dispatch;
use super::plan::{Mode, Stop};
use super::route::Cluster;
use super::schedule::{Schedule, SpinMeter};
use super::{DriveError, Interval, Shared, ThreadCpu, ThreadPlan};
use crate::net::{Connection, Endpoint, Handshake};
use crate::record::Recorder;
use crate::resp::Limits;
use crate::workload::{Sampler, Test};

/// How long in-flight requests may still be answered after the schedule ends, when no `--timeout` is set.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How long in-flight requests may still be answered after Ctrl+C.
const CANCEL_GRACE: Duration = Duration::from_millis(250);
/// Shortest window the Poisson check counts sends in: far longer than the generator's
/// timing jitter, so late wake-ups and batched writes barely move a count.
const SEND_WINDOW_MIN: Duration = Duration::from_millis(10);
/// Sends a window should hold on average for the counts to be informative.
const SEND_WINDOW_MEAN: f64 = 20.0;

/// Starts every thread at once: each reports whether it connected; the caller opens the gate.
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

    /// Waits for every thread, then sets the start a little ahead so all begin together.
    pub(crate) fn open_when_ready(&self) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        while state.arrived < self.threads {
            state = match self.changed.wait(state) {
                Ok(s) => s,
                Err(_) => return,
            };
        }
        if !state.failed {
            state.start = Some(Instant::now() + Duration::from_millis(2));
        }
        state.opened = true;
        self.changed.notify_all();
    }
}

/// What one thread measured.
#[derive(Debug, Default)]
pub(crate) struct ThreadOutcome {
    pub in_flight_at_end: u64,
    pub measured: Duration,
    pub last_send_after_measure: Duration,
    pub last_reply_after_measure: Duration,
    pub cpu: ThreadCpu,
    pub send_counts: SendCounts,
}

/// Measured sends of one thread counted per fixed window (open loop), preallocated for
/// the whole run so counting allocates nothing.
#[derive(Debug, Default, Clone)]
pub struct SendCounts {
    /// Window length.
    pub window: Duration,
    /// Sends written in each window from the end of warm-up.
    pub counts: Vec<u32>,
}

/// State shared by the tasks of one thread (single-threaded: `Cell`/`RefCell`, no locks).
pub(crate) struct Ctx {
    pub plan: ThreadPlan,
    pub test: Test,
    pub shared: Arc<Shared>,
    pub endpoint: Endpoint,
    pub handshake: Handshake,
    pub connect_timeout: Duration,
    pub limits: Limits,
    /// The run's start: every intended time is `start + offset`.
    pub start: Instant,
    /// Requests intended before this are warm-up: sent, not recorded.
    pub measure_from: Instant,
    /// No request is started at or after this.
    pub end: Option<Instant>,
    /// The current interval's records.
    pub rec: RefCell<Recorder>,
    /// Every per-request random choice (command, key, value).
    pub sampler: RefCell<Sampler>,
    /// Open loop: this thread's schedule (taken by [`super::dispatch::hand_out`]).
    pub schedule: RefCell<Option<Schedule>>,
    /// Open loop: when the schedule's next arrival is due; `None` once it has ended.
    pub next_due: Cell<Option<Instant>>,
    /// Open-loop hand-off from the scheduler to connections.
    pub dispatch: RefCell<Dispatch>,
    /// One wake-up per connection, for new work.
    pub wake: Vec<Rc<Notify>>,
    /// Scratch list of connections to wake (kept to reuse its memory).
    pub woken: RefCell<Vec<usize>>,
    /// Measured requests written and not yet answered.
    pub in_flight: Cell<u64>,
    /// When the last reply arrived.
    pub last_reply: Cell<Instant>,
    /// When the last measured request was written.
    pub last_send: Cell<Instant>,
    /// No new requests will be started.
    pub sending_done: Cell<bool>,
    /// Connection loops still running.
    pub live: Cell<usize>,
    /// Signalled when a connection loop ends.
    pub finished: Notify,
    /// Against a cluster: routing state; connection `slot` goes to master `slot % nodes`.
    pub cluster: Option<Cluster>,
    /// Work done and idle spinning, for the CPU self-check.
    pub spin: SpinMeter,
    /// Measured sends per window (open loop), for the Poisson check.
    pub send_counts: RefCell<SendCounts>,
}

impl Ctx {
    /// Requests one connection may have outstanding.
    pub fn capacity(&self) -> usize {
        match &self.plan.mode {
            Mode::Closed {
                workers: Some(w), ..
            } => super::batch::most_workers_on_one(self.plan.all_connections, w.count),
            Mode::Closed { pipeline, .. } => *pipeline as usize,
            Mode::Open { max_inflight, .. } => *max_inflight,
        }
    }

    /// Where connection `slot` connects (its master, against a cluster).
    pub fn endpoint_of(&self, slot: usize) -> &Endpoint {
        match &self.cluster {
            Some(cluster) => &cluster.endpoints[slot % cluster.len()],
            None => &self.endpoint,
        }
    }

    /// Whether requests reach connections through [`Dispatch`] (open loop, or any loop
    /// against a cluster) rather than being claimed by the connection itself.
    pub fn routed(&self) -> bool {
        self.cluster.is_some() || matches!(self.plan.mode, Mode::Open { .. })
    }

    /// Against a cluster, after the last request in flight ended with nothing left to
    /// send: wakes every connection so idle ones see the run is over.
    pub fn wake_all_if_done(&self) {
        if self.cluster.is_some() && self.sending_done.get() && self.in_flight.get() == 0 {
            for w in &self.wake {
                w.notify_one();
            }
        }
    }

    /// The batch of local connection `slot` when requests come from `--workers`.
    pub fn batch(&self, slot: usize) -> Option<super::batch::Batch> {
        let workers = self.plan.mode.workers()?;
        let connection = self.plan.index + slot * self.plan.threads;
        Some(super::batch::Batch::new(
            super::batch::workers_on(connection, self.plan.all_connections, workers.count),
            workers,
        ))
    }

    /// Closed loop: claims up to `want` requests; 0 when the run is over.
    pub fn claim(&self, want: usize) -> usize {
        self.claim_with(want, Instant::now)
    }

    /// [`Ctx::claim`] for a caller that has just read the clock (`now`).
    pub fn claim_at(&self, want: usize, now: Instant) -> usize {
        self.claim_with(want, || now)
    }

    fn claim_with(&self, want: usize, now: impl FnOnce() -> Instant) -> usize {
        // The clock is read only when the run has an end time: with -n it would be one
        // more clock read per batch for nothing.
        if self.shared.cancel.is_cancelled() || self.end.is_some_and(|end| now() >= end) {
            self.sending_done.set(true);
            return 0;
        }
        let want = want as u64;
        let taken = self.shared.remaining.fetch_update(
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
            |left| (left > 0).then(|| left - left.min(want)),
        );
        match taken {
            Ok(left) => left.min(want) as usize,
            Err(_) => {
                self.sending_done.set(true);
                0
            }
        }
    }
}

/// Runs one thread's share of the test; blocks until it ends.
#[expect(
    clippy::too_many_arguments,
    reason = "the thread's whole inputs, passed once at spawn"
)]
pub(crate) fn thread_main(
    plan: ThreadPlan,
    test: &Test,
    sampler: Sampler,
    endpoint: Endpoint,
    handshake: Handshake,
    connect_timeout: Duration,
    limits: Limits,
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
        let endpoints: Vec<Endpoint> = match &plan.cluster {
            Some(map) => (0..map.nodes.len())
                .map(|n| map.endpoint(n, &endpoint))
                .collect(),
            None => vec![endpoint.clone()],
        };
        let mut conns = Vec::with_capacity(plan.connections * endpoints.len());
        let mut failure = None;
        for slot in 0..plan.connections * endpoints.len() {
            match Connection::open(
                &endpoints[slot % endpoints.len()],
                &handshake,
                connect_timeout,
                limits,
            )
            .await
            {
                Ok(c) => conns.push(c),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let start = gate.arrive(failure.is_none());
        if let Some(e) = failure {
            return Err(DriveError::Connect(e));
        }
        let Some(start) = start else {
            return Ok(ThreadOutcome::default());
        };
        Ok(drive_thread(
            plan,
            test,
            sampler,
            endpoint,
            handshake,
            connect_timeout,
            limits,
            shared,
            tx,
            conns,
            start,
        )
        .await)
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
    endpoint: Endpoint,
    handshake: Handshake,
    connect_timeout: Duration,
    limits: Limits,
    shared: Arc<Shared>,
    tx: Sender<Interval>,
    conns: Vec<Connection>,
    start: Instant,
) -> ThreadOutcome {
    let is_open = matches!(plan.mode, Mode::Open { .. });
    let measure_from = if is_open { start + plan.warmup } else { start };
    let end = match plan.stop {
        Stop::After(d) => Some(measure_from + d),
        Stop::Requests(_) => None,
    };
    let n_connections = conns.len();
    let n_commands = test.commands.len();
    let (max_backlog, cap) = match &plan.mode {
        Mode::Open {
            max_backlog,
            max_inflight,
            ..
        } => (*max_backlog, *max_inflight),
        Mode::Closed {
            workers: Some(w), ..
        } => (
            0,
            super::batch::most_workers_on_one(plan.all_connections, w.count),
        ),
        Mode::Closed { pipeline, .. } => (0, *pipeline as usize),
    };
    let cluster = plan
        .cluster
        .as_ref()
        .map(|map| Cluster::new(map, &endpoint, plan.connections));
    let schedule = match plan.mode {
        Mode::Open {
            rate_per_sec,
            arrival,
            ..
        } if end.is_some() => Some(Schedule::new(
            arrival,
            rate_per_sec,
            plan.index,
            plan.threads,
            plan.seed,
        )),
        _ => None,
    };
    let next_due = match (&schedule, end) {
        (Some(s), Some(end)) => Some(start + s.peek()).filter(|&first| first < end),
        _ => None,
    };
    let nodes = cluster.as_ref().map_or(1, Cluster::len);
    let ctx = Rc::new(Ctx {
        sampler: RefCell::new(sampler),
        dispatch: RefCell::new(Dispatch::new(
            n_connections,
            nodes,
            cap,
            max_backlog,
            !is_open,
        )),
        schedule: RefCell::new(schedule),
        next_due: Cell::new(next_due),
        cluster,
        wake: (0..n_connections).map(|_| Rc::new(Notify::new())).collect(),
        woken: RefCell::new(Vec::with_capacity(n_connections)),
        rec: RefCell::new(Recorder::for_timing(n_commands, plan.mode.timing())),
        in_flight: Cell::new(0),
        last_reply: Cell::new(start),
        last_send: Cell::new(measure_from),
        sending_done: Cell::new(false),
        live: Cell::new(n_connections),
        finished: Notify::new(),
        send_counts: RefCell::new(send_counts_for(&plan)),
        spin: SpinMeter::default(),
        plan,
        test,
        shared,
        endpoint,
        handshake,
        connect_timeout,
        limits,
        start,
        measure_from,
        end,
    });
    let cpu_before = thread_cpu_secs();

    let tick = tokio::task::spawn_local(tick_loop(ctx.clone(), tx.clone()));
    for (slot, conn) in conns.into_iter().enumerate() {
        tokio::task::spawn_local(super::conn::connection_loop(ctx.clone(), slot, conn));
    }
    if let Mode::Open { pacing, .. } = ctx.plan.mode {
        tokio::task::spawn_local(super::dispatch::scheduler_loop(ctx.clone(), pacing));
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
            let seen = *cancel_seen.get_or_insert(now);
            ctx.sending_done.set(true);
            for w in &ctx.wake {
                w.notify_one();
            }
            if now > seen + CANCEL_GRACE {
                break;
            }
        }
        if ctx.end.is_some_and(|end| now > end + grace) {
            break;
        }
    }
    tick.abort();
    let ended = Instant::now();

    // Arrivals never written are "not sent"; the final partial interval is flushed.
    {
        let mut rec = ctx.rec.borrow_mut();
        ctx.dispatch.borrow_mut().abandon(&mut rec);
    }
    let last_tick =
        ctx.start + ctx.plan.interval * interval_index(ctx.start, ended, ctx.plan.interval);
    let record = std::mem::replace(&mut *ctx.rec.borrow_mut(), Recorder::new(n_commands));
    let _ = tx.send(Interval {
        thread: ctx.plan.index,
        start: last_tick - ctx.start,
        length: ended.saturating_duration_since(last_tick),
        record,
        backlog: 0,
    });

    let measured = if is_open {
        let stop = match (cancel_seen, ctx.end) {
            (Some(seen), Some(end)) => seen.min(end),
            (_, Some(end)) => end,
            (seen, None) => seen.unwrap_or(ended),
        };
        stop.saturating_duration_since(ctx.measure_from)
    } else {
        ctx.last_reply.get().saturating_duration_since(ctx.start)
    };
    let cpu_secs = thread_cpu_secs() - cpu_before;
    ThreadOutcome {
        in_flight_at_end: ctx.in_flight.get(),
        measured,
        last_send_after_measure: ctx
            .last_send
            .get()
            .saturating_duration_since(ctx.measure_from),
        last_reply_after_measure: ctx
            .last_reply
            .get()
            .saturating_duration_since(ctx.measure_from),
        cpu: ThreadCpu {
            cpu_secs,
            idle_spin_secs: ctx.spin.idle.get().as_secs_f64(),
            wall_secs: ended.saturating_duration_since(ctx.start).as_secs_f64(),
        },
        send_counts: std::mem::take(&mut *ctx.send_counts.borrow_mut()),
    }
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

fn interval_index(start: Instant, now: Instant, interval: Duration) -> u32 {
    (now.saturating_duration_since(start).as_nanos() / interval.as_nanos().max(1)) as u32
}

/// Hands the current interval's records to the caller at every interval boundary.
async fn tick_loop(ctx: Rc<Ctx>, tx: Sender<Interval>) {
    let mut k: u32 = 1;
    loop {
        tokio::time::sleep_until((ctx.start + ctx.plan.interval * k).into()).await;
        let fresh = ctx.shared.take_spare().unwrap_or_else(|| {
            Recorder::for_timing(ctx.test.commands.len(), ctx.plan.mode.timing())
        });
        let record = std::mem::replace(&mut *ctx.rec.borrow_mut(), fresh);
        let start = ctx.plan.interval * (k - 1);
        let backlog = ctx.dispatch.borrow().backlog_len();
        if tx
            .send(Interval {
                thread: ctx.plan.index,
                start,
                length: ctx.plan.interval,
                record,
                backlog,
            })
            .is_err()
        {
            return;
        }
        k += 1;
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
