//! Unit tests of `cli/`.

#![allow(clippy::unwrap_used)]
use super::*;
use crate::workload::KeyPattern;
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
    assert_eq!(args.run.endpoint.host, "10.1.1.1");
    assert_eq!(args.run.benchmark.requests, Some(1000));
    assert_eq!(args.run.workload.command, ["SET", "k:__rand_int__", "v"]);
    assert!(args.subcommand.is_none());
}

#[test]
fn an_unknown_flag_is_an_error_but_a_command_argument_may_start_with_a_dash() {
    assert!(Args::try_parse_from(["tailrate", "--no-such-flag"]).is_err());
    let args = Args::try_parse_from(["tailrate", "-q", "INCRBY", "k", "-1"]).unwrap();
    assert_eq!(args.run.workload.command, ["INCRBY", "k", "-1"]);
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
        args.run.workload.mix_command,
        ["SET __key__ __data__", "GET __key__"]
    );
    assert_eq!(args.run.workload.key_pattern, Some(KeyPattern::Zipf));
    assert_eq!(
        (
            args.run.workload.zipf_exponent,
            args.run.workload.read_ratio
        ),
        (Some(0.9), Some(0.8))
    );
    assert_eq!(args.run.workload.command, ["GET", "--command"]);
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
        Some(Command::Tune(tune)) => assert_eq!((tune.max_trials, tune.connection.clients), (5, 2)),
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
            assert_eq!(sweep.rates.as_deref(), Some("1k..2k:1k"));
            assert_eq!(sweep.endpoint.port, 7000);
        }
        other => panic!("expected sweep, got {other:?}"),
    }
}

#[test]
fn every_group_parses_empty_into_its_defaults() {
    let run = RunArgs::default();
    assert_eq!(
        (run.endpoint.host.as_str(), run.endpoint.port),
        ("127.0.0.1", 6379)
    );
    assert_eq!(
        (
            run.connection.clients,
            run.benchmark.pipeline,
            run.repeat.repeat
        ),
        (50, 1, 1)
    );
    assert_eq!(run.open_loop.max_inflight, 64);
    assert!(run.rate.rate.is_none() && run.workers.workers.is_none());
}

#[test]
fn a_subcommand_refuses_the_groups_it_does_not_take_by_clap() {
    use clap::error::ErrorKind;
    for argv in [
        &["tailrate", "sweep", "--rates", "1k", "-n", "10"][..],
        &["tailrate", "sweep", "--rates", "1k", "--rate", "1k"],
        &["tailrate", "sweep", "--rates", "1k", "--json", "x"],
        &["tailrate", "tune", "--workers", "10"],
        &["tailrate", "tune", "-k", "0"],
        &["tailrate", "tune", "--hdr-log", "x"],
        &["tailrate", "compare", "--live", "--duration", "1s"],
        &["tailrate", "compare", "--live", "-s", "/tmp/s"],
        &["tailrate", "compare", "--live", "--repeat", "2"],
    ] {
        let e = Args::try_parse_from(argv).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownArgument, "{argv:?}: {e}");
    }
}

#[test]
fn compare_flags_of_a_live_duet_need_live_except_the_outputs() {
    use clap::error::ErrorKind;
    for argv in [
        &["tailrate", "compare", "a", "b", "--rounds", "3"][..],
        &["tailrate", "compare", "a", "b", "-c", "5"],
        &["tailrate", "compare", "a", "b", "--a", "h:1"],
        &["tailrate", "compare", "--live", "--a", "h:1", "--b", "h:2"],
    ] {
        let e = Args::try_parse_from(argv).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::MissingRequiredArgument,
            "{argv:?}: {e}"
        );
    }
    let args = Args::try_parse_from([
        "tailrate",
        "compare",
        "a",
        "b",
        "--json",
        "-",
        "--precision",
        "2",
    ])
    .unwrap();
    assert!(matches!(args.subcommand, Some(Command::Compare(_))));
}

