//! Output shape: snapshots (insta, in `tests/snapshots/`) of what the real binary prints
//! against a real redis-server: the text report, `-q`, the CSV header and rows, the
//! JSON report's key set, a sweep's files, and the marks of an invalid run.
//!
//! A run's numbers differ from run to run, so each output goes through [`shape`] first:
//! numbers become `[n]`, padding beside them one width, repeated lines of numbers one
//! line; and where a self-check may pass or fail with the machine's load
//! ([`hide_verdicts`]), what depends on its verdict is taken out. What is left changes
//! only when the layout does: a renamed field, a new column, a lost section. The run
//! that is invalid by construction ([`an_invalid_open_loop_is_flagged_in_text_quiet_and_csv`])
//! keeps its verdicts, so the marks of an invalid run are pinned too.
//!
//! To accept an intended change of layout: `INSTA_UPDATE=always cargo test --test main
//! output::` (or `cargo insta review`), then read the diff of the `.snap` files.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::harness::{RedisServer, assert_success, run_tailrate, run_tailrate_json};

/// The placeholder for a number.
const N: &str = "[n]";

/// The closed loop every closed-loop snapshot runs: two tests, a fixed count, seeded.
const CLOSED: &[&str] = &["-t", "set,get", "-n", "2000", "-c", "2", "--seed", "1"];

/// The open loop every open-loop snapshot runs: Poisson arrivals (the default) at
/// 2000/s for 500 ms, so 50 windows of 20 sends each and every self-check runs.
const OPEN: &[&str] = &[
    "-t",
    "set,get",
    "--rate",
    "2000",
    "--duration",
    "500ms",
    "--warmup",
    "100ms",
    "-c",
    "2",
    "--seed",
    "1",
];

/// An open loop that is invalid whatever the machine does: each `DEBUG SLEEP 0.01` holds
/// the one connection 10 ms, so at most ~100/s of the 1000/s asked for are sent and the
/// achieved-rate check fails; the lag (a few ms at worst) stays far under half of a
/// response time of about a second, and the generator idles.
const INVALID: &[&str] = &[
    "-c",
    "1",
    "--max-inflight",
    "1",
    "--rate",
    "1000",
    "--duration",
    "300ms",
    "--warmup",
    "0s",
    "--seed",
    "1",
    "DEBUG",
    "SLEEP",
    "0.01",
];

/// `-p PORT`, then `extra`, then `args` (which may end in a custom command).
fn argv<'a>(port: &'a str, args: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["-p", port];
    all.extend_from_slice(extra);
    all.extend_from_slice(args);
    all
}

/// Runs tailrate with `--no-progress` before `args`, asserts success, returns stdout.
fn stdout_of(args: &[&str]) -> String {
    let mut all = vec!["--no-progress"];
    all.extend_from_slice(args);
    assert_success(&run_tailrate(&all))
}

/// Whether `c` continues a word or a number, so that a digit after it is part of a name
/// (`p99`, `p99.9`, `hdr_v2`) rather than a number of its own.
fn continues_token(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.'
}

