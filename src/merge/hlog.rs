//! Reading a shard's `.hlog` back: its header's seed and shard (the comment tailrate
//! writes first), its StartTime, and each interval's histogram with its tag and its
//! start on the wall clock, for adding intervals of different shards that cover the
//! same time.

use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use super::error::MergeError;
use crate::drive::Shard;

/// One interval of one series.
#[derive(Debug, Clone)]
pub struct LogInterval {
    /// `TEST.metric` (or `TEST.COMMAND.metric`); `None` for the untagged series.
    pub tag: Option<String>,
    /// Start, seconds since the Unix epoch (StartTime plus the line's offset).
    pub start_unix_secs: f64,
    /// Length in seconds.
    pub length_secs: f64,
    /// The interval's histogram.
    pub histogram: Histogram<u64>,
}

/// A shard's log.
#[derive(Debug, Clone)]
pub struct ShardLog {
    /// The file.
    pub path: PathBuf,
    /// The shard its header names (0 of 1 for a log of a whole plan).
    pub shard: Shard,
    /// The seed its header names, when it does.
    pub seed: Option<u64>,
    /// Every interval line, in order.
    pub intervals: Vec<LogInterval>,
}

/// Reads the log `bytes` of `path`.
pub fn read_log(path: &Path, bytes: &[u8]) -> Result<ShardLog, MergeError> {
    let bad = |why: String| MergeError::Read {
        path: path.to_path_buf(),
        why,
    };
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    let header = first
        .strip_prefix("#tailrate ")
        .ok_or_else(|| bad("not an interval log tailrate wrote (no '#tailrate' header)".into()))?;
    let words: Vec<&str> = header.split_whitespace().collect();
    let after = |word: &str| {
        words
            .iter()
            .position(|w| *w == word)
            .and_then(|i| words.get(i + 1))
    };
    let seed = after("seed").and_then(|s| s.parse().ok());
    let shard = match after("shard") {
        Some(text) => crate::config::shard::parse_shard(text)
            .map_err(|why| bad(format!("its header's shard: {why}")))?,
        None => Shard::WHOLE,
    };
    let mut start = 0.0;
    let mut intervals = Vec::new();
    for entry in IntervalLogIterator::new(bytes) {
        match entry.map_err(|e| bad(format!("not an interval log ({e:?})")))? {
            LogEntry::StartTime(t) => start = t.as_secs_f64(),
            LogEntry::BaseTime(_) => {}
            LogEntry::Interval(line) => {
                let histogram = crate::report::decode_histogram(line.encoded_histogram())
                    .ok_or_else(|| bad("an interval's histogram does not decode".into()))?;
                intervals.push(LogInterval {
                    tag: line.tag().map(|t| t.as_str().to_string()),
                    start_unix_secs: start + line.start_timestamp().as_secs_f64(),
                    length_secs: line.duration().as_secs_f64(),
                    histogram,
                });
            }
        }
    }
    Ok(ShardLog {
        path: path.to_path_buf(),
        shard,
        seed,
        intervals,
    })
}
