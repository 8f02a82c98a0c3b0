//! Hand-off from whoever makes requests to the connections that write them. In open
//! loop the scheduler offers each request it makes to a connection with room
//! (round-robin), or to a bounded backlog that connections drain as replies free room.
//! Against a cluster, connections belong to nodes (slot `client * nodes + node`): a
//! request goes to a connection of its key's node, and a closed-loop client's requests
//! go to its own connection of that node. Requests keep their intended and handled times
//! wherever they wait, so waiting is measured, never hidden.

use std::collections::VecDeque;
use std::time::Instant;

use super::request::{Request, since};
use crate::record::{Counts, Recorder};

/// Per-connection hand-off state.
#[derive(Debug, Default)]
pub(crate) struct Slot {
    /// Given to this connection, not yet written.
    pub pending: VecDeque<Request>,
    /// Pending plus written-and-unanswered.
    pub load: usize,
    /// Connected and accepting work.
    pub up: bool,
    /// Replay: the recorded requests of `pending`, in its order.
    pub traced: super::trace::TracedBytes,
    /// Replay: opened again after a loss, so in database 0 whatever the trace had
    /// selected on it; the next replayed request selects its own first.
    pub reopened: bool,
}

/// Where requests wait until a connection writes them.
#[derive(Debug)]
pub(crate) struct Dispatch {
    pub slots: Vec<Slot>,
    /// Nodes the slots are spread over (1 unless against a cluster).
    nodes: usize,
    /// Per node: requests waiting for one of its connections to have room.
    backlog: Vec<VecDeque<Request>>,
    cap: usize,
    max_backlog: usize,
    /// Per node: the client whose connection gets the current wake-up's requests.
    next: Vec<usize>,
    /// Connections given work since the last wake-up round.
    to_wake: Vec<usize>,
    /// Closed loop: a connection that goes down keeps its pending requests (its client's)
    /// for when it is back.
    keep_pending: bool,
    /// Measured requests a full backlog turned away, kept to count at their age when
    /// the run ends.
    dropped: Dropped,
}

/// The intended times of requests turned away, per command: offsets from the first
/// one's in a histogram, so memory stays one histogram per command however many a
/// frozen server makes (the bucket's top offset is taken, so an age is never over).
/// Their handled times are kept the same way, for the run's on-time histogram.
#[derive(Debug, Default)]
struct Dropped {
    first: Option<Instant>,
    /// Per command: (intended offsets, handled offsets).
    offsets: Vec<Option<(Counts, Counts)>>,
}

impl Dropped {
    fn add(&mut self, request: &Request) {
        let first = *self.first.get_or_insert(request.intended);
        let command = request.command as usize;
        if self.offsets.len() <= command {
            self.offsets.resize_with(command + 1, || None);
        }
        let (intended, handled) =
            self.offsets[command].get_or_insert_with(|| (Counts::new(), Counts::new()));
        intended.record_n(since(first, request.intended), 1);
        handled.record_n(since(first, request.handled), 1);
    }

    /// Counts every request kept here as unanswered at `ended`.
    fn give_up(&mut self, rec: &mut Recorder, ended: Instant) {
        let Some(first) = self.first.take() else {
            return;
        };
        let to_end = since(first, ended);
        for (command, offsets) in std::mem::take(&mut self.offsets).into_iter().enumerate() {
            let Some((intended, handled)) = offsets else {
                continue;
            };
            let record = &mut rec.commands[command];
            for (offset, n) in intended.iter() {
                record.record_unanswered(to_end.saturating_sub(offset), n);
            }
            for (offset, n) in handled.iter() {
                record.record_unanswered_on_time(to_end.saturating_sub(offset), n);
            }
        }
    }
}

impl Dispatch {
    /// `connections` slots over `nodes` nodes, each taking up to `cap` requests.
    pub(crate) fn new(
        connections: usize,
        nodes: usize,
        cap: usize,
        max_backlog: usize,
        keep_pending: bool,
    ) -> Self {
        let nodes = nodes.max(1);
        Dispatch {
            slots: (0..connections)
                .map(|_| Slot {
                    // Grown on first use: against a cluster most places may never be.
                    pending: VecDeque::new(),
                    load: 0,
                    up: true,
                    traced: Default::default(),
                    reopened: false,
                })
                .collect(),
            nodes,
            backlog: (0..nodes).map(|_| VecDeque::new()).collect(),
            cap,
            max_backlog,
            next: vec![0; nodes],
            to_wake: Vec::with_capacity(connections),
            keep_pending,
            dropped: Dropped::default(),
        }
    }

