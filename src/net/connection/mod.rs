//! [`Connection`]: one socket, its buffers, the handshake, and reply framing.
//!
//! The hot path is `write_buf` + `try_send` (one `send` per batch, made at once when
//! the socket takes the whole batch, as it nearly always does) and `poll_read_some` +
//! `take_plain_replies` / `next_reply` (one `recv` per batch of replies; a short read
//! clears the read readiness, as tokio's own `poll_read` does, where `readable()` +
//! `try_read` would add a `recv` returning `EAGAIN` to every batch). On plain sockets
//! both system calls are rustix's, not glibc's: see `try_send`.

use std::io;
use std::os::fd::AsFd;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

use super::read_buffer::ReadBuffer;
use super::tls::TlsStream;
use super::{Endpoint, Handshake};
use crate::resp::{self, DecodeError, FrameKind, Framer, Limits, Reply};

/// A connection failure, with the context a user needs.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The TCP or Unix connect failed.
    #[error("could not connect to {endpoint}: {cause}")]
    Connect {
        /// Where.
        endpoint: String,
        /// The OS's reason.
        cause: io::Error,
    },
    /// Connecting took longer than --connect-timeout.
    #[error("could not connect to {endpoint}: no answer within {after:?} (--connect-timeout)")]
    ConnectTimeout {
        /// Where.
        endpoint: String,
        /// The timeout.
        after: Duration,
    },
    /// The server refused a handshake command.
    #[error("{endpoint} refused {command}: {reply}")]
    Handshake {
        /// Where.
        endpoint: String,
        /// Which step (`AUTH`, `SELECT 3`, `HELLO 3`).
        command: String,
        /// The server's error reply, control characters escaped.
        reply: String,
    },
    /// The server closed the connection.
    #[error("{endpoint} closed the connection")]
    Closed {
        /// Where.
        endpoint: String,
    },
    /// A read or write failed.
    #[error("I/O error on {endpoint}: {cause}")]
    Io {
        /// Where.
        endpoint: String,
        /// The OS's reason.
        cause: io::Error,
    },
    /// The server sent bytes that are not RESP, or a reply over the limits.
    #[error("protocol error from {endpoint}: {cause}")]
    Protocol {
        /// Where.
        endpoint: String,
        /// What was wrong.
        cause: DecodeError,
    },
    /// The server sent a reply no request was waiting for.
    #[error("protocol error from {endpoint}: a reply arrived that no request was waiting for")]
    Unsolicited {
        /// Where.
        endpoint: String,
    },
    /// A plain connection was closed at its first command by a port that answers a TLS
    /// handshake. Fix: add `--tls`.
    #[error(
        "{endpoint} closed the connection: this port speaks TLS: add --tls (and --cacert \
         with the server's CA, or --insecure for tests)"
    )]
    SpeaksTls {
        /// Where.
        endpoint: String,
    },
    /// A `--tls` handshake got no answer from a port that answers plain RESP. Fix: drop
    /// `--tls`, or give the server's TLS port.
    #[error(
        "could not connect to {endpoint}: this port does not speak TLS (it answers plain \
         RESP): drop --tls, or give the server's tls-port with -p"
    )]
    NotTls {
        /// Where.
        endpoint: String,
    },
    /// The server turned the connection away: its first words were an error reply, and
    /// then it closed the connection, or said them before any request was sent (Redis
    /// does both for `max number of clients reached`, and in protected mode).
    #[error("{endpoint} turned the connection away: {said}")]
    TurnedAway {
        /// Where.
        endpoint: String,
        /// The server's error reply, control characters escaped.
        said: String,
    },
}

impl NetError {
    /// The error-kind label counted in reports.
    pub fn kind(&self) -> &'static str {
        match self {
            NetError::Connect { cause, .. } if cause.kind() == io::ErrorKind::ConnectionRefused => {
                "connect_refused"
            }
            NetError::Connect { .. }
            | NetError::ConnectTimeout { .. }
            | NetError::SpeaksTls { .. }
            | NetError::NotTls { .. } => "connect_failed",
            NetError::Handshake { .. } => "handshake_refused",
            NetError::Closed { .. } => "connection_closed",
            NetError::Io { .. } => "connection_reset",
            NetError::Protocol { .. } | NetError::Unsolicited { .. } => "protocol_error",
            NetError::TurnedAway { .. } => "connection_turned_away",
        }
    }

    /// Whether the failure ends the run: the bytes of a protocol error cannot be trusted,
    /// and a server that turns connections away gives the run fewer than it asked for
    /// (its words are the reason). Closes and resets do not: the open loop measures them.
    pub fn ends_run(&self) -> bool {
        matches!(
            self,
            NetError::Protocol { .. } | NetError::Unsolicited { .. } | NetError::TurnedAway { .. }
        )
    }
}

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

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    // Boxed: rustls's connection state is large, and most runs are plain TCP.
    Tls(Box<TlsStream>),
}

