//! Reading a trace a line at a time into one reused buffer, never holding more than the
//! cap: a longer line is skipped up to its newline and reported, not allocated. What a
//! line means is the formats' business; which lines to skip is `mod.rs`'s.

use std::io::{self, BufRead, Read};

/// A MONITOR or JSON-lines trace, read a line at a time into one buffer.
#[derive(Debug)]
pub(super) struct LineSource<R> {
    pub(super) input: R,
    pub(super) buf: Vec<u8>,
    /// Physical lines read so far; the number of the line in `buf`.
    pub(super) lines_read: u64,
    /// `buf` holds a line read (to detect the format) but not yet parsed.
    pub(super) pending: bool,
    /// The longest line accepted (a field so tests can lower it).
    pub(super) max_line_bytes: usize,
}

/// What one read of a line found.
pub(super) enum Line {
    /// A line is in the buffer, without its line ending.
    Read,
    /// The line was longer than the cap; it was skipped up to and including its newline.
    TooLong,
    /// The input is finished.
    End,
}

impl<R: BufRead> LineSource<R> {
    /// Reads the next physical line into `buf`, never holding more than the cap.
    pub(super) fn read_line(&mut self) -> io::Result<Line> {
        self.buf.clear();
        // One byte over the cap tells a line of exactly the cap from a longer one.
        let limit = self.max_line_bytes as u64 + 1;
        let n = (&mut self.input)
            .take(limit)
            .read_until(b'\n', &mut self.buf)?;
        if n == 0 {
            return Ok(Line::End);
        }
        self.lines_read += 1;
        if self.buf.last() != Some(&b'\n') && self.buf.len() > self.max_line_bytes {
            skip_past_newline(&mut self.input)?;
            // Give back the long line's memory rather than keep it for the whole run.
            self.buf.clear();
            self.buf.shrink_to(64 * 1024);
            return Ok(Line::TooLong);
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(Line::Read)
    }
}

/// Consumes input up to and including the next newline, without keeping it.
fn skip_past_newline<R: BufRead>(input: &mut R) -> io::Result<()> {
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(());
        }
        match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = chunk.len();
                input.consume(n);
            }
        }
    }
}
