//! The requests one connection has written and not yet had answered, oldest first.
//!
//! Kept as bursts of alike requests (same command, flags and times): the `-P` requests
//! of a closed-loop batch are one entry, so stamping, counting and answering a batch
//! costs a few steps per batch instead of per request (see bench/). Open-loop requests
//! each have their own intended time and stay one request per burst.
//!
//! The bursts are a `Vec` read from a moving head rather than a `VecDeque`: the bursts
//! in flight are then always one slice (stamping a write's bursts walks a slice, not a
//! pair of them), and the queue a closed loop empties every batch starts over with a
//! `clear`.

use super::request::InFlight;

/// `count` requests alike, written in one write.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Burst {
    pub f: InFlight,
    pub count: u32,
}

/// One connection's unanswered requests, as bursts.
#[derive(Debug, Default)]
pub(crate) struct InFlightQueue {
    /// The bursts from `head` on are in flight, oldest first; those before it are answered.
    bursts: Vec<Burst>,
    head: usize,
    /// Requests in all bursts.
    len: usize,
    /// Runs at the back pushed since the last write: they are stamped with that write's
    /// time, and nothing is merged into a burst already written.
    unwritten: usize,
}

impl InFlightQueue {
    /// An empty queue with room for `bursts` bursts in flight (and as many answered ones
    /// before they are dropped, so that a full queue never grows).
    pub fn with_capacity(bursts: usize) -> Self {
        InFlightQueue {
            bursts: Vec::with_capacity(2 * bursts + 1),
            head: 0,
            len: 0,
            unwritten: 0,
        }
    }

    /// Requests in the queue.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The oldest request.
    #[inline]
    pub fn front(&self) -> Option<&InFlight> {
        self.bursts.get(self.head).map(|r| &r.f)
    }

    /// Adds `count` requests like `f` at the back, to be written next.
    #[inline]
    pub fn push(&mut self, f: InFlight, count: u32) {
        if count == 0 {
            return;
        }
        self.len += count as usize;
        if self.unwritten > 0
            && let Some(back) = self.bursts.last_mut()
            && back.f == f
        {
            back.count += count;
            return;
        }
        self.bursts.push(Burst { f, count });
        self.unwritten += 1;
    }

    /// The bursts pushed since the last write, to stamp with its time and count as sent.
    pub fn unwritten_mut(&mut self) -> impl Iterator<Item = &mut Burst> {
        let start = self.bursts.len() - self.unwritten;
        self.bursts[start..].iter_mut()
    }

    /// The bursts pushed since the last write have been written.
    pub fn mark_written(&mut self) {
        self.unwritten = 0;
    }

    /// Takes the oldest request.
    pub fn pop_front(&mut self) -> Option<InFlight> {
        let mut f = None;
        self.take_front(1, |first, _| f = Some(*first));
        f
    }

    /// Takes the oldest `n` requests (all, if fewer), calling `each` once per burst with
    /// the request and how many of it were taken.
    #[inline]
    pub fn take_front(&mut self, mut n: usize, mut each: impl FnMut(&InFlight, u32)) {
        while n > 0 {
            let Some(burst) = self.bursts.get_mut(self.head) else {
                break;
            };
            let k = burst.count.min(u32::try_from(n).unwrap_or(u32::MAX));
            each(&burst.f, k);
            burst.count -= k;
            n -= k as usize;
            self.len -= k as usize;
            if burst.count == 0 {
                self.pop_burst();
            }
        }
    }

    /// Drops the oldest burst, answered: all the answered bursts at once when it was the last
    /// one, or when they are as many as the bursts in flight (a queue that never empties,
    /// as an open loop's may not, then copies each burst once more, at most).
    #[inline]
    fn pop_burst(&mut self) {
        self.head += 1;
        let in_flight = self.bursts.len() - self.head;
        if in_flight == 0 {
            self.bursts.clear();
            self.head = 0;
        } else if self.head >= in_flight {
            self.bursts.drain(..self.head);
            self.head = 0;
        }
        self.unwritten = self.unwritten.min(in_flight);
    }

