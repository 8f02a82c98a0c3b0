//! Reading the server's own record of its stalls around a test, on the readings'
//! connection: before the test, its fork count and the slow log's latest id (and, with
//! `--latency-monitor MS`, the latency monitor's threshold set for the test, its
//! history reset); after it, what was added, each event placed on the test's timeline.
//! The threshold is set back to what it was after the test.

use super::server_view::Observer;
use crate::report::server::events::{self, ServerEvent, ServerEvents};

/// The most slow-log entries read after a test (the server keeps 128 by default).
const SLOWLOG_READ: &[u8] = b"128";

/// What the server's record held before the test.
pub struct Marks {
    forks: Option<u64>,
    slowlog_id: Option<i64>,
    /// With the latency monitor set for the test: its threshold, and the one it had.
    monitor: Option<(u64, Option<String>)>,
    missing: Vec<String>,
}

/// Marks the server's record before a test; sets the latency monitor's threshold to
/// `monitor_ms` for it when given.
pub fn mark(observer: &mut Observer, monitor_ms: Option<u64>) -> Marks {
    let mut missing = Vec::new();
    let forks = match observer.call(&[b"INFO", b"stats"]) {
        Ok(reply) => events::parse_forks(reply.as_str().unwrap_or_default()).0,
        Err(e) => {
            missing.push(format!("INFO stats: {e}"));
            None
        }
    };
    let slowlog_id = match observer.call(&[b"SLOWLOG", b"GET", b"1"]) {
        Ok(reply) => Some(events::parse_slowlog(&reply).first().map_or(-1, |e| e.id)),
        Err(e) => {
            missing.push(format!("SLOWLOG: {e}"));
            None
        }
    };
    let monitor = monitor_ms.and_then(|ms| {
        let was = observer
            .call(&[b"CONFIG", b"GET", b"latency-monitor-threshold"])
            .ok()
            .and_then(|r| match r {
                crate::resp::Reply::Array(kv) | crate::resp::Reply::Set(kv) => {
                    kv.get(1)?.as_str().map(str::to_string)
                }
                crate::resp::Reply::Map(kv) => kv.first()?.1.as_str().map(str::to_string),
                _ => None,
            });
        let set = observer.call(&[
            b"CONFIG",
            b"SET",
            b"latency-monitor-threshold",
            ms.to_string().as_bytes(),
        ]);
        match set {
            Ok(_) => {
                let _ = observer.call(&[b"LATENCY", b"RESET"]);
                Some((ms, was))
            }
            Err(e) => {
                missing.push(format!(
                    "the latency monitor (CONFIG SET latency-monitor-threshold): {e}"
                ));
                None
            }
        }
    });
    Marks {
        forks,
        slowlog_id,
        monitor,
        missing,
    }
}

/// The server's events since `marks`, placed on the timeline of a measured window that
/// began at `window_unix_secs` (Unix seconds) and lasted `window_secs`; the latency
/// monitor's threshold is set back.
pub fn collect(
    observer: &mut Observer,
    marks: Marks,
    window_unix_secs: f64,
    window_secs: f64,
) -> ServerEvents {
    let mut out = ServerEvents {
        latency_monitor_ms: marks.monitor.as_ref().map(|m| m.0),
        missing: marks.missing,
        ..ServerEvents::default()
    };
    // Whole seconds: an event stamped in the second the window began may fall in it.
    let (from, to) = (
        window_unix_secs.floor() as i64,
        (window_unix_secs + window_secs).ceil() as i64,
    );
    let place = |unix_secs: i64| unix_secs as f64 - window_unix_secs;
    if let Ok(reply) = observer.call(&[b"INFO", b"stats"]) {
        let (forks, latest) = events::parse_forks(reply.as_str().unwrap_or_default());
        out.forks = forks.zip(marks.forks).map(|(a, b)| a.saturating_sub(b));
        out.latest_fork_usec = latest.filter(|_| out.forks.is_some_and(|n| n > 0));
    }
    if let (Some(since), Ok(reply)) = (
        marks.slowlog_id,
        observer.call(&[b"SLOWLOG", b"GET", SLOWLOG_READ]),
    ) {
        for e in events::parse_slowlog(&reply) {
            if e.id > since && (from..=to).contains(&e.unix_secs) {
                out.events.push(ServerEvent {
                    source: "slowlog".into(),
                    event: e.command,
                    at_secs: place(e.unix_secs),
                    length_ms: e.usec as f64 / 1e3,
                    in_tail: None,
                });
            }
        }
    }
    if let Some((_, was)) = marks.monitor {
        let names = observer
            .call(&[b"LATENCY", b"LATEST"])
            .map(|r| events::parse_latency_latest(&r))
            .unwrap_or_default();
        for name in names {
            let Ok(reply) = observer.call(&[b"LATENCY", b"HISTORY", name.as_bytes()]) else {
                continue;
            };
            for (unix_secs, ms) in events::parse_latency_history(&reply) {
                if (from..=to).contains(&unix_secs) {
                    out.events.push(ServerEvent {
                        source: "latency monitor".into(),
                        event: name.clone(),
                        at_secs: place(unix_secs),
                        length_ms: ms as f64,
                        in_tail: None,
                    });
                }
            }
        }
        if let Some(was) = was
            && let Err(e) = observer.call(&[
                b"CONFIG",
                b"SET",
                b"latency-monitor-threshold",
                was.as_bytes(),
            ])
        {
            out.missing.push(format!(
                "the latency monitor's threshold could not be set back to {was}: {e}"
            ));
        }
    }
    out.events.sort_by(|a, b| a.at_secs.total_cmp(&b.at_secs));
    out
}
