//! [`Heard`]: what a connection has heard from the server, to tell a connection the
//! server turned away (Redis at `maxclients`, or in protected mode) from one it served,
//! and so which [`NetError`] a failure is: the reason a user sees is the server's own
//! words when it said any.

use std::io;

use crate::net::error::NetError;

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

impl Heard {
    /// Notes a reply the server sent (`error`: its message, when it is an error).
    pub(super) fn hear(&mut self, error: Option<&str>) {
        *self = match (&*self, error) {
            (Heard::Nothing, Some(message)) => Heard::OneError(shown(message)),
            _ => Heard::Served,
        };
    }

    /// The error for a reply that arrived at `endpoint` with no request waiting: the
    /// server turned the connection away when that reply is an error and the first it
    /// sent.
    pub(super) fn unsolicited(&self, endpoint: &str) -> NetError {
        match self {
            Heard::OneError(said) => NetError::TurnedAway {
                endpoint: endpoint.to_string(),
                said: said.clone(),
            },
            Heard::Nothing | Heard::Served => NetError::Unsolicited {
                endpoint: endpoint.to_string(),
            },
        }
    }

    /// The error for a connection to `endpoint` that closed (`cause` `None`) or failed:
    /// turned away when the server's only reply was an error.
    pub(super) fn lost(&self, endpoint: &str, cause: Option<io::Error>) -> NetError {
        let endpoint = endpoint.to_string();
        match (self, cause) {
            (Heard::OneError(said), _) => NetError::TurnedAway {
                endpoint,
                said: said.clone(),
            },
            (_, None) => NetError::Closed { endpoint },
            (_, Some(cause)) => NetError::Io { endpoint, cause },
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
