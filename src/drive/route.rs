//! Cluster routing inside one generator thread: which master each request goes to,
//! the thread's copy of the slot map (a `MOVED` updates it), following `MOVED` and
//! `ASK` redirects, and the closed-loop clients whose requests are spread over one
//! connection per master.
//!
//! A redirected request keeps its intended time, so its latency includes the detour;
//! it is counted once as sent and once as answered, and its redirects are counted
//! apart (per command and per node).

use std::cell::{Cell, RefCell};

use super::dispatch::Arrival;
use super::plan::Mode;
use super::thread::Ctx;
use crate::net::Endpoint;
use crate::net::cluster::{ClusterMap, NodeAddr, Redirect, UNOWNED};
use crate::record::Recorder;
use crate::workload::Test;

/// Redirects one request may follow before it counts as an error: a slot that keeps
/// moving means a layout the generator cannot follow, not a migration.
pub(crate) const MAX_REDIRECTS: u8 = 5;

/// One thread's view of the cluster.
pub(crate) struct Cluster {
    /// Masters, as discovered at the start.
    pub nodes: Vec<NodeAddr>,
    /// Where to connect to each.
    pub endpoints: Vec<Endpoint>,
    /// Owner of each slot (index into `nodes`), updated by `MOVED`.
    owner: RefCell<Vec<u16>>,
    /// Closed loop: each client's requests not yet finished (a new batch starts at zero).
    pub outstanding: Vec<Cell<u32>>,
    /// Spreads commands without a key over the masters.
    keyless: Cell<usize>,
}

impl Cluster {
    pub(crate) fn new(map: &ClusterMap, seed: &Endpoint, clients: usize) -> Self {
        Cluster {
            nodes: map.nodes.clone(),
            endpoints: (0..map.nodes.len())
                .map(|n| map.endpoint(n, seed))
                .collect(),
            owner: RefCell::new(map.owner.clone()),
            outstanding: (0..clients).map(|_| Cell::new(0)).collect(),
            keyless: Cell::new(0),
        }
    }

    /// The master that serves command `command` with key index `key`.
    #[inline]
    pub(crate) fn node_for(&self, test: &Test, command: usize, key: u64) -> usize {
        match test.slot(command, key) {
            Some(slot) => match self.owner.borrow()[usize::from(slot)] {
                // A slot nobody serves: any node answers it with the cluster's own error.
                UNOWNED => 0,
                node => usize::from(node),
            },
            None => {
                let n = self.keyless.get();
                self.keyless.set(n.wrapping_add(1));
                n % self.nodes.len()
            }
        }
    }

    /// Masters routed to.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }
}

/// Closed loop: when client `group`'s batch is finished, claims the next and routes each
/// request to the client's connection of its key's master. Returns the requests claimed.
pub(crate) fn refill(ctx: &Ctx, cluster: &Cluster, group: usize) -> usize {
    if cluster.outstanding[group].get() > 0 {
        return 0;
    }
    let Mode::Closed { pipeline, .. } = ctx.plan.mode else {
        return 0;
    };
    let n = ctx.claim(pipeline as usize);
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
        let mut arrival = Arrival::new(ctx.start, ctx.start, command as u16, true);
        arrival.key = ctx.test.draw_key(&mut sampler);
        arrival.group = group as u32;
        let node = cluster.node_for(&ctx.test, command, arrival.key);
        dispatch.push_to(group * cluster.len() + node, arrival);
    }
    cluster.outstanding[group].set(n as u32);
    n
}

/// An error reply `message` to `request`, sent on connection `slot`: when it is a
/// redirect the request is sent again where it points, and `true` is returned. A
/// redirect to a node outside the map, or past [`MAX_REDIRECTS`], is left to be counted
/// as an error.
pub(crate) fn follow(
    ctx: &Ctx,
    cluster: &Cluster,
    slot: usize,
    request: &Arrival,
    message: &str,
    rec: &mut Recorder,
) -> bool {
    let Some(redirect) = Redirect::parse(message) else {
        return false;
    };
    let from = slot % cluster.len();
    let node_record = rec.node(from);
    if redirect.ask {
        node_record.ask += 1;
    } else {
        node_record.moved += 1;
    }
    rec.commands[request.command as usize].redirects += 1;
    let Some(to) = cluster.nodes.iter().position(|n| *n == redirect.to) else {
        return false;
    };
    if !redirect.ask {
        cluster.owner.borrow_mut()[usize::from(redirect.slot)] = to as u16;
    }
    if request.redirects >= MAX_REDIRECTS {
        return false;
    }
    let retry = Arrival {
        redirects: request.redirects + 1,
        asking: redirect.ask,
        retry: true,
        ..*request
    };
    let mut dispatch = ctx.dispatch.borrow_mut();
    if matches!(ctx.plan.mode, Mode::Closed { .. }) {
        dispatch.push_to(request.group as usize * cluster.len() + to, retry);
    } else if !dispatch.offer(retry, to, rec) && request.measured {
        // No room anywhere: counted as not sent by `offer`, so it is no longer in flight.
        ctx.in_flight.set(ctx.in_flight.get() - 1);
    }
    true
}
