//! The interval stream of a run: each thread's batch records merged into one per batch
//! of the measured window (kept, coarsely, for the percentiles' intervals), and batches
//! grouped into the report's intervals, summarised for the report and written to the
//! `.hlog`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::drive::Interval;
use crate::export::hlog::HlogWriter;
use crate::export::hlog_encoder::Series;
use crate::record::{CommandRecord, Histograms, Metric, Recorder, Timing};
use crate::report::IntervalSummary;

/// One interval's histograms into the log: untagged, every command's response time
/// together (the series HdrHistogram's tools read by default, written also when empty);
/// then tagged, the test's, and each command's when it has several, leaving out a metric
/// the run does not have or that is empty, and a plain closed loop's service time (its
/// response time again: a request is sent when it is due). The histograms are made and
/// encoded on the log's own thread, from a copy of the counts ([`HlogWriter::submit`]).
pub(super) fn write_hlog(
    log: &mut HlogWriter,
    test: &str,
    commands: &[String],
    timing: Timing,
    start: Duration,
    length: Duration,
    record: &Recorder,
) -> std::io::Result<()> {
    let (record, test, commands) = (record.clone(), test.to_string(), commands.to_vec());
    log.submit(
        start,
        length,
        Box::new(move || hlog_series(&test, &commands, timing, &record)),
    )
}

/// The series [`write_hlog`] writes, in its order.
fn hlog_series(test: &str, commands: &[String], timing: Timing, record: &Recorder) -> Series {
    let total = record.total();
    let mut series: Series = vec![(None, total.hist.response())];
    let mut add = |tag: &str, hist: &Histograms| {
        for metric in Metric::ALL {
            if metric == Metric::Service && !timing.service_apart() {
                continue;
            }
            if let Some(h) = hist.of(metric, timing).filter(|h| !h.is_empty()) {
                series.push((Some(format!("{tag}.{}", metric.name())), h));
            }
        }
    };
    add(test, &total.hist);
    if record.commands.len() > 1 {
        for (rec, name) in record.commands.iter().zip(commands) {
            add(&format!("{test}.{name}"), &rec.hist);
        }
    }
    series
}

pub(super) fn summary(start: Duration, length: Duration, record: &Recorder) -> IntervalSummary {
    // Only the response counts are summarised, read where they are: this runs on the
    // collector, which may share the generator's core, and an HdrHistogram made for it
    // would be 270 KB zeroed every interval. Several commands' are added first.
    let merged;
    let h = match record.commands.as_slice() {
        [one] => one.hist.response_counts(),
        many => {
            let mut all = crate::record::Counts::new();
            for rec in many {
                all.add(rec.hist.response_counts());
            }
            merged = all;
            &merged
        }
    };
    IntervalSummary {
        start_secs: start.as_secs_f64(),
        length_secs: length.as_secs_f64(),
        completed: record.completed(),
        errors: record.commands.iter().map(CommandRecord::error_total).sum(),
        p50_ns: h.value_at_quantile(0.5),
        p99_ns: h.value_at_quantile(0.99),
        max_ns: h.max(),
    }
}

/// Groups the merged batches, which tile the measured window in order, into the
/// report's intervals of `length` (a whole number of batches; the last as long as the
/// window leaves).
pub(super) struct Grouper {
    length: Duration,
    /// The report interval being filled: its index and how much of it the batches cover.
    current: Option<(u32, Duration)>,
    record: Recorder,
}

impl Grouper {
    pub(super) fn new(length: Duration) -> Self {
        Grouper {
            length: length.max(Duration::from_nanos(1)),
            current: None,
            record: Recorder::default(),
        }
    }

    /// Adds the batch at `start` of `length`; `emit` gets each report interval that it
    /// shows to be whole, as (start, length, record).
    pub(super) fn push(
        &mut self,
        start: Duration,
        length: Duration,
        batch: &Recorder,
        emit: &mut dyn FnMut(Duration, Duration, &Recorder),
    ) {
        let index =
            u32::try_from(crate::record::nanos(start) / crate::record::nanos(self.length).max(1))
                .unwrap_or(u32::MAX);
        match self.current {
            Some((i, _)) if i == index => {}
            Some(_) => {
                self.flush(emit);
                self.current = Some((index, Duration::ZERO));
            }
            None => self.current = Some((index, Duration::ZERO)),
        }
        self.record.add(batch);
        if let Some((_, covered)) = &mut self.current {
            *covered += length;
        }
    }

    /// Emits the interval being filled, if any.
    pub(super) fn flush(&mut self, emit: &mut dyn FnMut(Duration, Duration, &Recorder)) {
        if let Some((index, covered)) = self.current.take() {
            emit(self.length * index, covered, &self.record);
            self.record.reset();
        }
    }
}

