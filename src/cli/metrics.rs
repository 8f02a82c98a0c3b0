//! The live metrics' flags (`--metrics-listen` and its two companions), a group of its
//! own that a run, `sweep` and `compare --live` flatten; checked in `config/metrics.rs`.

use std::time::Duration;

use crate::drive::plan::MAX_TIMEOUT;
use crate::units::duration_in;

/// Live Prometheus metrics while the command runs (a run, `sweep`, `compare --live`; see
/// docs/metrics.md).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Live metrics")]
pub struct MetricsArgs {
    /// Serve Prometheus metrics on http://ADDR:PORT/metrics while tailrate runs: requests
    /// by outcome, target and achieved rate, in flight, backlog, latency histograms per
    /// command and metric, the self-checks. A loopback address unless --metrics-listen-any.
    #[arg(long = "metrics-listen", value_name = "ADDR:PORT")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Let --metrics-listen take an address other hosts can reach (the page names the
    /// server and the workload).
    #[arg(long = "metrics-listen-any", requires = "metrics_listen")]
    pub metrics_listen_any: bool,
    /// After the last test, keep serving the metrics this long, so that a scraper reads
    /// the final values [range: 0s to 1h].
    #[arg(long = "metrics-linger", value_parser = duration_in(Duration::ZERO, MAX_TIMEOUT, true, "an hour"), allow_hyphen_values = true, default_value = "2s", value_name = "DURATION", requires = "metrics_listen")]
    pub metrics_linger: Duration,
}

impl Default for MetricsArgs {
    fn default() -> Self {
        super::groups::defaults()
    }
}