    /// Takes every request, a burst at a time.
    pub fn drain(&mut self, each: impl FnMut(&InFlight, u32)) {
        self.take_front(self.len, each);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::drive::request::Request;
    use std::time::{Duration, Instant};

    fn req(command: u16, at: Instant) -> InFlight {
        InFlight {
            req: Request::new(at, at, command, true),
            sent: at,
            is_asking: false,
        }
    }

    /// Every request taken, one (command, count) per burst.
    fn take(q: &mut InFlightQueue, n: usize) -> Vec<(u16, u32)> {
        let mut out = Vec::new();
        q.take_front(n, |f, k| out.push((f.req.command, k)));
        out
    }

    #[test]
    fn alike_requests_pushed_together_are_one_run() {
        let t = Instant::now();
        let mut q = InFlightQueue::with_capacity(4);
        for _ in 0..16 {
            q.push(req(0, t), 1);
        }
        assert_eq!((q.len(), q.bursts.len() - q.head), (16, 1));
        q.push(req(1, t), 2);
        q.push(req(0, t), 1);
        assert_eq!((q.len(), q.bursts.len() - q.head), (19, 3));
        assert_eq!(take(&mut q, 100), vec![(0, 16), (1, 2), (0, 1)]);
        assert!(q.is_empty());
    }

    #[test]
    fn taking_part_of_a_run_leaves_the_rest_in_order() {
        let t = Instant::now();
        let mut q = InFlightQueue::with_capacity(4);
        q.push(req(0, t), 5);
        q.push(req(1, t), 3);
        assert_eq!(take(&mut q, 2), vec![(0, 2)]);
        assert_eq!(q.pop_front().map(|f| f.req.command), Some(0));
        assert_eq!(take(&mut q, 3), vec![(0, 2), (1, 1)]);
        assert_eq!(q.len(), 2);
        let mut rest = Vec::new();
        q.drain(|f, k| rest.push((f.req.command, k)));
        assert_eq!(rest, vec![(1, 2)]);
        assert_eq!(q.pop_front(), None);
    }

    #[test]
    fn a_written_run_is_never_merged_with_a_new_one() {
        let t = Instant::now();
        let mut q = InFlightQueue::with_capacity(4);
        q.push(req(0, t), 4);
        q.mark_written();
        // Alike in every field, but written at another time: a burst of its own, and the
        // only one stamped by the next write.
        q.push(req(0, t), 2);
        let later = t + Duration::from_micros(7);
        let stamped: Vec<u32> = q.unwritten_mut().map(|r| r.count).collect();
        assert_eq!(stamped, vec![2]);
        for r in q.unwritten_mut() {
            r.f.sent = later;
        }
        q.mark_written();
        assert_eq!(q.unwritten_mut().count(), 0);
        let mut sent = Vec::new();
        q.drain(|f, k| sent.push((f.sent, k)));
        assert_eq!(sent, vec![(t, 4), (later, 2)]);
    }

    #[test]
    fn taking_unwritten_runs_keeps_the_count_of_unwritten_ones_in_range() {
        let t = Instant::now();
        let mut q = InFlightQueue::with_capacity(4);
        q.push(req(0, t), 1);
        q.push(req(1, t), 1);
        q.drain(|_, _| {});
        assert_eq!(q.unwritten_mut().count(), 0);
        q.push(req(2, t), 3);
        assert_eq!(
            q.unwritten_mut().map(|r| r.count).collect::<Vec<_>>(),
            vec![3]
        );
    }

    #[test]
    fn a_queue_that_never_empties_keeps_its_order_and_its_room() {
        let t = Instant::now();
        let mut q = InFlightQueue::with_capacity(4);
        let room = q.bursts.capacity();
        let mut next = 0u16;
        for _ in 0..3 {
            q.push(req(next, t), 1);
            q.mark_written();
            next += 1;
        }
        let mut answered = Vec::new();
        for _ in 0..1000 {
            q.push(req(next, t), 1);
            q.mark_written();
            next = next.wrapping_add(1);
            answered.extend(take(&mut q, 1));
            assert_eq!(q.len(), 3);
        }
        assert!(
            answered
                .iter()
                .enumerate()
                .all(|(i, &(command, k))| usize::from(command) == i && k == 1)
        );
        assert_eq!(
            q.bursts.capacity(),
            room,
            "the answered bursts were dropped before the queue had to grow"
        );
    }
}
