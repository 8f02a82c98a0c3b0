//! HdrHistogram interval logs (`.hlog`, the V2 log format), written as HdrHistogram's
//! own Java `HistogramLogWriter` writes them so its tools (`HistogramLogProcessor`) and
//! the Rust crate's `IntervalLogIterator` read them without flags: the header once (a
//! comment, the format version, StartTime and BaseTime, the legend), then one line per
//! interval and series. The untagged series, the one the tools read by default, is every
//! command's response time together; the tagged series, `TEST.metric` and
//! `TEST.COMMAND.metric`, sit beside it. Lines are appended as intervals end (a test's
//! are encoded at its end, [`super::hlog_encoder`]), so an interrupted run
//! keeps its log.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;

pub use super::hlog_encoder::sanitize;
use super::hlog_encoder::{Encoder, MAX_VALUE_DIVISOR, MakeSeries, encode_line};

/// The log format version HdrHistogram's Java writer puts in its header.
pub const FORMAT_VERSION: &str = "1.3";

/// An open interval log.
pub struct HlogWriter<'a> {
    file: BufWriter<Box<dyn Write + 'a>>,
    /// Where the log goes, for errors: its path, or "standard output".
    name: String,
    serializer: V2DeflateSerializer,
    /// One histogram, compressed.
    encoded: Vec<u8>,
    /// One line of the log.
    line: String,
    /// The intervals kept by [`HlogWriter::submit`], to be written at
    /// [`HlogWriter::drain`].
    encoder: Encoder,
}

impl HlogWriter<'static> {
    /// Creates the log file at `path` and writes its header. Written in place, a line at
    /// a time, so an interrupted run keeps its log: a link is followed, a device or a
    /// FIFO is opened as it is.
    pub fn create(path: &Path, started: SystemTime, comment: &str) -> io::Result<Self> {
        let file = File::create(path)?;
        HlogWriter::to_writer(Box::new(file), path.display().to_string(), started, comment)
    }
}

impl<'a> HlogWriter<'a> {
    /// Starts a log on `out` (standard output for `--hdr-log -`), called `name` in errors,
    /// and writes its header. Interval start times are seconds after `started`, which is
    /// both StartTime and BaseTime.
    pub fn to_writer(
        out: Box<dyn Write + 'a>,
        name: String,
        started: SystemTime,
        comment: &str,
    ) -> io::Result<Self> {
        let mut file = BufWriter::new(out);
        let start_secs = started
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let date = humantime::format_rfc3339_millis(started);
        writeln!(file, "#{comment}")?;
        writeln!(file, "#[Histogram values are in nanoseconds]")?;
        writeln!(file, "#[Histogram log format version {FORMAT_VERSION}]")?;
        writeln!(
            file,
            "#[StartTime: {start_secs:.3} (seconds since epoch), {date}]"
        )?;
        // With BaseTime given, readers take the intervals' times as offsets from it
        // rather than guess (the Java reader's guess is "more than a year before StartTime").
        writeln!(file, "#[BaseTime: {start_secs:.3} (seconds since epoch)]")?;
        writeln!(file, "#[MaxValueDivisor: {MAX_VALUE_DIVISOR:.3}]")?;
        writeln!(
            file,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        file.flush()
            .map_err(|e| io::Error::new(e.kind(), format!("{name}: {e}")))?;
        Ok(HlogWriter {
            file,
            name,
            serializer: V2DeflateSerializer::new(),
            encoded: Vec::new(),
            line: String::new(),
            encoder: Encoder::default(),
        })
    }

    /// Keeps the interval `start..start + length`, whose series `make` makes, to be
    /// encoded and written at [`HlogWriter::drain`] ([`super::hlog_encoder`] says why).
    pub fn submit(
        &mut self,
        start: Duration,
        length: Duration,
        make: MakeSeries,
    ) -> io::Result<()> {
        match self.encoder.submit(start, length, make) {
            Some(lines) => self.write_lines(lines),
            None => Ok(()),
        }
    }

    /// Encodes and writes every interval kept by [`HlogWriter::submit`], in order.
    pub fn drain(&mut self) -> io::Result<()> {
        while let Some(lines) = self.encoder.next() {
            self.write_lines(lines)?;
        }
        Ok(())
    }

    /// Writes one interval's encoded lines.
    fn write_lines(&mut self, lines: Result<String, String>) -> io::Result<()> {
        let lines = lines.map_err(|e| self.error(io::Error::other(e)))?;
        self.file
            .write_all(lines.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| self.error(e))
    }

    /// `e`, naming the log.
    fn error(&self, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("{}: {e}", self.name))
    }

