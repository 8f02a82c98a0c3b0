//! Where a test's requests ended, in total and per command, and the writes that carried
//! `--workers` requests.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Latency, is_zero};
use crate::record::{CommandRecord, Metric};

/// The writes that carried `--workers` requests.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Batches {
    /// Writes (each one batch of requests).
    pub writes: u64,
    /// Requests written per write, on average.
    pub mean_requests_per_write: f64,
}

/// One command's results within a test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CommandReport {
    /// Command name, lower case.
    pub command: String,
    /// Its counts.
    pub counts: Counts,
    /// Its latencies.
    pub latency: BTreeMap<Metric, Latency>,
}

/// Where every request ended:
/// `intended = completed + errors + timeouts + not_sent + in_flight_at_end`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Counts {
    /// Requests planned (open loop) or started (closed loop).
    pub intended: u64,
    /// Requests written to a socket.
    pub sent: u64,
    /// Successful replies.
    pub completed: u64,
    /// Successful replies to reads (`GET`, `HGET`, `LINDEX`, `ZSCORE`, `GETEX`) that held a
    /// value; absent when the test or command sends no read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<u64>,
    /// Successful replies to reads that were null (nothing at the key); absent when the
    /// test or command sends no read. Counted per reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misses: Option<u64>,
    /// Error replies and failed requests.
    pub errors: u64,
    /// Errors by kind (the first word of the reply; at most 64 kinds, then `other`).
    pub errors_by_kind: BTreeMap<String, u64>,
    /// The first error text of each kind, as the server sent it.
    #[serde(default)]
    pub error_examples: BTreeMap<String, String>,
    /// Requests with no reply within `--timeout`.
    pub timeouts: u64,
    /// Requests dropped by a full backlog or never written before the end.
    pub not_sent: u64,
    /// Requests written and unanswered when the run ended.
    pub in_flight_at_end: u64,
    /// Of the timed out, never sent and in flight at the end, those counted in the
    /// response times at their age when given up: a lower bound of a latency that never
    /// ended, so a server that stops answering is slower, not faster.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unanswered_counted: u64,
    /// The longest a request still in flight at the end had waited since it was written
    /// (a stall's length; one written just before the end is no sign of one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub longest_unanswered_ns: u64,
    /// Cluster redirects followed (`MOVED`, `ASK`); a redirected request is counted once above.
    #[serde(default)]
    pub redirects: u64,
}

impl Counts {
    /// The counts of `rec`, with its hits and misses when `reads` (it holds a read).
    pub(crate) fn of(rec: &CommandRecord, in_flight_at_end: u64, reads: bool) -> Self {
        Counts {
            intended: rec.intended,
            sent: rec.sent,
            completed: rec.completed,
            hits: reads.then_some(rec.hits),
            misses: reads.then_some(rec.misses),
            errors: rec.error_total(),
            errors_by_kind: rec.errors.clone(),
            error_examples: rec.error_examples.clone(),
            timeouts: rec.timeouts,
            not_sent: rec.not_sent,
            in_flight_at_end,
            unanswered_counted: rec.unanswered_counted,
            longest_unanswered_ns: rec.longest_unanswered_ns,
            redirects: rec.redirects,
        }
    }

    /// Intended requests that are not in the response times: those that ended in an
    /// error, and those given up without a reply that were not counted at their age.
    pub fn excluded_from_latency(&self) -> u64 {
        self.intended
            .saturating_sub(self.completed)
            .saturating_sub(self.unanswered_counted)
    }

    /// Whether every intended request is accounted for.
    pub fn balanced(&self) -> bool {
        self.intended
            == self.completed + self.errors + self.timeouts + self.not_sent + self.in_flight_at_end
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn counts_balance_when_every_request_is_accounted_for() {
        let c = Counts {
            intended: 10,
            sent: 9,
            completed: 6,
            errors: 1,
            timeouts: 1,
            not_sent: 1,
            in_flight_at_end: 1,
            ..Default::default()
        };
        assert!(c.balanced());
        assert!(!Counts { completed: 7, ..c }.balanced());
    }
}
