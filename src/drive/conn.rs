//! The connection loop: the one loop every mode runs. Fill (claim a closed-loop batch,
//! or take the requests handed over: the scheduler's arrivals, a cluster client's
//! routed batch, redirected requests), write once, read replies, record.
//!
//! Clock reads: one before each write (the `sent` of the batch; in closed loop also its
//! intended and handled time) and one after each read (the `received` of every reply
//! that read completed). With `--workers`, one more before each fill (the request time
//! of the requests workers hand to the batch then, see `batch.rs`), and a partial batch
//! waiting out a sub-millisecond `--pipeline-delay` spins on it. Nothing else on this
//! path reads the clock, but for a timed closed loop's check of its end time (one per batch).

use std::hint::cold_path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::batch::Batch;
use super::dispatch::{self, Arrival};
use super::inflight::{InFlight, InFlightQueue};
use super::plan::Mode;
use super::route;
use super::schedule::Pacing;
use super::since;
use super::thread::Ctx;
use crate::net::{Connection, Incoming, NetError};
use crate::record::{ReplyRun, ReplyTimes, nanos};

/// First reconnect delay; doubled per failure up to [`BACKOFF_MAX`].
const BACKOFF_START: Duration = Duration::from_millis(10);
/// Longest delay between reconnect attempts.
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// What woke the loop while it waited.
enum Event {
    Read(Result<usize, NetError>),
    Work,
    Timeout,
}

