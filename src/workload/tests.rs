//! Unit tests of `workload/`'s building and writing of tests (`mod.rs`, `spec.rs`,
//! `test_case.rs`) and of the value bytes.

#![allow(clippy::unwrap_used)]
use super::stats::assert_fits;
use super::test_case::Repeated;
use super::*;
use crate::cli::Args;
use crate::config::RunConfig;
use crate::resp::{Limits, Reply, parse};
use bytes::BytesMut;
use clap::Parser;

/// The workload `tailrate --seed 1 ARGV...` builds (the other tests of `workload/` use it
/// too).
pub(super) fn workload(argv: &[&str]) -> Workload {
    let mut full = vec!["tailrate", "--seed", "1"];
    full.extend_from_slice(argv);
    RunConfig::from_args(&Args::try_parse_from(full).unwrap().run, None)
        .unwrap()
        .plan
        .workload
}

/// Writes `n` requests of `test` and returns each as its arguments.
fn requests(w: &Workload, n: usize, seed: u64) -> Vec<(usize, Vec<Vec<u8>>)> {
    let test = &w.tests[0];
    let mut sampler = Sampler::new(w, seed);
    let limits = Limits::default();
    (0..n)
        .map(|_| {
            let command = test.pick(&mut sampler);
            let mut buf = BytesMut::new();
            test.write(command, &mut buf, &mut sampler);
            let (reply, used) = parse(&buf, &limits).unwrap().unwrap();
            assert_eq!(used, buf.len(), "one whole RESP frame per request");
            let Reply::Array(items) = reply else {
                panic!("not an array")
            };
            (
                command,
                items
                    .iter()
                    .map(|i| i.as_bytes().unwrap().to_vec())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn a_fixed_batch_is_what_writing_each_request_writes() {
    for (argv, fixed) in [
        (&["-t", "get"][..], true),
        (&["-t", "ping_mbulk"][..], true),
        (&["-t", "ping_inline"][..], true),
        (&["-t", "get", "-r", "1000"][..], false),
        (&["-t", "set"][..], true),
        (&["-t", "set", "--data-size-range", "1-100"][..], false),
        (&["-t", "set", "-d", "100000"][..], true),
        (
            &[
                "--command",
                "GET a",
                "--command",
                "GET b",
                "--command-weights",
                "1,1",
            ][..],
            false,
        ),
    ] {
        let w = workload(argv);
        let test = &w.tests[0];
        if let Some(r) = &test.repeated {
            assert!(
                r.bytes.len() <= Repeated::MOST_BYTES.max(r.one),
                "{argv:?}: {} bytes of copies",
                r.bytes.len()
            );
        }
        for n in [0, 1, 16, 64, 65, 200] {
            let mut batch = BytesMut::from(&b"before"[..]);
            assert_eq!(test.write_fixed(n, &mut batch), fixed, "{argv:?}");
            let prepared = test.fixed_batch(n);
            let copies = test.repeated.as_ref().map_or(0, Repeated::copies);
            assert_eq!(
                prepared.is_some(),
                fixed && n <= copies,
                "{argv:?}, {n} requests"
            );
            if !fixed {
                assert_eq!(&batch[..], b"before", "{argv:?}: nothing written");
                continue;
            }
            if let Some(prepared) = prepared {
                assert_eq!(
                    prepared,
                    &batch[b"before".len()..],
                    "{argv:?}, {n} requests"
                );
            }
            let mut sampler = Sampler::new(&w, 7);
            let mut each = BytesMut::from(&b"before"[..]);
            for _ in 0..n {
                let command = test.pick(&mut sampler);
                test.write(command, &mut each, &mut sampler);
            }
            assert_eq!(batch, each, "{argv:?}, {n} requests");
        }
    }
}

#[test]
fn weighted_picks_follow_their_weights() {
    let w = workload(&[
        "--command",
        "GET a",
        "--command",
        "GET b",
        "--command",
        "SET c d",
        "--command-weights",
        "1,10,3",
    ]);
    let test = &w.tests[0];
    let names: Vec<&str> = test.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["get", "get_2", "set"],
        "repeated names are told apart"
    );
    let mut sampler = Sampler::new(&w, 9);
    let mut counts = [0u64; 3];
    for _ in 0..140_000 {
        counts[test.pick(&mut sampler)] += 1;
    }
    assert_fits(
        &counts,
        &[1.0 / 14.0, 10.0 / 14.0, 3.0 / 14.0],
        "weighted pick",
    );
    assert_eq!(test.shares(), [1.0 / 14.0, 10.0 / 14.0, 3.0 / 14.0]);
}

#[test]
fn a_ratio_mix_is_one_test_of_set_and_get() {
    let w = workload(&["--ratio", "1:10", "--keyspace", "100"]);
    assert_eq!(w.tests.len(), 1);
    assert_eq!(w.tests[0].name, "MIX (SET:GET 1:10)");
    let reqs = requests(&w, 2000, 3);
    for (command, args) in &reqs {
        let name = &w.tests[0].commands[*command].name;
        match name.as_str() {
            "set" => assert_eq!(
                (args.len(), args[0].as_slice(), args[2].len()),
                (3, &b"SET"[..], 3)
            ),
            "get" => assert_eq!((args.len(), args[0].as_slice()), (2, &b"GET"[..])),
            other => panic!("unexpected command {other}"),
        }
        assert!(
            args[1].starts_with(b"key:") && args[1].len() == 6,
            "{:?}",
            String::from_utf8_lossy(&args[1])
        );
    }
    let sets = reqs.iter().filter(|(c, _)| *c == 0).count();
    assert!(
        (120..250).contains(&sets),
        "{sets} SETs in 2000 requests at 1:10"
    );
}

#[test]
fn read_ratio_one_sends_only_gets() {
    let w = workload(&["--read-ratio", "1"]);
    let names: Vec<&str> = w.tests[0]
        .commands
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["get"]);
}

#[test]
fn keys_have_the_key_size_and_values_only_the_listed_sizes() {
    let w = workload(&[
        "--ratio",
        "1:1",
        "--keyspace",
        "1000",
        "--key-size",
        "32",
        "--data-size-list",
        "1:1,1000:1,70000:1",
    ]);
    let mut sizes = std::collections::BTreeSet::new();
    for (_, args) in requests(&w, 3000, 4) {
        assert_eq!(args[1].len(), 32);
        assert!(args[1].starts_with(b"key:0000000000000000000000000"));
        if let Some(value) = args.get(2) {
            sizes.insert(value.len());
        }
    }
    assert_eq!(sizes.into_iter().collect::<Vec<_>>(), [1, 1000, 70_000]);
}

#[test]
fn the_default_tests_draw_their_keys_from_the_key_pattern() {
    let w = workload(&["-t", "get", "--keyspace", "1000", "--key-pattern", "zipf"]);
    let reqs = requests(&w, 20_000, 5);
    let hottest = reqs
        .iter()
        .filter(|(_, a)| a[1] == b"key:000000000000")
        .count();
    // Zipf s=1 over 1000 keys: the hottest key has 1/H(1000) = 13.4% of requests.
    assert!(
        (2400..3000).contains(&hottest),
        "{hottest} of 20000 on key 0"
    );
}

#[test]
fn the_default_tests_vary_value_sizes_with_a_size_range() {
    let w = workload(&["-t", "set", "--data-size-range", "1-5", "-r", "10"]);
    let sizes: std::collections::BTreeSet<usize> = requests(&w, 500, 6)
        .iter()
        .map(|(_, a)| a[2].len())
        .collect();
    assert_eq!(sizes.into_iter().collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
}

#[test]
fn custom_commands_take_placeholders_and_eval_scripts() {
    let w = workload(&[
        "--keyspace",
        "10",
        "--command",
        r#"EVAL "return redis.call('GET', KEYS[1])" 1 __key__"#,
    ]);
    let (_, args) = &requests(&w, 1, 7)[0];
    assert_eq!(args[1], b"return redis.call('GET', KEYS[1])");
    assert_eq!(w.tests[0].commands[0].name, "eval");
    let w = workload(&[
        "--script-load",
        "return 1",
        "--command",
        "EVALSHA __sha_1__ 0",
    ]);
    assert_eq!(
        requests(&w, 1, 7)[0].1[1],
        b"e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
    );
    assert_eq!(
        w.setup,
        [vec![
            b"SCRIPT".to_vec(),
            b"LOAD".to_vec(),
            b"return 1".to_vec()
        ]]
    );
}

#[test]
fn the_stdin_argument_is_sent_as_read() {
    let args =
        Args::try_parse_from(["tailrate", "-x", "-r", "10", "SET", "k:__rand_int__"]).unwrap();
    let w = RunConfig::from_args(&args.run, Some(b"__nosuch__ and __rand_int__".to_vec()))
        .unwrap()
        .plan
        .workload;
    let (_, argv) = &requests(&w, 1, 1)[0];
    assert_eq!(argv[1].len(), 14, "typed arguments take placeholders");
    assert_eq!(
        argv[2], b"__nosuch__ and __rand_int__",
        "the stdin argument is data"
    );
}

#[test]
fn sequential_keys_are_shared_by_a_tests_threads() {
    let w = workload(&[
        "--command",
        "GET __key__",
        "--keyspace",
        "50",
        "--key-pattern",
        "sequential",
    ]);
    let test = w.tests[0].clone();
    let (mut a, mut b) = (Sampler::new(&w, 1), Sampler::new(&w, 2));
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..50 {
        let (sampler, t) = if i % 3 == 0 {
            (&mut a, &test)
        } else {
            (&mut b, &w.tests[0])
        };
        let mut buf = BytesMut::new();
        t.write(0, &mut buf, sampler);
        assert!(
            seen.insert(buf.to_vec()),
            "a key sent twice within one pass"
        );
    }
}

#[test]
fn one_command_tests_pick_without_drawing() {
    let w = workload(&["-t", "get", "-r", "10"]);
    let mut sampler = Sampler::new(&w, 1);
    let before = sampler.clone();
    assert_eq!(w.tests[0].pick(&mut sampler), 0);
    assert_eq!(
        format!("{:?}", sampler.rng),
        format!("{:?}", before.rng),
        "no random draw for a one-command test"
    );
}

#[test]
fn values_are_printable_prefixes_of_each_other_and_follow_the_seed() {
    let long = value_bytes(10_003, 9);
    assert!(long.iter().all(u8::is_ascii_alphanumeric));
    assert_eq!(value_bytes(17, 9), long[..17]);
    assert_ne!(value_bytes(64, 10), long[..64]);
    // Every character of the alphabet turns up: 4 or 5 of the 256 byte values map to each,
    // so each is expected 156 or 195 times here.
    let mut counts = std::collections::HashMap::new();
    for b in &long {
        *counts.entry(*b).or_insert(0usize) += 1;
    }
    assert_eq!(counts.len(), 62);
    assert!(
        counts.values().all(|&n| (100..=260).contains(&n)),
        "{counts:?}"
    );
}
