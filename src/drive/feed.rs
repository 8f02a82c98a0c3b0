//! Where a connection's requests come from, chosen once when its loop starts:
//!
//! - [`Feed::Closed`]: a plain closed loop. When its last batch is answered the
//!   connection claims the next `-P` requests itself and encodes them.
//! - [`Feed::Workers`]: `--workers`. The connection's workers hand their next requests
//!   to its [`Batch`], whose policy says when a write is due.
//! - [`Feed::Open`]: open loop. The scheduler hands requests over through the
//!   dispatcher (against a cluster, to a connection of the key's master).
//! - [`Feed::Routed`]: closed loop against a cluster. A client's first connection claims
//!   the client's batch and routes each request to the client's connection of its key's
//!   master; every connection writes what it was handed, redirects included.
//!
//! The connection loop (`conn.rs`) asks its feed what to write and what to wait for,
//! and never looks at the mode. `--workers` is refused against a cluster (`app`); given
//! both, a connection is routed.

use std::hint::cold_path;
use std::time::Instant;

use super::batch::{self, Batch};
use super::ctx::Ctx;
use super::inflight::InFlightQueue;
use super::plan::Mode;
use super::request::{InFlight, Request};
use super::route::Cluster;
use super::scheduler;
use crate::net::Connection;

/// Where one connection's requests come from.
pub(crate) enum Feed<'a> {
    /// Claims up to `pipeline` requests when the last batch is answered.
    Closed { pipeline: usize },
    /// Writes what its workers handed to `batch`, when the batch policy says so.
    Workers { batch: Batch },
    /// Writes what the scheduler handed it, up to `max_inflight` in flight; against a
    /// cluster, with each request's key as the scheduler drew it.
    Open {
        max_inflight: usize,
        cluster: Option<&'a Cluster>,
    },
    /// Writes what its client's batches and redirects handed it; the client's lead
    /// connection (its first that is up, `Ctx::lead_of`) also claims client `group`'s
    /// batches.
    Routed {
        cluster: &'a Cluster,
        group: usize,
        pipeline: usize,
    },
}

/// What a fill put in the connection's write buffer.
pub(crate) struct Filled<'t> {
    /// Requests to write (0: nothing to write now).
    pub count: usize,
    /// The bytes to write when they were prepared already (the write buffer is then
    /// left empty).
    pub prepared: Option<&'t [u8]>,
    /// The write's time is also the requests' intended and handled time (a closed loop
    /// has no plan; a redirected request keeps its first send).
    pub timed_at_write: bool,
}

impl<'a> Feed<'a> {
    /// The feed of local connection `slot` of the thread `ctx` belongs to.
    pub(crate) fn new(ctx: &'a Ctx, slot: usize) -> Self {
        let plan = &ctx.plan;
        match (&plan.run.mode, &ctx.cluster) {
            (Mode::Open { max_inflight, .. }, cluster) => Feed::Open {
                max_inflight: *max_inflight,
                cluster: cluster.as_ref(),
            },
            (Mode::Closed { pipeline, .. }, Some(cluster)) => Feed::Routed {
                cluster,
                group: slot / cluster.len(),
                pipeline: *pipeline as usize,
            },
            (
                Mode::Closed {
                    workers: Some(w), ..
                },
                None,
            ) => {
                let connection = plan.index + slot * plan.threads();
                let workers = batch::workers_on(connection, plan.run.connections, w.count);
                Feed::Workers {
                    batch: Batch::new(workers, w),
                }
            }
            (Mode::Closed { pipeline, .. }, None) => Feed::Closed {
                pipeline: *pipeline as usize,
            },
        }
    }

    /// Whether a closed-loop batch is due, the moment a rate cap's limiter is asked:
    /// this connection's last batch is answered, or against a cluster its client's.
    pub(crate) fn batch_due(&self, ctx: &Ctx, slot: usize, fifo: &InFlightQueue) -> bool {
        match self {
            Feed::Closed { .. } | Feed::Workers { .. } => fifo.is_empty(),
            Feed::Open { .. } => false,
            Feed::Routed { cluster, group, .. } => {
                cluster.outstanding[*group].get() == 0
                    && !ctx.sending_done.get()
                    && ctx.lead_of(*group).is_some_and(|lead| lead == slot)
            }
        }
    }

