//! Workloads against a real redis-server: SET/GET mixes (`--ratio`, `--read-ratio`),
//! weighted custom commands, key patterns and sizes, value sizes, in closed and open
//! loop; the server's own counts (INFO commandstats, KEYS, STRLEN) are the judge.
//! And bad workload flags: exit 2 with one line naming the flag.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::harness::{RedisServer, assert_usage_error, run_tailrate_json};

/// Runs tailrate against `server` with `--json` and returns the report.
fn run_json(server: &RedisServer, args: &[&str]) -> Value {
    let port = server.port().to_string();
    run_tailrate_json(&[&["-p", &port, "-q"], args].concat()).1
}

/// The server's call counts of the workload's commands.
fn calls(server: &RedisServer, names: &[&str]) -> Vec<u64> {
    let stats = server.commandstats();
    names
        .iter()
        .map(|n| stats.get(*n).copied().unwrap_or(0))
        .collect()
}

/// Names of the per-command entries of the report's first test.
fn command_names(report: &Value) -> Vec<String> {
    report["tests"][0]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap().to_string())
        .collect()
}

fn completed(report: &Value) -> u64 {
    report["tests"][0]["counts"]["completed"].as_u64().unwrap()
}

fn assert_no_errors(report: &Value) {
    assert_eq!(
        report["tests"][0]["counts"]["errors"], 0,
        "{}",
        report["tests"][0]["counts"]
    );
}

/// Every key matching `pattern`, via KEYS (the keyspaces here are small).
fn keys(server: &RedisServer, pattern: &str) -> Vec<String> {
    let text = server.cmd(&["KEYS", pattern]);
    text.lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_ratio_mix_sends_sets_and_gets_in_that_ratio() {
    let server = RedisServer::start();
    let report = run_json(
        &server,
        &[
            "--ratio",
            "1:10",
            "--keyspace",
            "1000",
            "-n",
            "500k",
            "-P",
            "16",
            "-c",
            "8",
            "--seed",
            "1",
        ],
    );
    let [set, get] = calls(&server, &["set", "get"])[..] else {
        unreachable!()
    };
    assert_eq!(set + get, 500_000);
    let ratio = get as f64 / set as f64;
    assert!(
        (ratio / 10.0 - 1.0).abs() < 0.02,
        "GET:SET = {ratio:.3} ({get}:{set}), want 10 within 2%"
    );
    assert_eq!(report["tests"][0]["name"], "MIX (SET:GET 1:10)");
    assert_eq!(command_names(&report), ["set", "get"]);
    let per_command: Vec<u64> = report["tests"][0]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["counts"]["completed"].as_u64().unwrap())
        .collect();
    assert_eq!(
        per_command,
        [set, get],
        "the report counts each command as the server does"
    );
    assert_eq!(
        report["tests"][0]["latency"]["response"]["count"], 500_000,
        "one aggregate over both commands"
    );
    assert_no_errors(&report);
}

#[test]
fn a_read_ratio_sends_that_fraction_of_gets() {
    let server = RedisServer::start();
    let report = run_json(
        &server,
        &[
            "--read-ratio",
            "0.8",
            "--keyspace",
            "1000",
            "-n",
            "200k",
            "-P",
            "16",
            "-c",
            "8",
        ],
    );
    let [set, get] = calls(&server, &["set", "get"])[..] else {
        unreachable!()
    };
    assert_eq!(set + get, 200_000);
    let fraction = get as f64 / 200_000.0;
    assert!(
        (fraction / 0.8 - 1.0).abs() < 0.02,
        "GET fraction {fraction:.4}"
    );
    assert_eq!(command_names(&report), ["set", "get"]);
}

