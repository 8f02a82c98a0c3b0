//! Parsing what the server says of itself: `INFO commandstats`, `INFO server`'s run_id,
//! `INFO cpu` and `LATENCY HISTOGRAM`, from text or RESP2/RESP3 replies. Pure.

use std::collections::BTreeMap;

use super::CommandCounters;
use crate::resp::Reply;

/// Parses `INFO commandstats`: `cmdstat_get:calls=3,usec=9,usec_per_call=3.00,...` lines.
pub fn parse_commandstats(text: &str) -> BTreeMap<String, CommandCounters> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((name, fields)) = line
            .trim()
            .strip_prefix("cmdstat_")
            .and_then(|l| l.split_once(':'))
        else {
            continue;
        };
        let mut counters = CommandCounters::default();
        for field in fields.split(',') {
            let Some((key, value)) = field.split_once('=') else {
                continue;
            };
            let value = value.parse().unwrap_or(0);
            match key {
                "calls" => counters.calls = value,
                "usec" => counters.usec = value,
                "rejected_calls" => counters.rejected_calls = value,
                _ => {}
            }
        }
        out.insert(name.to_ascii_lowercase(), counters);
    }
    out
}

/// Parses `INFO server` for the process's `run_id` (random at each start, so two
/// readings with one run_id are of one server process that never restarted between).
pub fn parse_run_id(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("run_id:"))
        .map(|id| id.trim().to_string())
        .filter(|id| !id.is_empty())
}

/// Parses `INFO server` for `process_id`.
pub fn parse_process_id(text: &str) -> Option<u32> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("process_id:"))
        .and_then(|id| id.trim().parse().ok())
}

/// Parses `INFO cpu` for the process's CPU seconds (system plus user, children excluded).
pub fn parse_cpu_secs(text: &str) -> Option<f64> {
    let field = |key: &str| {
        text.lines().find_map(|l| {
            l.trim()
                .strip_prefix(key)?
                .strip_prefix(':')?
                .parse::<f64>()
                .ok()
                // A CPU time is a finite count of seconds, never negative.
                .filter(|v| v.is_finite() && *v >= 0.0)
        })
    };
    Some(field("used_cpu_sys")? + field("used_cpu_user")?)
}

/// Parses `LATENCY HISTOGRAM`'s reply: per command, `calls` and `histogram_usec` (a flat
/// array or map of bucket bound and cumulative count), in RESP2 or RESP3 form.
pub fn parse_latency_histogram(reply: &Reply) -> Option<BTreeMap<String, Vec<(u64, u64)>>> {
    let mut out = BTreeMap::new();
    for (name, body) in pairs(reply)? {
        let name = name.as_str()?.to_ascii_lowercase();
        let mut buckets = Vec::new();
        for (key, value) in pairs(body)? {
            if key.as_str() == Some("histogram_usec") {
                for (bound, count) in pairs(value)? {
                    buckets.push((
                        bound.as_int()?.try_into().ok()?,
                        count.as_int()?.try_into().ok()?,
                    ));
                }
            }
        }
        buckets.sort_unstable();
        out.insert(name, buckets);
    }
    Some(out)
}

/// A RESP3 map's pairs, or a RESP2 array read two elements at a time.
fn pairs(reply: &Reply) -> Option<Vec<(&Reply, &Reply)>> {
    match reply {
        Reply::Map(pairs) => Some(pairs.iter().map(|(k, v)| (k, v)).collect()),
        Reply::Array(items) if items.len() % 2 == 0 => {
            Some(items.chunks_exact(2).map(|p| (&p[0], &p[1])).collect())
        }
        _ => None,
    }
}
