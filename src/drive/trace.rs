//! Replay's schedule: recorded commands handed from the thread that reads the trace to
//! the generator threads that send them, each with its intended time and its connection.
//!
//! The reader ([`TraceSender`]) encodes each command once, says which connection sends
//! it (connection `k` is thread `k % T`'s local slot `k / T`, as the driver deals them)
//! and when (its offset from the first recorded command, already divided by the speed),
//! and sends them in chunks over one bounded channel per thread. The bound is the
//! read-ahead: a file of any size holds at most [`CHUNKS_AHEAD`] chunks of
//! [`CHUNK_RECORDS`] commands per thread in memory, and the reader waits while the
//! threads are that far behind it. A thread's `TraceSchedule` takes them in order; like
//! the open loop's schedule, it gives intended times that are computed, never read from
//! a clock.
//!
//! Offsets reach a thread in order: the reader never sends an offset below one it sent
//! before (a trace a little out of order is held to its running maximum).

use std::fmt;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where a replay's commands come from: read, mapped to connections and commands and
/// sent through a [`TraceSender`] by a thread of the driver's (`tailrate-trace`) while the
/// run goes, afresh for every run of the plan.
pub trait TraceSource: Send + Sync + fmt::Debug {
    /// Sends every command of the trace through `sender`, in recorded order, and returns
    /// when the trace has ended, the feed has closed (the run ended first) or `cancel`
    /// is set; an error says why the trace could not be read to its end.
    fn feed(&self, sender: TraceSender, cancel: &super::Cancel) -> Result<(), String>;

    /// The command index `SELECT`s are counted under, where the trace runs in a database
    /// other than 0 (a connection opened again selects it).
    fn select_command(&self) -> Option<u16> {
        None
    }
}

/// The thread reading a replay's trace during one run.
pub(crate) struct Reader<'scope> {
    thread: std::io::Result<std::thread::ScopedJoinHandle<'scope, Result<(), String>>>,
}

impl Reader<'_> {
    /// Waits for the reader (it ends once the trace has, or once every generator thread
    /// has dropped its end) and says whether it read the trace to its end.
    pub(crate) fn finish(self) -> Result<(), String> {
        match self.thread {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|_| Err("the trace's reader panicked".into())),
            Err(e) => Err(format!("the trace's reader could not start: {e}")),
        }
    }
}

/// Starts reading `source` on a thread of `scope` (`tailrate-trace`) for a run of
/// `threads` generator threads; returns their feed and the reader. Neither without a
/// source.
pub(crate) fn start_reading<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    source: Option<&'env dyn TraceSource>,
    threads: usize,
    cancel: &'env super::Cancel,
) -> (Option<TraceFeed>, Option<Reader<'scope>>) {
    let Some(source) = source else {
        return (None, None);
    };
    let (feed, sender) = TraceFeed::channel(threads);
    let thread = std::thread::Builder::new()
        .name("tailrate-trace".into())
        .spawn_scoped(scope, move || source.feed(sender, cancel));
    (Some(feed), Some(Reader { thread }))
}

/// Commands per chunk: one channel message carries this many, so the channel's cost per
/// command is small at any rate.
pub const CHUNK_RECORDS: usize = 256;

/// Bytes of requests after which a chunk is sent however few commands it holds: with
/// large values, the read-ahead is bounded by bytes (`CHUNKS_AHEAD` times this, 16 MiB
/// per thread) rather than by commands.
pub const CHUNK_BYTES: usize = 64 * 1024;

/// Chunks waiting per thread: with [`FLUSH_EVERY`], at least this many flush periods of
/// schedule (over five seconds) are read ahead at low rates, and at high rates at most
/// `CHUNKS_AHEAD * CHUNK_RECORDS` commands (and about `CHUNKS_AHEAD * CHUNK_BYTES`
/// bytes) per thread are held.
pub const CHUNKS_AHEAD: usize = 256;

/// Schedule time after which a partly filled chunk is sent anyway: a quiet stretch of a
/// trace must not keep a command from its thread.
pub const FLUSH_EVERY: Duration = Duration::from_millis(20);

