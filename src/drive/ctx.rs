//! The per-thread context: what one generator thread's tasks (its connection loops, the
//! open-loop scheduler, the interval tick) share, and the few operations on it that
//! several of them need: claiming closed-loop requests, waking connections, moving the
//! interval records on at each interval's end (the [`IntervalClock`]), and keeping the
//! account of connections lost, opened again, and of the times the server could not be
//! reached.
//!
//! It sits above the pieces it ties together: the dispatcher, cluster routing, the
//! batching policy and the schedule do not see it; the code that holds a [`Ctx`] hands
//! them what they need.

use std::cell::{Cell, RefCell};
use std::hint::cold_path;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::arrivals::Arrivals;
use super::batch;
use super::dispatch::Dispatch;
use super::outcome::{ConnectionEvents, Interval, Outage, SendCounts};
use super::plan::{Mode, Plan};
use super::route::Cluster;
use super::schedule::SpinMeter;
use super::shared::Shared;
use super::topology::Topology;
use super::trace::TraceFeed;
use super::window::{IntervalClock, Latest, SendTimes};
use crate::net::cluster::ClusterMap;
use crate::net::{Connection, Endpoint, Handshake, NetError};
use crate::record::{Recorder, Timing};
use crate::resp::Limits;
use crate::workload::{Sampler, Test};

/// One thread's part of the run: what is its own, and the plan every thread shares.
#[derive(Debug, Clone)]
pub(crate) struct ThreadPlan {
    /// The plan of the run, shared by its threads.
    pub run: Arc<Plan>,
    /// This thread's index among the run's threads.
    pub index: usize,
    /// This thread's connections: the run's `index`, `index + threads`, ...
    pub connections: usize,
    /// The seed of this thread's random choices (keys, arrivals).
    pub seed: u64,
    /// Against a cluster: its layout at the start.
    pub cluster: Option<Arc<ClusterMap>>,
    /// Against a cluster: what every thread learns of its layout during the run.
    pub topology: Option<Arc<Topology>>,
    /// What the plan's mode makes of a request's times, read once here because the
    /// reply path asks for every reply.
    pub timing: Timing,
    /// `-P` with redis-benchmark's batch latency, read once here: the reply path asks
    /// for every reply.
    pub batch_latency: bool,
    /// `-k 0`, read once here: a closed loop asks after every batch.
    pub reconnect_each_request: bool,
}

impl ThreadPlan {
    /// Thread `index`'s part of `run`, of its test `test_index`, against a cluster of
    /// layout `cluster` whose changes go to `topology`.
    pub(crate) fn new(
        run: Arc<Plan>,
        index: usize,
        cluster: Option<Arc<ClusterMap>>,
        topology: Option<Arc<Topology>>,
        test_index: usize,
    ) -> Self {
        let threads = run.threads.max(1);
        ThreadPlan {
            index,
            // Connections are dealt round-robin: thread k gets k, k+T, k+2T, ...
            connections: (run.connections + threads - 1 - index) / threads,
            // Per stream of the whole plan (see `Shard::stream`): each shard's keys
            // and arrivals have seeds of their own, and one shard's are one
            // process's.
            seed: run.seed
                ^ ((test_index as u64) << 32)
                ^ (run.shard.stream(index) as u64).wrapping_mul(0x2545_f491_4f6c_dd1d),
            cluster,
            topology,
            timing: run.mode.timing(),
            batch_latency: run.batch_latency,
            reconnect_each_request: run.reconnect_each_request,
            run,
        }
    }

    /// This thread's arrival source in open loop: its stream of the plan's process, or
    /// its part of the trace `feed` reads (taken from it once); `None` in closed loop.
    pub(crate) fn arrivals(&self, feed: Option<&TraceFeed>) -> Option<Arrivals> {
        let shard = self.run.shard;
        let streams = shard.count.max(1) as usize * self.threads();
        Arrivals::new(
            &self.run.mode,
            feed,
            self.index,
            shard.stream(self.index),
            streams,
            self.seed,
        )
    }

    /// The run's threads.
    pub(crate) fn threads(&self) -> usize {
        self.run.threads.max(1)
    }

    /// True in open loop.
    pub(crate) fn is_open(&self) -> bool {
        self.timing == Timing::Open
    }

