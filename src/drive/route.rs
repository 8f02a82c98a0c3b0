//! Cluster routing inside one generator thread: which master each request goes to,
//! the thread's copy of the slot map (a `MOVED` updates it), following `MOVED` and
//! `ASK` redirects, and the closed-loop clients whose requests are spread over one
//! connection per master. Handing a request to a connection is left to the
//! dispatcher, and claiming a closed-loop client's batch to its connection's feed.
//!
//! A redirected request keeps its intended time, so its latency includes the detour;
//! it is counted once as sent and once as answered, and its redirects are counted
//! apart (per command and per node).

use std::cell::{Cell, RefCell};

use super::request::Request;
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

/// A redirect to follow: the request to send again, and the master it goes to.
pub(crate) struct Resend {
    /// The request as it goes again: same times, one more redirect, flagged as a retry.
    pub request: Request,
    /// Index of the master the redirect points at.
    pub to: usize,
}

impl Cluster {
    /// An error reply `message` to `request`, sent on connection `slot`: when it is a
    /// redirect it is counted (per node, per command) and a `MOVED` updates the slot map.
    /// Returns what to send where, or `None` for an error to count as such: not a
    /// redirect, one to a node outside the map, or one past [`MAX_REDIRECTS`].
    pub(crate) fn follow(
        &self,
        slot: usize,
        request: &Request,
        message: &str,
        rec: &mut Recorder,
    ) -> Option<Resend> {
        let redirect = Redirect::parse(message)?;
        let node_record = rec.node(slot % self.len());
        if redirect.ask {
            node_record.ask += 1;
        } else {
            node_record.moved += 1;
        }
        rec.commands[request.command as usize].redirects += 1;
        let to = self.nodes.iter().position(|n| *n == redirect.to)?;
        if !redirect.ask {
            self.owner.borrow_mut()[usize::from(redirect.slot)] = to as u16;
        }
        if request.redirects >= MAX_REDIRECTS {
            return None;
        }
        let request = Request {
            redirects: request.redirects + 1,
            ask_first: redirect.ask,
            retry: true,
            ..*request
        };
        Some(Resend { request, to })
    }
}
