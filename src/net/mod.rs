//! Endpoints and connections: the only module that touches sockets.
//!
//! [`Connection`] owns a stream, a read buffer and a write buffer. The driver encodes
//! requests into the write buffer and calls [`Connection::flush`] once per batch (one
//! `write`), then [`Connection::read_some`] (one `read`, sized to take many replies) and
//! takes whole replies with [`Connection::next_frame`]. Framing is `resp`'s business.

mod connection;
mod endpoint;

pub use connection::{Connection, Incoming, NetError};
pub use endpoint::{Endpoint, Handshake, ParsedUri, parse_uri};
