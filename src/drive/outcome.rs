//! What a run hands back: each interval's records as it ends, and, when the run is over,
//! the merged [`RunOutcome`] with what every thread measured (the connections it lost and
//! opened again, and the times the server could not be reached, among them); and the
//! errors that stop a run before it measures anything.

use std::time::{Duration, Instant, SystemTime};

use super::topology::LayoutHistory;
use crate::net::NetError;
use crate::record::Recorder;

/// One interval's records from one thread.
///
/// The intervals of a run are `index * L .. (index + 1) * L` on the measured window's
/// clock (from the end of warm-up in open loop, from the run's first send in closed
/// loop), alike on every thread; a reply is in the interval its `received` time falls in,
/// and an open loop's replies after the schedule's end in its last. Each thread sends
/// every index from 0 to its last once, in order. Only the window's end says how long
/// the last interval is: [`RunOutcome::measured`].
#[derive(Debug, Clone)]
pub struct Interval {
    /// Thread that recorded it.
    pub thread: usize,
    /// Which interval of the window.
    pub index: u32,
    /// The measured window's start, which `start` counts from.
    pub origin: Instant,
    /// Start, from the measured window's start: `index` intervals.
    pub start: Duration,
    /// Length: the interval length, or for a thread's last the part of it that the
    /// thread knows the window reaches into.
    pub length: Duration,
    /// How far the window was known to reach, from its start, when this was sent: an
    /// interval that ends before it is whole (a later one holds a reply or the schedule
    /// ran past it).
    pub reached: Duration,
    /// What was recorded in it.
    pub record: Recorder,
    /// Requests waiting client-side for a connection at the interval's end (open loop).
    pub backlog: usize,
}

/// What a run measured, merged over threads.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// Every interval added together.
    pub record: Recorder,
    /// Wall-clock time at the start (for logs).
    pub started_at: SystemTime,
    /// Measured window: closed loop from the first send to the last reply; open loop
    /// from the end of warm-up to the end of the schedule (or where it was stopped).
    pub measured: Duration,
    /// Requests written but not answered when the run ended.
    pub in_flight_at_end: u64,
    /// Achieved send rate over the measured window (requests written per second).
    pub achieved_rate_per_sec: f64,
    /// Successful replies per second: over the measured window in closed loop; in open
    /// loop over the window stretched to the last send or reply, whichever came later.
    pub throughput_per_sec: f64,
    /// Bytes of measured requests written per second, over the window of the achieved rate.
    pub sent_bytes_per_sec: f64,
    /// Bytes of replies read per second, over the window of the throughput.
    pub received_bytes_per_sec: f64,
    /// Measured sends per window, per thread (open loop; the Poisson check).
    pub send_counts: Vec<SendCounts>,
    /// CPU seconds each generator thread used, against its wall time.
    pub thread_cpu: Vec<ThreadCpu>,
    /// The run ended because of this (exit-on-error, a connection given up, Ctrl+C).
    pub stopped_early: Option<String>,
    /// Connections lost and opened again, and the times the server could not be reached.
    pub connections: ConnectionEvents,
    /// Requests written outside `record`, per command (the warm-up's, a replay's
    /// `SELECT`s after a reconnect): the server counts them.
    pub unrecorded_sent: Vec<u64>,
    /// With `--start-at`: how long after the common start the threads were let go, in
    /// nanoseconds (the lateness of the last wait, or of a start already past).
    pub start_skew_ns: Option<i64>,
    /// Against a cluster: its masters (in the order of `record`'s per-node records) and
    /// the layout's changes during the run.
    pub layout: Option<LayoutHistory>,
}

/// Most outages a run keeps; later ones are counted in [`ConnectionEvents::outages_left_out`].
pub const MAX_OUTAGES: usize = 100;

/// A time the server could not be reached: from when a connection was lost (or, with no
/// connection lost, its first failed connect) to when a connection opened again. Its
/// end is as late as the reconnect backoff (up to a second) makes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outage {
    /// Start, as an offset from the run's start.
    pub start: Duration,
    /// End, as an offset from the run's start: a reconnect, or the run's end.
    pub end: Duration,
    /// The last connect that failed, as an offset from the run's start: the server was
    /// unreachable at least until then.
    pub last_failed: Duration,
    /// Why the first connect of it failed (the OS's or the server's words).
    pub cause: String,
    /// The server was still unreachable when the run ended (or gave up on it).
    pub until_end: bool,
}

/// What happened to a run's connections: how many were lost and opened again, and when
/// the server could not be reached (overlapping outages of several connections are one).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConnectionEvents {
    /// Connections opened again after a failure (a close, a reset, a timeout); `-k 0`'s
    /// reconnect after every request is not one.
    pub reconnects: u64,
    /// Outages, in order of start, none overlapping; at most [`MAX_OUTAGES`].
    pub outages: Vec<Outage>,
    /// Outages past [`MAX_OUTAGES`], not kept.
    pub outages_left_out: u64,
}

