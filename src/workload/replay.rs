//! What a replay sends, decided from the trace before it starts: which recorded commands
//! are replayed (`--commands`, `--exclude`, `--limit`, and never those that would take
//! the connection out of request and reply), what each is called in the report (as
//! `INFO commandstats` names it), and the trace's shape ([`TraceShape`]: its span, its
//! clients in order of appearance, its commands and their counts), read in one pass
//! that also finds a bad line before anything is sent.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use super::trace::{TraceError, TraceFormat, TraceReader, TraceRecord};

/// Commands never replayed: their replies do not follow request and reply (a
/// subscription's messages, a replication stream, MONITOR's feed), or they end or reset
/// the connection's session. They are counted as left out, and the report says so.
pub const NEVER_REPLAYED: &[&str] = &[
    "subscribe",
    "psubscribe",
    "ssubscribe",
    "unsubscribe",
    "punsubscribe",
    "sunsubscribe",
    "monitor",
    "sync",
    "psync",
    "replconf",
    "quit",
    "reset",
    "hello",
    "auth",
    "shutdown",
];

/// Commands that change the server or its data beyond the keys a trace reads and writes
/// (a whole verb, or a container's subcommand as [`command_name`] names it): its data as a
/// whole, its configuration, scripts and functions, other clients, users, replication,
/// the cluster's layout, persistence, modules, and the logs the report reads. A trace
/// holding one is refused unless the user allows them (`--allow-admin-commands`): a
/// capture's `FLUSHALL` empties the server under test, a `CONFIG SET maxclients 1` leaves
/// it unusable after the replay.
pub const ADMIN_COMMANDS: &[&str] = &[
    "flushall",
    "flushdb",
    "swapdb",
    "migrate",
    "debug",
    "save",
    "bgsave",
    "bgrewriteaof",
    "slaveof",
    "replicaof",
    "failover",
    "config|set",
    "config|rewrite",
    "config|resetstat",
    "script|flush",
    "script|kill",
    "function|flush",
    "function|delete",
    "function|restore",
    "function|kill",
    "client|kill",
    "client|pause",
    "client|unpause",
    "client|no-evict",
    "client|no-touch",
    "acl|setuser",
    "acl|deluser",
    "acl|load",
    "acl|save",
    "cluster|reset",
    "cluster|failover",
    "cluster|forget",
    "cluster|meet",
    "cluster|addslots",
    "cluster|addslotsrange",
    "cluster|delslots",
    "cluster|delslotsrange",
    "cluster|setslot",
    "cluster|replicate",
    "cluster|flushslots",
    "cluster|bumpepoch",
    "cluster|set-config-epoch",
    "cluster|saveconfig",
    "module|load",
    "module|loadex",
    "module|unload",
    "latency|reset",
    "slowlog|reset",
];

/// The commands of `names` (with their counts) that [`ADMIN_COMMANDS`] holds.
pub fn admin_commands(names: &[(String, u64)]) -> Vec<(String, u64)> {
    names
        .iter()
        .filter(|(name, _)| ADMIN_COMMANDS.contains(&name.as_str()))
        .cloned()
        .collect()
}

/// Commands whose first argument is a subcommand that `INFO commandstats` names apart
/// (`client|setname`), so that each is counted as the server counts it.
const CONTAINERS: &[&str] = &[
    "acl", "client", "cluster", "command", "config", "function", "latency", "memory", "module",
    "object", "pubsub", "script", "slowlog", "xgroup", "xinfo",
];

/// Most distinct commands one replay reports apart (a trace has a few dozen; each is a
/// histogram per interval).
pub const MAX_REPLAY_COMMANDS: usize = 1000;

/// Most records of a command on a thread one replay keeps: each generator thread keeps
/// every command's latency histograms, in each of the records it fills and hands on, so
/// the count of distinct commands times the threads is what a replay's memory follows
/// (1,000 commands on 4 threads; bench/README.md, "Replay memory").
pub const MAX_COMMAND_RECORDS: usize = 4096;

