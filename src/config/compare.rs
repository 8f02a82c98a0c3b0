//! What `tailrate compare` was asked to do, checked: two report files, or the live duet
//! (its two endpoints, rounds and the run every round starts from); the metric, the
//! `--fail-if-slower` threshold and the output. Reading the files and running the rounds
//! are `compare`'s. The flags of the live duet need `--live`, which clap checks.

use std::path::PathBuf;
use std::time::Duration;

use super::{ConfigError, RunConfig};
use crate::cli::{CompareArgs, RunArgs};
use crate::drive::Stop;
use crate::output;
use crate::record::Metric;

/// The equivalence margin without `--margin`: 5% of A's value.
pub const DEFAULT_MARGIN: f64 = 0.05;

/// Rounds of `--live` when `--rounds` is not given: enough batches for the batch-means
/// estimate to measure the spread between rounds (confidence's `MIN_GROUPS`).
pub const DEFAULT_ROUNDS: usize = 10;
/// Each side's time per round when `--round-duration` is not given.
pub const DEFAULT_ROUND: Duration = Duration::from_secs(1);

/// A checked `tailrate compare`.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    /// Where the two sides come from.
    pub source: Source,
    /// The metric compared; `None` for every metric both have.
    pub metric: Option<Metric>,
    /// `--fail-if-slower` as a fraction (0.05 for `5%`).
    pub fail_if_slower: Option<f64>,
    /// `--margin` as a fraction (0.05 for `5%`, the default).
    pub margin: f64,
    /// `--json FILE` (`-`: standard output, in place of the table).
    pub json: Option<PathBuf>,
    /// `--html FILE`: the comparison's page.
    pub html: Option<PathBuf>,
    /// Decimal places of milliseconds in the table.
    pub precision: usize,
}

/// The two sides.
#[derive(Debug, Clone)]
pub enum Source {
    /// Two saved reports, A then B.
    Files {
        /// A's file.
        a: PathBuf,
        /// B's file.
        b: PathBuf,
    },
    /// Two servers measured in turns.
    Live(Box<LiveConfig>),
}

/// A checked `--live` duet.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    /// A's run: open loop, `--round-duration` long, no files of its own.
    pub a: RunConfig,
    /// B's run: the same, on B's endpoint.
    pub b: RunConfig,
    /// Rounds; each runs every test once on each side.
    pub rounds: usize,
    /// Each side's time per round.
    pub round: Duration,
}

impl CompareConfig {
    /// Checks `args`; with `--live`, builds A's and B's runs.
    pub fn from_args(args: &CompareArgs) -> Result<Self, ConfigError> {
        let metric = match &args.metric {
            None if args.all_metrics => None,
            None => Some(Metric::Response),
            Some(m) => Some(Metric::named(&m.trim().replace('-', "_")).ok_or_else(|| {
                ConfigError::invalid(
                    "--metric",
                    format!(
                        "{m:?}: give one of {}",
                        Metric::ALL.map(Metric::name).join(", ")
                    ),
                )
            })?),
        };
        let fail_if_slower = args
            .fail_if_slower
            .as_deref()
            .map(|t| parse_percent("--fail-if-slower", t))
            .transpose()?;
        let margin = match args.margin.as_deref() {
            Some(t) => parse_percent("--margin", t)?,
            None => DEFAULT_MARGIN,
        };
        let json = args.json.json.clone();
        if let Some(path) = &json {
            output::check(path).map_err(|why| ConfigError::Output {
                flag: "--json",
                path: path.clone(),
                why,
            })?;
        }
        let html = args.html.html.clone();
        if let Some(path) = &html {
            if let Some(json) = &json
                && output::same_place(json, path)
            {
                return Err(ConfigError::SameOutput {
                    a: "--json",
                    b: "--html",
                    place: path.display().to_string(),
                });
            }
            super::check_html(path)?;
        }
        let precision = args.precision.precision.unwrap_or(3);
        if precision > 9 {
            return Err(ConfigError::invalid(
                "--precision",
                "at most 9 decimal places (nanoseconds)",
            ));
        }
        let source = if args.live {
            Source::Live(Box::new(live(args)?))
        } else {
            files(args)?
        };
        Ok(CompareConfig {
            source,
            metric,
            fail_if_slower,
            margin,
            json,
            html,
            precision,
        })
    }
}

/// `5%` or `5`: a percentage, as a fraction.
fn parse_percent(flag: &'static str, text: &str) -> Result<f64, ConfigError> {
    let number = text.trim().strip_suffix('%').unwrap_or(text.trim()).trim();
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v / 100.0),
        Ok(_) => Err(ConfigError::invalid(
            flag,
            format!("{text:?}: give a percentage of A's value, 0% or more (5%)"),
        )),
        Err(_) => Err(ConfigError::invalid(
            flag,
            format!("{text:?} is not a percentage: give one like 5% or 2.5%"),
        )),
    }
}

/// The two report files of a comparison of saved runs (the flags of the live duet need
/// `--live`, which clap checks).
fn files(args: &CompareArgs) -> Result<Source, ConfigError> {
    match args.reports.as_slice() {
        [a, b] => Ok(Source::Files {
            a: a.clone(),
            b: b.clone(),
        }),
        other => Err(ConfigError::ReportCount { given: other.len() }),
    }
}