impl ConnectionEvents {
    /// Adds an outage, joined with every one it overlaps.
    pub fn add_outage(&mut self, mut outage: Outage) {
        self.outages.retain(|o| {
            let overlaps = o.start <= outage.end && outage.start <= o.end;
            if overlaps {
                if o.start < outage.start {
                    outage.start = o.start;
                    outage.cause.clone_from(&o.cause);
                }
                outage.end = outage.end.max(o.end);
                outage.last_failed = outage.last_failed.max(o.last_failed);
                outage.until_end |= o.until_end;
            }
            !overlaps
        });
        if self.outages.len() >= MAX_OUTAGES {
            self.outages_left_out += 1;
            return;
        }
        let at = self.outages.partition_point(|o| o.start < outage.start);
        self.outages.insert(at, outage);
    }

    /// Adds `other`'s reconnects and outages into `self`.
    pub fn add(&mut self, other: &ConnectionEvents) {
        self.reconnects += other.reconnects;
        self.outages_left_out += other.outages_left_out;
        for o in &other.outages {
            self.add_outage(o.clone());
        }
    }

    /// The time the server could not be reached, over every outage kept.
    pub fn unreachable(&self) -> Duration {
        self.outages
            .iter()
            .map(|o| o.end.saturating_sub(o.start))
            .sum()
    }
}

/// CPU used by one generator thread, and how long it waited for one.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThreadCpu {
    /// CPU seconds, by the thread's own clock (time on a CPU).
    pub cpu_secs: f64,
    /// Of those, seconds spent spinning while nothing else had work (spin pacing), on a
    /// CPU: time the thread waited while another task held its core is not counted.
    pub idle_spin_secs: f64,
    /// Wall seconds the thread ran the workload.
    pub wall_secs: f64,
    /// Seconds it was runnable but waited for a CPU (another task held its core, or the
    /// core woke up to run it); absent where the kernel does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_secs: Option<f64>,
    /// Times it was put on a CPU (each wait above ends in one); absent with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<u64>,
}

impl ThreadCpu {
    /// The share of its wall time the thread was busy: spinning pacing keeps a core busy
    /// by design, so what counts is the CPU left after the rounds in which the scheduler
    /// spun with nothing else to do.
    pub fn busy_fraction(&self) -> f64 {
        if self.wall_secs > 0.0 {
            (self.cpu_secs - self.idle_spin_secs).max(0.0) / self.wall_secs
        } else {
            0.0
        }
    }

    /// The share of its wall time the thread waited for a CPU; `None` where not known.
    pub fn waited_fraction(&self) -> Option<f64> {
        self.waited_secs
            .filter(|_| self.wall_secs > 0.0)
            .map(|w| w / self.wall_secs)
    }

    /// The mean wait before each time on a CPU, µs; `None` where not known.
    pub fn wait_per_run_us(&self) -> Option<f64> {
        let (waited, runs) = (self.waited_secs?, self.runs?);
        Some(if runs == 0 {
            0.0
        } else {
            waited * 1e6 / runs as f64
        })
    }
}

/// Errors that stop a run before it measures anything.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// A connection could not be opened at the start.
    #[error(transparent)]
    Connect(#[from] NetError),
    /// The tokio runtime or a thread could not start.
    #[error("could not start generator thread: {0}")]
    Runtime(std::io::Error),
    /// `--start-at` had passed by more than a shard may be late when its connections were
    /// ready: run now, its schedule would be skewed against the other shards'.
    #[error(
        "--start-at: this shard was ready {} after the start, more than the {} a shard may be late; nothing was sent: give a later --start-at",
        humantime::format_duration(Duration::from_millis(late.as_millis() as u64)),
        humantime::format_duration(super::plan::MAX_START_LATENESS)
    )]
    LateStart {
        /// How late it was.
        late: Duration,
    },
}