    /// Requests one connection may have outstanding.
    pub(crate) fn capacity(&self) -> usize {
        match &self.run.mode {
            Mode::Closed {
                workers: Some(w), ..
            } => batch::most_workers_on_one(self.run.connections, w.count),
            Mode::Closed { pipeline, .. } => *pipeline as usize,
            Mode::Open { max_inflight, .. } => *max_inflight,
        }
    }

    /// Closed loop: how long the server may stay unreachable before the run gives up.
    pub(crate) fn lost_server_wait(&self) -> Duration {
        self.run
            .lost_server_wait
            .unwrap_or(self.run.connect_timeout)
    }
}

/// How this thread opens a connection: the same at the start and on every reconnect.
#[derive(Debug, Clone)]
pub(crate) struct Dial {
    /// The server, or against a cluster the node the layout was read from.
    pub endpoint: Endpoint,
    pub handshake: Handshake,
    pub connect_timeout: Duration,
    pub limits: Limits,
}

impl Dial {
    /// Opens a connection to `endpoint` and runs the handshake.
    pub(crate) async fn open(&self, endpoint: &Endpoint) -> Result<Connection, NetError> {
        Connection::open(endpoint, &self.handshake, self.connect_timeout, self.limits).await
    }
}

/// State shared by the tasks of one thread (single-threaded: `Cell`/`RefCell`, no locks).
pub(crate) struct Ctx {
    pub plan: ThreadPlan,
    pub test: Test,
    pub shared: Arc<Shared>,
    pub dial: Dial,
    /// The run's start: every intended time is `start + offset`.
    pub start: Instant,
    /// Requests intended before this are warm-up: sent, not recorded.
    pub measure_from: Instant,
    /// No request is started at or after this.
    pub end: Option<Instant>,
    /// The current interval's records (which interval: `intervals`).
    pub rec: RefCell<Recorder>,
    /// Which interval of the measured window `rec` is for, and when it ends.
    pub intervals: IntervalClock,
    /// Where ended intervals go.
    pub tx: Sender<Interval>,
    /// Every per-request random choice (command, key, value).
    pub sampler: RefCell<Sampler>,
    /// By command index: whether its replies count as hits and misses (the test's reads).
    pub counts_hits: Vec<bool>,
    /// Open loop: where this thread's requests come from, a rate's schedule or a
    /// replay's part of the trace (taken by the scheduler's hand-out).
    pub arrivals: RefCell<Option<Arrivals>>,
    /// Open loop: when the source's next request is due; `None` once it has ended.
    pub next_due: Cell<Option<Instant>>,
    /// Hand-off of requests to connections (open loop, or any loop against a cluster).
    pub dispatch: RefCell<Dispatch>,
    /// One wake-up per connection, for new work.
    pub wake: Vec<Rc<Notify>>,
    /// Scratch list of connections to wake (kept to reuse its memory).
    pub woken: RefCell<Vec<usize>>,
    /// Measured requests written and not yet answered.
    pub in_flight: Cell<u64>,
    /// When the last reply arrived.
    pub last_reply: Latest,
    /// When measured requests were first and last written.
    pub last_send: SendTimes,
    /// No new requests will be started.
    pub sending_done: Cell<bool>,
    /// Connection loops still running.
    pub live: Cell<usize>,
    /// Signalled when a connection loop ends.
    pub finished: Notify,
    /// The connection loops' tasks, stopped (and their unanswered requests counted) when
    /// the run's hard deadline passes with some still waiting.
    pub connection_tasks: RefCell<Vec<tokio::task::JoinHandle<()>>>,
    /// Against a cluster: routing state; connection `slot` goes to master `slot % nodes`.
    pub cluster: Option<Cluster>,
    /// Work done and idle spinning, for the CPU self-check.
    pub spin: SpinMeter,
    /// Measured requests handed out per window (open loop), for the Poisson check.
    pub send_counts: RefCell<SendCounts>,
    /// Requests written outside the record, per command: the warm-up's, and a replay's
    /// `SELECT`s again after a reconnect. The server counts them too.
    pub unrecorded_sent: RefCell<Vec<u64>>,
    /// Each connection that is down: since when, and whether the server has refused it.
    pub down: RefCell<Vec<Option<Down>>>,
    /// This thread's reconnects and outages.
    pub connections: RefCell<ConnectionEvents>,
}

