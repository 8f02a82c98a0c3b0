//! Report and interval-log files that no run could have written, given to `merge`,
//! `compare` and `plot`: each is refused with exit 2, naming the file and the field or
//! line, at once and without a panic; and the paths a merge must not take (its own
//! output folder as an input, a FIFO) are refused before anything is read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{
    RedisServer, run_tailrate_with_timeout, run_with_timeout, skip, stderr_of, tailrate_bin,
};
use super::shard::{finish, spawn_shard, start_in_a_moment};

/// A change to a report's JSON.
type Edit = dyn Fn(&mut Value);

/// Two real shards of one plan: `(json, hlog)` for each.
fn two_shards(dir: &Path) -> [(PathBuf, PathBuf); 2] {
    let server = RedisServer::start();
    let at = start_in_a_moment();
    let extra = ["--rate", "1000", "--duration", "1s"];
    let a = spawn_shard(&server, dir, 0, 2, &at, &extra);
    let b = spawn_shard(&server, dir, 1, 2, &at, &extra);
    for (i, child) in [a, b].into_iter().enumerate() {
        finish(child, &dir.join(format!("shard-{i}.json")));
    }
    [0, 1].map(|i| {
        (
            dir.join(format!("shard-{i}.json")),
            dir.join(format!("shard-{i}.hlog")),
        )
    })
}

