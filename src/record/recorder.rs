//! The counts and histograms of one thread's interval: per command, per cluster node,
//! added together exactly across threads and intervals.

use std::collections::BTreeMap;

use super::bounds::LOWEST_NS;
use super::counts::Counts;
use super::histograms::{Histograms, Metric, Timing};

/// Most error kinds a record keeps apart; the rest are counted as [`OTHER_ERRORS`].
pub const MAX_ERROR_KINDS: usize = 64;
/// The kind under which errors past [`MAX_ERROR_KINDS`] kinds are counted.
pub const OTHER_ERRORS: &str = "other";

/// How every request of one command ended, and its latencies.
#[derive(Debug, Clone)]
pub struct CommandRecord {
    /// Latency histograms of successful replies.
    pub hist: Histograms,
    /// Requests the schedule produced (open loop) or the driver started (closed loop).
    pub intended: u64,
    /// Requests written to a socket.
    pub sent: u64,
    /// Successful replies.
    pub completed: u64,
    /// Of a read's successful replies (see `Template::counts_hits`), those with a value.
    pub hits: u64,
    /// Of a read's successful replies, the nulls: the key (or field, or index) was not there.
    pub misses: u64,
    /// Error replies and failed requests, by kind (`ERR`, `WRONGTYPE`, `connection_reset`...).
    pub errors: BTreeMap<String, u64>,
    /// The first message of each kind in `errors`, as the server sent it.
    pub error_examples: BTreeMap<String, String>,
    /// Requests that got no reply within `--timeout`.
    pub timeouts: u64,
    /// Requests dropped because the client backlog was full.
    pub not_sent: u64,
    /// Requests given up without a reply (timed out, never sent, in flight at the end)
    /// whose age then is in the response histogram: a lower bound of their latency.
    pub unanswered_counted: u64,
    /// The longest a request given up in flight at the end had waited since it was
    /// written (0: none was): a stall's length, where a request written just before the
    /// end is no sign of one.
    pub longest_unanswered_ns: u64,
    /// Cluster `MOVED` and `ASK` redirects followed (a redirected request is sent again,
    /// not counted twice).
    pub redirects: u64,
}

impl Default for CommandRecord {
    /// An empty record with the response time's histogram; the others are made on first use.
    fn default() -> Self {
        CommandRecord::for_timing(Timing::Closed)
    }
}

impl CommandRecord {
    /// An empty record with every histogram a run of `timing` records into.
    pub fn for_timing(timing: Timing) -> Self {
        CommandRecord {
            hist: Histograms::for_timing(timing),
            intended: 0,
            sent: 0,
            completed: 0,
            hits: 0,
            misses: 0,
            errors: BTreeMap::new(),
            error_examples: BTreeMap::new(),
            timeouts: 0,
            not_sent: 0,
            unanswered_counted: 0,
            longest_unanswered_ns: 0,
            redirects: 0,
        }
    }

    /// Counts one error of `kind`.
    pub fn count_error(&mut self, kind: &str, message: &str, n: u64) {
        if n == 0 {
            return;
        }
        if let Some(count) = self.errors.get_mut(kind) {
            *count += n;
            return;
        }
        // A server may send a new error text each time: past MAX_ERROR_KINDS they are
        // counted together, so memory and the report stay bounded.
        let kind = if self.errors.len() < MAX_ERROR_KINDS {
            kind
        } else {
            OTHER_ERRORS
        };
        *self.errors.entry(kind.to_string()).or_insert(0) += n;
        self.error_examples
            .entry(kind.to_string())
            .or_insert_with(|| message.to_string());
    }

    /// Total errors of every kind.
    pub fn error_total(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &CommandRecord) {
        self.hist.add(&other.hist);
        self.intended += other.intended;
        self.sent += other.sent;
        self.completed += other.completed;
        self.hits += other.hits;
        self.misses += other.misses;
        for (kind, n) in &other.errors {
            let example = other.error_examples.get(kind).map_or("", String::as_str);
            self.count_error(kind, example, *n);
        }
        self.timeouts += other.timeouts;
        self.not_sent += other.not_sent;
        self.unanswered_counted += other.unanswered_counted;
        self.longest_unanswered_ns = self.longest_unanswered_ns.max(other.longest_unanswered_ns);
        self.redirects += other.redirects;
    }

    /// Empties the record, keeping histogram memory.
    pub fn reset(&mut self) {
        self.hist.reset();
        self.errors.clear();
        self.error_examples.clear();
        self.intended = 0;
        self.sent = 0;
        self.completed = 0;
        self.hits = 0;
        self.misses = 0;
        self.timeouts = 0;
        self.not_sent = 0;
        self.unanswered_counted = 0;
        self.longest_unanswered_ns = 0;
        self.redirects = 0;
    }

