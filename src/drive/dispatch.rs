//! Open-loop hand-off: the scheduler turns due schedule offsets into arrivals and
//! gives each to a connection with room (round-robin), or to a bounded backlog that
//! connections drain as replies free room. Arrivals keep their intended and handled
//! times wherever they wait, so waiting is measured, never hidden.

use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Instant;

use super::schedule::{Schedule, wait_until};
use super::thread::Ctx;
use crate::cli::Pacing;
use crate::record::Recorder;

/// A request the schedule produced.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arrival {
    /// When the schedule says it should go (computed).
    pub intended: Instant,
    /// When the scheduler took it (one clock read per wake-up).
    pub handled: Instant,
    /// Which command of the test.
    pub command: u16,
    /// False during warm-up.
    pub measured: bool,
}

/// Per-connection hand-off state.
#[derive(Debug, Default)]
pub(crate) struct Slot {
    /// Given to this connection, not yet written.
    pub pending: VecDeque<Arrival>,
    /// Pending plus written-and-unanswered.
    pub load: usize,
    /// Connected and accepting work.
    pub up: bool,
}

/// Where arrivals wait until a connection writes them.
#[derive(Debug)]
pub(crate) struct Dispatch {
    pub slots: Vec<Slot>,
    backlog: VecDeque<Arrival>,
    cap: usize,
    max_backlog: usize,
    next: usize,
    /// Connections given work since the last wake-up round.
    to_wake: Vec<usize>,
}

impl Dispatch {
    pub(crate) fn new(connections: usize, cap: usize, max_backlog: usize) -> Self {
        Dispatch {
            slots: (0..connections).map(|_| Slot { pending: VecDeque::with_capacity(cap), load: 0, up: true }).collect(),
            backlog: VecDeque::new(),
            cap,
            max_backlog,
            next: 0,
            to_wake: Vec::with_capacity(connections),
        }
    }

    /// A new wake-up begins: its arrivals go to the next connection in turn.
    pub(crate) fn begin_batch(&mut self) {
        self.next = (self.next + 1) % self.slots.len().max(1);
    }

    /// Gives `arrival` to the current connection if it has room, else to the next one
    /// with room, else to the backlog, else counts it as not sent.
    ///
    /// Arrivals due at the same wake-up go to one connection (one write), and each
    /// wake-up moves on to the next connection: at low rates that is one request per
    /// connection in turn; at high rates batches form by themselves, as many as were due.
    pub(crate) fn offer(&mut self, arrival: Arrival, rec: &mut Recorder) {
        let n = self.slots.len();
        for k in 0..n {
            let s = (self.next + k) % n;
            let slot = &mut self.slots[s];
            if slot.up && slot.load < self.cap {
                slot.pending.push_back(arrival);
                slot.load += 1;
                self.next = s;
                if !self.to_wake.contains(&s) {
                    self.to_wake.push(s);
                }
                return;
            }
        }
        if self.backlog.len() < self.max_backlog {
            self.backlog.push_back(arrival);
        } else if arrival.measured {
            rec.commands[arrival.command as usize].not_sent += 1;
        }
    }

    /// A reply (or failure) freed room on `slot`: pull from the backlog into it.
    pub(crate) fn release(&mut self, slot: usize, n: usize) {
        let s = &mut self.slots[slot];
        s.load = s.load.saturating_sub(n);
        while s.up && s.load < self.cap {
            let Some(arrival) = self.backlog.pop_front() else { break };
            s.pending.push_back(arrival);
            s.load += 1;
        }
    }

