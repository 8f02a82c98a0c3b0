//! [`WorkloadError`]: what can be wrong in the description of what to send.

/// Errors in the description of what to send.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// `-t` named no known test; the nearest test's name when one is close.
    #[error(
        "invalid value for -t: no known test in '{0}'{hint} (tests: ping, set, get, incr, lpush, rpush, lpop, rpop, sadd, hset, spop, zadd, zpopmin, lrange, lrange_100, lrange_300, lrange_500, lrange_600, mset, xadd)",
        hint = .1.map(|t| format!("; did you mean {t}?")).unwrap_or_default()
    )]
    NoTests(String, Option<&'static str>),
    /// A custom command was empty.
    #[error("the custom command is empty")]
    EmptyCommand,
    /// A command of a mix or a custom command is wrong (an unknown placeholder, ...).
    #[error("invalid value for {flag}: {why}")]
    Invalid {
        /// The flag (or `COMMAND` for the trailing custom command).
        flag: &'static str,
        /// What is wrong and what is accepted.
        why: String,
    },
}
