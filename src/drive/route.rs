//! Cluster routing inside one generator thread: which master each request goes to,
//! the thread's copy of the slot map (a `MOVED` and a layout read update it), the
//! masters it knows and where they listen (one learned from a redirect gets a place
//! numbered by the shared `topology`), following `MOVED` and
//! `ASK` redirects, and the closed-loop clients whose requests are spread over one
//! connection per master. Handing a request to a connection is left to the
//! dispatcher, and claiming a closed-loop client's batch to its connection's feed.
//!
//! A redirected request keeps its intended time, so its latency includes the detour;
//! it is counted once as sent and once as answered, and its redirects are counted
//! apart (per command and per node).

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use tokio::sync::Notify;

use super::request::Request;
use super::topology::Topology;
use crate::net::Endpoint;
use crate::net::cluster::{ClusterMap, NodeAddr, Redirect, UNOWNED};
use crate::record::Recorder;
use crate::workload::Test;

/// Redirects one request may follow before it counts as an error: a slot that keeps
/// moving means a layout the generator cannot follow, not a migration.
pub(crate) const MAX_REDIRECTS: u8 = 5;

/// One thread's view of the cluster.
pub(crate) struct Cluster {
    /// Masters by number (shared by every thread); `None` for a place not yet taken.
    nodes: RefCell<Vec<Option<NodeAddr>>>,
    /// Where to connect to each.
    endpoints: RefCell<Vec<Option<Endpoint>>>,
    /// Whether each master's connections were started.
    started: RefCell<Vec<bool>>,
    /// How the seed node was reached: new masters are reached the same way.
    seed: Endpoint,
    /// Owner of each slot (index into `nodes`), updated by `MOVED` and layout reads.
    owner: RefCell<Vec<u16>>,
    /// What every thread shares: the numbering of masters, the layout's changes.
    pub topology: Arc<Topology>,
    /// The layout may have changed (a redirect, a lost node): read it again.
    stale: Cell<bool>,
    /// Wakes the thread's layout reader.
    pub refresh_wake: Notify,
    /// Closed loop: each client's requests not yet finished (a new batch starts at zero).
    pub outstanding: Vec<Cell<u32>>,
    /// Spreads commands without a key over the masters.
    keyless: Cell<usize>,
}

impl Cluster {
    pub(crate) fn new(
        map: &ClusterMap,
        topology: Arc<Topology>,
        seed: &Endpoint,
        clients: usize,
    ) -> Self {
        let capacity = topology.capacity;
        let mut nodes: Vec<Option<NodeAddr>> = map.nodes.iter().cloned().map(Some).collect();
        nodes.resize(capacity, None);
        let mut endpoints: Vec<Option<Endpoint>> = (0..map.nodes.len())
            .map(|n| Some(map.endpoint(n, seed)))
            .collect();
        endpoints.resize(capacity, None);
        let mut started = vec![true; map.nodes.len()];
        started.resize(capacity, false);
        Cluster {
            started: RefCell::new(started),
            nodes: RefCell::new(nodes),
            endpoints: RefCell::new(endpoints),
            seed: seed.clone(),
            owner: RefCell::new(map.owner.clone()),
            topology,
            stale: Cell::new(false),
            refresh_wake: Notify::new(),
            outstanding: (0..clients).map(|_| Cell::new(0)).collect(),
            keyless: Cell::new(0),
        }
    }

    /// The master that serves command `command` with key index `key`.
    #[inline]
    pub(crate) fn node_for(&self, test: &Test, command: usize, key: u64) -> usize {
        match test.slot(command, key) {
            Some(slot) => self.owner_of(slot),
            None => {
                let n = self.keyless.get();
                self.keyless.set(n.wrapping_add(1));
                n % self.known()
            }
        }
    }

    /// The master that serves `slot` by this thread's map.
    fn owner_of(&self, slot: u16) -> usize {
        match self.owner.borrow()[usize::from(slot)] {
            // A slot nobody serves: any node answers it with the cluster's own error.
            UNOWNED => 0,
            node => usize::from(node),
        }
    }