/// A connection that is down.
#[derive(Debug, Clone)]
pub(crate) struct Down {
    /// When it was lost to a failure; `None` when it was closed on purpose (`-k 0`).
    lost: Option<Instant>,
    /// Its first failed connect since, and why it failed.
    failed: Option<(Instant, String)>,
    /// Its last failed connect.
    last_failed: Option<Instant>,
}

impl Ctx {
    /// Stops every connection loop still running (their unanswered requests are counted
    /// as they are dropped) and waits until they are gone.
    pub async fn stop_connections(&self) {
        let tasks = std::mem::take(&mut *self.connection_tasks.borrow_mut());
        for task in &tasks {
            task.abort();
        }
        for task in tasks {
            let _ = task.await;
        }
    }

    /// Where connection `slot` connects (its master, against a cluster); `None` for the
    /// place of a master not known yet.
    pub(crate) fn endpoint_of(&self, slot: usize) -> Option<Endpoint> {
        match &self.cluster {
            Some(cluster) => cluster.endpoint(slot % cluster.len()),
            None => Some(self.dial.endpoint.clone()),
        }
    }

    /// Against a cluster: connection `slot`'s master serves no slot by this thread's map
    /// (it failed and another took over, or it was never a master here), so nothing
    /// waits for it to come back.
    pub(crate) fn serves_nothing(&self, slot: usize) -> bool {
        self.cluster
            .as_ref()
            .is_some_and(|c| !c.serves_slots(slot % c.len()))
    }

    /// Closed loop against a cluster: the connection that claims client `group`'s
    /// batches, its first that is up (a client whose first master failed goes on
    /// through another).
    pub(crate) fn lead_of(&self, group: usize) -> Option<usize> {
        let nodes = self.cluster.as_ref()?.len();
        let dispatch = self.dispatch.borrow();
        (group * nodes..(group + 1) * nodes).find(|&s| dispatch.slots[s].up)
    }

    /// Connection `slot` was lost to a failure (a close, a reset, a timeout) at `now`.
    pub(crate) fn connection_lost(&self, slot: usize, now: Instant) {
        self.down.borrow_mut()[slot].get_or_insert(Down {
            lost: Some(now),
            failed: None,
            last_failed: None,
        });
    }

    /// Connecting `slot` again failed at `now` with `e`; returns when its first failed
    /// connect since it was up was.
    pub(crate) fn connect_failed(&self, slot: usize, now: Instant, e: &NetError) -> Instant {
        let mut down = self.down.borrow_mut();
        let down = down[slot].get_or_insert(Down {
            lost: None,
            failed: None,
            last_failed: None,
        });
        down.last_failed = Some(now);
        down.failed.get_or_insert_with(|| (now, e.to_string())).0
    }

    /// Connection `slot` is open again at `now`: a reconnect when it had been lost, and an
    /// outage when a connect failed meanwhile (from the loss, or the first failure).
    pub(crate) fn connection_back(&self, slot: usize, now: Instant) {
        let Some(down) = self.down.borrow_mut()[slot].take() else {
            return;
        };
        let mut events = self.connections.borrow_mut();
        if down.lost.is_some() {
            events.reconnects += 1;
        }
        if let Some(outage) = self.outage(down, now, false) {
            events.add_outage(outage);
        }
    }

    /// The run is over at `now`: every connection still down after a failed connect was
    /// in an outage that lasted to the end.
    pub(crate) fn end_outages(&self, now: Instant) {
        let down = std::mem::take(&mut *self.down.borrow_mut());
        let mut events = self.connections.borrow_mut();
        for d in down.into_iter().flatten() {
            if let Some(outage) = self.outage(d, now, true) {
                events.add_outage(outage);
            }
        }
    }

    /// The outage of a connection that was `down` until `end`, if a connect failed.
    fn outage(&self, down: Down, end: Instant, until_end: bool) -> Option<Outage> {
        let (first_failure, cause) = down.failed?;
        let start = down.lost.unwrap_or(first_failure);
        let since_start = |t: Instant| t.saturating_duration_since(self.start);
        Some(Outage {
            start: since_start(start),
            end: since_start(end),
            last_failed: since_start(down.last_failed.unwrap_or(first_failure)),
            cause,
            until_end,
        })
    }

    /// Wakes the connections the dispatcher gave work since the last call.
    pub(crate) fn wake_given(&self) {
        let mut woken = std::mem::take(&mut *self.woken.borrow_mut());
        self.dispatch.borrow_mut().take_wakes(&mut woken);
        for &s in &woken {
            self.wake[s].notify_one();
        }
        *self.woken.borrow_mut() = woken;
    }

