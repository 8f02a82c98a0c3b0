//! The RESP token reader shared by the framer and the tree parser: strict syntax
//! of every type byte ([`FrameKind`]), length line, line and blob, and the per-value
//! limits ([`Limits`]).

use std::ops::Range;

use super::DecodeError;

/// Bounds that keep a hostile or corrupt peer from exhausting memory or stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest bulk, blob error or verbatim payload accepted, in bytes. A whole reply
    /// (an aggregate and all it holds) may be at most this plus `max_line_bytes` (room for
    /// the framing around one largest bulk), so no reply can grow the buffer past it.
    pub max_bulk_bytes: u64,
    /// Deepest nesting of aggregates (arrays, maps, sets, pushes, attributes) accepted.
    pub max_depth: usize,
    /// Longest line (simple string, error, number) accepted without its CRLF, in bytes.
    pub max_line_bytes: usize,
    /// Largest element count of one aggregate (pairs, for maps and attributes).
    pub max_elements: u64,
}

impl Default for Limits {
    /// 512 MiB bulks (Redis' default `proto-max-bulk-len`), depth 512, 64 KiB lines, 2^32 elements.
    fn default() -> Self {
        Self {
            max_bulk_bytes: 512 * 1024 * 1024,
            max_depth: 512,
            max_line_bytes: 64 * 1024,
            max_elements: 1 << 32,
        }
    }
}

/// The RESP type of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// `+` simple string.
    Simple,
    /// `-` simple error.
    Error,
    /// `:` integer.
    Integer,
    /// `$` bulk string.
    Bulk,
    /// `_`, `$-1` or `*-1`: null.
    Null,
    /// `*` array.
    Array,
    /// `%` map.
    Map,
    /// `~` set.
    Set,
    /// `>` out-of-band push.
    Push,
    /// `,` double.
    Double,
    /// `#` boolean.
    Boolean,
    /// `(` big number.
    BigNumber,
    /// `=` verbatim string.
    Verbatim,
    /// `!` blob error.
    BulkError,
}

/// One value header (or whole scalar) read by [`read_token`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    /// A complete non-aggregate value; `body` is its line content or blob payload.
    Scalar {
        /// Its kind (`Null` for `_`, `$-1` and `*-1`).
        kind: FrameKind,
        /// Where its content lies in the buffer.
        body: Range<usize>,
    },
    /// An aggregate header announcing `elements` child values (a map's pairs count twice).
    Aggregate {
        /// `Array`, `Map`, `Set` or `Push`.
        kind: FrameKind,
        /// Number of child values that follow.
        elements: u64,
    },
    /// An attribute header: `elements` child values, then the value it annotates.
    Attribute {
        /// Number of child values (twice the pairs) before the annotated value.
        elements: u64,
    },
}

/// Reads the value header at `pos`, or the whole value for scalars.
///
/// `depth` is the number of aggregates already open around it, for the depth limit.
/// Returns the token and the offset just past what it consumed, or `None` if more
/// bytes are needed.
#[inline]
pub(super) fn read_token(
    buf: &[u8],
    pos: usize,
    limits: &Limits,
    depth: usize,
) -> Result<Option<(Token, usize)>, DecodeError> {
    let Some(&type_byte) = buf.get(pos) else {
        return Ok(None);
    };
    let start = pos + 1;
    let kind = match type_byte {
        b'+' => FrameKind::Simple,
        b'-' => FrameKind::Error,
        b':' => FrameKind::Integer,
        b'_' => FrameKind::Null,
        b',' => FrameKind::Double,
        b'#' => FrameKind::Boolean,
        b'(' => FrameKind::BigNumber,
        b'$' => return read_blob(buf, pos, limits, FrameKind::Bulk),
        b'!' => return read_blob(buf, pos, limits, FrameKind::BulkError),
        b'=' => return read_blob(buf, pos, limits, FrameKind::Verbatim),
        b'*' => return read_aggregate(buf, pos, limits, depth, FrameKind::Array),
        b'%' => return read_aggregate(buf, pos, limits, depth, FrameKind::Map),
        b'~' => return read_aggregate(buf, pos, limits, depth, FrameKind::Set),
        b'>' => return read_aggregate(buf, pos, limits, depth, FrameKind::Push),
        // An attribute is framed like a map; only what follows it differs.
        b'|' => return read_aggregate(buf, pos, limits, depth, FrameKind::Map),
        _ => return Err(bad(buf, pos, "not a RESP type byte")),
    };
    let Some((end, next)) = read_line(buf, start, limits)? else {
        return Ok(None);
    };
    let body = buf.get(start..end).unwrap_or_default();
    // Cheap syntax checks only; numeric range and doubles are checked by the tree
    // parser, which is the only consumer of their values.
    match kind {
        FrameKind::Integer | FrameKind::BigNumber => check_integer(buf, start, body)?,
        FrameKind::Null if !body.is_empty() => {
            return Err(bad(buf, start, "null must be `_` followed by CRLF"));
        }
        FrameKind::Boolean if body != b"t" && body != b"f" => {
            return Err(bad(buf, start, "boolean must be `#t` or `#f`"));
        }
        _ => {}
    }
    Ok(Some((
        Token::Scalar {
            kind,
            body: start..end,
        },
        next,
    )))
}

