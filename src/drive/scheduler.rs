//! The open-loop scheduler of one thread: turns its arrival source's due offsets (a
//! rate's schedule or a replayed trace, `arrivals.rs`) into requests with computed
//! intended times and offers them to the dispatcher, one batch per wake-up. Intended
//! times come from the source only (`start + offset`); the one clock read per wake-up is
//! each request's handled time.

use std::hint::cold_path;
use std::rc::Rc;
use std::time::Instant;

use super::arrivals::{Arrival, Due};
use super::ctx::Ctx;
use super::request::{Request, since};
use super::schedule::{Pacing, wait_until};
use crate::record::nanos;

/// Most requests one [`hand_out`] takes from the schedule. A thread that has fallen
/// behind (a rate above what it can send, a stall of the host) may find a great many due
/// at once; taken in slices, the connections write between two slices and Ctrl+C is
/// seen after each, instead of after the whole arrears.
const MOST_PER_HAND_OUT: usize = 1024;

/// Hands every request of the thread's arrival source that is due by `now` to a
/// connection (or the backlog), as one batch taken at `now`: each one's lag is
/// `now - intended`, and its latency still counts from `intended`. The scheduler calls it
/// when it wakes; so does a connection that has just read the clock for a reply, so that
/// on a busy thread due requests are taken between any two tasks rather than only when
/// the scheduler's turn comes round (which, with many connections ready, can be tens of
/// microseconds).
///
/// One loop for every source (`arrivals.rs`): a process's request goes to the
/// connection in turn (against a cluster, of its key's node); a replayed command to its
/// recorded client's connection, with the bytes it was recorded with.
///
/// Takes at most [`MOST_PER_HAND_OUT`] requests; returns false when it left due ones
/// behind (the caller yields before the next slice).
pub(crate) fn hand_out(ctx: &Ctx, now: Instant) -> bool {
    let mut arrivals = ctx.arrivals.borrow_mut();
    let (Some(arrivals), Some(end)) = (arrivals.as_mut(), ctx.end) else {
        return true;
    };
    if ctx.shared.cancel.is_cancelled() {
        ctx.next_due.set(None);
        return true;
    }
    let mut dispatch = ctx.dispatch.borrow_mut();
    let mut rec = ctx.rec.borrow_mut();
    let mut sampler = ctx.sampler.borrow_mut();
    dispatch.begin_batch();
    let mut handled = 0;
    let caught_up = 'out: {
        for _ in 0..MOST_PER_HAND_OUT {
            let intended = match arrivals.due(ctx.start) {
                Due::At(intended) if intended < end && intended <= now => intended,
                due => {
                    ctx.next_due.set(due.wake_at(now, end));
                    break 'out true;
                }
            };
            let Some(arrival) = arrivals.take(&ctx.test, &mut sampler) else {
                break;
            };
            let measured = intended >= ctx.measure_from;
            let command = arrival.command();
            if measured {
                rec.commands[command].intended += 1;
                handled += 1;
            } else {
                cold_path();
            }
            let mut request = Request::new(intended, now, command as u16, measured);
            match arrival {
                Arrival::Picked(_) => {
                    let node = match &ctx.cluster {
                        Some(cluster) => {
                            request.key = ctx.test.draw_key(&mut sampler);
                            cluster.node_for(&ctx.test, command, request.key)
                        }
                        None => 0,
                    };
                    dispatch.offer(request, node, &mut rec);
                }
                Arrival::Traced(item, bytes) => {
                    request.traced_len = item.len;
                    let slot = item.slot as usize;
                    if dispatch.offer_to(slot, request, &mut rec) {
                        dispatch.slots[slot].traced.push(bytes, item.db);
                    }
                }
            }
        }
        // Cut short: what comes next may be due already.
        let next = arrivals.due(ctx.start).wake_at(now, end);
        ctx.next_due.set(next);
        next.is_none_or(|next| next > now)
    };
    count_handled(ctx, now, handled);
    caught_up
}

/// Counts `handled` measured requests handed out at `now` in their window, for the
/// Poisson check: the arrivals as the generator handled them. A request that then waited
/// for a connection the server had not freed (queue wait, the server's doing) keeps its
/// place here; a generator that was late and handed out a burst does not.
fn count_handled(ctx: &Ctx, now: Instant, handled: u32) {
    if handled == 0 {
        return;
    }
    let mut counts = ctx.send_counts.borrow_mut();
    if counts.window.is_zero() {
        return;
    }
    let window = (since(ctx.measure_from, now) / nanos(counts.window)) as usize;
    if let Some(count) = counts.counts.get_mut(window) {
        *count += handled;
    }
}

/// Whether a request is due by `now` (a connection's check after each read: one compare).
#[inline]
pub(crate) fn due(ctx: &Ctx, now: Instant) -> bool {
    ctx.next_due.get().is_some_and(|next| next <= now)
}

/// The open-loop scheduler of one thread: waits for the next intended time (as
/// `pacing` says), hands out every due request in one batch, and wakes the connections
/// that got work. Intended times come from the arrival source only.
pub(crate) async fn scheduler_loop(ctx: Rc<Ctx>, pacing: Pacing) {
    let mut wakes = Vec::with_capacity(ctx.wake.len());
    while let Some(next) = ctx.next_due.get() {
        if ctx.shared.cancel.is_cancelled() {
            break;
        }
        wait_until(next, pacing, &ctx.spin).await;
        let caught_up = hand_out(&ctx, Instant::now());
        ctx.dispatch.borrow_mut().take_wakes(&mut wakes);
        for &slot in &wakes {
            ctx.wake[slot].notify_one();
        }
        if !caught_up {
            // The wait above returns at once for a passed deadline: without this the
            // scheduler would hand out all its arrears before any connection could write
            // or the thread could see Ctrl+C.
            tokio::task::yield_now().await;
        }
    }
    ctx.sending_done.set(true);
    for wake in &ctx.wake {
        wake.notify_one();
    }
}