    /// Node places per client (connection `slot` goes to master `slot % len()`).
    pub(crate) fn len(&self) -> usize {
        self.topology.capacity
    }

    /// Masters this thread knows of.
    fn known(&self) -> usize {
        self.nodes
            .borrow()
            .iter()
            .take_while(|n| n.is_some())
            .count()
            .max(1)
    }

    /// Where to connect to master `node`; `None` while it is not known.
    pub(crate) fn endpoint(&self, node: usize) -> Option<Endpoint> {
        self.endpoints.borrow().get(node).cloned().flatten()
    }

    /// Every known master, by number, with where it listens.
    pub(crate) fn known_endpoints(&self) -> Vec<(usize, Endpoint)> {
        self.endpoints
            .borrow()
            .iter()
            .enumerate()
            .filter_map(|(i, e)| Some((i, e.clone()?)))
            .collect()
    }

    /// Master `node` serves some slot by this thread's map.
    pub(crate) fn serves_slots(&self, node: usize) -> bool {
        self.owner.borrow().iter().any(|&o| usize::from(o) == node)
    }

    /// Masters that serve some slot by this thread's map.
    pub(crate) fn owners(&self) -> Vec<usize> {
        let mut serving = vec![false; self.len()];
        for &o in self.owner.borrow().iter() {
            if let Some(s) = serving.get_mut(usize::from(o)) {
                *s = true;
            }
        }
        (0..serving.len()).filter(|&n| serving[n]).collect()
    }

    /// Learns master `index` (numbered by the topology) at `addr`; true when it was new
    /// to this thread.
    pub(crate) fn learn(&self, index: usize, addr: &NodeAddr) -> bool {
        let mut nodes = self.nodes.borrow_mut();
        if index >= nodes.len() || nodes[index].is_some() {
            return false;
        }
        nodes[index] = Some(addr.clone());
        let endpoint = match &self.seed {
            Endpoint::Tls { tls, .. } => Endpoint::Tls {
                host: addr.host.clone(),
                port: addr.port,
                tls: tls.clone(),
            },
            Endpoint::Tcp { .. } | Endpoint::Unix(_) => Endpoint::Tcp {
                host: addr.host.clone(),
                port: addr.port,
            },
        };
        self.endpoints.borrow_mut()[index] = Some(endpoint);
        true
    }

    /// Marks master `node`'s connections as started; true when they were not yet.
    pub(crate) fn start_connections(&self, node: usize) -> bool {
        self.started
            .borrow_mut()
            .get_mut(node)
            .is_some_and(|s| !std::mem::replace(s, true))
    }

    /// Takes a whole layout (every slot's owner, by the topology's numbers).
    pub(crate) fn set_owner(&self, owner: Vec<u16>) {
        if owner.len() == crate::net::cluster::SLOTS {
            *self.owner.borrow_mut() = owner;
        }
    }

    /// Asks the thread's layout reader to read the layout again (at most once per its
    /// interval, however often this is asked).
    pub(crate) fn request_refresh(&self) {
        if !self.stale.replace(true) {
            self.refresh_wake.notify_one();
        }
    }

    /// Takes the request to read the layout again, if there is one.
    pub(crate) fn take_stale(&self) -> bool {
        self.stale.replace(false)
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
    /// A redirect to a master not seen before numbers it (its connections open when work
    /// is handed to them). Returns what to send where, or `None` for an error to count
    /// as such: not a redirect, one to a master past the room kept for new ones, or one
    /// past [`MAX_REDIRECTS`].
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
        // A MOVED says the layout changed: read it whole rather than learn it one slot
        // per redirect (and so report the change).
        if !redirect.ask {
            self.request_refresh();
        }
        let known = self
            .nodes
            .borrow()
            .iter()
            .position(|n| n.as_ref() == Some(&redirect.to));
        let to = match known {
            Some(to) => to,
            None => {
                let to = self.topology.index_of(&redirect.to)?;
                self.learn(to, &redirect.to);
                // The layout reader also opens the new master's connections.
                self.request_refresh();
                to
            }
        };
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
