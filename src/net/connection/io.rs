//! [`Connection`]: one socket, its buffers and reply framing, and the hot path over
//! them.
//!
//! The hot path is `write_buf` + `try_send` (one `send` per batch, made at once when
//! the socket takes the whole batch, as it nearly always does) and `poll_read_some` +
//! `take_plain_replies` / `next_reply` (one `recv` per batch of replies; a short read
//! clears the read readiness, as tokio's own `poll_read` does, where `readable()` +
//! `try_read` would add a `recv` returning `EAGAIN` to every batch). On plain sockets
//! both system calls are rustix's, not glibc's (`syscalls.rs`).

use std::io;
use std::os::fd::AsFd;
use std::task::{Context, Poll, ready};

use bytes::BytesMut;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpStream, UnixStream};

use super::heard::Heard;
use super::syscalls::{poll_read_tls, poll_recv, try_send};
use crate::net::error::NetError;
use crate::net::read_buffer::ReadBuffer;
use crate::net::tls::TlsStream;
use crate::resp::{self, DecodeError, FrameKind, Framer, Limits};

/// One reply taken from the read buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// A reply that is neither an error, a push nor a null.
    Ok,
    /// A null reply (`$-1`, `*-1`, RESP3 `_`): a read's miss.
    Nil,
    /// An error reply: its first word (`ERR`, `WRONGTYPE`) and the message.
    Error {
        /// First word of the message.
        kind: String,
        /// The message, cut to 200 bytes.
        message: String,
    },
    /// A RESP3 push (invalidation, pub/sub): not a reply to a request.
    Push,
}

pub(super) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    // Boxed: rustls's connection state is large, and most runs are plain TCP.
    Tls(Box<TlsStream>),
}

/// A connection to one server: all socket I/O of tailrate goes through here.
pub struct Connection {
    pub(super) stream: Stream,
    pub(super) rbuf: ReadBuffer,
    pub(super) wbuf: BytesMut,
    pub(super) limits: Limits,
    pub(super) endpoint: String,
    /// Whether `HELLO 3` was sent: only then may the server send out-of-band pushes.
    pub(super) resp3: bool,
    /// How far the reply at the front of `rbuf` has been framed, so a reply that
    /// arrives over many reads is tokenized once.
    pub(super) framer: Framer,
    /// What the server has said so far, to tell a connection it turned away from one it
    /// served: see [`Heard`].
    pub(super) heard: Heard,
    /// Bytes handed to the socket since the handshake (for TLS, the plaintext).
    pub(super) sent_bytes: u64,
    /// Bytes read from the socket since the handshake (for TLS, the plaintext).
    pub(super) received_bytes: u64,
}

impl Connection {
    /// The buffer the driver encodes requests into; [`flush`](Self::flush) sends it.
    #[inline]
    pub fn write_buf(&mut self) -> &mut BytesMut {
        &mut self.wbuf
    }

    /// Writes the whole write buffer (one `send` when the socket takes it all) and clears it.
    pub async fn flush(&mut self) -> Result<(), NetError> {
        match self.try_send(None)? {
            None => Ok(()),
            Some(sent) => self.send_rest(None, sent).await,
        }
    }

    /// Sends a batch: `prepared` bytes (the write buffer must then be empty: a batch that
    /// exists already goes out without being copied), or else the write buffer. Sends
    /// what the socket takes now (one `send`) and returns `None` when that was all (the
    /// write buffer is then cleared), else how many bytes went, for
    /// [`send_rest`](Self::send_rest). No future: the hot path's write is nearly always
    /// done at once, and an async send would wrap that one system call in a state machine
    /// polled every batch (see bench/).
    #[inline]
    pub fn try_send(&mut self, prepared: Option<&[u8]>) -> Result<Option<usize>, NetError> {
        debug_assert!(
            prepared.is_none() || self.wbuf.is_empty(),
            "prepared bytes are a write of their own"
        );
        let bytes = prepared.unwrap_or(&self.wbuf);
        let sent = match &self.stream {
            Stream::Tcp(s) => try_send(s, bytes),
            Stream::Unix(s) => try_send(s, bytes),
            // rustls encrypts into records of its own: all of it goes through `send_rest`.
            Stream::Tls(_) => Ok(0),
        };
        match sent {
            Ok(n) if n == bytes.len() => {
                self.sent_bytes += n as u64;
                self.wbuf.clear();
                Ok(None)
            }
            Ok(n) => {
                self.sent_bytes += n as u64;
                Ok(Some(n))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Some(0)),
            Err(source) => {
                std::hint::cold_path();
                self.wbuf.clear();
                Err(self.lost(Some(source)))
            }
        }
    }

