//! The interval stream of a run: each thread's interval records merged into one per
//! interval, summarised for the report and written to the `.hlog`.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::drive::Interval;
use crate::record::{CommandRecord, Histograms, Metric, Recorder, Timing};
use crate::report::IntervalSummary;
use crate::report::hlog::HlogWriter;

/// One interval's histograms into the log: untagged, every command's response time
/// together (the series HdrHistogram's tools read by default, written also when empty);
/// then tagged, the test's, and each command's when it has several, leaving out a metric
/// the run does not have or that is empty.
pub(super) fn write_hlog(
    log: &mut HlogWriter,
    test: &str,
    commands: &[String],
    timing: Timing,
    start: Duration,
    length: Duration,
    record: &Recorder,
) -> std::io::Result<()> {
    let total = record.total();
    log.write_untagged(start, length, &total.hist.response)?;
    let mut write = |tag: &str, hist: &Histograms| {
        for metric in Metric::ALL {
            if let Some(h) = hist.of(metric, timing).filter(|h| !h.is_empty()) {
                log.write(&format!("{tag}.{}", metric.name()), start, length, h)?;
            }
        }
        std::io::Result::Ok(())
    };
    write(test, &total.hist)?;
    if record.commands.len() > 1 {
        for (rec, name) in record.commands.iter().zip(commands) {
            write(&format!("{test}.{name}"), &rec.hist)?;
        }
    }
    Ok(())
}

pub(super) fn summary(start: Duration, length: Duration, record: &Recorder) -> IntervalSummary {
    // Only the response histogram is summarised: merge just that one, and nothing at all
    // for a single command (a merged record is four fresh histograms every interval).
    let merged;
    let h = match record.commands.as_slice() {
        [one] => &one.hist.response,
        many => {
            let mut all = crate::record::new_histogram();
            for rec in many {
                // Same bounds on both sides, so `add` cannot fail.
                let _ = all.add(&rec.hist.response);
            }
            merged = all;
            &merged
        }
    };
    let q = |p: f64| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(p)
        }
    };
    IntervalSummary {
        start_secs: start.as_secs_f64(),
        length_secs: length.as_secs_f64(),
        completed: record.completed(),
        errors: record.commands.iter().map(CommandRecord::error_total).sum(),
        p50_ns: q(0.5),
        p99_ns: q(0.99),
        max_ns: if h.is_empty() { 0 } else { h.max() },
    }
}

/// Adds the intervals of every thread that share a start into one.
pub(super) struct IntervalMerger {
    threads: usize,
    pending: BTreeMap<Duration, (Duration, Recorder, usize)>,
    pub(super) summaries: Vec<IntervalSummary>,
    /// Emptied records of emitted intervals, reused for the next (see [`IntervalMerger::recycle`]).
    spares: Vec<Recorder>,
}

impl IntervalMerger {
    pub(super) fn new(threads: usize) -> Self {
        IntervalMerger {
            threads: threads.max(1),
            pending: BTreeMap::new(),
            summaries: Vec::new(),
            spares: Vec::new(),
        }
    }

    /// Adds `iv`; returns the intervals every thread has now reported.
    pub(super) fn push(&mut self, iv: &Interval) -> Vec<(Duration, Duration, Recorder)> {
        let spares = &mut self.spares;
        let entry = self
            .pending
            .entry(iv.start)
            .or_insert_with(|| (iv.length, spares.pop().unwrap_or_default(), 0));
        entry.0 = entry.0.max(iv.length);
        entry.1.add(&iv.record);
        entry.2 += 1;
        if entry.2 < self.threads {
            return Vec::new();
        }
        let done: Vec<Duration> = self
            .pending
            .iter()
            .filter(|(_, (_, _, n))| *n >= self.threads)
            .map(|(k, _)| *k)
            .collect();
        done.into_iter()
            .filter_map(|k| self.pending.remove(&k).map(|(len, rec, _)| (k, len, rec)))
            .collect()
    }

    /// Keeps an emitted interval's record, emptied, for a later interval: allocating a
    /// fresh one every interval (about 1 MB of histogram counts per command, zeroed and
    /// mapped page by page) cost the generator's CPU a few percent, as this thread shares it.
    pub(super) fn recycle(&mut self, mut record: Recorder) {
        if self.spares.len() < 2 {
            record.reset();
            self.spares.push(record);
        }
    }

    /// Everything left, complete or not.
    pub(super) fn flush(&mut self) -> Vec<(Duration, Duration, Recorder)> {
        std::mem::take(&mut self.pending)
            .into_iter()
            .map(|(k, (len, rec, _))| (k, len, rec))
            .collect()
    }
}
