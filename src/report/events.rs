//! What happened to the server during a test: a cluster's layout changing, a time it
//! could not be reached, and what each master saw. Their words are `export::events_text`'s.

use serde::{Deserialize, Serialize};

use super::Latency;

/// A change of a cluster's layout during a test: slots that one master served are now
/// another's (a failover, a slot migration, a master added).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LayoutChangeReport {
    /// When a layout read first showed it, seconds from the test's start (warm-up
    /// included).
    pub at_secs: f64,
    /// The master that served the slots before (`None`: no master did).
    pub from: Option<String>,
    /// The master that serves them now.
    pub to: String,
    /// How many slots.
    pub slots: u32,
}

/// A time the server could not be reached during a test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OutageReport {
    /// When a connection was lost (or first failed to connect), seconds from the test's start.
    pub start_secs: f64,
    /// Seconds until a connection opened again (as late as the reconnect backoff, up to
    /// a second, makes it), or until the end.
    pub length_secs: f64,
    /// Seconds from the start of the outage to its last failed connect: it lasted at least
    /// this long.
    pub at_least_secs: f64,
    /// Why connecting failed, in the OS's or the server's words.
    pub cause: String,
    /// The server was still unreachable when the test ended.
    pub until_end: bool,
}

/// What one cluster master saw of a test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeReport {
    /// `host:port`.
    pub node: String,
    /// Requests written to it (a redirected request counts at every node it went to).
    pub sent: u64,
    /// Successful replies from it.
    pub completed: u64,
    /// Error replies and failures on its connections (redirects not included).
    pub errors: u64,
    /// `MOVED` replies it gave.
    pub moved: u64,
    /// `ASK` replies it gave.
    pub ask: u64,
    /// Response time of its successful replies.
    pub response: Latency,
}
