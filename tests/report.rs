//! `tailrate report FILE`: a saved run, sweep or comparison shown again, its text, `-q`,
//! `--csv` and `--html`, through the same outputs the commands end with.
//!
//! The golden files in `tests/golden/` pin every output of a fixed report byte for byte:
//! `run.txt`, `compare.txt` and the sweep's folder are what the commands themselves
//! printed and wrote when they made `run.json`, `compare.json` and `sweep/sweep.json`;
//! `run.quiet.txt`, `run.csv` and the pages are what the exporters made of the same
//! files before the outputs were one pipeline. A refactor keeps them equal; a change of
//! wording remakes the files it changes (`compare.txt` and `compare.html` since compare
//! reads an interval inside its margin as equivalent and an older file's verdict as
//! that file's word).

use std::path::{Path, PathBuf};

use super::harness::{RedisServer, assert_success, run_tailrate};

/// A file of `tests/golden/`.
fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// `tailrate report` with `args`, asserted to succeed; its standard output.
fn report(args: &[&str]) -> String {
    let mut argv = vec!["report"];
    argv.extend_from_slice(args);
    assert_success(&run_tailrate(&argv))
}

/// Asserts `got` equals the golden file `name`, byte for byte, naming the first line
/// that differs.
fn assert_golden(name: &str, got: &[u8]) {
    let want = std::fs::read(golden(name)).unwrap();
    if want != got {
        let (w, g) = (String::from_utf8_lossy(&want), String::from_utf8_lossy(got));
        let line = w.lines().zip(g.lines()).position(|(a, b)| a != b);
        panic!(
            "{name} differs ({} bytes against {}), first at line {line:?}:\n--- want ---\n{}\n--- got ---\n{}",
            want.len(),
            got.len(),
            line.and_then(|l| w.lines().nth(l)).unwrap_or(""),
            line.and_then(|l| g.lines().nth(l)).unwrap_or("")
        );
    }
}

#[test]
fn report_of_a_saved_run_prints_its_text_quiet_and_csv_and_writes_its_page_golden() {
    let run = golden("run.json");
    let run = run.to_str().unwrap();
    assert_golden("run.txt", report(&[run]).as_bytes());
    assert_golden("run.quiet.txt", report(&[run, "-q"]).as_bytes());
    assert_golden("run.csv", report(&[run, "--csv"]).as_bytes());
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("run.html");
    let out = run_tailrate(&["report", run, "-q", "--html", page.to_str().unwrap()]);
    assert_golden("run.quiet.txt", assert_success(&out).as_bytes());
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrote "));
    assert_golden("run.html", &std::fs::read(&page).unwrap());
}

#[test]
fn report_of_a_saved_sweep_prints_its_steps_and_csv_and_writes_its_page_golden() {
    let folder = golden("sweep");
    let folder = folder.to_str().unwrap();
    let text = report(&[folder]);
    assert!(text.contains("2000") && text.contains("4000"), "{text}");
    assert_eq!(report(&[&format!("{folder}/sweep.json")]), text);
    assert_golden("sweep/sweep.csv", report(&[folder, "--csv"]).as_bytes());
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("sweep.html");
    report(&[folder, "--html", page.to_str().unwrap()]);
    assert_golden("sweep/page.html", &std::fs::read(&page).unwrap());
    let quiet = run_tailrate(&["report", folder, "-q"]);
    assert_eq!(quiet.status.code(), Some(2), "{quiet:?}");
    let said = String::from_utf8_lossy(&quiet.stderr);
    assert!(
        said.contains("-q: a sweep has no one line per test"),
        "{said}"
    );
}

