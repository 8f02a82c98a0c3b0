//! Framing of server replies, the hot path: deciding without allocation whether a
//! whole RESP2/RESP3 reply is buffered, how long it is, and what kind it is.
//!
//! The token reader it runs on, in `token/`, is shared with the tree parser, so
//! both agree byte for byte on what is valid. [`Framer::resume`] frames a lone simple
//! string, integer or bulk string through a hand-written shortcut; [`frame`] never does,
//! so the tests and the fuzz target check the one against the other.

use super::DecodeError;
use super::token::{FrameKind, Limits, Token, read_token};

/// A complete reply at the start of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Total length in bytes, including any leading attribute and the final CRLF.
    pub len: usize,
    /// Kind of the top-level reply (of the reply after the attribute, if any).
    pub kind: FrameKind,
}

/// Checks whether one whole reply is buffered at the start of `buf`.
///
/// `Ok(None)`: incomplete, read more. `Ok(Some(frame))`: the reply's length and kind.
/// `Err`: the bytes can never be valid RESP. Runs in a loop with an explicit stack
/// of "elements remaining" counters, so hostile nesting cannot overflow the call
/// stack, and it does not allocate unless aggregates nest deeper than 64.
pub fn frame(buf: &[u8], limits: &Limits) -> Result<Option<Frame>, DecodeError> {
    Ok(scan(buf, limits)?.map(|(frame, _)| frame))
}

/// For an error or blob error frame, the error's first word (`ERR`, `WRONGTYPE`,
/// `MOVED`...) as a subslice; empty for any other frame.
pub fn error_kind(frame_bytes: &[u8]) -> &[u8] {
    // An attribute may precede the error; skipping it needs the framer, which does
    // not allocate at the shallow depths a real attribute has.
    let start = if frame_bytes.first() == Some(&b'|') {
        match scan(frame_bytes, &Limits::default()) {
            Ok(Some((_, value_start))) => value_start,
            _ => return &[],
        }
    } else {
        0
    };
    let reply = frame_bytes.get(start..).unwrap_or_default();
    let message = match reply.first() {
        Some(b'-') => reply.get(1..).unwrap_or_default(),
        Some(b'!') => match reply.iter().position(|&b| b == b'\n') {
            Some(lf) => reply.get(lf + 1..).unwrap_or_default(),
            None => return &[],
        },
        _ => return &[],
    };
    let end = message
        .iter()
        .position(|&b| b == b' ' || b == b'\r' || b == b'\n')
        .unwrap_or(message.len());
    message.get(..end).unwrap_or_default()
}

/// Frames one reply from the start of `buf` (see [`Framer::scan`]).
fn scan(buf: &[u8], limits: &Limits) -> Result<Option<(Frame, usize)>, DecodeError> {
    Framer::new().scan(buf, limits)
}

/// A framer that remembers how far it got, so a reply arriving in many reads is
/// tokenized once, not once per read: re-framing from the start after every read
/// costs time quadratic in the reply's length, which a hostile server (or a reply of
/// millions of small values) turns into minutes of CPU.
///
/// Feed it the same buffer, only ever appended to, until it returns a frame or an
/// error; it then starts over for the next reply (at the start of the buffer, so the
/// caller must drop the framed bytes first). [`frame`] is `Framer::new().resume(..)`.
#[derive(Debug, Clone)]
pub struct Framer {
    /// Where the next token starts.
    pos: usize,
    /// Elements still owed by each open aggregate.
    open: Remaining,
    /// Values still owed at the top level: one, plus one per top-level attribute.
    top_remaining: u64,
    /// Kind of the top-level value seen so far.
    kind: FrameKind,
    /// Where the top-level value (after any attributes) starts.
    value_start: usize,
}

impl Default for Framer {
    fn default() -> Self {
        Self::new()
    }
}

impl Framer {
    /// A framer at the start of a reply.
    pub fn new() -> Self {
        Framer {
            pos: 0,
            open: Remaining::new(),
            top_remaining: 1,
            kind: FrameKind::Null,
            value_start: 0,
        }
    }