    fn clients(&self) -> usize {
        self.slots.len() / self.nodes
    }

    /// A new wake-up begins: its requests go to the next connection in turn.
    pub(crate) fn begin_batch(&mut self) {
        let clients = self.clients().max(1);
        for next in &mut self.next {
            *next = (*next + 1) % clients;
        }
    }

    /// Gives `request` to the current connection of `node` if it has room, else to the
    /// next one with room, else to the node's backlog, else counts it as not sent.
    /// Returns whether it was taken.
    ///
    /// Requests due at the same wake-up go to one connection (one write), and each
    /// wake-up moves on to the next connection: at low rates that is one request per
    /// connection in turn; at high rates batches form by themselves, as many as were due.
    pub(crate) fn offer(&mut self, request: Request, node: usize, rec: &mut Recorder) -> bool {
        let clients = self.clients();
        for k in 0..clients {
            let client = (self.next[node] + k) % clients;
            let s = client * self.nodes + node;
            let slot = &mut self.slots[s];
            if slot.up && slot.load < self.cap {
                slot.pending.push_back(request);
                slot.load += 1;
                self.next[node] = client;
                if !self.to_wake.contains(&s) {
                    self.to_wake.push(s);
                }
                return true;
            }
        }
        if self.backlog[node].len() < self.max_backlog {
            self.backlog[node].push_back(request);
            return true;
        }
        if request.measured {
            rec.commands[request.command as usize].not_sent += 1;
            self.dropped.add(&request);
        }
        false
    }

    /// Replay: gives `request` to connection `slot`, its recorded client's, unless `slot`
    /// already holds its in-flight bound and the backlog's worth waiting, when it counts
    /// as not sent (and, like the open loop's, at its age when the run ends).
    pub(crate) fn offer_to(&mut self, slot: usize, request: Request, rec: &mut Recorder) -> bool {
        if self.slots[slot].load >= self.cap.saturating_add(self.max_backlog) {
            if request.measured {
                rec.commands[request.command as usize].not_sent += 1;
                self.dropped.add(&request);
            }
            return false;
        }
        self.push_to(slot, request);
        true
    }

    /// Closed loop against a cluster: gives `request` to connection `slot`, whatever its load.
    pub(crate) fn push_to(&mut self, slot: usize, request: Request) {
        let s = &mut self.slots[slot];
        s.pending.push_back(request);
        s.load += 1;
        if !self.to_wake.contains(&slot) {
            self.to_wake.push(slot);
        }
    }

    /// A reply (or failure) freed room on `slot`: pull from its node's backlog into it.
    pub(crate) fn release(&mut self, slot: usize, n: usize) {
        let backlog = &mut self.backlog[slot % self.nodes];
        let s = &mut self.slots[slot];
        s.load = s.load.saturating_sub(n);
        while s.up && s.load < self.cap {
            let Some(request) = backlog.pop_front() else {
                break;
            };
            s.pending.push_back(request);
            s.load += 1;
        }
    }

    /// `slot` lost its connection: its unwritten requests go back to the front of the
    /// node's backlog (open loop) or wait for it to come back (closed loop).
    pub(crate) fn slot_down(&mut self, slot: usize) {
        let backlog = &mut self.backlog[slot % self.nodes];
        let s = &mut self.slots[slot];
        s.up = false;
        s.reopened = true;
        if self.keep_pending {
            s.load = s.pending.len();
            return;
        }
        s.load = 0;
        while let Some(request) = s.pending.pop_back() {
            backlog.push_front(request);
        }
    }

    /// `slot` is connected again.
    pub(crate) fn slot_up(&mut self, slot: usize) {
        self.slots[slot].up = true;
        self.release(slot, 0);
    }

    /// Connections that got work since the last call.
    pub(crate) fn take_wakes(&mut self, into: &mut Vec<usize>) {
        into.clear();
        into.append(&mut self.to_wake);
    }

    /// Requests waiting for a connection.
    pub(crate) fn backlog_len(&self) -> usize {
        self.backlog.iter().map(VecDeque::len).sum()
    }

    /// `slot` has no connection yet (the place of a master not known yet): it takes no
    /// work until it connects.
    pub(crate) fn not_connected(&mut self, slot: usize) {
        self.slots[slot].up = false;
    }

