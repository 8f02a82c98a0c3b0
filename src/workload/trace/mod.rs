//! Recorded Redis traffic, read as a stream of [`TraceRecord`]s: `redis-cli MONITOR`
//! output (`monitor.rs`), JSON lines (`jsonl.rs`) and CSV with a header (`csv.rs`).
//!
//! [`TraceReader`] owns the input, the choice of format and the bookkeeping of bad lines;
//! each format's file only turns one line (or one CSV row) into the reader's one reused
//! record. Memory stays bounded whatever the file claims: input is read a line at a time
//! into one buffer (`lines.rs`), and a line longer than [`MAX_LINE_BYTES`] is refused
//! before it is held. When each record is sent, and to which connection, is the
//! scheduler's business.

mod csv;
mod jsonl;
mod lines;
mod monitor;

use std::io::{self, BufRead};

use lines::{Line, LineSource};

/// Most arguments of one recorded command: a line of empty arguments (`"" "" ...`) would
/// otherwise hold a buffer per argument, up to eight times the line's size.
pub const MAX_ARGS: usize = 1 << 20;

/// The longest line (or CSV row) read; a longer one is a bad line, so a damaged file
/// cannot make the reader allocate whatever its first newline-free stretch claims.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// How long a piece of a bad line may be when an error quotes it.
const QUOTED_BYTES: usize = 40;

/// The formats a trace can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// `redis-cli MONITOR` output: `1733400000.123456 [0 127.0.0.1:54321] "SET" "k" "v"`.
    Monitor,
    /// One JSON object a line: `{"time": 12.5, "client": "c1", "db": 0, "args": ["GET", "k"]}`.
    #[value(alias = "jsonl")]
    JsonLines,
    /// A header `time[,client][,db],command`, then rows with the command and its arguments.
    Csv,
}

impl TraceFormat {
    /// The format a trace whose first non-empty line is `first_non_empty_line` is in, if
    /// the line looks like any of them (a line ending and a UTF-8 byte order mark may stay).
    pub fn detect(first_non_empty_line: &[u8]) -> Option<TraceFormat> {
        let line = strip_bom(first_non_empty_line).trim_ascii();
        if line == b"OK" || monitor::looks_like_monitor(line) {
            Some(TraceFormat::Monitor)
        } else if line.first() == Some(&b'{') {
            Some(TraceFormat::JsonLines)
        } else if csv::looks_like_header(line) {
            Some(TraceFormat::Csv)
        } else {
            None
        }
    }
}

/// One recorded command. Its buffers are reused from record to record: the reader refills
/// the same record on each [`TraceReader::next_record`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceRecord {
    /// Recorded time in microseconds: since the Unix epoch for MONITOR, as written for the
    /// other formats.
    pub at_us: u64,
    /// Database number; `None` when the trace does not say (a replay then follows the
    /// client's own `SELECT`s).
    pub db: Option<u32>,
    /// The client as the trace names it (`127.0.0.1:54321`, `lua`, `c1`); empty when none.
    pub client: Vec<u8>,
    /// The command and its arguments; never empty.
    pub args: Vec<Vec<u8>>,
    /// 1-based line number where the record starts.
    pub line: u64,
}

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A line does not parse; the reason says what was expected. Skipped and counted
    /// instead with `skip_bad_lines`, except a CSV row over [`MAX_LINE_BYTES`], after
    /// which the rest of the file cannot be told apart from that row.
    #[error("line {line}: {reason}")]
    BadLine {
        /// 1-based line number.
        line: u64,
        /// What was found and what was expected.
        reason: String,
    },
    /// The input could not be read.
    #[error("reading the trace: {0}")]
    Io(#[from] io::Error),
    /// The input has no non-empty line.
    #[error("the trace is empty")]
    Empty,
    /// No format was given and the first non-empty line fits none.
    #[error(
        "line {line}: the first line is neither MONITOR output (`1733400000.123456 [0 \
         127.0.0.1:6379] \"GET\" \"k\"`), a JSON object nor a CSV header \
         `time[,client][,db],command`; name the format to read it anyway"
    )]
    UnknownFormat {
        /// 1-based line number of the first non-empty line.
        line: u64,
    },
}

/// Reads a trace one record at a time, in bounded memory.
#[derive(Debug)]
pub struct TraceReader<R: BufRead> {
    format: TraceFormat,
    source: Source<R>,
    skip_bad_lines: bool,
    record: TraceRecord,
    /// Argument buffers left over when a record had fewer arguments than an earlier one,
    /// kept so the next longer record does not allocate them again.
    spare: Vec<Vec<u8>>,
    bad_lines: u64,
    first_bad: Option<TraceError>,
    /// Set after an error that ends the trace: later calls return `None`.
    finished: bool,
}