    /// Like [`frame`] on `buf`, continuing from where the last call on this reply stopped.
    /// `buf` must start with the bytes given to the previous calls, unchanged.
    #[inline]
    pub fn resume(&mut self, buf: &[u8], limits: &Limits) -> Result<Option<Frame>, DecodeError> {
        // Most replies are one whole `+`, `:` or `$` scalar: frame those inline, by a
        // shortcut far cheaper than the general path, which would be a sizeable part of a
        // pipelined run's user CPU (see bench/). Anything else, incomplete or invalid goes
        // the general way.
        if self.pos == 0
            && self.top_remaining == 1
            && let Some(frame) = common_scalar(buf, limits)
        {
            return Ok(Some(frame));
        }
        self.resume_general(buf, limits)
    }

    /// Frames a run of whole simple strings, integers and bulk strings (nulls included) at
    /// the start of `buf`, at most `max` of them, through the shortcut alone, and returns
    /// how many and their total length: what that many calls of [`resume`](Self::resume)
    /// would frame, none of it an error. It stops at the first reply the shortcut does not
    /// take (another type, incomplete, invalid, over a limit), for `resume` to frame, and
    /// takes nothing while a reply is half framed. Hand-written for speed: this is the
    /// per-reply path of a pipelined run, and it keeps no state per reply, which makes it
    /// cheaper than a call of `resume` per reply (see bench/).
    ///
    /// A reply byte for byte like the run's first is taken by comparing the two, not by
    /// framing it again: framing a scalar reads its own bytes and nothing else, so equal
    /// bytes frame equally. Every reply to a fixed request (a `GET` of one key, a `SET`)
    /// is such a copy, and all the copies buffered behind the first are compared in one
    /// go, cheaper than one by one (see bench/).
    ///
    /// Also returns which of the first 64 replies are nulls (`$-1`): bit `i` for reply
    /// `i`, so that a caller counting a read's misses need not look at each reply again.
    #[inline]
    pub fn scalar_run(&self, buf: &[u8], max: usize, limits: &Limits) -> (usize, usize, u64) {
        if self.pos != 0 || self.top_remaining != 1 {
            return (0, 0, 0);
        }
        let (mut n, mut len, mut nulls) = (0, 0, 0u64);
        // The run's first reply, while the replies after it are copies of it, and whether
        // it is a null.
        let mut first: Option<&[u8]> = None;
        let mut first_null = false;
        while n < max {
            if let Some(copy_of) = first {
                match buf.get(len..len + copy_of.len()) {
                    Some(next) if same_bytes(next, copy_of) => {
                        if first_null {
                            nulls |= bits(n, 1);
                        }
                        len += copy_of.len();
                        n += 1;
                        continue;
                    }
                    // Unlike: frame this one, and stop comparing (the replies vary).
                    _ => first = None,
                }
            }
            let Some(frame) = buf.get(len..).and_then(|rest| common_scalar(rest, limits)) else {
                break;
            };
            let null = frame.kind == FrameKind::Null;
            if null {
                nulls |= bits(n, 1);
            }
            len += frame.len;
            n += 1;
            if n == 1 {
                first = buf.get(..frame.len);
                first_null = null;
                // Every whole copy buffered after the first at once: when each byte equals
                // the one a reply length before it, each reply equals the one before it.
                // One `memcmp` of the run instead of a compare per reply; on a mismatch the
                // replies are taken one by one below.
                // (Most often the buffer holds them all, and no division is needed.)
                let copies = match max {
                    0..=2 => 0,
                    _ if buf.len() >= len.saturating_mul(max) => max - 1,
                    _ => (buf.len() - len) / len,
                };
                if copies > 1 && buf[len..len * (copies + 1)] == buf[..len * copies] {
                    if null {
                        nulls |= bits(1, copies);
                    }
                    n += copies;
                    len *= copies + 1;
                }
            }
        }
        (n, len, nulls)
    }

    /// [`resume`](Self::resume) for every reply the shortcut does not take; kept out of
    /// line so that the shortcut inlines into its caller.
    #[inline(never)]
    fn resume_general(
        &mut self,
        buf: &[u8],
        limits: &Limits,
    ) -> Result<Option<Frame>, DecodeError> {
        Ok(self.scan(buf, limits)?.map(|(frame, _)| frame))
    }

