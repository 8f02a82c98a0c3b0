//! Opening a [`Connection`]: connecting within `--connect-timeout`, the handshake
//! (`HELLO 3`, `AUTH`, `SELECT`, `CLIENT TRACKING`), and [`Connection::call`], the one
//! command at a time with its reply as a tree that setup and queries use. Telling a port
//! of the wrong protocol apart for the message is here too: a plain connection closed at
//! once by a TLS port, a `--tls` handshake a plain port never answers. None of this is
//! on the hot path.

use std::io;
use std::time::Duration;

use bytes::BytesMut;
use tokio::net::{TcpStream, UnixStream};

use super::heard::{Heard, shown};
use super::io::{Connection, Stream};
use crate::net::endpoint::{Endpoint, Handshake};
use crate::net::error::NetError;
use crate::net::read_buffer::ReadBuffer;
use crate::net::tls::{answers_plain_resp, speaks_tls};
use crate::resp::{self, Framer, Limits, Reply};

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
                        answers_plain_resp(host, *port, timeout).await
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
        self.read_reply().await
    }

    /// Waits for the next whole reply and takes it as a tree, pushes passed over (setup
    /// and queries, not the hot path: [`call`](Self::call), or replies to commands
    /// written with [`write_buf`](Self::write_buf) and [`flush`](Self::flush)).
    pub async fn read_reply(&mut self) -> Result<Reply, NetError> {
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
        Endpoint::Tcp { host, port } if closed && speaks_tls(host, *port, timeout).await => {
            NetError::SpeaksTls {
                endpoint: endpoint.to_string(),
            }
        }
        _ => e,
    }
}

/// How long a handshake whose first reply was an error waits to see whether the server
/// closes the connection (it turned it away) or keeps it (it refused the command).
const CLOSE_AFTER_REFUSAL: Duration = Duration::from_millis(100);
