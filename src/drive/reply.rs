//! What a connection does with what comes back: takes every whole reply from its read
//! buffer and records it against its request (in order, oldest first), follows cluster
//! redirects, and ends every request in flight when the connection fails or times out.
//! The times are turned into durations by `request::reply_times` only.

use std::hint::cold_path;
use std::time::Instant;

use super::ctx::Ctx;
use super::inflight::InFlightQueue;
use super::request::{InFlight, ReplyBurst, reply_times, since};
use super::route::{Cluster, Resend};
use crate::net::{Connection, Incoming, NetError, PLAIN_AT_ONCE};
use crate::record::{Recorder, Timing};
use crate::text::printable;

/// Replies held back by `--batch-latency`: (command, sent, received, how many).
pub(crate) type Deferred = (u16, Instant, Instant, u32);

/// Takes every whole reply from the read buffer and records it against its request, with
/// the times a run of `timing` records. Returns how many requests were answered, and
/// whether the bytes could be trusted.
pub(crate) fn take_replies(
    ctx: &Ctx,
    slot: usize,
    c: &mut Connection,
    fifo: &mut InFlightQueue,
    deferred: &mut Vec<Deferred>,
    received: Instant,
    timing: Timing,
) -> (usize, Result<(), NetError>) {
    // A reply belongs to the interval its `received` time falls in: the records move
    // on first when this read is past the current interval's end (see `IntervalClock`).
    ctx.reply_at(received);
    let mut answered = 0usize;
    let mut burst = ReplyBurst::new(received, timing);
    let result = (|| {
        loop {
            // Plain replies (not errors, not pushes) in bulk: the common case, and cheaper
            // per reply than going through `next_reply`; `nulls` marks the nulls among them,
            // so that each burst's misses are counted at once.
            let (plain, nulls) = c.take_plain_replies(fifo.len());
            let mut at = 0;
            fifo.take_front(plain, |f, count| {
                let misses = nulls_among(nulls, at, count);
                at += count as usize;
                // The reply to ASKING: the request after it tells how the redirect went.
                if !f.is_asking {
                    answered += count as usize;
                    complete(
                        ctx,
                        slot,
                        f,
                        count,
                        misses,
                        Incoming::Ok,
                        deferred,
                        &mut burst,
                    );
                }
            });
            if plain == PLAIN_AT_ONCE {
                // Perhaps more of them.
                continue;
            }
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
            if f.is_asking {
                // The reply to ASKING: the request after it tells how the redirect went.
                continue;
            }
            answered += 1;
            let misses = u32::from(incoming == Incoming::Nil);
            complete(ctx, slot, &f, 1, misses, incoming, deferred, &mut burst);
        }
        Ok(())
    })();
    burst.flush(&ctx.rec);
    if answered > 0 {
        ctx.last_reply.set(received);
    }
    // Replies are held back only with --batch-latency: checked here, so other runs make
    // no call.
    if fifo.is_empty() && !deferred.is_empty() {
        flush_deferred(ctx, deferred, received);
    }
    (answered, result)
}

/// Records every held-back reply, each timed from its send to `until` (the batch's last
/// reply). Plain closed loop only: the response time is all there is.
pub(crate) fn flush_deferred(ctx: &Ctx, deferred: &mut Vec<Deferred>, until: Instant) {
    let mut rec = ctx.rec.borrow_mut();
    for (command, sent, _, count) in deferred.drain(..) {
        let times = reply_times(Timing::Closed, sent, sent, sent, until);
        rec.record_replies(usize::from(command), &times, count.into());
    }
}

/// Records `count` answered requests alike (a success into `burst`, recorded when the
/// burst ends; `misses` of them null replies), or sends one again where a cluster
/// redirect points (an error reply is always one request). Always inlined: once per burst of replies, and the bulk path's
/// `Incoming::Ok` then folds away. What only a cluster, an error reply or
/// `--batch-latency` needs is kept out of line, off the per-batch path.
#[inline(always)]
#[expect(
    clippy::too_many_arguments,
    reason = "inlined into the reply loop; its state passed as it is, not bundled per burst"
)]
fn complete(
    ctx: &Ctx,
    slot: usize,
    f: &InFlight,
    count: u32,
    misses: u32,
    incoming: Incoming,
    deferred: &mut Vec<Deferred>,
    burst: &mut ReplyBurst,
) {
    let req = &f.req;
    if let Some(cluster) = &ctx.cluster
        && complete_on_cluster(ctx, cluster, slot, f, count, &incoming, burst.received())
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
        Incoming::Ok | Incoming::Nil | Incoming::Push => {
            // Which commands are reads was decided when the test was built; a write's
            // replies (and a read's on a run that counts none) skip this.
            if ctx.counts_hits[usize::from(req.command)] {
                count_hits(ctx, req.command, count, misses);
            }
            if ctx.plan.batch_latency {
                cold_path();
                deferred.push((req.command, f.sent, burst.received(), count));
                return;
            }
            burst.add(&ctx.rec, f, count);
        }
    }
}

