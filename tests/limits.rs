//! Limits on every input: every numeric flag, found in clap's own definition of the
//! command line (so a flag added later is covered without a change here), documents its
//! range in its `--help` text, that range is the one enforced, and extreme values end
//! cleanly (exit 2 with a one-line message naming the flag, or a run that ends on its
//! own or promptly on Ctrl+C), never in a panic, an abort or a hang. Then the inputs the
//! issue named one by one (`-d` and `-x` past 512 MiB, a rate no thread can plan, `-I`
//! with `--duration`), and the open-file limit for `-c 2000`.

use std::any::TypeId;
use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use clap::{CommandFactory, Parser};
use tailrate::cli::Args;

use super::harness::{RedisServer, require_tool, skip, tailrate_bin, this_test};

/// What a numeric flag's values are.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Whole,
    Real,
    Time,
}

/// One numeric flag, as clap defines it.
#[derive(Debug, Clone)]
struct Flag {
    /// `None` for the single run's flags, else the subcommand (`tune`).
    subcommand: Option<String>,
    /// How it is typed: `--rate`, `-c`.
    spelling: String,
    kind: Kind,
    help: String,
}

impl Flag {
    fn name(&self) -> String {
        match &self.subcommand {
            Some(sub) => format!("{sub} {}", self.spelling),
            None => self.spelling.clone(),
        }
    }
}

/// Every flag whose value is a number or a duration: the single run's, then each
/// subcommand's own (the run flags they share are the single run's, tested there).
fn numeric_flags() -> Vec<Flag> {
    let root = Args::command();
    let mut flags = Vec::new();
    let mut collect = |command: &clap::Command, subcommand: Option<&str>| {
        for arg in command.get_arguments() {
            let shared =
                subcommand.is_some() && root.get_arguments().any(|a| a.get_id() == arg.get_id());
            let Some(kind) = kind_of(arg).filter(|_| !shared) else {
                continue;
            };
            let spelling = match (arg.get_long(), arg.get_short()) {
                (Some(long), _) => format!("--{long}"),
                (None, Some(short)) => format!("-{short}"),
                (None, None) => continue,
            };
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            flags.push(Flag {
                subcommand: subcommand.map(str::to_owned),
                spelling,
                kind,
                help,
            });
        }
    };
    collect(&root, None);
    for sub in root.get_subcommands() {
        collect(sub, Some(sub.get_name()));
    }
    flags
}

/// The kind of value `arg` parses into, from its value parser's type; `None` for flags
/// that are not numbers (text, paths, switches, choices).
fn kind_of(arg: &clap::Arg) -> Option<Kind> {
    let id = arg.get_value_parser().type_id();
    let whole = [
        TypeId::of::<u8>(),
        TypeId::of::<u16>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<usize>(),
        TypeId::of::<i32>(),
        TypeId::of::<i64>(),
    ];
    if whole.iter().any(|t| id == *t) {
        Some(Kind::Whole)
    } else if id == TypeId::of::<f64>() || id == TypeId::of::<f32>() {
        Some(Kind::Real)
    } else if id == TypeId::of::<Duration>() {
        Some(Kind::Time)
    } else {
        None
    }
}

