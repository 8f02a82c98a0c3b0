//! The connection loop: the one loop every mode runs. Its [`Feed`], chosen when it
//! starts, fills the write buffer (a closed-loop batch it claims, its workers' batch,
//! or the requests it was handed); the loop writes once, stamps what it wrote, reads
//! replies and hands them to `reply` to record, moves the connection's byte counts into
//! the records, and reconnects when the connection fails (noting the loss, and the time
//! the server could not be reached, in the `Ctx`).
//!
//! Clock reads: one before each write (the `sent` of the batch; in closed loop also its
//! intended and handled time) and one after each read (the `received` of every reply
//! that read completed). With `--workers`, one more before each fill (the request time
//! of the requests workers hand to the batch then, see `batch.rs`), and a partial batch
//! waiting out a sub-millisecond `--pipeline-delay` spins on it. Nothing else on this
//! path reads the clock, but for a timed closed loop's check of its end time (one per
//! batch).

use std::hint::cold_path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::cap::{CapPacing, RateCap, Ticks};
use super::ctx::Ctx;
use super::feed::Feed;
use super::inflight::InFlightQueue;
use super::reply::{self, Deferred};
use super::schedule::{Pacing, wait_until};
use crate::net::{Connection, NetError};
use crate::record::Timing;

/// First reconnect delay; doubled per failure up to [`BACKOFF_MAX`].
const BACKOFF_START: Duration = Duration::from_millis(10);
/// Longest delay between reconnect attempts.
const BACKOFF_MAX: Duration = Duration::from_secs(1);
/// How often the place of a master not known yet looks again (it is also woken when its
/// master is learned).
const UNKNOWN_NODE_POLL: Duration = Duration::from_millis(250);

/// What woke the loop while it waited.
enum Event {
    Read(Result<usize, NetError>),
    Work,
    Timeout,
}

/// What one connection's loop keeps from batch to batch, besides the connection.
struct Local<'a> {
    ctx: &'a Ctx,
    slot: usize,
    feed: Feed<'a>,
    fifo: InFlightQueue,
    /// --batch-latency: replies of a closed-loop batch are recorded when its last one
    /// arrives.
    deferred: Vec<Deferred>,
    timing: Timing,
    /// How much of the connection's byte counts is in the records already (sent,
    /// received). The bytes are windowed by the requests they carry, not by time: a write
    /// counts when it carried a measured request, a read when the oldest request waiting
    /// for it was measured, so warm-up's bytes stay out (a read that answers the last
    /// warm-up requests and the first measured ones counts whole).
    counted: (u64, u64),
    backoff: Duration,
    /// `-k 0` closed the connection after its batch, or it never had one yet: not a loss.
    closed_on_purpose: bool,
}

/// Starts the connection loop of `slot` (with `conn`, or connecting when its master is
/// known) as a task the thread can stop at the run's end ([`Ctx::stop_connections`]).
pub(crate) fn spawn(ctx: &Rc<Ctx>, slot: usize, conn: Option<Connection>) {
    let task = tokio::task::spawn_local(connection_loop(ctx.clone(), slot, conn));
    ctx.connection_tasks.borrow_mut().push(task);
}

