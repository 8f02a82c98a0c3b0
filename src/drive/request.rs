//! A request and its times: what a request carries from when it is made to its reply,
//! and the one place those times become the durations that are recorded.
//!
//! DESIGN.md's four times: `intended` (computed from the schedule, never a clock read
//! after a wake-up; in closed loop the write's time), `handled` (when the generator
//! took it), `sent` (the write that carried it), `received` (its reply parsed).
//! [`reply_times`] is the only subtraction of them: every reply any mode records goes
//! through it, alone or as one of a [`ReplyBurst`].

use std::cell::RefCell;
use std::time::Instant;

use crate::record::{CommandRecord, Recorder, ReplyTimes, Timing, nanos};

/// A request made by the schedule, a closed-loop client or a redirect, not yet written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Request {
    /// When the schedule says it should go (computed); a redirected request keeps its
    /// first one, so its latency includes the detour.
    pub intended: Instant,
    /// When the generator took it (one clock read per scheduler wake-up).
    pub handled: Instant,
    /// Which command of the test.
    pub command: u16,
    /// False during warm-up.
    pub measured: bool,
    /// Against a cluster: the key index every key field holds (drawn when routed).
    pub key: u64,
    /// Closed loop against a cluster: the client that owns the request.
    pub group: u32,
    /// Redirects followed so far.
    pub redirects: u8,
    /// Send `ASKING` first (an `ASK` redirect).
    pub ask_first: bool,
    /// Already counted as sent and in flight: a redirected request sent again.
    pub retry: bool,
    /// Replay: the bytes of its recorded command, waiting in its connection's slot
    /// (0: the test writes it).
    pub traced_len: u32,
}

impl Request {
    /// A fresh request; key, group and redirect state are filled in by routing.
    pub(crate) fn new(intended: Instant, handled: Instant, command: u16, measured: bool) -> Self {
        Request {
            intended,
            handled,
            command,
            measured,
            key: 0,
            group: 0,
            redirects: 0,
            ask_first: false,
            retry: false,
            traced_len: 0,
        }
    }

    /// Counts `n` requests like this one, given up without a reply `at`, in `record`: the
    /// response time from the intended time, and the on-time one from the handled time.
    pub(crate) fn give_up(&self, record: &mut CommandRecord, at: Instant, n: u64) {
        record.record_unanswered(since(self.intended, at), n);
        record.record_unanswered_on_time(since(self.handled, at), n);
    }
}

/// A request written and not yet answered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct InFlight {
    /// What was sent, with its intended and handled times (kept to resend it after a
    /// redirect).
    pub req: Request,
    /// When the write that carried it began.
    pub sent: Instant,
    /// The `ASKING` written before an `ASK`-redirected request: its reply is not a result.
    pub is_asking: bool,
}

/// The durations recorded for a reply received at `received` to a request of a run of
/// `timing`: response `received - intended`, service `received - sent`, lag
/// `handled - intended`, queue wait `sent - handled`, each where `timing` records it.
#[inline(always)]
pub(crate) fn reply_times(
    timing: Timing,
    intended: Instant,
    handled: Instant,
    sent: Instant,
    received: Instant,
) -> ReplyTimes {
    let service_ns = since(sent, received);
    ReplyTimes {
        // A closed-loop request is intended when it is sent: one subtraction serves both.
        response_ns: if intended == sent {
            service_ns
        } else {
            since(intended, received)
        },
        service_ns: timing.service_apart().then_some(service_ns),
        lag_ns: timing.lag().then(|| since(intended, handled)),
        queue_wait_ns: timing.queue_wait().then(|| since(handled, sent)),
    }
}

/// Nanoseconds from `start` to `t` (zero if `t` is earlier).
#[inline]
pub(crate) fn since(start: Instant, t: Instant) -> u64 {
    nanos(t.saturating_duration_since(start))
}

/// Successful replies whose requests had equal times, all received at one instant,
/// recorded together when the burst ends: a closed-loop batch is written at one instant
/// and its replies mostly arrive in one read, so a batch costs one histogram update per
/// time instead of one per reply (see bench/).
#[derive(Debug)]
pub(crate) struct ReplyBurst {
    /// The burst's command and its requests' intended, handled and sent times; `None`:
    /// empty.
    key: Option<(usize, Instant, Instant, Instant)>,
    received: Instant,
    count: u64,
    /// Which times are recorded besides the response time.
    timing: Timing,
}

impl ReplyBurst {
    /// An empty burst of replies received at `received`, in a run of `timing`.
    #[inline]
    pub(crate) fn new(received: Instant, timing: Timing) -> Self {
        ReplyBurst {
            key: None,
            received,
            count: 0,
            timing,
        }
    }

    /// When the burst's replies were received.
    #[inline]
    pub(crate) fn received(&self) -> Instant {
        self.received
    }