/// Runs one connection until the run ends.
pub(crate) async fn connection_loop(ctx: Rc<Ctx>, slot: usize, conn: Connection) {
    let mut conn = Some(conn);
    let cap = ctx.capacity();
    let is_open = matches!(ctx.plan.mode, Mode::Open { .. });
    let routed = ctx.routed();
    let mut fifo = InFlightQueue::with_capacity(cap);
    // --workers: the requests this connection's workers handed over, not yet written.
    let mut batch = ctx.batch(slot);
    // --batch-latency: replies of a closed-loop batch are recorded when its last one arrives.
    let mut deferred: Vec<Deferred> =
        Vec::with_capacity(if ctx.plan.batch_latency { cap } else { 0 });
    let mut backoff = BACKOFF_START;
    let mut down_since: Option<Instant> = None;

    loop {
        let Some(c) = conn.as_mut() else {
            cold_path();
            // A batch cut short by a failure never gets its last reply: the replies it did
            // get are completed requests all the same, timed to the last that arrived.
            if let Some(&(_, _, last, _)) = deferred.last() {
                flush_deferred(&ctx, &mut deferred, last);
            }
            if ctx.sending_done.get() || ctx.shared.cancel.is_cancelled() {
                break;
            }
            // Boxed: connecting (and a TLS handshake) is the largest state this loop awaits,
            // and inline it would size every connection's task for it: 4,744 bytes a
            // connection instead of 2,984, most of them never touched after the start.
            match Box::pin(Connection::open(
                ctx.endpoint_of(slot),
                &ctx.handshake,
                ctx.connect_timeout,
                ctx.limits,
            ))
            .await
            {
                Ok(fresh) => {
                    conn = Some(fresh);
                    backoff = BACKOFF_START;
                    down_since = None;
                    ctx.dispatch.borrow_mut().slot_up(slot);
                }
                Err(e) => {
                    let since_down = *down_since.get_or_insert_with(Instant::now);
                    // A closed loop has no schedule to keep: give up once the server has been
                    // unreachable for longer than the connect timeout, and say why.
                    if !is_open && since_down.elapsed() > ctx.connect_timeout {
                        ctx.shared.stop(format!("lost the server: {e}"));
                        break;
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                }
            }
            continue;
        };

        // A closed loop's next batch is due when the last is answered: this connection's,
        // or against a cluster its client's, spread over the client's connections, whose
        // first connection starts every batch (the others wake it when theirs is answered).
        let closed_cluster = if is_open {
            None
        } else {
            ctx.cluster
                .as_ref()
                .filter(|c| slot.is_multiple_of(c.len()))
                .map(|c| (c, slot / c.len()))
        };
        let batch_due = match closed_cluster {
            Some((cluster, group)) => {
                cluster.outstanding[group].get() == 0 && !ctx.sending_done.get()
            }
            None => !routed && fifo.is_empty(),
        };
        // A rate-capped closed loop waits for the limiter before each batch; the wait is
        // not timed (that is what such tools do, and what the comparison shows).
        if batch_due && let Some(limiter) = &ctx.shared.limiter {
            cold_path();
            let n = std::num::NonZeroU32::new(cap as u32).unwrap_or(std::num::NonZeroU32::MIN);
            // Ask the limiter and sleep on tokio's timer: governor's own async wait sleeps on
            // a timer thread and woke late enough to hold a 20k/s cap to 11-14k/s. (Spinning
            // every waiting connection instead costs the thread so much CPU that replies
            // are read late and the measured latencies grow.)
            while let Ok(Err(not_until)) = limiter.check_n(n) {
                let now = governor::clock::Clock::now(&governor::clock::DefaultClock::default());
                tokio::time::sleep(not_until.wait_time_from(now)).await;
            }
        }
        if let Some((cluster, group)) = closed_cluster {
            cold_path();
            if route::refill(&ctx, cluster, group) > 0 {
                wake_given(&ctx);
            } else {
                ctx.wake_all_if_done();
            }
        }
        // Fill: encode every request this connection may send now into one buffer (a batch
        // of one fixed request needs no encoding: it is written from the test's copies).
        let (wrote, prepared) = match batch.as_mut() {
            _ if routed => (fill_routed(&ctx, slot, c, &mut fifo), None),
            Some(batch) => (fill_batched(&ctx, c, &mut fifo, batch), None),
            None => fill_closed(&ctx, c, &mut fifo, cap),
        };
        if wrote > 0 {
            ctx.spin.work.set(ctx.spin.work.get() + 1);
            let sent = Instant::now();
            // Closed loop has no plan: intended = handled = sent (a redirected request
            // keeps its first send, so its latency includes the detour; a --workers
            // request keeps its worker's request time).
            mark_sent(&ctx, slot, &mut fifo, sent, !is_open && batch.is_none());
            let written = match c.try_send(prepared) {
                Ok(None) => Ok(()),
                Ok(Some(sent)) => {
                    cold_path();
                    c.send_rest(prepared, sent).await
                }
                Err(e) => Err(e),
            };
            if let Err(e) = written {
                cold_path();
                fail(&ctx, slot, &mut fifo, &e);
                conn = None;
                continue;
            }
            if batch.as_ref().is_some_and(Batch::is_full) {
                // More workers were ready than one write holds: the next batch goes now.
                continue;
            }
        }

        if fifo.is_empty() {
            if !routed {
                // Nothing claimed: the run is over for this connection.
                break;
            }
            // Against a cluster a redirect may still hand this connection work while any
            // request of the thread is in flight.
            if ctx.sending_done.get()
                && ctx.dispatch.borrow().slots[slot].pending.is_empty()
                && (ctx.cluster.is_none() || ctx.in_flight.get() == 0)
            {
                break;
            }
            // Idle, but still watching the socket: a reply that nobody asked for must be
            // seen now, not taken later as the answer to the next request, and a server
            // that closed the connection is reconnected before work arrives for it.
            match wait(c, &ctx, slot, true, None, None).await {
                Event::Work | Event::Timeout => {}
                Event::Read(Ok(_)) => {
                    if let Err(e) =
                        take_replies(&ctx, slot, c, &mut fifo, &mut deferred, Instant::now())
                    {
                        fail(&ctx, slot, &mut fifo, &e);
                        conn = None;
                    }
                    wake_given(&ctx);
                }
                Event::Read(Err(e)) => {
                    fail(&ctx, slot, &mut fifo, &e);
                    conn = None;
                }
            }
            continue;
        }

        // Open loop takes new work while it has room; a cluster client takes routed and
        // redirected requests at any time.
        let want_work = if is_open { fifo.len() < cap } else { routed };
        let deadline = ctx
            .plan
            .timeout
            .and_then(|t| fifo.front().map(|f| f.sent + t));
        let flush_at = batch.as_ref().and_then(Batch::flush_at);
        let event = if want_work || deadline.is_some() || flush_at.is_some() {
            wait(c, &ctx, slot, want_work, deadline, flush_at).await
        } else {
            // The common closed-loop case: just read (no select machinery on the hot path).
            Event::Read(std::future::poll_fn(|cx| c.poll_read_some(cx)).await)
        };
        match event {
            Event::Work => {}
            Event::Timeout => {
                cold_path();
                end_in_flight(&ctx, slot, &mut fifo, "timeout", true);
                conn = None;
            }
            Event::Read(Err(e)) => {
                cold_path();
                fail(&ctx, slot, &mut fifo, &e);
                conn = None;
            }
            Event::Read(Ok(_)) => {
                ctx.spin.work.set(ctx.spin.work.get() + 1);
                let received = Instant::now();
                let taken = take_replies(&ctx, slot, c, &mut fifo, &mut deferred, received);
                // The clock was just read: take the arrivals that are due now, not when
                // the scheduler's turn comes.
                if dispatch::due(&ctx, received) {
                    dispatch::hand_out(&ctx, received);
                }
                if routed {
                    wake_given(&ctx);
                }
                if let Err(e) = taken {
                    cold_path();
                    fail(&ctx, slot, &mut fifo, &e);
                    conn = None;
                } else if !routed && fifo.is_empty() && ctx.plan.reconnect_each_request {
                    cold_path();
                    // -k 0: a new connection for every request (batch), as redis-benchmark does.
                    conn = None;
                    ctx.dispatch.borrow_mut().slot_down(slot);
                }
            }
        }
    }
    ctx.dispatch.borrow_mut().slot_down(slot);
    ctx.live.set(ctx.live.get() - 1);
    ctx.finished.notify_one();
}

/// Closed loop: when the previous batch is fully answered, claim and encode the next.
/// Returns how many requests it holds, and the bytes to write when they were prepared
/// already (the write buffer is then left empty).
fn fill_closed<'c>(
    ctx: &'c Ctx,
    c: &mut Connection,
    fifo: &mut InFlightQueue,
    pipeline: usize,
) -> (usize, Option<&'c [u8]>) {
    if !fifo.is_empty() {
        return (0, None);
    }
    let n = ctx.claim(pipeline);
    if n == 0 {
        return (0, None);
    }
    let mut sampler = ctx.sampler.borrow_mut();
    let mut rec = ctx.rec.borrow_mut();
    // Times are stamped at the write; consecutive requests of one command are one run.
    let placeholder = ctx.start;
    let mut push = |command: usize, count: u32| {
        rec.commands[command].intended += u64::from(count);
        fifo.push(
            InFlight {
                req: Arrival::new(placeholder, placeholder, command as u16, true),
                sent: placeholder,
                asking: false,
            },
            count,
        );
    };
    // One command with nothing drawn per request: the batch is that request n times.
    if let Some(bytes) = ctx.test.fixed_batch(n) {
        push(0, n as u32);
        return (n, Some(bytes));
    }
    if ctx.test.write_fixed(n, c.write_buf()) {
        push(0, n as u32);
        return (n, None);
    }
    let mut run = (0, 0u32);
    for _ in 0..n {
        let command = ctx.test.pick(&mut sampler);
        ctx.test.write(command, c.write_buf(), &mut sampler);
        if command != run.0 && run.1 > 0 {
            push(run.0, run.1);
            run.1 = 0;
        }
        run = (command, run.1 + 1);
    }
    push(run.0, run.1);
    (n, None)
}

