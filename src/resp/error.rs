//! The decode error type shared by the framer and the tree parser: every way a
//! byte stream can be proven to never become valid RESP.

use thiserror::Error;

/// Bytes that can never be valid RESP; the connection is out of sync and must be dropped.
///
/// "Read more" is never an error: [`frame`](super::frame) reports it as `Ok(None)`.
/// Every offset is relative to the start of the buffer handed to the decoder.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// A byte that the grammar does not allow at this point: an unknown type byte,
    /// a malformed length, a missing CRLF, a bad integer or boolean.
    /// Cause: the peer is not speaking RESP (TLS on a plain port, a proxy banner, HTTP)
    /// or the stream lost sync. What to do: drop the connection and check the target.
    #[error(
        "protocol error at byte offset {offset} (found {}): {reason}",
        show_byte(*byte)
    )]
    Protocol {
        /// Offset of the offending byte.
        offset: usize,
        /// The offending byte (0 when the problem is the absence of a byte).
        byte: u8,
        /// What the grammar expected instead.
        reason: &'static str,
    },

    /// A bulk, blob error or verbatim string announces more bytes than `Limits::max_bulk_bytes`.
    /// Cause: a hostile or corrupt length, or a genuinely huge value.
    /// What to do: drop the connection, or raise the limit if values really are this large.
    #[error("bulk length {len} at byte offset {offset} exceeds the limit of {limit} bytes")]
    BulkTooLarge {
        /// Offset of the type byte of the bulk.
        offset: usize,
        /// The announced length (a lower bound if the length line is still arriving;
        /// saturates at `u64::MAX` when it does not fit in 64 bits).
        len: u64,
        /// The configured `max_bulk_bytes`.
        limit: u64,
    },

    /// An aggregate announces more elements (pairs, for maps and attributes) than
    /// `Limits::max_elements`.
    /// Cause: a hostile or corrupt count. What to do: drop the connection, or raise the limit.
    #[error("aggregate count {count} at byte offset {offset} exceeds the limit of {limit}")]
    TooManyElements {
        /// Offset of the type byte of the aggregate.
        offset: usize,
        /// The announced count (a lower bound if the count line is still arriving;
        /// saturates at `u64::MAX` when it does not fit in 64 bits).
        count: u64,
        /// The configured `max_elements`.
        limit: u64,
    },

    /// Aggregates are nested deeper than `Limits::max_depth`.
    /// Cause: a hostile reply built to exhaust the stack or memory of recursive decoders.
    /// What to do: drop the connection; real Redis replies nest a handful of levels.
    #[error("aggregate at byte offset {offset} nests {depth} deep, over the limit of {limit}")]
    TooDeep {
        /// Offset of the type byte of the aggregate that went too deep.
        offset: usize,
        /// Its nesting depth (1 for a top-level aggregate).
        depth: usize,
        /// The configured `max_depth`.
        limit: usize,
    },

    /// One reply (an aggregate and everything in it) has grown past
    /// `Limits::max_bulk_bytes + Limits::max_line_bytes` bytes, complete or not.
    /// Cause: a hostile or corrupt aggregate that announces a huge count and then
    /// streams small values, each within the limits, so the buffer would grow without
    /// bound. What to do: drop the connection, or raise the limit (`--max-reply-bytes`).
    #[error(
        "reply at byte offset {offset} is {len} bytes or more, over the limit of {limit} bytes"
    )]
    ReplyTooLarge {
        /// Offset of the reply's first byte.
        offset: usize,
        /// Bytes of it seen so far (a lower bound of its length).
        len: u64,
        /// The bound: `max_bulk_bytes + max_line_bytes`.
        limit: u64,
    },

    /// A line (simple string, error, number...) has gone past `Limits::max_line_bytes`
    /// without a CRLF, so buffering more of it could grow memory without bound.
    /// What to do: drop the connection, or raise the limit for servers with long status lines.
    #[error(
        "line at byte offset {offset} is longer than the limit of {limit} bytes without a CRLF"
    )]
    LineTooLong {
        /// Offset of the first byte of the line's content (after its type byte).
        offset: usize,
        /// The configured `max_line_bytes`.
        limit: usize,
    },
}

/// Renders a byte as hex plus its escaped ASCII form, so control bytes stay readable in logs.
fn show_byte(byte: u8) -> String {
    format!("0x{byte:02x} '{}'", byte.escape_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_errors_show_the_offset_the_byte_and_the_reason() {
        let err = DecodeError::Protocol {
            offset: 7,
            byte: b'\n',
            reason: "bare LF",
        };
        assert_eq!(
            err.to_string(),
            "protocol error at byte offset 7 (found 0x0a '\\n'): bare LF"
        );
    }

    #[test]
    fn limit_errors_show_the_value_and_the_limit() {
        let err = DecodeError::BulkTooLarge {
            offset: 0,
            len: 1_000_000_000_000,
            limit: 512,
        };
        assert!(err.to_string().contains("1000000000000"));
        assert!(err.to_string().contains("512"));
    }
}