fn edit_json(path: &Path, to: &Path, edit: impl Fn(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(to, serde_json::to_vec(&v).unwrap()).unwrap();
}

/// Runs tailrate and asserts the refusal: exit 2 within 20 s, no panic, every needle in
/// its message.
fn assert_refused(args: &[&str], needles: &[&str]) {
    let started = Instant::now();
    let out = run_tailrate_with_timeout(args, Duration::from_secs(20));
    let err = stderr_of(&out);
    assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
    assert_eq!(out.status.code(), Some(2), "{args:?}:\n{err}");
    for needle in needles {
        assert!(err.contains(needle), "{args:?}: no {needle:?} in:\n{err}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{args:?} took {:?}",
        started.elapsed()
    );
}

/// A V2 histogram (base64) whose header claims a 4 GB payload in 40 bytes.
fn four_gigabyte_claim() -> String {
    use base64::Engine;
    let mut b = Vec::new();
    b.extend(0x1c84_9313u32.to_be_bytes());
    b.extend(u32::MAX.to_be_bytes());
    b.extend(0u32.to_be_bytes());
    b.extend(3u32.to_be_bytes());
    b.extend(1u64.to_be_bytes());
    b.extend(3_600_000_000_000u64.to_be_bytes());
    b.extend(1.0f64.to_be_bytes());
    base64::engine::general_purpose::STANDARD.encode(b)
}

#[test]
fn hostile_reports_and_logs_are_refused_naming_the_file_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let [(s0, h0), (s1, h1)] = two_shards(dir.path());
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let bad = dir.path().join("bad.json");
    let bad_s = bad.to_str().unwrap();
    let s1_s = s1.to_str().unwrap();

    // What each field says is checked as the flag that set it would be.
    let cases: Vec<(Box<Edit>, &str)> = vec![
        (
            Box::new(|v| v["settings"]["shard"]["count"] = 4_294_967_295u64.into()),
            "settings.shard",
        ),
        (
            Box::new(|v| v["settings"]["shard"]["count"] = 0.into()),
            "settings.shard",
        ),
        (
            Box::new(|v| v["tests"][0]["counts"]["completed"] = (1u64 << 63).into()),
            "completed",
        ),
        (
            Box::new(|v| v["tests"][0]["achieved_rate_per_sec"] = (-5e5).into()),
            "achieved_rate_per_sec",
        ),
        (
            Box::new(|v| v["tests"][0]["measured_secs"] = (-1.0).into()),
            "measured_secs",
        ),
        (
            Box::new(|v| {
                v["tests"][0]["latency"]["response"]["hdr_v2_base64"] = four_gigabyte_claim().into()
            }),
            "claims a payload",
        ),
    ];
    for (edit, field) in &cases {
        edit_json(&s0, &bad, edit);
        assert_refused(&["merge", "--out", out, bad_s, s1_s], &[bad_s, field]);
    }
    // compare reads the same reports through the same checks.
    edit_json(&s0, &bad, |v| {
        v["tests"][0]["counts"]["sent"] = (1u64 << 63).into()
    });
    assert_refused(&["compare", bad_s, s1_s], &[bad_s, "sent"]);

    // Logs: a StartTime past year 9999, an interval of 1.8e19 s; named by line.
    let log = std::fs::read_to_string(&h0).unwrap();
    let bad_log = dir.path().join("bad.hlog");
    let start = regex_free_replace(&log, "#[StartTime: ", "9000000000000000000.000 ");
    std::fs::write(&bad_log, start).unwrap();
    let bad_log_s = bad_log.to_str().unwrap();
    let (s0_s, h1_s) = (s0.to_str().unwrap(), h1.to_str().unwrap());
    assert_refused(
        &["merge", "--out", out, s0_s, s1_s, bad_log_s, h1_s],
        &[bad_log_s, "StartTime"],
    );
    let long: String = log
        .lines()
        .map(|l| match l.split_once(',') {
            Some((start, rest))
                if !l.starts_with('#') && !l.starts_with('"') && !l.starts_with("Tag=") =>
            {
                let rest = rest.split_once(',').map_or("", |(_, r)| r);
                format!("{start},18000000000000000000,{rest}\n")
            }
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&bad_log, long).unwrap();
    assert_refused(
        &["merge", "--out", out, s0_s, s1_s, bad_log_s, h1_s],
        &[bad_log_s, "length"],
    );
}

/// Replaces the value after `marker` up to the next space with `value`.
fn regex_free_replace(text: &str, marker: &str, value: &str) -> String {
    let at = text.find(marker).unwrap() + marker.len();
    let end = at + text[at..].find(' ').unwrap() + 1;
    format!("{}{value}{}", &text[..at], &text[end..])
}

#[test]
fn a_merge_into_one_of_its_inputs_or_from_a_fifo_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    assert_refused(&["merge", "--out", d, d], &["--out", "also an input"]);
    let fifo = dir.path().join("shard.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // With no writer, reading it would block forever.
    let out = dir.path().join("out");
    assert_refused(
        &[
            "merge",
            "--out",
            out.to_str().unwrap(),
            fifo.to_str().unwrap(),
        ],
        &["not a regular file"],
    );
    assert_refused(
        &["compare", fifo.to_str().unwrap(), fifo.to_str().unwrap()],
        &["not a regular file"],
    );
}

/// An interval line whose histogram claims bounds 1..2^62 at five digits (one count):
/// tens of megabytes of counts once decoded, where a run's span 1 ns to 1 h at three.
fn wide_histogram_line() -> String {
    use base64::Engine;
    let mut b = Vec::new();
    b.extend(0x1c84_9313u32.to_be_bytes());
    b.extend(1u32.to_be_bytes());
    b.extend(0u32.to_be_bytes());
    b.extend(5u32.to_be_bytes());
    b.extend(1u64.to_be_bytes());
    b.extend((1u64 << 62).to_be_bytes());
    b.extend(1.0f64.to_be_bytes());
    b.push(2);
    format!(
        "Tag=GET.evil,0.007,1.000,1.0,{}",
        base64::engine::general_purpose::STANDARD.encode(b)
    )
}

#[test]
fn histograms_no_run_writes_and_logs_of_1970_or_no_length_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let [(s0, h0), (s1, h1)] = two_shards(dir.path());
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let (s0_s, s1_s, h1_s) = (
        s0.to_str().unwrap(),
        s1.to_str().unwrap(),
        h1.to_str().unwrap(),
    );
    let log = std::fs::read_to_string(&h0).unwrap();
    let lines = log.lines().count();
    let bad_log = dir.path().join("bad.hlog");
    let bad_log_s = bad_log.to_str().unwrap();
    let merge = ["merge", "--out", out, s0_s, s1_s, bad_log_s, h1_s];

    // 2,000 such lines (187 KB) once took over two minutes; refused at the first, by line.
    let wide = wide_histogram_line();
    let mut text = log.clone();
    for _ in 0..2000 {
        text.push_str(&wide);
        text.push('\n');
    }
    std::fs::write(&bad_log, &text).unwrap();
    let first = format!("line {}", lines + 1);
    assert_refused(&merge, &[bad_log_s, &first, "not what a run writes"]);

    // The same histogram in a report.
    let bad = dir.path().join("bad.json");
    let wide_b64 = wide.rsplit(',').next().unwrap().to_string();
    edit_json(&s0, &bad, |v| {
        v["tests"][0]["latency"]["lag"]["hdr_v2_base64"] = wide_b64.clone().into()
    });
    let bad_s = bad.to_str().unwrap();
    assert_refused(
        &["merge", "--out", out, bad_s, s1_s],
        &[bad_s, "latency.lag", "not what a run writes"],
    );
    assert_refused(&["compare", bad_s, s1_s], &[bad_s, "not what a run writes"]);

    // A log starting in 1970: StartTime and BaseTime 0.
    let zero = regex_free_replace(&log, "#[StartTime: ", "0.000 ");
    let zero = regex_free_replace(&zero, "#[BaseTime: ", "0.000 ");
    std::fs::write(&bad_log, zero).unwrap();
    assert_refused(&merge, &[bad_log_s, "StartTime"]);

    // Every interval 0 s long.
    let no_length: String = log
        .lines()
        .map(|l| {
            let (tag, rest) = match l.strip_prefix("Tag=") {
                Some(r) => r.split_once(',').map_or(("", l), |(t, r)| (t, r)),
                None => ("", l),
            };
            match rest.split(',').collect::<Vec<_>>()[..] {
                [start, _, max, hist] if !l.starts_with('#') && !l.starts_with('"') => {
                    let tag = if tag.is_empty() {
                        String::new()
                    } else {
                        format!("Tag={tag},")
                    };
                    format!("{tag}{start},0.000,{max},{hist}\n")
                }
                _ => format!("{l}\n"),
            }
        })
        .collect();
    assert!(no_length.contains(",0.000,"), "{no_length}");
    std::fs::write(&bad_log, no_length).unwrap();
    assert_refused(&merge, &[bad_log_s, "lasts 0 s"]);
}

/// A real open-loop run of 2 s at 1,000/s, its report saved in `dir`.
fn open_loop_run(dir: &Path) -> PathBuf {
    let server = RedisServer::start();
    let run = dir.join("run.json");
    let port = server.port().to_string();
    let args = [
        "-p",
        &port,
        "-t",
        "get",
        "--rate",
        "1000",
        "--duration",
        "2s",
        "-q",
        "--json",
        run.to_str().unwrap(),
    ];
    let out = run_tailrate_with_timeout(&args, Duration::from_secs(60));
    assert!(run.exists(), "{}", stderr_of(&out));
    run
}

/// Runs tailrate with `args` under `/usr/bin/time`: its output, its peak resident set
/// (KiB) and how long it took; `None` (skipped, said) without `/usr/bin/time`.
fn measured(test: &str, args: &[&str]) -> Option<(std::process::Output, u64, Duration)> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        skip(
            test,
            "no /usr/bin/time to measure the peak resident set with",
        );
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let peak = dir.path().join("peak");
    let mut cmd = std::process::Command::new(time);
    cmd.args(["-f", "%M", "-o", peak.to_str().unwrap()])
        .arg(tailrate_bin())
        .args(args);
    let started = Instant::now();
    let out = run_with_timeout(cmd, Duration::from_secs(300));
    let took = started.elapsed();
    let text = std::fs::read_to_string(&peak).unwrap();
    let kib = text.trim().lines().last().unwrap().parse().unwrap();
    Some((out, kib, took))
}

