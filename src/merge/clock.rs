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

/// One series on the shared clock: by interval number, its length in seconds and the
/// shards' histograms of it added.
pub(super) type Series = BTreeMap<u64, (f64, Histogram<u64>)>;

/// Every shard's intervals of series `tag` added per interval number, in order.
pub(super) fn series(clock: &Clock, shards: &[ShardInput], tag: Option<&str>) -> Series {
    let mut out = Series::new();
    for log in shards.iter().filter_map(|s| s.log.as_ref()) {
        for line in log.intervals.iter().filter(|i| i.tag.as_deref() == tag) {
            let entry = out
                .entry(clock.number(line))
                .or_insert_with(|| (line.length_secs, crate::record::new_histogram()));
            entry.0 = entry.0.max(line.length_secs);
            // Both sides span 1 ns to 1 h (tailrate's bounds), so adding cannot fail.
            let _ = entry.1.add(&line.histogram);
        }
    }
    out
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
        let _ = sum.add(&line.histogram);
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
    let added: Vec<(Option<String>, Series)> = tags
        .into_iter()
        .map(|tag| {
            let s = series(clock, shards, tag.as_deref());
            (tag, s)
        })
        .collect();
    let mut numbers: Vec<u64> = added.iter().flat_map(|(_, s)| s.keys().copied()).collect();
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
            for (tag, series) in &added {
                let Some((length, h)) = series.get(&n) else {
                    continue;
                };
                let length = std::time::Duration::from_secs_f64(*length);
                // Writing into memory cannot fail.
                let _ = match tag {
                    Some(tag) => log.write(tag, start, length, h),
                    None => log.write_untagged(start, length, h),
                };
            }
        }
    }
    out
}