/// Where records come from: lines read here, or the `csv` crate's rows.
#[derive(Debug)]
enum Source<R: BufRead> {
    Lines(LineSource<R>),
    /// Boxed: the crate's reader is large, and made once per trace.
    Csv(Box<csv::CsvSource<R>>),
}

impl<R: BufRead> TraceReader<R> {
    /// A reader of `input` in `format`, or in the format its first non-empty line shows
    /// when `None`. With `skip_bad_lines`, lines that do not parse are counted and skipped
    /// instead of ending the read with an error.
    pub fn new(
        input: R,
        format: Option<TraceFormat>,
        skip_bad_lines: bool,
    ) -> Result<Self, TraceError> {
        Self::with_max_line_bytes(input, format, skip_bad_lines, MAX_LINE_BYTES)
    }

    /// [`TraceReader::new`] with another cap on a line's length (tests lower it, so
    /// they need not write 64 MB to pass it).
    fn with_max_line_bytes(
        input: R,
        format: Option<TraceFormat>,
        skip_bad_lines: bool,
        max_line_bytes: usize,
    ) -> Result<Self, TraceError> {
        let mut lines = LineSource {
            input,
            buf: Vec::new(),
            lines_read: 0,
            pending: false,
            max_line_bytes,
        };
        let mut bad_lines = 0;
        let mut first_bad = None;
        // The first non-empty line names the format; it stays in the buffer, unparsed.
        loop {
            match lines.read_line()? {
                Line::End => return Err(TraceError::Empty),
                Line::TooLong => {
                    let error = too_long(lines.lines_read, max_line_bytes);
                    // A line of unknown format, or a CSV header, cannot be skipped.
                    if !skip_bad_lines || !matches!(format, Some(f) if f != TraceFormat::Csv) {
                        return Err(error);
                    }
                    bad_lines += 1;
                    first_bad.get_or_insert(error);
                }
                Line::Read if lines.buf.trim_ascii().is_empty() => {}
                Line::Read => break,
            }
        }
        // Only the first line may carry a byte order mark (spreadsheets write one).
        if lines.buf.starts_with(BOM) {
            lines.buf.drain(..BOM.len());
        }
        let format = match format.or_else(|| TraceFormat::detect(&lines.buf)) {
            Some(format) => format,
            None => {
                return Err(TraceError::UnknownFormat {
                    line: lines.lines_read,
                });
            }
        };
        let source = if format == TraceFormat::Csv {
            let header_line = lines.lines_read;
            let source = csv::CsvSource::new(lines.input, &lines.buf, header_line, max_line_bytes)
                .map_err(|reason| TraceError::BadLine {
                    line: header_line,
                    reason,
                })?;
            Source::Csv(Box::new(source))
        } else {
            // redis-cli prints `OK` when MONITOR starts; it is not a command.
            lines.pending = !(format == TraceFormat::Monitor && lines.buf.trim_ascii() == b"OK");
            Source::Lines(lines)
        };
        Ok(TraceReader {
            format,
            source,
            skip_bad_lines,
            record: TraceRecord::default(),
            spare: Vec::new(),
            bad_lines,
            first_bad,
            finished: false,
        })
    }

    /// The format being read (given, or detected).
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The next record, or `None` at the end. With `skip_bad_lines` a line that does not
    /// parse is counted and skipped; without, it is an error naming its line.
    pub fn next_record(&mut self) -> Result<Option<&TraceRecord>, TraceError> {
        if self.finished {
            return Ok(None);
        }
        loop {
            let parsed = match &mut self.source {
                Source::Lines(lines) => {
                    if lines.pending {
                        lines.pending = false;
                    } else {
                        match lines.read_line()? {
                            Line::End => return Ok(None),
                            Line::TooLong => {
                                let error = too_long(lines.lines_read, lines.max_line_bytes);
                                self.bad(error)?;
                                continue;
                            }
                            Line::Read => {}
                        }
                    }
                    if lines.buf.trim_ascii().is_empty() {
                        continue;
                    }
                    self.record.line = lines.lines_read;
                    let parse = match self.format {
                        TraceFormat::JsonLines => jsonl::parse_line,
                        _ => monitor::parse_line,
                    };
                    parse(&lines.buf, &mut self.record, &mut self.spare)
                        .map_err(|reason| (lines.lines_read, reason))
                }
                Source::Csv(rows) => match rows.next_row(&mut self.record, &mut self.spare) {
                    Ok(true) => Ok(()),
                    Ok(false) => return Ok(None),
                    Err(csv::RowError::Bad { line, reason }) => Err((line, reason)),
                    Err(csv::RowError::Fatal(error)) => {
                        self.finished = true;
                        return Err(error);
                    }
                },
            };
            match parsed {
                Ok(()) => return Ok(Some(&self.record)),
                Err((line, reason)) => self.bad(TraceError::BadLine { line, reason })?,
            }
        }
    }