/// A connection to one server: all socket I/O of tailrate goes through here.
pub struct Connection {
    stream: Stream,
    rbuf: ReadBuffer,
    wbuf: BytesMut,
    limits: Limits,
    endpoint: String,
    /// Whether `HELLO 3` was sent: only then may the server send out-of-band pushes.
    resp3: bool,
    /// How far the reply at the front of `rbuf` has been framed, so a reply that
    /// arrives over many reads is tokenized once.
    framer: Framer,
    /// What the server has said so far, to tell a connection it turned away from one it
    /// served: see [`Heard`].
    heard: Heard,
    /// Bytes handed to the socket since the handshake (for TLS, the plaintext).
    sent_bytes: u64,
    /// Bytes read from the socket since the handshake (for TLS, the plaintext).
    received_bytes: u64,
}

/// What a connection has heard from the server since it opened. A server that turns a
/// connection away (Redis at `maxclients`) writes one error reply at once and closes:
/// a connection whose only reply so far is an error, and which then fails, or whose
/// error came with no request waiting, was turned away, and that error is the reason.
#[derive(Debug, Default)]
enum Heard {
    /// No reply yet.
    #[default]
    Nothing,
    /// One reply, an error: its text (shortened, control characters escaped).
    OneError(String),
    /// A reply that is not an error, or more than one: the server served the connection.
    Served,
}