impl RunOutcome {
    /// What the threads measured, with `record` the sum of every interval they sent and
    /// `window_start` the measured window's start (`None`: nothing was sent); `open_loop`
    /// says which window the rates are over.
    pub(crate) fn merge(
        outcomes: Vec<ThreadOutcome>,
        record: Recorder,
        window_start: Option<Instant>,
        open_loop: bool,
        started_at: SystemTime,
        stopped_early: Option<String>,
        start_skew_ns: Option<i64>,
    ) -> RunOutcome {
        let mut connections = ConnectionEvents::default();
        let mut in_flight_at_end = 0;
        let mut measured = Duration::ZERO;
        let mut last_send = Duration::ZERO;
        let mut last_reply = Duration::ZERO;
        let mut thread_cpu = Vec::new();
        let mut send_counts = Vec::new();
        let mut unrecorded_sent: Vec<u64> = Vec::new();
        let after_start = |t: Option<Instant>| match (window_start, t) {
            (Some(start), Some(t)) => t.saturating_duration_since(start),
            _ => Duration::ZERO,
        };
        for o in outcomes {
            in_flight_at_end += o.in_flight_at_end;
            // The window ends where the last thread's share of it did.
            measured = measured.max(after_start(o.window_end));
            last_send = last_send.max(after_start(o.last_send));
            last_reply = last_reply.max(after_start(o.last_reply));
            thread_cpu.push(o.cpu);
            send_counts.push(o.send_counts);
            if unrecorded_sent.len() < o.unrecorded_sent.len() {
                unrecorded_sent.resize(o.unrecorded_sent.len(), 0);
            }
            for (total, n) in unrecorded_sent.iter_mut().zip(&o.unrecorded_sent) {
                *total += n;
            }
            connections.add(&o.connections);
        }
        let total_sent: u64 = record.commands.iter().map(|c| c.sent).sum();
        // A generator that falls behind sends its last request late: stretch the window to
        // the last send so the achieved rate shows it.
        let window = if open_loop {
            measured.max(last_send)
        } else {
            measured
        };
        let per_sec = |n: u64, over: Duration| {
            if over.is_zero() {
                0.0
            } else {
                n as f64 / over.as_secs_f64()
            }
        };
        let achieved_rate_per_sec = per_sec(total_sent, window);
        let sent_bytes_per_sec = per_sec(record.sent_bytes, window);
        // Replies that arrive after the schedule ended still count, over the time they took.
        let reply_window = if open_loop {
            window.max(last_reply)
        } else {
            measured
        };
        let completed: u64 = record.commands.iter().map(|c| c.completed).sum();
        let throughput_per_sec = per_sec(completed, reply_window);
        let received_bytes_per_sec = per_sec(record.received_bytes, reply_window);
        RunOutcome {
            record,
            started_at,
            measured,
            in_flight_at_end,
            achieved_rate_per_sec,
            throughput_per_sec,
            sent_bytes_per_sec,
            received_bytes_per_sec,
            send_counts,
            thread_cpu,
            stopped_early,
            connections,
            unrecorded_sent,
            start_skew_ns,
            layout: None,
        }
    }
}

/// What one thread measured.
#[derive(Debug, Default)]
pub(crate) struct ThreadOutcome {
    pub in_flight_at_end: u64,
    /// Where this thread's share of the measured window ended: an open loop's end of
    /// schedule (or where it saw the run stopped), a closed loop's last reply.
    pub window_end: Option<Instant>,
    /// Its last write of measured requests.
    pub last_send: Option<Instant>,
    /// Its last reply.
    pub last_reply: Option<Instant>,
    pub cpu: ThreadCpu,
    pub send_counts: SendCounts,
    /// Requests written outside the record, per command.
    pub unrecorded_sent: Vec<u64>,
    pub connections: ConnectionEvents,
}

/// Measured requests one thread handed out (to a connection or the backlog) counted per
/// fixed window by the time it handled them (open loop), preallocated for the whole run
/// so counting allocates nothing.
#[derive(Debug, Default, Clone)]
pub struct SendCounts {
    /// Window length.
    pub window: Duration,
    /// Requests handled in each window from the end of warm-up.
    pub counts: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outage(start_ms: u64, end_ms: u64, cause: &str) -> Outage {
        Outage {
            start: Duration::from_millis(start_ms),
            end: Duration::from_millis(end_ms),
            last_failed: Duration::from_millis(end_ms),
            cause: cause.to_string(),
            until_end: false,
        }
    }

    #[test]
    fn overlapping_outages_are_one_and_apart_ones_stay_apart_in_order() {
        let mut events = ConnectionEvents::default();
        events.add_outage(outage(1000, 2000, "second"));
        events.add_outage(outage(900, 1500, "first"));
        events.add_outage(outage(5000, 5100, "later"));
        events.add_outage(outage(100, 200, "earlier"));
        let mut other = ConnectionEvents {
            reconnects: 3,
            ..Default::default()
        };
        other.add_outage(Outage {
            until_end: true,
            ..outage(1800, 2500, "third")
        });
        events.add(&other);
        assert_eq!(
            events.outages,
            [
                outage(100, 200, "earlier"),
                Outage {
                    until_end: true,
                    ..outage(900, 2500, "first")
                },
                outage(5000, 5100, "later"),
            ]
        );
        assert_eq!(events.reconnects, 3);
        assert_eq!(
            events.unreachable(),
            Duration::from_millis(100 + 1600 + 100)
        );
    }

    #[test]
    fn outages_past_the_bound_are_counted_not_kept() {
        let mut events = ConnectionEvents::default();
        for i in 0..(MAX_OUTAGES as u64 + 5) {
            events.add_outage(outage(i * 10, i * 10 + 1, "x"));
        }
        assert_eq!(
            (events.outages.len(), events.outages_left_out),
            (MAX_OUTAGES, 5)
        );
    }
}
