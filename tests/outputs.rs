//! Where outputs go (issue 26, "Outputs"): a regular file is replaced atomically, a
//! link is written through and kept, a device or a FIFO is written directly and stays
//! what it was, `-` is standard output; every path is checked before the first request,
//! two outputs never share one; and the `.hlog` is one HdrHistogram's own Java tools read.
//!
//! The device cases run in a private mount namespace (`unshare -m`, a tmpfs over `/dev`
//! with its own `null` and `full`), so a broken writer replaces those nodes, never the
//! machine's.

use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::harness::{
    RedisServer, assert_success, read_json, run_tailrate, run_tailrate_with_timeout,
    run_with_timeout, skip, stderr_of, tailrate_bin, this_test,
};

/// A short closed loop of two tests: the JSON of each is written after it.
fn closed(port: &str) -> Vec<String> {
    [
        "-p",
        port,
        "-t",
        "get,set",
        "-n",
        "500",
        "-c",
        "2",
        "-q",
        "--no-progress",
    ]
    .map(String::from)
    .to_vec()
}

fn with(base: &[String], extra: &[&str]) -> Vec<String> {
    let mut v = base.to_vec();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn run(args: &[String]) -> std::process::Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run_tailrate(&refs)
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).unwrap().file_type().is_symlink()
}

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}):\n{}",
            String::from_utf8_lossy(bytes)
        )
    })
}

#[test]
fn json_and_hdr_log_through_a_symlink_write_the_file_it_names_and_keep_the_link() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    fs::create_dir(&real).unwrap();
    fs::write(real.join("r.json"), b"old").unwrap();
    let json = dir.path().join("r.json");
    let hlog = dir.path().join("r.hlog");
    std::os::unix::fs::symlink("real/r.json", &json).unwrap();
    // A dangling link: the file it names is made.
    std::os::unix::fs::symlink("real/r.hlog", &hlog).unwrap();
    let port = server.port().to_string();
    let out = run(&with(
        &closed(&port),
        &[
            "--json",
            json.to_str().unwrap(),
            "--hdr-log",
            hlog.to_str().unwrap(),
        ],
    ));
    assert_success(&out);
    assert!(
        is_symlink(&json) && is_symlink(&hlog),
        "a link was replaced"
    );
    let report = json_of(&fs::read(real.join("r.json")).unwrap());
    assert_eq!(report["tests"].as_array().unwrap().len(), 2);
    assert!(
        fs::read_to_string(real.join("r.hlog"))
            .unwrap()
            .contains("GET.response")
    );
    assert_eq!(names(dir.path()), ["r.hlog", "r.json", "real"]);
    assert_eq!(names(&real), ["r.hlog", "r.json"]);
}

#[test]
fn a_fifo_gets_one_json_document_at_the_end_and_stays_a_fifo() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("r.json");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo failed");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(&fifo).unwrap())
    };
    let port = server.port().to_string();
    let out = run(&with(&closed(&port), &["--json", fifo.to_str().unwrap()]));
    // Unblocks the reader if tailrate never opened the FIFO (then it reads nothing).
    {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo);
    }
    let read = reader.join().unwrap();
    assert_success(&out);
    assert!(
        fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(),
        "the FIFO was replaced by a file"
    );
    // One document (two would not parse as one), holding both tests: written once, at the end.
    let report = json_of(&read);
    assert_eq!(report["tests"].as_array().unwrap().len(), 2);
    assert_eq!(names(dir.path()), ["r.json"]);
}

