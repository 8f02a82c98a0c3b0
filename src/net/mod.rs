//! Endpoints and connections: the only module that touches sockets.
//!
//! [`Connection`] owns a stream, a read buffer and a write buffer. The driver encodes
//! requests into the write buffer and sends them with [`Connection::try_send`] once per
//! batch (one `send`), then reads with [`Connection::poll_read_some`] (one `recv`, sized
//! to take many replies) and takes whole replies with [`Connection::take_plain_replies`]
//! and [`Connection::next_reply`]. Framing is `resp`'s business; every way a connection
//! fails is one [`NetError`].
//! TLS ([`tls`]) is a kind of endpoint whose client configuration is built once per run.
//! [`cluster`] knows Redis Cluster's slots, key hashing and redirects. [`fds`] makes room
//! for the sockets in the process's open-file limit.

pub mod cluster;
mod connection;
mod endpoint;
mod error;
pub mod fds;
mod read_buffer;
pub mod tls;

pub use connection::{Connection, Incoming, PLAIN_AT_ONCE, closed_or_tls};
pub use endpoint::{Endpoint, Handshake, ParsedUri, parse_uri};
pub use error::NetError;
pub use tls::{TlsError, TlsOptions, TlsSettings};