/// One recorded command as a thread sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traced {
    /// Intended time, from the run's start (recorded offset over the speed).
    pub offset_ns: u64,
    /// The thread's local connection slot that sends it.
    pub slot: u32,
    /// Which command of the replay's test (its verb), for the per-command records.
    pub command: u16,
    /// Bytes of its encoded request in the chunk.
    pub len: u32,
    /// The database it runs in: a connection opened again after a loss selects it first.
    pub db: u32,
}

/// Commands for one thread, with their encoded requests back to back.
#[derive(Debug, Default)]
struct Chunk {
    items: Vec<Traced>,
    bytes: Vec<u8>,
}

/// The threads' ends of the channels, taken by each thread when it starts. Cloned with
/// the plan: every clone hands out the same receivers, once.
#[derive(Clone)]
pub struct TraceFeed {
    receivers: Arc<Mutex<Vec<Option<Receiver<Chunk>>>>>,
}

impl fmt::Debug for TraceFeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TraceFeed")
    }
}

impl TraceFeed {
    /// A feed of `threads` threads and the sender that fills it.
    pub fn channel(threads: usize) -> (TraceFeed, TraceSender) {
        let threads = threads.max(1);
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..threads).map(|_| sync_channel(CHUNKS_AHEAD)).unzip();
        let feed = TraceFeed {
            receivers: Arc::new(Mutex::new(receivers.into_iter().map(Some).collect())),
        };
        let sender = TraceSender {
            open: (0..threads).map(|_| Chunk::default()).collect(),
            closed: vec![false; threads],
            senders,
            flushed_at_ns: 0,
            last_offset_ns: 0,
        };
        (feed, sender)
    }

    /// Thread `index`'s schedule; `None` when it was taken already (or the thread has
    /// none).
    pub(crate) fn take(&self, index: usize) -> Option<TraceSchedule> {
        let mut receivers = self.receivers.lock().unwrap_or_else(|p| p.into_inner());
        let rx = receivers.get_mut(index)?.take()?;
        Some(TraceSchedule {
            rx,
            chunk: Chunk::default(),
            at: 0,
            byte_at: 0,
            ended: false,
        })
    }
}

/// Every generator thread has stopped taking commands (the run ended first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedClosed;

/// The reader's end: encodes nothing itself, but keeps each thread's chunk until it is
/// full or stale, and sends it.
pub struct TraceSender {
    senders: Vec<SyncSender<Chunk>>,
    open: Vec<Chunk>,
    /// Threads that take nothing more (their run ended, or they failed): their commands
    /// are dropped, and the others' still sent.
    closed: Vec<bool>,
    /// Schedule time of the last flush of every open chunk.
    flushed_at_ns: u64,
    /// The highest offset sent so far: later ones are held to it.
    last_offset_ns: u64,
}