    /// `slot` lost its connection: its unwritten arrivals go back to the front of the backlog.
    pub(crate) fn slot_down(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        s.up = false;
        s.load = 0;
        while let Some(arrival) = s.pending.pop_back() {
            self.backlog.push_front(arrival);
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
        self.backlog.len()
    }

    /// The run is over: every arrival never written counts as not sent.
    pub(crate) fn abandon(&mut self, rec: &mut Recorder) {
        let unsent = self.backlog.drain(..).chain(self.slots.iter_mut().flat_map(|s| s.pending.drain(..)));
        for arrival in unsent {
            if arrival.measured {
                rec.commands[arrival.command as usize].not_sent += 1;
            }
        }
    }
}

/// The open-loop scheduler of one thread: wakes, hands out every due arrival in one
/// batch, and computes the next wake-up. Intended times come from the schedule only.
pub(crate) async fn scheduler_loop(ctx: Rc<Ctx>, mut schedule: Schedule, pacing: Pacing, end: Instant) {
    let mut wakes = Vec::with_capacity(ctx.wake.len());
    loop {
        let next = ctx.start + schedule.peek();
        if next >= end || ctx.shared.cancel.is_cancelled() {
            break;
        }
        wait_until(next, pacing, &ctx.spin).await;
        // `handled` is when this batch was taken: the lag of each arrival in it is
        // `handled - intended`, and its latency still counts from `intended`.
        let handled = Instant::now();
        {
            let mut dispatch = ctx.dispatch.borrow_mut();
            let mut rec = ctx.rec.borrow_mut();
            dispatch.begin_batch();
            loop {
                let intended = ctx.start + schedule.peek();
                if intended > handled || intended >= end {
                    break;
                }
                schedule.advance();
                let measured = intended >= ctx.measure_from;
                let command = ctx.test.pick(&mut ctx.sampler.borrow_mut());
                if measured {
                    rec.commands[command].intended += 1;
                }
                dispatch.offer(Arrival { intended, handled, command: command as u16, measured }, &mut rec);
            }
            dispatch.take_wakes(&mut wakes);
        }
        for &slot in &wakes {
            ctx.wake[slot].notify_one();
        }
    }
    ctx.sending_done.set(true);
    for wake in &ctx.wake {
        wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(measured: bool) -> Arrival {
        let now = Instant::now();
        Arrival { intended: now, handled: now, command: 0, measured }
    }

    #[test]
    fn arrivals_of_one_wake_up_share_a_connection_and_the_next_wake_up_moves_on() {
        let mut d = Dispatch::new(3, 4, 10);
        let mut rec = Recorder::new(1);
        d.begin_batch();
        d.offer(arrival(true), &mut rec);
        d.offer(arrival(true), &mut rec);
        d.begin_batch();
        d.offer(arrival(true), &mut rec);
        let loads: Vec<usize> = d.slots.iter().map(|s| s.load).collect();
        assert_eq!(loads, [0, 2, 1]);
    }

    #[test]
    fn arrivals_spill_to_the_next_connection_when_full_then_to_the_backlog() {
        let mut d = Dispatch::new(2, 1, 10);
        let mut rec = Recorder::new(1);
        for _ in 0..3 {
            d.offer(arrival(true), &mut rec);
        }
        assert_eq!(d.slots[0].pending.len(), 1);
        assert_eq!(d.slots[1].pending.len(), 1);
        assert_eq!(d.backlog_len(), 1);
        d.slots[0].pending.clear();
        d.release(0, 1);
        assert_eq!(d.slots[0].pending.len(), 1, "backlog drains into the freed slot");
        assert_eq!(d.backlog_len(), 0);
    }

    #[test]
    fn a_full_backlog_counts_measured_arrivals_as_not_sent() {
        let mut d = Dispatch::new(1, 1, 1);
        let mut rec = Recorder::new(1);
        for _ in 0..4 {
            d.offer(arrival(true), &mut rec);
        }
        d.offer(arrival(false), &mut rec);
        assert_eq!(rec.commands[0].not_sent, 2);
        d.abandon(&mut rec);
        assert_eq!(rec.commands[0].not_sent, 4, "backlog and pending become not sent at the end");
    }

    #[test]
    fn a_slot_that_goes_down_returns_its_pending_work() {
        let mut d = Dispatch::new(2, 4, 10);
        let mut rec = Recorder::new(1);
        d.offer(arrival(true), &mut rec);
        d.slot_down(0);
        assert_eq!(d.backlog_len(), 1);
        d.offer(arrival(true), &mut rec);
        assert_eq!(d.slots[1].pending.len(), 1, "a down slot gets no work");
    }
}