/// Closed loop with `--workers`: idle workers hand their next requests to the batch, and
/// what the batch policy says is due is encoded for one write. Each request keeps its
/// worker's request time as intended and handled time; its `sent` is the write's.
fn fill_batched(
    ctx: &Ctx,
    c: &mut Connection,
    fifo: &mut InFlightQueue,
    batch: &mut Batch,
) -> usize {
    let now = Instant::now();
    batch.hand_requests(fifo.len(), now, |n| ctx.claim_at(n, now));
    let n = batch.due(now);
    if n == 0 {
        return 0;
    }
    let mut sampler = ctx.sampler.borrow_mut();
    let mut rec = ctx.rec.borrow_mut();
    rec.writes += 1;
    for _ in 0..n {
        let Some(asked) = batch.take() else { break };
        let command = ctx.test.pick(&mut sampler);
        ctx.test.write(command, c.write_buf(), &mut sampler);
        rec.commands[command].intended += 1;
        fifo.push(
            InFlight {
                req: Arrival::new(asked, asked, command as u16, true),
                sent: asked,
                asking: false,
            },
            1,
        );
    }
    n
}

/// `ASKING`, written before a request an `ASK` redirect sent here.
const ASKING: &[u8] = b"*1\r\n$6\r\nASKING\r\n";