    /// The layout changed: every request waiting for a connection that `node_of` now
    /// routes elsewhere moves there (open loop: from the node's backlog, offered to the
    /// new node; closed loop: from a connection that is down, to its client's
    /// connection of the new node). Requests already handed to a connection that is up
    /// stay: if they reach the old node, its redirect brings them over. Returns how
    /// many redirected requests found no room and were counted as not sent (they had
    /// been counted in flight).
    pub(crate) fn reroute(
        &mut self,
        mut node_of: impl FnMut(&Request) -> usize,
        rec: &mut Recorder,
    ) -> u64 {
        let mut moved = Vec::new();
        if self.keep_pending {
            for s in 0..self.slots.len() {
                if self.slots[s].up || self.slots[s].pending.is_empty() {
                    continue;
                }
                let (client, node) = (s / self.nodes, s % self.nodes);
                let pending = std::mem::take(&mut self.slots[s].pending);
                for request in pending {
                    match node_of(&request) {
                        to if to == node || to >= self.nodes => {
                            self.slots[s].pending.push_back(request);
                        }
                        to => moved.push((client * self.nodes + to, request)),
                    }
                }
                self.slots[s].load = self.slots[s].pending.len();
            }
            for (slot, request) in moved {
                self.push_to(slot, request);
            }
            return 0;
        }
        for node in 0..self.nodes {
            let backlog = std::mem::take(&mut self.backlog[node]);
            for request in backlog {
                match node_of(&request) {
                    to if to == node || to >= self.nodes => self.backlog[node].push_back(request),
                    to => moved.push((to, request)),
                }
            }
        }
        let mut dropped = 0;
        for (to, request) in moved {
            if !self.offer(request, to, rec) && request.measured && request.retry {
                dropped += 1;
            }
        }
        dropped
    }