/// Adds up the threads' intervals of each index into one and emits the run's intervals
/// in order, each once it is whole: every thread has sent its part, and the measured
/// window is known to reach past its end. What the window's end leaves open (its last
/// interval and anything after it) is emitted by [`IntervalMerger::flush`], once the
/// window's end is known: so the emitted intervals tile the window exactly, and hold
/// everything the threads sent.
pub(super) struct IntervalMerger {
    threads: usize,
    length: Duration,
    /// Intervals not yet emitted, by index: how many threads sent theirs, and their sum.
    pending: BTreeMap<u32, (usize, Recorder)>,
    /// The next index to emit; every earlier one was.
    next: u32,
    /// How far the measured window is known to reach (the furthest any thread said).
    reached: Duration,
    /// The measured window's start (the earliest any thread said), once one was sent.
    pub(super) origin: Option<Instant>,
    pub(super) summaries: Vec<IntervalSummary>,
    /// Emptied records of emitted intervals, reused for the next (see [`IntervalMerger::recycle`]).
    spares: Vec<Recorder>,
}

impl IntervalMerger {
    /// A merger of `threads` threads' intervals of `length`.
    pub(super) fn new(threads: usize, length: Duration) -> Self {
        IntervalMerger {
            threads: threads.max(1),
            length: length.max(Duration::from_nanos(1)),
            pending: BTreeMap::new(),
            next: 0,
            reached: Duration::ZERO,
            origin: None,
            summaries: Vec::new(),
            spares: Vec::new(),
        }
    }

    /// Adds `iv`; returns the intervals now whole, in order, as (start, length, record),
    /// and a record for the threads to record into next. The first thread's record of an
    /// index becomes that interval's sum (an emptied spare goes back in its place), so a
    /// run of one thread adds nothing here: this runs on the collector, which may share
    /// the generator's core, where each add of a batch's five histograms held it for tens
    /// of microseconds.
    pub(super) fn push(
        &mut self,
        iv: Interval,
    ) -> (Vec<(Duration, Duration, Recorder)>, Option<Recorder>) {
        self.origin = Some(self.origin.map_or(iv.origin, |o| o.min(iv.origin)));
        self.reached = self.reached.max(iv.reached);
        // A thread sends each index once, in order, and an index is emitted only after
        // every thread sent it: nothing comes for an emitted one. Were it to, it is kept
        // in the next, so that the intervals still add up to the run.
        let index = iv.index.max(self.next);
        let back = match self.pending.entry(index) {
            std::collections::btree_map::Entry::Vacant(first) => {
                first.insert((1, iv.record));
                self.spares.pop()
            }
            std::collections::btree_map::Entry::Occupied(mut sum) => {
                let (sent, record) = sum.get_mut();
                *sent += 1;
                record.add(&iv.record);
                Some(iv.record)
            }
        };
        let mut done = Vec::new();
        // Whole: every thread sent it and the window reaches past its end, so it is not
        // the window's last (whose length only the window's end says).
        while let Some(&(sent, _)) = self.pending.get(&self.next)
            && sent >= self.threads
            && self.length * (self.next + 1) < self.reached
        {
            if let Some((_, record)) = self.pending.remove(&self.next) {
                done.push((self.length * self.next, self.length, record));
            }
            self.next += 1;
        }
        (done, back)
    }

    /// Keeps an emitted interval's record, emptied, for a later interval: its histograms
    /// keep the windows of counts they widened to, so the threads recording into it next
    /// do not widen them again (allocations the generator's core would pay for).
    pub(super) fn recycle(&mut self, mut record: Recorder) {
        if self.spares.len() < 2 {
            record.reset();
            self.spares.push(record);
        }
    }