/// Flags and values a flag needs beside it to mean something (`--pipeline-size` needs
/// `--workers`, `--max-inflight` an open loop), as flag-value pairs. A flag not named here
/// gets a short closed loop of PINGs: one added later is still run, in that context.
fn context(flag: &Flag) -> Vec<&'static str> {
    if flag.subcommand.as_deref() == Some("replay") {
        // The trace (its positional argument) and a switch, as one pair.
        return vec![replay_trace(), "--skip-bad-lines"];
    }
    if flag.subcommand.as_deref() == Some("tune") {
        return vec![
            "-t",
            "get",
            "-c",
            "1",
            "--duration",
            "100ms",
            "--max-trials",
            "2",
            "--confirm-runs",
            "1",
        ];
    }
    if flag.subcommand.as_deref() == Some("sweep") {
        // One short step; with --slo, a search by --resolution that Ctrl+C ends.
        return vec![
            "-t",
            "get",
            "-c",
            "1",
            "--rates",
            "1000,2000",
            "--slo",
            "p99<=1ms",
            "--duration",
            "200ms",
            "--warmup",
            "0s",
            "--settle",
            "0s",
        ];
    }
    if flag.subcommand.as_deref() == Some("compare") {
        // --live, a switch, comes first in `argv`.
        return vec![
            "-t",
            "get",
            "-c",
            "1",
            "--rate",
            "1000",
            "--rounds",
            "2",
            "--round-duration",
            "100ms",
        ];
    }
    let open = vec![
        "-t",
        "get",
        "-c",
        "2",
        "--rate",
        "2000",
        "--duration",
        "300ms",
    ];
    match flag.spelling.as_str() {
        "-n" | "--duration" => vec!["-t", "ping", "-c", "1"],
        "--rate" => vec!["-t", "get", "-c", "2", "--duration", "300ms"],
        "--warmup" | "--max-inflight" | "--max-backlog" => open,
        "--workers" | "-r" | "--keyspace" | "-P" | "--repeat" => {
            vec!["-t", "get", "-c", "1", "-n", "200"]
        }
        "--pipeline-size" | "--pipeline-delay" => {
            vec!["-t", "get", "-c", "1", "--workers", "4", "-n", "200"]
        }
        "-d" => vec!["-t", "set", "-c", "1", "-n", "20"],
        "--key-size" => vec!["--ratio", "1:1", "--keyspace", "10", "-c", "1", "-n", "20"],
        "--zipf-exponent" => vec![
            "--key-pattern",
            "zipf",
            "--keyspace",
            "1000",
            "--read-ratio",
            "0.5",
            "-c",
            "1",
            "-n",
            "200",
        ],
        "--read-ratio" => vec!["-c", "1", "-n", "200"],
        "--threads" => vec!["-t", "ping", "-c", "4", "-n", "200"],
        "--metrics-linger" => {
            // A port of its own, as the cases run beside other tests.
            let listen = format!("127.0.0.1:{}", super::harness::free_port());
            vec![
                "-t",
                "ping",
                "-c",
                "1",
                "-n",
                "200",
                "--metrics-listen",
                listen.leak(),
            ]
        }
        "-c" => vec!["-t", "ping", "-n", "200"],
        _ => vec!["-t", "ping", "-c", "2", "-n", "200"],
    }
}

/// A short trace for `tailrate replay`'s flags: twenty GETs of one client over 0.2 s,
/// written once per test process.
fn replay_trace() -> &'static str {
    static TRACE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TRACE.get_or_init(|| {
        let path = std::env::temp_dir().join(format!(
            "tailrate-limits-trace-{}.jsonl",
            std::process::id()
        ));
        let lines: String = (0..20)
            .map(|i| {
                format!(
                    "{{\"time\": {}, \"client\": \"c\", \"args\": [\"GET\", \"k\"]}}\n",
                    i as f64 / 100.0
                )
            })
            .collect();
        std::fs::write(&path, lines).unwrap();
        path.to_str().unwrap().to_string()
    })
}

/// The whole command line for `flag value`, after `common` (pairs too); any pair of
/// `common` or the context that sets `flag` itself is left out.
fn argv(flag: &Flag, value: &str, common: &[String]) -> Vec<String> {
    let mut out: Vec<String> = flag.subcommand.iter().cloned().collect();
    if flag.subcommand.as_deref() == Some("compare") {
        out.push("--live".into());
    }
    let context: Vec<String> = context(flag).into_iter().map(String::from).collect();
    for pair in common.chunks(2).chain(context.chunks(2)) {
        if pair[0] != flag.spelling {
            out.extend_from_slice(pair);
        }
    }
    out.push(flag.spelling.clone());
    out.push(value.to_string());
    out
}

// ---------------------------------------------------------------------------------------
// Documented ranges
// ---------------------------------------------------------------------------------------

/// One end of a documented range: a number or a duration, and whether it is excluded
/// (`above 0`).
#[derive(Debug, Clone, Copy)]
struct End {
    value: f64,
    excluded: bool,
}

