//! CSV traces: a header naming the leading columns (`time`, and optionally `client` and
//! `db`, in any order) and ending with `command`; on each row the fields from the
//! `command` column on are the command and its arguments, so rows differ in length.
//!
//! The `csv` crate reads the rows (quoting). A row is one line: a quoted field that never
//! closes would make the rest of the file one row, so [`Capped`] watches the bytes the
//! crate reads, closes a quoted field at its line's end (the row is then a bad line,
//! named), and stops a row longer than the cap before the crate has buffered all of it.

use std::collections::VecDeque;
use std::io::{self, BufRead, Read};

use ::csv::{ByteRecord, Reader, ReaderBuilder};

use super::{TraceError, TraceRecord, fill_args, parse_time, quoted};

/// Whether `line` is a header this module reads: its first column is `time`, `client` or
/// `db`, and its last is `command`.
pub(super) fn looks_like_header(line: &[u8]) -> bool {
    let name = |field: &[u8]| -> Vec<u8> {
        let field = field.trim_ascii();
        let inner = field
            .strip_prefix(b"\"")
            .and_then(|f| f.strip_suffix(b"\""));
        inner.unwrap_or(field).trim_ascii().to_ascii_lowercase()
    };
    let first = line
        .split(|&b| b == b',')
        .next()
        .map(name)
        .unwrap_or_default();
    let last = line
        .rsplit(|&b| b == b',')
        .next()
        .map(name)
        .unwrap_or_default();
    matches!(&first[..], b"time" | b"client" | b"db") && last == b"command"
}

/// Which field of a row holds what.
#[derive(Debug, Clone, Copy)]
struct Columns {
    time: usize,
    client: Option<usize>,
    db: Option<usize>,
    /// The command; its arguments follow it.
    command: usize,
}

impl Columns {
    /// The columns the header `fields` names, or what is wrong with it.
    fn from_header(fields: &ByteRecord) -> Result<Self, String> {
        let expected = "a CSV header `time[,client][,db],command` (command last)";
        let mut time = None;
        let mut client = None;
        let mut db = None;
        let mut command = None;
        for (i, field) in fields.iter().enumerate() {
            let slot = match &field.trim_ascii().to_ascii_lowercase()[..] {
                b"time" => &mut time,
                b"client" => &mut client,
                b"db" => &mut db,
                b"command" if i + 1 == fields.len() => &mut command,
                b"command" => {
                    return Err(format!("`command` must be the last column of {expected}"));
                }
                _ => {
                    return Err(format!(
                        "unknown column '{}'; expected {expected}",
                        quoted(field)
                    ));
                }
            };
            if slot.replace(i).is_some() {
                return Err(format!("column '{}' appears twice", quoted(field)));
            }
        }
        match (time, command) {
            (Some(time), Some(command)) => Ok(Columns {
                time,
                client,
                db,
                command,
            }),
            (None, _) => Err(format!("no `time` column; expected {expected}")),
            (_, None) => Err(format!(
                "the last column is not `command`; expected {expected}"
            )),
        }
    }
}

/// What reading one row can go wrong with.
pub(super) enum RowError {
    /// The row does not parse; it can be skipped.
    Bad {
        /// The line where the row starts.
        line: u64,
        /// What was expected.
        reason: String,
    },
    /// Reading cannot go on (the input failed, or a row is over the cap).
    Fatal(TraceError),
}

/// The rows of a CSV trace after its header.
#[derive(Debug)]
pub(super) struct CsvSource<R> {
    reader: Reader<Capped<R>>,
    row: ByteRecord,
    columns: Columns,
    /// The header's line number: the crate counts lines from the one after it.
    header_line: u64,
}

impl<R: BufRead> CsvSource<R> {
    /// Rows of `input`, which is positioned just past the header `header`.
    pub(super) fn new(
        input: R,
        header: &[u8],
        header_line: u64,
        max_row_bytes: usize,
    ) -> Result<Self, String> {
        let mut fields = ByteRecord::new();
        let read = builder().from_reader(header).read_byte_record(&mut fields);
        if !matches!(read, Ok(true)) {
            return Err("expected a CSV header `time[,client][,db],command`".into());
        }
        let columns = Columns::from_header(&fields)?;
        let capped = Capped {
            input,
            max_row_bytes,
            state: Quoting::FieldStart,
            row_bytes: 0,
            offset: 0,
            line: header_line + 1,
            row_line: header_line + 1,
            row_starts: VecDeque::new(),
            over: None,
            spanning: VecDeque::new(),
        };
        Ok(CsvSource {
            reader: builder().from_reader(capped),
            row: ByteRecord::new(),
            columns,
            header_line,
        })
    }

