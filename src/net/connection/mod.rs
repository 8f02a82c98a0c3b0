//! A connection to one server, in four files from the bottom up: `syscalls.rs`, the
//! rustix `send`/`recv` of plain sockets under tokio's readiness; `heard.rs`, what the
//! server has said so far, which tells a connection it turned away from one it served;
//! `io.rs`, the [`Connection`] itself with its buffers, reply framing and the hot path;
//! and `setup.rs`, opening one (connect, handshake, the setup's one-command calls) and
//! telling a port of the wrong protocol apart for the message.

mod heard;
mod io;
mod setup;
mod syscalls;

pub use self::io::{Connection, Incoming, PLAIN_AT_ONCE};
pub use self::setup::closed_or_tls;
