//! RESP2/RESP3 codec: pure and synchronous, no I/O. Owns command encoding, the
//! allocation-free reply framer used on the hot path, and an owned reply tree for
//! the few replies whose content matters (handshake, INFO, CONFIG GET, CLUSTER).
//!
//! Every decoder is bounded by [`Limits`], so a hostile or desynced server cannot
//! make it overflow the stack or buffer without bound. RESP3 streamed strings and
//! aggregates (`$?`, `*?`) are not supported: Redis never sends them.

mod decode;
mod display;
mod encode;
mod error;
mod reply;
mod token;

pub use decode::{Frame, Framer, error_kind, frame};
pub use encode::{encode_command, encode_inline, encoded_len};
pub use error::DecodeError;
pub use reply::{Reply, parse};
pub use token::{FrameKind, Limits};
