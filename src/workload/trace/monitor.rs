//! One line of `redis-cli MONITOR` output to a [`TraceRecord`]:
//! `1733400000.123456 [0 127.0.0.1:54321] "SET" "key:1" "va\"lue"`.
//!
//! Each argument is quoted as Redis's `sdscatrepr` writes it: `\\`, `\"`, `\n`, `\r`,
//! `\t`, `\a`, `\b`, and `\xHH` for any other byte that is not printable. The unquoting is
//! written here rather than borrowed: it is small, it runs for every byte of a file that
//! may be gigabytes long, and it writes straight into the record's reused buffers. Which
//! lines to skip (`OK`, empty ones) is `mod.rs`'s business.

use super::{MAX_ARGS, TraceRecord, finish_args, next_arg, parse_seconds_exact, quoted};

/// Whether `line` opens as MONITOR output does: digits, `.`, digits, then ` [`.
pub(super) fn looks_like_monitor(line: &[u8]) -> bool {
    let digits = |from: usize| {
        line[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let whole = digits(0);
    if whole == 0 || line.get(whole) != Some(&b'.') {
        return false;
    }
    let frac = digits(whole + 1);
    frac > 0 && line[whole + 1 + frac..].starts_with(b" [")
}

/// Parses `line` (without its line ending) into `record`, reusing its buffers; on error,
/// says what was expected and leaves `record` to be overwritten by the next line.
pub(super) fn parse_line(
    line: &[u8],
    record: &mut TraceRecord,
    spare: &mut Vec<Vec<u8>>,
) -> Result<(), String> {
    let line = line.trim_ascii_end();
    let space = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
    let stamp = &line[..space];
    record.at_us = parse_seconds_exact(stamp)
        .ok_or_else(|| format!("timestamp '{}' is not seconds.microseconds", quoted(stamp)))?;
    let rest = line[space..].trim_ascii_start();
    let Some(rest) = rest.strip_prefix(b"[") else {
        return Err("expected '[', the database and the client after the timestamp".into());
    };
    let db_len = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
    record.db = Some(
        std::str::from_utf8(&rest[..db_len])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                format!(
                    "database '{}' is not a number from 0 to {}",
                    quoted(&rest[..db_len]),
                    u32::MAX
                )
            })?,
    );
    let rest = rest.get(db_len + 1..).unwrap_or_default();
    // A client (a unix socket's path) may hold `]`; it ends where the first argument opens.
    let Some(end) = rest.windows(3).position(|w| w == b"] \"") else {
        return Err("expected the client, then '] ' and the quoted arguments".into());
    };
    record.client.clear();
    record.client.extend_from_slice(&rest[..end]);
    // Positions from here on are in `line`, so errors can name a column.
    let mut at = line.len() - rest.len() + end + 2;
    let mut n = 0;
    loop {
        if n == MAX_ARGS {
            return Err(format!(
                "more than {MAX_ARGS} arguments: not a command a server would take"
            ));
        }
        let slot = next_arg(record, spare, n);
        n += 1;
        at = unquote(line, at + 1, slot)?;
        // Arguments are separated by one space; more, or trailing ones, do no harm.
        while line.get(at) == Some(&b' ') {
            at += 1;
        }
        match line.get(at) {
            None => break,
            Some(b'"') => {}
            Some(_) => {
                return Err(format!(
                    "expected a space and '\"' to open the next argument at byte {}",
                    at + 1
                ));
            }
        }
    }
    finish_args(record, spare, n);
    Ok(())
}

/// Unquotes the argument whose text starts at `from` (just past its opening quote) into
/// `out`; returns the position just past its closing quote.
fn unquote(line: &[u8], mut from: usize, out: &mut Vec<u8>) -> Result<usize, String> {
    let never_closes = || "an argument opens with '\"' but never closes".to_string();
    loop {
        // Copy the run up to the next quote or backslash in one go: most bytes are plain.
        let tail = line.get(from..).unwrap_or_default();
        let Some(run) = tail.iter().position(|&b| b == b'"' || b == b'\\') else {
            return Err(never_closes());
        };
        out.extend_from_slice(&tail[..run]);
        let at = from + run;
        if line[at] == b'"' {
            return Ok(at + 1);
        }
        let Some(&escaped) = line.get(at + 1) else {
            return Err(never_closes());
        };
        let byte = match escaped {
            b'\\' => b'\\',
            b'"' => b'"',
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'a' => 0x07,
            b'b' => 0x08,
            b'x' => {
                let hex = |i: usize| line.get(i).and_then(|&h| (h as char).to_digit(16));
                match (hex(at + 2), hex(at + 3)) {
                    (Some(hi), Some(lo)) => {
                        out.push((hi * 16 + lo) as u8);
                        from = at + 4;
                        continue;
                    }
                    _ => {
                        return Err(format!("\\x escape needs two hex digits (byte {})", at + 1));
                    }
                }
            }
            other => {
                return Err(format!(
                    "unknown escape '\\{}' (byte {}); MONITOR writes \\\\ \\\" \\n \\r \\t \
                     \\a \\b and \\xHH",
                    quoted(&[other]),
                    at + 1
                ));
            }
        };
        out.push(byte);
        from = at + 2;
    }
}
