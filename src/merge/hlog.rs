//! Reading a shard's `.hlog` back: its header's seed and shard (the comment tailrate
//! writes first), its StartTime, and each interval's histogram with its tag and its
//! start on the wall clock, for adding intervals of different shards that cover the
//! same time. An interval keeps its histogram as the log wrote it (compressed text, a
//! few hundred bytes) and decodes it when it is added: decoded, each spans 1 ns to 1 h
//! at three digits, about 400 KB, and a merge of hour-long shards held gigabytes.

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
    /// The interval's histogram, as the log wrote it (checked when read).
    encoded: String,
}

impl LogInterval {
    /// The interval's histogram. The log was refused when read if any line did not
    /// decode, so this only fails where memory does: an empty histogram then.
    pub fn histogram(&self) -> Histogram<u64> {
        crate::report::hdr_decode::decode(&self.encoded)
            .unwrap_or_else(|_| crate::record::new_histogram())
    }
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
    let numbers = check_times(bytes).map_err(bad)?;
    let mut start = None;
    let mut intervals = Vec::new();
    for entry in IntervalLogIterator::new(bytes) {
        match entry.map_err(|e| bad(format!("not an interval log ({e:?})")))? {
            LogEntry::StartTime(t) => start = Some(t.as_secs_f64()),
            LogEntry::BaseTime(_) => {}
            LogEntry::Interval(line) => {
                let encoded = line.encoded_histogram();
                crate::report::hdr_decode::decode(encoded).map_err(|why| {
                    let at = numbers.get(intervals.len()).copied().unwrap_or_default();
                    bad(format!("line {at}: an interval's histogram {why}"))
                })?;
                let Some(start) = start else {
                    return Err(bad(
                        "an interval comes before any StartTime: not a log a run writes".into(),
                    ));
                };
                intervals.push(LogInterval {
                    tag: line.tag().map(|t| t.as_str().to_string()),
                    start_unix_secs: start + line.start_timestamp().as_secs_f64(),
                    length_secs: line.duration().as_secs_f64(),
                    encoded: encoded.to_string(),
                });
            }
        }
    }
    // Lengths are written to the millisecond, so a run's last interval may read 0; a log
    // whose every interval does covers no time.
    if !intervals.is_empty() && intervals.iter().all(|i| i.length_secs == 0.0) {
        return Err(bad(
            "every interval lasts 0 s: not a log a run writes".into()
        ));
    }
    Ok(ShardLog {
        path: path.to_path_buf(),
        shard,
        seed,
        intervals,
    })
}

/// The latest time a log may name, in seconds since the Unix epoch: the end of year 9999,
/// past which no clock a run had reads and dates no longer print in four digits.
const LATEST_UNIX_SECS: f64 = 253_402_300_800.0;
/// The earliest StartTime a log may name: 2001-09-09, before any tailrate ran (a clock
/// that reads 1970 was never set, and its shards share no time with others).
const EARLIEST_UNIX_SECS: f64 = 1_000_000_000.0;
/// The longest an interval or a run's offset may be: a century.
const LONGEST_SECS: f64 = 100.0 * 365.25 * 86_400.0;

/// Refuses a log whose StartTime, BaseTime or an interval's start or length is not a time
/// a run could have (negative, not a number, before 2001 or past year 9999, an interval of
/// centuries), naming the line, before the log reader turns them into durations. Returns
/// the number of each interval line, in order.
fn check_times(bytes: &[u8]) -> Result<Vec<usize>, String> {
    let mut numbers = Vec::new();
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = String::from_utf8_lossy(line);
        let line = line.trim();
        let within = |what: &str, text: &str, least: f64, most: f64| -> Result<(), String> {
            match text.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && (least..=most).contains(&v) => Ok(()),
                _ => Err(format!(
                    "line {}: {what} '{text}' is not a time a run could have",
                    n + 1
                )),
            }
        };
        if let Some(rest) = line
            .strip_prefix("#[StartTime: ")
            .or_else(|| line.strip_prefix("#[BaseTime: "))
        {
            let value = rest.split([' ', ']']).next().unwrap_or_default();
            within(
                "its StartTime or BaseTime",
                value,
                EARLIEST_UNIX_SECS,
                LATEST_UNIX_SECS,
            )?;
        } else if !line.is_empty() && !line.starts_with('#') && !line.starts_with('"') {
            let fields: Vec<&str> = line
                .strip_prefix("Tag=")
                .map_or(line, |l| l.split_once(',').map_or("", |(_, rest)| rest))
                .split(',')
                .collect();
            if fields.len() != 4 {
                return Err(format!(
                    "line {}: not an interval line (START,LENGTH,MAX,HISTOGRAM)",
                    n + 1
                ));
            }
            within("an interval's start", fields[0], 0.0, LONGEST_SECS)?;
            within("an interval's length", fields[1], 0.0, LONGEST_SECS)?;
            numbers.push(n + 1);
        }
    }
    Ok(numbers)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn times_no_run_could_have_are_refused_with_their_line() {
        let ok = b"#[StartTime: 1796400000.123 (seconds since epoch)]\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n0.000,1.000,2.000,HISTFAAA\nTag=GET.response,1.000,1.000,2.000,HISTFAAA\n";
        check_times(ok).unwrap();
        for (bad, line) in [
            (
                &b"#[StartTime: 9000000000000000000.000 (seconds since epoch)]\n"[..],
                1,
            ),
            (b"#[BaseTime: -1.0]\n", 1),
            (b"#[StartTime: 0.000 (seconds since epoch)]\n", 1),
            (b"#x\n#[BaseTime: 86400.5]\n", 2),
            (b"0.000,18000000000000000000,2.000,HISTFAAA\n", 1),
            (b"#x\nTag=A,NaN,1.0,1.0,HISTFAAA\n", 2),
            (b"0.000,1.000\n", 1),
        ] {
            let e = check_times(bad).unwrap_err();
            assert!(e.starts_with(&format!("line {line}:")), "{e}");
        }
    }
}