#[test]
fn weighted_custom_commands_reach_the_server_in_their_weights() {
    let server = RedisServer::start();
    let report = run_json(
        &server,
        &[
            "--keyspace",
            "100",
            "--command",
            "SET __key__ __data__",
            "--command",
            "GET __key__",
            "--command",
            "INCR counter:__rand_int__",
            "--command-weights",
            "1,10,3",
            "-n",
            "140k",
            "-P",
            "16",
            "-c",
            "8",
            "--threads",
            "2",
        ],
    );
    let got = calls(&server, &["set", "get", "incr"]);
    assert_eq!(got.iter().sum::<u64>(), 140_000);
    for (n, weight) in got.iter().zip([1.0, 10.0, 3.0]) {
        let expected = 140_000.0 * weight / 14.0;
        assert!(
            (*n as f64 / expected - 1.0).abs() < 0.03,
            "{got:?} against weights 1,10,3"
        );
    }
    assert_eq!(report["tests"][0]["name"], "CUSTOM");
    assert_eq!(command_names(&report), ["set", "get", "incr"]);
    assert!(
        keys(&server, "counter:*")
            .iter()
            .all(|k| k.len() == "counter:".len() + 12),
        "__rand_int__ keeps 12 digits"
    );
}

#[test]
fn eval_and_evalsha_run_as_custom_commands() {
    let server = RedisServer::start();
    let script = "return redis.call('INCR', KEYS[1])";
    let report = run_json(
        &server,
        &[
            "--keyspace",
            "10",
            "--key-prefix",
            "lua:",
            "-n",
            "1000",
            "-c",
            "2",
            "--command",
            &format!("EVAL \"{script}\" 1 __key__"),
        ],
    );
    assert_no_errors(&report);
    assert_eq!(calls(&server, &["eval"]), [1000]);
    let total: u64 = keys(&server, "lua:*")
        .iter()
        .map(|k| server.cmd(&["GET", k]).parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, 1000);

    // The run's setup sends SCRIPT LOAD once the app does (see Workload::setup); load it
    // here too, so this checks that __sha_1__ is the SHA1 the server gives the script.
    let sha = server.cmd(&["SCRIPT", "LOAD", script]);
    let report = run_json(
        &server,
        &[
            "--keyspace",
            "10",
            "--key-prefix",
            "lua:",
            "-n",
            "1000",
            "-c",
            "2",
            "--script-load",
            script,
            "--command",
            "EVALSHA __sha_1__ 1 __key__",
        ],
    );
    assert_no_errors(&report);
    assert_eq!(calls(&server, &["evalsha"]), [1000]);
    assert_eq!(sha.len(), 40);
}

#[test]
fn key_size_pads_every_key_to_that_many_bytes() {
    let server = RedisServer::start();
    // Sequential keys with two threads: 50 requests over 50 keys write each key once.
    run_json(
        &server,
        &[
            "--keyspace",
            "50",
            "--key-pattern",
            "sequential",
            "--key-size",
            "32",
            "--command",
            "SET __key__ __data__",
            "-n",
            "50",
            "-c",
            "4",
            "--threads",
            "2",
        ],
    );
    let keys = keys(&server, "*");
    assert_eq!(keys.len(), 50, "{keys:?}");
    for key in &keys {
        assert_eq!(key.len(), 32, "{key}");
        assert!(
            key.starts_with("key:") && key[4..].bytes().all(|b| b.is_ascii_digit()),
            "{key}"
        );
    }
    let indices: BTreeSet<u64> = keys.iter().map(|k| k[4..].parse().unwrap()).collect();
    assert_eq!(
        indices,
        (0..50).collect(),
        "every index of the keyspace, once"
    );
}

#[test]
fn the_default_tests_follow_the_key_pattern() {
    let server = RedisServer::start();
    // Sequential INCR over 10 counters: 100 requests give each exactly 10.
    run_json(
        &server,
        &[
            "-t",
            "incr",
            "--keyspace",
            "10",
            "--key-pattern",
            "sequential",
            "-n",
            "100",
            "-c",
            "3",
        ],
    );
    let values: BTreeMap<String, String> = keys(&server, "counter:*")
        .into_iter()
        .map(|k| (server.cmd(&["GET", &k]), k))
        .collect();
    assert_eq!(values.len(), 1, "all counters equal: {values:?}");
    assert!(values.contains_key("10"), "{values:?}");
}