#[test]
fn sweep_and_plot_files_that_are_links_are_written_through_and_kept() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let kept = dir.path().join("kept");
    fs::create_dir_all(&out).unwrap();
    fs::create_dir_all(&kept).unwrap();
    for name in ["sweep.json", "sweep.csv", "latency-vs-rate.svg"] {
        std::os::unix::fs::symlink(kept.join(name), out.join(name)).unwrap();
    }
    let port = server.port().to_string();
    let swept = run_tailrate_with_timeout(
        &[
            "sweep",
            "-p",
            &port,
            "-t",
            "get",
            "-c",
            "2",
            "--rates",
            "1k",
            "--duration",
            "300ms",
            "--warmup",
            "0s",
            "--settle",
            "0s",
            "--seed",
            "3",
            "--no-progress",
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert_success(&swept);
    for name in ["sweep.json", "sweep.csv", "latency-vs-rate.svg"] {
        assert!(is_symlink(&out.join(name)), "{name}: the link was replaced");
        assert!(
            !fs::read(kept.join(name)).unwrap().is_empty(),
            "{name} is empty"
        );
    }
    json_of(&fs::read(kept.join("sweep.json")).unwrap());

    let plots = dir.path().join("plots");
    fs::create_dir_all(&plots).unwrap();
    let svg = dir.path().join("kept/replotted.svg");
    std::os::unix::fs::symlink(&svg, plots.join("latency-vs-rate.svg")).unwrap();
    assert_success(&run_tailrate(&[
        "plot",
        out.join("sweep.json").to_str().unwrap(),
        "--out",
        plots.to_str().unwrap(),
    ]));
    assert!(is_symlink(&plots.join("latency-vs-rate.svg")));
    assert!(fs::read_to_string(&svg).unwrap().contains("<svg"));
    assert!(
        names(&out).iter().all(|n| !n.contains(".tmp-")),
        "{:?}",
        names(&out)
    );
}

/// Runs `script` with `sh` in a private mount namespace whose `/dev` is a fresh tmpfs
/// holding only `null` (1,3) and `full` (1,7) and a `stdout` link to `/proc/self/fd/1`;
/// `None` (after recording a skip) when this machine cannot (not root, no `unshare`).
fn in_private_dev(script: &str) -> Option<std::process::Output> {
    let probe = Command::new("unshare")
        .args(["-m", "sh", "-c", "mount -t tmpfs tailrate-dev /dev"])
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        let why = match probe {
            Ok(o) => stderr_of(&o),
            Err(e) => e.to_string(),
        };
        skip(
            &this_test(),
            &format!("cannot mount a private /dev (needs root and unshare -m): {why}"),
        );
        return None;
    }
    let setup = "set -u; mount -t tmpfs tailrate-dev /dev && \
                 mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/full c 1 7 && \
                 ln -s /proc/self/fd/1 /dev/stdout || exit 99\n";
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "sh", "-c", &format!("{setup}{script}")]);
    cmd.env("T", tailrate_bin());
    let out = run_with_timeout(cmd, Duration::from_secs(120));
    assert_ne!(
        out.status.code(),
        Some(99),
        "setting up /dev: {}",
        stderr_of(&out)
    );
    Some(out)
}

/// The value of `key=` on the line that starts with it.
fn field<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in:\n{text}"))
}