/// Runs one connection until the run ends. A connection with none yet (`conn` is `None`:
/// the place of a master learned during the run) connects when its master is known.
async fn connection_loop(ctx: Rc<Ctx>, slot: usize, conn: Option<Connection>) {
    let ctx: &Ctx = &ctx;
    let cap = ctx.plan.capacity();
    let limiter = ctx.shared.limiter.as_ref();
    let mut ticks = match ctx.plan.run.mode {
        super::Mode::Closed {
            rate_cap:
                Some(RateCap {
                    per_sec,
                    pacing: CapPacing::Connection,
                }),
            ..
        } => Some(Ticks::new(
            per_sec / ctx.plan.run.connections.max(1) as f64,
            cap,
            ctx.shared.epoch(),
        )),
        _ => None,
    };
    // Read once: the loop asks for every batch.
    let timeout = ctx.plan.run.timeout;
    let mut l = Local {
        ctx,
        slot,
        feed: Feed::new(ctx, slot),
        fifo: InFlightQueue::with_capacity(cap),
        deferred: Vec::with_capacity(if ctx.plan.batch_latency { cap } else { 0 }),
        timing: ctx.plan.timing,
        counted: (0, 0),
        backoff: BACKOFF_START,
        closed_on_purpose: conn.is_none(),
    };
    let mut conn = conn;

    loop {
        let Some(c) = conn.as_mut() else {
            cold_path();
            if l.redial(&mut conn).await {
                continue;
            }
            break;
        };

        // A rate-capped closed loop waits for its turn before each batch; the wait is
        // not timed (that is what such tools do, and what the comparison shows).
        if (limiter.is_some() || ticks.is_some()) && l.feed.batch_due(ctx, slot, &l.fifo) {
            cold_path();
            if let Some(limiter) = limiter {
                wait_for_limiter(limiter, cap).await;
            }
            if let Some(ticks) = ticks.as_mut() {
                while let Some(at) = ticks.take(Instant::now()) {
                    tokio::time::sleep_until(at.into()).await;
                }
            }
        }
        let filled = l.feed.fill(ctx, slot, c, &mut l.fifo);
        if filled.count > 0 {
            ctx.spin.work.set(ctx.spin.work.get() + 1);
            let sent = Instant::now();
            let measured = mark_sent(ctx, slot, &mut l.fifo, sent, filled.timed_at_write);
            let written = match c.try_send(filled.prepared) {
                Ok(None) => Ok(()),
                Ok(Some(sent)) => {
                    cold_path();
                    c.send_rest(filled.prepared, sent).await
                }
                Err(e) => Err(e),
            };
            if let Err(e) = written {
                cold_path();
                reply::fail(ctx, slot, &mut l.fifo, &e);
                conn = None;
                continue;
            }
            count_bytes(ctx, c.sent_bytes(), &mut l.counted.0, measured, true);
            if l.feed.has_more_ready() {
                continue;
            }
        }

        if l.fifo.is_empty() {
            if l.feed.is_over_when_idle(ctx, slot) {
                break;
            }
            // Idle, but still watching the socket: a reply that nobody asked for must be
            // seen now, not taken later as the answer to the next request, and a server
            // that closed the connection is reconnected before work arrives for it.
            let event = wait(c, ctx, slot, true, None, None).await;
            if !l.idle_woken(c, event) {
                conn = None;
            }
            continue;
        }

        let (want_work, flush_at) = l.feed.waits_for(l.fifo.len());
        let deadline = timeout.and_then(|t| l.fifo.front().map(|f| f.sent + t));
        let event = if want_work || deadline.is_some() || flush_at.is_some() {
            wait(c, ctx, slot, want_work, deadline, flush_at).await
        } else {
            // The common closed-loop case: just read (no select machinery on the hot path).
            Event::Read(std::future::poll_fn(|cx| c.poll_read_some(cx)).await)
        };
        if !l.woken(c, event) {
            conn = None;
        }
    }
    ctx.dispatch.borrow_mut().slot_down(slot);
    ctx.live.set(ctx.live.get() - 1);
    ctx.finished.notify_one();
}

impl Drop for Local<'_> {
    /// A loop ends on its own with nothing in flight; one the thread stops at the run's
    /// hard deadline (a server that stopped answering) leaves its requests unanswered,
    /// counted here before the run's last interval is sent.
    fn drop(&mut self) {
        if !self.fifo.is_empty() {
            cold_path();
            reply::give_up_in_flight(self.ctx, &mut self.fifo);
        }
    }
}

