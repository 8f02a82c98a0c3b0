//! The server's own view of a test: what it counted and timed, read from `INFO
//! commandstats`, `INFO cpu` and `LATENCY HISTOGRAM` before and after the test, and the
//! difference of the two readings.
//!
//! Every counter read here is cumulative since the server started, so two readings
//! subtract exactly to what happened between them, whatever else the server did before.
//! What a server does not answer (a proxy, a user without `INFO` or `LATENCY`, Redis
//! before 7) is a fact missing, said in words in `missing`, never an error.
//!
//! The model is here; parsing the replies is `reading`'s and the difference of two
//! readings `view`'s, both pure; taking the readings over a connection is
//! `app::server_view`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub mod events;
mod reading;
mod view;

pub use reading::{
    parse_commandstats, parse_cpu_secs, parse_latency_histogram, parse_process_id, parse_run_id,
};
pub use view::{add_cumulative, merged_view, server_name, view};

/// One reading of the server's counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// `INFO commandstats`, by lower-case command name (`get`, `config|get`).
    pub commands: Option<BTreeMap<String, CommandCounters>>,
    /// `used_cpu_sys + used_cpu_user` (the server process, all its threads).
    pub cpu_secs: Option<f64>,
    /// `LATENCY HISTOGRAM`, by lower-case command name: cumulative counts of calls that
    /// took at most each bucket's bound, in microseconds, ascending.
    pub latency: Option<BTreeMap<String, Vec<(u64, u64)>>>,
    /// Facts this reading lacks, and why ("LATENCY HISTOGRAM: unknown command").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// `run_id` of each node read (`INFO server`), where asked: a shard's first reading
    /// asks, so that the merge adds only readings of the same server processes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_ids: Vec<String>,
    /// `process_id` of each node read (`INFO server`, asked by every first reading), in
    /// the server's own PID namespace: what the host meter looks for here.
    #[serde(skip)]
    pub process_ids: Vec<u32>,
}

impl Reading {
    /// The reading of `commands` alone (tailrate's names), the rest of commandstats and
    /// of the histograms left out: what a shard keeps.
    pub fn of_commands(&self, commands: &[String]) -> Reading {
        fn only<V: Clone>(map: &BTreeMap<String, V>, keys: &[String]) -> BTreeMap<String, V> {
            map.iter()
                .filter(|(k, _)| keys.contains(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        }
        let keys: Vec<String> = commands.iter().map(|c| server_name(c)).collect();
        Reading {
            commands: self.commands.as_ref().map(|m| only(m, &keys)),
            latency: self.latency.as_ref().map(|m| only(m, &keys)),
            ..self.clone()
        }
    }
}

/// A command's counters in `INFO commandstats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandCounters {
    /// Calls executed.
    pub calls: u64,
    /// Microseconds spent executing them.
    pub usec: u64,
    /// Calls refused before execution (arity, ACL, OOM); Redis 7 and later.
    pub rejected_calls: u64,
}

/// The server's view of one test: the difference of the readings before and after it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerView {
    /// Seconds between the two readings (the test, warm-up and drain included).
    pub span_secs: f64,
    /// Per command the test sent, in the test's order.
    pub commands: Vec<ServerCommand>,
    /// Server CPU seconds between the readings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_secs: Option<f64>,
    /// `cpu_secs / span_secs`: 1.0 is one core kept busy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_utilisation: Option<f64>,
    /// Facts the server did not give, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The server's own record of its stalls during the test (forks, the slow log, the
    /// latency monitor), placed on the test's timeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<events::ServerEvents>,
    /// The two readings themselves, kept by a shard: its server also counts the other
    /// shards' requests, so only the merge can take the view of the whole plan, from the
    /// earliest reading before and the latest after of all the shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<Box<KeptReadings>>,
}

impl ServerView {
    /// Microseconds the server spent executing the test's commands: each command's mean
    /// execution time times its calls, over the commands that reported one.
    pub fn exec_usec_total(&self) -> f64 {
        self.commands
            .iter()
            .filter_map(|c| Some(c.mean_exec_usec? * c.calls as f64))
            .sum()
    }
}

/// A shard's readings before and after its test, of its commands alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptReadings {
    /// When the reading before was taken, in Unix seconds (the shards' common clock).
    pub before_unix_secs: f64,
    /// When the reading after was taken.
    pub after_unix_secs: f64,
    /// The reading before.
    pub before: Reading,
    /// The reading after.
    pub after: Reading,
}

/// What the server counted and timed of one command during a test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCommand {
    /// The command, as tailrate names it (`GET`).
    pub command: String,
    /// Calls the server executed, plus those it rejected.
    pub calls: u64,
    /// Requests of it tailrate wrote, warm-up included.
    pub sent_by_tailrate: u64,
    /// Mean execution time in microseconds (`usec` over `calls`), exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_exec_usec: Option<f64>,
    /// Execution-time percentiles from the server's histogram, in microseconds: the upper
    /// bound of the bucket each falls in (the server's buckets double from 1 µs: 1, 2,
    /// 4, ..., 528, 1056, 2113), so `p50 <= 4 µs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exec_usec_at_most: Option<ExecPercentiles>,
}

/// Upper bounds of the server's execution time at the report's percentiles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecPercentiles {
    /// 50th percentile's bucket bound, µs.
    pub p50: u64,
    /// 90th.
    pub p90: u64,
    /// 99th.
    pub p99: u64,
    /// 99.9th.
    pub p99_9: u64,
}

#[cfg(test)]
mod tests;