#[test]
fn devices_stay_devices_and_a_full_device_fails_the_run_naming_the_flag_and_path() {
    let server = RedisServer::start();
    let p = server.port();
    let run = format!("\"$T\" -p {p} -t get -n 1000 -q --no-progress");
    let script = format!(
        "{run} --json /dev/null >/dev/null 2>&1; echo \"json_null=$?\"
         {run} --hdr-log /dev/null >/dev/null 2>&1; echo \"hlog_null=$?\"
         stat -c 'null_type=%F' /dev/null
         err=$({run} --json /dev/full 2>&1 >/dev/null); echo \"json_full=$? $err\"
         err=$({run} --hdr-log /dev/full 2>&1 >/dev/null); echo \"hlog_full=$? $err\"
         stat -c 'full_type=%F' /dev/full
         n=$({run} --json /dev/stdout 2>/dev/null | grep -c schema_version); echo \"json_stdout=$n\"
         stat -c 'stdout_type=%F' /dev/stdout
         echo \"dev=$(ls -A /dev | tr '\\n' ' ')\"
        "
    );
    let Some(out) = in_private_dev(&script) else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let text = format!("{text}{}", stderr_of(&out));
    assert_eq!(field(&text, "json_null"), "0", "{text}");
    assert_eq!(field(&text, "hlog_null"), "0", "{text}");
    assert_eq!(
        field(&text, "null_type"),
        "character special file",
        "{text}"
    );
    assert_eq!(
        field(&text, "full_type"),
        "character special file",
        "{text}"
    );
    assert_eq!(field(&text, "stdout_type"), "symbolic link", "{text}");
    // Written through the link into the pipe: one document beside the -q lines.
    assert_eq!(field(&text, "json_stdout"), "1", "{text}");
    for (key, flag) in [("json_full", "--json"), ("hlog_full", "--hdr-log")] {
        let line = field(&text, key);
        assert!(line.starts_with("1 "), "{key}: exit 1 expected: {line}");
        assert!(
            line.contains(flag) && line.contains("/dev/full") && line.contains("No space"),
            "{key}: {line}"
        );
    }
    // No temporary file was left beside a device.
    assert_eq!(field(&text, "dev").trim(), "full null stdout", "{text}");
    // The machine's own /dev/null was never touched.
    assert!(
        fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

#[test]
fn json_dash_prints_one_document_on_stdout_in_place_of_the_text_and_csv_report() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    for extra in [&["--json", "-"][..], &["--json", "-", "--csv"][..]] {
        let out = run(&with(&closed(&port), extra));
        let stdout = assert_success(&out);
        let report = json_of(stdout.as_bytes());
        assert_eq!(report["tests"].as_array().unwrap().len(), 2, "{extra:?}");
    }
}

#[test]
fn hdr_log_dash_prints_the_log_alone_on_stdout() {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = run(&with(
        &closed(&port),
        &["--hdr-log", "-", "--json", json.to_str().unwrap()],
    ));
    let stdout = assert_success(&out);
    assert!(stdout.starts_with('#'), "{stdout}");
    assert!(!stdout.contains("requests per second"), "{stdout}");
    let mut intervals = 0;
    for entry in IntervalLogIterator::new(stdout.as_bytes()) {
        if let LogEntry::Interval(_) = entry.unwrap_or_else(|e| panic!("{e:?} in:\n{stdout}")) {
            intervals += 1;
        }
    }
    assert!(intervals >= 2, "{stdout}");
    assert!(stdout.contains("Tag=GET.response") && stdout.contains("Tag=SET.response"));
    assert_eq!(
        json_of(&fs::read(&json).unwrap())["tests"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn tune_json_dash_prints_the_search_once_in_place_of_its_lines() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let out = run_tailrate_with_timeout(
        &[
            "tune",
            "-p",
            &port,
            "-t",
            "get",
            "-c",
            "2",
            "--duration",
            "200ms",
            "--max-trials",
            "2",
            "--confirm-runs",
            "1",
            "--no-progress",
            "--json",
            "-",
        ],
        Duration::from_secs(60),
    );
    let stdout = assert_success(&out);
    let report = json_of(stdout.as_bytes());
    assert!(!report["trials"].as_array().unwrap().is_empty(), "{stdout}");
    assert_eq!(report["complete"], true);
}

#[test]
fn help_says_what_a_dash_does_for_json_and_hdr_log() {
    let help = assert_success(&run_tailrate(&["--help"]));
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for flag in ["--json <FILE>", "--hdr-log <FILE>"] {
        let (_, after) = help
            .split_once(flag)
            .unwrap_or_else(|| panic!("{flag}: {help}"));
        let text = &after[..after.find(" --").unwrap_or(after.len())];
        assert!(
            text.contains("`-` prints it on standard output")
                && text.contains("instead of the text or CSV report"),
            "{flag}: {text}"
        );
    }
}

#[test]
fn an_output_path_that_cannot_be_written_fails_before_the_first_request_naming_flag_and_path() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("FILE");
    fs::write(&file, b"").unwrap();
    let a_dir = dir.path().join("a-dir");
    fs::create_dir(&a_dir).unwrap();
    let missing = dir.path().join("missing/r.json");
    let under_file = file.join("r.json");
    let cases: [(&str, &Path, &str); 6] = [
        ("--json", &missing, "does not exist"),
        ("--json", &under_file, "is a file, not a directory"),
        ("--json", &a_dir, "is a directory"),
        ("--hdr-log", &missing, "does not exist"),
        ("--hdr-log", &under_file, "is a file, not a directory"),
        ("--hdr-log", &a_dir, "is a directory"),
    ];
    for (flag, path, why) in cases {
        for mode in [
            &["-n", "2000"][..],
            &["--rate", "1000", "--duration", "1s"][..],
        ] {
            let args = with(
                &["-p", &port, "-t", "get", "-q", "--no-progress"].map(String::from),
                &[mode, &[flag, path.to_str().unwrap()]].concat(),
            );
            let out = run(&args);
            let err = stderr_of(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
            assert!(
                err.contains(flag) && err.contains(path.to_str().unwrap()) && err.contains(why),
                "{args:?}: {err}"
            );
        }
    }
    // tune's --json is checked the same way, before its first trial.
    let out = run_tailrate(&[
        "tune",
        "-p",
        &port,
        "-t",
        "get",
        "--json",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("--json"), "{}", stderr_of(&out));
    assert_eq!(
        server.commandstats().get("get"),
        None,
        "a request was sent before the path was checked"
    );
    // Nothing was left behind: no temporary file beside any of the targets.
    assert_eq!(names(dir.path()), ["FILE", "a-dir"]);
    assert!(names(&a_dir).is_empty());
}

#[test]
fn out_dash_is_refused_for_sweep_and_plot_since_out_is_a_directory() {
    super::harness::assert_usage_error(
        &["sweep", "--rates", "1k", "--out", "-"],
        &["--out", "directory"],
    );
    super::harness::assert_usage_error(&["plot", "x.json", "--out", "-"], &["--out", "directory"]);
    assert!(!Path::new("-").exists());
}

#[test]
fn two_outputs_on_one_path_are_refused_naming_both_flags() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("x");
    let x_again = dir.path().join(".").join("x");
    let x_str = x.to_str().unwrap();
    let cases = [
        [x_str, x_str],
        [x_str, x_again.to_str().unwrap()],
        ["-", "-"],
    ];
    for [json, hlog] in cases {
        let needles = ["--json", "--hdr-log", "both write to"];
        super::harness::assert_usage_error(
            &[
                "-p",
                &port,
                "-t",
                "get",
                "-n",
                "100",
                "--json",
                json,
                "--hdr-log",
                hlog,
            ],
            &needles,
        );
    }
    // An existing file reached by two names, one of them a link, is one place too.
    fs::write(&x, b"").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&x, &link).unwrap();
    super::harness::assert_usage_error(
        &[
            "-p",
            &port,
            "-n",
            "100",
            "--json",
            link.to_str().unwrap(),
            "--hdr-log",
            x_str,
        ],
        &["--json", "--hdr-log"],
    );
    assert_eq!(fs::read(&x).unwrap(), b"", "the file was written");
    assert_eq!(server.commandstats().get("get"), None);
}

/// HdrHistogram's Java library as Debian installs it (`libhdrhistogram-java`).
const HDRHISTOGRAM_JAR: &str = "/usr/share/java/hdrhistogram.jar";

/// `java` and HdrHistogram's jar; `None` (after recording a skip) when either is missing
/// outside CI, a panic in CI, where `scripts/test` installs both.
fn java_and_jar() -> Option<std::path::PathBuf> {
    let java = super::harness::require_tool(
        "java",
        "run scripts/test (or `apt-get install -y default-jre-headless`)",
    )?;
    if !Path::new(HDRHISTOGRAM_JAR).is_file() {
        let missing = format!(
            "{HDRHISTOGRAM_JAR} is missing; run scripts/test (or `apt-get install -y libhdrhistogram-java`)"
        );
        if super::harness::in_ci() {
            panic!("{missing} (CI is set: a missing tool fails the test)");
        }
        skip(&this_test(), &missing);
        return None;
    }
    Some(java)
}

/// Runs `HistogramLogProcessor -i hlog -o out -csv [extra]`; returns each interval row's
/// (end time, count) from its interval file, after checking it exited 0.
fn log_processor(java: &Path, hlog: &Path, extra: &[&str]) -> Vec<(f64, u64)> {
    let out = hlog.with_extension(format!("processed{}", extra.len()));
    let mut cmd = Command::new(java);
    cmd.args([
        "-cp",
        HDRHISTOGRAM_JAR,
        "org.HdrHistogram.HistogramLogProcessor",
        "-i",
    ])
    .arg(hlog)
    .arg("-o")
    .arg(&out)
    .arg("-csv")
    .args(extra);
    let ran = run_with_timeout(cmd, Duration::from_secs(60));
    let err = stderr_of(&ran);
    assert!(
        ran.status.success() && !err.contains("Exception"),
        "{extra:?}: {err}"
    );
    let text = fs::read_to_string(&out).unwrap();
    text.lines()
        .skip_while(|l| !l.starts_with("\"Timestamp\""))
        .skip(1)
        .map(|row| {
            let cols: Vec<&str> = row.split(',').collect();
            (cols[0].parse().unwrap(), cols[1].parse().unwrap())
        })
        .collect()
}

/// Each interval line of `tag` (`None`: the untagged series) in the log: (end time, count).
fn hlog_series(bytes: &[u8], tag: Option<&str>) -> Vec<(f64, u64)> {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    IntervalLogIterator::new(bytes)
        .filter_map(|entry| match entry.unwrap() {
            LogEntry::Interval(i) if i.tag().map(|t| t.as_str()) == tag => Some(i),
            _ => None,
        })
        .map(|i| {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(i.encoded_histogram())
                .unwrap();
            let h: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
                .deserialize(&mut raw.as_slice())
                .unwrap();
            ((i.start_timestamp() + i.duration()).as_secs_f64(), h.len())
        })
        .collect()
}

/// The Java tool's rows against the log's own lines: the same count on every line, at
/// the same time (it prints each interval's end, to the millisecond).
fn assert_same_rows(java: &[(f64, u64)], file: &[(f64, u64)], what: &str) {
    let counts = |rows: &[(f64, u64)]| rows.iter().map(|r| r.1).collect::<Vec<_>>();
    assert_eq!(
        counts(java),
        counts(file),
        "{what}: counts per interval, Java vs the file"
    );
    for (j, f) in java.iter().zip(file) {
        assert!(
            (j.0 - f.0).abs() < 0.0015,
            "{what}: interval ending at {} read as {}",
            f.0,
            j.0
        );
    }
}

#[test]
fn hdrhistograms_java_log_processor_reads_the_hlog_and_its_untagged_series_is_every_reply() {
    let Some(java) = java_and_jar() else {
        return;
    };
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let hlog = dir.path().join("run.hlog");
    let out = run_tailrate(&[
        "-p",
        &port,
        "-t",
        "get,set",
        "--rate",
        "2000",
        "--duration",
        "2s",
        "--seed",
        "5",
        "-q",
        "--no-progress",
        "--json",
        json.to_str().unwrap(),
        "--hdr-log",
        hlog.to_str().unwrap(),
    ]);
    assert_success(&out);
    let report = json_of(&fs::read(&json).unwrap());
    let completed = |test: &Value| test["counts"]["completed"].as_u64().unwrap();
    let tests = report["tests"].as_array().unwrap();
    let all: u64 = tests.iter().map(completed).sum();
    let bytes = fs::read(&hlog).unwrap();

    // No flags: the untagged series, every command's response time together.
    let rows = log_processor(&java, &hlog, &[]);
    let untagged = hlog_series(&bytes, None);
    assert_same_rows(&rows, &untagged, "untagged");
    let total: u64 = rows.iter().map(|r| r.1).sum();
    assert_eq!(
        total, all,
        "the untagged series against the JSON's completed requests"
    );
    assert!(
        (7200..=8800).contains(&total),
        "{total} replies at 2000/s, 2 s for each of 2 tests"
    );

    // The tagged series are still there, each one test's replies.
    for test in tests {
        let tag = format!("{}.response", test["name"].as_str().unwrap());
        let rows = log_processor(&java, &hlog, &["-tag", &tag]);
        assert_same_rows(&rows, &hlog_series(&bytes, Some(&tag)), &tag);
        assert_eq!(
            rows.iter().map(|r| r.1).sum::<u64>(),
            completed(test),
            "{tag}"
        );
    }
}

#[test]
fn a_sweep_steps_hlog_is_read_by_hdrhistograms_java_log_processor_too() {
    let Some(java) = java_and_jar() else {
        return;
    };
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let swept = run_tailrate_with_timeout(
        &[
            "sweep",
            "-p",
            &port,
            "-t",
            "get",
            "-c",
            "2",
            "--rates",
            "1k",
            "--duration",
            "500ms",
            "--warmup",
            "0s",
            "--settle",
            "0s",
            "--seed",
            "3",
            "--no-progress",
            "--out",
            dir.path().to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert_success(&swept);
    let report = json_of(&fs::read(dir.path().join("sweep.json")).unwrap());
    let step = &report["runs"][0];
    let hlog = dir.path().join(step["hlog"].as_str().unwrap());
    let rows = log_processor(&java, &hlog, &[]);
    assert_same_rows(&rows, &hlog_series(&fs::read(&hlog).unwrap(), None), "step");
    let total: u64 = rows.iter().map(|r| r.1).sum();
    assert_eq!(
        total,
        step["report"]["counts"]["completed"].as_u64().unwrap()
    );
}

/// `--percentiles` chooses the percentiles the text's answer and interval table list, each
/// with its interval, and keeps them in JSON beside the fixed ones; a bad entry is named.
#[test]
fn percentiles_chooses_the_reported_list_with_intervals() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let port = server.port().to_string();
    let out = run_tailrate(&[
        "-p",
        &port,
        "--rate",
        "2000",
        "--duration",
        "1s",
        "-t",
        "get",
        "--no-progress",
        "--percentiles",
        "99.95,50,99.5",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = assert_success(&out);
    let answer = stdout.lines().nth(2).unwrap_or_default();
    assert!(
        answer.contains("p50 ") && answer.contains("p99.5 ") && answer.contains("p99.95 "),
        "{stdout}"
    );
    assert!(!answer.contains("p99.9 "), "{answer}");
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.contains("95% confidence intervals"))
        .skip(2)
        .take(3)
        .collect();
    let labels: Vec<&str> = table
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(labels, ["p50", "p99.5", "p99.95"], "{stdout}");
    let report = read_json(&json);
    let chosen = report["tests"][0]["latency"]["response"]["chosen"]
        .as_array()
        .unwrap();
    let ps: Vec<f64> = chosen
        .iter()
        .map(|c| c["percentile"].as_f64().unwrap())
        .collect();
    assert_eq!(ps, [50.0, 99.5, 99.95]);
    assert!(chosen.iter().all(|c| c["value_ns"].as_u64().is_some()));
    assert!(chosen[0]["ci95_ns"].is_array(), "{}", chosen[0]);
    // The fixed percentiles stay for every other reader.
    assert!(report["tests"][0]["latency"]["response"]["p99_9_ns"].is_u64());

    let bad = run_tailrate(&["-p", &port, "-n", "10", "--percentiles", "50,p99"]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("--percentiles") && stderr.contains("`p99`"),
        "{stderr}"
    );
}
