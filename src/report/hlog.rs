//! HdrHistogram interval logs (`.hlog`, the V2 log format that HdrHistogram's own
//! tools read): one line per interval, command and metric, tagged `TEST.metric`.
//! Lines are appended as intervals end, so an interrupted run keeps its log.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};

/// An open interval log.
pub struct HlogWriter<'a> {
    file: BufWriter<Box<dyn Write + 'a>>,
    /// Where the log goes, for errors: its path, or "standard output".
    name: String,
    serializer: V2DeflateSerializer,
    line: Vec<u8>,
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
    /// and writes its header; values are nanoseconds, `Interval_Max` in milliseconds.
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
        writeln!(file, "#{comment}")?;
        writeln!(file, "#[Histogram values are in nanoseconds]")?;
        writeln!(file, "#[StartTime: {start_secs:.3} (seconds since epoch)]")?;
        writeln!(file, "#[MaxValueDivisor: 1000000.000]")?;
        writeln!(
            file,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        file.flush()?;
        Ok(HlogWriter {
            file,
            name,
            serializer: V2DeflateSerializer::new(),
            line: Vec::new(),
        })
    }

    /// Appends one interval's histogram; `start` is the offset from the log's StartTime.
    pub fn write(
        &mut self,
        tag: &str,
        start: Duration,
        length: Duration,
        histogram: &Histogram<u64>,
    ) -> io::Result<()> {
        self.line.clear();
        {
            // A builder with no headers writes nothing but the histogram lines we ask for.
            let mut writer = IntervalLogWriterBuilder::new()
                .with_max_value_divisor(1e6)
                .begin_log_with(&mut self.line, &mut self.serializer)?;
            writer
                .write_histogram(histogram, start, length, Tag::new(&sanitize(tag)))
                .map_err(io::Error::other)?;
        }
        self.file
            .write_all(&self.line)
            .and_then(|()| self.file.flush())
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.name)))
    }
}

/// Tags may not hold commas or white space; keep letters, digits, `_`, `.`, `-`.
fn sanitize(tag: &str) -> String {
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
}
