//! A replay's memory follows what it records, not how many distinct commands a trace
//! names: a 60 KB MONITOR trace of 1,000 distinct command names (each twice, from four
//! clients) replays on four threads under [`REPLAY_RSS_LIMIT_KB`], and a trace with more
//! commands times threads than a replay keeps records for is refused naming `--threads`.

use std::path::Path;
use std::time::Duration;

use super::super::harness::{RedisServer, assert_usage_error};
use super::Watched;

/// Peak RSS the replay may reach (each command's histograms once took about 1.5 MB on
/// every thread: gigabytes).
const REPLAY_RSS_LIMIT_KB: u64 = 300 * 1024;

/// Writes a MONITOR trace of `lines` commands named `X0` to `X{names - 1}` in turn, from
/// `clients` clients, 2,000 a second.
fn write_trace(path: &Path, lines: usize, names: usize, clients: usize) {
    let text: String = (0..lines)
        .map(|i| {
            format!(
                "{:.6} [0 127.0.0.1:{}] \"X{}\" \"k\"\n",
                1_796_590_000.0 + i as f64 / 2000.0,
                50_000 + i % clients,
                i % names
            )
        })
        .collect();
    std::fs::write(path, text).expect("writing the trace");
}

#[test]
fn a_trace_of_1000_distinct_commands_replays_on_4_threads_under_300_mb() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let trace = dir.path().join("verbs.monitor");
    write_trace(&trace, 2000, 1000, 4);
    let port = server.port().to_string();
    let run = Watched::spawn(&[
        "replay",
        trace.to_str().expect("a UTF-8 path"),
        "-p",
        &port,
        "--threads",
        "4",
        "-q",
        "--no-progress",
    ])
    .wait(Duration::from_secs(60));
    run.assert_no_panic();
    eprintln!("peak RSS {} KiB", run.peak_rss_kb);
    assert!(
        run.peak_rss_kb > 0 && run.peak_rss_kb < REPLAY_RSS_LIMIT_KB,
        "peak RSS {} KiB, over {REPLAY_RSS_LIMIT_KB} KiB",
        run.peak_rss_kb
    );
    // Every command is unknown to the server: the replay ran, and each got its error.
    assert!(
        run.stdout.contains("2000 errors") || run.stderr.contains("2000 ended in an error"),
        "{run:?}"
    );
}

#[test]
fn more_commands_times_threads_than_a_replay_keeps_is_refused_naming_threads() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let trace = dir.path().join("verbs.monitor");
    // Eight clients: a replay takes up to eight threads.
    write_trace(&trace, 2000, 1000, 8);
    let file = trace.to_str().expect("a UTF-8 path");
    assert_usage_error(
        &["replay", file, "-p", "1", "--threads", "5"],
        &[
            "--threads",
            "1000 distinct commands",
            "--threads 4 or fewer",
        ],
    );
    assert_usage_error(
        &[
            "sweep",
            "--replay",
            file,
            "--speeds",
            "1,2",
            "-p",
            "1",
            "--threads",
            "8",
        ],
        &["--threads", "1000 distinct commands"],
    );
}
