//! The live status line on stderr: one consumer of the interval stream, drawn only
//! when stderr is a terminal, overwritten in place with `\r`.

use std::io::Write;
use std::time::Duration;

use crate::record::Recorder;

/// Draws progress from intervals as they arrive.
pub struct Progress<'a> {
    out: Option<&'a mut dyn Write>,
    name: String,
    target_rate_per_sec: Option<f64>,
    threads: usize,
    /// How long a line's window is: the report's interval.
    line_every: Duration,
    window: Recorder,
    window_errors: u64,
    window_threads: usize,
    window_length: Duration,
    overall_completed: u64,
    overall_elapsed: Duration,
    backlog: usize,
}

impl<'a> Progress<'a> {
    /// A progress line for test `name`; `out = None` draws nothing.
    pub fn new(
        out: Option<&'a mut dyn Write>,
        name: &str,
        target_rate_per_sec: Option<f64>,
        threads: usize,
        line_every: Duration,
    ) -> Self {
        Progress {
            out,
            name: name.to_string(),
            target_rate_per_sec,
            threads: threads.max(1),
            line_every,
            window: Recorder::default(),
            window_errors: 0,
            window_threads: 0,
            window_length: Duration::ZERO,
            overall_completed: 0,
            overall_elapsed: Duration::ZERO,
            backlog: 0,
        }
    }

    /// Takes one thread's batch; draws once every thread has reported enough of them to
    /// fill a report interval.
    pub fn interval(
        &mut self,
        record: &Recorder,
        start: Duration,
        length: Duration,
        backlog: usize,
    ) {
        if self.out.is_none() {
            return;
        }
        self.window.add(record);
        self.window_errors += record.commands.iter().map(|c| c.error_total()).sum::<u64>();
        self.window_threads += 1;
        self.window_length += length / self.threads as u32;
        // Each thread's batches come in turn: the backlog shown is the latest round's sum.
        if self.window_threads % self.threads == 1 || self.threads == 1 {
            self.backlog = 0;
        }
        self.backlog += backlog;
        if !self.window_threads.is_multiple_of(self.threads) || self.window_length < self.line_every
        {
            return;
        }
        let total = self.window.total();
        self.overall_completed += total.completed;
        self.overall_elapsed = start + length;
        let secs = self.window_length.as_secs_f64().max(1e-9);
        let rate = total.completed as f64 / secs;
        let overall = self.overall_completed as f64 / self.overall_elapsed.as_secs_f64().max(1e-9);
        let h = &total.hist.response();
        let (p50, p99) = if h.is_empty() {
            (0.0, 0.0)
        } else {
            (
                h.value_at_quantile(0.5) as f64 / 1e6,
                h.value_at_quantile(0.99) as f64 / 1e6,
            )
        };
        let line = match self.target_rate_per_sec {
            None => format!(
                "{}: rps={:.1} (overall: {:.1}) avg_msec={:.3} p99_msec={:.3}",
                self.name,
                rate,
                overall,
                h.mean() / 1e6,
                p99
            ),
            Some(target) => format!(
                "[{:>5.1}s] {}: {:.0}/s (target {:.0}/s) p50={:.3} p99={:.3} msec backlog={} errors={}",
                self.overall_elapsed.as_secs_f64(),
                self.name,
                rate,
                target,
                p50,
                p99,
                self.backlog,
                self.window_errors
            ),
        };
        if let Some(out) = self.out.as_mut() {
            let _ = write!(out, "\r\x1b[K{line}");
            let _ = out.flush();
        }
        self.window.reset();
        self.window_errors = 0;
        self.window_threads = 0;
        self.window_length = Duration::ZERO;
        self.backlog = 0;
    }

    /// Clears the line before the report is printed.
    pub fn finish(&mut self) {
        if let Some(out) = self.out.as_mut() {
            let _ = write!(out, "\r\x1b[K");
            let _ = out.flush();
        }
    }
}
