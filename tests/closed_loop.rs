//! Closed loop as a drop-in for redis-benchmark: the same commands reach the server,
//! and output parsers written for redis-benchmark read tailrate's output unchanged.

use std::collections::BTreeMap;
use std::process::Command;

use super::harness::{
    RedisServer, assert_success, read_json, redis_benchmark_bin, run_tailrate, run_with_timeout,
    stderr_of,
};

/// Commands that tools send for their own bookkeeping (CONFIG GET, INFO), not the workload.
const BOOKKEEPING: &[&str] = &[
    "config|get",
    "config|resetstat",
    "config",
    "info",
    "hello",
    "client|setinfo",
    "client|setname",
    "latency|histogram",
    "latency|latest",
    "latency|history",
    "latency|reset",
    "slowlog|get",
    "config|set",
    "client",
    "select",
    "auth",
    "command",
    "command|docs",
];

fn workload_stats(server: &RedisServer) -> BTreeMap<String, u64> {
    server
        .commandstats()
        .into_iter()
        .filter(|(name, _)| !BOOKKEEPING.contains(&name.as_str()))
        .collect()
}

fn redis_benchmark(port: u16, args: &[&str]) -> String {
    let bin = redis_benchmark_bin()
        .expect("redis-benchmark (Debian redis-tools) is installed by scripts/test");
    let mut cmd = Command::new(bin);
    cmd.args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args);
    assert_success(&run_with_timeout(cmd, super::harness::RUN_TIMEOUT))
}

/// Every `-t` name of the default suite (the LPUSH that fills LRANGE's list comes with each LRANGE test).
const SUITE: &[&str] = &[
    "ping_inline",
    "ping_mbulk",
    "set",
    "get",
    "incr",
    "lpush",
    "rpush",
    "lpop",
    "rpop",
    "sadd",
    "hset",
    "spop",
    "zadd",
    "zpopmin",
    "lrange_100",
    "lrange_300",
    "lrange_500",
    "lrange_600",
    "mset",
    "xadd",
];

#[test]
fn every_default_test_sends_the_same_commands_as_redis_benchmark() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    for test in SUITE {
        server.cmd(&["FLUSHALL"]);
        server.reset_stats();
        redis_benchmark(
            server.port(),
            &["-n", "10000", "-r", "1000", "-t", test, "-q"],
        );
        let theirs = workload_stats(&server);

        server.cmd(&["FLUSHALL"]);
        server.reset_stats();
        assert_success(&run_tailrate(&[
            "-p", &port, "-n", "10000", "-r", "1000", "-t", test, "-q",
        ]));
        let ours = workload_stats(&server);

        if *test == "xadd" && theirs.is_empty() {
            // redis-benchmark 7.0 (Debian 12) predates its XADD test (7.2 added it):
            // then check tailrate sent exactly -n of them.
            assert_eq!(
                ours,
                BTreeMap::from([("xadd".to_string(), 10_000)]),
                "-t xadd"
            );
            continue;
        }
        assert_eq!(ours, theirs, "INFO commandstats after -t {test}");
        assert!(ours.values().any(|&n| n == 10_000), "-t {test}: {ours:?}");
    }
}

#[test]
fn a_custom_command_is_sent_exactly_n_times_with_keys_in_the_keyspace() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    assert_success(&run_tailrate(&[
        "-p",
        &port,
        "-n",
        "2000",
        "-r",
        "100",
        "-c",
        "4",
        "-q",
        "SET",
        "k:__rand_int__",
        "v",
    ]));
    assert_eq!(workload_stats(&server).get("set"), Some(&2000));
    let keys = server.cmd(&["KEYS", "k:*"]);
    let keys: Vec<&str> = keys.lines().collect();
    assert!(keys.len() > 50 && keys.len() <= 100, "{} keys", keys.len());
    assert!(
        keys.iter()
            .all(|k| k.len() == 14 && k[2..].bytes().all(|b| b.is_ascii_digit())),
        "{keys:?}"
    );
}