/// The hits and misses of the report's first test (and of its commands when a mix).
fn hits_and_misses(counts: &Value) -> (u64, u64) {
    let n = |key: &str| {
        counts[key]
            .as_u64()
            .unwrap_or_else(|| panic!("no {key} in {counts}"))
    };
    (n("hits"), n("misses"))
}

#[test]
fn gets_count_a_hit_for_each_key_present_and_a_miss_for_each_absent() {
    let server = RedisServer::start();
    // Keys 0..300 of a keyspace of 1000, one SET each.
    let set = run_json(
        &server,
        &[
            "-t",
            "set",
            "--keyspace",
            "1000",
            "--key-pattern",
            "sequential",
            "-n",
            "300",
            "-c",
            "1",
        ],
    );
    assert_eq!(server.cmd(&["DBSIZE"]), "300");
    let counts = &set["tests"][0]["counts"];
    assert!(
        counts.get("hits").is_none() && counts.get("misses").is_none(),
        "a write has no hits or misses: {counts}"
    );
    // Every key of the 1000 read 3 times over, in pipelines that cross from hits to misses
    // (RESP2's `$-1`), over RESP3 with nulls (`_`) that the framer's shortcut leaves to the
    // general path, and in pipelines longer than the replies taken at once (64).
    for (resp3, pipeline) in [(false, "7"), (true, "7"), (false, "100")] {
        let mut args = vec![
            "-t",
            "get",
            "--keyspace",
            "1000",
            "--key-pattern",
            "sequential",
            "-n",
            "3000",
            "-c",
            "3",
            "-P",
            pipeline,
        ];
        if resp3 {
            args.push("-3");
        }
        let report = run_json(&server, &args);
        assert_no_errors(&report);
        let counts = &report["tests"][0]["counts"];
        assert_eq!(
            hits_and_misses(counts),
            (900, 2100),
            "RESP3 {resp3}: {counts}"
        );
        assert_eq!(completed(&report), 3000);
    }

    // Hits and misses in turn (the odd keys only), in a mix with SETs of other keys: each
    // command counted apart, the SETs with neither.
    server.cmd(&["FLUSHALL"]);
    server.cmd(&[
        "EVAL",
        "for i = 1, 999, 2 do redis.call('SET', string.format('key:%03d', i), 'v') end",
        "0",
    ]);
    let report = run_json(
        &server,
        &[
            "--command",
            "GET __key__",
            "--command",
            "SET other __data__",
            "--command-weights",
            "1,1",
            "--keyspace",
            "1000",
            "--key-pattern",
            "sequential",
            "-n",
            "4000",
            "-P",
            "16",
            "-c",
            "4",
        ],
    );
    assert_no_errors(&report);
    let test = &report["tests"][0];
    let commands = test["commands"].as_array().unwrap();
    let (get, set) = (&commands[0]["counts"], &commands[1]["counts"]);
    let (hits, misses) = hits_and_misses(get);
    assert_eq!(hits + misses, get["completed"].as_u64().unwrap(), "{get}");
    assert!(set.get("hits").is_none(), "{set}");
    assert_eq!(hits_and_misses(&test["counts"]), (hits, misses));
    // Only GETs draw a key, so they walk it in order: half of them land on an odd key.
    let gets = hits + misses;
    assert!(hits.abs_diff(gets / 2) <= 1, "{hits} hits of {gets} GETs");
}