    /// Writes the rest of a batch [`try_send`](Self::try_send) began, from byte `sent` on,
    /// waiting for room in the socket as needed, and clears the write buffer.
    pub async fn send_rest(
        &mut self,
        prepared: Option<&[u8]>,
        sent: usize,
    ) -> Result<(), NetError> {
        let bytes = prepared.unwrap_or(&self.wbuf);
        let result = match &mut self.stream {
            Stream::Tcp(s) => s.write_all(&bytes[sent..]).await,
            Stream::Unix(s) => s.write_all(&bytes[sent..]).await,
            // rustls keeps the records the socket did not take; flush sends them.
            Stream::Tls(s) => match s.write_all(&bytes[sent..]).await {
                Ok(()) => s.flush().await,
                Err(e) => Err(e),
            },
        };
        if result.is_ok() {
            // What a failed write took before it failed is not known: it is not counted.
            self.sent_bytes += bytes.len().saturating_sub(sent) as u64;
        }
        self.wbuf.clear();
        result.map_err(|source| self.lost(Some(source)))
    }

    /// Reads what the socket has (one `read`); an orderly close is [`NetError::Closed`].
    pub async fn read_some(&mut self) -> Result<usize, NetError> {
        std::future::poll_fn(|cx| self.poll_read_some(cx)).await
    }

    /// [`read_some`](Self::read_some) as a poll function, which the connection loop's own
    /// poll inlines: awaiting `read_some` there would poll a future of its own twice a
    /// batch, once to wait and once to read (see bench/).
    #[inline(always)]
    pub fn poll_read_some(&mut self, cx: &mut Context<'_>) -> Poll<Result<usize, NetError>> {
        let free = self.rbuf.free_space();
        let result = match &mut self.stream {
            Stream::Tcp(s) => poll_recv(s, cx, free),
            Stream::Unix(s) => poll_recv(s, cx, free),
            Stream::Tls(s) => poll_read_tls(s, cx, free),
        };
        let result = ready!(result);
        if let Ok(n) = result {
            self.rbuf.filled(n);
            self.received_bytes += n as u64;
        }
        Poll::Ready(match result {
            Ok(n) if n > 0 => Ok(n),
            Ok(_) => {
                std::hint::cold_path();
                Err(self.lost(None))
            }
            Err(source) => {
                std::hint::cold_path();
                Err(self.lost(Some(source)))
            }
        })
    }

    /// Takes the next whole reply from the read buffer, or `None` when more must be read.
    #[inline]
    pub fn next_reply(&mut self) -> Result<Option<Incoming>, NetError> {
        // Nothing unread: nothing to frame (a half-framed reply is unread bytes).
        if self.buffered() == 0 {
            return Ok(None);
        }
        let frame = match self.framer.resume(self.rbuf.unread(), &self.limits) {
            Ok(Some(frame)) => frame,
            Ok(None) => return Ok(None),
            Err(source) => {
                return Err(NetError::Protocol {
                    endpoint: self.endpoint.clone(),
                    cause: source,
                });
            }
        };
        let incoming = match frame.kind {
            FrameKind::Error | FrameKind::BulkError => {
                let bytes = &self.rbuf.unread()[..frame.len];
                let kind = String::from_utf8_lossy(resp::error_kind(bytes)).into_owned();
                let message: String = String::from_utf8_lossy(error_text(bytes))
                    .chars()
                    .take(200)
                    .collect();
                self.hear(Some(&message));
                Incoming::Error { kind, message }
            }
            // RESP2 has no push type, and Redis never sends one to a RESP2 connection
            // (invalidations go to the REDIRECT connection as pub/sub arrays). Skipping
            // it could hide a reply and shift every later reply onto the wrong request.
            FrameKind::Push if !self.resp3 => return Err(self.push_in_resp2()),
            FrameKind::Push => Incoming::Push,
            FrameKind::Null => {
                self.heard = Heard::Served;
                Incoming::Nil
            }
            _ => {
                self.heard = Heard::Served;
                Incoming::Ok
            }
        };
        self.take(frame.len);
        Ok(Some(incoming))
    }

