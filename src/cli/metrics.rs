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
    /// Serve Prometheus metrics on http://ADDR:PORT/metrics while tailrate runs; a port
    /// alone means 127.0.0.1:PORT.
    ///
    /// Requests by outcome, target and achieved rate, in flight, backlog, latency
    /// histograms per command and metric, the self-checks. A loopback address unless
    /// --metrics-listen-any; a port alone (9464) or localhost:9464 means
    /// 127.0.0.1:9464.
    #[arg(long = "metrics-listen", value_name = "ADDR:PORT", value_parser = parse_listen)]
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

/// Reads `--metrics-listen`: an `ADDR:PORT`, or a port alone or `localhost:PORT`, each
/// read as `127.0.0.1:PORT` (the loopback address the page defaults to).
fn parse_listen(text: &str) -> Result<std::net::SocketAddr, String> {
    let trimmed = text.trim();
    if let Ok(addr) = trimmed.parse() {
        return Ok(addr);
    }
    let port = trimmed
        .strip_prefix("localhost:")
        .unwrap_or(trimmed)
        .parse::<u16>()
        .map_err(|_| {
            format!(
                "'{text}' is not ADDR:PORT: give e.g. 127.0.0.1:9464 (a port alone means \
                 127.0.0.1), or [::1]:9464"
            )
        })?;
    Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
}

impl Default for MetricsArgs {
    fn default() -> Self {
        super::groups::defaults()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_port_alone_or_localhost_listens_on_loopback_and_other_text_names_the_form() {
        let local = "127.0.0.1:7490".parse().unwrap();
        assert_eq!(parse_listen("7490").unwrap(), local);
        assert_eq!(parse_listen("localhost:7490").unwrap(), local);
        assert_eq!(
            parse_listen("[::1]:7490").unwrap(),
            "[::1]:7490".parse().unwrap()
        );
        let e = parse_listen("example.com:7490").unwrap_err();
        assert!(e.contains("127.0.0.1:9464"), "{e}");
        assert!(parse_listen("70000").is_err());
    }
}
