//! The layout reader of one thread against a cluster: when a redirect or a lost node
//! says the layout may have changed, it reads the layout again from a node that
//! answers (`CLUSTER SHARDS`, or `CLUSTER SLOTS` before Redis 7), at most once per
//! [`REFRESH_INTERVAL`], and keeps reading while a master of the map cannot be reached
//! (a failed master's slots stay its own until a replica takes them over). What it
//! reads becomes the thread's map; a master new to the thread gets its connections,
//! and requests waiting for a master that no longer serves their slot move to the one
//! that does, their clocks still running.
//!
//! What every thread shares of the layout (the numbering of masters, the changes and
//! their times) is `topology`'s; moving requests between connections is the
//! dispatcher's.

use std::rc::Rc;
use std::time::{Duration, Instant};

use super::conn;
use super::ctx::Ctx;
use super::route::Cluster;
use crate::net::Endpoint;
use crate::net::cluster::{NodeAddr, read_layout};

/// Shortest time between two layout reads of one thread: short against a failover
/// (seconds), long against a read (a connect and two commands on loopback, well under a
/// millisecond), so that a burst of redirects costs one read, not one per redirect.
pub(crate) const REFRESH_INTERVAL: Duration = Duration::from_millis(100);

/// Longest wait for one node's layout: a node that neither answers nor refuses (a
/// paused or dying one) must not hold the reads back for the whole connect timeout.
const READ_TIMEOUT: Duration = Duration::from_secs(1);

/// Reads the layout whenever asked, until the thread ends (it is aborted then).
pub(crate) async fn refresh_loop(ctx: Rc<Ctx>) {
    let Some(cluster) = ctx.cluster.as_ref() else {
        return;
    };
    let mut last: Option<Instant> = None;
    loop {
        if !cluster.take_stale() {
            let _ = tokio::time::timeout(REFRESH_INTERVAL, cluster.refresh_wake.notified()).await;
            continue;
        }
        if let Some(last) = last {
            tokio::time::sleep_until((last + REFRESH_INTERVAL).into()).await;
        }
        last = Some(Instant::now());
        // A master learned from a redirect gets its connections before anything else.
        open_new_masters(&ctx, cluster);
        match read_any(&ctx, cluster).await {
            Some(ranges) => apply(&ctx, cluster, &ranges),
            None => cluster.request_refresh(),
        }
        if master_unreachable(&ctx, cluster) {
            cluster.request_refresh();
        }
    }
}

/// The layout from the first node that gives it: nodes with a connection up first.
async fn read_any(ctx: &Ctx, cluster: &Cluster) -> Option<Vec<(u16, u16, NodeAddr)>> {
    let mut candidates = cluster.known_endpoints();
    // Stable: among nodes alike, in number order, so reads go to one node in turn.
    candidates.sort_by_key(|(node, _)| !node_up(ctx, cluster, *node));
    let wait = ctx.dial.connect_timeout.min(READ_TIMEOUT);
    for (_, endpoint) in candidates {
        if let Ok(Some(ranges)) = tokio::time::timeout(wait, read_from(ctx, &endpoint)).await {
            return Some(ranges);
        }
        if ctx.shared.cancel.is_cancelled() {
            return None;
        }
    }
    None
}

async fn read_from(ctx: &Ctx, endpoint: &Endpoint) -> Option<Vec<(u16, u16, NodeAddr)>> {
    let mut conn = ctx.dial.open(endpoint).await.ok()?;
    read_layout(&mut conn).await.ok().map(|(ranges, _)| ranges)
}

/// A read gave `ranges`: the thread takes the layout, connects to masters new to it,
/// and moves waiting requests to the masters that now serve their slots.
fn apply(ctx: &Rc<Ctx>, cluster: &Cluster, ranges: &[(u16, u16, NodeAddr)]) {
    let at = Instant::now().saturating_duration_since(ctx.start);
    let owner = cluster.topology.apply(ranges, at);
    for (index, addr) in cluster.topology.nodes().iter().enumerate() {
        cluster.learn(index, addr);
    }
    cluster.set_owner(owner);
    open_new_masters(ctx, cluster);
    let dropped = {
        let mut rec = ctx.rec.borrow_mut();
        ctx.dispatch.borrow_mut().reroute(
            |request| cluster.node_for(&ctx.test, usize::from(request.command), request.key),
            &mut rec,
        )
    };
    ctx.in_flight
        .set(ctx.in_flight.get().saturating_sub(dropped));
    ctx.wake_given();
    ctx.wake_all_if_done();
}

/// Starts the connection loops of every master known to the thread that has none yet
/// (one per client), each connecting on its own.
fn open_new_masters(ctx: &Rc<Ctx>, cluster: &Cluster) {
    let places = cluster.len();
    for (node, _) in cluster.known_endpoints() {
        if !cluster.start_connections(node) {
            continue;
        }
        for client in 0..ctx.plan.connections {
            ctx.live.set(ctx.live.get() + 1);
            conn::spawn(ctx, client * places + node, None);
        }
    }
}

/// Whether some master that serves slots by the thread's map has no connection up.
fn master_unreachable(ctx: &Ctx, cluster: &Cluster) -> bool {
    cluster
        .owners()
        .into_iter()
        .any(|node| !node_up(ctx, cluster, node))
}

/// Whether some client's connection to `node` is up.
fn node_up(ctx: &Ctx, cluster: &Cluster, node: usize) -> bool {
    let places = cluster.len();
    let dispatch = ctx.dispatch.borrow();
    (0..ctx.plan.connections).any(|client| {
        dispatch
            .slots
            .get(client * places + node)
            .is_some_and(|s| s.up)
    })
}
