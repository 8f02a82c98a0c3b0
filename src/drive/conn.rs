//! The connection loop: the one loop every mode runs. Fill (claim a closed-loop batch,
//! or take the arrivals the scheduler handed over), write once, read replies, record.
//!
//! Clock reads: one before each write (the `sent` of the batch; in closed loop also its
//! intended and handled time) and one after each read (the `received` of every reply
//! that read completed). Nothing else on this path reads the clock, but for a timed closed
//! loop's check of its end time (one per batch).

use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::since;
use super::thread::Ctx;
use crate::config::Mode;
use crate::net::{Connection, Incoming, NetError};
use crate::record::{ReplyRun, ReplyTimes};

/// First reconnect delay; doubled per failure up to [`BACKOFF_MAX`].
const BACKOFF_START: Duration = Duration::from_millis(10);
/// Longest delay between reconnect attempts.
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// A request written and not yet answered.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    intended: Instant,
    handled: Instant,
    sent: Instant,
    command: u16,
    measured: bool,
}

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
    let mut fifo: VecDeque<InFlight> = VecDeque::with_capacity(cap);
    // --batch-latency: replies of a closed-loop batch are recorded when its last one arrives.
    let mut deferred: Vec<Deferred> = Vec::with_capacity(if ctx.plan.batch_latency { cap } else { 0 });
    let mut backoff = BACKOFF_START;
    let mut down_since: Option<Instant> = None;

    loop {
        let Some(c) = conn.as_mut() else {
            // A batch cut short by a failure never gets its last reply: the replies it did
            // get are completed requests all the same, timed to the last that arrived.
            if let Some(&(_, _, last)) = deferred.last() {
                flush_deferred(&ctx, &mut deferred, last);
            }
            if ctx.sending_done.get() || ctx.shared.cancel.is_cancelled() {
                break;
            }
            match Connection::open(&ctx.endpoint, &ctx.handshake, ctx.connect_timeout, ctx.limits).await {
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

        // A rate-capped closed loop waits for the limiter before each batch; the wait is
        // not timed (that is what such tools do, and what the comparison shows).
        if !is_open
            && fifo.is_empty()
            && let Some(limiter) = &ctx.shared.limiter
        {
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
        // Fill: encode every request this connection may send now into one buffer.
        let wrote = if is_open { fill_open(&ctx, slot, c, &mut fifo) } else { fill_closed(&ctx, c, &mut fifo, cap) };
        if wrote > 0 {
            ctx.spin.work.set(ctx.spin.work.get() + 1);
            let sent = Instant::now();
            let start = fifo.len() - wrote;
            for req in fifo.range_mut(start..) {
                if is_open {
                    req.sent = sent;
                } else {
                    // Closed loop has no plan: intended = handled = sent.
                    *req = InFlight { intended: sent, handled: sent, sent, ..*req };
                }
            }
            count_sent(&ctx, &fifo, start, sent);
            if let Err(e) = c.flush().await {
                fail(&ctx, slot, &mut fifo, &e);
                conn = None;
                continue;
            }
        }

        if fifo.is_empty() {
            if !is_open {
                // Nothing claimed: the run is over for this connection.
                break;
            }
            if ctx.sending_done.get() && ctx.dispatch.borrow().slots[slot].pending.is_empty() {
                break;
            }
            // Idle, but still watching the socket: a reply that nobody asked for must be
            // seen now, not taken later as the answer to the next request, and a server
            // that closed the connection is reconnected before work arrives for it.
            match wait(c, &ctx, slot, true, None).await {
                Event::Work | Event::Timeout => {}
                Event::Read(Ok(_)) => {
                    if let Err(e) = take_replies(&ctx, slot, c, &mut fifo, &mut deferred, Instant::now()) {
                        fail(&ctx, slot, &mut fifo, &e);
                        conn = None;
                    }
                }
                Event::Read(Err(e)) => {
                    fail(&ctx, slot, &mut fifo, &e);
                    conn = None;
                }
            }
            continue;
        }

        let room = fifo.len() < cap;
        let deadline = ctx.plan.timeout.and_then(|t| fifo.front().map(|f| f.sent + t));
        let event = wait(c, &ctx, slot, is_open && room, deadline).await;
        match event {
            Event::Work => {}
            Event::Timeout => {
                end_in_flight(&ctx, slot, &mut fifo, "timeout", true);
                conn = None;
            }
            Event::Read(Err(e)) => {
                fail(&ctx, slot, &mut fifo, &e);
                conn = None;
            }
            Event::Read(Ok(_)) => {
                ctx.spin.work.set(ctx.spin.work.get() + 1);
                let received = Instant::now();
                if let Err(e) = take_replies(&ctx, slot, c, &mut fifo, &mut deferred, received) {
                    fail(&ctx, slot, &mut fifo, &e);
                    conn = None;
                } else if !is_open && fifo.is_empty() && ctx.plan.reconnect_each_request {
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
fn fill_closed(ctx: &Ctx, c: &mut Connection, fifo: &mut VecDeque<InFlight>, pipeline: usize) -> usize {
    if !fifo.is_empty() {
        return 0;
    }
    let n = ctx.claim(pipeline);
    if n == 0 {
        return 0;
    }
    let mut sampler = ctx.sampler.borrow_mut();
    let mut rec = ctx.rec.borrow_mut();
    let placeholder = ctx.start;
    for _ in 0..n {
        let command = ctx.test.pick(&mut sampler);
        ctx.test.write(command, c.write_buf(), &mut sampler);
        rec.commands[command].intended += 1;
        fifo.push_back(InFlight {
            intended: placeholder,
            handled: placeholder,
            sent: placeholder,
            command: command as u16,
            measured: true,
        });
    }
    n
}

/// Open loop: encode every arrival the scheduler handed to this connection.
fn fill_open(ctx: &Ctx, slot: usize, c: &mut Connection, fifo: &mut VecDeque<InFlight>) -> usize {
    let mut dispatch = ctx.dispatch.borrow_mut();
    let pending = &mut dispatch.slots[slot].pending;
    if pending.is_empty() {
        return 0;
    }
    let mut sampler = ctx.sampler.borrow_mut();
    let mut n = 0;
    while let Some(a) = pending.pop_front() {
        ctx.test.write(a.command as usize, c.write_buf(), &mut sampler);
        fifo.push_back(InFlight { intended: a.intended, handled: a.handled, sent: a.handled, command: a.command, measured: a.measured });
        n += 1;
    }
    n
}

/// Counts the requests from `start` as sent and in flight.
fn count_sent(ctx: &Ctx, fifo: &VecDeque<InFlight>, start: usize, sent: Instant) {
    let mut rec = ctx.rec.borrow_mut();
    let mut measured = 0;
    for req in fifo.range(start..).filter(|r| r.measured) {
        rec.commands[req.command as usize].sent += 1;
        measured += 1;
    }
    if measured > 0 {
        ctx.in_flight.set(ctx.in_flight.get() + measured);
        ctx.last_send.set(sent);
        let mut counts = ctx.send_counts.borrow_mut();
        if !counts.window.is_zero() {
            let window = (since(ctx.measure_from, sent) / crate::record::nanos(counts.window)) as usize;
            if let Some(count) = counts.counts.get_mut(window) {
                *count += measured as u32;
            }
        }
    }
}

/// Waits for bytes, for new work (open loop with room), or for the oldest request's timeout.
async fn wait(c: &mut Connection, ctx: &Ctx, slot: usize, want_work: bool, deadline: Option<Instant>) -> Event {
    let wake = &ctx.wake[slot];
    match (want_work, deadline) {
        // The common closed-loop case: just read (no select machinery on the hot path).
        (false, None) => Event::Read(c.read_some().await),
        (want_work, deadline) => {
            let timeout = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d.into()).await,
                    None => std::future::pending().await,
                }
            };
            let work = async { if want_work { wake.notified().await } else { std::future::pending().await } };
            tokio::select! {
                biased;
                r = c.read_some() => Event::Read(r),
                _ = work => Event::Work,
                _ = timeout => Event::Timeout,
            }
        }
    }
}

/// Takes every whole reply from the read buffer and records it against its request.
fn take_replies(
    ctx: &Ctx,
    slot: usize,
    c: &mut Connection,
    fifo: &mut VecDeque<InFlight>,
    deferred: &mut Vec<Deferred>,
    received: Instant,
) -> Result<(), NetError> {
    let mut answered = 0usize;
    let mut run = ReplyRun::new(received, matches!(ctx.plan.mode, Mode::Open { .. }));
    let result = (|| {
        loop {
            // Plain replies (not errors, not pushes) in bulk: the common case, and cheaper
            // per reply than going through `next_reply`.
            let plain = c.take_plain_replies(fifo.len());
            for req in fifo.drain(..plain) {
                answered += 1;
                complete(ctx, &req, Incoming::Ok, received, deferred, &mut run);
            }
            let Some(incoming) = c.next_reply()? else { break };
            if incoming == Incoming::Push {
                continue;
            }
            let Some(req) = fifo.pop_front() else { return Err(c.unsolicited()) };
            answered += 1;
            complete(ctx, &req, incoming, received, deferred, &mut run);
        }
        Ok(())
    })();
    run.flush(&ctx.rec);
    if answered > 0 {
        ctx.last_reply.set(received);
        ctx.dispatch.borrow_mut().release(slot, answered);
    }
    if fifo.is_empty() {
        flush_deferred(ctx, deferred, received);
    }
    result
}

/// A reply held back by --batch-latency: (command, sent, received).
type Deferred = (u16, Instant, Instant);

/// Records every held-back reply, each timed from its send to `until` (the batch's last reply).
fn flush_deferred(ctx: &Ctx, deferred: &mut Vec<Deferred>, until: Instant) {
    if deferred.is_empty() {
        return;
    }
    let mut rec = ctx.rec.borrow_mut();
    for (command, sent, _) in deferred.drain(..) {
        let ns = since(sent, until);
        rec.record_reply(command as usize, &ReplyTimes { response_ns: ns, service_ns: ns, lag_ns: None, queue_wait_ns: None });
    }
}

/// Records one answered request (a success into `run`, recorded when the run ends).
/// Always inlined: once per reply, and the bulk path's `Incoming::Ok` then folds away.
#[inline(always)]
fn complete(ctx: &Ctx, req: &InFlight, incoming: Incoming, received: Instant, deferred: &mut Vec<Deferred>, run: &mut ReplyRun) {
    if !req.measured {
        return;
    }
    ctx.in_flight.set(ctx.in_flight.get() - 1);
    match incoming {
        Incoming::Error { kind, message } => {
            ctx.rec.borrow_mut().commands[req.command as usize].count_error(&kind, 1);
            if ctx.plan.exit_on_error {
                ctx.shared.stop(format!("error reply from the server: {message}"));
            }
        }
        Incoming::Ok | Incoming::Push => {
            if ctx.plan.batch_latency {
                deferred.push((req.command, req.sent, received));
                return;
            }
            run.add(&ctx.rec, req.command as usize, req.intended, req.handled, req.sent);
        }
    }
}

/// The connection failed: every request in flight on it ends as an error of `e`'s kind.
///
/// A protocol error (bytes that are not RESP, a reply over the limits, a reply nobody
/// asked for, a push on a RESP2 connection) also ends the run, with `e` as the reason:
/// the byte stream cannot be trusted, so later numbers would be suspect, and when no
/// request was in flight the reason is the only trace of the fault. Closes and resets
/// do not end it: a killed or restarted connection is a fault the open loop measures.
fn fail(ctx: &Ctx, slot: usize, fifo: &mut VecDeque<InFlight>, e: &NetError) {
    if matches!(e, NetError::Protocol { .. } | NetError::Unsolicited { .. }) {
        ctx.shared.stop(e.to_string());
    }
    end_in_flight(ctx, slot, fifo, e.kind(), false);
}

/// The connection failed or timed out: every request in flight on it ends as `kind`
/// (or as a timeout), and the slot takes no work until it reconnects.
fn end_in_flight(ctx: &Ctx, slot: usize, fifo: &mut VecDeque<InFlight>, kind: &str, timeout: bool) {
    let mut rec = ctx.rec.borrow_mut();
    for req in fifo.drain(..).filter(|r| r.measured) {
        ctx.in_flight.set(ctx.in_flight.get() - 1);
        let record = &mut rec.commands[req.command as usize];
        if timeout {
            record.timeouts += 1;
        } else {
            record.count_error(kind, 1);
        }
    }
    ctx.dispatch.borrow_mut().slot_down(slot);
}