/// Reads a length-prefixed value (`$`, `!`, `=`) at `pos`, payload included.
fn read_blob(
    buf: &[u8],
    pos: usize,
    limits: &Limits,
    kind: FrameKind,
) -> Result<Option<(Token, usize)>, DecodeError> {
    let allow_null = kind == FrameKind::Bulk;
    let Some((len, start)) = read_len(buf, pos, allow_null, limits.max_bulk_bytes, false)? else {
        return Ok(None);
    };
    let Some(len) = len else {
        let null = Token::Scalar {
            kind: FrameKind::Null,
            body: start..start,
        };
        return Ok(Some((null, start)));
    };
    let too_large = || DecodeError::BulkTooLarge {
        offset: pos,
        len,
        limit: limits.max_bulk_bytes,
    };
    let end = usize::try_from(len)
        .ok()
        .and_then(|len| start.checked_add(len))
        .ok_or_else(too_large)?;
    // Check the terminator as soon as each byte of it arrives, so a desynced
    // stream is caught without waiting for bytes that may never come.
    match buf.get(end) {
        None => return Ok(None),
        Some(b'\r') => {}
        Some(_) => return Err(bad(buf, end, "expected CRLF after the bulk payload")),
    }
    match buf.get(end + 1) {
        None => return Ok(None),
        Some(b'\n') => {}
        Some(_) => return Err(bad(buf, end + 1, "expected LF after CR")),
    }
    if kind == FrameKind::Verbatim && (len < 4 || buf.get(start + 3) != Some(&b':')) {
        return Err(bad(
            buf,
            start,
            "verbatim string must start with a 3-byte format and `:`",
        ));
    }
    Ok(Some((
        Token::Scalar {
            kind,
            body: start..end,
        },
        end + 2,
    )))
}

/// Reads an aggregate header (`*`, `%`, `~`, `>`, `|`) at `pos`.
fn read_aggregate(
    buf: &[u8],
    pos: usize,
    limits: &Limits,
    depth: usize,
    kind: FrameKind,
) -> Result<Option<(Token, usize)>, DecodeError> {
    let allow_null = kind == FrameKind::Array;
    let Some((count, next)) = read_len(buf, pos, allow_null, limits.max_elements, true)? else {
        return Ok(None);
    };
    let Some(count) = count else {
        let null = Token::Scalar {
            kind: FrameKind::Null,
            body: next..next,
        };
        return Ok(Some((null, next)));
    };
    if depth >= limits.max_depth {
        return Err(DecodeError::TooDeep {
            offset: pos,
            depth: depth.saturating_add(1),
            limit: limits.max_depth,
        });
    }
    let is_attribute = buf.get(pos) == Some(&b'|');
    let elements = if kind == FrameKind::Map {
        // Each pair is two values; `count` is within the limit, so only an absurd
        // configured limit could overflow here.
        count.checked_mul(2).ok_or(DecodeError::TooManyElements {
            offset: pos,
            count,
            limit: limits.max_elements,
        })?
    } else {
        count
    };
    let token = if is_attribute {
        Token::Attribute { elements }
    } else {
        Token::Aggregate { kind, elements }
    };
    Ok(Some((token, next)))
}