/// Most recorded clients kept apart: each is a connection (`--connections` folds more).
pub const MAX_REPLAY_CLIENTS: usize = 1_000_000;

/// Which recorded commands are replayed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayFilter {
    /// `--commands`: only these (lower case); empty: all.
    pub only: Vec<String>,
    /// `--exclude`: not these (lower case).
    pub exclude: Vec<String>,
    /// `--limit`: at most this many commands of one pass over the trace.
    pub limit: Option<u64>,
}

/// The client MONITOR names for the commands a script ran (`[0 lua] "get" "k"`): the
/// script's own `EVAL` or `FCALL` is replayed and runs them again, so they are not sent.
pub const SCRIPT_CLIENT: &[u8] = b"lua";

impl ReplayFilter {
    /// Whether `record`, a command called `name`, is replayed: not a script's own call,
    /// and kept by [`ReplayFilter::keeps`]. What it leaves out is reported under the
    /// name [`left_out_name`] gives.
    pub fn keeps_record(&self, record: &TraceRecord, name: &str) -> bool {
        record.client != SCRIPT_CLIENT && self.keeps(name)
    }

    /// Whether a command called `name` (its [`command_name`]) is replayed.
    pub fn keeps(&self, name: &str) -> bool {
        let verb = name.split('|').next().unwrap_or(name);
        let listed = |list: &[String]| list.iter().any(|c| c == name || c == verb);
        !NEVER_REPLAYED.contains(&verb)
            && (self.only.is_empty() || listed(&self.only))
            && !listed(&self.exclude)
    }
}

/// The name a command [`ReplayFilter::keeps_record`] left out is reported under: its
/// own, or `get (run by a script)`.
pub fn left_out_name(record: &TraceRecord, name: String) -> String {
    if record.client == SCRIPT_CLIENT {
        format!("{name} (run by a script)")
    } else {
        name
    }
}

/// A recorded command's name as `INFO commandstats` counts it: the verb in lower case,
/// with its subcommand for a container command (`config|get`). Non-UTF-8 bytes of a
/// name are shown as `\xHH`.
pub fn command_name(args: &[Vec<u8>]) -> String {
    let lower = |b: &[u8]| -> String {
        b.iter()
            .flat_map(|c| c.to_ascii_lowercase().escape_ascii())
            .map(char::from)
            .collect()
    };
    let verb = args.first().map_or_else(String::new, |v| lower(v));
    match args.get(1) {
        Some(sub) if CONTAINERS.contains(&verb.as_str()) => format!("{verb}|{}", lower(sub)),
        _ => verb,
    }
}