#[test]
fn pipelined_runs_send_exactly_n_requests_and_give_each_reply_a_latency() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    assert_success(&run_tailrate(&[
        "-p",
        &port,
        "-n",
        "10000",
        "-P",
        "16",
        "-c",
        "7",
        "-t",
        "incr",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]));
    assert_eq!(workload_stats(&server).get("incr"), Some(&10_000));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let test = &report["tests"][0];
    assert_eq!(test["counts"]["completed"], 10_000);
    assert_eq!(test["latency"]["response"]["count"], 10_000);
    assert_eq!(report["schema_version"], 1);
}

/// One parser, written for redis-benchmark's `-q` output: the line after the last `\r`.
fn parse_quiet(output: &str) -> BTreeMap<String, (f64, f64)> {
    let mut out = BTreeMap::new();
    for line in output.split(['\n', '\r']) {
        let line = line.trim();
        let Some((name, rest)) = line.split_once(": ") else {
            continue;
        };
        let Some((rps, rest)) = rest.split_once(" requests per second, p50=") else {
            continue;
        };
        let Some(p50) = rest.strip_suffix(" msec") else {
            continue;
        };
        out.insert(
            name.to_string(),
            (rps.parse().unwrap(), p50.parse().unwrap()),
        );
    }
    out
}

/// One parser, written for redis-benchmark's `--csv` output.
fn parse_csv(output: &str) -> (String, Vec<Vec<String>>) {
    let mut lines = output.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().unwrap().to_string();
    let rows = lines
        .map(|l| {
            l.split(',')
                .map(|f| f.trim_matches('"').to_string())
                .collect()
        })
        .collect();
    (header, rows)
}

#[test]
fn quiet_and_csv_output_read_with_parsers_written_for_redis_benchmark() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let args = ["-t", "set,get", "-n", "20000"];

    let theirs = parse_quiet(&redis_benchmark(
        server.port(),
        &[&args[..], &["-q"]].concat(),
    ));
    let ours = parse_quiet(&assert_success(&run_tailrate(
        &[&["-p", &port][..], &args[..], &["-q"]].concat(),
    )));
    assert_eq!(theirs.keys().collect::<Vec<_>>(), ["GET", "SET"]);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    for (rps, p50) in ours.values() {
        assert!(*rps > 1000.0 && *p50 > 0.0, "{ours:?}");
    }

    let (their_header, their_rows) = parse_csv(&redis_benchmark(
        server.port(),
        &[&args[..], &["--csv"]].concat(),
    ));
    let (our_header, our_rows) = parse_csv(&assert_success(&run_tailrate(
        &[&["-p", &port][..], &args[..], &["--csv"]].concat(),
    )));
    assert_eq!(our_header, their_header);
    assert_eq!(our_rows.len(), their_rows.len());
    for (ours, theirs) in our_rows.iter().zip(&their_rows) {
        assert_eq!(ours.len(), theirs.len());
        assert_eq!(ours[0], theirs[0]);
        for field in &ours[1..] {
            let value: f64 = field
                .parse()
                .unwrap_or_else(|_| panic!("not a number: {field}"));
            assert!(value >= 0.0);
        }
    }
}