impl TraceSender {
    /// Queues a command for connection `connection`, intended `offset_ns` after the
    /// start, as command `command` of the test; `encode` appends its request's bytes.
    /// Blocks while that thread is [`CHUNKS_AHEAD`] chunks behind.
    pub fn push(
        &mut self,
        connection: usize,
        offset_ns: u64,
        command: u16,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> Result<(), FeedClosed> {
        self.push_in(connection, offset_ns, command, 0, encode)
    }

    /// [`TraceSender::push`] of a command that runs in database `db`.
    pub fn push_in(
        &mut self,
        connection: usize,
        offset_ns: u64,
        command: u16,
        db: u32,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> Result<(), FeedClosed> {
        let threads = self.senders.len();
        let offset_ns = offset_ns.max(self.last_offset_ns);
        self.last_offset_ns = offset_ns;
        if offset_ns >= self.flushed_at_ns.saturating_add(nanos(FLUSH_EVERY)) {
            self.flush()?;
            self.flushed_at_ns = offset_ns;
        }
        let thread = connection % threads;
        if self.closed[thread] {
            return Ok(());
        }
        let chunk = &mut self.open[thread];
        let before = chunk.bytes.len();
        encode(&mut chunk.bytes);
        chunk.items.push(Traced {
            offset_ns,
            slot: u32::try_from(connection / threads).unwrap_or(u32::MAX),
            command,
            len: u32::try_from(chunk.bytes.len() - before).unwrap_or(u32::MAX),
            db,
        });
        if chunk.items.len() >= CHUNK_RECORDS || chunk.bytes.len() >= CHUNK_BYTES {
            self.send(thread)?;
        }
        Ok(())
    }

    /// The highest offset queued so far.
    pub fn last_offset_ns(&self) -> u64 {
        self.last_offset_ns
    }

    /// Sends every partly filled chunk.
    pub fn flush(&mut self) -> Result<(), FeedClosed> {
        for thread in 0..self.open.len() {
            if !self.open[thread].items.is_empty() {
                self.send(thread)?;
            }
        }
        Ok(())
    }

    /// Sends what is left; the threads then see the trace end.
    pub fn finish(mut self) -> Result<(), FeedClosed> {
        self.flush()
    }

    fn send(&mut self, thread: usize) -> Result<(), FeedClosed> {
        let chunk = std::mem::take(&mut self.open[thread]);
        let sent = match self.senders[thread].try_send(chunk) {
            Ok(()) => true,
            // Waits while the thread is `CHUNKS_AHEAD` behind: the read-ahead's bound.
            Err(TrySendError::Full(chunk)) => self.senders[thread].send(chunk).is_ok(),
            Err(TrySendError::Disconnected(_)) => false,
        };
        // A thread that has ended takes nothing more; the others may still, so only when
        // all have gone is the feed closed.
        if !sent {
            self.closed[thread] = true;
        }
        if self.closed.iter().all(|&c| c) {
            Err(FeedClosed)
        } else {
            Ok(())
        }
    }
}

/// What a thread's part of the trace holds next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// A command intended this long (ns) after the start.
    At(u64),
    /// Nothing yet: the reader has not sent the next chunk (it is reading ahead for
    /// another thread, or the file is read slower than it is replayed). Ask again soon;
    /// what comes late is handed out late, and timed from when it was due.
    NotYet,
    /// The trace has ended for this thread.
    Ended,
}

/// One thread's part of a replay, in intended order.
pub(crate) struct TraceSchedule {
    rx: Receiver<Chunk>,
    chunk: Chunk,
    /// The next command of `chunk`, and where its bytes begin.
    at: usize,
    byte_at: usize,
    ended: bool,
}

impl TraceSchedule {
    /// What comes next, without waiting: the thread's runtime must not block, or its
    /// connections would stop reading and writing while it did.
    pub(crate) fn peek(&mut self) -> Next {
        while self.at >= self.chunk.items.len() {
            if self.ended {
                return Next::Ended;
            }
            match self.rx.try_recv() {
                Ok(chunk) => {
                    self.chunk = chunk;
                    self.at = 0;
                    self.byte_at = 0;
                }
                Err(TryRecvError::Empty) => return Next::NotYet,
                Err(TryRecvError::Disconnected) => {
                    self.ended = true;
                    return Next::Ended;
                }
            }
        }
        Next::At(self.chunk.items[self.at].offset_ns)
    }