#[test]
fn a_sweeps_out_files_are_rendered_byte_for_byte_from_its_report_golden() {
    let bytes = std::fs::read(golden("sweep/sweep.json")).unwrap();
    let sweep = tailrate::report::sweep::parse(&bytes).unwrap();
    let (files, _) = tailrate::export::out_dir::sweep(&sweep, None).unwrap();
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "sweep.json",
            "sweep.csv",
            "steps.csv",
            "latency-vs-rate.svg",
            "percentile-spectrum.svg",
            "latency-over-time.svg",
            "achieved-vs-target.svg",
            "latency-heatmap.svg"
        ]
    );
    // The JSON is the report read back and encoded again: serde_json reads a float's
    // last digit as its nearest neighbour at times (2005.7400360339298 comes back as
    // ...295), so it is held to the encoding every `--json` uses, and the files drawn
    // from it to what the sweep wrote.
    assert_eq!(
        files[0].bytes,
        tailrate::export::sweep_json::to_bytes(&sweep).unwrap()
    );
    for file in &files[1..] {
        assert_golden(&format!("sweep/{}", file.name), &file.bytes);
    }
}

#[test]
fn report_of_a_saved_comparison_prints_its_table_and_writes_its_page_golden() {
    let compare = golden("compare.json");
    let compare = compare.to_str().unwrap();
    assert_golden("compare.txt", report(&[compare]).as_bytes());
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("compare.html");
    assert_golden(
        "compare.txt",
        report(&[compare, "--html", page.to_str().unwrap()]).as_bytes(),
    );
    assert_golden("compare.html", &std::fs::read(&page).unwrap());
    let csv = run_tailrate(&["report", compare, "--csv"]);
    assert_eq!(csv.status.code(), Some(2), "{csv:?}");
    assert!(String::from_utf8_lossy(&csv.stderr).contains("--csv: a comparison has no CSV"));
}

/// A run against a real server prints its text; the report it saved prints the same
/// again (progress goes to standard error, so standard output is the text alone), and so
/// do its `-q` and `--csv` forms.
#[test]
fn report_of_a_run_just_made_prints_what_the_run_printed() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    for form in [None, Some("-q"), Some("--csv")] {
        let json = dir.path().join("run.json");
        let json = json.to_str().unwrap();
        let mut args = vec![
            "-p", &port, "-t", "set,get", "-n", "2000", "-c", "4", "--json", json,
        ];
        args.extend(form);
        let printed = assert_success(&run_tailrate(&args));
        assert!(printed.contains("GET"), "{printed}");
        let mut again = vec![json];
        again.extend(form);
        assert_eq!(report(&again), printed, "{form:?}");
    }
}

/// The lines a sweep prints as it goes, which its report does not hold (the plan, a line
/// per open-loop run with the budget left, a rate's look, the budget's or the implied
/// bound's end): each starts with one of these.
const SWEEP_LINES_AS_IT_WENT: [&str; 7] = [
    "plan: ",
    "step ",
    "search: ",
    "confirm: ",
    "  ",
    "--budget ",
    "the sweep's time bound ",
];

/// A real sweep prints its lines as each run ends, then its closing text (the steps by
/// rate, the capacity, its closed loops), then the files it wrote. Its folder read back
/// prints that closing text byte for byte, and nothing of the rest; `--csv` prints the
/// sweep.csv it wrote, byte for byte.
#[test]
fn report_of_a_sweep_just_made_prints_its_closing_text_as_the_sweep_printed_it() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let out = out.to_str().unwrap();
    let printed = assert_success(&run_tailrate(&[
        "sweep",
        "-p",
        &port,
        "-t",
        "get",
        "--rates",
        "2k..4k:2k",
        "--duration",
        "1s",
        "--budget",
        "10s",
        "--slo",
        "p99<=5ms",
        "--closed-loop-points",
        "2",
        "--out",
        out,
        "--no-progress",
    ]));
    let again = report(&[out]);
    for part in [
        "by rate",
        "capacity",
        "closed loop, 2 connections: achieved",
    ] {
        assert!(again.contains(part), "no {part:?} in:\n{again}");
    }
    let at = printed
        .find(&again)
        .unwrap_or_else(|| panic!("the sweep printed:\n{printed}\nits report:\n{again}"));
    let (before, after) = (&printed[..at], &printed[at + again.len()..]);
    for line in before.lines() {
        assert!(
            SWEEP_LINES_AS_IT_WENT.iter().any(|h| line.starts_with(h)),
            "a line the sweep printed before its closing text is missing from its report: {line}"
        );
    }
    assert!(
        before.starts_with("plan: ") && before.contains("step 1/2: 2000 req/s"),
        "{before}"
    );
    assert!(
        after.starts_with("wrote sweep.json, sweep.csv,") && after.lines().count() == 1,
        "after the closing text the sweep printed only where its files went: {after}"
    );
    assert_eq!(report(&[&format!("{out}/sweep.json")]), again);
    let csv = std::fs::read(Path::new(out).join("sweep.csv")).unwrap();
    assert_eq!(report(&[out, "--csv"]).as_bytes(), &csv[..]);
}