    /// The intervals not emitted yet, once the run is over and its measured window was
    /// `measured` long: every one up to the window's last (empty where no thread sent
    /// one), the last ending at the window's end and holding whatever came after it (an
    /// open loop's drain goes there on each thread already).
    pub(super) fn flush(&mut self, measured: Duration) -> Vec<(Duration, Duration, Recorder)> {
        let length_ns = crate::record::nanos(self.length);
        let window_last = crate::record::nanos(measured).saturating_sub(1) / length_ns;
        let mut last = u32::try_from(window_last).unwrap_or(u32::MAX);
        if self.next > last && !self.pending.is_empty() {
            // Not reached (see `push`), but kept rather than lost if it were.
            last = self.next;
        }
        let mut pending = std::mem::take(&mut self.pending);
        let mut tail = pending.split_off(&last.saturating_add(1));
        let last_entry = pending
            .entry(last)
            .or_insert_with(|| (0, Recorder::default()));
        for (_, (_, record)) in std::mem::take(&mut tail) {
            last_entry.1.add(&record);
        }
        let mut done = Vec::new();
        for index in self.next..=last {
            let record = pending.remove(&index).map(|(_, r)| r).unwrap_or_default();
            let start = self.length * index;
            let length = if index < last {
                self.length
            } else {
                measured.saturating_sub(start)
            };
            done.push((start, length, record));
        }
        self.next = last.saturating_add(1);
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(
        thread: usize,
        index: u32,
        reached_ms: u64,
        completed: u64,
        origin: Instant,
    ) -> Interval {
        let mut record = Recorder::new(1);
        record.commands[0].completed = completed;
        let length = Duration::from_secs(1);
        Interval {
            thread,
            index,
            origin,
            start: length * index,
            length,
            reached: Duration::from_millis(reached_ms),
            record,
            backlog: 0,
        }
    }

    #[test]
    fn batches_group_into_report_intervals_that_tile_the_window() {
        let mut g = Grouper::new(Duration::from_millis(250));
        let mut out = Vec::new();
        let mut emit = |s: Duration, l: Duration, r: &Recorder| {
            out.push((s.as_millis() as u64, l.as_millis() as u64, r.completed()));
        };
        for i in 0..7u32 {
            let mut batch = Recorder::new(1);
            batch.commands[0].completed = 1;
            let length = if i == 6 { 20 } else { 50 };
            g.push(
                Duration::from_millis(50) * i,
                Duration::from_millis(length),
                &batch,
                &mut emit,
            );
        }
        g.flush(&mut emit);
        assert_eq!(out, [(0, 250, 5), (250, 70, 2)]);
    }

    /// Pushes `iv`, keeping only the intervals it made whole.
    fn push(m: &mut IntervalMerger, iv: Interval) -> Vec<(Duration, Duration, Recorder)> {
        m.push(iv).0
    }

    fn shape(out: &[(Duration, Duration, Recorder)]) -> Vec<(u64, u64, u64)> {
        out.iter()
            .map(|(s, l, r)| (s.as_millis() as u64, l.as_millis() as u64, r.completed()))
            .collect()
    }

    #[test]
    fn an_interval_is_emitted_once_every_thread_sent_it_and_the_window_passed_it() {
        let t0 = Instant::now();
        let mut m = IntervalMerger::new(2, Duration::from_secs(1));
        assert!(push(&mut m, interval(0, 0, 1001, 10, t0)).is_empty());
        assert_eq!(
            shape(&push(&mut m, interval(1, 0, 1002, 20, t0))),
            [(0, 1000, 30)]
        );
        // Both sent 1, but no thread knows the window goes past 2 s: it may be the last.
        assert!(push(&mut m, interval(0, 1, 1900, 1, t0)).is_empty());
        assert!(push(&mut m, interval(1, 1, 1900, 2, t0)).is_empty());
        assert_eq!(
            shape(&m.flush(Duration::from_millis(1900))),
            [(1000, 900, 3)]
        );
    }

    #[test]
    fn the_flush_ends_the_last_interval_at_the_window_end_and_keeps_what_came_after() {
        let t0 = Instant::now();
        let mut m = IntervalMerger::new(2, Duration::from_secs(1));
        push(&mut m, interval(0, 0, 1500, 5, t0));
        push(&mut m, interval(1, 0, 1500, 5, t0));
        // Thread 0 moved on past the window's end (its tick), with a timeout counted there.
        push(&mut m, interval(0, 1, 1500, 4, t0));
        push(&mut m, interval(0, 2, 1500, 1, t0));
        push(&mut m, interval(1, 1, 1500, 6, t0));
        // Thread 1 never reached index 3; nobody sent 3.
        let out = m.flush(Duration::from_millis(1500));
        assert_eq!(shape(&out), [(1000, 500, 11)]);
        // Gaps are filled: a window of 3.5 s whose middle nobody sent.
        let mut m = IntervalMerger::new(1, Duration::from_secs(1));
        assert_eq!(
            shape(&push(&mut m, interval(0, 0, 2000, 1, t0))),
            [(0, 1000, 1)]
        );
        assert_eq!(
            shape(&m.flush(Duration::from_millis(3500))),
            [(1000, 1000, 0), (2000, 1000, 0), (3000, 500, 0)]
        );
    }

    #[test]
    fn a_window_of_whole_intervals_ends_with_a_whole_one() {
        let t0 = Instant::now();
        let mut m = IntervalMerger::new(1, Duration::from_secs(1));
        assert_eq!(shape(&push(&mut m, interval(0, 0, 1000, 1, t0))), []);
        assert_eq!(
            shape(&push(&mut m, interval(0, 1, 2000, 2, t0))),
            [(0, 1000, 1)]
        );
        assert_eq!(shape(&m.flush(Duration::from_secs(2))), [(1000, 1000, 2)]);
        let mut empty = IntervalMerger::new(1, Duration::from_secs(1));
        assert_eq!(shape(&empty.flush(Duration::ZERO)), [(0, 0, 0)]);
    }
}