    /// Counts `n` requests given up without a reply at `age_ns` after their intended
    /// time in the response histogram (not in a service time kept apart: they had none). A request
    /// never answered is the slowest of its run, not an absent one: left out, a server
    /// that froze would look faster than one that kept answering.
    pub fn record_unanswered(&mut self, age_ns: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.hist.response.record_n(age_ns.max(LOWEST_NS), n);
        self.unanswered_counted += n;
    }

    /// The same requests' ages from when the generator handled them, where the run
    /// records its lateness: the lag check weighs the response times against these,
    /// and an unanswered request in one and not the other would read as lateness.
    pub fn record_unanswered_on_time(&mut self, age_ns: u64, n: u64) {
        if let Some(on_time) = self.hist.on_time.as_mut() {
            on_time.record_n(age_ns.max(LOWEST_NS), n);
        }
    }

    /// Notes that a request given up in flight had waited `waited_ns` since it was
    /// written; the record keeps the longest.
    pub fn note_unanswered_wait(&mut self, waited_ns: u64) {
        self.longest_unanswered_ns = self.longest_unanswered_ns.max(waited_ns);
    }
}

/// What one cluster master saw of a run: requests written to it (redirected ones
/// included), how they ended there, and the redirects it answered with.
#[derive(Debug, Clone, Default)]
pub struct NodeRecord {
    /// Requests written to this node.
    pub sent: u64,
    /// Successful replies from it.
    pub completed: u64,
    /// Error replies and failures on its connections (redirects not included).
    pub errors: u64,
    /// `MOVED` replies.
    pub moved: u64,
    /// `ASK` replies.
    pub ask: u64,
    /// Response time of its successful replies.
    pub response: Counts,
}

impl NodeRecord {
    fn add(&mut self, other: &NodeRecord) {
        self.sent += other.sent;
        self.completed += other.completed;
        self.errors += other.errors;
        self.moved += other.moved;
        self.ask += other.ask;
        self.response.add(&other.response);
    }
}

/// The records of every command of a test, for one thread and one interval (or merged).
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    /// One record per command of the test, by command index.
    pub commands: Vec<CommandRecord>,
    /// Against a cluster: one record per master, by node index (empty otherwise).
    pub nodes: Vec<NodeRecord>,
    /// Writes that carried `--workers` batches (0 in other modes).
    pub writes: u64,
    /// Bytes written to sockets by writes that carried measured requests.
    pub sent_bytes: u64,
    /// Bytes read from sockets by reads while measured requests were in flight.
    pub received_bytes: u64,
}

impl Recorder {
    /// An empty recorder for `n_commands` commands (response-time histograms; the others
    /// are made as values come).
    pub fn new(n_commands: usize) -> Self {
        Recorder {
            commands: vec![CommandRecord::default(); n_commands.max(1)],
            nodes: Vec::new(),
            writes: 0,
            sent_bytes: 0,
            received_bytes: 0,
        }
    }

    /// An empty recorder for `n_commands` commands in a run of `timing`, with every
    /// histogram the run records into made now: a driver thread's, so that no reply
    /// waits for one to be made.
    pub fn for_timing(n_commands: usize, timing: Timing) -> Self {
        let commands = (0..n_commands.max(1))
            .map(|_| CommandRecord::for_timing(timing))
            .collect();
        Recorder {
            commands,
            nodes: Vec::new(),
            writes: 0,
            sent_bytes: 0,
            received_bytes: 0,
        }
    }

    /// The record of cluster node `node`, made on first use.
    pub fn node(&mut self, node: usize) -> &mut NodeRecord {
        if self.nodes.len() <= node {
            self.nodes.resize_with(node + 1, NodeRecord::default);
        }
        &mut self.nodes[node]
    }

    /// Records one successful reply's times, in nanoseconds.
    #[inline]
    pub fn record_reply(&mut self, command: usize, times: &ReplyTimes) {
        self.record_replies(command, times, 1);
    }

    /// Records `n` successful replies of `command` that all had the same times: exactly
    /// what `n` calls of [`record_reply`](Self::record_reply) record, for the cost of one.
    #[inline(always)]
    pub fn record_replies(&mut self, command: usize, times: &ReplyTimes, n: u64) {
        let rec = &mut self.commands[command];
        rec.completed += n;
        let h = &mut rec.hist;
        // saturating_record clamps to the histogram's range instead of failing: a value
        // over an hour is recorded as an hour, zero as the lowest bucket.
        h.response.record_n(times.response_ns.max(LOWEST_NS), n);
        if let Some(service) = times.service_ns {
            h.get_mut(Metric::Service)
                .record_n(service.max(LOWEST_NS), n);
        }
        if let Some(lag) = times.lag_ns {
            h.get_mut(Metric::Lag).record_n(lag.max(LOWEST_NS), n);
            h.on_time_mut()
                .record_n(times.response_ns.saturating_sub(lag).max(LOWEST_NS), n);
        }
        if let Some(wait) = times.queue_wait_ns {
            h.get_mut(Metric::QueueWait)
                .record_n(wait.max(LOWEST_NS), n);
        }
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Recorder) {
        if self.commands.len() < other.commands.len() {
            self.commands
                .resize_with(other.commands.len(), CommandRecord::default);
        }
        for (into, from) in self.commands.iter_mut().zip(&other.commands) {
            into.add(from);
        }
        for (i, from) in other.nodes.iter().enumerate() {
            self.node(i).add(from);
        }
        self.writes += other.writes;
        self.sent_bytes += other.sent_bytes;
        self.received_bytes += other.received_bytes;
    }