    /// Frames one reply and also returns the offset where the top-level value starts
    /// (after any attributes), which `error_kind` needs. Resets after a frame or an error.
    fn scan(&mut self, buf: &[u8], limits: &Limits) -> Result<Option<(Frame, usize)>, DecodeError> {
        let result = self.advance(buf, limits);
        if !matches!(result, Ok(None)) {
            self.reset();
        }
        result
    }

    /// Back to the start of a reply, keeping any spilled stack's memory.
    fn reset(&mut self) {
        self.pos = 0;
        self.open.len = 0;
        self.open.spill.clear();
        self.top_remaining = 1;
        self.kind = FrameKind::Null;
        self.value_start = 0;
    }

    /// Reads tokens from where the last call stopped until the reply completes, more
    /// bytes are needed (the position is kept), or the bytes prove invalid.
    fn advance(
        &mut self,
        buf: &[u8],
        limits: &Limits,
    ) -> Result<Option<(Frame, usize)>, DecodeError> {
        // Every other limit bounds one value; this bounds the reply, so an aggregate that
        // announces billions of elements and streams small ones cannot grow the buffer
        // without bound.
        let max_reply = limits
            .max_bulk_bytes
            .saturating_add(limits.max_line_bytes as u64);
        let too_large = |len: usize| DecodeError::ReplyTooLarge {
            offset: 0,
            len: len as u64,
            limit: max_reply,
        };
        let Framer {
            pos,
            open,
            top_remaining,
            kind,
            value_start,
        } = self;
        loop {
            let Some((token, next)) = read_token(buf, *pos, limits, open.depth())? else {
                // Incomplete: everything buffered belongs to this one reply.
                if buf.len() as u64 > max_reply {
                    return Err(too_large(buf.len()));
                }
                return Ok(None);
            };
            // The top-level kind is that of the first root value that is not an attribute.
            match token {
                Token::Scalar { kind: k, .. } | Token::Aggregate { kind: k, .. }
                    if open.depth() == 0 =>
                {
                    *kind = k;
                    *value_start = *pos;
                }
                _ => {}
            }
            *pos = next;
            match token {
                Token::Scalar { .. } => {}
                Token::Aggregate { elements, .. } => {
                    if elements > 0 {
                        open.push(elements);
                        continue;
                    }
                }
                Token::Attribute { elements } => {
                    // The attribute is counted as one value of its parent when it
                    // completes, so the parent owes one more: the annotated value.
                    match open.top_mut() {
                        Some(remaining) => *remaining = remaining.saturating_add(1),
                        None => *top_remaining += 1,
                    }
                    if elements > 0 {
                        open.push(elements);
                        continue;
                    }
                }
            }
            // A value just completed; it may complete the aggregates around it too.
            loop {
                match open.top_mut() {
                    None => {
                        *top_remaining -= 1;
                        if *top_remaining == 0 {
                            if *pos as u64 > max_reply {
                                return Err(too_large(*pos));
                            }
                            return Ok(Some((
                                Frame {
                                    len: *pos,
                                    kind: *kind,
                                },
                                *value_start,
                            )));
                        }
                        break;
                    }
                    Some(remaining) => {
                        *remaining -= 1;
                        if *remaining > 0 {
                            break;
                        }
                        open.pop();
                    }
                }
            }
        }
    }
}