/// The live duet: the two endpoints, and the run of each side. clap has checked that
/// `--rate`, `--a` and `--b` are given.
fn live(args: &CompareArgs) -> Result<LiveConfig, ConfigError> {
    // Checked here, not by clap: a REPORT that conflicted with `--live` there would excuse
    // every flag that requires `--live` from needing it whenever reports are given.
    if !args.reports.is_empty() {
        return Err(ConfigError::Conflict {
            a: "--live",
            b: "REPORT",
            why: "--live measures two servers instead of reading reports; a custom command \
                  goes after --",
        });
    }
    let run = args.run_args();
    // Both are in range where clap read them (src/cli.rs).
    let rounds = args.rounds.unwrap_or(DEFAULT_ROUNDS);
    let round = args.round_duration.unwrap_or(DEFAULT_ROUND);
    let (Some(a), Some(b)) = (&args.a, &args.b) else {
        return Err(ConfigError::invalid(
            "--live",
            "needs the two servers, --a HOST:PORT --b HOST:PORT",
        ));
    };
    // One seed for both sides, so their schedules and keys are the same draws.
    let seed = run.checks.seed.unwrap_or_else(crate::workload::fresh_seed);
    let side = |flag: &'static str, endpoint: &str| -> Result<RunConfig, ConfigError> {
        let mut side_args = with_endpoint(&run, flag, endpoint)?;
        side_args.checks.seed = Some(seed);
        side_args.duration.duration = Some(round);
        let mut config = RunConfig::from_args(&side_args, None)?;
        config.plan.stop = Stop::After(round);
        // The comparison is the output; the servers' own counters are not compared, and
        // reading them between turns would only lengthen each round.
        config.output.json = None;
        config.output.server_stats = false;
        Ok(config)
    };
    Ok(LiveConfig {
        a: side("--a", a)?,
        b: side("--b", b)?,
        rounds,
        round,
    })
}

/// `run` pointed at `endpoint`: `HOST:PORT`, a URI (`redis://`, `rediss://`,
/// `unix://`), or a socket path.
fn with_endpoint(
    run: &RunArgs,
    flag: &'static str,
    endpoint: &str,
) -> Result<RunArgs, ConfigError> {
    let mut args = run.clone();
    let text = endpoint.trim();
    if text.contains("://") {
        args.endpoint.uri = Some(text.to_string());
    } else if text.starts_with('/') {
        args.endpoint.socket = Some(PathBuf::from(text));
    } else {
        let Some((host, port)) = text.rsplit_once(':') else {
            return Err(ConfigError::invalid(
                flag,
                format!("{endpoint:?}: give HOST:PORT, a redis:// URI or a socket path"),
            ));
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port: u16 = port.parse().ok().filter(|&p| p > 0).ok_or_else(|| {
            ConfigError::invalid(flag, format!("{endpoint:?}: the port must be 1 to 65535"))
        })?;
        if host.is_empty() {
            return Err(ConfigError::invalid(
                flag,
                format!("{endpoint:?}: the host is empty"),
            ));
        }
        args.endpoint.host = host.to_string();
        args.endpoint.port = port;
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_percentage_reads_with_or_without_its_sign_and_refuses_the_rest() {
        assert_eq!(parse_percent("--fail-if-slower", "5%").unwrap(), 0.05);
        assert_eq!(parse_percent("--fail-if-slower", " 2.5 ").unwrap(), 0.025);
        assert_eq!(parse_percent("--fail-if-slower", "0%").unwrap(), 0.0);
        for bad in ["-1%", "five", "", "inf%", "5%%"] {
            let e = parse_percent("--fail-if-slower", bad)
                .unwrap_err()
                .to_string();
            assert!(e.contains("--fail-if-slower"), "{bad}: {e}");
        }
    }

    #[test]
    fn an_endpoint_is_host_and_port_a_uri_or_a_socket() {
        use clap::Parser;
        let run = crate::cli::Args::try_parse_from(["tailrate"]).unwrap().run;
        let a = with_endpoint(&run, "--a", "10.0.0.2:7001").unwrap();
        assert_eq!(
            (a.endpoint.host.as_str(), a.endpoint.port),
            ("10.0.0.2", 7001)
        );
        let a = with_endpoint(&run, "--a", "[::1]:7001").unwrap();
        assert_eq!(a.endpoint.host, "::1");
        let u = with_endpoint(&run, "--b", "rediss://h:6380").unwrap();
        assert_eq!(u.endpoint.uri.as_deref(), Some("rediss://h:6380"));
        let s = with_endpoint(&run, "--b", "/tmp/r.sock").unwrap();
        assert_eq!(s.endpoint.socket, Some(PathBuf::from("/tmp/r.sock")));
        for bad in ["localhost", "h:0", "h:port", ":7000"] {
            let e = with_endpoint(&run, "--b", bad).unwrap_err().to_string();
            assert!(e.contains("--b"), "{bad}: {e}");
        }
    }
}