    /// Reads the next row into `record`; `false` at the end.
    pub(super) fn next_row(
        &mut self,
        record: &mut TraceRecord,
        spare: &mut Vec<Vec<u8>>,
    ) -> Result<bool, RowError> {
        match self.reader.read_byte_record(&mut self.row) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(error) => {
                if let Some(line) = self.reader.get_ref().over {
                    let reason = format!(
                        "a row is longer than {} bytes (a quote that never closes?)",
                        self.reader.get_ref().max_row_bytes
                    );
                    return Err(RowError::Fatal(TraceError::BadLine { line, reason }));
                }
                return Err(RowError::Fatal(match error.into_kind() {
                    ::csv::ErrorKind::Io(e) => TraceError::Io(e),
                    other => TraceError::Io(io::Error::other(format!("{other:?}"))),
                }));
            }
        }
        let (start_byte, crate_line) = self.row.position().map_or((0, 1), |p| (p.byte(), p.line()));
        let line =
            (self.reader.get_mut().row_line(start_byte)).unwrap_or(self.header_line + crate_line);
        if self.reader.get_mut().spanned(line) {
            return Err(RowError::Bad {
                line,
                reason: "a quoted field runs past the end of its line (a quote that never \
                         closes?): a CSV row is one line; write arguments that hold a line \
                         break in a JSON-lines trace"
                    .into(),
            });
        }
        self.fill(record)
            .map_err(|reason| RowError::Bad { line, reason })?;
        record.line = line;
        // Rows are filled field by field, so their arguments reuse the record's buffers.
        fill_args(record, spare, self.row.iter().skip(self.columns.command));
        Ok(true)
    }

    /// Everything of `record` but its arguments, from the row just read.
    fn fill(&self, record: &mut TraceRecord) -> Result<(), String> {
        let columns = self.columns;
        let Some(command) = self.row.get(columns.command) else {
            return Err(format!(
                "expected at least {} fields, up to the command; found {}",
                columns.command + 1,
                self.row.len()
            ));
        };
        if command.trim_ascii().is_empty() {
            return Err("the command field is empty".into());
        }
        record.at_us = parse_time(self.row.get(columns.time).unwrap_or_default())?;
        record.db = match columns.db.and_then(|i| self.row.get(i)) {
            None => None,
            Some(db) if db.trim_ascii().is_empty() => None,
            Some(db) => Some(
                std::str::from_utf8(db.trim_ascii())
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| {
                        format!("db '{}' is not a number from 0 to {}", quoted(db), u32::MAX)
                    })?,
            ),
        };
        record.client.clear();
        if let Some(client) = columns.client.and_then(|i| self.row.get(i)) {
            record.client.extend_from_slice(client);
        }
        Ok(())
    }

    /// Physical lines read so far, the header and any lines before it included.
    pub(super) fn lines_read(&self) -> u64 {
        // The crate's position is the line the next row starts on.
        self.header_line + self.reader.position().line() - 1
    }
}

/// The reader settings of both the header and the rows.
fn builder() -> ReaderBuilder {
    let mut builder = ReaderBuilder::new();
    builder.has_headers(false).flexible(true);
    builder
}

/// Where the bytes read so far stand in CSV's quoting, as the `csv` crate reads it
/// (a quote opens a quoted field only at a field's start; `""` inside is a quote).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quoting {
    FieldStart,
    Unquoted,
    Quoted,
    /// A quote inside a quoted field: the field's end, or the first of `""`.
    QuoteInQuoted,
}

