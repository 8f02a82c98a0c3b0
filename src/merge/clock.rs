//! The shards' interval logs on one clock: intervals numbered by their start, so that
//! those of different shards covering the same time are added together; each log checked
//! against its report before it is used; and the merged log written from the sums.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::error::MergeError;
use super::hlog::LogInterval;
use super::input::ShardInput;
use crate::export::hlog::HlogWriter;
use crate::report::{Latency, RunReport, TestReport};

/// The shared clock of the shards' logs: intervals are numbered by their start, in
/// whole interval lengths from the earliest, so that intervals of different shards
/// covering the same time (their starts differ by the logs' millisecond rounding and the
/// shards' start skew) get one number.
pub(super) struct Clock {
    base_unix_secs: f64,
    /// The length of one interval: the longest of any log's.
    pub(super) length_secs: f64,
}

impl Clock {
    /// The clock of the shards' logs; `None` when they hold no interval with a length.
    pub(super) fn of(shards: &[ShardInput]) -> Option<Clock> {
        let lines = shards
            .iter()
            .filter_map(|s| s.log.as_ref())
            .flat_map(|l| &l.intervals);
        let base = lines.clone().map(|i| i.start_unix_secs).reduce(f64::min)?;
        let length = lines.map(|i| i.length_secs).reduce(f64::max)?;
        (length > 0.0).then_some(Clock {
            base_unix_secs: base,
            length_secs: length,
        })
    }

    /// The number of the interval `interval` falls in.
    fn number(&self, interval: &LogInterval) -> u64 {
        ((interval.start_unix_secs - self.base_unix_secs) / self.length_secs)
            .round()
            .max(0.0) as u64
    }
}

/// One series' intervals in every shard's log, by interval number.
type Numbered<'a> = BTreeMap<u64, Vec<&'a LogInterval>>;

/// The intervals of series `tag` in every shard's log, grouped by interval number (in
/// order): references only, so that a series is added one interval at a time.
fn numbered<'a>(clock: &Clock, shards: &'a [ShardInput], tag: Option<&str>) -> Numbered<'a> {
    let mut out = Numbered::new();
    for log in shards.iter().filter_map(|s| s.log.as_ref()) {
        for line in log.intervals.iter().filter(|i| i.tag.as_deref() == tag) {
            out.entry(clock.number(line)).or_default().push(line);
        }
    }
    out
}

/// `lines` added: the longest of their lengths and the sum of their histograms.
fn added(lines: &[&LogInterval]) -> (f64, Histogram<u64>) {
    let mut sum = crate::record::new_histogram();
    let mut length: f64 = 0.0;
    for line in lines {
        length = length.max(line.length_secs);
        // Both sides span 1 ns to 1 h (tailrate's bounds), so adding cannot fail.
        let _ = sum.add(line.histogram());
    }
    (length, sum)
}

/// Hands `each` every interval of series `tag`, the shards' histograms of it added, by
/// increasing interval number: its number, its length in seconds and the sum. One sum
/// is held at a time, so memory does not grow with the run's length.
pub(super) fn series(
    clock: &Clock,
    shards: &[ShardInput],
    tag: Option<&str>,
    mut each: impl FnMut(u64, f64, Histogram<u64>),
) {
    for (n, lines) in numbered(clock, shards, tag) {
        let (length, sum) = added(&lines);
        each(n, length, sum);
    }
}

/// Refuses a log whose intervals of `tag.response` do not add up to the report's
/// response histogram, value for value: a log of another run, or a cut one.
pub(super) fn exact(shard: &ShardInput, test: &TestReport, tag: &str) -> Result<(), MergeError> {
    let Some(log) = &shard.log else {
        return Ok(());
    };
    let Some(reported) = test.response().and_then(Latency::histogram) else {
        return Ok(());
    };
    let want = format!("{tag}.response");
    let mut sum = crate::record::new_histogram();
    for line in log
        .intervals
        .iter()
        .filter(|i| i.tag.as_deref() == Some(want.as_str()))
    {
        let _ = sum.add(line.histogram());
    }
    if sum == reported {
        return Ok(());
    }
    Err(MergeError::Refused(format!(
        "{}: its intervals of {} hold {} values, {} holds {}: not the log of that report",
        log.path.display(),
        test.name,
        sum.len(),
        shard.path.display(),
        reported.len()
    )))
}

/// The merged log: per interval number, the untagged series then each tagged one,
/// every shard's histograms of it added.
pub(super) fn merged_log(
    clock: &Clock,
    shards: &[ShardInput],
    first: &RunReport,
    count: u32,
) -> Vec<u8> {
    let mut tags: Vec<Option<String>> = vec![None];
    for log in shards.iter().filter_map(|s| s.log.as_ref()) {
        for line in &log.intervals {
            if !tags.contains(&line.tag) {
                tags.push(line.tag.clone());
            }
        }
    }
    // Every series' intervals by number, then each number's series in turn: one
    // interval's sum is held at a time.
    let indexed: Vec<(Option<String>, Numbered<'_>)> = tags
        .into_iter()
        .map(|tag| {
            let lines = numbered(clock, shards, tag.as_deref());
            (tag, lines)
        })
        .collect();
    let mut numbers: Vec<u64> = indexed
        .iter()
        .flat_map(|(_, s)| s.keys().copied())
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    let mut out = Vec::new();
    let started =
        std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(clock.base_unix_secs.max(0.0));
    let comment = format!(
        "tailrate {} seed {} merged {} of {count} shards",
        env!("CARGO_PKG_VERSION"),
        first.header.seed,
        shards.len()
    );
    {
        let sink: Box<dyn std::io::Write + '_> = Box::new(&mut out);
        let Ok(mut log) = HlogWriter::to_writer(sink, "merged log".into(), started, &comment)
        else {
            return Vec::new();
        };
        for n in numbers {
            let start = std::time::Duration::from_secs_f64(n as f64 * clock.length_secs);
            for (tag, series) in &indexed {
                let Some(lines) = series.get(&n) else {
                    continue;
                };
                let (length, h) = added(lines);
                let length = std::time::Duration::from_secs_f64(length);
                // Writing into memory cannot fail.
                let _ = match tag {
                    Some(tag) => log.write(tag, start, length, &h),
                    None => log.write_untagged(start, length, &h),
                };
            }
        }
    }
    out
}