    /// Appends one interval's histogram of the series `tag` (letters, digits, `.`, `-`
    /// and `_` are kept, anything else becomes `_`); `start` is the offset from StartTime.
    pub fn write(
        &mut self,
        tag: &str,
        start: Duration,
        length: Duration,
        histogram: &Histogram<u64>,
    ) -> io::Result<()> {
        self.write_line(Some(&sanitize(tag)), start, length, histogram)
    }

    /// Appends one interval's histogram of the untagged series, the one HdrHistogram's
    /// tools read when given no tag.
    pub fn write_untagged(
        &mut self,
        start: Duration,
        length: Duration,
        histogram: &Histogram<u64>,
    ) -> io::Result<()> {
        self.write_line(None, start, length, histogram)
    }

    /// `[Tag=TAG,]START,LENGTH,MAX,BASE64`: the line the Java writer and the crate's
    /// `IntervalLogWriter` write, seconds with three decimals.
    fn write_line(
        &mut self,
        tag: Option<&str>,
        start: Duration,
        length: Duration,
        histogram: &Histogram<u64>,
    ) -> io::Result<()> {
        // Intervals kept for later come first: the log stays in order.
        self.drain()?;
        self.line.clear();
        encode_line(
            &mut self.serializer,
            &mut self.encoded,
            &mut self.line,
            tag,
            start,
            length,
            histogram,
        )
        .map_err(|e| self.error(io::Error::other(e)))?;
        self.file
            .write_all(self.line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.name)))
    }
}

impl Drop for HlogWriter<'_> {
    fn drop(&mut self) {
        // Lines handed in are written, even when the caller could not wait for them.
        let _ = self.drain();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    #[test]
    fn the_log_reads_back_with_hdrhistograms_own_parser() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.hlog");
        let mut h = crate::record::new_histogram();
        h.record(1_500_000).unwrap();
        let mut log = HlogWriter::create(&path, SystemTime::now(), "tailrate test").unwrap();
        log.write(
            "LPUSH (needed to benchmark LRANGE).response",
            Duration::from_secs(1),
            Duration::from_secs(1),
            &h,
        )
        .unwrap();
        drop(log);
        let bytes = std::fs::read(&path).unwrap();
        let entries: Vec<_> = IntervalLogIterator::new(&bytes)
            .collect::<Result<_, _>>()
            .unwrap();
        let hist = entries
            .iter()
            .find_map(|e| match e {
                LogEntry::Interval(i) => Some(i),
                _ => None,
            })
            .unwrap();
        assert_eq!(
            hist.tag().unwrap().as_str(),
            "LPUSH_needed_to_benchmark_LRANGE.response"
        );
        assert_eq!(hist.duration(), Duration::from_secs(1));
        assert!((hist.max() - 1.5).abs() < 0.01, "max in ms: {}", hist.max());
    }

    #[test]
    fn the_header_is_written_once_and_untagged_lines_sit_beside_tagged_ones() {
        let mut out = Vec::new();
        let started = UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        let mut h = crate::record::new_histogram();
        h.record(2_000_000).unwrap();
        {
            let sink = Box::new(&mut out);
            let mut log = HlogWriter::to_writer(sink, "x".into(), started, "tailrate").unwrap();
            let second = Duration::from_secs(1);
            log.write_untagged(Duration::ZERO, second, &h).unwrap();
            log.write("GET.response", Duration::ZERO, second, &h)
                .unwrap();
            log.write_untagged(second, second, &h).unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..7],
            [
                "#tailrate",
                "#[Histogram values are in nanoseconds]",
                "#[Histogram log format version 1.3]",
                "#[StartTime: 1700000000.123 (seconds since epoch), 2023-11-14T22:13:20.123Z]",
                "#[BaseTime: 1700000000.123 (seconds since epoch)]",
                "#[MaxValueDivisor: 1000000.000]",
                "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"",
            ]
        );
        assert!(
            lines[7].starts_with("0.000,1.000,2.001,HISTF"),
            "{}",
            lines[7]
        );
        assert!(lines[8].starts_with("Tag=GET.response,0.000,1.000,2.001,"));
        assert!(lines[9].starts_with("1.000,1.000,2.001,"));
        assert_eq!(lines.len(), 10);
        let entries: Vec<_> = IntervalLogIterator::new(text.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(matches!(entries[0], LogEntry::StartTime(t) if t.as_millis() == 1_700_000_000_123));
        assert!(matches!(entries[1], LogEntry::BaseTime(_)));
        let tags: Vec<Option<&str>> = entries[2..]
            .iter()
            .map(|e| match e {
                LogEntry::Interval(i) => i.tag().map(|t| t.as_str()),
                _ => Some("not an interval"),
            })
            .collect();
        assert_eq!(tags, [None, Some("GET.response"), None]);
    }
}
