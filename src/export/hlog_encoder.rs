//! The `.hlog`'s encoder: a thread of its own that makes an interval's histograms and
//! turns them into the log's lines (each compressed, in base64), so that the collector
//! never holds a CPU for it. The collector shares the generator's core when the user pins
//! the process (`taskset -c 1 tailrate ...`), and compressing an interval's series takes a
//! millisecond or more: on the collector it delayed the sends queued behind it by as
//! much, which the schedule-lag check rightly failed.
//!
//! The thread runs at nice 10. Its wake-ups then seldom preempt the generator (the
//! scheduler places a low-weight task's deadline far out), and it runs while the
//! generator sleeps between sends, with a share that never lets it starve (about a tenth
//! of a core against one busy thread). The collector hands it each interval and writes
//! the lines that are ready; at a test's end it waits for the rest, so the log is
//! complete and in order before the next test's lines.

use std::fmt::Write as _;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;
use std::time::Duration;

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};

use super::hlog::sanitize;

/// Values are nanoseconds; `Interval_Max` is divided by this, so it reads in milliseconds
/// (the Java writer's default ratio, and what its processor divides by).
pub const MAX_VALUE_DIVISOR: f64 = 1e6;

/// The nice value of the encoder's thread (see the module doc).
const ENCODER_NICE: i32 = 10;

/// One interval's series as the encoder takes them: each tag (`None` for the untagged
/// series, the one HdrHistogram's tools read by default) and its histogram.
pub type Series = Vec<(Option<String>, Histogram<u64>)>;

/// What makes one interval's series, run on the encoder's thread (making a histogram
/// from the recorded counts zeroes 270 KB, which is work the collector is spared too).
pub type MakeSeries = Box<dyn FnOnce() -> Series + Send>;

struct Job {
    start: Duration,
    length: Duration,
    make: MakeSeries,
}

/// The running encoder: intervals go in, their lines come out in the same order.
pub(super) struct Encoder {
    jobs: Option<Sender<Job>>,
    lines: Receiver<Result<String, String>>,
    handle: Option<JoinHandle<()>>,
    /// Intervals handed in whose lines have not come out yet.
    pending: usize,
}

impl Encoder {
    /// Starts the thread.
    pub(super) fn spawn() -> std::io::Result<Self> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (outbox, lines) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("tailrate-hlog".into())
            .spawn(move || encode_all(&inbox, &outbox))?;
        Ok(Encoder {
            jobs: Some(jobs),
            lines,
            handle: Some(handle),
            pending: 0,
        })
    }

    /// Hands it the interval `start..start + length`, whose series `make` makes; `false`
    /// when its thread has ended.
    pub(super) fn submit(&mut self, start: Duration, length: Duration, make: MakeSeries) -> bool {
        let sent = self.jobs.as_ref().is_some_and(|jobs| {
            jobs.send(Job {
                start,
                length,
                make,
            })
            .is_ok()
        });
        if sent {
            self.pending += 1;
        }
        sent
    }

    /// The lines of the next interval, in order: `None` when none is pending, or when
    /// `wait` is false and the next is not ready. An error says why it could not be
    /// encoded.
    pub(super) fn next(&mut self, wait: bool) -> Option<Result<String, String>> {
        if self.pending == 0 {
            return None;
        }
        let ended = || Err("the log's encoder ended early".to_string());
        let got = if wait {
            self.lines.recv().ok()
        } else {
            match self.lines.try_recv() {
                Ok(lines) => Some(lines),
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => None,
            }
        };
        match got {
            Some(lines) => {
                self.pending -= 1;
                Some(lines)
            }
            None => {
                self.pending = 0;
                Some(ended())
            }
        }
    }
}

