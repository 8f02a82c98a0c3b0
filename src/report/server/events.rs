//! The server's own record of its stalls during a test: its forks (`INFO stats`), its
//! slow log (`SLOWLOG GET`) and, where it was on, its latency monitor (`LATENCY
//! LATEST` and `HISTORY`: fork, aof-fsync, expire-cycle, eviction-cycle, command...).
//! The model, and the parsing of the replies (pure); reading them is
//! `app::server_events`'s, and what they did to the tail `judge::events`'.

use serde::{Deserialize, Serialize};

use crate::resp::Reply;

/// The server's events during one test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerEvents {
    /// Forks the server made during the test (`total_forks`, Redis 6.2 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forks: Option<u64>,
    /// How long the latest of them held the server, µs (`latest_fork_usec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_fork_usec: Option<u64>,
    /// The latency monitor's threshold for the test, ms, where `--latency-monitor` set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_monitor_ms: Option<u64>,
    /// The events placed on the test's timeline, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<ServerEvent>,
    /// What could not be read, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

/// One stall the server recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerEvent {
    /// Where the server recorded it: `latency monitor` or `slowlog`.
    pub source: String,
    /// What it was: the latency monitor's event (`fork`, `aof-fsync-always`,
    /// `expire-cycle`...), or the slow command's name.
    pub event: String,
    /// When, in seconds from the measured window's start (the server stamps whole
    /// seconds: the event began in the second after this).
    pub at_secs: f64,
    /// How long the server took, ms.
    pub length_ms: f64,
    /// What it did to the test's tail, where an interval holding it stands out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_tail: Option<String>,
}

/// `total_forks` and `latest_fork_usec` of `INFO stats`.
pub fn parse_forks(info: &str) -> (Option<u64>, Option<u64>) {
    let field = |key: &str| {
        info.lines()
            .find_map(|l| l.trim().strip_prefix(key)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
    };
    (field("total_forks"), field("latest_fork_usec"))
}

/// An entry of `SLOWLOG GET`: its id, Unix second, µs, and the command's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlowEntry {
    /// The log's id, growing.
    pub id: i64,
    /// When it was logged, Unix seconds.
    pub unix_secs: i64,
    /// How long it executed, µs.
    pub usec: i64,
    /// The command's name, upper case.
    pub command: String,
}

/// The entries of a `SLOWLOG GET` reply; entries of another shape are left out.
pub fn parse_slowlog(reply: &Reply) -> Vec<SlowEntry> {
    let Reply::Array(entries) = reply else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|e| {
            let Reply::Array(fields) = e else { return None };
            let command = match fields.get(3)? {
                Reply::Array(args) => args.first()?.as_str()?.to_ascii_uppercase(),
                _ => return None,
            };
            Some(SlowEntry {
                id: fields.first()?.as_int()?,
                unix_secs: fields.get(1)?.as_int()?,
                usec: fields.get(2)?.as_int()?,
                command,
            })
        })
        .collect()
}

/// The event names of a `LATENCY LATEST` reply.
pub fn parse_latency_latest(reply: &Reply) -> Vec<String> {
    let Reply::Array(entries) = reply else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|e| match e {
            Reply::Array(fields) => Some(fields.first()?.as_str()?.to_string()),
            _ => None,
        })
        .collect()
}

/// The `(Unix second, ms)` samples of a `LATENCY HISTORY <event>` reply.
pub fn parse_latency_history(reply: &Reply) -> Vec<(i64, i64)> {
    let Reply::Array(entries) = reply else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|e| match e {
            Reply::Array(fields) => Some((fields.first()?.as_int()?, fields.get(1)?.as_int()?)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Reply {
        Reply::Bulk(s.as_bytes().to_vec())
    }

    #[test]
    fn forks_slowlog_and_the_latency_monitor_parse_as_redis_replies() {
        let info = "# Stats\r\ntotal_forks:3\r\nlatest_fork_usec:31250\r\n";
        assert_eq!(parse_forks(info), (Some(3), Some(31_250)));
        assert_eq!(parse_forks("# Stats\r\n"), (None, None));
        let slowlog = Reply::Array(vec![
            Reply::Array(vec![
                Reply::Integer(14),
                Reply::Integer(1_796_000_000),
                Reply::Integer(31_002),
                Reply::Array(vec![bulk("bgsave")]),
                bulk("127.0.0.1:5000"),
                bulk(""),
            ]),
            Reply::Integer(7),
        ]);
        assert_eq!(
            parse_slowlog(&slowlog),
            vec![SlowEntry {
                id: 14,
                unix_secs: 1_796_000_000,
                usec: 31_002,
                command: "BGSAVE".into()
            }]
        );
        let latest = Reply::Array(vec![Reply::Array(vec![
            bulk("fork"),
            Reply::Integer(1_796_000_001),
            Reply::Integer(31),
            Reply::Integer(31),
        ])]);
        assert_eq!(parse_latency_latest(&latest), vec!["fork".to_string()]);
        let history = Reply::Array(vec![Reply::Array(vec![
            Reply::Integer(1_796_000_001),
            Reply::Integer(31),
        ])]);
        assert_eq!(parse_latency_history(&history), vec![(1_796_000_001, 31)]);
        assert!(parse_latency_history(&Reply::Null).is_empty());
    }
}