#[test]
fn a_page_of_impossible_figures_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let run = open_loop_run(dir.path());
    let run_s = run.to_str().unwrap();
    let html = dir.path().join("page.html");
    let html_s = html.to_str().unwrap();
    // The report as written renders.
    let page = run_tailrate_with_timeout(
        &["report", run_s, "--html", html_s],
        Duration::from_secs(60),
    );
    assert_eq!(page.status.code(), Some(0), "{}", stderr_of(&page));

    let bad = dir.path().join("bad.json");
    let bad_s = bad.to_str().unwrap();
    let report = ["report", bad_s, "--html", html_s];
    // Figures the page showed as `inf%` CPU, a rate of 1e308, a count of 2^64 - 1.
    let cases: Vec<(Box<Edit>, &str)> = vec![
        (
            Box::new(|v| v["tests"][0]["generator_cpu"][0]["wall_secs"] = 1e-320.into()),
            "tests[0].generator_cpu[0].wall_secs is 1e-320",
        ),
        (
            Box::new(|v| v["tests"][0]["generator_cpu"][0]["cpu_secs"] = 1e308.into()),
            "tests[0].generator_cpu[0].cpu_secs is 1e308",
        ),
        (
            Box::new(|v| v["tests"][0]["intervals"][0]["completed"] = u64::MAX.into()),
            "tests[0].intervals[0].completed is 18446744073709551615",
        ),
    ];
    for (edit, field) in &cases {
        edit_json(&run, &bad, edit);
        assert_refused(&report, &[bad_s, field]);
    }
}