/// `sent_bytes`, `received_bytes` and their rates of the report's first test.
fn bytes(report: &Value) -> (u64, u64) {
    let test = &report["tests"][0];
    let measured = test["measured_secs"].as_f64().unwrap();
    let (sent, received) = (
        test["sent_bytes"].as_u64().unwrap(),
        test["received_bytes"].as_u64().unwrap(),
    );
    // A closed loop's rates are over the measured window.
    if test["target_rate_per_sec"].is_null() {
        for (n, rate) in [
            (sent, "sent_bytes_per_sec"),
            (received, "received_bytes_per_sec"),
        ] {
            let rate = test[rate].as_f64().unwrap();
            assert!(
                (rate * measured - n as f64).abs() <= 1e-6 * n as f64,
                "{rate} B/s over {measured} s for {n} bytes"
            );
        }
    }
    (sent, received)
}

#[test]
fn bytes_sent_and_received_are_the_resp_of_the_requests_and_replies() {
    let server = RedisServer::start();
    // `*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000123\r\n$1000\r\n` + 1000 bytes + `\r\n`: 1045
    // bytes, answered `+OK\r\n`; the handshake is not counted.
    let keys = ["--keyspace", "1000", "--key-pattern", "sequential"];
    let report = run_json(
        &server,
        &[
            &keys[..],
            &[
                "-t", "set", "-d", "1000", "-n", "2000", "-P", "8", "-c", "3",
            ],
        ]
        .concat(),
    );
    assert_no_errors(&report);
    assert_eq!(bytes(&report), (2000 * 1045, 2000 * 5));
    // `*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000123\r\n`: 36 bytes, answered `$1000\r\n` + the
    // value + `\r\n`: 1009 bytes.
    let report = run_json(
        &server,
        &[
            &keys[..],
            &["-t", "get", "-n", "2000", "-P", "8", "-c", "3"],
        ]
        .concat(),
    );
    assert_eq!(hits_and_misses(&report["tests"][0]["counts"]), (2000, 0));
    assert_eq!(bytes(&report), (2000 * 36, 2000 * 1009));

    // In an open loop the warm-up's bytes stay out: those of the measured requests are
    // counted, but for a write or read that also carries the last warm-up requests or
    // replies (at 2000/s a few; warm-up has about 400).
    let report = run_json(
        &server,
        &[
            &keys[..],
            &[
                "-t",
                "get",
                "--rate",
                "2000",
                "--duration",
                "1s",
                "--warmup",
                "200ms",
            ],
        ]
        .concat(),
    );
    let counts = &report["tests"][0]["counts"];
    let (sent, completed) = (
        counts["sent"].as_u64().unwrap(),
        counts["completed"].as_u64().unwrap(),
    );
    let (sent_bytes, received_bytes) = bytes(&report);
    assert!(
        sent_bytes.abs_diff(sent * 36) <= 10 * 36,
        "{sent_bytes} bytes sent for {sent} requests"
    );
    assert!(
        received_bytes.abs_diff(completed * 1009) <= 10 * 1009,
        "{received_bytes} bytes received for {completed} replies"
    );
}

/// Zipf at s = 1 over 100 keys: key 0 gets 1/H(100) = 19.3% of requests, key 1 half that.
#[test]
fn zipf_keys_make_the_first_key_hottest_on_the_server() {
    let server = RedisServer::start();
    let n = 50_000.0;
    run_json(
        &server,
        &[
            "--keyspace",
            "100",
            "--key-pattern",
            "zipf",
            "--command",
            "INCR __key__",
            "-n",
            "50k",
            "-P",
            "16",
            "-c",
            "4",
        ],
    );
    let count = |k: &str| server.cmd(&["GET", k]).parse::<f64>().unwrap_or(0.0);
    let h: f64 = (1..=100).map(|r| 1.0 / r as f64).sum();
    let (k0, k1) = (count("key:00"), count("key:01"));
    assert!(
        (k0 / (n / h) - 1.0).abs() < 0.05,
        "key:00 has {k0}, theory {:.0}",
        n / h
    );
    assert!(
        (k1 / (n / h / 2.0) - 1.0).abs() < 0.07,
        "key:01 has {k1}, theory {:.0}",
        n / h / 2.0
    );
}

