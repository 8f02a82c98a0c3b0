//! What every thread of a run against a cluster shares about its layout as it changes:
//! the masters seen so far, numbered once for all threads (so that per-node records add
//! up across threads), the layout last read, and each change of it with its time.
//!
//! Pure bookkeeping behind a lock, taken only on a redirect to a node not seen before
//! and on a layout read; reading the layout and moving the requests it concerns is the
//! thread's (`refresh`).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::net::cluster::{ClusterMap, NodeAddr, SLOTS, UNOWNED};

/// Most layout changes a run keeps; later ones are only counted.
pub const MAX_LAYOUT_CHANGES: usize = 100;

/// One change of the layout: `slots` slots that `from` served (`None`: no master) are
/// now `to`'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutChange {
    /// When a layout read first showed it, from the run's start.
    pub at: Duration,
    /// The master that served the slots before.
    pub from: Option<NodeAddr>,
    /// The master that serves them now.
    pub to: NodeAddr,
    /// How many slots moved.
    pub slots: u32,
}

/// What a run learned about its cluster's layout, for the report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LayoutHistory {
    /// Every master the run knew, in the order of the per-node records: those of the
    /// starting layout first, then those learned during the run.
    pub nodes: Vec<NodeAddr>,
    /// How many of `nodes` the starting layout had.
    pub initial_nodes: usize,
    /// Changes, in order of time; at most [`MAX_LAYOUT_CHANGES`].
    pub changes: Vec<LayoutChange>,
    /// Changes past [`MAX_LAYOUT_CHANGES`], not kept.
    pub changes_left_out: u64,
    /// Layout reads during the run (each thread reads on its own).
    pub reads: u64,
}

/// The shared view, behind a lock.
#[derive(Debug)]
pub(crate) struct Topology {
    state: Mutex<State>,
    /// Node places per client: the starting masters and room for masters learned later.
    pub capacity: usize,
}

#[derive(Debug)]
struct State {
    history: LayoutHistory,
    owner: Vec<u16>,
}

impl Topology {
    /// The topology of a run that starts from `map`, with room for `capacity` masters.
    pub(crate) fn new(map: &ClusterMap, capacity: usize) -> Self {
        Topology {
            state: Mutex::new(State {
                history: LayoutHistory {
                    nodes: map.nodes.clone(),
                    initial_nodes: map.nodes.len(),
                    ..LayoutHistory::default()
                },
                owner: map.owner.clone(),
            }),
            capacity: capacity.max(map.nodes.len()),
        }
    }

    /// The number of master `node`, numbering it when it is new; `None` when every place
    /// is taken (its requests then count as errors).
    pub(crate) fn index_of(&self, node: &NodeAddr) -> Option<usize> {
        let mut state = self.state.lock().ok()?;
        Self::number(&mut state.history.nodes, node, self.capacity)
    }

    fn number(nodes: &mut Vec<NodeAddr>, node: &NodeAddr, capacity: usize) -> Option<usize> {
        if let Some(i) = nodes.iter().position(|n| n == node) {
            return Some(i);
        }
        if nodes.len() >= capacity {
            return None;
        }
        nodes.push(node.clone());
        Some(nodes.len() - 1)
    }

    /// The masters known, by number.
    pub(crate) fn nodes(&self) -> Vec<NodeAddr> {
        self.state
            .lock()
            .map(|s| s.history.nodes.clone())
            .unwrap_or_default()
    }

    /// A layout read at `at` gave `ranges`: slots it gives a master go to it (numbered
    /// if new); slots it leaves out (their master failed and none took over yet) keep
    /// their owner. Records what changed against the last layout, and returns the
    /// owner of every slot now.
    pub(crate) fn apply(&self, ranges: &[(u16, u16, NodeAddr)], at: Duration) -> Vec<u16> {
        let Ok(mut state) = self.state.lock() else {
            return Vec::new();
        };
        let state = &mut *state;
        state.history.reads += 1;
        let mut owner = state.owner.clone();
        for (first, last, node) in ranges {
            let Some(index) = Self::number(&mut state.history.nodes, node, self.capacity) else {
                continue;
            };
            let (mut first, mut last) = (usize::from(*first), usize::from(*last));
            if first > last {
                std::mem::swap(&mut first, &mut last);
            }
            if first >= SLOTS {
                continue;
            }
            owner[first..=last.min(SLOTS - 1)].fill(index as u16);
        }
        let mut moved: BTreeMap<(u16, u16), u32> = BTreeMap::new();
        for (old, new) in state.owner.iter().zip(&owner) {
            if old != new {
                *moved.entry((*old, *new)).or_default() += 1;
            }
        }
        let history = &mut state.history;
        for ((from, to), slots) in moved {
            if history.changes.len() >= MAX_LAYOUT_CHANGES {
                history.changes_left_out += 1;
                continue;
            }
            let change = LayoutChange {
                at,
                from: (from != UNOWNED).then(|| history.nodes[usize::from(from)].clone()),
                to: history.nodes[usize::from(to)].clone(),
                slots,
            };
            history.changes.push(change);
        }
        state.owner.clone_from(&owner);
        owner
    }

    /// What the run learned, for the report.
    pub(crate) fn history(&self) -> LayoutHistory {
        self.state
            .lock()
            .map(|s| s.history.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(port: u16) -> NodeAddr {
        NodeAddr {
            host: "127.0.0.1".into(),
            port,
        }
    }

    #[test]
    fn a_layout_read_records_which_master_took_over_which_slots_once() {
        let map = ClusterMap::from_ranges(&[(0, 8191, node(1)), (8192, 16383, node(2))]);
        let t = Topology::new(&map, 4);
        // Node 2 failed: a read leaves its slots out, and they keep their owner.
        let owner = t.apply(&[(0, 8191, node(1))], Duration::from_secs(1));
        assert_eq!(owner[9000], 1);
        assert!(t.history().changes.is_empty());
        // Its replica, node 3, took over.
        let at = Duration::from_secs(2);
        let owner = t.apply(&[(0, 8191, node(1)), (8192, 16383, node(3))], at);
        assert_eq!(
            owner[9000], 2,
            "the new master is numbered after the others"
        );
        let again = t.apply(&[(0, 8191, node(1)), (8192, 16383, node(3))], at * 2);
        assert_eq!(owner, again);
        let h = t.history();
        assert_eq!(
            h.changes,
            [LayoutChange {
                at,
                from: Some(node(2)),
                to: node(3),
                slots: 8192
            }],
            "a change is recorded by the first read that shows it"
        );
        assert_eq!((h.reads, h.initial_nodes, h.nodes.len()), (3, 2, 3));
    }

    #[test]
    fn masters_past_the_room_kept_for_them_are_not_numbered() {
        let map = ClusterMap::from_ranges(&[(0, 16383, node(1))]);
        let t = Topology::new(&map, 2);
        assert_eq!(t.index_of(&node(1)), Some(0));
        assert_eq!(t.index_of(&node(2)), Some(1));
        assert_eq!(t.index_of(&node(2)), Some(1));
        assert_eq!(t.index_of(&node(3)), None);
    }
}