#[test]
fn bash_completion_offers_test_names_for_t_and_any_list_is_still_taken() {
    let mut script = Vec::new();
    clap_complete::generate(
        clap_complete::Shell::Bash,
        &mut Args::command(),
        "tailrate",
        &mut script,
    );
    let script = String::from_utf8(script).unwrap();
    let t = script.find("                -t)").unwrap();
    let block = &script[t..t + 300];
    assert!(
        block.contains("ping") && block.contains("lrange_100"),
        "{block}"
    );
    assert!(!block.contains("compgen -f"), "{block}");
    // The names only help completion: a list of them, or a misspelt one the workload
    // then explains, parses.
    for tests in ["get,set", "gte"] {
        let args = Args::try_parse_from(["tailrate", "-t", tests]).unwrap();
        assert_eq!(args.run.workload.tests.as_deref(), Some(tests));
    }
}

/// `line` split as a shell would, for the help's examples: words, single quotes kept
/// together, a `#` comment, a pipe and a redirection dropped.
fn shell_words(line: &str) -> Vec<String> {
    let line = line.split(" # ").next().unwrap_or(line);
    let line = line.split(" | ").next().unwrap_or(line);
    let line = line.split(" > ").next().unwrap_or(line);
    let (mut words, mut word, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.trim().chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Every command's help ends with examples, and each example is a command line
/// tailrate takes.
#[test]
fn every_commands_help_has_examples_that_parse() {
    let main = Args::command();
    let mut commands = vec![main.clone()];
    commands.extend(
        main.get_subcommands()
            .filter(|c| c.get_name() != "help")
            .cloned(),
    );
    for command in commands {
        let help = command
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        assert!(
            help.starts_with("Examples:\n"),
            "{} has no Examples section: {help:?}",
            command.get_name()
        );
        let examples: Vec<Vec<String>> = help
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("tailrate "))
            .map(shell_words)
            .collect();
        assert!(!examples.is_empty(), "{}", command.get_name());
        for words in examples {
            if let Err(e) = Args::try_parse_from(&words) {
                panic!("{words:?} in {}'s help: {e}", command.get_name());
            }
        }
    }
}

/// The defaults a user needs to predict a run are in the help of their flags.
#[test]
fn the_help_gives_the_defaults_of_length_warmup_and_count() {
    let help = Args::command().render_long_help().to_string();
    for (flag, default) in [
        ("-n <REQUESTS>", "[default: 100000]"),
        ("--duration <DURATION>", "[default: 10s in the open loop"),
        ("--warmup <DURATION>", "[default: 0s"),
        ("--timeout <DURATION>", "[default: none"),
        ("--seed <SEED>", "[default: a fresh one"),
        ("--precision <DIGITS>", "[default: 3]"),
    ] {
        let at = help
            .find(&format!("  {flag}\n"))
            .unwrap_or_else(|| panic!("{flag} not in the help"));
        // The entry's words, whatever the wrapping.
        let entry: String = help[at..]
            .lines()
            .skip(1)
            .take(5)
            .flat_map(str::split_whitespace)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(entry.contains(default), "{flag}: {entry}");
    }
}

/// A connection flag typed with its default value is told from one left out: a sweep of a
/// replay refuses `-c 50` though 50 is `-c`'s default.
#[test]
fn a_connection_flag_typed_at_its_default_is_known_as_typed() {
    let typed = |argv: &[&str]| match Args::try_parse_from(argv).unwrap().subcommand {
        Some(Command::Sweep(a)) => a.connection.typed,
        _ => Args::try_parse_from(argv).unwrap().run.connection.typed,
    };
    let none = TypedConnection::default();
    let sweep = |extra: &[&'static str]| {
        let head = [
            "tailrate",
            "sweep",
            "--replay",
            "t.monitor",
            "--speeds",
            "1",
        ];
        typed(&[&head[..], extra].concat())
    };
    assert_eq!(sweep(&[]), none);
    assert_eq!(
        sweep(&["-c", "50"]),
        TypedConnection {
            clients: true,
            ..none
        }
    );
    assert_eq!(
        sweep(&["--dbnum", "0", "--cluster"]),
        TypedConnection {
            dbnum: true,
            cluster: true,
            ..none
        }
    );
    assert!(typed(&["tailrate", "sweep", "--rates", "1k", "-c", "50"]).clients);
    assert!(typed(&["tailrate", "-c", "50"]).clients);
    assert_eq!(typed(&["tailrate", "-n", "10"]), none);
}

/// A replay's connections and databases are the trace's: it has no `-c`, `--dbnum` or
/// `--cluster`, and clap refuses each as an argument it does not know, while the rest of
/// a run's connection flags are its.
#[test]
fn a_replay_has_no_c_dbnum_or_cluster_and_takes_the_other_connection_flags() {
    for extra in [&["-c", "50"][..], &["--dbnum", "0"], &["--cluster"]] {
        let argv = [&["tailrate", "replay", "t.monitor"][..], extra].concat();
        let err = Args::try_parse_from(&argv).unwrap_err();
        assert_eq!(
            err.kind(),
            clap::error::ErrorKind::UnknownArgument,
            "{argv:?}"
        );
        assert!(
            err.to_string().contains(&format!("'{}'", extra[0])),
            "{err}"
        );
    }
    let argv = [
        "tailrate",
        "replay",
        "t.monitor",
        "--threads",
        "2",
        "--user",
        "u",
        "-a",
        "p",
        "--tls",
        "--connect-timeout",
        "2s",
    ];
    let Some(Command::Replay(replay)) = Args::try_parse_from(argv).unwrap().subcommand else {
        panic!("a replay");
    };
    let (link, session) = (&replay.connection.link, &replay.connection.session);
    assert_eq!((link.threads, link.user.as_deref()), (2, Some("u")));
    assert!(session.tls);
    assert_eq!(session.connect_timeout, Duration::from_secs(2));
}

/// Value names whose flag is off until given (a file to write, a server to reach, a
/// text to send): their absence is the default, and the help says what they do instead.
const OFF_UNTIL_GIVEN: [&str; 24] = [
    "RATES",
    "SPEEDS",
    "COMMANDS",
    "ENDPOINT",
    "FILE",
    "DIR",
    "SOCKET",
    "URI",
    "PASSWORD",
    "USER",
    "NAME",
    "SLO",
    "SCRIPT",
    "COMMAND",
    "TEXT",
    "ADDR:PORT",
    "HOST:PORT",
    "TIME",
    "I/K",
    "K",
    "MIN-MAX",
    "LIST",
    "SET:GET",
    "PCT",
];

/// Every flag that takes a value either has a default clap prints, says its default in
/// its help (`[default: ...]`), or is off until given; a subcommand's flags included.
#[test]
fn every_flag_with_a_value_says_its_default() {
    fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for arg in command.get_arguments() {
            let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values())
                && !arg.is_positional()
                && !arg.is_required_set();
            if !takes_value || !arg.get_default_values().is_empty() {
                continue;
            }
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            let names: Vec<String> = arg
                .get_value_names()
                .map(|v| v.iter().map(|s| s.to_string()).collect())
                .unwrap_or_default();
            let off = names.iter().any(|n| OFF_UNTIL_GIVEN.contains(&n.as_str()));
            if !help.contains("[default:") && !help.contains("(default:") && !off {
                missing.push(format!("{path} --{}", arg.get_id()));
            }
        }
        for sub in command.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), missing);
        }
    }
    let mut command = Args::command();
    command.build();
    let mut missing = Vec::new();
    walk(&command, "tailrate", &mut missing);
    assert!(
        missing.is_empty(),
        "no default in the help of: {missing:#?}"
    );
}
