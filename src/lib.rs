//! tailrate: a load generator and latency profiler for Redis-protocol servers.
//!
//! Module map, from the top layer down (each module's own doc says what it owns; a
//! module imports only from the layers below it):
//! - [`cli`]: what the user typed (clap derive), redis-benchmark-compatible flags.
//! - [`sweep`], [`tune`]: the commands of many runs: rate sweeps with the SLO capacity
//!   search, and the search for the best `--workers` setting.
//! - [`merge`]: `tailrate merge`, the shards of one plan added into one report.
//! - [`reread`]: `tailrate report`, saved results shown again (their text, their page).
//! - [`app`]: orchestration: probe the server, measure each test, export.
//! - [`progress`]: the live status line.
//! - [`export`]: every printed or written form: text, CSV, JSON, `.hlog`, the sweep,
//!   compare and tune texts, the SVG plots and the HTML pages.
//! - [`judge`]: every verdict, pure: self-checks, bottleneck, comparisons, SLO verdicts
//!   and the capacity.
//! - [`report`]: the report models (serde): run, latency, sweep, tune, compare, merged,
//!   server, and the verdict types.
//! - [`stats`]: pure numbers: intervals on percentiles, runs pooled and the objective test (exceedance), MOVER.
//! - [`config`]: from [`cli::Args`] to one checked [`config::Command`]; every check
//!   across flags.
//! - [`drive`]: the one driver loop (closed and open loop as data), schedules, pacing.
//! - [`net`]: endpoints and [`net::Connection`], the only owner of socket I/O.
//! - [`workload`]: command templates, the default test suite, random keys and values.
//! - [`record`]: histograms per command and metric, counts, interval records.
//! - [`resp`]: pure RESP2/RESP3 codec: encode commands, frame and parse replies.
//! - [`units`]: parsing of rates, durations and sizes typed by users.
//! - [`text`]: text from a server or the OS made safe to print (control characters
//!   escaped).
//! - [`output`]: where an output goes and how it is written (atomically to a file,
//!   directly to a device or a FIFO), and the check of its path before a run.

pub mod app;
pub mod cli;
pub mod compare;
pub mod config;
pub mod drive;
pub mod export;
pub mod host;
pub mod input;
pub mod judge;
pub mod merge;
pub mod net;
pub mod output;
pub mod progress;
pub mod record;
pub mod report;
pub mod reread;
pub mod resp;
pub mod stats;
pub mod sweep;
pub mod text;
pub mod tune;
pub mod units;
pub mod workload;
