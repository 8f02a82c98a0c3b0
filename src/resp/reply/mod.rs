//! The owned reply tree, for the few replies whose content matters (handshake,
//! INFO, CONFIG GET, CLUSTER SLOTS): not the hot path, which only frames.

use super::token::{Token, bad, read_token};
use super::{DecodeError, FrameKind, Limits, frame};

/// A fully decoded RESP2/RESP3 reply. Attributes are decoded and dropped.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `+` simple string (invalid UTF-8 replaced).
    Simple(String),
    /// `-` simple error, the whole line (`ERR unknown command ...`).
    Error(String),
    /// `:` integer.
    Integer(i64),
    /// `$` bulk string.
    Bulk(Vec<u8>),
    /// `_`, `$-1` or `*-1`.
    Null,
    /// `*` array.
    Array(Vec<Reply>),
    /// `%` map, pairs in wire order.
    Map(Vec<(Reply, Reply)>),
    /// `~` set, elements in wire order.
    Set(Vec<Reply>),
    /// `>` out-of-band push.
    Push(Vec<Reply>),
    /// `,` double (`inf`, `-inf` and `nan` included).
    Double(f64),
    /// `#` boolean.
    Boolean(bool),
    /// `(` big number, as its decimal text.
    BigNumber(String),
    /// `=` verbatim string: a 3-byte format such as `txt` or `mkd`, and the text.
    Verbatim {
        /// The format, e.g. `txt`.
        format: String,
        /// The text after `format:`.
        text: Vec<u8>,
    },
    /// `!` blob error, the whole message.
    BulkError(String),
}

/// Decodes one whole reply at the start of `buf` into a tree, with its length.
///
/// `Ok(None)` means incomplete, as for [`frame`], which runs first so the tree is
/// only built from a reply already known to be complete and within `limits`.
pub fn parse(buf: &[u8], limits: &Limits) -> Result<Option<(Reply, usize)>, DecodeError> {
    let Some(framed) = frame(buf, limits)? else {
        return Ok(None);
    };
    let bytes = buf.get(..framed.len).unwrap_or_default();
    Ok(Some((build(bytes, limits)?, framed.len)))
}

/// An aggregate being filled while building the tree.
struct Level {
    /// `Array`, `Map`, `Set` or `Push`; `None` for an attribute, whose items are dropped.
    kind: Option<FrameKind>,
    items: Vec<Reply>,
    remaining: u64,
}

/// Builds the tree of the complete reply in `buf`.
///
/// Iterative with an explicit stack, like the framer, so a large configured
/// `max_depth` cannot overflow the call stack here either.
fn build(buf: &[u8], limits: &Limits) -> Result<Reply, DecodeError> {
    let mut open: Vec<Level> = Vec::new();
    let mut pos = 0;
    'value: loop {
        let Some((token, next)) = read_token(buf, pos, limits, open.len())? else {
            // `frame` vouched for completeness, so this means the two disagree.
            return Err(bad(buf, pos, "reply ended early"));
        };
        let start = pos;
        pos = next;
        let mut value = match token {
            Token::Scalar { kind, body } => {
                scalar(buf, start, kind, buf.get(body).unwrap_or_default())?
            }
            Token::Aggregate { kind, elements: 0 } => assemble(kind, Vec::new()),
            Token::Aggregate { kind, elements } => {
                open.push(Level {
                    kind: Some(kind),
                    items: Vec::with_capacity(capacity(elements, buf)),
                    remaining: elements,
                });
                continue 'value;
            }
            Token::Attribute { elements } => {
                if elements > 0 {
                    open.push(Level {
                        kind: None,
                        items: Vec::new(),
                        remaining: elements,
                    });
                }
                continue 'value;
            }
        };
        // Hand the finished value to its parent, closing every aggregate it completes.
        loop {
            match open.last_mut() {
                None => return Ok(value),
                Some(level) => {
                    if level.kind.is_some() {
                        level.items.push(value);
                    }
                    level.remaining -= 1;
                    if level.remaining > 0 {
                        continue 'value;
                    }
                }
            }
            match open.pop() {
                Some(Level {
                    kind: Some(kind),
                    items,
                    ..
                }) => value = assemble(kind, items),
                // A finished attribute yields no value: the annotated value follows.
                _ => continue 'value,
            }
        }
    }
}