/// Against a cluster: follows a `MOVED` or `ASK` redirect (true: the request was sent
/// again and is not answered yet), or counts the reply against its node and its client's
/// batch.
#[cold]
#[inline(never)]
fn complete_on_cluster(
    ctx: &Ctx,
    cluster: &Cluster,
    slot: usize,
    f: &InFlight,
    count: u32,
    incoming: &Incoming,
    received: Instant,
) -> bool {
    let req = &f.req;
    let mut rec = ctx.rec.borrow_mut();
    if let Incoming::Error { kind, message } = incoming
        && (kind == "MOVED" || kind == "ASK")
        && let Some(resend) = cluster.follow(slot, req, message, &mut rec)
    {
        send_again(ctx, cluster, resend, &mut rec);
        return true;
    }
    if !ctx.plan.is_open() {
        batch_members_done(ctx, cluster, req.group as usize, count);
    }
    if req.measured {
        let node = rec.node(slot % cluster.len());
        match incoming {
            Incoming::Error { .. } => node.errors += u64::from(count),
            Incoming::Ok | Incoming::Nil | Incoming::Push => {
                node.completed += u64::from(count);
                let times =
                    reply_times(ctx.plan.timing, req.intended, req.handled, f.sent, received);
                node.response
                    .record_n(times.response_ns.max(1), count.into());
            }
        }
    }
    false
}

/// Hands a redirected request to a connection of the master it was sent to: in closed
/// loop its client's, in open loop any with room, else the backlog.
fn send_again(ctx: &Ctx, cluster: &Cluster, resend: Resend, rec: &mut Recorder) {
    let Resend { request, to } = resend;
    let mut dispatch = ctx.dispatch.borrow_mut();
    if !ctx.plan.is_open() {
        dispatch.push_to(request.group as usize * cluster.len() + to, request);
    } else if !dispatch.offer(request, to, rec) && request.measured {
        // No room anywhere: counted as not sent by `offer`, so it is no longer in flight.
        ctx.in_flight.set(ctx.in_flight.get() - 1);
    }
}

/// `count` replies to a read of `command`, `misses` of them nulls and the rest hits.
#[inline]
fn count_hits(ctx: &Ctx, command: u16, count: u32, misses: u32) {
    let mut rec = ctx.rec.borrow_mut();
    let record = &mut rec.commands[usize::from(command)];
    record.misses += u64::from(misses);
    record.hits += u64::from(count - misses);
}

/// How many of the `count` replies from the `at`th on are marked null in `nulls` (bit `i`:
/// the `i`th reply of a [`Connection::take_plain_replies`] call).
#[inline(always)]
fn nulls_among(nulls: u64, at: usize, count: u32) -> u32 {
    if nulls == 0 || at >= 64 {
        return 0;
    }
    let mask = if count >= 64 {
        u64::MAX
    } else {
        (1 << count) - 1
    };
    ((nulls >> at) & mask).count_ones()
}

/// An error reply to a request of `command`, counted by its kind; with `-e` it ends the
/// run.
#[cold]
#[inline(never)]
fn count_error(ctx: &Ctx, command: u16, count: u32, kind: &str, message: &str) {
    ctx.rec.borrow_mut().commands[command as usize].count_error(kind, message, count.into());
    if ctx.plan.run.exit_on_error {
        ctx.shared.stop(format!(
            "error reply from the server: {}",
            printable(message)
        ));
    }
}