    /// Counts and keeps a bad line when skipping them; hands its error back otherwise.
    fn bad(&mut self, error: TraceError) -> Result<(), TraceError> {
        if !self.skip_bad_lines {
            return Err(error);
        }
        self.bad_lines += 1;
        self.first_bad.get_or_insert(error);
        Ok(())
    }

    /// How many bad lines were skipped.
    pub fn bad_lines(&self) -> u64 {
        self.bad_lines
    }

    /// The first skipped line's error, for the report.
    pub fn first_bad(&self) -> Option<&TraceError> {
        self.first_bad.as_ref()
    }

    /// Physical lines read so far, empty and skipped ones included.
    pub fn lines_read(&self) -> u64 {
        match &self.source {
            Source::Lines(lines) => lines.lines_read,
            Source::Csv(rows) => rows.lines_read(),
        }
    }
}

/// The error of a line longer than the cap.
fn too_long(line: u64, max_line_bytes: usize) -> TraceError {
    TraceError::BadLine {
        line,
        reason: format!("the line is longer than {max_line_bytes} bytes"),
    }
}

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xef\xbb\xbf";

fn strip_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(BOM).unwrap_or(line)
}

/// Fills `record.args` with `args`, reusing its buffers and the spare ones, so a trace
/// of records of similar shape allocates nothing after its first records.
fn fill_args<'a>(
    record: &mut TraceRecord,
    spare: &mut Vec<Vec<u8>>,
    args: impl IntoIterator<Item = &'a [u8]>,
) {
    let mut n = 0;
    for arg in args {
        let slot = next_arg(record, spare, n);
        slot.extend_from_slice(arg);
        n += 1;
    }
    finish_args(record, spare, n);
}

/// The `n`th argument's buffer, emptied: an old one of this record, a spare, or a new one.
fn next_arg<'r>(
    record: &'r mut TraceRecord,
    spare: &mut Vec<Vec<u8>>,
    n: usize,
) -> &'r mut Vec<u8> {
    if n == record.args.len() {
        record.args.push(spare.pop().unwrap_or_default());
    }
    let slot = &mut record.args[n];
    slot.clear();
    slot
}

/// Ends the record at `n` arguments, keeping the buffers past them as spares.
fn finish_args(record: &mut TraceRecord, spare: &mut Vec<Vec<u8>>, n: usize) {
    if record.args.len() > n {
        spare.extend(record.args.drain(n..));
    }
}

/// Up to [`QUOTED_BYTES`] of `bytes` for an error message, lossily as UTF-8.
fn quoted(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(QUOTED_BYTES)];
    let ellipsis = if bytes.len() > QUOTED_BYTES {
        "..."
    } else {
        ""
    };
    format!("{}{ellipsis}", String::from_utf8_lossy(shown))
}

/// Seconds written as decimal digits, optionally with up to six decimals, to whole
/// microseconds without going through a float (MONITOR's epoch times need all 16 digits).
fn parse_seconds_exact(text: &[u8]) -> Option<u64> {
    let (whole, frac) = match text.iter().position(|&b| b == b'.') {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &b""[..]),
    };
    if whole.is_empty() || frac.len() > 6 || !whole.iter().chain(frac).all(u8::is_ascii_digit) {
        return None;
    }
    let mut seconds: u64 = 0;
    for &d in whole {
        seconds = seconds.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    let mut micros: u64 = 0;
    for i in 0..6 {
        micros = micros * 10 + frac.get(i).map_or(0, |&d| u64::from(d - b'0'));
    }
    seconds.checked_mul(1_000_000)?.checked_add(micros)
}

/// Seconds as a float (JSON's `time`, CSV's other spellings) to whole microseconds;
/// `None` for negative, non-finite or out-of-range values.
fn seconds_to_us(seconds: f64) -> Option<u64> {
    let us = (seconds * 1e6).round();
    // u64::MAX as f64 rounds up to 2^64, which does not fit: compare strictly below it.
    (us.is_finite() && us >= 0.0 && us < u64::MAX as f64).then_some(us as u64)
}

/// A time field: exact decimal seconds, or any float spelling Rust reads.
fn parse_time(text: &[u8]) -> Result<u64, String> {
    let text = text.trim_ascii();
    if let Some(us) = parse_seconds_exact(text) {
        return Ok(us);
    }
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .and_then(seconds_to_us)
        .ok_or_else(|| {
            format!(
                "time '{}' is not a number of seconds (finite and at least 0)",
                quoted(text)
            )
        })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod mutation_tests;
