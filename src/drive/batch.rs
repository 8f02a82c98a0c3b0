//! Automatic pipelining for `--workers`: the batching policy of one connection.
//!
//! A connection serves a fixed share of the workers (W/C each, the remainder spread over
//! the first connections). A worker with no request in flight hands its next one to the
//! connection's [`Batch`] at once (its *request time*); the batch is written in one
//! write when it is full or when its oldest request has waited `--pipeline-delay`.
//! "Full" means `--pipeline-size` requests, or every worker of the connection that can
//! still send: then no reply can add to it, and waiting longer would only idle.
//!
//! This module decides *when* and *how many*; the connection's feed (`feed.rs`) encodes
//! and the connection loop (`conn.rs`) writes and times. The request time of each
//! waiting request is kept, so a reply is timed from when its worker asked (the latency
//! that worker sees, batching delay included), and the write's own time gives the
//! service time.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::plan::Workers;

/// How many of `workers` logical clients connection `connection` (0-based, of
/// `connections`) serves: the even share, plus one for the first `workers % connections`.
pub(crate) fn workers_on(connection: usize, connections: usize, workers: usize) -> usize {
    let connections = connections.max(1);
    workers / connections + usize::from(connection < workers % connections)
}

/// The most workers any one connection serves (its in-flight cap).
pub(crate) fn most_workers_on_one(connections: usize, workers: usize) -> usize {
    workers_on(0, connections, workers)
}

/// The requests one connection's workers have handed over and that are not written yet.
#[derive(Debug)]
pub(crate) struct Batch {
    /// Workers this connection serves.
    workers: usize,
    /// Workers that found no request left to send (`-n` used up, `--duration` over).
    retired: usize,
    /// Most requests in one write.
    size: usize,
    /// Longest the oldest waiting request waits for the batch to fill.
    delay: Duration,
    /// Request time of every waiting request, oldest first; holds at most `workers`,
    /// allocated once.
    waiting: VecDeque<Instant>,
}

impl Batch {
    /// The batch of a connection serving `workers` of the logical clients `policy` describes.
    pub(crate) fn new(workers: usize, policy: &Workers) -> Self {
        Batch {
            workers,
            retired: 0,
            size: policy.pipeline_size.max(1),
            delay: policy.pipeline_delay,
            waiting: VecDeque::with_capacity(workers),
        }
    }

    /// Every worker that is idle (not waiting here, not in flight, not retired) hands its
    /// next request at `at`. `claim(n)` asks the run for up to `n` requests and returns how
    /// many it may send; workers left without one retire.
    pub(crate) fn hand_requests(
        &mut self,
        in_flight: usize,
        at: Instant,
        claim: impl FnOnce(usize) -> usize,
    ) {
        let busy = self.retired + in_flight + self.waiting.len();
        let idle = self.workers.saturating_sub(busy);
        if idle == 0 {
            return;
        }
        let granted = claim(idle).min(idle);
        self.retired += idle - granted;
        for _ in 0..granted {
            self.waiting.push_back(at);
        }
    }

    /// Requests that make a full batch: `--pipeline-size`, or fewer when fewer workers can
    /// still send.
    fn full_at(&self) -> usize {
        self.size
            .min(self.workers - self.retired.min(self.workers))
            .max(1)
    }

    /// Whether a whole batch is waiting (write it without waiting for replies).
    pub(crate) fn is_full(&self) -> bool {
        self.waiting.len() >= self.full_at()
    }

    /// How many requests to write at `now`: a full batch, or everything waiting once the
    /// oldest has waited the delay; 0 to keep waiting.
    pub(crate) fn due(&self, now: Instant) -> usize {
        match self.flush_at() {
            _ if self.is_full() => self.full_at().min(self.waiting.len()),
            Some(at) if now >= at => self.waiting.len().min(self.size),
            _ => 0,
        }
    }

    /// When the waiting requests go if no reply fills the batch first.
    pub(crate) fn flush_at(&self) -> Option<Instant> {
        self.waiting.front().map(|&oldest| oldest + self.delay)
    }

    /// Takes the oldest waiting request's request time, to write it.
    pub(crate) fn take(&mut self) -> Option<Instant> {
        self.waiting.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(size: usize, delay_us: u64) -> Workers {
        Workers {
            count: 0,
            pipeline_size: size,
            pipeline_delay: Duration::from_micros(delay_us),
        }
    }

    #[test]
    fn workers_are_dealt_evenly_and_the_remainder_goes_to_the_first_connections() {
        let shares: Vec<usize> = (0..4).map(|c| workers_on(c, 4, 10)).collect();
        assert_eq!(shares, [3, 3, 2, 2]);
        assert_eq!(shares.iter().sum::<usize>(), 10);
        assert_eq!(most_workers_on_one(4, 10), 3);
        assert_eq!(most_workers_on_one(3, 300), 100);
    }

    #[test]
    fn a_batch_goes_when_it_reaches_the_pipeline_size() {
        let t0 = Instant::now();
        let mut b = Batch::new(10, &policy(4, 1_000_000));
        b.hand_requests(7, t0, |n| n);
        assert_eq!(
            (b.due(t0), b.flush_at()),
            (0, Some(t0 + Duration::from_secs(1))),
            "3 of 4 wait for the fourth"
        );
        b.hand_requests(6, t0 + Duration::from_micros(5), |n| n);
        assert_eq!(b.due(t0), 4);
        assert_eq!(
            b.take(),
            Some(t0),
            "the oldest request keeps its own request time"
        );
    }

    #[test]
    fn a_partial_batch_goes_after_the_delay_since_its_oldest_request() {
        let t0 = Instant::now();
        let mut b = Batch::new(10, &policy(8, 50));
        b.hand_requests(8, t0, |n| n);
        assert_eq!(b.due(t0 + Duration::from_micros(49)), 0);
        assert_eq!(b.due(t0 + Duration::from_micros(50)), 2);
    }

    #[test]
    fn a_batch_holding_every_worker_that_can_still_send_is_full() {
        let t0 = Instant::now();
        let mut b = Batch::new(3, &policy(100, 1_000_000));
        b.hand_requests(0, t0, |n| n);
        assert_eq!(b.due(t0), 3, "nothing in flight could add to it");
        let mut b = Batch::new(4, &policy(100, 1_000_000));
        b.hand_requests(0, t0, |_| 2);
        assert_eq!(b.due(t0), 2, "two workers found no request and retired");
    }

    #[test]
    fn more_waiting_than_the_size_goes_a_batch_at_a_time() {
        let t0 = Instant::now();
        let mut b = Batch::new(10, &policy(4, 0));
        b.hand_requests(0, t0, |n| n);
        assert_eq!(b.due(t0), 4);
        for _ in 0..4 {
            b.take();
        }
        assert!(b.is_full());
        assert_eq!(b.due(t0), 4);
        for _ in 0..4 {
            b.take();
        }
        assert_eq!(b.due(t0), 2, "zero delay: what is left goes at once");
    }
}