/// Writes `run` to `to` with the list at `pointer` made `count` copies of its first item,
/// the last changed by `last`; written as text, so the test holds one item, not the list.
fn long_list(run: &Path, to: &Path, pointer: &str, count: usize, last: impl Fn(&mut Value)) {
    use std::io::Write;
    let mut v: Value = serde_json::from_slice(&std::fs::read(run).unwrap()).unwrap();
    let list = v.pointer_mut(pointer).unwrap();
    let mut item = list[0].clone();
    *list = Value::String("LIST".into());
    let text = serde_json::to_string(&v).unwrap();
    let (head, tail) = text.split_once("\"LIST\"").unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(to).unwrap());
    write!(out, "{head}[").unwrap();
    let one = serde_json::to_string(&item).unwrap();
    for _ in 1..count {
        write!(out, "{one},").unwrap();
    }
    last(&mut item);
    write!(out, "{}]{tail}", serde_json::to_string(&item).unwrap()).unwrap();
    out.flush().unwrap();
}

/// A report of 20,000 response windows (a run keeps 240) took 2.5 GB and 92 s before
/// its refusal, and one of a million intervals as much again: each list is walked as it is
/// read, never built as a tree, and refused at its first item past what a run writes (or
/// at the first impossible figure). The bounds hold for a debug build on a busy machine.
#[test]
fn a_report_of_20000_windows_or_a_million_intervals_is_refused_in_little_memory() {
    const TEST: &str =
        "a_report_of_20000_windows_or_a_million_intervals_is_refused_in_little_memory";
    let dir = tempfile::tempdir().unwrap();
    let run = open_loop_run(dir.path());
    let html = dir.path().join("page.html");
    let html_s = html.to_str().unwrap();
    let windows = dir.path().join("windows.json");
    long_list(
        &run,
        &windows,
        "/tests/0/response_windows/windows",
        20_000,
        |_| {},
    );
    let intervals = dir.path().join("intervals.json");
    long_list(&run, &intervals, "/tests/0/intervals", 1_000_000, |last| {
        last["completed"] = u64::MAX.into();
    });
    for (file, needle) in [
        (
            &windows,
            "tests[0].response_windows.windows holds over 240 windows",
        ),
        (
            &intervals,
            "tests[0].intervals[999999].completed is 18446744073709551615",
        ),
    ] {
        let size = std::fs::metadata(file).unwrap().len() >> 20;
        let file_s = file.to_str().unwrap();
        let Some((out, kib, took)) = measured(TEST, &["report", file_s, "--html", html_s]) else {
            return;
        };
        let err = stderr_of(&out);
        assert!(!err.contains("panicked"), "{file_s} panicked:\n{err}");
        assert_eq!(out.status.code(), Some(2), "{file_s}:\n{err}");
        assert!(
            err.contains(needle),
            "{file_s} ({size} MiB): no {needle:?} in:\n{err}"
        );
        assert!(
            kib < 300 << 10 && took < Duration::from_secs(60),
            "{file_s} ({size} MiB) was refused after {took:?} at a peak of {} MiB",
            kib >> 10
        );
    }
}