impl Local<'_> {
    /// With no connection: notes the loss (once per loss), then connects again into
    /// `conn` when the run still wants this connection, backing off after each failure.
    /// Returns whether the loop goes on (connected or not).
    async fn redial(&mut self, conn: &mut Option<Connection>) -> bool {
        let (ctx, slot) = (self.ctx, self.slot);
        // A batch cut short by a failure never gets its last reply: the replies it did
        // get are completed requests all the same, timed to the last that arrived.
        if let Some(&(_, _, last, _)) = self.deferred.last() {
            reply::flush_deferred(ctx, &mut self.deferred, last);
        }
        if !self.closed_on_purpose {
            // Once per loss: a connection already down keeps its first time.
            ctx.connection_lost(slot, Instant::now());
        }
        if ctx.sending_done.get() || ctx.shared.cancel.is_cancelled() {
            return false;
        }
        // Boxed: connecting (and a TLS handshake) is the largest state this loop
        // awaits, and inline it would size every connection's task for it, though
        // most of it is never touched after the start (see bench/).
        let Some(endpoint) = ctx.endpoint_of(slot) else {
            // A master not known yet: woken when work is handed to it.
            let _ = tokio::time::timeout(UNKNOWN_NODE_POLL, ctx.wake[slot].notified()).await;
            return true;
        };
        match Box::pin(ctx.dial.open(&endpoint)).await {
            Ok(fresh) => {
                *conn = Some(fresh);
                self.counted = (0, 0);
                self.backoff = BACKOFF_START;
                self.closed_on_purpose = false;
                ctx.connection_back(slot, Instant::now());
                ctx.dispatch.borrow_mut().slot_up(slot);
                true
            }
            Err(e) => {
                let since_down = ctx.connect_failed(slot, Instant::now(), &e);
                // A cluster master whose slots others took over is waited for no
                // longer: nothing is routed to it.
                if self.feed.gives_up_when_unreachable()
                    && since_down.elapsed() > ctx.plan.lost_server_wait()
                    && !ctx.serves_nothing(slot)
                {
                    // The outage is closed at the run's end (`Ctx::end_outages`).
                    ctx.shared.stop(format!("lost the server: {e}"));
                    return false;
                }
                tokio::time::sleep(self.backoff).await;
                self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
                true
            }
        }
    }

    /// Handles what woke the idle loop (nothing in flight); false when the connection
    /// failed and is to be dropped.
    fn idle_woken(&mut self, c: &mut Connection, event: Event) -> bool {
        let (ctx, slot) = (self.ctx, self.slot);
        match event {
            Event::Work | Event::Timeout => true,
            Event::Read(Ok(_)) => {
                // Nothing was waiting for these bytes: not counted.
                count_bytes(ctx, c.received_bytes(), &mut self.counted.1, false, false);
                let (answered, taken) = reply::take_replies(
                    ctx,
                    slot,
                    c,
                    &mut self.fifo,
                    &mut self.deferred,
                    Instant::now(),
                    self.timing,
                );
                self.feed.after_replies(ctx, slot, answered, None);
                if let Err(e) = taken {
                    reply::fail(ctx, slot, &mut self.fifo, &e);
                    return false;
                }
                true
            }
            Event::Read(Err(e)) => {
                reply::fail(ctx, slot, &mut self.fifo, &e);
                false
            }
        }
    }

    /// Handles what woke the loop while requests were in flight: replies read are
    /// recorded, a timeout or a failure ends the requests in flight; false when the
    /// connection is to be dropped (failed, timed out, or `-k 0` after its batch).
    #[inline]
    fn woken(&mut self, c: &mut Connection, event: Event) -> bool {
        let (ctx, slot) = (self.ctx, self.slot);
        match event {
            Event::Work => true,
            Event::Timeout => {
                cold_path();
                reply::end_in_flight(ctx, slot, &mut self.fifo, "timeout", true);
                false
            }
            Event::Read(Err(e)) => {
                cold_path();
                reply::fail(ctx, slot, &mut self.fifo, &e);
                false
            }
            Event::Read(Ok(_)) => {
                ctx.spin.work.set(ctx.spin.work.get() + 1);
                let received = Instant::now();
                let measured = self.fifo.front().is_some_and(|f| f.req.measured);
                count_bytes(
                    ctx,
                    c.received_bytes(),
                    &mut self.counted.1,
                    measured,
                    false,
                );
                let (answered, taken) = reply::take_replies(
                    ctx,
                    slot,
                    c,
                    &mut self.fifo,
                    &mut self.deferred,
                    received,
                    self.timing,
                );
                self.feed.after_replies(ctx, slot, answered, Some(received));
                if let Err(e) = taken {
                    cold_path();
                    reply::fail(ctx, slot, &mut self.fifo, &e);
                    false
                } else if self.fifo.is_empty() && self.feed.reconnects_after_batch(ctx) {
                    cold_path();
                    self.closed_on_purpose = true;
                    ctx.dispatch.borrow_mut().slot_down(slot);
                    false
                } else {
                    true
                }
            }
        }
    }
}