/// `[range: LOW to HIGH]` from a flag's help, `LOW` maybe `above X`; durations in
/// nanoseconds.
fn documented_range(flag: &Flag) -> (End, End) {
    let help = flag.help.replace('\n', " ");
    let start = help
        .find("[range: ")
        .unwrap_or_else(|| panic!("{}: no [range: ...] in its help: {help}", flag.name()));
    let rest = &help[start + "[range: ".len()..];
    let text = &rest[..rest
        .find(']')
        .unwrap_or_else(|| panic!("{}: unclosed [range:", flag.name()))];
    let (low, high) = text
        .split_once(" to ")
        .unwrap_or_else(|| panic!("{}: range '{text}' is not 'LOW to HIGH'", flag.name()));
    let end = |word: &str| {
        let (word, excluded) = match word.strip_prefix("above ") {
            Some(w) => (w, true),
            None => (word, false),
        };
        let value = match flag.kind {
            Kind::Time => humantime::parse_duration(word)
                .unwrap_or_else(|e| panic!("{}: '{word}': {e}", flag.name()))
                .as_nanos() as f64,
            _ => word
                .parse::<f64>()
                .unwrap_or_else(|e| panic!("{}: '{word}': {e}", flag.name())),
        };
        End { value, excluded }
    };
    (end(low), end(high))
}

/// How `value` is typed for `flag`.
fn typed(flag: &Flag, value: f64) -> String {
    match flag.kind {
        Kind::Time => format!("{}ns", value as u128),
        Kind::Whole => format!("{}", value as u128),
        Kind::Real => format!("{value}"),
    }
}

/// Values just inside and just outside `flag`'s documented range.
fn probes(flag: &Flag) -> (Vec<String>, Vec<String>) {
    let (low, high) = documented_range(flag);
    let mut inside = vec![];
    let mut outside = vec![];
    match flag.kind {
        // Whole numbers up to 2^64 are exact in decimal text, not in f64: ends are
        // written out from the help text's digits.
        Kind::Whole => {
            let text = flag.help.replace('\n', " ");
            let digits: Vec<u128> = text[text.find("[range: ").unwrap_or(0)..]
                .split(|c: char| !c.is_ascii_digit())
                .filter(|w| !w.is_empty())
                .take(2)
                .map(|w| w.parse().unwrap())
                .collect();
            let (lo, hi) = (digits[0], digits[1]);
            inside.extend([lo.to_string(), hi.to_string()]);
            if lo > 0 {
                outside.push((lo - 1).to_string());
            }
            outside.push((hi + 1).to_string());
        }
        Kind::Real | Kind::Time => {
            let step = |v: f64| match flag.kind {
                Kind::Time => 1.0,
                _ => (v.abs() * 1e-9).max(1e-9),
            };
            if low.excluded {
                outside.push(typed(flag, low.value));
                inside.push(typed(flag, low.value + step(low.value)));
            } else {
                inside.push(typed(flag, low.value));
                if flag.kind == Kind::Real || low.value > 0.0 {
                    outside.push(typed(flag, low.value - step(low.value)));
                }
            }
            inside.push(typed(flag, high.value));
            outside.push(typed(flag, high.value + step(high.value)));
        }
    }
    (inside, outside)
}

