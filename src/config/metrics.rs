//! `--metrics-listen`, checked: where the live Prometheus page is served, refused on an
//! address other hosts can reach unless `--metrics-listen-any` says so. Binding (and so
//! a port in use) is the server's, `app/metrics.rs`, before any load.

use std::net::SocketAddr;
use std::time::Duration;

use super::ConfigError;
use crate::cli::MetricsArgs;

/// Where and how long the live metrics are served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsConfig {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// How long to keep serving after the last test (`--metrics-linger`).
    pub linger: Duration,
}

/// The checked `--metrics-listen`, or `None` without it.
pub fn metrics_of(args: &MetricsArgs) -> Result<Option<MetricsConfig>, ConfigError> {
    let Some(listen) = args.metrics_listen else {
        return Ok(None);
    };
    if listen.port() == 0 {
        return Err(ConfigError::invalid(
            "--metrics-listen",
            format!("{listen} has port 0: give the port Prometheus scrapes, as 127.0.0.1:9464"),
        ));
    }
    if !listen.ip().is_loopback() && !args.metrics_listen_any {
        return Err(ConfigError::invalid(
            "--metrics-listen",
            format!(
                "{listen} is not a loopback address, so other hosts could read the page (it \
                 names the server and the workload): give 127.0.0.1:{port} or [::1]:{port}, or \
                 add --metrics-listen-any to serve it there",
                port = listen.port()
            ),
        ));
    }
    Ok(Some(MetricsConfig {
        listen,
        linger: args.metrics_linger,
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn args(listen: &str, any: bool) -> MetricsArgs {
        MetricsArgs {
            metrics_listen: Some(listen.parse().unwrap()),
            metrics_listen_any: any,
            metrics_linger: Duration::from_secs(2),
        }
    }

    #[test]
    fn a_non_loopback_address_is_refused_unless_any_is_given() {
        let e = metrics_of(&args("0.0.0.0:9464", false))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--metrics-listen") && e.contains("--metrics-listen-any"),
            "{e}"
        );
        assert!(metrics_of(&args("0.0.0.0:9464", true)).unwrap().is_some());
        assert!(metrics_of(&args("[::1]:9464", false)).unwrap().is_some());
        let zero = metrics_of(&args("127.0.0.1:0", false))
            .unwrap_err()
            .to_string();
        assert!(zero.contains("port 0"), "{zero}");
    }
}