    /// The run is over at `ended`: every request never written counts as not sent, and
    /// each one, like those turned away before, at its age then in the response times.
    /// Returns how many of them were measured redirects, which had been counted in flight.
    pub(crate) fn abandon(&mut self, rec: &mut Recorder, ended: Instant) -> u64 {
        let unsent = self
            .backlog
            .iter_mut()
            .flat_map(|b| b.drain(..))
            .chain(self.slots.iter_mut().flat_map(|s| s.pending.drain(..)));
        let mut redirected = 0;
        for request in unsent {
            if request.measured {
                let record = &mut rec.commands[request.command as usize];
                record.not_sent += 1;
                // A closed-loop request is intended when written: one never written
                // was never due. A replayed one was due at its recorded time, though it
                // waits for its own connection as a closed loop's does.
                if !self.keep_pending || request.traced_len > 0 {
                    request.give_up(record, ended, 1);
                }
                redirected += u64::from(request.retry);
            }
        }
        self.dropped.give_up(rec, ended);
        redirected
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn request(measured: bool) -> Request {
        let now = Instant::now();
        Request::new(now, now, 0, measured)
    }

    #[test]
    fn arrivals_of_one_wake_up_share_a_connection_and_the_next_wake_up_moves_on() {
        let mut d = Dispatch::new(3, 1, 4, 10, false);
        let mut rec = Recorder::new(1);
        d.begin_batch();
        d.offer(request(true), 0, &mut rec);
        d.offer(request(true), 0, &mut rec);
        d.begin_batch();
        d.offer(request(true), 0, &mut rec);
        let loads: Vec<usize> = d.slots.iter().map(|s| s.load).collect();
        assert_eq!(loads, [0, 2, 1]);
    }

    #[test]
    fn arrivals_spill_to_the_next_connection_when_full_then_to_the_backlog() {
        let mut d = Dispatch::new(2, 1, 1, 10, false);
        let mut rec = Recorder::new(1);
        for _ in 0..3 {
            d.offer(request(true), 0, &mut rec);
        }
        assert_eq!(d.slots[0].pending.len(), 1);
        assert_eq!(d.slots[1].pending.len(), 1);
        assert_eq!(d.backlog_len(), 1);
        d.slots[0].pending.clear();
        d.release(0, 1);
        assert_eq!(
            d.slots[0].pending.len(),
            1,
            "backlog drains into the freed slot"
        );
        assert_eq!(d.backlog_len(), 0);
    }

    #[test]
    fn a_full_backlog_counts_measured_arrivals_as_not_sent() {
        let mut d = Dispatch::new(1, 1, 1, 1, false);
        let mut rec = Recorder::new(1);
        for _ in 0..4 {
            d.offer(request(true), 0, &mut rec);
        }
        d.offer(request(false), 0, &mut rec);
        assert_eq!(rec.commands[0].not_sent, 2);
        let ended = Instant::now() + std::time::Duration::from_secs(2);
        d.abandon(&mut rec, ended);
        assert_eq!(
            rec.commands[0].not_sent, 4,
            "backlog and pending become not sent at the end"
        );
        // Each measured one is in the response times at its age then, 2 s or a little
        // more (the bucket's top offset is taken: never over).
        let record = &rec.commands[0];
        assert_eq!(record.unanswered_counted, 4);
        let response = record.hist.response_counts();
        assert_eq!(response.len(), 4);
        for (age_ns, _) in response.iter() {
            assert!((1_990_000_000..2_100_000_000).contains(&age_ns), "{age_ns}");
        }
    }

    #[test]
    fn a_slot_that_goes_down_returns_its_pending_work() {
        let mut d = Dispatch::new(2, 1, 4, 10, false);
        let mut rec = Recorder::new(1);
        d.offer(request(true), 0, &mut rec);
        d.slot_down(0);
        assert_eq!(d.backlog_len(), 1);
        d.offer(request(true), 0, &mut rec);
        assert_eq!(d.slots[1].pending.len(), 1, "a down slot gets no work");
    }

    #[test]
    fn against_a_cluster_arrivals_go_to_a_connection_of_their_node() {
        // Two clients over three nodes: slots 0,1,2 are client 0's; 3,4,5 client 1's.
        let mut d = Dispatch::new(6, 3, 1, 1, false);
        let mut rec = Recorder::new(1);
        for _ in 0..3 {
            d.offer(request(true), 2, &mut rec);
        }
        let loads: Vec<usize> = d.slots.iter().map(|s| s.load).collect();
        assert_eq!(
            loads,
            [0, 0, 1, 0, 0, 1],
            "node 2's two connections, then its backlog"
        );
        assert_eq!(d.backlog_len(), 1);
        d.slots[2].pending.clear();
        d.release(2, 1);
        assert_eq!(
            d.slots[2].pending.len(),
            1,
            "the node's backlog drains into the node's connection"
        );
    }

    #[test]
    fn a_layout_change_moves_waiting_requests_to_their_new_node() {
        // One client over two nodes; node 0 is down, its arrivals wait in its backlog.
        let mut d = Dispatch::new(2, 2, 4, 10, false);
        let mut rec = Recorder::new(1);
        d.slot_down(0);
        d.offer(request(true), 0, &mut rec);
        d.offer(request(true), 0, &mut rec);
        assert_eq!(d.backlog_len(), 2);
        let dropped = d.reroute(|_| 1, &mut rec);
        assert_eq!(
            (dropped, d.backlog_len(), d.slots[1].pending.len()),
            (0, 0, 2)
        );
    }

    #[test]
    fn a_layout_change_moves_a_closed_loop_clients_requests_off_a_down_connection() {
        let mut d = Dispatch::new(4, 2, 4, 0, true);
        let mut rec = Recorder::new(1);
        d.push_to(2, request(true));
        d.slot_down(2);
        d.reroute(|_| 1, &mut rec);
        assert_eq!(
            (d.slots[2].pending.len(), d.slots[3].pending.len()),
            (0, 1),
            "client 1's request goes to client 1's connection of node 1"
        );
    }

    #[test]
    fn abandoned_redirects_are_reported_so_they_leave_the_in_flight_count() {
        let mut d = Dispatch::new(1, 1, 1, 10, false);
        let mut rec = Recorder::new(1);
        d.slot_down(0);
        let mut retry = request(true);
        retry.retry = true;
        d.offer(retry, 0, &mut rec);
        d.offer(request(true), 0, &mut rec);
        assert_eq!(d.abandon(&mut rec, Instant::now()), 1);
        assert_eq!(rec.commands[0].not_sent, 2);
    }

    #[test]
    fn a_closed_loop_connection_that_goes_down_keeps_its_clients_requests() {
        let mut d = Dispatch::new(2, 2, 4, 0, true);
        d.push_to(1, request(true));
        d.slot_down(1);
        assert_eq!((d.slots[1].pending.len(), d.backlog_len()), (1, 0));
    }
}