/// Parses `argv` and checks it as `main` does: `Ok` when the command would run.
fn check_in_process(argv: &[String], through_config: bool) -> Result<(), String> {
    let mut full = vec!["tailrate".to_string()];
    full.extend_from_slice(argv);
    let args = Args::try_parse_from(&full).map_err(|e| e.render().to_string())?;
    if !through_config {
        return Ok(());
    }
    tailrate::config::Command::from_args(&args, &mut std::io::empty())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn every_numeric_flag_documents_the_range_it_enforces() {
    let flags = numeric_flags();
    assert!(
        flags.len() >= 30,
        "found only {} numeric flags",
        flags.len()
    );
    for flag in &flags {
        let (inside, outside) = probes(flag);
        // A live compare needs its two servers before clap lets it through.
        let common: Vec<String> = if flag.subcommand.as_deref() == Some("compare") {
            ["--a", "127.0.0.1:1", "--b", "127.0.0.1:2"]
                .map(String::from)
                .to_vec()
        } else {
            Vec::new()
        };
        // An out-of-range value clap lets through must be refused by the checks after it;
        // a flag whose range is clap's is checked there only at its ends (the checks
        // after it may refuse an end for other flags' sake: --rate's top needs threads).
        let mut clap_enforced = true;
        for value in &outside {
            let args = argv(flag, value, &common);
            let parsed = check_in_process(&args, false);
            let refused = match parsed {
                Err(e) => e,
                Ok(()) => {
                    clap_enforced = false;
                    match check_in_process(&args, true) {
                        Err(e) => e,
                        Ok(()) => panic!(
                            "{} {value} is outside its documented range and accepted",
                            flag.name()
                        ),
                    }
                }
            };
            assert!(
                refused.contains(&flag.spelling),
                "{} {value}: the message does not name the flag: {refused}",
                flag.name()
            );
        }
        for value in &inside {
            let args = argv(flag, value, &common);
            if let Err(e) = check_in_process(&args, !clap_enforced) {
                panic!(
                    "{} {value} is inside its documented range and refused: {e}",
                    flag.name()
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Extreme values, on the binary
// ---------------------------------------------------------------------------------------

/// Extreme values of each kind, typed as a user might.
fn extremes(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Whole => &[
            "0",
            "-1",
            "4294967296",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999",
        ],
        Kind::Real => &[
            "0",
            "-1",
            "4294967296",
            "18446744073709551615",
            "18446744073709551616",
            "1e300",
            "nan",
            "inf",
            "-inf",
        ],
        Kind::Time => &[
            "0",
            "0s",
            "-1s",
            "1ns",
            "4294967296s",
            "18446744073709551615s",
            "18446744073709551616s",
        ],
    }
}

/// How long a case may run before it gets Ctrl+C: a value inside a range may make a long
/// run (`-n 2^64-1`), which must then end promptly on the signal.
const CASE_LIMIT: Duration = Duration::from_secs(3);
/// How long a case may take to end after Ctrl+C: generous (a run ends in well under a
/// second, see tests/signals.rs), as this test shares the machine with others.
const AFTER_SIGNAL_LIMIT: Duration = Duration::from_secs(10);

/// How a case ended.
struct Ended {
    code: Option<i32>,
    stderr: String,
    interrupted: bool,
}

fn run_case(args: &[String]) -> Ended {
    let mut child = Command::new(tailrate_bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stderr.take().unwrap();
    let stderr = thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    let mut interrupted = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if !interrupted && started.elapsed() > CASE_LIMIT {
            interrupted = true;
            signal(child.id(), "-INT");
        }
        if started.elapsed() > CASE_LIMIT + AFTER_SIGNAL_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "tailrate {args:?} did not end {AFTER_SIGNAL_LIMIT:?} after Ctrl+C\n{}",
                stderr.join().unwrap_or_default()
            );
        }
        thread::sleep(Duration::from_millis(5));
    };
    Ended {
        code: status.code(),
        stderr: stderr.join().unwrap_or_default(),
        interrupted,
    }
}

fn signal(pid: u32, which: &str) {
    let sent = Command::new("kill")
        .args([which, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {which} {pid}");
}

#[test]
fn extreme_values_of_every_numeric_flag_end_cleanly_never_in_a_panic() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let port = server.port().to_string();
    let address = format!("127.0.0.1:{port}");
    // What every case adds, and the JSON it leaves: a sweep writes into --out and takes
    // no --json, a live compare names its two servers and prints a table; sweep, tune and
    // compare take no -q.
    let outputs = |flag: &Flag| -> (Vec<String>, std::path::PathBuf) {
        let out = dir.path().to_str().unwrap();
        let report = dir.path().join("r.json");
        let report_arg = report.to_str().unwrap();
        let (common, json) = match flag.subcommand.as_deref() {
            Some("sweep") => (
                vec!["-p", &port, "--no-progress", "--out", out],
                dir.path().join("sweep.json"),
            ),
            Some("compare") => (
                vec![
                    "--a",
                    &address,
                    "--b",
                    &address,
                    "--no-progress",
                    "--json",
                    report_arg,
                ],
                report.clone(),
            ),
            Some("tune") => (
                vec!["-p", &port, "--no-progress", "--json", report_arg],
                report.clone(),
            ),
            _ => (
                vec!["-p", &port, "--no-progress", "-q", "--json", report_arg],
                report.clone(),
            ),
        };
        (common.into_iter().map(String::from).collect(), json)
    };
    let mut tally = std::collections::BTreeMap::<&str, usize>::new();
    let mut ran = Vec::new();
    for flag in numeric_flags() {
        let (common, json) = outputs(&flag);
        for value in extremes(flag.kind) {
            let args = argv(&flag, value, &common);
            let _ = std::fs::remove_file(&json);
            let ended = run_case(&args);
            let case = format!("{} {value}", flag.name());
            assert!(
                !ended.stderr.contains("panicked"),
                "{case}: panicked\n{}",
                ended.stderr
            );
            match ended.code {
                Some(2) => {
                    let lines: Vec<&str> = ended.stderr.lines().collect();
                    assert_eq!(lines.len(), 1, "{case}: one line\n{}", ended.stderr);
                    assert!(
                        lines[0].contains(&flag.spelling),
                        "{case}: the message does not name the flag: {}",
                        lines[0]
                    );
                    *tally.entry("refused").or_default() += 1;
                }
                Some(code @ (0 | 1 | 130)) => {
                    assert!(
                        code == 130 || !ended.interrupted,
                        "{case}: exit {code} after Ctrl+C, not 130\n{}",
                        ended.stderr
                    );
                    if code != 1 {
                        let bytes = std::fs::read(&json)
                            .unwrap_or_else(|e| panic!("{case}: no JSON after exit {code}: {e}"));
                        let _: serde_json::Value = serde_json::from_slice(&bytes)
                            .unwrap_or_else(|e| panic!("{case}: the JSON is broken: {e}"));
                    }
                    *tally
                        .entry(if ended.interrupted {
                            "ran until Ctrl+C"
                        } else {
                            "ran"
                        })
                        .or_default() += 1;
                    ran.push(format!("{case} (exit {code})"));
                }
                other => panic!(
                    "{case}: exit {other:?} (101 is a panic, None a signal)\n{}",
                    ended.stderr
                ),
            }
        }
    }
    eprintln!("extreme values: {tally:?}; the runs: {}", ran.join(", "));
    assert!(
        tally.get("refused").copied().unwrap_or(0) > 100,
        "{tally:?}"
    );
}

// ---------------------------------------------------------------------------------------
// The inputs named in the issue
// ---------------------------------------------------------------------------------------

/// Runs tailrate on `args` with a closed stdin (or `stdin`), returning its exit code,
/// its standard error and how long it took.
fn quick(args: &[&str], stdin: Stdio) -> (Option<i32>, String, Duration) {
    let started = Instant::now();
    let out = Command::new(tailrate_bin())
        .args(args)
        .stdin(stdin)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        started.elapsed(),
    )
}

/// A port nothing listens on: a run that gets past its checks fails to connect at once.
fn refused_port() -> String {
    super::harness::free_port().to_string()
}

#[test]
fn values_larger_than_a_server_accepts_are_refused_with_the_reason() {
    let port = refused_port();
    let (code, err, took) = quick(
        &[
            "-p",
            &port,
            "-t",
            "set",
            "-c",
            "2",
            "--duration",
            "1s",
            "-d",
            "2000000000",
        ],
        Stdio::null(),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("-d") && err.contains("proto-max-bulk-len"),
        "{err}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");

    // Within the server's limit, but fifty connections' write buffers of 512 MiB each:
    // refused before the value is made.
    let (code, err, took) = quick(&["-p", &port, "-c", "50", "-d", "536870912"], Stdio::null());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("-d") && err.contains("4 GiB"), "{err}");
    assert!(
        took < Duration::from_secs(5),
        "refused before building: {took:?}"
    );

    // -x reads no further than one byte past 512 MiB of an endless input.
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let (code, err, took) = quick(&["-p", &port, "-x", "SET", "k"], Stdio::from(zero));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("-x") && err.contains("proto-max-bulk-len"),
        "{err}"
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[test]
fn a_rate_no_thread_can_plan_is_refused_naming_the_threads_it_needs() {
    let port = refused_port();
    let (code, err, _) = quick(
        &[
            "-p",
            &port,
            "-t",
            "get",
            "--rate",
            "1e9",
            "--duration",
            "1s",
        ],
        Stdio::null(),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--rate") && err.contains("--threads 200"),
        "{err}"
    );
    // The same rate over enough threads passes the checks (and meets the refused port).
    let (code, err, _) = quick(
        &[
            "-p",
            &port,
            "-t",
            "get",
            "--rate",
            "1e9",
            "--threads",
            "200",
            "-c",
            "200",
            "--duration",
            "1s",
        ],
        Stdio::null(),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("connect"), "{err}");
}

#[test]
fn the_inputs_that_used_to_panic_are_refused_naming_the_flag() {
    let port = refused_port();
    let cases: &[&[&str]] = &[
        &["--duration", "18446744073709551615s", "-t", "get"],
        &[
            "--warmup",
            "18446744073709551615s",
            "--rate",
            "100",
            "-t",
            "get",
        ],
        &[
            "--timeout",
            "18446744073709551615s",
            "-t",
            "get",
            "-n",
            "10",
        ],
        &[
            "--workers",
            "2",
            "-c",
            "1",
            "--pipeline-delay",
            "18446744073709551615s",
            "-n",
            "10",
        ],
        &[
            "--max-inflight",
            "4294967296",
            "--rate",
            "100",
            "--duration",
            "1s",
        ],
        &["tune", "--confirm-runs", "18446744073709551615"],
        &["-n", "1000", "--ratio", "18446744073709551615:1"],
        &["-n", "18446744073709551616"],
        &["--seed", "18446744073709551616"],
    ];
    for case in cases {
        let flag = if case[0] == "tune" { case[1] } else { case[0] };
        let flag = if flag == "--workers" {
            "--pipeline-delay"
        } else {
            flag
        };
        let flag = if flag == "-n" && case.contains(&"--ratio") {
            "--ratio"
        } else {
            flag
        };
        let mut args: Vec<&str> = Vec::new();
        let at = usize::from(case[0] == "tune");
        args.extend_from_slice(&case[..at]);
        args.extend(["-p", &port]);
        args.extend_from_slice(&case[at..]);
        let (code, err, _) = quick(&args, Stdio::null());
        assert_eq!(code, Some(2), "{case:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{case:?}: {err}");
        assert!(err.contains(flag), "{case:?}: {err} does not name {flag}");
    }
}

#[test]
fn idle_mode_ends_after_duration() {
    let server = RedisServer::start();
    let (code, err, took) = quick(
        &[
            "-p",
            &server.port().to_string(),
            "-I",
            "-c",
            "3",
            "--duration",
            "500ms",
        ],
        Stdio::null(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("3 idle connections") && err.contains("500ms"),
        "{err}"
    );
    assert!(took >= Duration::from_millis(500), "{took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

// ---------------------------------------------------------------------------------------
// The open-file limit
// ---------------------------------------------------------------------------------------

/// This process's hard limit on open files (children start with it too).
fn hard_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum
}

/// `prlimit --nofile=SOFT:HARD tailrate ARGS`: tailrate started with a lowered limit.
fn tailrate_limited(prlimit: &std::path::Path, soft: u64, hard: u64, args: &[&str]) -> Command {
    let mut cmd = Command::new(prlimit);
    cmd.arg(format!("--nofile={soft}:{hard}"))
        .arg(tailrate_bin())
        .args(args);
    cmd
}

#[test]
fn dash_c_2000_runs_with_a_soft_limit_of_256_by_raising_it() {
    let Some(prlimit) = require_tool("prlimit", "apt-get install util-linux") else {
        return;
    };
    let Some(hard) = hard_limit().filter(|&h| h >= 2200) else {
        skip(
            &this_test(),
            &format!(
                "the hard open-file limit is {:?}, below -c 2000",
                hard_limit()
            ),
        );
        return;
    };
    // The child really starts at 256: what `ulimit -n` says under the same prlimit.
    let shown = Command::new(&prlimit)
        .args([&format!("--nofile=256:{hard}"), "sh", "-c", "ulimit -n"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&shown.stdout).trim(), "256");

    let server = RedisServer::builder().arg("--maxclients", "4000").start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let port = server.port().to_string();
    let args = [
        "-p",
        &port,
        "-c",
        "2000",
        "-n",
        "20000",
        "-t",
        "ping_mbulk",
        "-q",
        "--no-progress",
        "--json",
        json.to_str().unwrap(),
    ];
    let out = super::harness::run_with_timeout(
        tailrate_limited(&prlimit, 256, hard, &args),
        Duration::from_secs(120),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let test = &report["tests"][0];
    assert_eq!(test["counts"]["completed"], 20000, "{}", test["counts"]);
    let total = server
        .info_field("stats", "total_connections_received")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(
        total >= 2000,
        "the server saw {total} connections, not the 2000"
    );
}

#[test]
fn dash_c_above_the_hard_limit_is_an_error_before_connecting() {
    let Some(prlimit) = require_tool("prlimit", "apt-get install util-linux") else {
        return;
    };
    // A listener that counts what connects: nothing must.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let args = ["-p", &port, "-c", "2000", "-n", "4000", "-t", "ping"];
    let out = super::harness::run_with_timeout(
        tailrate_limited(&prlimit, 256, 256, &args),
        Duration::from_secs(30),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("-c 2000") && stderr.contains("at most 256"),
        "{stderr}"
    );
    assert!(
        listener.accept().is_err(),
        "tailrate connected before saying the limit is too low"
    );
}