#[test]
fn gaussian_keys_crowd_the_middle_of_the_keyspace() {
    let server = RedisServer::start();
    run_json(
        &server,
        &[
            "--keyspace",
            "100",
            "--key-pattern",
            "gaussian",
            "--command",
            "INCR __key__",
            "-n",
            "30k",
            "-P",
            "16",
            "-c",
            "4",
        ],
    );
    let count = |k: &str| server.cmd(&["GET", k]).parse::<f64>().unwrap_or(0.0);
    // sd = 100/6: the middle key has about 2.4% of requests, key 0 about 0.03%.
    let middle = count("key:50");
    assert!((500.0..1000.0).contains(&middle), "key:50 has {middle}");
    assert!(count("key:00") < 40.0 && count("key:99") < 40.0);
}

#[test]
fn data_size_list_values_have_only_the_listed_sizes() {
    let server = RedisServer::start();
    run_json(
        &server,
        &[
            "--ratio",
            "1:0",
            "--keyspace",
            "300",
            "--data-size-list",
            "10:1,100:1,1000:1",
            "-n",
            "3000",
            "-c",
            "4",
        ],
    );
    let sizes: BTreeSet<String> = keys(&server, "key:*")
        .iter()
        .map(|k| server.cmd(&["STRLEN", k]))
        .collect();
    assert_eq!(
        sizes,
        BTreeSet::from(["10".to_string(), "100".to_string(), "1000".to_string()])
    );
}

#[test]
fn data_size_range_values_stay_in_the_range_in_the_default_set_test() {
    let server = RedisServer::start();
    run_json(
        &server,
        &[
            "-t",
            "set",
            "-r",
            "200",
            "--data-size-range",
            "5-9",
            "-n",
            "2000",
            "-c",
            "4",
        ],
    );
    let sizes: BTreeSet<u64> = keys(&server, "key:*")
        .iter()
        .map(|k| server.cmd(&["STRLEN", k]).parse().unwrap())
        .collect();
    assert_eq!(sizes, (5..=9).collect());
}

#[test]
fn an_open_loop_mix_reports_each_command_and_keeps_its_shares() {
    let server = RedisServer::start();
    let report = run_json(
        &server,
        &[
            "--read-ratio",
            "0.8",
            "--keyspace",
            "1000",
            "--key-pattern",
            "zipf",
            "--data-size-list",
            "16:3,512:1",
            "--rate",
            "2000",
            "--duration",
            "1s",
            "-c",
            "4",
        ],
    );
    assert_eq!(command_names(&report), ["set", "get"]);
    assert_no_errors(&report);
    let [set, get] = calls(&server, &["set", "get"])[..] else {
        unreachable!()
    };
    let total = (set + get) as f64;
    assert!(
        total >= completed(&report) as f64 && total > 1800.0,
        "{set} + {get}"
    );
    // Binomial: sd of the GET fraction over 2000 requests is 0.9%; allow 5 sd.
    let fraction = get as f64 / total;
    assert!(
        (fraction - 0.8).abs() < 5.0 * (0.16 / total).sqrt(),
        "GET fraction {fraction:.3}"
    );
    let sizes: BTreeSet<String> = keys(&server, "key:*")
        .iter()
        .map(|k| server.cmd(&["STRLEN", k]))
        .collect();
    assert_eq!(sizes, BTreeSet::from(["16".to_string(), "512".to_string()]));
    for c in report["tests"][0]["commands"].as_array().unwrap() {
        assert!(
            c["latency"]["response"]["count"].as_u64().unwrap() > 0,
            "{}",
            c["command"]
        );
        assert!(
            c["latency"]["lag"]["count"].as_u64().unwrap() > 0,
            "open-loop metrics per command"
        );
    }
}