impl Drop for Encoder {
    fn drop(&mut self) {
        // Its inbox closed, the thread ends after the intervals it holds.
        drop(self.jobs.take());
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// The encoder's thread: every interval in, its lines out, until the inbox closes.
fn encode_all(inbox: &Receiver<Job>, outbox: &Sender<Result<String, String>>) {
    let own = rustix::thread::gettid();
    // A thread's nice value is its own on Linux; where it cannot be set, the encoder
    // runs at the process's priority, as the collector did.
    let _ = rustix::process::setpriority_process(Some(own), ENCODER_NICE);
    let mut serializer = V2DeflateSerializer::new();
    let mut encoded = Vec::new();
    for job in inbox {
        let mut text = String::new();
        let mut result = Ok(());
        for (tag, histogram) in (job.make)() {
            let tag = tag.as_deref().map(sanitize);
            result = encode_line(
                &mut serializer,
                &mut encoded,
                &mut text,
                tag.as_deref(),
                job.start,
                job.length,
                &histogram,
            );
            if result.is_err() {
                break;
            }
        }
        if outbox.send(result.map(|()| text)).is_err() {
            return;
        }
    }
}

/// Appends to `line` `[Tag=TAG,]START,LENGTH,MAX,BASE64` and a newline: the line the
/// Java writer and the crate's `IntervalLogWriter` write, seconds with three decimals.
/// `encoded` is scratch for the compressed histogram.
pub(super) fn encode_line(
    serializer: &mut V2DeflateSerializer,
    encoded: &mut Vec<u8>,
    line: &mut String,
    tag: Option<&str>,
    start: Duration,
    length: Duration,
    histogram: &Histogram<u64>,
) -> Result<(), String> {
    encoded.clear();
    serializer
        .serialize(histogram, encoded)
        .map_err(|e| format!("{e:?}"))?;
    if let Some(tag) = tag {
        let _ = write!(line, "Tag={tag},");
    }
    let _ = write!(
        line,
        "{:.3},{:.3},{:.3},",
        start.as_secs_f64(),
        length.as_secs_f64(),
        histogram.max() as f64 / MAX_VALUE_DIVISOR
    );
    base64::engine::general_purpose::STANDARD.encode_string(&encoded, line);
    line.push('\n');
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::time::UNIX_EPOCH;

    use super::super::hlog::HlogWriter;
    use super::*;

    fn histogram(value: u64) -> Histogram<u64> {
        let mut h = crate::record::new_histogram();
        h.record(value).unwrap();
        h
    }

    #[test]
    fn intervals_encoded_on_the_thread_are_the_lines_written_directly_in_order() {
        let started = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let second = Duration::from_secs(1);
        let mut direct = Vec::new();
        {
            let mut log =
                HlogWriter::to_writer(Box::new(&mut direct), "x".into(), started, "t").unwrap();
            for i in 0..20u64 {
                let start = second * i as u32;
                log.write_untagged(start, second, &histogram(1000 + i))
                    .unwrap();
                log.write("GET set.lag", start, second, &histogram(i + 1))
                    .unwrap();
            }
        }
        let mut queued = Vec::new();
        {
            let mut log =
                HlogWriter::to_writer(Box::new(&mut queued), "x".into(), started, "t").unwrap();
            for i in 0..20u64 {
                let make: MakeSeries = Box::new(move || {
                    vec![
                        (None, histogram(1000 + i)),
                        (Some("GET set.lag".to_string()), histogram(i + 1)),
                    ]
                });
                log.submit(second * i as u32, second, make).unwrap();
            }
            log.drain().unwrap();
        }
        assert_eq!(
            String::from_utf8(queued).unwrap(),
            String::from_utf8(direct).unwrap()
        );
    }

    #[test]
    fn a_dropped_log_still_writes_the_intervals_handed_in() {
        let mut out = Vec::new();
        {
            let mut log =
                HlogWriter::to_writer(Box::new(&mut out), "x".into(), UNIX_EPOCH, "t").unwrap();
            for i in 0..5u32 {
                let make: MakeSeries = Box::new(|| vec![(None, histogram(7))]);
                log.submit(Duration::from_secs(i.into()), Duration::from_secs(1), make)
                    .unwrap();
            }
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text.lines().filter(|l| !l.starts_with(['#', '"'])).count(),
            5,
            "{text}"
        );
    }
}
