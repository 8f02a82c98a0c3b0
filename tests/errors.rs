//! Bad input and unreachable servers: a one-line message naming the flag or giving the
//! server's or OS's reason, exit 2 for usage and 1 for a failed run, never a hang.

use std::net::TcpListener;
use std::process::Output;
use std::time::{Duration, Instant};

use super::harness::{
    RedisServer, assert_usage_error, free_port, run_tailrate, run_tailrate_with_timeout,
};

fn stderr(out: &Output) -> String {
    super::harness::stderr_of(out)
}

#[test]
fn unknown_and_malformed_flags_are_usage_errors_naming_the_flag() {
    assert_usage_error(&["--no-such-flag"], &["--no-such-flag"]);
    assert_usage_error(&["-c", "many"], &["-c"]);
    assert_usage_error(&["-n", "-5"], &["-n"]);
    assert_usage_error(&["-k", "2"], &["-k"]);
    assert_usage_error(&["-t", "nosuch"], &["-t", "nosuch"]);
    assert_usage_error(&["-c", "0"], &["-c"]);
    assert_usage_error(&["-P", "0"], &["-P"]);
}

/// The mistakes a new user makes, each refused (exit 2, one line) with the flag and the
/// fix: not only what was wrong.
#[test]
fn common_mistakes_are_refused_with_the_flag_and_the_fix() {
    assert_usage_error(
        &["--slo", "p99<=1ms,p99.9<=5ms", "-t", "get"],
        &[
            "--slo",
            "give --slo once per objective",
            "--slo 'p99.9<=5ms'",
        ],
    );
    assert_usage_error(
        &["--slo", "p99<=1ms", "--slo", "p99<=2ms", "-t", "get"],
        &["--slo", "both bound the p99"],
    );
    assert_usage_error(
        &["sweep", "--rates", "5k-20k"],
        &["--rates", "5k..20k:STEP"],
    );
    assert_usage_error(&["-d", "1GB"], &["-d", "1000000000 bytes", "536870912"]);
    assert_usage_error(&["-d", "big"], &["-d", "bytes", "1MiB"]);
    assert_usage_error(
        &["--rate", "5k", "-n", "1000"],
        &["--rate", "-n", "give --duration"],
    );
    assert_usage_error(
        &["--metrics-listen", "example.com:7490"],
        &["--metrics-listen", "127.0.0.1:9464"],
    );
}

#[test]
fn open_loop_flags_are_checked_before_anything_runs() {
    assert_usage_error(&["--rate", "0"], &["--rate"]);
    assert_usage_error(&["--rate", "-5"], &["--rate"]);
    assert_usage_error(&["--rate", "fast"], &["--rate"]);
    assert_usage_error(&["--rate", "1000", "-P", "16"], &["--rate", "-P"]);
    assert_usage_error(
        &["--rate", "1000", "--duration", "30"],
        &["--duration", "no unit"],
    );
    assert_usage_error(&["--rate", "1000", "-n", "10"], &["--rate", "-n"]);
}

#[test]
fn worker_flags_are_checked_before_anything_runs() {
    assert_usage_error(&["--workers", "0"], &["--workers"]);
    assert_usage_error(&["--workers", "many"], &["--workers", "many"]);
    assert_usage_error(&["--workers", "-3"], &["--workers"]);
    assert_usage_error(
        &["-c", "1", "--workers", "8", "--pipeline-size", "0"],
        &["--pipeline-size"],
    );
    assert_usage_error(
        &["-c", "1", "--workers", "8", "--pipeline-size", "lots"],
        &["--pipeline-size", "lots"],
    );
    assert_usage_error(
        &["-c", "1", "--workers", "8", "--pipeline-delay", "50"],
        &["--pipeline-delay", "no unit"],
    );
    assert_usage_error(
        &["-c", "1", "--workers", "8", "--pipeline-delay", "soon"],
        &["--pipeline-delay", "soon"],
    );
    assert_usage_error(&["--pipeline-size", "8"], &["--pipeline-size", "--workers"]);
    assert_usage_error(
        &["--workers", "100", "--rate", "1000"],
        &["--workers", "--rate"],
    );
    assert_usage_error(&["--workers", "100", "-P", "16"], &["--workers", "-P"]);
    assert_usage_error(&["--workers", "10"], &["--workers", "-c"]);
}