/// Appends `args` as a RESP array (written by hand: a few lines, and the reader's hot
/// path, where a general encoder's allocations would show).
pub fn encode_command(args: &[Vec<u8>], out: &mut Vec<u8>) {
    fn number(out: &mut Vec<u8>, prefix: u8, n: usize) {
        out.push(prefix);
        out.extend_from_slice(n.to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    number(out, b'*', args.len());
    for arg in args {
        number(out, b'$', arg.len());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// One pass over a trace: what the replay will send, and how it is laid out in time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceShape {
    /// The trace's format, as given or detected.
    pub format: Option<TraceFormat>,
    /// Commands replayed (after the filters and the limit).
    pub commands: u64,
    /// Commands the filters (or [`NEVER_REPLAYED`]) left out, by name.
    pub left_out: Vec<(String, u64)>,
    /// Lines that did not parse, skipped (`--skip-bad-lines`).
    pub bad_lines: u64,
    /// The first skipped line's error.
    pub first_bad: Option<String>,
    /// Recorded time of the first replayed command, in microseconds.
    pub first_us: u64,
    /// The latest recorded time of a replayed command, in microseconds.
    pub last_us: u64,
    /// Commands recorded before the one before them (replayed at the latest time so far).
    pub out_of_order: u64,
    /// Recorded clients in order of first appearance: connection `i` is the `i`th.
    pub clients: Vec<Vec<u8>>,
    /// Replayed commands without a client (dealt over the connections in turn).
    pub without_client: u64,
    /// Replayed command names in order of first appearance, with their counts.
    pub names: Vec<(String, u64)>,
    /// Whether a replayed command runs in a database other than 0 (a SELECT may be
    /// sent before it, when its connection is in another).
    pub other_databases: bool,
}

impl TraceShape {
    /// Reads the trace at `path` through once.
    pub fn scan(
        path: &Path,
        format: Option<TraceFormat>,
        skip_bad_lines: bool,
        filter: &ReplayFilter,
    ) -> Result<TraceShape, TraceError> {
        let file = File::open(path)?;
        let mut reader = TraceReader::new(
            BufReader::with_capacity(1 << 20, file),
            format,
            skip_bad_lines,
        )?;
        let mut shape = TraceShape {
            format: Some(reader.format()),
            ..TraceShape::default()
        };
        let mut clients: HashMap<Vec<u8>, ()> = HashMap::new();
        let mut names: HashMap<String, usize> = HashMap::new();
        let mut left_out: HashMap<String, u64> = HashMap::new();
        while let Some(record) = reader.next_record()? {
            if filter.limit.is_some_and(|limit| shape.commands >= limit) {
                break;
            }
            let name = command_name(&record.args);
            if !filter.keeps_record(record, &name) {
                *left_out.entry(left_out_name(record, name)).or_default() += 1;
                continue;
            }
            shape.add(record, name, &mut clients, &mut names)?;
        }
        shape.bad_lines = reader.bad_lines();
        shape.first_bad = reader.first_bad().map(ToString::to_string);
        shape.left_out = left_out.into_iter().collect();
        shape
            .left_out
            .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(shape)
    }

    fn add(
        &mut self,
        record: &TraceRecord,
        name: String,
        clients: &mut HashMap<Vec<u8>, ()>,
        names: &mut HashMap<String, usize>,
    ) -> Result<(), TraceError> {
        if self.commands == 0 {
            self.first_us = record.at_us;
        }
        if record.at_us < self.last_us {
            self.out_of_order += 1;
        }
        self.last_us = self.last_us.max(record.at_us);
        self.commands += 1;
        self.other_databases |= record.db.is_some_and(|db| db != 0);
        if record.client.is_empty() {
            self.without_client += 1;
        } else if !clients.contains_key(&record.client) {
            if clients.len() >= MAX_REPLAY_CLIENTS {
                return Err(bad(
                    record,
                    format!("more than {MAX_REPLAY_CLIENTS} clients"),
                ));
            }
            clients.insert(record.client.clone(), ());
            self.clients.push(record.client.clone());
        }
        match names.get(&name) {
            Some(&i) => self.names[i].1 += 1,
            None => {
                if names.len() >= MAX_REPLAY_COMMANDS {
                    return Err(bad(
                        record,
                        format!("more than {MAX_REPLAY_COMMANDS} distinct commands"),
                    ));
                }
                names.insert(name.clone(), self.names.len());
                self.names.push((name, 1));
            }
        }
        Ok(())
    }

    /// The recorded span from the first replayed command to the last, in seconds.
    pub fn span_secs(&self) -> f64 {
        (self.last_us.saturating_sub(self.first_us)) as f64 / 1e6
    }

    /// The recorded mean rate, commands per second (`None` for a trace of no span).
    pub fn mean_rate_per_sec(&self) -> Option<f64> {
        let span = self.span_secs();
        (span > 0.0 && self.commands > 1).then(|| (self.commands - 1) as f64 / span)
    }
}

fn bad(record: &TraceRecord, reason: String) -> TraceError {
    TraceError::BadLine {
        line: record.line,
        reason,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn args(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn names_follow_commandstats() {
        assert_eq!(command_name(&args(&["GET", "k"])), "get");
        assert_eq!(command_name(&args(&["CONFIG", "GET", "x"])), "config|get");
        assert_eq!(
            command_name(&args(&["client", "SetName", "x"])),
            "client|setname"
        );
        assert_eq!(command_name(&[b"G\xffT".to_vec()]), "g\\xfft");
    }

    #[test]
    fn filters_keep_what_was_asked_and_never_a_subscription() {
        let all = ReplayFilter::default();
        assert!(all.keeps("get"));
        assert!(!all.keeps("subscribe"));
        let only = ReplayFilter {
            only: vec!["get".into(), "config".into()],
            ..Default::default()
        };
        assert!(only.keeps("get") && only.keeps("config|get") && !only.keeps("set"));
        let exclude = ReplayFilter {
            exclude: vec!["config|set".into()],
            ..Default::default()
        };
        assert!(exclude.keeps("config|get") && !exclude.keeps("config|set"));
    }

    #[test]
    fn commands_that_change_the_server_are_found_by_their_names() {
        let names: Vec<(String, u64)> = [
            (&["FLUSHALL"][..], 2),
            (&["CONFIG", "SET", "maxclients", "1"], 1),
            (&["config", "get", "maxclients"], 4),
            (&["CLIENT", "KILL", "ID", "3"], 1),
            (&["client", "setname", "x"], 1),
            (&["DEBUG", "SLEEP", "0"], 1),
            (&["cluster", "Reset"], 1),
            (&["GET", "k"], 9),
        ]
        .iter()
        .map(|(words, n)| (command_name(&args(words)), *n))
        .collect();
        assert_eq!(
            admin_commands(&names),
            [
                ("flushall".to_string(), 2),
                ("config|set".to_string(), 1),
                ("client|kill".to_string(), 1),
                ("debug".to_string(), 1),
                ("cluster|reset".to_string(), 1),
            ]
        );
        // Each is a name a command can have: lower case, a container's subcommand apart.
        for name in ADMIN_COMMANDS {
            let verb = name.split('|').next().unwrap_or(name);
            assert_eq!(name.contains('|'), CONTAINERS.contains(&verb), "{name}");
            assert_eq!(*name, name.to_lowercase());
        }
    }

    #[test]
    fn commands_are_encoded_as_resp_arrays() {
        let mut out = Vec::new();
        encode_command(&args(&["SET", "k", ""]), &mut out);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
    }

    #[test]
    fn a_scan_counts_clients_commands_and_span() {
        let dir = std::env::temp_dir().join(format!("tailrate-shape-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.monitor");
        std::fs::write(
            &path,
            "OK\n\
             100.000000 [0 127.0.0.1:1] \"SET\" \"a\" \"1\"\n\
             100.500000 [0 127.0.0.1:2] \"GET\" \"a\"\n\
             100.250000 [3 127.0.0.1:1] \"GET\" \"b\"\n\
             101.000000 [0 127.0.0.1:2] \"SUBSCRIBE\" \"c\"\n\
             101.500000 [0 lua] \"GET\" \"a\"\n\
             102.000000 [0 127.0.0.1:3] \"GET\" \"a\"\n",
        )
        .unwrap();
        let shape = TraceShape::scan(&path, None, false, &ReplayFilter::default()).unwrap();
        assert_eq!(shape.format, Some(TraceFormat::Monitor));
        assert_eq!(shape.commands, 4);
        assert_eq!(shape.clients.len(), 3);
        assert_eq!(
            shape.names,
            [("set".to_string(), 1), ("get".to_string(), 3)]
        );
        assert_eq!(
            shape.left_out,
            [
                ("get (run by a script)".to_string(), 1),
                ("subscribe".to_string(), 1)
            ]
        );
        assert_eq!((shape.first_us, shape.last_us), (100_000_000, 102_000_000));
        assert_eq!(shape.out_of_order, 1);
        assert!(shape.other_databases);
        assert_eq!(shape.mean_rate_per_sec(), Some(1.5));
        let limited = ReplayFilter {
            limit: Some(2),
            ..Default::default()
        };
        let shape = TraceShape::scan(&path, None, false, &limited).unwrap();
        assert_eq!(shape.commands, 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
