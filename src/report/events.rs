//! What happened to the server during a test: a cluster's layout changing, a time it
//! could not be reached, and what each master saw.

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

impl LayoutChangeReport {
    /// One line: `layout changed at 2.03 s: 127.0.0.1:7634 took over 5461 slots from
    /// 127.0.0.1:7631`.
    pub fn describe(&self) -> String {
        let from = match &self.from {
            Some(from) => format!(" from {from}"),
            None => " that no master served".into(),
        };
        format!(
            "layout changed at {:.2} s: {} took over {} slot{}{}",
            self.at_secs,
            self.to,
            self.slots,
            if self.slots == 1 { "" } else { "s" },
            from
        )
    }
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

impl OutageReport {
    /// "1.28 s from 1.19 s (at least 0.81 s: a connect still failed then; could not
    /// connect to ...: Connection refused)", or "... from 1.19 s to the end (...)".
    pub fn describe(&self) -> String {
        format!(
            "{:.2} s from {:.2} s{} (at least {:.2} s: a connect still failed then; {})",
            self.length_secs,
            self.start_secs,
            if self.until_end { " to the end" } else { "" },
            self.at_least_secs,
            self.cause
        )
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_layout_change_reads_as_one_line_naming_both_masters() {
        let change = LayoutChangeReport {
            at_secs: 2.031,
            from: Some("127.0.0.1:7631".into()),
            to: "127.0.0.1:7634".into(),
            slots: 5461,
        };
        assert_eq!(
            change.describe(),
            "layout changed at 2.03 s: 127.0.0.1:7634 took over 5461 slots from 127.0.0.1:7631"
        );
        let unowned = LayoutChangeReport {
            from: None,
            slots: 1,
            ..change
        };
        assert_eq!(
            unowned.describe(),
            "layout changed at 2.03 s: 127.0.0.1:7634 took over 1 slot that no master served"
        );
    }
}
