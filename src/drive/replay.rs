//! A recorded trace as a schedule ([`Replay`]): each command's intended time is its
//! recorded time after the first, over `--speed`; its connection is its recorded
//! client's (the `i`th client to appear is connection `i`, folded modulo the
//! connections), so that one client's commands go in their order on one connection,
//! and a transaction or other per-connection state stays together; a command without a
//! client goes to the connections in turn. A connection is moved to a command's
//! database with a `SELECT` first when it is in another.
//!
//! The trace is read afresh for every run, as it is sent (see `trace`): its memory is
//! the read-ahead, whatever the file's size.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use super::Cancel;
use super::trace::{FeedClosed, TraceSender, TraceSource};
use crate::workload::replay::{ReplayFilter, TraceShape, command_name, encode_command};
use crate::workload::trace::{TraceFormat, TraceReader};

/// How a trace is replayed: the flags of `tailrate replay` that shape its schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    /// `--skip-bad-lines`.
    pub skip_bad_lines: bool,
    /// Which commands are sent.
    pub filter: ReplayFilter,
    /// Recorded time over this is schedule time (`--speed`, or what `--rate` makes).
    pub speed: f64,
    /// Connections the clients are folded onto.
    pub connections: usize,
    /// `--loop`: the trace again from its start when it ends, until the run's end.
    pub repeat: bool,
}

/// A trace replayed as `options` say, with what its scan found.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The trace.
    pub path: PathBuf,
    /// Its format (detected by the scan when not given).
    pub format: Option<TraceFormat>,
    /// How it is replayed.
    pub options: ReplayOptions,
    /// Connection of each recorded client (before folding).
    clients: HashMap<Vec<u8>, usize>,
    /// Command index of each replayed command's name.
    commands: HashMap<String, u16>,
    /// The command index `SELECT`s are counted under, when one may be needed.
    select: Option<u16>,
    first_us: u64,
    /// Schedule time of one pass: the span and one mean gap, so that a loop's next pass
    /// does not begin at the instant the last ended.
    pass_ns: u64,
}

impl Replay {
    /// A replay of the trace at `path` as `shape` found it; `names` are the test's
    /// command names in order (`shape.names`, and `select` when `shape` needs it).
    pub fn new(
        path: PathBuf,
        shape: &TraceShape,
        names: &[String],
        options: ReplayOptions,
    ) -> Self {
        let commands: HashMap<String, u16> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), u16::try_from(i).unwrap_or(u16::MAX)))
            .collect();
        let span_us = shape.last_us.saturating_sub(shape.first_us) as f64;
        let gap_us = span_us / shape.commands.saturating_sub(1).max(1) as f64;
        let speed = options.speed;
        Replay {
            path,
            format: shape.format,
            options: ReplayOptions {
                connections: options.connections.max(1),
                ..options
            },
            clients: shape
                .clients
                .iter()
                .enumerate()
                .map(|(i, c)| (c.clone(), i))
                .collect(),
            select: commands.get("select").copied(),
            commands,
            first_us: shape.first_us,
            pass_ns: ((span_us + gap_us.max(1.0)) * 1e3 / speed) as u64,
        }
    }

    /// Sends one pass of the trace, its offsets `pass_from_ns` on; `state` is the
    /// connections' databases and the turn of client-less commands, kept across passes.
    fn pass(
        &self,
        sender: &mut TraceSender,
        cancel: &Cancel,
        pass_from_ns: u64,
        state: &mut FeedState,
    ) -> Result<(), Stop> {
        let file = File::open(&self.path).map_err(|e| Stop::Failed(e.to_string()))?;
        let mut reader = TraceReader::new(
            BufReader::with_capacity(1 << 20, file),
            self.format,
            self.options.skip_bad_lines,
        )
        .map_err(|e| Stop::Failed(e.to_string()))?;
        let (mut sent, mut read) = (0u64, 0u64);
        while let Some(record) = reader
            .next_record()
            .map_err(|e| Stop::Failed(e.to_string()))?
        {
            if self.options.filter.limit.is_some_and(|limit| sent >= limit) {
                break;
            }
            // Every so many lines read, kept or not: a long stretch the filters leave out
            // still sees Ctrl+C.
            read += 1;
            if read.is_multiple_of(1024) && cancel.is_cancelled() {
                return Err(Stop::Ended);
            }
            let name = command_name(&record.args);
            if !self.options.filter.keeps_record(record, &name) {
                continue;
            }
            // A name the scan did not see: the file changed since; it is not sent.
            let Some(&command) = self.commands.get(&name) else {
                continue;
            };
            sent += 1;
            let connection = match self.clients.get(&record.client) {
                Some(&i) => i % self.options.connections,
                None => {
                    state.turn = (state.turn + 1) % self.options.connections;
                    state.turn
                }
            };
            let recorded_ns = record.at_us.saturating_sub(self.first_us) as f64 * 1e3;
            let offset_ns = pass_from_ns.saturating_add((recorded_ns / self.options.speed) as u64);
            if let (Some(db), Some(select)) = (record.db, self.select)
                && db != state.databases[connection]
            {
                let text = db.to_string().into_bytes();
                sender.push_in(connection, offset_ns, select, db, |b| {
                    encode_command(&[b"SELECT".to_vec(), text], b)
                })?;
                state.databases[connection] = db;
            }
            let db = state.databases[connection];
            sender.push_in(connection, offset_ns, command, db, |b| {
                encode_command(&record.args, b)
            })?;
            if name == "select"
                && let Some(db) = record
                    .args
                    .get(1)
                    .and_then(|a| std::str::from_utf8(a).ok()?.parse().ok())
            {
                state.databases[connection] = db;
            }
        }
        Ok(())
    }
}

/// What one pass leaves for the next.
struct FeedState {
    /// The database each connection is in.
    databases: Vec<u32>,
    /// The connection the last client-less command went to.
    turn: usize,
}

/// Why a pass stopped before the trace's end.
enum Stop {
    /// The run ended (or was interrupted) first: nothing is wrong.
    Ended,
    /// The trace could not be read.
    Failed(String),
}

impl From<FeedClosed> for Stop {
    fn from(_: FeedClosed) -> Self {
        Stop::Ended
    }
}

impl TraceSource for Replay {
    fn select_command(&self) -> Option<u16> {
        self.select
    }

    fn feed(&self, mut sender: TraceSender, cancel: &Cancel) -> Result<(), String> {
        let mut state = FeedState {
            databases: vec![0; self.options.connections],
            turn: self.options.connections - 1,
        };
        let mut pass_from_ns = 0u64;
        loop {
            match self.pass(&mut sender, cancel, pass_from_ns, &mut state) {
                Ok(()) => {}
                Err(Stop::Ended) => return Ok(()),
                Err(Stop::Failed(e)) => return Err(e),
            }
            if !self.options.repeat || cancel.is_cancelled() {
                break;
            }
            pass_from_ns = pass_from_ns.saturating_add(self.pass_ns.max(1));
        }
        // The threads see the trace end once the last chunks are sent; a run that ended
        // first took none of them, which is no failure.
        let _ = sender.finish();
        Ok(())
    }
}
