//! A trace read through once, and how it will be replayed ([`TracePlan`]): what a
//! replay, a sweep of one and the report's record of it are built from. A bad line is
//! refused here, with its number, before anything connects.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::ConfigError;
use crate::cli::TraceArgs;
use crate::drive::plan::MAX_RUN;
use crate::drive::{MAX_CONNECTIONS, Replay, ReplayOptions};
use crate::workload::replay::{MAX_COMMAND_RECORDS, ReplayFilter, TraceShape, admin_commands};
use crate::workload::{Template, Test};

/// Connections of a trace without clients, unless `--connections` says.
const CONNECTIONS_WITHOUT_CLIENTS: usize = 50;

/// A trace read through, and how it will be replayed.
#[derive(Debug, Clone)]
pub struct TracePlan {
    /// The trace's path as given.
    pub file: PathBuf,
    /// What the scan found.
    pub shape: TraceShape,
    /// How it is replayed.
    pub options: ReplayOptions,
    /// The test's command names: the trace's, and `select` when one may be needed.
    pub names: Vec<String>,
}

impl TracePlan {
    /// Reads `file` through as `args` say, to replay at `speed` times the recorded pace,
    /// or at a mean `rate`, or as recorded.
    pub fn of(
        file: &Path,
        args: &TraceArgs,
        speed: Option<f64>,
        rate: Option<f64>,
    ) -> Result<TracePlan, ConfigError> {
        let metadata = std::fs::metadata(file).map_err(|e| trace_error(file, e.into()))?;
        if !metadata.is_file() {
            return Err(ConfigError::invalid(
                "FILE",
                format!(
                    "{} is not a regular file: a replay reads its trace twice (once to check \
                     it, once to send it), so save a pipe's output to a file first",
                    file.display()
                ),
            ));
        }
        let lower = |list: &[String]| list.iter().map(|c| c.trim().to_lowercase()).collect();
        let filter = ReplayFilter {
            only: lower(&args.commands),
            exclude: lower(&args.exclude),
            limit: args.limit,
        };
        let shape = TraceShape::scan(file, args.format, args.skip_bad_lines, &filter)
            .map_err(|e| trace_error(file, e))?;
        if shape.commands == 0 {
            let left: Vec<String> = shape
                .left_out
                .iter()
                .map(|(name, n)| format!("{name} {n}"))
                .collect();
            return Err(ConfigError::invalid(
                "FILE",
                format!(
                    "{} holds no command to replay{}",
                    file.display(),
                    if left.is_empty() {
                        String::new()
                    } else {
                        format!(" (left out: {})", left.join(", "))
                    }
                ),
            ));
        }
        refuse_admin_commands(file, &shape, args.allow_admin_commands)?;
        let speed_flag = if rate.is_some() { "--rate" } else { "--speed" };
        let speed = match (speed, rate) {
            (_, Some(rate)) => {
                let Some(mean) = shape.mean_rate_per_sec() else {
                    return Err(ConfigError::invalid(
                        "--rate",
                        "the trace's commands were all recorded at one instant, so it has no \
                         rate to scale: give --speed, or replay it as recorded",
                    ));
                };
                rate / mean
            }
            (Some(speed), None) => speed,
            (None, None) => 1.0,
        };
        // More connections than clients would stay idle: a client's commands keep to one.
        check_pass_length(&shape, speed, speed_flag)?;
        let connections = match (args.connections, shape.clients.len()) {
            (Some(n), 0) => n,
            (Some(n), clients) => n.min(clients),
            (None, 0) => CONNECTIONS_WITHOUT_CLIENTS,
            (None, clients) => clients.min(MAX_CONNECTIONS),
        };
        let mut names: Vec<String> = shape.names.iter().map(|(n, _)| n.clone()).collect();
        if shape.other_databases && !names.iter().any(|n| n == "select") {
            names.push("select".into());
        }
        Ok(TracePlan {
            file: file.to_path_buf(),
            options: ReplayOptions {
                skip_bad_lines: args.skip_bad_lines,
                filter,
                speed,
                connections,
                repeat: args.repeat_trace,
            },
            shape,
            names,
        })
    }

