//! Nothing is allocated per request in steady state: a counting global allocator
//! around in-process runs of different lengths. Per-interval work (a fresh recorder
//! every interval, a channel message) allocates a bounded amount per interval; a
//! per-request allocation would add one allocation per extra request.

use std::alloc::System;

use clap::Parser;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tailrate::app::{self, Io};
use tailrate::cli::Args;
use tailrate::config::RunConfig;
use tailrate::drive::Cancel;

use super::harness::RedisServer;

/// Counts every allocation of this test process (nextest runs each test in its own process).
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Allocations made by one in-process run of `argv`.
fn allocations_of(argv: &[&str]) -> u64 {
    let mut full = vec!["tailrate", "--no-progress", "-q"];
    full.extend(argv);
    let args = Args::try_parse_from(&full).unwrap();
    let config = RunConfig::from_args(&args.run, None).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let region = Region::new(GLOBAL);
    let status = app::run(
        &config,
        Vec::new(),
        &Cancel::new(),
        Io {
            stdout: &mut out,
            stderr: &mut err,
            stderr_is_terminal: false,
            metrics: None,
        },
    )
    .unwrap();
    let stats = region.change();
    let used = (stats.allocations + stats.reallocations) as u64;
    assert_eq!(
        status,
        app::Status::Completed,
        "{}",
        String::from_utf8_lossy(&err)
    );
    used
}

#[test]
fn a_closed_loop_allocates_nothing_per_request() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let base = &["-p", &port, "-c", "8", "-P", "4", "-t", "set", "-r", "1000"];
    let short = allocations_of(&[&base[..], &["-n", "20000"]].concat());
    let long = allocations_of(&[&base[..], &["-n", "220000"]].concat());
    let extra = long.saturating_sub(short);
    eprintln!("allocations: {short} -> {long}");
    assert!(
        extra < 2_000,
        "200,000 more requests made {extra} more allocations ({short} -> {long})"
    );
}

#[test]
fn workers_allocate_nothing_per_request() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    // Batches that fill (size 4 of 16 workers per connection) and batches that wait out a delay.
    for batching in [
        &["--pipeline-size", "4"][..],
        &["--pipeline-size", "64", "--pipeline-delay", "20us"][..],
    ] {
        let base = [
            &[
                "-p",
                &port,
                "-c",
                "4",
                "--workers",
                "64",
                "-t",
                "set",
                "-r",
                "1000",
            ][..],
            batching,
        ]
        .concat();
        let short = allocations_of(&[&base[..], &["-n", "20000"]].concat());
        let long = allocations_of(&[&base[..], &["-n", "220000"]].concat());
        let extra = long.saturating_sub(short);
        eprintln!("{batching:?}: allocations: {short} -> {long}");
        assert!(
            extra < 2_000,
            "{batching:?}: 200,000 more requests made {extra} more allocations ({short} -> {long})"
        );
    }
}

#[test]
fn an_open_loop_allocates_nothing_per_request() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let base = &[
        "-p", &port, "-c", "8", "--rate", "50000", "-t", "get", "-r", "1000", "--warmup", "200ms",
    ];
    let short = allocations_of(&[&base[..], &["--duration", "1s"]].concat());
    let long = allocations_of(&[&base[..], &["--duration", "3s"]].concat());
    let extra = long.saturating_sub(short);
    eprintln!("allocations: {short} -> {long}");
    // Two more seconds are 40 more 50 ms batches, each kept as a few coarse histograms
    // for the percentiles' intervals and the tail's attribution, whose counts start
    // empty and grow by steps as values land (a list of indices, then a window: about
    // 85 allocations a batch measured), and the host meter's samples (a few a batch,
    // when it lists the threads again): storage that grows with time, not with requests
    // (one a request would be 100,000).
    assert!(
        extra < 1_000 + 40 * 100,
        "100,000 more requests made {extra} more allocations ({short} -> {long})"
    );
}