/// Open loop, or a cluster client: encode every request handed to this connection.
fn fill_routed(ctx: &Ctx, slot: usize, c: &mut Connection, fifo: &mut InFlightQueue) -> usize {
    let mut dispatch = ctx.dispatch.borrow_mut();
    let pending = &mut dispatch.slots[slot].pending;
    if pending.is_empty() {
        return 0;
    }
    let mut sampler = ctx.sampler.borrow_mut();
    let mut n = 0;
    while let Some(a) = pending.pop_front() {
        if a.asking {
            c.write_buf().extend_from_slice(ASKING);
            fifo.push(
                InFlight {
                    req: a,
                    sent: a.handled,
                    asking: true,
                },
                1,
            );
            n += 1;
        }
        if ctx.cluster.is_some() {
            ctx.test
                .write_keyed(a.command as usize, c.write_buf(), &mut sampler, a.key);
        } else {
            ctx.test
                .write(a.command as usize, c.write_buf(), &mut sampler);
        }
        fifo.push(
            InFlight {
                req: a,
                sent: a.handled,
                asking: false,
            },
            1,
        );
        n += 1;
    }
    n
}

/// Wakes the connections that were handed work (by a redirect, or a cluster client's new batch).
fn wake_given(ctx: &Ctx) {
    let mut woken = std::mem::take(&mut *ctx.woken.borrow_mut());
    ctx.dispatch.borrow_mut().take_wakes(&mut woken);
    for &s in &woken {
        ctx.wake[s].notify_one();
    }
    *ctx.woken.borrow_mut() = woken;
}

/// Stamps the requests just written with their send time (and with `closed`, their
/// intended and handled time too, but for a resent one), counts them as sent and in
/// flight (a redirected request was counted when first sent; only its node counts it
/// again), and marks them written: one pass over the write's runs.
fn mark_sent(ctx: &Ctx, slot: usize, fifo: &mut InFlightQueue, sent: Instant, closed: bool) {
    let mut rec = ctx.rec.borrow_mut();
    let mut measured = 0;
    for run in fifo.unwritten_mut() {
        let (f, count) = (&mut run.f, u64::from(run.count));
        f.sent = sent;
        if closed && !f.req.retry {
            f.req.intended = sent;
            f.req.handled = sent;
        }
        if !f.req.measured || f.asking {
            continue;
        }
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
        let mut counts = ctx.send_counts.borrow_mut();
        if !counts.window.is_zero() {
            let window =
                (since(ctx.measure_from, sent) / crate::record::nanos(counts.window)) as usize;
            if let Some(count) = counts.counts.get_mut(window) {
                *count += measured as u32;
            }
        }
    }
}

/// Waits for bytes, for new work (open loop with room), for the batch's flush time
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
            Some(at) => super::schedule::wait_until(at, Pacing::Hybrid, &ctx.spin).await,
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