    /// Takes the command [`TraceSchedule::peek`] showed, with its request's bytes.
    pub(crate) fn take(&mut self) -> Option<(Traced, &[u8])> {
        let Next::At(_) = self.peek() else {
            return None;
        };
        let item = self.chunk.items[self.at];
        let from = self.byte_at;
        self.at += 1;
        self.byte_at += item.len as usize;
        Some((item, &self.chunk.bytes[from..self.byte_at]))
    }
}

/// The requests of one connection's pending replayed commands, back to back, in their
/// order: appended when a command is handed to the connection, taken when it is written.
#[derive(Debug, Default)]
pub(crate) struct TracedBytes {
    buf: Vec<u8>,
    start: usize,
    /// Each waiting request's database, in order (kept here, not in the request, which
    /// every mode's queues hold and whose size they are bounded by).
    dbs: std::collections::VecDeque<u32>,
}

impl TracedBytes {
    pub(crate) fn push(&mut self, bytes: &[u8], db: u32) {
        self.dbs.push_back(db);
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 64 * 1024 && self.start > self.buf.len() / 2 {
            // Taken from the front, added at the back: move what is left down now and
            // then, so that the buffer stays the size of what waits.
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next request's `len` bytes (fewer if fewer wait) and its database.
    pub(crate) fn take(&mut self, len: usize) -> (&[u8], u32) {
        let db = self.dbs.pop_front().unwrap_or_default();
        let from = self.start;
        self.start = (from + len).min(self.buf.len());
        (&self.buf[from..self.start], db)
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn commands_reach_their_thread_in_order_with_their_bytes() {
        let (feed, mut sender) = TraceFeed::channel(2);
        let reader = std::thread::spawn(move || {
            for i in 0..1000u64 {
                let connection = (i % 3) as usize;
                sender
                    .push(connection, i * 1_000_000, (i % 2) as u16, |b| {
                        b.extend_from_slice(format!("c{i};").as_bytes())
                    })
                    .unwrap();
            }
            sender.finish().unwrap();
        });
        // Taken without waiting: read once the reader has sent all.
        reader.join().unwrap();
        let mut zero = feed.take(0).unwrap();
        let mut one = feed.take(1).unwrap();
        assert!(
            feed.take(0).is_none(),
            "each thread's schedule is taken once"
        );
        let mut seen = Vec::new();
        while let Some((item, bytes)) = zero.take() {
            let i: u64 = std::str::from_utf8(&bytes[1..bytes.len() - 1])
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(item.offset_ns, i * 1_000_000);
            assert_eq!(item.slot as u64, (i % 3) / 2);
            seen.push(i);
        }
        let mut other = 0;
        while one.take().is_some() {
            other += 1;
        }
        assert_eq!(one.peek(), Next::Ended);
        assert!(seen.windows(2).all(|w| w[0] < w[1]));
        // Connections 0 and 2 are thread 0's; connection 1 thread 1's.
        assert_eq!(seen.len() + other, 1000);
        assert_eq!(other, (0..1000).filter(|i| i % 3 == 1).count());
    }

    #[test]
    fn an_earlier_offset_is_held_to_the_latest_sent() {
        let (feed, mut sender) = TraceFeed::channel(1);
        for offset in [5, 3, 9, 1] {
            sender.push(0, offset, 0, |_| {}).unwrap();
        }
        sender.finish().unwrap();
        let mut schedule = feed.take(0).unwrap();
        let mut offsets = Vec::new();
        while let Some((item, _)) = schedule.take() {
            offsets.push(item.offset_ns);
        }
        assert_eq!(offsets, [5, 5, 9, 9]);
    }

    #[test]
    fn traced_bytes_come_out_as_they_went_in() {
        let mut q = TracedBytes::default();
        let mut expected = std::collections::VecDeque::new();
        for i in 0..50_000u32 {
            let bytes = i.to_le_bytes();
            q.push(&bytes[..(i % 4 + 1) as usize], i);
            expected.push_back(bytes[..(i % 4 + 1) as usize].to_vec());
            if i % 3 != 0 {
                let want = expected.pop_front().unwrap();
                assert_eq!(q.take(want.len()).0, &want[..]);
            }
        }
        while let Some(want) = expected.pop_front() {
            assert_eq!(q.take(want.len()).0, &want[..]);
        }
        assert!(q.take(1).0.is_empty());
    }

    #[test]
    fn a_thread_without_its_next_chunk_is_told_so_and_never_waits() {
        let (feed, mut sender) = TraceFeed::channel(2);
        let mut zero = feed.take(0).unwrap();
        assert_eq!(zero.peek(), Next::NotYet);
        sender.push(0, 7, 0, |_| {}).unwrap();
        assert_eq!(
            zero.peek(),
            Next::NotYet,
            "a partly filled chunk is not sent yet"
        );
        sender.flush().unwrap();
        assert_eq!(zero.peek(), Next::At(7));
        assert!(zero.take().is_some());
        // Thread 1 is gone: its commands are dropped, thread 0 still gets its own.
        drop(feed.take(1));
        for i in 0..(CHUNK_RECORDS as u64 * 2) {
            sender.push((i % 2) as usize, 10 + i, 0, |_| {}).unwrap();
        }
        sender.finish().unwrap();
        let mut got = 0;
        while zero.take().is_some() {
            got += 1;
        }
        assert_eq!((got, zero.peek()), (CHUNK_RECORDS, Next::Ended));
    }

    #[test]
    fn a_sender_sees_the_threads_gone() {
        let (feed, mut sender) = TraceFeed::channel(1);
        drop(feed);
        let mut result = Ok(());
        for i in 0..(CHUNK_RECORDS as u64 * 2) {
            result = result.and(sender.push(0, i, 0, |_| {}));
        }
        assert_eq!(result, Err(FeedClosed));
    }
}