/// `line` with every number (digits with optional decimal points and a sign: `2000`,
/// `0.045`, `-0.00`, `127.0.0.1`) replaced by [`N`]; digits inside names stay.
fn numbers_to_placeholders(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let starts_after_boundary = i == 0 || !continues_token(chars[i - 1]);
        let signed =
            matches!(chars[i], '+' | '-') && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if starts_after_boundary && (chars[i].is_ascii_digit() || signed) {
            i += 1;
            // Digits, and a '.' only when a digit follows it (a sentence's full stop stays).
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (chars[i] == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            out.push_str(N);
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Padding beside a number depends on the number's width: any run of two or more
/// spaces next to [`N`] becomes exactly two (one-space gaps, which are prose, stay).
fn squeeze_padding(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(pos) = rest.find(' ') {
        let (before, from_space) = rest.split_at(pos);
        out.push_str(before);
        let spaces = from_space.len() - from_space.trim_start_matches(' ').len();
        let after = &from_space[spaces..];
        let beside_number = out.ends_with(N) || after.starts_with(N);
        if spaces >= 2 && beside_number {
            out.push_str("  ");
        } else {
            out.push_str(&from_space[..spaces]);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The shape of an output: each line without trailing blanks, numbers as [`N`], padding
/// beside them squeezed ([`squeeze_padding`]); consecutive lines that are then equal and
/// hold a number (a histogram's rows, whose count depends on the data) become one.
fn shape(text: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = squeeze_padding(&numbers_to_placeholders(&without_interval_detail(
            line.trim_end(),
        )));
        if line.contains(N) && lines.last() == Some(&line) {
            continue;
        }
        lines.push(line);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// `line` without what of the confidence intervals follows the run's length and noise:
/// the method (batch means need enough batches), whether a high end is bounded, and the
/// note on a percentile with few samples beyond.
fn without_interval_detail(line: &str) -> String {
    // An open-loop CSV row ends with five intervals' low and high columns; a high end is
    // empty when unbounded.
    let fields: Vec<&str> = line.split("\",\"").collect();
    if line.starts_with('"') && !line.starts_with("\"test\"") && fields.len() >= 39 {
        let keep = fields.len() - 10;
        let shaped: Vec<&str> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i >= keep && (i - keep) % 2 == 1 {
                    if f.ends_with('"') {
                        "[high]\""
                    } else {
                        "[high]"
                    }
                } else {
                    f
                }
            })
            .collect();
        return shaped.join("\",\"");
    }
    let line = match line.find("confidence intervals (msec; ") {
        Some(at) => format!("{}confidence intervals (msec; [method]):", &line[..at]),
        None => line.to_string(),
    };
    let line = line
        .replace(", open]", ", [high]]")
        .replace("  too few beyond to bound", "");
    // The table's columns are as wide as its widest cell: one space between cells.
    let trimmed = line.trim_start();
    let row = trimmed.starts_with('p') && trimmed.contains(" [");
    let header = trimmed.starts_with("response") && trimmed.ends_with(" k");
    if row || header {
        let indent = &line[..line.len() - trimmed.len()];
        let words: Vec<String> = trimmed
            .split_whitespace()
            .map(|w| match w.strip_suffix(']') {
                // A cell's high end, bounded or not.
                Some(n) if n.parse::<f64>().is_ok() => "[high]]".to_string(),
                _ => w.to_string(),
            })
            .collect();
        return format!("{indent}{}", words.join(" "));
    }
    line
}

/// `text` without what depends on whether a self-check passed, for runs whose checks may
/// go either way with the machine's load: verdicts become `[verdict]`, and the meaning
/// line under a failed check, the text report's "THIS RUN IS INVALID" line, the `-q`
/// and sweep lines' invalid marks and the CSV's `valid` value are taken out.
fn hide_verdicts(text: &str) -> String {
    let mut out = String::new();
    let mut after_fail = false;
    for line in text.lines() {
        // The meaning line under a failed check is indented past the verdict.
        if after_fail && line.starts_with("           ") && !line.trim_start().starts_with('[') {
            after_fail = false;
            continue;
        }
        after_fail = line.contains("[FAIL] ");
        if line.trim() == "THIS RUN IS INVALID: see the failed checks above."
            || is_host_tail_line(line)
        {
            continue;
        }
        // The answer's verdict line: valid, or INVALID naming the checks that failed.
        if line.starts_with("  valid: no self-check failed")
            || (line.starts_with("  INVALID: ") && line.ends_with("under self-checks at the end"))
        {
            out.push_str("  [validity]\n");
            continue;
        }
        let line = without_bottleneck(&without_invalid_mark(line));
        let line = line
            .replace("[pass] ", "[verdict] ")
            .replace("[FAIL] ", "[verdict] ")
            .replace("\"true\"", "\"[valid]\"")
            .replace("\"false\"", "\"[valid]\"");
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `text` with every line's bottleneck verdict replaced ([`without_bottleneck`]).
fn without_bottlenecks(text: &str) -> String {
    text.lines()
        .filter(|l| !is_host_tail_line(l) && !is_server_event_line(l))
        .map(|l| without_bottleneck(l) + "\n")
        .collect()
}

/// The host's line of slow replies among its waits: there only when some reply was over
/// the tail's bound, which follows the machine's load.
fn is_host_tail_line(line: &str) -> bool {
    line.trim_start()
        .starts_with("slow replies (over the tail's bound")
}

/// A server event set beside the interval it fell in (`DEBUG at 1.2-1.4 s: ...`): there
/// only when that interval's slowest reply stood out from the run's others, which
/// follows the machine's load as much as the event.
fn is_server_event_line(line: &str) -> bool {
    line.contains("the slowest reply") && line.contains("in the interval from")
}

/// `line` with its bottleneck verdict (which follows the machine's load: a starved
/// generator is a verdict) replaced by `[bottleneck]`: the text report's line and its
/// reason, a sweep step's clause, and the CSV's last column.
fn without_bottleneck(line: &str) -> String {
    // The lag check names the percentile it moved most and whether that move is inside
    // its interval, both of which vary from run to run.
    let line = &match (line.find("the most"), line.find("; lag p99")) {
        (Some(at), Some(end)) if at < end => {
            format!("{}the most [moved]{}", &line[..at], &line[end..])
        }
        _ => line.to_string(),
    };
    // The steady-state check names whose backlog it saw, if it saw one, which follows the
    // machine's load too: its figures keep their shape.
    let line = &match (
        line.find("steady_state: "),
        line.find("batch median response"),
        line.find("; on time"),
    ) {
        (Some(name), Some(from), Some(on)) if name < from && from < on => {
            let end = line[on..].find(')').map_or(line.len(), |e| on + e + 1);
            format!(
                "{}steady_state: {} [whose]",
                &line[..name],
                &line[from..end]
            )
        }
        _ => line.to_string(),
    };
    const NAMES: [&str; 7] = [
        "outage",
        "generator",
        "host",
        "server",
        "client-queue",
        "network/kernel",
        "none",
    ];
    if let Some(at) = line.find("bottleneck: ") {
        let (head, rest) = line.split_at(at + "bottleneck: ".len());
        let tail = if head.trim_start() == "bottleneck: " {
            "" // the text report's line: the verdict and its reason
        } else {
            rest.find(';').map_or("", |end| &rest[end..])
        };
        return format!("{head}[bottleneck]{tail}");
    }
    for name in NAMES {
        if let Some(head) = line.strip_suffix(&format!(",\"{name}\"")) {
            return format!("{head},\"[bottleneck]\"");
        }
        // An open-loop CSV row: the bottleneck column, then the intervals'.
        let column = format!(",\"{name}\",\"");
        if line.starts_with('"') && line.contains(&column) {
            return line.replacen(&column, ",\"[bottleneck]\",\"", 1);
        }
    }
    line.to_string()
}

/// `line` without a `-q` or sweep line's "INVALID: <checks> failed" (its checks vary with the
/// machine's load).
fn without_invalid_mark(line: &str) -> String {
    // A sweep's step line ends with "; INVALID: <checks> failed".
    if let Some(at) = line.find("; INVALID: ") {
        return line[..at].to_string();
    }
    match line.find(", INVALID: ") {
        Some(at) => {
            let rest = &line[at..];
            let end = rest.find(')').unwrap_or(rest.len());
            format!("{}{}", &line[..at], &rest[end..])
        }
        None => line.to_string(),
    }
}

/// Every key path of `value`, sorted and without repeats: object keys joined by `.`,
/// array elements as `[]` (`tests[].latency.response.p99_ns`); a path ends at a scalar,
/// a null, an empty array (`notes[]`) or an empty object (`{}`). A confidence's
/// `freedom` is left out: it holds a key only for the percentiles whose interval the
/// run's own spread widened, which the data decides (`freedom_is_kept_where_...` below
/// checks it). So are the lists of a tail's attribution (`causes`, `stalls`,
/// `host_parts`): which causes carried the tail is the run's to say.
fn key_paths(value: &Value) -> String {
    fn walk(value: &Value, path: &str, out: &mut BTreeSet<String>) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                for (key, v) in map {
                    if key == "freedom" && path.ends_with(".confidence") {
                        continue;
                    }
                    if matches!(key.as_str(), "causes" | "stalls" | "host_parts")
                        && path.ends_with(".tail")
                    {
                        continue;
                    }
                    let path = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(v, &path, out);
                }
            }
            Value::Object(_) => {
                out.insert(format!("{path}{{}}"));
            }
            Value::Array(items) if !items.is_empty() => {
                for v in items {
                    walk(v, &format!("{path}[]"), out);
                }
            }
            Value::Array(_) => {
                out.insert(format!("{path}[]"));
            }
            _ => {
                out.insert(path.to_owned());
            }
        }
    }
    let mut paths = BTreeSet::new();
    walk(value, "", &mut paths);
    let mut out = paths.into_iter().collect::<Vec<_>>().join("\n");
    out.push('\n');
    out
}

#[test]
fn shape_replaces_numbers_but_keeps_names_that_hold_digits() {
    assert_eq!(
        shape("  p99.9 at 127.0.0.1:6379 = -0.25% in 10ms, hdr_v2 ok.\n"),
        "  p99.9 at [n]:[n] = [n]% in [n]ms, hdr_v2 ok.\n"
    );
    assert_eq!(
        shape(r#""SET","21642.32","0.094","p99.9","""#),
        r#""SET","[n]","[n]","p99.9","""#.to_owned() + "\n"
    );
    assert_eq!(shape("took 5. Then\n"), "took [n]. Then\n");
}

#[test]
fn shape_squeezes_padding_beside_numbers_and_folds_repeated_rows() {
    let table = "  header:  \n\
                 \x20      0.093     0.022\n\
                 \x20    1091.859    16.794\n\
                 0.000% <= 0.022 milliseconds\n\
                 50.000% <= 0.045 milliseconds\n\
                 \n\
                 \n\
                 end\n";
    assert_eq!(
        shape(table),
        "  header:\n  [n]  [n]\n[n]% <= [n] milliseconds\n\n\nend\n",
        "blank lines without numbers are kept as they are"
    );
}

#[test]
fn hide_verdicts_leaves_the_same_text_for_a_pass_and_a_fail() {
    let pass = "    [pass] schedule_lag: lag 1 ns\n    [pass] generator_cpu: 0%\n";
    let fail = "    [FAIL] schedule_lag: lag 9 ns\n           the generator fell behind\n    \
                [pass] generator_cpu: 0%\n  THIS RUN IS INVALID: see the failed checks above.\n";
    let valid = "  valid: no self-check failed (the checks are listed at the end)\n";
    let invalid =
        "  INVALID: schedule_lag failed; what each failure means is under self-checks at the end\n";
    assert_eq!(hide_verdicts(valid), hide_verdicts(invalid));
    assert_eq!(shape(&hide_verdicts(pass)), shape(&hide_verdicts(fail)));
    assert_eq!(
        hide_verdicts(
            "GET: 1 rps (open loop at 2/s, INVALID: schedule_lag and generator_cpu failed)\n"
        ),
        "GET: 1 rps (open loop at 2/s)\n"
    );
}

#[test]
fn text_report_of_a_closed_loop_keeps_its_shape() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let stdout = stdout_of(&argv(&port, CLOSED, &[]));
    insta::assert_snapshot!("closed_loop_text", shape(&without_bottlenecks(&stdout)));
}

#[test]
fn the_full_text_names_the_seed_among_the_settings_and_the_quiet_line_does_not() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let args = ["-t", "ping", "-n", "200", "-c", "2", "--seed", "4242"];
    let full = stdout_of(&argv(&port, &args, &[]));
    let settings: Vec<&str> = full
        .lines()
        .skip_while(|l| !l.starts_with("======"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(settings.contains(&"  seed: 4242"), "{full}");
    let quiet = stdout_of(&argv(&port, &args, &["-q"]));
    assert!(!quiet.contains("seed"), "{quiet}");
}

#[test]
fn text_report_of_an_open_loop_keeps_its_shape() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let stdout = stdout_of(&argv(&port, OPEN, &[]));
    insta::assert_snapshot!("open_loop_text", shape(&hide_verdicts(&stdout)));
}

#[test]
fn quiet_lines_of_a_closed_and_an_open_loop_keep_their_shape() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let closed = stdout_of(&argv(&port, CLOSED, &["-q"]));
    let open = stdout_of(&argv(&port, OPEN, &["-q"]));
    insta::assert_snapshot!("closed_loop_quiet", shape(&closed));
    insta::assert_snapshot!("open_loop_quiet", shape(&hide_verdicts(&open)));
}

#[test]
fn csv_header_and_rows_of_a_closed_and_an_open_loop_keep_their_shape() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let closed = stdout_of(&argv(&port, CLOSED, &["--csv"]));
    let open = stdout_of(&argv(&port, OPEN, &["--csv"]));
    insta::assert_snapshot!("closed_loop_csv", shape(&closed));
    insta::assert_snapshot!("open_loop_csv", shape(&hide_verdicts(&open)));
}

#[test]
fn json_reports_of_a_closed_and_an_open_loop_keep_their_key_sets() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let (_, closed) = run_tailrate_json(&argv(&port, CLOSED, &[]));
    let (_, open) = run_tailrate_json(&argv(&port, OPEN, &[]));
    insta::assert_snapshot!("closed_loop_json_keys", key_paths(&closed));
    insta::assert_snapshot!("open_loop_json_keys", key_paths(&open));
    freedom_is_kept_where_the_design_effect_widened(&closed);
    freedom_is_kept_where_the_design_effect_widened(&open);
}

/// Each metric's `confidence.freedom` names exactly the percentiles whose design effect
/// is above 1 (the degrees of freedom that widening rests on, which `compare` needs to
/// redo it at another confidence), each with at least one degree of freedom.
fn freedom_is_kept_where_the_design_effect_widened(report: &Value) {
    let mut seen = 0;
    for test in report["tests"].as_array().unwrap() {
        for (metric, latency) in test["latency"].as_object().unwrap() {
            let Some(confidence) = latency.get("confidence") else {
                continue;
            };
            let effects = confidence["design_effect"].as_object().unwrap();
            let empty = serde_json::Map::new();
            let freedom = confidence
                .get("freedom")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            for (key, effect) in effects {
                let widened = effect.as_f64().unwrap() > 1.0;
                match freedom.get(key).and_then(Value::as_f64) {
                    Some(f) => assert!(
                        widened && f >= 1.0,
                        "{metric} {key}: freedom {f} beside design effect {effect}"
                    ),
                    None => assert!(
                        !widened,
                        "{metric} {key}: design effect {effect} without freedom"
                    ),
                }
                seen += 1;
            }
            for key in freedom.keys() {
                assert!(
                    effects.contains_key(key),
                    "{metric}: freedom for {key}, no design effect"
                );
            }
        }
    }
    assert!(seen > 0, "no design effect in the report");
}

#[test]
fn an_invalid_open_loop_is_flagged_in_text_quiet_and_csv() {
    let server = RedisServer::builder()
        .arg("--enable-debug-command", "yes")
        .start();
    let port = server.port().to_string();
    // The generator's own checks follow the machine's load: on a host busy enough to fail
    // them the shape is another one, so the run is tried again, and skipped on record.
    let generator_failed = |report: &Value| {
        report["tests"][0]["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| {
                c["verdict"] == "fail"
                    && matches!(c["name"].as_str(), Some("generator_cpu" | "schedule_lag"))
            })
    };
    let mut attempts = (0..3).map(|_| run_tailrate_json(&argv(&port, INVALID, &[])));
    let Some((text, report)) = attempts.find(|(_, r)| !generator_failed(r)) else {
        super::harness::skip(
            &super::harness::this_test(),
            "the generator's checks failed in 3 runs of 3: the host took its CPU",
        );
        return;
    };
    let test = &report["tests"][0];
    assert_eq!(test["valid"], false, "{}", test["checks"]);
    // The same for the quiet line and the CSV, which name the checks that failed.
    let settled = |extra: &str| {
        (0..3)
            .map(|_| stdout_of(&argv(&port, INVALID, &[extra])))
            .find(|out| !out.contains("generator_cpu") && !out.contains("schedule_lag"))
    };
    let (Some(quiet), Some(csv)) = (settled("-q"), settled("--csv")) else {
        super::harness::skip(
            &super::harness::this_test(),
            "the generator's checks failed in 3 runs of 3: the host took its CPU",
        );
        return;
    };
    insta::assert_snapshot!("invalid_open_loop_text", shape(&without_bottlenecks(&text)));
    insta::assert_snapshot!("invalid_open_loop_quiet", shape(&quiet));
    insta::assert_snapshot!("invalid_open_loop_csv", shape(&without_bottlenecks(&csv)));
}

#[test]
fn a_sweep_keeps_its_lines_json_key_set_and_csv_shape() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let stdout = assert_success(&run_tailrate(&[
        "sweep",
        "-p",
        &port,
        "--no-progress",
        "--seed",
        "7",
        "--out",
        out,
        "--rates",
        "1k,2k",
        "--duration",
        "300ms",
        "--warmup",
        "0s",
        "--settle",
        "0s",
        "-t",
        "get",
    ]));
    let json: Value = serde_json::from_slice(&read(&dir.path().join("sweep.json"))).unwrap();
    let csv = String::from_utf8(read(&dir.path().join("sweep.csv"))).unwrap();
    insta::assert_snapshot!(
        "sweep_stdout",
        shape(&hide_verdicts(&stdout.replace(out, "[out]")))
    );
    insta::assert_snapshot!("sweep_json_keys", key_paths(&json));
    insta::assert_snapshot!("sweep_csv", shape(&hide_verdicts(&csv)));
}

/// The bytes of `path`; panics naming it.
fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}