/// Closed loop against a cluster: `count` requests of client `group`'s batch ended; the
/// last wakes the client's lead connection, which starts the next batch.
fn batch_members_done(ctx: &Ctx, cluster: &Cluster, group: usize, count: u32) {
    let outstanding = &cluster.outstanding[group];
    outstanding.set(outstanding.get().saturating_sub(count));
    if outstanding.get() == 0
        && let Some(lead) = ctx.lead_of(group)
    {
        ctx.wake[lead].notify_one();
    }
}

/// The connection failed: every request in flight on it ends as an error of `e`'s kind.
///
/// A protocol error (bytes that are not RESP, a reply over the limits, a reply nobody
/// asked for, a push on a RESP2 connection) also ends the run, with `e` as the reason:
/// the byte stream cannot be trusted, so later numbers would be suspect, and when no
/// request was in flight the reason is the only trace of the fault. Closes and resets
/// do not end it: a killed or restarted connection is a fault the open loop measures.
pub(crate) fn fail(ctx: &Ctx, slot: usize, fifo: &mut InFlightQueue, e: &NetError) {
    if e.ends_run() {
        ctx.shared.stop(e.to_string());
    }
    end_in_flight(ctx, slot, fifo, e.kind(), false);
}

/// The connection failed or timed out: every request in flight on it ends as `kind`
/// (or as a timeout), and the slot takes no work until it reconnects.
pub(crate) fn end_in_flight(
    ctx: &Ctx,
    slot: usize,
    fifo: &mut InFlightQueue,
    kind: &str,
    timeout: bool,
) {
    // Down before its requests end: the last of a client's batch wakes the client's
    // lead (its first connection that is up), and a lead that is this one would be woken
    // only to find its connection gone, leaving the client stalled for the rest of the
    // run.
    ctx.dispatch.borrow_mut().slot_down(slot);
    // A lead may also have been woken for its client's next batch (the last one's last
    // reply came on another connection) and found its connection gone before it claimed
    // it (its wait takes a read before new work, so a close that came with the wake-up
    // wins): with nothing of the client's outstanding, no reply is left to wake the next
    // lead, so it is woken here.
    if let Some(cluster) = &ctx.cluster
        && !ctx.plan.is_open()
    {
        batch_members_done(ctx, cluster, slot / cluster.len(), 0);
    }
    let mut rec = ctx.rec.borrow_mut();
    let now = Instant::now();
    fifo.drain(|f, count| {
        let req = f.req;
        if f.is_asking {
            return;
        }
        if let Some(cluster) = &ctx.cluster {
            if !ctx.plan.is_open() {
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
            req.give_up(record, now, count.into());
        } else {
            record.count_error(kind, kind, count.into());
        }
    });
    drop(rec);
    // A lost node may be a failed master: its slots are read again until another
    // serves them.
    if let Some(cluster) = &ctx.cluster {
        cluster.request_refresh();
    }
    ctx.wake_all_if_done();
}

/// The run is over with `fifo`'s requests unanswered: each stays counted in flight at
/// the end, and its age now goes into the response times (see
/// [`crate::record::CommandRecord::record_unanswered`]).
pub(crate) fn give_up_in_flight(ctx: &Ctx, fifo: &mut InFlightQueue) {
    // Called while a task is dropped: a record borrowed elsewhere (a panic on the way)
    // is left as it is rather than panicking again.
    let Ok(mut rec) = ctx.rec.try_borrow_mut() else {
        return;
    };
    let now = Instant::now();
    fifo.drain(|f, count| {
        if f.is_asking || !f.req.measured {
            return;
        }
        let record = &mut rec.commands[f.req.command as usize];
        f.req.give_up(record, now, count.into());
        record.note_unanswered_wait(since(f.sent, now));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nulls_of_each_burst_are_counted_from_its_place_in_the_mask() {
        // Replies 0..64: nulls at 1, 2 and 63.
        let nulls = 0b110 | 1 << 63;
        assert_eq!(nulls_among(nulls, 0, 1), 0);
        assert_eq!(nulls_among(nulls, 0, 3), 2);
        assert_eq!(nulls_among(nulls, 2, 61), 1);
        assert_eq!(nulls_among(nulls, 3, 61), 1);
        assert_eq!(nulls_among(nulls, 0, 64), 3);
        assert_eq!(nulls_among(nulls, 63, 1), 1);
        assert_eq!(nulls_among(0, 0, 64), 0);
        assert_eq!(nulls_among(u64::MAX, 0, 64), 64);
    }
}