/// Frames a whole simple string, integer or bulk string (null included) at the start of
/// `buf` exactly as [`Framer::advance`] would; `None` for any other type, and for anything
/// incomplete, invalid or over a limit, all of which `advance` then handles. Hand-written
/// for speed: it runs once per reply, and is always inlined (as a call, its register saves
/// and restores cost as much as its work).
#[inline(always)]
fn common_scalar(buf: &[u8], limits: &Limits) -> Option<Frame> {
    let frame = match buf {
        // The commonest replies of all first: `+OK`, and a bulk string under ten bytes long.
        [b'+', b'O', b'K', b'\r', b'\n', ..] if limits.max_line_bytes >= 2 => Frame {
            len: 5,
            kind: FrameKind::Simple,
        },
        &[b'$', digit @ b'0'..=b'9', b'\r', b'\n', ..] => {
            let len = usize::from(digit - b'0');
            if len as u64 > limits.max_bulk_bytes || !crlf_at(buf, 4 + len) {
                return None;
            }
            Frame {
                len: 6 + len,
                kind: FrameKind::Bulk,
            }
        }
        &[type_byte @ (b'+' | b':'), ref rest @ ..] => {
            // The line ends at the first CR or LF within the line limit; it must be CRLF.
            let window = rest.get(..rest.len().min(limits.max_line_bytes.saturating_add(1)))?;
            let end = window.iter().position(|&b| b == b'\r' || b == b'\n')?;
            if !crlf_at(rest, end) {
                return None;
            }
            let body = &rest[..end];
            if type_byte == b':' {
                let digits = body
                    .strip_prefix(b"-")
                    .or_else(|| body.strip_prefix(b"+"))
                    .unwrap_or(body);
                if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                    return None;
                }
            }
            let kind = if type_byte == b'+' {
                FrameKind::Simple
            } else {
                FrameKind::Integer
            };
            Frame { len: end + 3, kind }
        }
        [b'$', rest @ ..] if rest.starts_with(b"-1\r\n") => Frame {
            len: 5,
            kind: FrameKind::Null,
        },
        [b'$', rest @ ..] => {
            // Decimal digits without a leading zero (18 at most: no overflow), then CRLF.
            let (mut len, mut digits) = (0u64, 0usize);
            while let Some(&digit @ b'0'..=b'9') = rest.get(digits) {
                if digits == 18 {
                    return None;
                }
                len = len * 10 + u64::from(digit - b'0');
                digits += 1;
            }
            if digits == 0
                || (digits > 1 && rest[0] == b'0')
                || len > limits.max_bulk_bytes
                || !crlf_at(rest, digits)
            {
                return None;
            }
            let end = 1 + digits + 2 + usize::try_from(len).ok()?;
            if !crlf_at(buf, end) {
                return None;
            }
            Frame {
                len: end + 2,
                kind: FrameKind::Bulk,
            }
        }
        _ => return None,
    };
    (frame.len as u64
        <= limits
            .max_bulk_bytes
            .saturating_add(limits.max_line_bytes as u64))
    .then_some(frame)
}

/// The mask of bits `from..from + count`, those past 63 left out.
#[inline(always)]
fn bits(from: usize, count: usize) -> u64 {
    let ones = if count >= 64 {
        u64::MAX
    } else {
        (1 << count) - 1
    };
    if from >= 64 { 0 } else { ones << from }
}

/// Whether `a` and `b`, of equal length, hold the same bytes. Hand-written for the
/// 4 to 16 bytes most replies take: two overlapping word compares that cover them all,
/// where a slice compare would call `memcmp`.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    fn words<const W: usize>(a: &[u8], b: &[u8]) -> Option<bool> {
        Some(
            a.first_chunk::<W>()? == b.first_chunk::<W>()?
                && a.last_chunk::<W>()? == b.last_chunk::<W>()?,
        )
    }
    let words = match a.len() {
        8..=16 => words::<8>(a, b),
        4..=7 => words::<4>(a, b),
        _ => None,
    };
    words.unwrap_or_else(|| a == b)
}

/// Whether `buf` holds CRLF at `at`.
#[inline(always)]
fn crlf_at(buf: &[u8], at: usize) -> bool {
    buf.get(at) == Some(&b'\r') && buf.get(at.wrapping_add(1)) == Some(&b'\n')
}

/// Aggregates kept inline before `Remaining` spills to the heap.
const INLINE_DEPTH: usize = 64;

/// Stack of "elements remaining" per open aggregate; the first 64 levels live in
/// an array so framing ordinary replies never allocates.
#[derive(Debug, Clone)]
struct Remaining {
    inline: [u64; INLINE_DEPTH],
    spill: Vec<u64>,
    len: usize,
}

impl Remaining {
    fn new() -> Self {
        Self {
            inline: [0; INLINE_DEPTH],
            spill: Vec::new(),
            len: 0,
        }
    }

    fn depth(&self) -> usize {
        self.len
    }

    fn push(&mut self, elements: u64) {
        if self.len < INLINE_DEPTH {
            self.inline[self.len] = elements;
        } else {
            self.spill.push(elements);
        }
        self.len += 1;
    }