/// Takes every whole reply from the read buffer and records it against its request.
fn take_replies(
    ctx: &Ctx,
    slot: usize,
    c: &mut Connection,
    fifo: &mut InFlightQueue,
    deferred: &mut Vec<Deferred>,
    received: Instant,
) -> Result<(), NetError> {
    let mut answered = 0usize;
    let mut run = ReplyRun::new(received, ctx.plan.mode.timing());
    let result = (|| {
        loop {
            // Plain replies (not errors, not pushes) in bulk: the common case, and cheaper
            // per reply than going through `next_reply`.
            let plain = c.take_plain_replies(fifo.len());
            fifo.take_front(plain, |f, count| {
                // The reply to ASKING: the request after it tells how the redirect went.
                if !f.asking {
                    answered += count as usize;
                    complete(ctx, slot, f, count, Incoming::Ok, deferred, &mut run);
                }
            });
            let Some(incoming) = c.next_reply()? else {
                break;
            };
            // An error reply, a push, or a reply nobody asked for: plain replies went above.
            cold_path();
            if incoming == Incoming::Push {
                continue;
            }
            let Some(f) = fifo.pop_front() else {
                return Err(c.unsolicited());
            };
            if f.asking {
                // The reply to ASKING: the request after it tells how the redirect went.
                continue;
            }
            answered += 1;
            complete(ctx, slot, &f, 1, incoming, deferred, &mut run);
        }
        Ok(())
    })();
    run.flush(&ctx.rec);
    if answered > 0 {
        ctx.last_reply.set(received);
        // Room freed on this connection matters only where arrivals are handed out.
        if ctx.routed() {
            ctx.dispatch.borrow_mut().release(slot, answered);
        }
    }
    // Replies are held back only with --batch-latency: checked here, so other runs make no call.
    if fifo.is_empty() && !deferred.is_empty() {
        flush_deferred(ctx, deferred, received);
    }
    result
}

/// Replies held back by --batch-latency: (command, sent, received, how many).
type Deferred = (u16, Instant, Instant, u32);

/// Records every held-back reply, each timed from its send to `until` (the batch's last
/// reply). Plain closed loop only: the response time is all there is.
fn flush_deferred(ctx: &Ctx, deferred: &mut Vec<Deferred>, until: Instant) {
    let mut rec = ctx.rec.borrow_mut();
    for (command, sent, _, count) in deferred.drain(..) {
        let times = ReplyTimes {
            response_ns: since(sent, until),
            ..ReplyTimes::default()
        };
        rec.record_replies(command as usize, &times, count.into());
    }
}

/// Records `count` answered requests alike (a success into `run`, recorded when the run
/// ends), or sends one again where a cluster redirect points (an error reply is always
/// one request). Always inlined: once per run of replies, and the bulk path's
/// `Incoming::Ok` then folds away. What only a cluster, an error reply or
/// `--batch-latency` needs is kept out of line, off the per-batch path.
#[inline(always)]
fn complete(
    ctx: &Ctx,
    slot: usize,
    f: &InFlight,
    count: u32,
    incoming: Incoming,
    deferred: &mut Vec<Deferred>,
    run: &mut ReplyRun,
) {
    let req = &f.req;
    if let Some(cluster) = &ctx.cluster
        && complete_on_cluster(ctx, cluster, slot, req, count, &incoming, run.received())
    {
        return;
    }
    if !req.measured {
        cold_path();
        return;
    }
    ctx.in_flight.set(ctx.in_flight.get() - u64::from(count));
    ctx.wake_all_if_done();
    match incoming {
        Incoming::Error { kind, message } => count_error(ctx, req.command, count, &kind, &message),
        Incoming::Ok | Incoming::Push => {
            if ctx.plan.batch_latency {
                cold_path();
                deferred.push((req.command, f.sent, run.received(), count));
                return;
            }
            run.add(
                &ctx.rec,
                req.command as usize,
                req.intended,
                req.handled,
                f.sent,
                count,
            );
        }
    }
}