#[test]
fn bad_workload_flags_are_usage_errors_naming_the_flag() {
    let two = [
        "--command",
        "SET __key__ __data__",
        "--command",
        "GET __key__",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        two.iter().chain(extra).copied().collect()
    };
    assert_usage_error(
        &with(&["--command-weights", "1,2,3"]),
        &["--command-weights", "3 weights for 2"],
    );
    assert_usage_error(
        &with(&["--command-weights", "1,0"]),
        &["--command-weights", "'0'"],
    );
    assert_usage_error(
        &with(&["--command-weights", "1,lots"]),
        &["--command-weights", "'lots'"],
    );
    assert_usage_error(
        &["--command", "GET __nosuch__"],
        &["--command", "__nosuch__"],
    );
    assert_usage_error(&["GET", "k:__nosuch__"], &["COMMAND", "__nosuch__"]);
    assert_usage_error(&["--ratio", "1/10"], &["--ratio", "1/10"]);
    // A mix is capped: each command keeps its own histograms.
    let many: Vec<&str> = std::iter::repeat_n(["--command", "GET k"], 257)
        .flatten()
        .collect();
    assert_usage_error(&many, &["--command", "at most 256"]);
    // A negative weight reaches the mix parser, not clap's "unexpected argument '-1'".
    assert_usage_error(&["--ratio", "-1:1"], &["--ratio", "-1:1"]);
    assert_usage_error(&["--read-ratio", "1.2"], &["--read-ratio"]);
    assert_usage_error(&["--read-ratio", "most"], &["--read-ratio"]);
    assert_usage_error(
        &[
            "--keyspace",
            "10",
            "--key-pattern",
            "zipf",
            "--zipf-exponent",
            "0",
        ],
        &["--zipf-exponent"],
    );
    assert_usage_error(
        &["--ratio", "1:1", "--keyspace", "1M", "--key-size", "6"],
        &["--key-size"],
    );
    assert_usage_error(
        &["--data-size-range", "100-10"],
        &["--data-size-range", "reversed"],
    );
    assert_usage_error(&["--data-size-list", "10:x"], &["--data-size-list"]);
    assert_usage_error(
        &["-d", "10", "--data-size-range", "1-5"],
        &["-d", "--data-size-range"],
    );
    assert_usage_error(&with(&["--ratio", "1:10"]), &["--ratio", "--command"]);
    assert_usage_error(
        &["--ratio", "1:10", "SET", "k", "v"],
        &["--ratio", "custom command"],
    );
    assert_usage_error(&with(&["-t", "get"]), &["-t", "--command"]);
    assert_usage_error(&["--key-pattern", "zipf"], &["--key-pattern", "--keyspace"]);
    assert_usage_error(&["--key-pattern", "pareto"], &["--key-pattern"]);
}

/// The per-request path of the workload (pick, key, value size, value bytes, `$len`
/// header) allocates nothing, for every key pattern and with variable value sizes. In
/// process, without a server: counted by the test binary's global allocator (installed
/// in `allocations.rs`; the probe below fails if it is not counting).
#[test]
fn writing_requests_allocates_nothing_per_request() {
    use bytes::BytesMut;
    use clap::Parser;
    use stats_alloc::{INSTRUMENTED_SYSTEM, Region};
    use tailrate::cli::Args;
    use tailrate::config::RunConfig;
    use tailrate::workload::Sampler;

    let probe = Region::new(&INSTRUMENTED_SYSTEM);
    drop(std::hint::black_box(vec![0u8; 100]));
    assert!(
        probe.change().allocations > 0,
        "the counting allocator is not installed"
    );

    let mix = [
        "--command",
        "SET __key__ __data__",
        "--command",
        "GET __key__",
        "--command",
        "HSET h __key__ v:__data__",
    ];
    for pattern in ["uniform", "sequential", "zipf", "gaussian"] {
        for workload in [&mix[..], &["-t", "mset"]] {
            let mut argv = vec![
                "tailrate",
                "--keyspace",
                "1000",
                "--key-pattern",
                pattern,
                "--data-size-list",
                "16:3,4096:1",
            ];
            argv.extend(workload);
            let config =
                RunConfig::from_args(&Args::try_parse_from(&argv).unwrap().run, None).unwrap();
            let test = &config.plan.workload.tests[0];
            let mut sampler = Sampler::new(&config.plan.workload, 1);
            let mut buf = BytesMut::with_capacity(1 << 20);
            let region = Region::new(&INSTRUMENTED_SYSTEM);
            for _ in 0..20_000 {
                let command = test.pick(&mut sampler);
                test.write(command, &mut buf, &mut sampler);
                if buf.len() > 900_000 {
                    buf.clear();
                }
            }
            let stats = region.change();
            // The counter is process-wide: the test harness's own threads may allocate a few
            // times meanwhile (seen once: 4 allocations, 900 bytes). One allocation per
            // request would be 20,000; a small constant bound tells the two apart.
            assert!(
                stats.allocations + stats.reallocations < 64,
                "{pattern} {workload:?}: {stats:?}"
            );
        }
    }
}