/// Two real runs compared: the comparison's JSON read back prints the table compare
/// printed, byte for byte.
#[test]
fn report_of_a_comparison_just_made_prints_what_compare_printed() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    for (name, size) in [("a.json", "3"), ("b.json", "1000")] {
        assert_success(&run_tailrate(&[
            "-p",
            &port,
            "-t",
            "set",
            "-n",
            "3000",
            "-c",
            "4",
            "-d",
            size,
            "-q",
            "--json",
            &path(name),
            "--no-progress",
        ]));
    }
    let printed = assert_success(&run_tailrate(&[
        "compare",
        &path("a.json"),
        &path("b.json"),
        "--json",
        &path("compare.json"),
    ]));
    assert!(printed.contains("SET: response time"), "{printed}");
    assert_eq!(report(&[&path("compare.json")]), printed);
}

/// A real run merged: merge prints each merged test's `-q` line and where it wrote; the
/// merged report read back with `-q` prints those lines byte for byte (not where it
/// wrote), and without `-q` the whole text of a run, a test's block for each line.
#[test]
fn report_of_a_merge_just_made_prints_its_lines_with_q_and_a_runs_text_without() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    assert_success(&run_tailrate(&[
        "-p",
        &port,
        "-t",
        "set,get",
        "--rate",
        "2000",
        "--duration",
        "1s",
        "--seed",
        "5",
        "-q",
        "--json",
        &path("run.json"),
        "--hdr-log",
        &path("run.hlog"),
        "--no-progress",
    ]));
    let merged = path("merged");
    let printed = assert_success(&run_tailrate(&[
        "merge",
        &path("run.json"),
        &path("run.hlog"),
        "--out",
        &merged,
    ]));
    let (lines, wrote) = printed.trim_end().rsplit_once('\n').unwrap();
    assert!(wrote.starts_with("merged 1 of 1 shards into "), "{printed}");
    let json = format!("{merged}/merged.json");
    assert_eq!(report(&[&json, "-q"]), format!("{lines}\n"));
    let text = report(&[&json]);
    let mut from = 0;
    for name in ["SET", "GET"] {
        let head = format!("====== {name} ======\n");
        let at = text[from..]
            .find(&head)
            .unwrap_or_else(|| panic!("{head} in {text}"));
        from += at + head.len();
    }
    assert!(text.contains("[pass] achieved_rate: shard 0:"), "{text}");
}

/// What is not a saved report is refused in one line naming the file, exit 2: a file that
/// is not JSON, a file that is missing, a folder without a sweep.json.
#[test]
fn report_of_what_is_not_a_report_names_the_file_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "p99 was fine\n").unwrap();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let missing = dir.path().join("gone.json");
    for (input, says) in [
        (&text, "is not JSON (at line 1"),
        (&missing, "cannot read"),
        (&folder, "a folder without sweep.json"),
    ] {
        let name = input.to_str().unwrap();
        for extra in [None, Some("-q")] {
            let mut args = vec!["report", name];
            args.extend(extra);
            let out = run_tailrate(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{name}: {err}");
            assert!(out.stdout.is_empty(), "{name}: printed {:?}", out.stdout);
            assert!(err.contains(name) && err.contains(says), "{name}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        }
    }
}