    /// Against a cluster, after the last request in flight ended with nothing left to
    /// send: wakes every connection so idle ones see the run is over.
    pub(crate) fn wake_all_if_done(&self) {
        if self.cluster.is_some() && self.sending_done.get() && self.in_flight.get() == 0 {
            for w in &self.wake {
                w.notify_one();
            }
        }
    }

    /// Closed loop: claims up to `want` requests; 0 when the run is over.
    pub(crate) fn claim(&self, want: usize) -> usize {
        self.claim_with(want, Instant::now)
    }

    /// [`Ctx::claim`] for a caller that has just read the clock (`now`).
    pub(crate) fn claim_at(&self, want: usize, now: Instant) -> usize {
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

impl Ctx {
    /// The measured window's start, once known: [`Shared::window_start`].
    pub(crate) fn window_start(&self) -> Option<Instant> {
        self.shared.window_start()
    }

    /// Before the replies of a read at `received` are recorded: moves the records on to
    /// the interval `received` falls in (see [`IntervalClock`]). One compare per read,
    /// with the read's own time.
    #[inline]
    pub(crate) fn reply_at(&self, received: Instant) {
        if self.intervals.is_past(received) {
            cold_path();
            self.advance_intervals(received);
        }
    }

    /// Sends every interval that ended by `t` (an empty one for each that nothing was
    /// recorded in) and records on into the one `t` falls in, or the window's last.
    #[inline(never)]
    pub(crate) fn advance_intervals(&self, t: Instant) {
        // A closed loop before its first send (a reply nobody asked for): no clock yet.
        let Some(start) = self.window_start() else {
            return;
        };
        for index in self.intervals.advance(start, t) {
            let fresh = self.shared.take_spare().unwrap_or_else(|| {
                Recorder::for_timing(self.test.commands.len(), self.plan.timing)
            });
            let record = std::mem::replace(&mut *self.rec.borrow_mut(), fresh);
            let length = self.intervals.length;
            self.send_interval(start, index, length, self.reached(start, t), record);
        }
    }

    /// An open loop's window ends at `end` (or earlier, if it was said so before): the
    /// records stay in the interval `end` falls in from then on.
    pub(crate) fn end_window(&self, end: Instant) {
        if let Some(start) = self.window_start() {
            self.intervals.end_window(start, end);
        }
    }

    /// At the thread's end: moves the records on to the last interval this thread knows
    /// the window has (`window_end`: where its share of the window ended) and sends it;
    /// `rec` is left empty.
    pub(crate) fn finish_intervals(&self, window_end: Option<Instant>) {
        let start = self.window_start().unwrap_or(self.start);
        if let Some(end) = window_end {
            if self.plan.is_open() {
                self.end_window(end);
            }
            self.advance_intervals(end);
        }
        let index = self.intervals.index();
        let record = std::mem::replace(
            &mut *self.rec.borrow_mut(),
            Recorder::new(self.test.commands.len()),
        );
        let reached = window_end.map_or(Duration::ZERO, |end| end.saturating_duration_since(start));
        let from = self.intervals.length * index;
        let length = reached.saturating_sub(from).min(self.intervals.length);
        self.send_interval(start, index, length, reached, record);
    }

    /// How far the measured window is known to reach at `t`, from its `start`: an open
    /// loop's up to `t` (or its end), a closed loop's up to its last reply so far.
    fn reached(&self, start: Instant, t: Instant) -> Duration {
        let to = if self.plan.is_open() {
            Some(self.intervals.window_end().map_or(t, |e| e.min(t)))
        } else {
            self.last_reply.get()
        };
        to.map_or(Duration::ZERO, |to| to.saturating_duration_since(start))
    }

    fn send_interval(
        &self,
        origin: Instant,
        index: u32,
        length: Duration,
        reached: Duration,
        record: Recorder,
    ) {
        let backlog = self.dispatch.borrow().backlog_len();
        // The receiver is gone only when the run is being torn down: nothing to keep.
        let _ = self.tx.send(Interval {
            thread: self.plan.index,
            index,
            origin,
            start: self.intervals.length * index,
            length,
            reached,
            record,
            backlog,
        });
    }
}