    /// Refuses more distinct commands times threads than [`MAX_COMMAND_RECORDS`]: each
    /// thread keeps every command's histograms (`threads` as typed; a replay uses at most
    /// one per connection).
    pub fn check_threads(&self, threads: usize) -> Result<(), ConfigError> {
        let threads = threads.min(self.options.connections).max(1);
        let commands = self.names.len();
        if commands.saturating_mul(threads) <= MAX_COMMAND_RECORDS {
            return Ok(());
        }
        let fit = MAX_COMMAND_RECORDS / commands.max(1);
        let fewer = if fit >= 1 {
            format!("give --threads {fit} or fewer, or ")
        } else {
            String::new()
        };
        Err(ConfigError::invalid(
            "--threads",
            format!(
                "the trace has {commands} distinct commands, and each of {threads} threads \
                 keeps latency histograms for every one: at most {MAX_COMMAND_RECORDS} \
                 commands times threads; {fewer}leave commands out with --commands or \
                 --exclude"
            ),
        ))
    }

    /// Schedule time of one pass over the trace at its speed: from the first command to
    /// just past the last.
    pub fn pass_length(&self) -> Duration {
        let secs = self.shape.span_secs() / self.options.speed;
        Duration::from_secs_f64(secs) + Duration::from_millis(1)
    }

    /// The run's test: one command per name, weighted by its count (the weights only
    /// describe the mix; the trace picks each command).
    pub fn test(&self) -> Test {
        let templates = self
            .names
            .iter()
            .map(|n| Template::command(&[n.as_bytes()], false))
            .collect();
        let weights: Vec<u64> = self
            .names
            .iter()
            .map(|n| {
                let count = self.shape.names.iter().find(|(m, _)| m == n);
                count.map_or(1, |(_, c)| (*c).max(1))
            })
            .collect();
        Test::weighted("REPLAY".into(), templates, &weights)
    }

    /// The trace's format as its flag names it (`monitor`, `json-lines`, `csv`); empty
    /// when the scan named none.
    pub fn format_name(&self) -> String {
        self.shape
            .format
            .and_then(|f| clap::ValueEnum::to_possible_value(&f))
            .map_or_else(String::new, |v| v.get_name().to_string())
    }

    /// The driver's replay of this trace, as planned.
    pub fn replay(&self) -> Arc<Replay> {
        Arc::new(Replay::new(
            self.file.clone(),
            &self.shape,
            &self.names,
            self.options.clone(),
        ))
    }
}

/// Refuses a speed at which one pass over the trace would outlast a run's longest.
pub(super) fn check_pass_length(
    shape: &TraceShape,
    speed: f64,
    flag: &'static str,
) -> Result<(), ConfigError> {
    let secs = shape.span_secs() / speed;
    if secs.is_finite() && secs <= MAX_RUN.as_secs_f64() {
        return Ok(());
    }
    // A speed as typed (`1x`, `0.5x`), in scientific notation only below a thousandth;
    // the pass in days, as the limit is.
    let shown = if speed >= 1e-3 {
        let fixed = format!("{speed:.3}");
        fixed
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{speed:.1e}")
    };
    let days = secs / 86_400.0;
    let pass = if days.is_finite() {
        format!("{days:.0} days")
    } else {
        "for ever".to_string()
    };
    Err(ConfigError::invalid(
        flag,
        format!(
            "at {shown}x the trace's {:.3} s would take {pass}, more than a run may last (30 \
             days): give a higher {flag}, or cut the trace",
            shape.span_secs()
        ),
    ))
}

fn trace_error(file: &Path, error: crate::workload::trace::TraceError) -> ConfigError {
    ConfigError::Trace {
        path: file.to_path_buf(),
        error,
    }
}

/// Refuses a trace holding commands that change the server beyond its keys, naming each
/// with its count, unless `allowed` (`--allow-admin-commands`).
fn refuse_admin_commands(
    file: &Path,
    shape: &TraceShape,
    allowed: bool,
) -> Result<(), ConfigError> {
    let admin = admin_commands(&shape.names);
    if allowed || admin.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = admin.iter().map(|(n, c)| format!("{n} {c}")).collect();
    let names: Vec<&str> = admin.iter().map(|(n, _)| n.as_str()).collect();
    Err(ConfigError::invalid(
        "FILE",
        format!(
            "{} holds commands that change the server beyond the keys it replays ({}): \
             replay them with --allow-admin-commands, or leave them out with --exclude {}",
            file.display(),
            listed.join(", "),
            names.join(",")
        ),
    ))
}