    /// Takes up to `max` (at most [`PLAIN_AT_ONCE`]) whole replies that are neither errors
    /// nor pushes (the replies [`next_reply`](Self::next_reply) would give as
    /// [`Incoming::Ok`] or [`Incoming::Nil`]) and returns how many, and which were nulls: bit
    /// `i` of the mask is set when the `i`th was (so that a read's misses are counted by
    /// the batch, not by the reply). It stops before any other reply, and at an incomplete
    /// or invalid one, leaving it to `next_reply`, so calling both gives the same replies
    /// as `next_reply` alone. Hand-written for speed: this is the per-reply path of a
    /// pipelined run, and it spares each reply the `Result<Option<Incoming>>` that
    /// `next_reply` builds and its caller takes apart.
    #[inline]
    pub fn take_plain_replies(&mut self, max: usize) -> (usize, u64) {
        let max = max.min(PLAIN_AT_ONCE);
        let (mut n, mut nulls) = (0, 0u64);
        while n < max {
            // Scalars (nearly every reply) a run at a time; anything else one by one.
            let (scalars, len, run_nulls) =
                self.framer
                    .scalar_run(self.rbuf.unread(), max - n, &self.limits);
            self.take(len);
            nulls |= run_nulls << n;
            n += scalars;
            if n == max || self.buffered() == 0 {
                break;
            }
            let Ok(Some(frame)) = self.framer.resume(self.rbuf.unread(), &self.limits) else {
                break;
            };
            if matches!(
                frame.kind,
                FrameKind::Error | FrameKind::BulkError | FrameKind::Push
            ) {
                // Framed again by `next_reply`; the framer has started over after this frame.
                break;
            }
            self.take(frame.len);
            nulls |= u64::from(frame.kind == FrameKind::Null) << n;
            n += 1;
        }
        // Checked before written: once served (nearly always), nothing is written here.
        if n > 0 && !matches!(self.heard, Heard::Served) {
            self.heard = Heard::Served;
        }
        (n, nulls)
    }

    /// Marks the next `len` unread bytes as taken.
    #[inline]
    fn take(&mut self, len: usize) {
        self.rbuf.take(len);
    }

    /// Bytes handed to the socket since the handshake (for TLS, the plaintext under the
    /// records): every request's RESP bytes.
    #[inline]
    pub fn sent_bytes(&self) -> u64 {
        self.sent_bytes
    }

    /// Bytes read from the socket since the handshake (for TLS, the plaintext): every
    /// reply's RESP bytes, and any the server sent unasked.
    #[inline]
    pub fn received_bytes(&self) -> u64 {
        self.received_bytes
    }

    /// Bytes received and not yet taken as replies.
    pub fn buffered(&self) -> usize {
        self.rbuf.len()
    }

    /// The endpoint as text, for messages.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The error for a RESP3 push on a connection that did not ask for RESP3.
    pub(super) fn push_in_resp2(&self) -> NetError {
        let source = DecodeError::Protocol {
            offset: 0,
            byte: b'>',
            reason: "a RESP3 push on a RESP2 connection (no HELLO 3 was sent)",
        };
        NetError::Protocol {
            endpoint: self.endpoint.clone(),
            cause: source,
        }
    }

    /// An error for a reply that arrived with no request waiting: the server turned the
    /// connection away when that reply is an error and the first it sent.
    pub fn unsolicited(&self) -> NetError {
        self.heard.unsolicited(&self.endpoint)
    }

    /// Notes a reply the server sent (`error`: its message, when it is an error).
    pub(super) fn hear(&mut self, error: Option<&str>) {
        self.heard.hear(error);
    }

    /// The error for a connection that closed (`cause` `None`) or failed: turned away
    /// when the server's only reply was an error. A write can fail before any reply was
    /// read (over a Unix socket a closed peer fails the next write at once): what the
    /// server said before it closed is then still in the socket, and is read first.
    #[cold]
    fn lost(&mut self, cause: Option<io::Error>) -> NetError {
        if cause.is_some() && matches!(self.heard, Heard::Nothing) {
            self.read_last_words();
        }
        self.heard.lost(&self.endpoint, cause)
    }

    /// Reads what a failed plain socket still holds (without waiting) and notes its first
    /// reply, when it is whole. Only while nothing was heard: the bytes are then the
    /// server's first words. TLS records are not decrypted here.
    fn read_last_words(&mut self) {
        let fd = match &self.stream {
            Stream::Tcp(s) => s.as_fd(),
            Stream::Unix(s) => s.as_fd(),
            Stream::Tls(_) => return,
        };
        if let Ok((n, _)) =
            rustix::net::recv(fd, self.rbuf.free_space(), rustix::net::RecvFlags::DONTWAIT)
        {
            self.rbuf.filled(n);
        }
        if let Ok(Some((reply, _))) = resp::parse(self.rbuf.unread(), &self.limits) {
            self.hear(reply.error_message());
        }
    }
}

/// Most replies [`Connection::take_plain_replies`] takes in one call: the width of its mask
/// of nulls.
pub const PLAIN_AT_ONCE: usize = 64;

/// The message of an error frame without its type byte, length line and CRLF.
fn error_text(frame: &[u8]) -> &[u8] {
    let body = match frame.first() {
        // Blob error: "!len\r\nmessage\r\n".
        Some(b'!') => frame
            .iter()
            .position(|&b| b == b'\n')
            .map_or(frame, |nl| &frame[nl + 1..]),
        _ => frame.get(1..).unwrap_or_default(),
    };
    body.strip_suffix(b"\r\n").unwrap_or(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_text_strips_framing() {
        assert_eq!(error_text(b"-ERR wrong\r\n"), b"ERR wrong");
        assert_eq!(error_text(b"!9\r\nERR wrong\r\n"), b"ERR wrong");
    }
}