    /// Adds `count` successful replies to requests like `f`, first recording the burst
    /// so far into `rec` when their times differ from its.
    #[inline]
    pub(crate) fn add(&mut self, rec: &RefCell<Recorder>, f: &InFlight, count: u32) {
        let key = (
            usize::from(f.req.command),
            f.req.intended,
            f.req.handled,
            f.sent,
        );
        if let Some(burst) = self.key {
            if burst == key {
                self.count += u64::from(count);
                return;
            }
            self.flush(rec);
        }
        self.key = Some(key);
        self.count = count.into();
    }

    /// Records the burst into `rec` and empties it.
    #[inline]
    pub(crate) fn flush(&mut self, rec: &RefCell<Recorder>) {
        let Some((command, intended, handled, sent)) = self.key.take() else {
            return;
        };
        let times = reply_times(self.timing, intended, handled, sent, self.received);
        rec.borrow_mut().record_replies(command, &times, self.count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Metric;
    use std::time::Duration;

    fn written(command: u16, intended: Instant, handled: Instant, sent: Instant) -> InFlight {
        InFlight {
            req: Request::new(intended, handled, command, true),
            sent,
            is_asking: false,
        }
    }

    #[test]
    fn open_loop_times_count_from_the_intended_time() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        let times = reply_times(Timing::Open, at(10), at(25), at(40), at(100));
        assert_eq!(times.response_ns, 90_000, "received - intended");
        assert_eq!(times.service_ns, Some(60_000), "received - sent");
        assert_eq!(times.lag_ns, Some(15_000), "handled - intended");
        assert_eq!(times.queue_wait_ns, Some(15_000), "sent - handled");
    }

    #[test]
    fn a_closed_loop_reply_has_only_its_response_time() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        let times = reply_times(Timing::Closed, at(40), at(40), at(40), at(100));
        assert_eq!(times.response_ns, 60_000);
        assert_eq!(
            (times.service_ns, times.lag_ns, times.queue_wait_ns),
            (None, None, None)
        );
        let workers = reply_times(Timing::Workers, at(10), at(10), at(40), at(100));
        assert_eq!(
            (
                workers.response_ns,
                workers.service_ns,
                workers.queue_wait_ns
            ),
            (90_000, Some(60_000), Some(30_000))
        );
        assert_eq!(workers.lag_ns, None);
    }

    #[test]
    fn a_burst_records_each_reply_with_its_own_times() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        let (rec, expected) = (
            RefCell::new(Recorder::new(2)),
            RefCell::new(Recorder::new(2)),
        );
        let mut burst = ReplyBurst::new(at(100), Timing::Open);
        // Three replies to one batch, one of another command, then one of a later batch.
        for (command, intended, handled, sent) in [
            (0, 10, 20, 30),
            (0, 10, 20, 30),
            (0, 10, 20, 30),
            (1, 10, 20, 30),
            (0, 40, 40, 50),
        ] {
            let f = written(command, at(intended), at(handled), at(sent));
            burst.add(&rec, &f, 1);
            let times = crate::record::ReplyTimes {
                response_ns: (100 - intended) * 1000,
                service_ns: Some((100 - sent) * 1000),
                lag_ns: Some((handled - intended) * 1000),
                queue_wait_ns: Some((sent - handled) * 1000),
            };
            expected
                .borrow_mut()
                .record_reply(usize::from(command), &times);
        }
        burst.flush(&rec);
        burst.flush(&rec);
        let (rec, expected) = (rec.into_inner(), expected.into_inner());
        for (a, b) in rec.commands.iter().zip(&expected.commands) {
            assert_eq!(a.completed, b.completed);
            for metric in Metric::ALL {
                assert_eq!(a.hist.get(metric), b.hist.get(metric), "{metric:?}");
            }
        }
        assert_eq!(rec.completed(), 5);
    }

    #[test]
    fn a_closed_loop_burst_records_only_the_response_time() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        let rec = RefCell::new(Recorder::new(1));
        let mut burst = ReplyBurst::new(at(100), Timing::Closed);
        burst.add(&rec, &written(0, at(40), at(40), at(40)), 3);
        burst.flush(&rec);
        let hist = &rec.borrow().commands[0].hist;
        let response = hist.response();
        assert_eq!(
            (response.len(), response.max()),
            (3, response.highest_equivalent(60_000))
        );
        for metric in [Metric::Service, Metric::Lag, Metric::QueueWait] {
            assert!(hist.get(metric).is_empty());
        }
    }

    #[test]
    fn a_waiting_request_takes_56_bytes() {
        // tests/reliability/timing.rs bounds a full backlog's memory with this size.
        assert!(
            std::mem::size_of::<Request>() <= 56,
            "{}",
            std::mem::size_of::<Request>()
        );
    }
}