/// Reads the strict length line after the type byte at `pos`: decimal digits with
/// no sign or leading zero, or exactly `-1` when `allow_null` (returned as `None`),
/// then CRLF. Errors as soon as the digits exceed `limit`, without waiting for the
/// rest of the line or the payload.
fn read_len(
    buf: &[u8],
    pos: usize,
    allow_null: bool,
    limit: u64,
    is_count: bool,
) -> Result<Option<(Option<u64>, usize)>, DecodeError> {
    let start = pos + 1;
    let over = |n: u64| {
        if is_count {
            DecodeError::TooManyElements {
                offset: pos,
                count: n,
                limit,
            }
        } else {
            DecodeError::BulkTooLarge {
                offset: pos,
                len: n,
                limit,
            }
        }
    };
    if buf.get(start) == Some(&b'-') {
        if !allow_null {
            return Err(bad(buf, start, "negative length"));
        }
        return match buf.get(start + 1) {
            None => Ok(None),
            Some(b'1') => Ok(expect_crlf(buf, start + 2)?.map(|next| (None, next))),
            Some(_) => Err(bad(buf, start + 1, "negative length other than -1")),
        };
    }
    let mut n: u64 = 0;
    let mut i = start;
    loop {
        match buf.get(i) {
            None => {
                return if n > limit { Err(over(n)) } else { Ok(None) };
            }
            Some(&digit @ b'0'..=b'9') => {
                if i > start && buf.get(start) == Some(&b'0') {
                    return Err(bad(buf, i, "leading zero in length"));
                }
                // Overflow means the length is absurd, not malformed.
                n = n
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(u64::from(digit - b'0')))
                    .ok_or_else(|| over(u64::MAX))?;
                i += 1;
            }
            Some(b'\r') if i > start => {
                if n > limit {
                    return Err(over(n));
                }
                return Ok(expect_crlf(buf, i)?.map(|next| (Some(n), next)));
            }
            Some(b'\r') => return Err(bad(buf, i, "empty length")),
            Some(_) => return Err(bad(buf, i, "length must be decimal digits then CRLF")),
        }
    }
}

/// Expects CRLF at `at`; returns the offset after it, or `None` if not yet buffered.
fn expect_crlf(buf: &[u8], at: usize) -> Result<Option<usize>, DecodeError> {
    match buf.get(at) {
        None => return Ok(None),
        Some(b'\r') => {}
        Some(_) => return Err(bad(buf, at, "expected CRLF")),
    }
    match buf.get(at + 1) {
        None => Ok(None),
        Some(b'\n') => Ok(Some(at + 2)),
        Some(_) => Err(bad(buf, at + 1, "expected LF after CR")),
    }
}

/// Finds the CRLF ending the line whose content starts at `start`; returns the
/// content's end and the offset after the CRLF, or `None` if not yet buffered.
fn read_line(
    buf: &[u8],
    start: usize,
    limits: &Limits,
) -> Result<Option<(usize, usize)>, DecodeError> {
    // Look one byte past the limit: a CR there still ends a line of exactly the limit.
    let window_end = buf.len().min(
        start
            .saturating_add(limits.max_line_bytes)
            .saturating_add(1),
    );
    let window = buf.get(start..window_end).unwrap_or_default();
    match window.iter().position(|&b| b == b'\r' || b == b'\n') {
        Some(i) if window.get(i) == Some(&b'\n') => Err(bad(
            buf,
            start + i,
            "bare LF in a line; lines end with CRLF",
        )),
        Some(i) => Ok(expect_crlf(buf, start + i)?.map(|next| (start + i, next))),
        None if buf.len().saturating_sub(start) > limits.max_line_bytes => {
            Err(DecodeError::LineTooLong {
                offset: start,
                limit: limits.max_line_bytes,
            })
        }
        None => Ok(None),
    }
}

/// Checks `[+-]digits`, the syntax of integers and big numbers.
fn check_integer(buf: &[u8], start: usize, body: &[u8]) -> Result<(), DecodeError> {
    let signed = matches!(body.first(), Some(b'+' | b'-'));
    let digits_start = usize::from(signed);
    let digits = body.get(digits_start..).unwrap_or_default();
    if digits.is_empty() {
        return Err(bad(buf, start + body.len(), "number has no digits"));
    }
    match digits.iter().position(|b| !b.is_ascii_digit()) {
        Some(i) => Err(bad(
            buf,
            start + digits_start + i,
            "number must be an optional sign then decimal digits",
        )),
        None => Ok(()),
    }
}

/// Builds a protocol error pointing at `buf[offset]` (0 when past the end).
pub(super) fn bad(buf: &[u8], offset: usize, reason: &'static str) -> DecodeError {
    DecodeError::Protocol {
        offset,
        byte: buf.get(offset).copied().unwrap_or(0),
        reason,
    }
}

#[cfg(test)]
mod tests;
