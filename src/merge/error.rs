//! [`MergeError`]: inputs that cannot be merged, each the user's to fix (exit 2) and
//! said in one line.

use std::path::PathBuf;

/// Inputs that cannot be merged: the user's to fix (exit 2), each one line.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A file or directory cannot be read.
    #[error("cannot read {}: {why}", .path.display())]
    Read {
        /// As given or found.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// Nothing to merge.
    #[error("no tailrate report (.json) among the inputs")]
    NoReports,
    /// The shards are not of one plan, overlap, or are missing.
    #[error("{0}")]
    Refused(String),
}