#[test]
fn an_unreachable_server_fails_with_the_os_reason() {
    let port = free_port().to_string();
    let started = Instant::now();
    let out = run_tailrate(&["-p", &port, "-n", "10"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains(&format!("127.0.0.1:{port}")) && text.to_lowercase().contains("refused"),
        "{text}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_server_that_never_answers_fails_within_the_connect_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    // Accept and hold connections without a word: the handshake can never finish.
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        for c in listener.incoming().take(4) {
            conns.push(c);
        }
        std::thread::sleep(Duration::from_secs(5));
    });
    let started = Instant::now();
    let out = run_tailrate_with_timeout(
        &["-p", &port, "-n", "10", "--connect-timeout", "1s"],
        Duration::from_secs(30),
    );
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--connect-timeout"),
        "{}",
        stderr(&out)
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    drop(held);
}

#[test]
fn a_refused_password_fails_with_the_servers_reason() {
    let server = RedisServer::builder().arg("--requirepass", "right").start();
    let port = server.port().to_string();
    let out = run_tailrate(&["-p", &port, "-a", "wrong", "-n", "10"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("AUTH") && text.contains("WRONGPASS"),
        "{text}"
    );
    assert!(
        !text.contains("wrong\n") && !text.contains(" wrong "),
        "the password must not be echoed: {text}"
    );

    let out = run_tailrate(&["-p", &port, "-n", "10"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("NOAUTH"), "{}", stderr(&out));
}

#[test]
fn a_refused_handshake_shows_the_servers_whole_reply() {
    // Redis's reply to AUTH without a password configured is 124 bytes: all of it is shown.
    let server = RedisServer::start();
    let out = run_tailrate(&["-p", &server.port().to_string(), "-a", "x", "-n", "10"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("refused AUTH: ERR AUTH <password> called without any password configured")
            && text.contains("Are you sure your configuration is correct?"),
        "{text}"
    );
}

#[test]
fn a_missing_database_fails_with_the_servers_reason() {
    let server = RedisServer::start();
    let out = run_tailrate(&[
        "-p",
        &server.port().to_string(),
        "--dbnum",
        "99",
        "-n",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("SELECT 99") && text.contains("out of range"),
        "{text}"
    );
}

#[test]
fn a_run_in_which_most_requests_get_an_error_reply_is_invalid_and_fails_with_strict() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let json_arg = json.to_str().unwrap();
    // Nine in ten requests fail; the rest succeed (a run in which every one fails exits 1
    // of its own: `a_run_in_which_every_request_fails_exits_1_and_says_why`).
    let base = [
        "-p",
        port.as_str(),
        "-n",
        "200",
        "-c",
        "2",
        "--json",
        json_arg,
        "--seed",
        "1",
        "--command",
        "GET k",
        "--command",
        "NOSUCHCMD",
        "--command-weights",
        "1,9",
    ];
    let out = run_tailrate(&[&base[..], &["-q"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let quiet = String::from_utf8_lossy(&out.stdout);
    assert!(quiet.contains("INVALID: error_replies failed"), "{quiet}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let test = &report["tests"][0];
    assert_eq!(test["valid"], false, "{test}");
    let check = crate::harness::check(test, "error_replies");
    assert_eq!(check["verdict"], "fail", "{check}");

    let strict = run_tailrate(&[&base[..], &["-q", "--strict"]].concat());
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    // A few errors among many successes keep the run valid.
    let mixed = run_tailrate(&[
        "-p",
        &port,
        "-n",
        "1000",
        "-q",
        "--command",
        "GET k",
        "--command",
        "NOSUCHCMD",
        "--command-weights",
        "9,1",
        "--strict",
    ]);
    assert_eq!(mixed.status.code(), Some(0), "{}", stderr(&mixed));
}

#[test]
fn a_run_in_which_every_request_fails_exits_1_and_says_why() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let closed = [
        "-p",
        port.as_str(),
        "-n",
        "200",
        "-c",
        "2",
        "--json",
        json.to_str().unwrap(),
    ];
    let out = run_tailrate(&[&closed[..], &["-q", "NOSUCHCMD"]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let why: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("tailrate: error:"))
        .map(str::to_string)
        .collect();
    assert_eq!(why.len(), 1, "one line says why: {}", stderr(&out));
    assert!(
        why[0].contains("no request of NOSUCHCMD got a reply other than an error")
            && why[0].contains("of 200 intended, 200 ended in an error (e.g. ERR unknown command"),
        "{}",
        why[0]
    );
    // A percentile of no replies is unknown, not 0; the report is still written.
    let quiet = String::from_utf8_lossy(&out.stdout);
    assert!(quiet.contains("p50=n/a msec"), "{quiet}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["tests"][0]["counts"]["errors"], 200);

    let full = run_tailrate(&[&closed[..], &["NOSUCHCMD"]].concat());
    assert_eq!(full.status.code(), Some(1), "{}", stderr(&full));
    let text = String::from_utf8_lossy(&full.stdout);
    let summary = text
        .lines()
        .skip_while(|l| !l.contains("latency summary (msec):"))
        .nth(2)
        .unwrap_or_default();
    assert_eq!(
        summary.split_whitespace().collect::<Vec<_>>(),
        ["n/a"; 6],
        "{text}"
    );

    // The open loop's quiet line: each percentile it shows, n/a.
    let open = run_tailrate(&[
        "-p",
        &port,
        "--rate",
        "500",
        "--duration",
        "300ms",
        "-q",
        "NOSUCHCMD",
    ]);
    assert_eq!(open.status.code(), Some(1), "{}", stderr(&open));
    let line = String::from_utf8_lossy(&open.stdout);
    assert!(
        line.contains("p50=n/a msec")
            && line.contains("response p99=n/a msec, service p99=n/a msec"),
        "{line}"
    );
    assert!(
        stderr(&open).contains("no request of NOSUCHCMD"),
        "{}",
        stderr(&open)
    );
}

#[test]
fn error_texts_are_shown_once_per_kind_and_the_kinds_are_bounded() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    // Every reply a new error kind: E1, E2, ...
    let script = "local n = redis.call('INCR', KEYS[1]) return redis.error_reply('E' .. n .. ' \
                  text\\27[31m')";
    let out = run_tailrate(&[
        "-p",
        &port,
        "-n",
        "500",
        "-c",
        "2",
        "--json",
        json.to_str().unwrap(),
        "EVAL",
        script,
        "1",
        "counter",
    ]);
    // Every request failed: the run fails, and its report is still written.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let counts = &report["tests"][0]["counts"];
    let kinds = counts["errors_by_kind"].as_object().unwrap();
    assert!(kinds.len() <= 65, "{} kinds", kinds.len());
    let total: u64 = kinds.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(total, 500);
    assert!(kinds["other"].as_u64().unwrap() >= 500 - 64, "{kinds:?}");
    assert_eq!(counts["error_examples"]["E1"], "E1 text\u{1b}[31m");
    let text = String::from_utf8_lossy(&out.stdout);
    // The escape the server sent is printed escaped, never raw.
    assert!(text.contains("E1: 1 (first: E1 text\\u{1b}[31m)"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "a raw escape reached the terminal"
    );
}

/// A fake server on 127.0.0.1 that answers every command, the probe's included, with the
/// error `reply` (a real server cannot be made to send any bytes in an error). Its
/// threads end when the test process does; each connection's reads time out after 30 s.
fn server_answering_every_command_with(reply: &'static str) -> u16 {
    use std::io::{BufReader, Write};

    use super::harness::read_reply;

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
                let mut reader = BufReader::new(&stream);
                let mut out = &stream;
                while read_reply(&mut reader).is_ok() {
                    if out.write_all(reply.as_bytes()).is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn a_servers_escape_sequence_reaches_the_terminal_escaped_with_exit_on_error() {
    let port = server_answering_every_command_with("-ERR \u{1b}[31mred\u{7}\r\n").to_string();
    let out = run_tailrate(&["-p", &port, "-t", "set", "-n", "100", "--exit-on-error"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("error reply from the server: ERR \\u{1b}[31mred\\u{7}"),
        "{text}"
    );
    for (name, bytes) in [("stderr", &out.stderr), ("stdout", &out.stdout)] {
        assert!(
            !bytes.iter().any(|&b| b == 0x1b || b == 0x07),
            "a raw control byte reached {name}: {}",
            bytes.escape_ascii()
        );
    }

    // Without --exit-on-error the run ends (failed: no request succeeded), and its text
    // report, its reason on stderr and its JSON keep the text apart from the terminal:
    // escaped in the first two, as sent (and valid JSON) in the other.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = run_tailrate(&[
        "-p",
        &port,
        "-t",
        "set",
        "-n",
        "100",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(e.g. ERR \\u{1b}[31mred\\u{7})"),
        "{}",
        stderr(&out)
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("ERR: 100 (first: ERR \\u{1b}[31mred\\u{7})"),
        "{report}"
    );
    for (name, bytes) in [("stderr", &out.stderr), ("stdout", &out.stdout)] {
        assert!(
            !bytes.iter().any(|&b| b == 0x1b || b == 0x07),
            "a raw control byte reached {name}: {}",
            bytes.escape_ascii()
        );
    }
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap())
        .unwrap_or_else(|e| panic!("the JSON report does not parse: {e}"));
    assert_eq!(
        report["tests"][0]["counts"]["error_examples"]["ERR"],
        "ERR \u{1b}[31mred\u{7}"
    );
}