    /// Encodes every request this connection may send now into its write buffer (a
    /// batch of one fixed request needs no encoding: it is written from the test's
    /// copies) and queues them as in flight, not yet stamped.
    ///
    /// The plain closed loop is tested first, here and in [`Feed::waits_for`]: its
    /// per-batch path is the one whose cost matters most, and testing for it first
    /// measured cheaper than one four-way match (see bench/).
    #[inline(always)]
    pub(crate) fn fill<'t>(
        &mut self,
        ctx: &'t Ctx,
        slot: usize,
        c: &mut Connection,
        fifo: &mut InFlightQueue,
    ) -> Filled<'t> {
        if let Feed::Closed { pipeline } = self {
            let (count, prepared) = fill_closed(ctx, c, fifo, *pipeline);
            return Filled {
                count,
                prepared,
                timed_at_write: true,
            };
        }
        let (count, timed_at_write) = match self {
            // Filled above.
            Feed::Closed { .. } => (0, true),
            Feed::Workers { batch } => (fill_batched(ctx, c, fifo, batch), false),
            Feed::Open { cluster, .. } => {
                (fill_handed(ctx, slot, c, fifo, cluster.is_some()), false)
            }
            Feed::Routed {
                cluster,
                group,
                pipeline,
            } => {
                cold_path();
                let group = *group;
                if ctx.lead_of(group) == Some(slot) {
                    if route_batch(ctx, cluster, group, *pipeline) > 0 {
                        ctx.wake_given();
                    } else {
                        ctx.wake_all_if_done();
                    }
                }
                (fill_handed(ctx, slot, c, fifo, true), true)
            }
        };
        Filled {
            count,
            prepared: None,
            timed_at_write,
        }
    }

    /// More requests are ready than one write holds (`--workers`): write again at once.
    #[inline]
    pub(crate) fn has_more_ready(&self) -> bool {
        match self {
            Feed::Workers { batch } => batch.is_full(),
            _ => false,
        }
    }

    /// With nothing in flight on the connection: whether its loop is over. A connection
    /// that claims its own requests found none; one that is handed requests is over once
    /// sending is and nothing waits for it (against a cluster a redirect may still hand
    /// it work while any request of the thread is in flight).
    pub(crate) fn is_over_when_idle(&self, ctx: &Ctx, slot: usize) -> bool {
        let handed_done =
            || ctx.sending_done.get() && ctx.dispatch.borrow().slots[slot].pending.is_empty();
        match self {
            Feed::Closed { .. } | Feed::Workers { .. } => true,
            Feed::Open { cluster: None, .. } => handed_done(),
            Feed::Open {
                cluster: Some(_), ..
            }
            | Feed::Routed { .. } => handed_done() && ctx.in_flight.get() == 0,
        }
    }

    /// What the connection waits for besides replies while `in_flight` requests are
    /// out: new work (open loop with room; against a cluster, routed and redirected
    /// requests at any time), and when the batch must go (`--workers`).
    #[inline]
    pub(crate) fn waits_for(&self, in_flight: usize) -> (bool, Option<Instant>) {
        if let Feed::Closed { .. } = self {
            return (false, None);
        }
        match self {
            // Answered above.
            Feed::Closed { .. } => (false, None),
            Feed::Workers { batch } => (false, batch.flush_at()),
            Feed::Open { max_inflight, .. } => (in_flight < *max_inflight, None),
            Feed::Routed { .. } => (true, None),
        }
    }

    /// After `answered` replies were taken at `now` (`None`: while idle): room freed on
    /// a connection that is handed requests is refilled from the backlog, and the
    /// connections given work are woken. With `now`, requests due by then are handed
    /// out first: the clock was just read, so they go now, not when the scheduler's
    /// turn comes.
    #[inline]
    pub(crate) fn after_replies(
        &self,
        ctx: &Ctx,
        slot: usize,
        answered: usize,
        now: Option<Instant>,
    ) {
        match self {
            Feed::Closed { .. } | Feed::Workers { .. } => {}
            Feed::Open { .. } | Feed::Routed { .. } => {
                if answered > 0 {
                    ctx.dispatch.borrow_mut().release(slot, answered);
                }
                if let Some(now) = now
                    && scheduler::due(ctx, now)
                {
                    scheduler::hand_out(ctx, now);
                }
                ctx.wake_given();
            }
        }
    }

    /// `-k 0`: after each answered batch, a new connection (as redis-benchmark does).
    #[inline]
    pub(crate) fn reconnects_after_batch(&self, ctx: &Ctx) -> bool {
        match self {
            Feed::Closed { .. } | Feed::Workers { .. } => ctx.plan.reconnect_each_request,
            Feed::Open { .. } | Feed::Routed { .. } => false,
        }
    }

    /// A closed loop has no schedule to keep: it gives up once the server has been
    /// unreachable for longer than `--lost-server-wait`. An open loop keeps trying.
    pub(crate) fn gives_up_when_unreachable(&self) -> bool {
        !matches!(self, Feed::Open { .. })
    }
}