    fn pop(&mut self) {
        if self.len > INLINE_DEPTH {
            self.spill.pop();
        }
        self.len = self.len.saturating_sub(1);
    }

    fn top_mut(&mut self) -> Option<&mut u64> {
        match self.len {
            0 => None,
            n if n <= INLINE_DEPTH => self.inline.get_mut(n - 1),
            _ => self.spill.last_mut(),
        }
    }
}
#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::time::{Duration, Instant};

    fn framed(bytes: &[u8]) -> Result<Option<Frame>, DecodeError> {
        frame(bytes, &Limits::default())
    }

    fn whole(bytes: &[u8], kind: FrameKind) -> Option<Frame> {
        Some(Frame {
            len: bytes.len(),
            kind,
        })
    }

    /// Valid replies of every type, with the kind each frames as.
    const VALID: &[(&[u8], FrameKind)] = &[
        (b"+OK\r\n", FrameKind::Simple),
        (b"+\r\n", FrameKind::Simple),
        (b"-ERR unknown command 'FOO'\r\n", FrameKind::Error),
        (b":0\r\n", FrameKind::Integer),
        (b":-9223372036854775808\r\n", FrameKind::Integer),
        (b":+12\r\n", FrameKind::Integer),
        (b"$5\r\nhello\r\n", FrameKind::Bulk),
        (b"$0\r\n\r\n", FrameKind::Bulk),
        (b"$4\r\n\r\n\r\n\r\n", FrameKind::Bulk),
        (b"$-1\r\n", FrameKind::Null),
        (b"*-1\r\n", FrameKind::Null),
        (b"_\r\n", FrameKind::Null),
        (b"*0\r\n", FrameKind::Array),
        (b"*2\r\n$3\r\nfoo\r\n:42\r\n", FrameKind::Array),
        (b"*2\r\n*1\r\n+a\r\n*0\r\n", FrameKind::Array),
        (b"*3\r\n$-1\r\n*-1\r\n_\r\n", FrameKind::Array),
        (b"%1\r\n+key\r\n:1\r\n", FrameKind::Map),
        (b"%2\r\n+a\r\n*2\r\n:1\r\n:2\r\n+b\r\n*1\r\n*0\r\n", FrameKind::Map),
        (b"%0\r\n", FrameKind::Map),
        (b"~2\r\n+a\r\n+b\r\n", FrameKind::Set),
        (b">3\r\n+message\r\n+chan\r\n$2\r\nhi\r\n", FrameKind::Push),
        (b",3.14\r\n", FrameKind::Double),
        (b",-inf\r\n", FrameKind::Double),
        (b"#t\r\n", FrameKind::Boolean),
        (b"#f\r\n", FrameKind::Boolean),
        (b"(3492890328409238509324850943850943825024385\r\n", FrameKind::BigNumber),
        (b"=15\r\ntxt:Some string\r\n", FrameKind::Verbatim),
        (b"!21\r\nSYNTAX invalid syntax\r\n", FrameKind::BulkError),
        (b"|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n*2\r\n:2039123\r\n:9543892\r\n", FrameKind::Array),
        (b"|0\r\n+OK\r\n", FrameKind::Simple),
        (b"|1\r\n+a\r\n+b\r\n|1\r\n+c\r\n+d\r\n-ERR x\r\n", FrameKind::Error),
        (b"*2\r\n|1\r\n+ttl\r\n:3600\r\n:1\r\n:2\r\n", FrameKind::Array),
        (b"~1\r\n|0\r\n|0\r\n_\r\n", FrameKind::Set),
    ];

    #[test]
    fn every_type_frames_with_its_exact_length_and_kind() {
        for &(bytes, kind) in VALID {
            assert_eq!(
                framed(bytes),
                Ok(whole(bytes, kind)),
                "{:?}",
                bytes.escape_ascii().to_string()
            );
        }
    }

    #[test]
    fn the_common_scalar_shortcut_agrees_with_the_general_framer() {
        let general = |bytes: &[u8], limits: &Limits| {
            let mut framer = Framer::new();
            framer
                .advance(bytes, limits)
                .map(|f| f.map(|(frame, _)| frame))
        };
        let mut inputs: Vec<Vec<u8>> = VALID.iter().map(|(b, _)| b.to_vec()).collect();
        for extra in [
            &b"$-1\r\n"[..],
            b"$0\r\n\r\n",
            b"$10\r\n0123456789\r\n",
            b"$01\r\na\r\n",
            b"$-2\r\n",
            b"$3\r\nabcX\n",
            b"$3\r\nabc\rX",
            b"$999999999999999999\r\n",
            b"$9999999999999999999\r\n",
            b":-\r\n",
            b":+5\r\n",
            b":5x\r\n",
            b":\r\n",
            b"+OK\n",
            b"+OK\r\n",
            b"$1\r\na\r\n",
            b"$5\r\nabcde\r\n",
            b"+O\rK\r\n",
            b"+\r\r\n",
            b"+OK\r",
        ] {
            inputs.push(extra.to_vec());
        }
        // Every prefix of each input, each input with a byte changed, and tight limits.
        let mut cases = Vec::new();
        for input in &inputs {
            for cut in 0..=input.len() {
                cases.push(input[..cut].to_vec());
            }
            for i in 0..input.len() {
                for b in [b'\r', b'\n', b'0', b'9', b'-', b'x'] {
                    let mut changed = input.clone();
                    changed[i] = b;
                    cases.push(changed);
                }
            }
        }
        let tight = Limits {
            max_bulk_bytes: 4,
            max_line_bytes: 3,
            ..Limits::default()
        };
        let tighter = Limits {
            max_bulk_bytes: 2,
            max_line_bytes: 1,
            ..Limits::default()
        };
        for limits in [Limits::default(), tight, tighter] {
            for case in &cases {
                if let Some(frame) = common_scalar(case, &limits) {
                    let shown = case.escape_ascii().to_string();
                    assert_eq!(
                        general(case, &limits),
                        Ok(Some(frame)),
                        "{shown} with {limits:?}"
                    );
                }
            }
        }
        // The shortcut does take the replies it is for.
        for reply in [&b"+OK\r\n"[..], b":12\r\n", b"$3\r\nabc\r\n", b"$-1\r\n"] {
            assert!(
                common_scalar(reply, &Limits::default()).is_some(),
                "{}",
                reply.escape_ascii()
            );
        }
    }

    #[test]
    fn a_scalar_run_frames_what_resume_frames_reply_by_reply() {
        let limits = Limits::default();
        // `resume` reply by reply, while each is a simple string, integer or bulk string,
        // with the nulls among them.
        let by_resume = |buf: &[u8], max: usize| {
            let (mut framer, mut taken) = (Framer::new(), (0, 0, 0u64));
            while taken.0 < max {
                match framer.resume(&buf[taken.1..], &limits) {
                    Ok(Some(f))
                        if matches!(
                            f.kind,
                            FrameKind::Simple
                                | FrameKind::Integer
                                | FrameKind::Bulk
                                | FrameKind::Null
                        ) =>
                    {
                        if f.kind == FrameKind::Null && taken.0 < 64 {
                            taken.2 |= 1 << taken.0;
                        }
                        taken = (taken.0 + 1, taken.1 + f.len, taken.2);
                    }
                    _ => break,
                }
            }
            taken
        };
        let replies: [&[u8]; 8] = [
            b"+OK\r\n",
            b"$3\r\nabc\r\n",
            b":-12\r\n",
            b"$-1\r\n",
            b"-ERR x\r\n",
            b"*1\r\n:1\r\n",
            b"$12\r\nabcdefghijkl\r\n",
            b"+\r\n",
        ];
        // Every stream of three of them, cut anywhere.
        let mut streams = Vec::new();
        for a in replies {
            for b in replies {
                streams.extend(replies.iter().map(|c| [a, b, c].concat()));
            }
        }
        for stream in streams {
            for buf in (0..=stream.len()).map(|cut| &stream[..cut]) {
                for max in 0..4 {
                    assert_eq!(
                        Framer::new().scalar_run(buf, max, &limits),
                        by_resume(buf, max),
                        "{} max {max}",
                        buf.escape_ascii()
                    );
                }
            }
        }
        // A reply like the one before it but for one byte is framed for itself, whatever the
        // byte (and lines of 7, 16 and 17 bytes: the edges of the word compares).
        let lines: [&[u8]; 3] = [b"+abcd\r\n", b"+abcdefghijklm\r\n", b"+abcdefghijklmn\r\n"];
        for reply in replies.into_iter().chain(lines) {
            for at in 0..reply.len() {
                for byte in [b'x', b'\r', b'\n', b'0', b'9', b'$', b'+'] {
                    let mut unlike = reply.to_vec();
                    unlike[at] = byte;
                    let stream = [reply, &unlike, reply].concat();
                    assert_eq!(
                        Framer::new().scalar_run(&stream, 3, &limits),
                        by_resume(&stream, 3),
                        "{}",
                        stream.escape_ascii()
                    );
                }
            }
        }
        // Long runs of copies, one of them unlike the others or cut short anywhere.
        for reply in [&b"+OK\r\n"[..], b"$3\r\nabc\r\n", b"$-1\r\n", b":7\r\n"] {
            let run = reply.repeat(17);
            for at in 0..run.len() {
                let mut unlike = run.clone();
                unlike[at] = b'x';
                for max in [1, 2, 3, 16, 17, 20] {
                    for buf in [&unlike[..], &run[..at]] {
                        assert_eq!(
                            Framer::new().scalar_run(buf, max, &limits),
                            by_resume(buf, max),
                            "{} max {max}",
                            buf.escape_ascii()
                        );
                    }
                }
            }
        }
        // Half way through an aggregate, the rest of it is not a run of replies.
        let mut framer = Framer::new();
        assert_eq!(framer.resume(b"*2\r\n:1\r\n", &limits), Ok(None));
        assert_eq!(
            framer.scalar_run(b"*2\r\n:1\r\n:2\r\n", 4, &limits),
            (0, 0, 0)
        );
    }

    #[test]
    fn every_strict_prefix_of_a_valid_reply_is_incomplete() {
        for &(bytes, _) in VALID {
            for cut in 0..bytes.len() {
                assert_eq!(
                    framed(&bytes[..cut]),
                    Ok(None),
                    "{:?} cut at {cut}",
                    bytes.escape_ascii().to_string()
                );
            }
        }
    }

    #[test]
    fn two_replies_back_to_back_frame_only_the_first() {
        for &(first, kind) in VALID {
            for &(second, _) in VALID {
                let both = [first, second].concat();
                assert_eq!(framed(&both), Ok(whole(first, kind)));
            }
        }
    }

    #[test]
    fn a_million_nested_arrays_are_too_deep_and_fail_fast() {
        let hostile = b"*1\r\n".repeat(1_000_000);
        let started = Instant::now();
        assert_eq!(
            framed(&hostile),
            Err(DecodeError::TooDeep {
                offset: 512 * 4,
                depth: 513,
                limit: 512
            })
        );
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn nesting_exactly_at_the_depth_limit_is_accepted() {
        let mut ok = b"*1\r\n".repeat(512);
        ok.extend_from_slice(b":1\r\n");
        assert_eq!(framed(&ok), Ok(whole(&ok, FrameKind::Array)));
        let mut deep_maps = b"%1\r\n+k\r\n".repeat(100);
        deep_maps.extend_from_slice(b"_\r\n");
        assert_eq!(framed(&deep_maps), Ok(whole(&deep_maps, FrameKind::Map)));
    }

    #[test]
    fn deep_nesting_past_the_inline_stack_spills_and_unwinds_correctly() {
        let mut bytes = b"*2\r\n".repeat(200);
        bytes.extend(b":1\r\n".repeat(201));
        assert_eq!(framed(&bytes), Ok(whole(&bytes, FrameKind::Array)));
        for cut in [0, 1, 399, 800, bytes.len() - 1] {
            assert_eq!(framed(&bytes[..cut]), Ok(None));
        }
    }

    #[test]
    fn an_endless_aggregate_of_small_values_is_bounded_by_the_reply_limit() {
        let limits = Limits {
            max_bulk_bytes: 1000,
            max_line_bytes: 24,
            ..Limits::default()
        };
        // Four billion elements announced, each value within every per-value limit.
        let mut hostile = b"*4000000000\r\n".to_vec();
        while hostile.len() <= 1024 {
            hostile.extend_from_slice(b":1\r\n");
        }
        assert_eq!(
            frame(&hostile[..1024], &limits),
            Ok(None),
            "at the limit: still incomplete"
        );
        assert_eq!(
            frame(&hostile, &limits),
            Err(DecodeError::ReplyTooLarge {
                offset: 0,
                len: hostile.len() as u64,
                limit: 1024
            })
        );
        // A complete reply over the limit is refused too; one at the limit is accepted.
        let mut exact = b"*2\r\n$1000\r\n".to_vec();
        exact.extend(std::iter::repeat_n(b'x', 1000));
        exact.extend_from_slice(b"\r\n:1\r\n");
        let limits = Limits {
            max_bulk_bytes: 1000,
            max_line_bytes: exact.len() - 1000,
            ..Limits::default()
        };
        assert_eq!(frame(&exact, &limits), Ok(whole(&exact, FrameKind::Array)));
        let tighter = Limits {
            max_line_bytes: limits.max_line_bytes - 1,
            ..limits
        };
        assert!(matches!(
            frame(&exact, &tighter),
            Err(DecodeError::ReplyTooLarge { .. })
        ));
    }

    #[test]
    fn a_framer_resumed_byte_by_byte_finds_every_reply_and_starts_over_after_each() {
        for &(bytes, kind) in VALID {
            let mut framer = Framer::new();
            for cut in 0..bytes.len() {
                assert_eq!(framer.resume(&bytes[..cut], &Limits::default()), Ok(None));
            }
            assert_eq!(
                framer.resume(bytes, &Limits::default()),
                Ok(whole(bytes, kind))
            );
            assert_eq!(
                framer.resume(b"+O", &Limits::default()),
                Ok(None),
                "a fresh reply after a frame"
            );
        }
        // Deep nesting spills past the inline stack and still resumes correctly.
        let mut deep = b"*1\r\n".repeat(300);
        deep.extend_from_slice(b":1\r\n");
        let mut framer = Framer::new();
        for cut in (0..deep.len()).step_by(7) {
            assert_eq!(framer.resume(&deep[..cut], &Limits::default()), Ok(None));
        }
        assert_eq!(
            framer.resume(&deep, &Limits::default()),
            Ok(whole(&deep, FrameKind::Array))
        );
    }

    #[test]
    fn an_endless_aggregate_fed_in_pieces_is_tokenized_once_and_stopped_at_the_limit() {
        let limits = Limits {
            max_bulk_bytes: 4 << 20,
            max_line_bytes: 64,
            ..Limits::default()
        };
        let mut buf = b"*4000000000\r\n".to_vec();
        let chunk = b":1\r\n".repeat(1024);
        let mut framer = Framer::new();
        let started = Instant::now();
        let result = loop {
            buf.extend_from_slice(&chunk);
            match framer.resume(&buf, &limits) {
                Ok(None) => continue,
                other => break other,
            }
        };
        assert!(
            matches!(result, Err(DecodeError::ReplyTooLarge { .. })),
            "{result:?}"
        );
        // ~1000 reads of a 4 MiB reply: re-framing from the start each time would scan
        // ~2 GB; resuming scans 4 MiB once (milliseconds even unoptimized).
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn error_kind_is_the_first_word_of_an_error() {
        assert_eq!(error_kind(b"-ERR unknown command\r\n"), b"ERR");
        assert_eq!(
            error_kind(b"-WRONGTYPE Operation against a key\r\n"),
            b"WRONGTYPE"
        );
        assert_eq!(error_kind(b"-MOVED 3999 127.0.0.1:6381\r\n"), b"MOVED");
        assert_eq!(error_kind(b"-NOAUTH\r\n"), b"NOAUTH");
        assert_eq!(error_kind(b"!21\r\nSYNTAX invalid syntax\r\n"), b"SYNTAX");
        assert_eq!(error_kind(b"!3\r\nOOM\r\n"), b"OOM");
        assert_eq!(error_kind(b"|1\r\n+a\r\n+b\r\n-BUSY script\r\n"), b"BUSY");
        assert_eq!(error_kind(b"+OK\r\n"), b"");
        assert_eq!(error_kind(b"$3\r\nERR\r\n"), b"");
        assert_eq!(error_kind(b""), b"");
        assert_eq!(error_kind(b"-\r\n"), b"");
    }
}