/// Preallocation for an aggregate, capped by what the buffer can hold (each value
/// takes at least 3 bytes) so a large announced count cannot over-allocate.
fn capacity(elements: u64, buf: &[u8]) -> usize {
    usize::try_from(elements)
        .unwrap_or(usize::MAX)
        .min(buf.len() / 3)
}

/// Wraps finished children in the aggregate `kind`.
fn assemble(kind: FrameKind, items: Vec<Reply>) -> Reply {
    match kind {
        FrameKind::Map => {
            let mut pairs = Vec::with_capacity(items.len() / 2);
            let mut items = items.into_iter();
            while let (Some(key), Some(value)) = (items.next(), items.next()) {
                pairs.push((key, value));
            }
            Reply::Map(pairs)
        }
        FrameKind::Set => Reply::Set(items),
        FrameKind::Push => Reply::Push(items),
        _ => Reply::Array(items),
    }
}

/// Converts a scalar's content; `start` is its type byte's offset, for errors.
fn scalar(buf: &[u8], start: usize, kind: FrameKind, body: &[u8]) -> Result<Reply, DecodeError> {
    let text = || String::from_utf8_lossy(body).into_owned();
    Ok(match kind {
        FrameKind::Simple => Reply::Simple(text()),
        FrameKind::Error => Reply::Error(text()),
        FrameKind::BulkError => Reply::BulkError(text()),
        FrameKind::BigNumber => Reply::BigNumber(text()),
        FrameKind::Bulk => Reply::Bulk(body.to_vec()),
        FrameKind::Null => Reply::Null,
        FrameKind::Boolean => Reply::Boolean(body == b"t"),
        FrameKind::Integer => Reply::Integer(
            std::str::from_utf8(body)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| bad(buf, start + 1, "integer out of the 64-bit range"))?,
        ),
        FrameKind::Double => Reply::Double(
            std::str::from_utf8(body)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| bad(buf, start + 1, "invalid double"))?,
        ),
        FrameKind::Verbatim => {
            // The framer checked the `xxx:` prefix.
            let (format, text) = body.split_at(body.len().min(4));
            let format = format.get(..3).unwrap_or_default();
            Reply::Verbatim {
                format: String::from_utf8_lossy(format).into_owned(),
                text: text.to_vec(),
            }
        }
        FrameKind::Array | FrameKind::Map | FrameKind::Set | FrameKind::Push => {
            return Err(bad(buf, start, "aggregate where a scalar was expected"));
        }
    })
}

impl Reply {
    /// The payload of a simple, bulk or verbatim string.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Reply::Simple(s) => Some(s.as_bytes()),
            Reply::Bulk(b) | Reply::Verbatim { text: b, .. } => Some(b),
            _ => None,
        }
    }

    /// The payload of a simple, bulk or verbatim string, if it is UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        self.as_bytes().and_then(|b| std::str::from_utf8(b).ok())
    }

    /// An integer, or a string or big number holding one (CONFIG GET returns numbers as bulks).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Reply::Integer(n) => Some(*n),
            Reply::BigNumber(s) => s.parse().ok(),
            _ => self.as_str().and_then(|s| s.parse().ok()),
        }
    }

    /// Whether this is a simple or blob error.
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_) | Reply::BulkError(_))
    }

    /// The message of a simple or blob error, e.g. `ERR unknown command`.
    pub fn error_message(&self) -> Option<&str> {
        match self {
            Reply::Error(m) | Reply::BulkError(m) => Some(m),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