impl Connection {
    /// Connects within `timeout` and runs the handshake.
    pub async fn open(
        endpoint: &Endpoint,
        handshake: &Handshake,
        timeout: Duration,
        limits: Limits,
    ) -> Result<Self, NetError> {
        let name = endpoint.to_string();
        let failed = |cause| NetError::Connect {
            endpoint: name.clone(),
            cause,
        };
        let connecting = async {
            match endpoint {
                Endpoint::Tcp { host, port } => {
                    let stream = TcpStream::connect((host.as_str(), *port))
                        .await
                        .map_err(failed)?;
                    // Requests are written whole, one batch per write: Nagle would only delay them.
                    stream.set_nodelay(true).map_err(failed)?;
                    Ok(Stream::Tcp(stream))
                }
                Endpoint::Unix(path) => UnixStream::connect(path)
                    .await
                    .map(Stream::Unix)
                    .map_err(failed),
                Endpoint::Tls { host, port, tls } => {
                    let stream = TcpStream::connect((host.as_str(), *port))
                        .await
                        .map_err(failed)?;
                    stream.set_nodelay(true).map_err(failed)?;
                    let handshake = tls.connect(stream);
                    // A plain server answers a ClientHello with silence (Redis waits for the
                    // end of an inline command): after a while with no answer, a plain PING
                    // on a connection of its own tells that apart from a slow TLS server.
                    let plain = async {
                        tokio::time::sleep(PLAIN_CHECK_AFTER).await;
                        super::tls::answers_plain_resp(host, *port, timeout).await
                    };
                    tokio::select! {
                        biased;
                        done = handshake => done.map(|s| Stream::Tls(Box::new(s))).map_err(failed),
                        true = plain => Err(NetError::NotTls { endpoint: name.clone() }),
                    }
                }
            }
        };
        let stream = match tokio::time::timeout(timeout, connecting).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(NetError::ConnectTimeout {
                    endpoint: name,
                    after: timeout,
                });
            }
        };
        let mut conn = Connection {
            stream,
            rbuf: ReadBuffer::new(),
            wbuf: BytesMut::with_capacity(16 * 1024),
            limits,
            endpoint: name,
            resp3: handshake.resp3,
            framer: Framer::new(),
            heard: Heard::Nothing,
            sent_bytes: 0,
            received_bytes: 0,
        };
        match tokio::time::timeout(timeout, conn.handshake(handshake)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(closed_or_tls(endpoint, e, timeout).await),
            Err(_) => {
                return Err(NetError::ConnectTimeout {
                    endpoint: conn.endpoint,
                    after: timeout,
                });
            }
        }
        // The counts are of the requests and replies that follow, not of the handshake.
        (conn.sent_bytes, conn.received_bytes) = (0, 0);
        Ok(conn)
    }

    async fn handshake(&mut self, hs: &Handshake) -> Result<(), NetError> {
        if hs.resp3 {
            let mut argv: Vec<&[u8]> = vec![b"HELLO", b"3"];
            if let Some(password) = &hs.password {
                argv.extend_from_slice(&[
                    b"AUTH",
                    hs.user.as_deref().unwrap_or("default").as_bytes(),
                    password.as_bytes(),
                ]);
            }
            self.expect_ok(&argv, "HELLO 3").await?;
        } else if let Some(password) = &hs.password {
            let argv: Vec<&[u8]> = match &hs.user {
                Some(user) => vec![b"AUTH", user.as_bytes(), password.as_bytes()],
                None => vec![b"AUTH", password.as_bytes()],
            };
            self.expect_ok(&argv, "AUTH").await?;
        }
        if hs.db != 0 {
            let db = hs.db.to_string();
            self.expect_ok(&[b"SELECT", db.as_bytes()], &format!("SELECT {db}"))
                .await?;
        }
        if hs.tracking {
            self.expect_ok(&[b"CLIENT", b"TRACKING", b"on"], "CLIENT TRACKING on")
                .await?;
        }
        Ok(())
    }

    async fn expect_ok(&mut self, argv: &[&[u8]], what: &str) -> Result<Reply, NetError> {
        let reply = self.call(argv).await?;
        if reply.is_error() {
            // The first reply of the connection, an error: a server turning the
            // connection away closes it at once, one refusing the command does not.
            if matches!(self.heard, Heard::OneError(_))
                && let Ok(Err(e)) =
                    tokio::time::timeout(CLOSE_AFTER_REFUSAL, self.read_some()).await
            {
                return Err(e);
            }
            return Err(NetError::Handshake {
                endpoint: self.endpoint.clone(),
                command: what.to_string(),
                // The server's whole words (a Reply's display is cut for one-line views).
                reply: reply
                    .error_message()
                    .map_or_else(|| reply.to_string(), shown),
            });
        }
        Ok(reply)
    }

    /// Sends one command and waits for its reply, as a tree (setup and queries, not the hot path).
    pub async fn call(&mut self, argv: &[&[u8]]) -> Result<Reply, NetError> {
        // `parse` frames from the start of the buffer; the hot path's framer starts over too.
        self.framer = Framer::new();
        resp::encode_command(&mut self.wbuf, argv);
        self.flush().await?;
        loop {
            match resp::parse(self.rbuf.unread(), &self.limits) {
                Ok(Some((Reply::Push(_), _))) if !self.resp3 => return Err(self.push_in_resp2()),
                Ok(Some((Reply::Push(_), used))) => self.rbuf.take(used),
                Ok(Some((reply, used))) => {
                    self.rbuf.take(used);
                    self.hear(reply.error_message());
                    return Ok(reply);
                }
                Ok(None) => {
                    self.read_some().await?;
                }
                Err(source) => {
                    return Err(NetError::Protocol {
                        endpoint: self.endpoint.clone(),
                        cause: source,
                    });
                }
            }
        }
    }

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
    fn push_in_resp2(&self) -> NetError {
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
        match &self.heard {
            Heard::OneError(said) => NetError::TurnedAway {
                endpoint: self.endpoint.clone(),
                said: said.clone(),
            },
            Heard::Nothing | Heard::Served => NetError::Unsolicited {
                endpoint: self.endpoint.clone(),
            },
        }
    }

    /// Notes a reply the server sent (`error`: its message, when it is an error).
    fn hear(&mut self, error: Option<&str>) {
        self.heard = match (&self.heard, error) {
            (Heard::Nothing, Some(message)) => Heard::OneError(shown(message)),
            _ => Heard::Served,
        };
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
        let endpoint = self.endpoint.clone();
        match (&self.heard, cause) {
            (Heard::OneError(said), _) => NetError::TurnedAway {
                endpoint,
                said: said.clone(),
            },
            (_, None) => NetError::Closed { endpoint },
            (_, Some(cause)) => NetError::Io { endpoint, cause },
        }
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

/// How long a `--tls` handshake waits for an answer before it checks whether the port
/// answers plain RESP instead. Far longer than a TLS server takes to answer a ClientHello
/// on a network tailrate benchmarks over.
const PLAIN_CHECK_AFTER: Duration = Duration::from_millis(250);

/// `e`, the failure of a plain TCP connection's first command, or [`NetError::SpeaksTls`]
/// when the server closed it and its port answers a TLS handshake (a TLS port closes a
/// connection that speaks plain RESP, as a proxy closes one whose command it refuses).
pub async fn closed_or_tls(endpoint: &Endpoint, e: NetError, timeout: Duration) -> NetError {
    let closed = match &e {
        NetError::Closed { .. } => true,
        NetError::Io { cause, .. } => matches!(
            cause.kind(),
            io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
        ),
        _ => false,
    };
    match endpoint {
        Endpoint::Tcp { host, port }
            if closed && super::tls::speaks_tls(host, *port, timeout).await =>
        {
            NetError::SpeaksTls {
                endpoint: endpoint.to_string(),
            }
        }
        _ => e,
    }
}

/// Most replies [`Connection::take_plain_replies`] takes in one call: the width of its mask
/// of nulls.
pub const PLAIN_AT_ONCE: usize = 64;

/// How long a handshake whose first reply was an error waits to see whether the server
/// closes the connection (it turned it away) or keeps it (it refused the command).
const CLOSE_AFTER_REFUSAL: Duration = Duration::from_millis(100);

/// Most characters of a server's error reply kept for a message.
const SHOWN_CHARS: usize = 200;

/// A server's words for a message: shortened, control characters escaped (`\u{1b}`), so
/// they cannot move the cursor or recolour the terminal.
fn shown(text: &str) -> String {
    crate::text::printable_prefix(text, SHOWN_CHARS)
}

/// One `send(2)` of `bytes` on a socket tokio has registered, made through tokio's
/// `try_io` (so a full socket clears its write readiness, as `try_write` would). The
/// system call is rustix's own rather than glibc's `send`: tailrate is multi-threaded
/// (the signal watcher, the generator threads), and in such a process glibc wraps every
/// `send` in the thread-cancellation bookkeeping of a cancellation point (two atomic
/// updates of the thread's cancel state per call; see bench/), for a cancellation
/// tailrate never uses.
#[inline]
fn try_send<S: TryIo>(s: &S, bytes: &[u8]) -> io::Result<usize> {
    s.try_io_as(tokio::io::Interest::WRITABLE, || {
        rustix::net::send(s, bytes, rustix::net::SendFlags::NOSIGNAL).map_err(io::Error::from)
    })
}

/// One `recv(2)` into `free` once the socket is readable, as tokio's `poll_read` makes
/// it, with rustix's system call rather than glibc's `recv` (see [`try_send`]). A short
/// read drained the socket: like `poll_read`, it then clears the socket's read
/// readiness, so the next read waits for the next reply instead of making a `recv` that
/// returns `EAGAIN`. `try_io` clears it when its closure says `WouldBlock`, so the closure
/// says that after a short read, and hands the bytes over apart.
#[inline]
fn poll_recv<S: TryIo>(s: &S, cx: &mut Context<'_>, free: &mut [u8]) -> Poll<io::Result<usize>> {
    loop {
        ready!(s.poll_readable(cx))?;
        let mut short = None;
        let read = s.try_io_as(tokio::io::Interest::READABLE, || {
            let (n, _) = rustix::net::recv(s, &mut *free, rustix::net::RecvFlags::empty())?;
            if n > 0 && n < free.len() {
                short = Some(n);
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(n)
        });
        if let Some(n) = short {
            return Poll::Ready(Ok(n));
        }
        match read {
            // Readable no longer (readiness cleared): wait again.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            done => return Poll::Ready(done),
        }
    }
}

/// A TLS read: at most one TLS record's plaintext (tls.rs buffers the socket read under
/// it). Out of line: plain sockets are the hot path.
#[inline(never)]
fn poll_read_tls(
    s: &mut TlsStream,
    cx: &mut Context<'_>,
    free: &mut [u8],
) -> Poll<io::Result<usize>> {
    let mut free = ReadBuf::new(free);
    ready!(Pin::new(s).poll_read(cx, &mut free))?;
    Poll::Ready(Ok(free.filled().len()))
}

/// What [`try_send`] and [`poll_recv`] need of both kinds of plain socket.
trait TryIo: std::os::fd::AsFd {
    /// tokio's `try_io`.
    fn try_io_as<R>(
        &self,
        interest: tokio::io::Interest,
        f: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R>;
    /// tokio's `poll_read_ready`.
    fn poll_readable(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
}

/// Both kinds of plain socket have the same tokio methods, inherent to each.
macro_rules! impl_try_io {
    ($($socket:ty),*) => {$(
        impl TryIo for $socket {
            #[inline]
            fn try_io_as<R>(&self, interest: tokio::io::Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
                self.try_io(interest, f)
            }
            #[inline]
            fn poll_readable(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.poll_read_ready(cx)
            }
        }
    )*};
}
impl_try_io!(TcpStream, UnixStream);

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
