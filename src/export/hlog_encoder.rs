//! The `.hlog`'s intervals, encoded when the generator no longer needs the CPU: a test's
//! intervals wait here, as copies of their counts, and are made into histograms and
//! compressed at the test's end. The collector shares the generator's core when the user
//! pins the process (`taskset -c 1 tailrate ...`), and the generator spins between sends
//! (hybrid pacing spins the last 2.5 ms before each, so it never sleeps at more than 400
//! requests a second): whatever else runs on that core takes it from the sends. An
//! interval's series take about a millisecond to compress, and done as each interval
//! ended, on the collector or on a thread of the lowest class alike, they delayed the
//! sends behind them by as much, which the schedule-lag check rightly failed.
//!
//! A test of more than [`MOST_WAITING`] intervals (a run over about four minutes) encodes
//! its oldest as each new one comes, as every interval was before: a bounded queue, and
//! the cost back on the core, but for a millisecond an interval of a second or more.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::time::Duration;

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};

/// Values are nanoseconds; `Interval_Max` is divided by this, so it reads in milliseconds
/// (the Java writer's default ratio, and what its processor divides by).
pub const MAX_VALUE_DIVISOR: f64 = 1e6;

/// The most intervals that wait for the test's end (see the module doc): an open loop
/// has ten to a run, or one a second past ten seconds.
pub const MOST_WAITING: usize = 256;

/// One interval's series as the encoder takes them: each tag (`None` for the untagged
/// series, the one HdrHistogram's tools read by default) and its histogram.
pub type Series = Vec<(Option<String>, Histogram<u64>)>;

/// What makes one interval's series, run when it is encoded (making a histogram from
/// the recorded counts zeroes 270 KB, which waits too).
pub type MakeSeries = Box<dyn FnOnce() -> Series + Send>;

/// One interval to encode.
struct Job {
    start: Duration,
    length: Duration,
    make: MakeSeries,
}

/// The intervals waiting, oldest first, and what encodes them.
#[derive(Default)]
pub(super) struct Encoder {
    waiting: VecDeque<Job>,
    serializer: V2DeflateSerializer,
    encoded: Vec<u8>,
}

impl Encoder {
    /// Keeps the interval `start..start + length`, whose series `make` makes, for later;
    /// past [`MOST_WAITING`], gives the oldest one's lines now.
    pub(super) fn submit(
        &mut self,
        start: Duration,
        length: Duration,
        make: MakeSeries,
    ) -> Option<Result<String, String>> {
        self.waiting.push_back(Job {
            start,
            length,
            make,
        });
        (self.waiting.len() > MOST_WAITING)
            .then(|| self.next())
            .flatten()
    }

    /// The lines of the oldest interval waiting, `None` when none waits; an error says
    /// why it could not be encoded.
    pub(super) fn next(&mut self) -> Option<Result<String, String>> {
        let job = self.waiting.pop_front()?;
        let mut text = String::new();
        for (tag, histogram) in (job.make)() {
            let tag = tag.as_deref().map(sanitize);
            if let Err(e) = encode_line(
                &mut self.serializer,
                &mut self.encoded,
                &mut text,
                tag.as_deref(),
                job.start,
                job.length,
                &histogram,
            ) {
                return Some(Err(e));
            }
        }
        Some(Ok(text))
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

/// Tags may not hold commas or white space; keep letters, digits, `_`, `.`, `-`.
pub fn sanitize(tag: &str) -> String {
    let mut out: String = tag
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    out.split('.')
        .map(|part| part.trim_matches('_'))
        .collect::<Vec<_>>()
        .join(".")
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
    fn intervals_encoded_later_are_the_lines_written_directly_in_order() {
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
    fn past_its_bound_the_queue_writes_its_oldest_interval_as_each_comes() {
        let mut encoder = Encoder::default();
        let second = Duration::from_secs(1);
        let mut written = Vec::new();
        for i in 0..MOST_WAITING as u64 + 3 {
            let make: MakeSeries = Box::new(move || vec![(None, histogram(i + 1))]);
            if let Some(lines) = encoder.submit(second * i as u32, second, make) {
                written.push(lines.unwrap());
            }
        }
        assert_eq!(written.len(), 3);
        assert!(written[0].starts_with("0.000,1.000,"), "{}", written[0]);
        assert!(written[2].starts_with("2.000,1.000,"), "{}", written[2]);
        let mut rest = 0;
        while encoder.next().is_some() {
            rest += 1;
        }
        assert_eq!(rest, MOST_WAITING);
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
