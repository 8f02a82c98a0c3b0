//! [`ConfigError`]: the one error of `config/`, for every flag and combination of flags
//! that cannot run. Each variant names the flag (or flags) and says what to do instead.

use std::path::PathBuf;

use crate::net::TlsError;
use crate::workload::WorkloadError;

/// A flag, or a combination of flags, that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Two flags that cannot be used together.
    #[error("{a} cannot be used with {b}: {why}")]
    Conflict {
        /// The first flag.
        a: &'static str,
        /// The second flag.
        b: &'static str,
        /// Why, and what to do instead.
        why: &'static str,
    },
    /// One flag's value is out of range.
    #[error("invalid value for {flag}: {why}")]
    Invalid {
        /// The flag.
        flag: &'static str,
        /// What is wrong and what is accepted.
        why: String,
    },
    /// The workload (tests or custom command) is wrong.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A TLS file (`--cacert`, `--cert`, `--key`) or name (`--sni`) cannot be used.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// `compare` without `--live` was not given two reports.
    #[error(
        "compare needs two reports, A then B (tailrate compare A.json B.json), or --live with \
         --a and --b; {} given",
        count_word(*given)
    )]
    ReportCount {
        /// How many were given.
        given: usize,
    },
    /// An output cannot be written where it was asked to go; checked before anything runs.
    #[error("{flag} {}: {why}", .path.display())]
    Output {
        /// The flag (`--json`, `--hdr-log`, `--out`).
        flag: &'static str,
        /// The path as typed.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// Two outputs asked for one place, where one would overwrite or garble the other.
    #[error("{a} and {b} both write to {place}: give each its own file")]
    SameOutput {
        /// The first flag.
        a: &'static str,
        /// The second flag.
        b: &'static str,
        /// The path as typed for `a`.
        place: String,
    },
    /// A replay's trace cannot be read, or a line of it does not parse.
    #[error("{}: {error}", .path.display())]
    Trace {
        /// The trace as given.
        path: PathBuf,
        /// What is wrong, with the line's number when a line is.
        error: crate::workload::trace::TraceError,
    },
    /// Standard input could not be read for `-x`.
    #[error("reading the last argument from stdin (-x): {0}")]
    Stdin(std::io::Error),
}

impl ConfigError {
    /// [`ConfigError::Invalid`] of `flag`, saying `why`.
    pub(crate) fn invalid(flag: &'static str, why: impl Into<String>) -> Self {
        ConfigError::Invalid {
            flag,
            why: why.into(),
        }
    }

    /// The exit code this error ends the program with: 2 for bad usage, 1 for a failure
    /// to read the input.
    pub fn exit_code(&self) -> u8 {
        match self {
            ConfigError::Stdin(_) => 1,
            _ => 2,
        }
    }
}

/// `none`, or the number.
fn count_word(n: usize) -> String {
    match n {
        0 => "none".to_string(),
        n => n.to_string(),
    }
}
