//! tailrate: a load generator and latency profiler for Redis-protocol servers.
//!
//! Module map (each module's own doc says what it owns):
//! - [`cli`]: what the user typed (clap derive), redis-benchmark-compatible flags.
//! - [`config`]: the validated [`config::RunConfig`]; every check across flags.
//! - [`app`]: orchestration: connect, run each test, export.
//! - [`resp`]: pure RESP2/RESP3 codec: encode commands, frame and parse replies.
//! - [`net`]: endpoints and [`net::Connection`], the only owner of socket I/O.
//! - [`workload`]: command templates, the default test suite, random keys and values.
//! - [`drive`]: the one driver loop (closed and open loop as data), schedules, pacing.
//! - [`record`]: histograms per command and metric, counts, interval snapshots.
//! - [`report`]: the report model (serde) and its text, csv and json exporters.
//! - [`progress`]: the live status line.
//! - [`sweep`]: open-loop rate sweeps, the SLO capacity search, plots.
//! - [`tune`]: the search for the best `--workers` setting.
//! - [`units`]: parsing of rates, durations and sizes typed by users.

pub mod app;
pub mod cli;
pub mod config;
pub mod drive;
pub mod net;
pub mod progress;
pub mod record;
pub mod report;
pub mod resp;
pub mod sweep;
pub mod tune;
pub mod units;
pub mod workload;
