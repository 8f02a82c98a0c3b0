//! What a connection has heard from the server, to tell a connection the server turned
//! away (Redis at `maxclients`, or in protected mode) from one it served, and so which
//! [`NetError`] a failure is: the reason a user sees is the server's own words when it
//! said any.

use std::io;
use std::os::fd::AsFd;

use super::{Connection, Stream};
use crate::net::NetError;
use crate::resp;

/// What a connection has heard from the server since it opened. A server that turns a
/// connection away (Redis at `maxclients`) writes one error reply at once and closes:
/// a connection whose only reply so far is an error, and which then fails, or whose
/// error came with no request waiting, was turned away, and that error is the reason.
#[derive(Debug, Default)]
pub(super) enum Heard {
    /// No reply yet.
    #[default]
    Nothing,
    /// One reply, an error: its text (shortened, control characters escaped).
    OneError(String),
    /// A reply that is not an error, or more than one: the server served the connection.
    Served,
}

impl Connection {
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
    pub(super) fn hear(&mut self, error: Option<&str>) {
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
    pub(super) fn lost(&mut self, cause: Option<io::Error>) -> NetError {
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

/// Most characters of a server's error reply kept for a message.
const SHOWN_CHARS: usize = 200;

/// A server's words for a message: shortened, control characters escaped (`\u{1b}`), so
/// they cannot move the cursor or recolour the terminal.
pub(super) fn shown(text: &str) -> String {
    crate::text::printable_prefix(text, SHOWN_CHARS)
}