/// Waits until the rate cap's limiter allows a batch of `cap` requests. It asks the
/// limiter and sleeps on tokio's timer: governor's own async wait sleeps on a timer
/// thread and wakes too late to hold the cap, and spinning every waiting connection
/// instead takes the CPU that reads replies on time (see bench/).
async fn wait_for_limiter(limiter: &governor::DefaultDirectRateLimiter, cap: usize) {
    let n = std::num::NonZeroU32::new(cap as u32).unwrap_or(std::num::NonZeroU32::MIN);
    while let Ok(Err(not_until)) = limiter.check_n(n) {
        let now = governor::clock::Clock::now(&governor::clock::DefaultClock::default());
        tokio::time::sleep(not_until.wait_time_from(now)).await;
    }
}

/// Moves a connection's running byte count, `total` (sent when `sent`, else received),
/// into the interval's records from `counted` on when `measured`, and marks it counted
/// either way.
#[inline]
fn count_bytes(ctx: &Ctx, total: u64, counted: &mut u64, measured: bool, sent: bool) {
    if measured {
        let bytes = total.saturating_sub(*counted);
        let mut rec = ctx.rec.borrow_mut();
        if sent {
            rec.sent_bytes += bytes;
        } else {
            rec.received_bytes += bytes;
        }
    }
    *counted = total;
}

/// Stamps the requests just written with their send time (and with `timed_at_write`,
/// their intended and handled time too, but for a resent one), counts them as sent and
/// in flight (a redirected request was counted when first sent; only its node counts it
/// again), and marks them written: one pass over the write's bursts. Returns whether the
/// write carried a measured request.
fn mark_sent(
    ctx: &Ctx,
    slot: usize,
    fifo: &mut InFlightQueue,
    sent: Instant,
    timed_at_write: bool,
) -> bool {
    let mut rec = ctx.rec.borrow_mut();
    let mut measured = 0;
    // A resent request is measured traffic too, though not counted as sent again.
    let mut carried_measured = false;
    for burst in fifo.unwritten_mut() {
        let (f, count) = (&mut burst.f, u64::from(burst.count));
        f.sent = sent;
        if timed_at_write && !f.req.retry {
            f.req.intended = sent;
            f.req.handled = sent;
        }
        if f.is_asking {
            continue;
        }
        if !f.req.measured {
            if !f.req.retry {
                cold_path();
                if let Some(n) = ctx
                    .unrecorded_sent
                    .borrow_mut()
                    .get_mut(f.req.command as usize)
                {
                    *n += count;
                }
            }
            continue;
        }
        carried_measured = true;
        if let Some(cluster) = &ctx.cluster {
            cold_path();
            rec.node(slot % cluster.len()).sent += count;
        }
        if !f.req.retry {
            rec.commands[f.req.command as usize].sent += count;
            measured += count;
        }
    }
    fifo.mark_written();
    if measured > 0 {
        ctx.in_flight.set(ctx.in_flight.get() + measured);
        ctx.last_send.set(sent);
    }
    carried_measured
}

/// Waits for bytes, for new work (`want_work`), for the batch's flush time
/// (`--workers`), or for the oldest request's timeout. (A wait for bytes alone is a
/// plain read, made by the caller.)
async fn wait(
    c: &mut Connection,
    ctx: &Ctx,
    slot: usize,
    want_work: bool,
    deadline: Option<Instant>,
    flush_at: Option<Instant>,
) -> Event {
    let wake = &ctx.wake[slot];
    let timeout = async {
        match deadline {
            Some(d) => tokio::time::sleep_until(d.into()).await,
            None => std::future::pending().await,
        }
    };
    // A flush delay is often far below tokio's 1 ms timer: hybrid pacing sleeps the
    // long part and yield-spins the rest (replies are still read meanwhile).
    let work = async {
        match flush_at {
            _ if want_work => wake.notified().await,
            Some(at) => wait_until(at, Pacing::Hybrid, &ctx.spin).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        r = c.read_some() => Event::Read(r),
        _ = work => Event::Work,
        _ = timeout => Event::Timeout,
    }
}
