//! The open-file limit a run's sockets need. Every connection is a file descriptor, and
//! the soft limit many systems start a shell with (1024) is below what `-c 1000` and up
//! take, where a connect would fail with "too many open files". [`ensure_for`] raises the
//! soft limit to the hard limit when the run needs more, and says so before anything
//! connects when even the hard limit is too low. It only ever raises, and only as far as
//! needed.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Descriptors a run takes beside its connections: standard streams, output files, the
/// probe's and the readings' connections, the signal watcher and what TLS reads.
const BESIDE_CONNECTIONS: u64 = 64;
/// Descriptors each generator thread's event loop takes (epoll, its waker, slack).
const PER_THREAD: u64 = 4;

/// What [`ensure_for`] found or did to the soft limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FdLimit {
    /// The soft limit was already enough (or unlimited).
    Enough,
    /// The soft limit was raised from `from` to `to`.
    Raised {
        /// The soft limit before.
        from: u64,
        /// The soft limit now.
        to: u64,
    },
}

/// The open-file limit cannot hold the run.
#[derive(Debug, thiserror::Error)]
pub enum FdLimitError {
    /// Even the hard limit is too low.
    #[error(
        "{flag} {clients}{over} needs about {needed} open files, but this process may open at \
         most {hard} (the hard limit, `ulimit -Hn`): lower {flag}, or raise the hard limit (as \
         root, or LimitNOFILE= for a service)"
    )]
    HardLimit {
        /// The flag that set the connections: `-c`, or a replay's `--connections`.
        flag: &'static str,
        /// `-c`.
        clients: usize,
        /// ` over N nodes` against a cluster, else empty.
        over: String,
        /// Descriptors the run needs.
        needed: u64,
        /// The hard limit.
        hard: u64,
    },
    /// The system refused to raise the soft limit.
    #[error(
        "{flag} {clients} needs about {needed} open files; raising the soft limit from {soft} \
         (`ulimit -n`) failed: {cause}"
    )]
    Raise {
        /// The flag that set the connections.
        flag: &'static str,
        /// `-c`.
        clients: usize,
        /// Descriptors the run needs.
        needed: u64,
        /// The soft limit, unchanged.
        soft: u64,
        /// Why it could not be raised.
        cause: std::io::Error,
    },
}

/// Descriptors a run of `clients` clients, each with a connection to each of `nodes`
/// nodes, over `threads` threads, needs at most.
pub fn needed(clients: usize, nodes: usize, threads: usize) -> u64 {
    let connections = (clients as u64).saturating_mul(nodes.max(1) as u64);
    connections
        .saturating_add(nodes as u64)
        .saturating_add((threads as u64).saturating_mul(PER_THREAD))
        .saturating_add(BESIDE_CONNECTIONS)
}

/// Makes room for [`needed`] descriptors: raises the soft limit to the hard limit when
/// it is below, and errs (naming `flag`, the one that set the connections, and the limit)
/// when the hard limit is below too.
pub fn ensure_for(
    flag: &'static str,
    clients: usize,
    nodes: usize,
    threads: usize,
) -> Result<FdLimit, FdLimitError> {
    let needed = needed(clients, nodes, threads);
    let limit = getrlimit(Resource::Nofile);
    // `None` is unlimited.
    let soft = limit.current.unwrap_or(u64::MAX);
    let hard = limit.maximum.unwrap_or(u64::MAX);
    if needed <= soft {
        return Ok(FdLimit::Enough);
    }
    if needed > hard {
        return Err(FdLimitError::HardLimit {
            flag,
            clients,
            over: if nodes > 1 {
                format!(" over {nodes} nodes")
            } else {
                String::new()
            },
            needed,
            hard,
        });
    }
    // To the hard limit rather than to `needed`: reconnects, a cluster's new nodes and
    // what the estimate missed all find room, and it is what redis-benchmark users set
    // by hand with `ulimit -n`.
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    setrlimit(Resource::Nofile, raised).map_err(|e| FdLimitError::Raise {
        flag,
        clients,
        needed,
        soft,
        cause: e.into(),
    })?;
    Ok(FdLimit::Raised {
        from: soft,
        to: hard,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_run_needs_a_descriptor_per_connection_and_some_to_spare() {
        assert_eq!(needed(1000, 1, 1), 1000 + 1 + 4 + 64);
        assert_eq!(needed(1000, 3, 2), 3000 + 3 + 8 + 64);
        assert_eq!(needed(usize::MAX, usize::MAX, usize::MAX), u64::MAX);
    }

    #[test]
    fn a_small_run_leaves_the_limit_alone() {
        let before = getrlimit(Resource::Nofile);
        assert_eq!(ensure_for("-c", 1, 1, 1).unwrap(), FdLimit::Enough);
        let after = getrlimit(Resource::Nofile);
        assert_eq!(
            (before.current, before.maximum),
            (after.current, after.maximum)
        );
    }

    #[test]
    fn more_than_the_hard_limit_is_an_error_naming_the_flag_and_the_limit() {
        let hard = getrlimit(Resource::Nofile).maximum;
        let Some(hard) = hard.filter(|&h| h < u64::MAX / 2) else {
            return; // unlimited: nothing is too many
        };
        let clients = usize::try_from(hard).unwrap();
        let e = ensure_for("-c", clients, 1, 1).unwrap_err().to_string();
        assert!(e.contains(&format!("-c {clients}")), "{e}");
        assert!(e.contains(&format!("at most {hard}")), "{e}");
        let e = ensure_for("--connections", clients, 1, 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("--connections {clients}")) && e.contains("lower --connections"),
            "{e}"
        );
        assert!(!e.contains("-c "), "{e}");
        let e = ensure_for("-c", clients, 3, 1).unwrap_err().to_string();
        assert!(e.contains("over 3 nodes"), "{e}");
    }
}