// Arguments that are not UTF-8: binary keys and values are normal for Redis, and file
// names need not be text either; the bytes typed reach the server (or the file system)
// unchanged.

/// Runs tailrate against `server` with `args`, which may hold any bytes.
fn run_with_bytes(server: &RedisServer, args: &[&std::ffi::OsStr]) -> std::process::Output {
    let mut cmd = std::process::Command::new(super::harness::tailrate_bin());
    cmd.args(["-p", &server.port().to_string(), "-q"])
        .args(args);
    super::harness::run_with_timeout(cmd, super::harness::RUN_TIMEOUT)
}

/// `EXISTS key` on `server`, the key given as bytes.
fn exists(server: &RedisServer, key: &[u8]) -> bool {
    use std::io::Write;
    let mut request = format!("*2\r\n$6\r\nEXISTS\r\n${}\r\n", key.len()).into_bytes();
    request.extend_from_slice(key);
    request.extend_from_slice(b"\r\n");
    let mut stream = std::net::TcpStream::connect(server.addr()).unwrap();
    stream.write_all(&request).unwrap();
    let reply = super::harness::read_reply(&mut std::io::BufReader::new(stream)).unwrap();
    reply == super::harness::Reply::Integer(1)
}

/// `arg` as the OS string of exactly these bytes.
fn os(arg: &[u8]) -> &std::ffi::OsStr {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(arg)
}

#[test]
fn a_custom_command_with_bytes_that_are_not_utf8_sends_them_unchanged() {
    let server = RedisServer::start();
    let out = run_with_bytes(
        &server,
        &[os(b"-n"), os(b"20"), os(b"SET"), os(b"k\xff"), os(b"v")],
    );
    super::harness::assert_success(&out);
    assert!(exists(&server, b"k\xff"), "no key k\\xff on the server");

    let out = run_with_bytes(
        &server,
        &[os(b"-n"), os(b"20"), os(b"--command"), os(b"SET m\xfe v")],
    );
    super::harness::assert_success(&out);
    assert!(exists(&server, b"m\xfe"), "no key m\\xfe on the server");
}

#[test]
fn a_key_prefix_that_is_not_utf8_reaches_the_server_unchanged() {
    let server = RedisServer::start();
    let out = run_with_bytes(
        &server,
        &[
            os(b"-n"),
            os(b"20"),
            os(b"--key-prefix"),
            os(b"\xff"),
            os(b"--command"),
            os(b"SET __key__ v"),
        ],
    );
    super::harness::assert_success(&out);
    assert!(exists(&server, b"\xff0"), "no key \\xff0 on the server");
}

#[test]
fn a_json_path_that_is_not_utf8_is_written_there() {
    use std::os::unix::ffi::OsStrExt;
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(os(b"r\xff.json"));
    let out = run_with_bytes(
        &server,
        &[
            os(b"-t"),
            os(b"get"),
            os(b"-n"),
            os(b"20"),
            os(b"--json"),
            path.as_os_str(),
        ],
    );
    super::harness::assert_success(&out);
    let report: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(report["tests"][0]["name"], "GET", "{report}");
    assert!(path.as_os_str().as_bytes().contains(&0xff));
}