/// Against a cluster: follows a `MOVED` or `ASK` redirect (true: the request was sent
/// again and is not answered yet), or counts the reply against its node and its client's batch.
#[cold]
#[inline(never)]
fn complete_on_cluster(
    ctx: &Ctx,
    cluster: &route::Cluster,
    slot: usize,
    req: &Arrival,
    count: u32,
    incoming: &Incoming,
    received: Instant,
) -> bool {
    let mut rec = ctx.rec.borrow_mut();
    if let Incoming::Error { kind, message } = incoming
        && (kind == "MOVED" || kind == "ASK")
        && route::follow(ctx, cluster, slot, req, message, &mut rec)
    {
        return true;
    }
    if !matches!(ctx.plan.mode, Mode::Open { .. }) {
        batch_members_done(ctx, cluster, req.group as usize, count);
    }
    if req.measured {
        let node = rec.node(slot % cluster.len());
        match incoming {
            Incoming::Error { .. } => node.errors += u64::from(count),
            Incoming::Ok | Incoming::Push => {
                node.completed += u64::from(count);
                node.response.saturating_record_n(
                    nanos(received.saturating_duration_since(req.intended)).max(1),
                    count.into(),
                );
            }
        }
    }
    false
}

/// An error reply to a request of `command`, counted by its kind; with `-e` it ends the run.
#[cold]
#[inline(never)]
fn count_error(ctx: &Ctx, command: u16, count: u32, kind: &str, message: &str) {
    ctx.rec.borrow_mut().commands[command as usize].count_error(kind, count.into());
    if ctx.plan.exit_on_error {
        ctx.shared
            .stop(format!("error reply from the server: {message}"));
    }
}

/// Closed loop against a cluster: `count` requests of client `group`'s batch ended; the
/// last wakes the client's first connection, which starts the next batch.
fn batch_members_done(ctx: &Ctx, cluster: &route::Cluster, group: usize, count: u32) {
    let outstanding = &cluster.outstanding[group];
    outstanding.set(outstanding.get().saturating_sub(count));
    if outstanding.get() == 0 {
        ctx.wake[group * cluster.len()].notify_one();
    }
}

/// The connection failed: every request in flight on it ends as an error of `e`'s kind.
///
/// A protocol error (bytes that are not RESP, a reply over the limits, a reply nobody
/// asked for, a push on a RESP2 connection) also ends the run, with `e` as the reason:
/// the byte stream cannot be trusted, so later numbers would be suspect, and when no
/// request was in flight the reason is the only trace of the fault. Closes and resets
/// do not end it: a killed or restarted connection is a fault the open loop measures.
fn fail(ctx: &Ctx, slot: usize, fifo: &mut InFlightQueue, e: &NetError) {
    if matches!(e, NetError::Protocol { .. } | NetError::Unsolicited { .. }) {
        ctx.shared.stop(e.to_string());
    }
    end_in_flight(ctx, slot, fifo, e.kind(), false);
}

/// The connection failed or timed out: every request in flight on it ends as `kind`
/// (or as a timeout), and the slot takes no work until it reconnects.
fn end_in_flight(ctx: &Ctx, slot: usize, fifo: &mut InFlightQueue, kind: &str, timeout: bool) {
    let mut rec = ctx.rec.borrow_mut();
    fifo.drain(|f, count| {
        let req = f.req;
        if f.asking {
            return;
        }
        if let Some(cluster) = &ctx.cluster {
            if !matches!(ctx.plan.mode, Mode::Open { .. }) {
                batch_members_done(ctx, cluster, req.group as usize, count);
            }
            if req.measured {
                rec.node(slot % cluster.len()).errors += u64::from(count);
            }
        }
        if !req.measured {
            return;
        }
        ctx.in_flight.set(ctx.in_flight.get() - u64::from(count));
        let record = &mut rec.commands[req.command as usize];
        if timeout {
            record.timeouts += u64::from(count);
        } else {
            record.count_error(kind, count.into());
        }
    });
    drop(rec);
    ctx.dispatch.borrow_mut().slot_down(slot);
    ctx.wake_all_if_done();
}