#[test]
fn the_full_report_has_redis_benchmarks_sections() {
    let server = RedisServer::start();
    let out = assert_success(&run_tailrate(&[
        "-p",
        &server.port().to_string(),
        "-t",
        "get",
        "-n",
        "5000",
    ]));
    for needle in [
        "====== GET ======",
        "  5000 requests completed in ",
        "  50 parallel clients",
        "  3 bytes payload",
        "  keep alive: 1",
        "  host configuration \"save\": ",
        "  host configuration \"appendonly\": no",
        "Latency by percentile distribution:",
        "100.000% <= ",
        "Cumulative distribution of latencies:",
        "Summary:",
        "  throughput summary: ",
        "  latency summary (msec):",
        "          avg       min       p50       p95       p99       max",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

#[test]
fn error_replies_are_counted_by_kind_and_do_not_stop_the_run() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    server.cmd(&["SET", "notalist", "x"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    // Every request fails: the run exits 1 as redis-benchmark does, its report written.
    let run = run_tailrate(&[
        "-p",
        &port,
        "-n",
        "1000",
        "-c",
        "2",
        "--json",
        json.to_str().unwrap(),
        "LPUSH",
        "notalist",
        "v",
    ]);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(out.contains("WRONGTYPE: 1000"), "{out}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        report["tests"][0]["counts"]["errors_by_kind"]["WRONGTYPE"],
        1000
    );

    let stopped = run_tailrate(&[
        "-p",
        &port,
        "-n",
        "1000",
        "-c",
        "2",
        "--exit-on-error",
        "LPUSH",
        "notalist",
        "v",
    ]);
    assert_eq!(stopped.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert!(stderr.contains("WRONGTYPE"), "{stderr}");
    assert!(
        workload_stats(&server)["lpush"] < 2000,
        "exit-on-error stopped early"
    );
}

#[test]
fn a_password_from_the_environment_authenticates_and_never_appears_in_output() {
    let server = RedisServer::builder()
        .arg("--requirepass", "s3cret-pass")
        .start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut cmd = Command::new(super::harness::tailrate_bin());
    cmd.args([
        "-p",
        &server.port().to_string(),
        "-n",
        "100",
        "-t",
        "ping",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ])
    .env("REDISCLI_AUTH", "s3cret-pass");
    let out = run_with_timeout(cmd, super::harness::RUN_TIMEOUT);
    let stdout = assert_success(&out);
    assert!(stdout.contains("PING_MBULK"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("Warning: Using a password"),
        "no warning for REDISCLI_AUTH: {stderr}"
    );

    let typed = run_tailrate(&[
        "-p",
        &server.port().to_string(),
        "-a",
        "s3cret-pass",
        "-n",
        "100",
        "-t",
        "ping",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let everything = format!(
        "{}{}{}",
        assert_success(&typed),
        String::from_utf8_lossy(&typed.stderr),
        std::fs::read_to_string(&json).unwrap()
    );
    assert!(everything.contains("Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe."));
    assert!(
        !everything.contains("s3cret-pass"),
        "the password leaked:\n{everything}"
    );
}

#[test]
fn dbnum_selects_the_database() {
    let server = RedisServer::start();
    assert_success(&run_tailrate(&[
        "-p",
        &server.port().to_string(),
        "--dbnum",
        "3",
        "-n",
        "10",
        "-c",
        "1",
        "-q",
        "SET",
        "in-db-3",
        "v",
    ]));
    assert_eq!(server.cmd(&["EXISTS", "in-db-3"]), "0");
    assert_eq!(server.cmd(&["SELECT", "3"]), "OK");
}

#[test]
fn reconnecting_for_every_request_still_sends_n() {
    let server = RedisServer::start();
    let before: u64 = server
        .info_field("stats", "total_connections_received")
        .unwrap()
        .parse()
        .unwrap();
    assert_success(&run_tailrate(&[
        "-p",
        &server.port().to_string(),
        "-k",
        "0",
        "-n",
        "200",
        "-c",
        "4",
        "-t",
        "get",
        "-q",
    ]));
    assert_eq!(workload_stats(&server).get("get"), Some(&200));
    let after: u64 = server
        .info_field("stats", "total_connections_received")
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        after - before >= 200,
        "{} connections for 200 requests",
        after - before
    );
}

#[test]
fn threads_spread_connections_and_count_every_request() {
    let server = RedisServer::start();
    assert_success(&run_tailrate(&[
        "-p",
        &server.port().to_string(),
        "--threads",
        "2",
        "-c",
        "5",
        "-n",
        "3000",
        "-t",
        "set",
        "-q",
    ]));
    assert_eq!(workload_stats(&server).get("set"), Some(&3000));
    assert_eq!(
        server.info_field("clients", "connected_clients").as_deref(),
        Some("1")
    );
}

/// A batch far larger than a socket's send buffer (8 x 1 MB values): the first write
/// takes part of it and the rest must follow, once, in order, over TCP and a Unix socket.
#[test]
fn a_batch_larger_than_the_socket_buffer_arrives_whole() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("redis.sock");
    let server = RedisServer::builder()
        .arg("--unixsocket", sock.to_str().unwrap())
        .start();
    let port = server.port().to_string();
    let big = [
        "-t", "set", "-d", "1000000", "-P", "8", "-c", "2", "-n", "32", "-q",
    ];
    assert_success(&run_tailrate(&[&["-p", port.as_str()][..], &big].concat()));
    assert_success(&run_tailrate(
        &[&["-s", sock.to_str().unwrap()][..], &big].concat(),
    ));
    assert_eq!(workload_stats(&server).get("set"), Some(&64));
    assert_eq!(
        server.cmd(&["STRLEN", "key:__rand_int__"]).trim(),
        "1000000"
    );
}

#[test]
fn a_unix_socket_works_like_tcp() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("redis.sock");
    let server = RedisServer::builder()
        .arg("--unixsocket", sock.to_str().unwrap())
        .start();
    assert_success(&run_tailrate(&[
        "-s",
        sock.to_str().unwrap(),
        "-n",
        "500",
        "-t",
        "get",
        "-q",
    ]));
    assert_eq!(workload_stats(&server).get("get"), Some(&500));
}

/// Starts tailrate with `args`, waits `after`, sends SIGINT, returns its output.
fn interrupt_after(args: &[&str], after: std::time::Duration) -> std::process::Output {
    let child = Command::new(super::harness::tailrate_bin())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    child.wait_with_output().unwrap()
}

#[test]
fn idle_mode_holds_its_connections_until_interrupted() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let child = Command::new(super::harness::tailrate_bin())
        .args(["-p", &port, "-I", "-c", "12"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    // 12 idle connections plus the harness's own query connection.
    while server.info_field("clients", "connected_clients").as_deref() != Some("13") {
        assert!(
            std::time::Instant::now() < deadline,
            "idle connections never appeared"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&out.stderr).contains("12 idle connections"));
}

#[test]
fn loop_mode_repeats_the_tests_until_interrupted() {
    let server = RedisServer::start();
    let out = interrupt_after(
        &[
            "-p",
            &server.port().to_string(),
            "-l",
            "-t",
            "ping_mbulk",
            "-n",
            "2000",
            "-q",
        ],
        std::time::Duration::from_millis(1500),
    );
    assert_eq!(out.status.code(), Some(130));
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("PING_MBULK: "))
        .count();
    assert!(lines >= 2, "{lines} rounds in 1.5 s");
    let pings = workload_stats(&server)["ping"];
    assert!(pings >= 2 * 2000, "{pings} PINGs");
}

/// The race behind an interrupted `-l` run that once exited 0: Ctrl+C landing between
/// two tests, seen at the top of the loop rather than during a test. Made exact by
/// cancelling before the run starts.
#[test]
fn a_loop_interrupted_between_tests_ends_as_interrupted() {
    use clap::Parser;
    let server = RedisServer::start();
    let port = server.port().to_string();
    let argv = [
        "tailrate",
        "--no-progress",
        "-q",
        "-p",
        &port,
        "-l",
        "-t",
        "ping_mbulk",
        "-n",
        "100",
    ];
    let config = tailrate::config::RunConfig::from_args(
        &tailrate::cli::Args::try_parse_from(argv).unwrap().run,
        None,
    )
    .unwrap();
    let cancel = tailrate::drive::Cancel::new();
    cancel.cancel();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let io = tailrate::app::Io {
        stdout: &mut out,
        stderr: &mut err,
        stderr_is_terminal: false,
        metrics: None,
    };
    let status = tailrate::app::run(&config, Vec::new(), &cancel, io).unwrap();
    assert_eq!(
        status,
        tailrate::app::Status::Interrupted,
        "{}",
        String::from_utf8_lossy(&err)
    );
}

#[test]
fn the_last_argument_can_come_from_stdin() {
    let server = RedisServer::start();
    let mut child = Command::new(super::harness::tailrate_bin())
        .args([
            "-p",
            &server.port().to_string(),
            "-n",
            "10",
            "-c",
            "1",
            "-q",
            "-x",
            "SET",
            "from-stdin",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"piped value")
        .unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    assert_eq!(server.cmd(&["GET", "from-stdin"]), "piped value");
}

#[test]
fn a_get_of_keys_never_written_says_every_read_missed_and_one_of_written_keys_does_not() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let args = ["-p", &port, "-n", "2000", "-r", "100", "--no-progress"];
    let cold = assert_success(&run_tailrate(&[&args[..], &["-t", "get"]].concat()));
    assert!(
        cold.contains("reads: 0 hits, 2000 misses") && cold.contains("every read missed"),
        "{cold}"
    );
    let warm = assert_success(&run_tailrate(&[&args[..], &["-t", "set,get"]].concat()));
    assert!(!warm.contains("every read missed"), "{warm}");
}

/// `--prefill` SETs every key the GETs read before the first test: every read hits, the
/// server holds exactly the keyspace at the value size, and the report says so.
#[test]
fn prefill_writes_every_key_the_reads_ask_for_and_every_read_hits() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("prefill.json");
    let json_arg = json.to_str().unwrap();
    let out = run_tailrate(&[
        "-p",
        &port,
        "-n",
        "3000",
        "-r",
        "1500",
        "-d",
        "17",
        "-t",
        "get",
        "--prefill",
        "--json",
        json_arg,
        "--no-progress",
    ]);
    let stdout = assert_success(&out);
    assert!(stdout.contains("reads: 3000 hits, 0 misses"), "{stdout}");
    assert!(!stdout.contains("every read missed"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--prefill: 1500 keys SET to 17-byte values"),
        "{stderr}"
    );
    assert_eq!(server.cmd(&["DBSIZE"]), "1500");
    assert_eq!(server.cmd(&["STRLEN", "key:000000001499"]), "17");
    assert_eq!(read_json(&json)["server"]["prefilled_keys"], 1500);
}

#[test]
fn prefill_without_a_read_or_over_too_many_keys_is_refused_before_any_load() {
    for (args, says) in [
        (&["-t", "set,incr"][..], "no test reads a key"),
        (
            &["-t", "get", "-r", "20000000"][..],
            "20000000 keys to write",
        ),
    ] {
        let out = run_tailrate(&[&["-p", "1", "-n", "10", "--prefill"], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--prefill") && stderr.contains(says),
            "{stderr}"
        );
    }
}

/// `tailrate ARGS` with `input` written to its standard input through a pipe.
fn run_with_stdin(args: &[&str], env: &[(&str, &str)], input: &str) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(super::harness::tailrate_bin())
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn askpass_reads_the_password_from_a_pipe_and_a_uri_password_is_warned_about() {
    let server = RedisServer::builder()
        .arg("--requirepass", "s3cret-pass")
        .start();
    let port = server.port().to_string();
    let run = ["-p", &port, "-n", "100", "-t", "ping", "-q", "--askpass"];
    // --askpass wins over REDISCLI_AUTH, as redis-cli's does.
    let asked = run_with_stdin(&run, &[("REDISCLI_AUTH", "wrong")], "s3cret-pass\n");
    let stdout = assert_success(&asked);
    assert!(stdout.contains("PING_MBULK"), "{stdout}");
    let stderr = String::from_utf8_lossy(&asked.stderr);
    assert!(!stderr.contains("Warning: Using a password"), "{stderr}");
    assert!(server.commandstats()["ping"] >= 100);

    let wrong = run_with_stdin(&run, &[], "not-it\n");
    assert_eq!(wrong.status.code(), Some(1), "{}", stderr_of(&wrong));
    let none = run_with_stdin(&run, &[], "");
    assert_eq!(none.status.code(), Some(2), "{}", stderr_of(&none));
    assert!(
        stderr_of(&none).contains("--askpass"),
        "{}",
        stderr_of(&none)
    );

    let uri = format!("redis://:s3cret-pass@127.0.0.1:{port}");
    let typed = run_tailrate(&["-u", &uri, "-n", "10", "-t", "ping", "-q"]);
    assert_success(&typed);
    assert!(stderr_of(&typed).contains(
        "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe."
    ));
}