    /// The commands merged into one record (the test's aggregate).
    pub fn total(&self) -> CommandRecord {
        let mut total = CommandRecord::default();
        for rec in &self.commands {
            total.add(rec);
        }
        total
    }

    /// Empties every record, keeping memory.
    pub fn reset(&mut self) {
        for rec in &mut self.commands {
            rec.reset();
        }
        self.nodes.clear();
        self.writes = 0;
        self.sent_bytes = 0;
        self.received_bytes = 0;
    }

    /// Successful replies over every command.
    pub fn completed(&self) -> u64 {
        self.commands.iter().map(|c| c.completed).sum()
    }
}

/// The times of one reply, already turned into durations (nanoseconds).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplyTimes {
    /// `received - intended`.
    pub response_ns: u64,
    /// `received - sent`, where it is kept apart from the response time ([`Timing`]).
    pub service_ns: Option<u64>,
    /// `handled - intended`, where the run records it ([`Timing::lag`]).
    pub lag_ns: Option<u64>,
    /// `sent - handled`, where the run records it ([`Timing::queue_wait`]).
    pub queue_wait_ns: Option<u64>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn values_beyond_three_seconds_are_kept() {
        let mut rec = Recorder::new(1);
        rec.record_reply(
            0,
            &ReplyTimes {
                response_ns: 7_000_000_000,
                service_ns: Some(1),
                ..Default::default()
            },
        );
        let max = rec.commands[0].hist.response().max();
        assert!(max >= 6_990_000_000, "max {max}");
    }

    #[test]
    fn merging_adds_counts_and_errors() {
        let mut a = Recorder::new(1);
        let mut b = Recorder::new(1);
        a.record_reply(
            0,
            &ReplyTimes {
                response_ns: 100,
                service_ns: Some(100),
                ..Default::default()
            },
        );
        b.record_reply(
            0,
            &ReplyTimes {
                response_ns: 200,
                service_ns: Some(200),
                ..Default::default()
            },
        );
        b.commands[0].count_error("ERR", "ERR no", 2);
        a.add(&b);
        assert_eq!(a.commands[0].completed, 2);
        assert_eq!(a.commands[0].hist.response_len(), 2);
        assert_eq!(a.commands[0].errors["ERR"], 2);
    }

    #[test]
    fn recording_replies_together_equals_recording_them_one_by_one() {
        let times = ReplyTimes {
            response_ns: 900,
            service_ns: Some(700),
            lag_ns: Some(0),
            queue_wait_ns: Some(200),
        };
        let (mut one_by_one, mut together) = (Recorder::new(2), Recorder::new(2));
        for _ in 0..16 {
            one_by_one.record_reply(1, &times);
        }
        together.record_replies(1, &times, 16);
        let (a, b) = (&one_by_one.commands[1], &together.commands[1]);
        assert_eq!(a.completed, b.completed);
        for metric in Metric::ALL {
            assert_eq!(a.hist.get(metric), b.hist.get(metric), "{metric:?}");
        }
    }

    #[test]
    fn histograms_are_made_for_the_times_a_run_has_and_on_first_use() {
        let open = Histograms::for_timing(Timing::Open);
        assert!(open.service.is_some() && open.lag.is_some() && open.queue_wait.is_some());
        let workers = Histograms::for_timing(Timing::Workers);
        assert!(workers.service.is_some() && workers.lag.is_none() && workers.queue_wait.is_some());
        let closed = Histograms::for_timing(Timing::Closed);
        assert!(closed.service.is_none() && closed.lag.is_none() && closed.queue_wait.is_none());

        // A value recorded, or added, into a time with no histogram yet makes one and is kept.
        let mut rec = Recorder::new(1);
        rec.record_reply(
            0,
            &ReplyTimes {
                response_ns: 900,
                service_ns: None,
                lag_ns: Some(300),
                queue_wait_ns: None,
            },
        );
        assert_eq!(rec.commands[0].hist.get(Metric::Lag).len(), 1);
        let mut total = Recorder::new(1);
        total.add(&rec);
        total.add(&Recorder::for_timing(1, Timing::Open));
        let hist = &total.commands[0].hist;
        assert_eq!(
            (hist.get(Metric::Lag).len(), hist.get(Metric::Lag).max()),
            (1, hist.get(Metric::Lag).highest_equivalent(300))
        );
        assert!(
            hist.service.is_none() && hist.queue_wait.is_none(),
            "empty histograms added make none"
        );
        assert_eq!(hist.get(Metric::Service).len(), 0);
    }
}