/// Closed loop: when the previous batch is fully answered, claims and encodes the next.
/// Returns how many requests it holds, and the bytes to write when they were prepared
/// already (the write buffer is then left empty).
fn fill_closed<'t>(
    ctx: &'t Ctx,
    c: &mut Connection,
    fifo: &mut InFlightQueue,
    pipeline: usize,
) -> (usize, Option<&'t [u8]>) {
    if !fifo.is_empty() {
        return (0, None);
    }
    let n = ctx.claim(pipeline);
    if n == 0 {
        return (0, None);
    }
    let mut sampler = ctx.sampler.borrow_mut();
    let mut rec = ctx.rec.borrow_mut();
    // Times are stamped at the write; consecutive requests of one command are one burst.
    let placeholder = ctx.start;
    let mut push = |command: usize, count: u32| {
        rec.commands[command].intended += u64::from(count);
        fifo.push(
            InFlight {
                req: Request::new(placeholder, placeholder, command as u16, true),
                sent: placeholder,
                is_asking: false,
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
    let mut burst = (0, 0u32);
    for _ in 0..n {
        let command = ctx.test.pick(&mut sampler);
        ctx.test.write(command, c.write_buf(), &mut sampler);
        if command != burst.0 && burst.1 > 0 {
            push(burst.0, burst.1);
            burst.1 = 0;
        }
        burst = (command, burst.1 + 1);
    }
    push(burst.0, burst.1);
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
                req: Request::new(asked, asked, command as u16, true),
                sent: asked,
                is_asking: false,
            },
            1,
        );
    }
    n
}

/// `ASKING`, written before a request an `ASK` redirect sent here.
const ASKING: &[u8] = b"*1\r\n$6\r\nASKING\r\n";

/// Open loop, or a cluster client: encodes every request handed to this connection
/// (`keyed`: with the key each was routed by).
fn fill_handed(
    ctx: &Ctx,
    slot: usize,
    c: &mut Connection,
    fifo: &mut InFlightQueue,
    keyed: bool,
) -> usize {
    let mut dispatch = ctx.dispatch.borrow_mut();
    let own = &mut dispatch.slots[slot];
    let (pending, traced, reopened) = (&mut own.pending, &mut own.traced, &mut own.reopened);
    if pending.is_empty() {
        return 0;
    }
    let mut sampler = ctx.sampler.borrow_mut();
    let mut n = 0;
    while let Some(req) = pending.pop_front() {
        if req.traced_len > 0 {
            // A replayed command waits on its own connection (its recorded client's)
            // for room under the in-flight bound, as the open loop's wait in the backlog.
            if fifo.len() >= ctx.plan.capacity() {
                pending.push_front(req);
                break;
            }
            let (bytes, db) = traced.take(req.traced_len as usize);
            if std::mem::take(reopened) && db != 0 {
                cold_path();
                // Its reply, like ASKING's, is not a result.
                select_again(c, fifo, req, db);
                // The server counts it: it goes beside the record, as the warm-up's.
                if let Some(i) = ctx.plan.run.mode.trace().and_then(|t| t.select_command())
                    && let Some(n) = ctx.unrecorded_sent.borrow_mut().get_mut(usize::from(i))
                {
                    *n += 1;
                }
                n += 1;
            }
            c.write_buf().extend_from_slice(bytes);
        } else {
            if req.ask_first {
                c.write_buf().extend_from_slice(ASKING);
                fifo.push(
                    InFlight {
                        req,
                        sent: req.handled,
                        is_asking: true,
                    },
                    1,
                );
                n += 1;
            }
            let command = usize::from(req.command);
            if keyed {
                ctx.test
                    .write_keyed(command, c.write_buf(), &mut sampler, req.key);
            } else {
                ctx.test.write(command, c.write_buf(), &mut sampler);
            }
        }
        fifo.push(
            InFlight {
                req,
                sent: req.handled,
                is_asking: false,
            },
            1,
        );
        n += 1;
    }
    n
}

/// Replay, on a connection opened again after a loss: writes a `SELECT` of `db`, the
/// database of `req`, before it, queued as a request whose reply is not a result.
fn select_again(c: &mut Connection, fifo: &mut InFlightQueue, req: Request, db: u32) {
    let db = db.to_string();
    let buf = c.write_buf();
    buf.extend_from_slice(format!("*2\r\n$6\r\nSELECT\r\n${}\r\n{db}\r\n", db.len()).as_bytes());
    fifo.push(
        InFlight {
            req,
            sent: req.handled,
            is_asking: true,
        },
        1,
    );
}

/// Closed loop against a cluster: when client `group`'s batch is finished, claims the
/// next and routes each request to the client's connection of its key's master.
/// Returns the requests claimed.
fn route_batch(ctx: &Ctx, cluster: &Cluster, group: usize, pipeline: usize) -> usize {
    if cluster.outstanding[group].get() > 0 {
        return 0;
    }
    let n = ctx.claim(pipeline);
    if n == 0 {
        return 0;
    }
    let mut sampler = ctx.sampler.borrow_mut();
    let mut rec = ctx.rec.borrow_mut();
    let mut dispatch = ctx.dispatch.borrow_mut();
    for _ in 0..n {
        let command = ctx.test.pick(&mut sampler);
        rec.commands[command].intended += 1;
        // Closed loop has no plan: its times are the write's, set when it is written.
        let mut req = Request::new(ctx.start, ctx.start, command as u16, true);
        req.key = ctx.test.draw_key(&mut sampler);
        req.group = group as u32;
        let node = cluster.node_for(&ctx.test, command, req.key);
        dispatch.push_to(group * cluster.len() + node, req);
    }
    cluster.outstanding[group].set(n as u32);
    n
}
