//! Unit tests of `cli.rs`.

#![allow(clippy::unwrap_used)]
use super::*;
use clap::CommandFactory;

#[test]
fn clap_definition_is_consistent() {
    Args::command().debug_assert();
}

#[test]
fn dash_h_is_the_host_and_a_custom_command_follows_the_flags() {
    let args = Args::try_parse_from([
        "tailrate",
        "-h",
        "10.1.1.1",
        "-n",
        "1000",
        "-r",
        "100",
        "SET",
        "k:__rand_int__",
        "v",
    ])
    .unwrap();
    assert_eq!(args.run.host, "10.1.1.1");
    assert_eq!(args.run.requests, Some(1000));
    assert_eq!(args.run.command, ["SET", "k:__rand_int__", "v"]);
    assert!(args.subcommand.is_none());
}

#[test]
fn an_unknown_flag_is_an_error_but_a_command_argument_may_start_with_a_dash() {
    assert!(Args::try_parse_from(["tailrate", "--no-such-flag"]).is_err());
    let args = Args::try_parse_from(["tailrate", "-q", "INCRBY", "k", "-1"]).unwrap();
    assert_eq!(args.run.command, ["INCRBY", "k", "-1"]);
}

#[test]
fn workload_flags_repeat_and_leave_the_trailing_command_alone() {
    let args = Args::try_parse_from([
        "tailrate",
        "--command",
        "SET __key__ __data__",
        "--command",
        "GET __key__",
        "--key-pattern",
        "zipf",
        "--zipf-exponent",
        "0.9",
        "--read-ratio",
        "0.8",
        "GET",
        "--command",
    ])
    .unwrap();
    assert_eq!(
        args.run.mix_command,
        ["SET __key__ __data__", "GET __key__"]
    );
    assert_eq!(args.run.key_pattern, Some(KeyPattern::Zipf));
    assert_eq!(
        (args.run.zipf_exponent, args.run.read_ratio),
        (Some(0.9), Some(0.8))
    );
    assert_eq!(args.run.command, ["GET", "--command"]);
}

#[test]
fn a_typed_data_size_conflicts_with_size_distributions_but_the_default_does_not() {
    assert!(Args::try_parse_from(["tailrate", "-d", "10", "--data-size-list", "1:1"]).is_err());
    assert!(
        Args::try_parse_from([
            "tailrate",
            "--data-size-range",
            "1-2",
            "--data-size-list",
            "1:1"
        ])
        .is_err()
    );
    assert!(Args::try_parse_from(["tailrate", "--data-size-range", "1-2"]).is_ok());
}

#[test]
fn tune_is_a_subcommand_with_run_flags() {
    let args = Args::try_parse_from([
        "tailrate",
        "tune",
        "--max-trials",
        "5",
        "-c",
        "2",
        "-t",
        "get",
    ])
    .unwrap();
    match args.subcommand {
        Some(Command::Tune(tune)) => assert_eq!((tune.max_trials, tune.run.clients), (5, 2)),
        other => panic!("expected tune, got {other:?}"),
    }
}

#[test]
fn sweep_is_a_subcommand_with_run_flags() {
    let args = Args::try_parse_from([
        "tailrate",
        "sweep",
        "--rates",
        "1k..2k:1k",
        "-t",
        "get",
        "-p",
        "7000",
    ])
    .unwrap();
    match args.subcommand {
        Some(Command::Sweep(sweep)) => {
            assert_eq!(sweep.rates, "1k..2k:1k");
            assert_eq!(sweep.run.port, 7000);
        }
        other => panic!("expected sweep, got {other:?}"),
    }
}
