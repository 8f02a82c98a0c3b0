//! [`NetError`]: every way a connection can fail, with what a user needs to act on it,
//! and the two readings the driver takes of one (its label in reports, and whether it
//! ends the run). Which failure a closed socket was is decided in `connection/`.

use std::io;
use std::time::Duration;

use crate::resp::DecodeError;

/// A connection failure, with the context a user needs.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The TCP or Unix connect failed.
    #[error("could not connect to {endpoint}: {cause}{hint}", hint = connect_hint(cause))]
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

/// What to check when a connect failed: a refused port usually has no server behind it,
/// and a name that does not resolve is often `host:port` given to `-h`.
fn connect_hint(cause: &io::Error) -> &'static str {
    match cause.kind() {
        io::ErrorKind::ConnectionRefused => {
            " (is a server running there? -h HOST, -p PORT, -s SOCKET or -u URI say where)"
        }
        _ if cause.to_string().contains("lookup") => {
            " (-h takes a host alone: the port goes to -p, or give -u redis://HOST:PORT)"
        }
        _ => "",
    }
}