/// The trace's input, passed through while following its rows: each row's first byte and
/// line (the crate's own position of a row is where the previous one ended, which after
/// a CRLF or blank lines is a line early), and each row's length, so a row over the cap
/// ends the read instead of growing the crate's buffer without bound.
#[derive(Debug)]
struct Capped<R> {
    input: R,
    max_row_bytes: usize,
    state: Quoting,
    /// Bytes of the current row so far; zero between rows.
    row_bytes: usize,
    /// Bytes passed on so far.
    offset: u64,
    /// The line the next byte is on, and the line the current row started on.
    line: u64,
    row_line: u64,
    /// Where rows start (byte offset, line) that the crate has not returned yet; as long
    /// as what the crate reads ahead.
    row_starts: VecDeque<(u64, u64)>,
    /// The line of the row that went over the cap, once one has.
    over: Option<u64>,
    /// The lines of rows whose quoted field ran past their line's end (closed there),
    /// that the crate has not returned yet.
    spanning: VecDeque<u64>,
}

impl<R> Capped<R> {
    /// Whether the row at `line` had a quoted field closed at its line's end; forgets the
    /// rows before it.
    fn spanned(&mut self, line: u64) -> bool {
        while self.spanning.front().is_some_and(|&l| l < line) {
            self.spanning.pop_front();
        }
        if self.spanning.front() == Some(&line) {
            self.spanning.pop_front();
            return true;
        }
        false
    }

    /// The line where the row the crate read from `byte` on starts, and forgets the rows
    /// before it.
    fn row_line(&mut self, byte: u64) -> Option<u64> {
        while let Some(&(start, line)) = self.row_starts.front() {
            self.row_starts.pop_front();
            if start >= byte {
                return Some(line);
            }
        }
        None
    }
}

impl<R: BufRead> Capped<R> {
    /// Follows one byte handed on at `at` within this read: the quoting, the row's start
    /// and length, the line. `true` when the row went over the cap with it.
    fn step(&mut self, b: u8, at: usize) -> bool {
        let ends_row = match (self.state, b) {
            (Quoting::Quoted, b'"') => {
                self.state = Quoting::QuoteInQuoted;
                false
            }
            (Quoting::Quoted, _) => false,
            (Quoting::QuoteInQuoted, b'"') => {
                self.state = Quoting::Quoted;
                false
            }
            (Quoting::FieldStart, b'"') => {
                self.state = Quoting::Quoted;
                false
            }
            (_, b',') => {
                self.state = Quoting::FieldStart;
                false
            }
            (_, b'\n' | b'\r') => {
                self.state = Quoting::FieldStart;
                true
            }
            _ => {
                self.state = Quoting::Unquoted;
                false
            }
        };
        if ends_row {
            self.row_bytes = 0;
        } else {
            if self.row_bytes == 0 {
                self.row_line = self.line;
                self.row_starts
                    .push_back((self.offset + at as u64, self.line));
            }
            self.row_bytes += 1;
            if self.row_bytes > self.max_row_bytes {
                self.over = Some(self.row_line);
                return true;
            }
        }
        if b == b'\n' {
            self.line += 1;
        }
        false
    }
}

impl<R: BufRead> Read for Capped<R> {
    /// Hands on what the input holds, followed byte by byte. A quoted field still open at
    /// its line's end is closed there with a quote of ours, its row noted in `spanning`:
    /// a row is a line, and such a field would otherwise take in the rest of the trace.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.over.is_some() {
            return Err(io::Error::other("a CSV row is over the cap"));
        }
        let chunk = self.input.fill_buf()?;
        let n = chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        for (i, byte) in buf[..n].iter_mut().enumerate() {
            let closes = self.state == Quoting::Quoted && matches!(*byte, b'\n' | b'\r');
            if closes {
                self.spanning.push_back(self.row_line);
                *byte = b'"';
            }
            if self.step(*byte, i) {
                // Hand over the rows before this one; the next read reports it.
                self.input.consume(i);
                self.offset += i as u64;
                return if i > 0 {
                    Ok(i)
                } else {
                    Err(io::Error::other("a CSV row is over the cap"))
                };
            }
            if closes {
                // The line's end stays in the input, to end the row at the next read.
                self.input.consume(i);
                self.offset += i as u64 + 1;
                return Ok(i + 1);
            }
        }
        self.input.consume(n);
        self.offset += n as u64;
        Ok(n)
    }
}
