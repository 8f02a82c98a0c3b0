//! The host measured beside each run: the server's and the generator's waits for a CPU,
//! an idle thread's hiccups, and the `host` bottleneck when a busy process shares the
//! server's core. The server is pinned to core 0 and tailrate to core 1 (`taskset`), a
//! busy loop joins one of them, and the tests run alone (`timing::`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use serde_json::Value;

use super::harness::{RedisServer, assert_success, find_in_path, skip, tailrate_bin, this_test};

/// `taskset`, or `None` with the test recorded as skipped.
fn taskset() -> Option<PathBuf> {
    let found = find_in_path("taskset");
    if found.is_none() {
        skip(&this_test(), "taskset (util-linux) is not installed");
    }
    found
}

/// A busy loop pinned to `core`, killed on drop.
struct Busy(Child);

impl Busy {
    fn on(taskset: &Path, core: &str) -> Busy {
        let child = Command::new(taskset)
            .args(["-c", core, "sh", "-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        // Let it take its core before the run starts.
        std::thread::sleep(std::time::Duration::from_millis(100));
        Busy(child)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A redis-server with every thread on core 0.
fn pinned_server(taskset: &Path) -> RedisServer {
    let server = RedisServer::start();
    let out = Command::new(taskset)
        .args(["-a", "-p", "-c", "0", &server.pid().to_string()])
        .output()
        .unwrap();
    assert_success(&out);
    server
}

/// An open-loop run of GET at 5k/s for `duration`, tailrate on core 1; its JSON report
/// (the run's path to it as well, for `compare`).
fn pinned_run(
    taskset: &Path,
    server: &RedisServer,
    dir: &Path,
    name: &str,
    duration: &str,
) -> (PathBuf, Value) {
    let json = dir.join(format!("{name}.json"));
    let out = Command::new(taskset)
        .args(["-c", "1"])
        .arg(tailrate_bin())
        .args([
            "-p",
            &server.port().to_string(),
            "-t",
            "get",
            "--rate",
            "5k",
            "--duration",
            duration,
            "-q",
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_success(&out);
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (json, report)
}

/// A run's report file and its JSON.
type Run = (PathBuf, Value);

/// A quiet run, then one with a busy loop on `busy_core`, each for `duration`, against a
/// server on core 0; `None` (the test skipped) without `taskset`. The folder holds both
/// reports.
fn quiet_then_busy(busy_core: &str, duration: &str) -> Option<(tempfile::TempDir, Run, Run)> {
    let taskset = taskset()?;
    let server = pinned_server(&taskset);
    let dir = tempfile::tempdir().unwrap();
    let quiet = pinned_run(&taskset, &server, dir.path(), "quiet", duration);
    let busy = {
        let _busy = Busy::on(&taskset, busy_core);
        pinned_run(&taskset, &server, dir.path(), "busy", duration)
    };
    Some((dir, quiet, busy))
}

fn verdict(report: &Value) -> (String, String) {
    let b = &report["tests"][0]["bottleneck"];
    (
        b["verdict"].as_str().unwrap().to_string(),
        b["because"].as_str().unwrap().to_string(),
    )
}

/// Ok when a run with nothing planted reads quiet: the host not blamed, and the server's
/// waits wake-ups (short per run, or too few to hold a 1% tail); else what it read.
fn quiet_baseline(quiet: &Value) -> Result<(), String> {
    let (v, because) = verdict(quiet);
    let q = &host(quiet)["server"];
    let wake_ups = q["wait_per_run_us"].as_f64().is_some_and(|w| w < 8.0)
        || q["run_queue_wait_share"].as_f64().is_some_and(|s| s < 0.01);
    if v != "host" && wake_ups {
        Ok(())
    } else {
        Err(format!("bottleneck {v}: {because}; server waits {q}"))
    }
}

fn host(report: &Value) -> &Value {
    &report["tests"][0]["host"]
}

mod timing {
    use super::*;

    #[test]
    fn a_busy_process_on_the_servers_core_is_named_with_the_servers_wait_and_compare_says_so() {
        // A busy machine can make the quiet run itself the host's: run the pair again,
        // then skip (visibly) rather than judge the busy loop against a disturbed baseline.
        let mut pair = None;
        for _ in 0..2 {
            let Some((dir, quiet, shared)) = quiet_then_busy("0", "2s") else {
                return;
            };
            match quiet_baseline(&quiet.1) {
                Ok(()) => {
                    pair = Some((dir, quiet, shared));
                    break;
                }
                Err(why) => eprintln!("the quiet baseline was not quiet: {why}"),
            }
        }
        let Some((_dir, (quiet_json, quiet), (shared_json, shared))) = pair else {
            skip(
                &this_test(),
                "the quiet baseline was not quiet twice (a busy machine)",
            );
            return;
        };

        // Shared: the server waited for the busy loop's slices, and that is the verdict.
        let (v, because) = verdict(&shared);
        assert_eq!(v, "host", "{because}\n{}", host(&shared));
        assert!(because.contains("the server waited"), "{because}");
        // The busy loop's slices are the server's wait: a share a quiet run does not
        // reach, and several times the quiet run's own. Per run it can be as short as
        // 6 µs (a woken server preempts the loop at once when the scheduler lets it), so
        // the wait per run is not asked to stand apart.
        let s = &host(&shared)["server"];
        let q = &host(&quiet)["server"];
        let share = |v: &Value| v["run_queue_wait_share"].as_f64().unwrap_or(0.0);
        assert!(share(s) >= 0.02, "{s}");
        assert!(share(s) >= 3.0 * share(q), "busy {s}\nquiet {q}");
        let tail = &host(&shared)["tail"];
        assert!(
            tail["in_waiting_batches"].as_u64().unwrap() * 2
                >= tail["slow_replies"].as_u64().unwrap(),
            "{tail}"
        );

        // compare names the difference of the hosts beside its verdict.
        let out = Command::new(tailrate_bin())
            .args(["compare"])
            .arg(&quiet_json)
            .arg(&shared_json)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("host:") && text.contains("B's server waited"),
            "{text}"
        );
    }

    #[test]
    fn a_busy_process_on_the_generators_core_shows_in_its_waits_and_the_hiccups() {
        // Four seconds: the hiccup meter's late wake-ups are counted in ones (a few in a
        // quiet run, the generator's own spinning beside it), three times as many with
        // the busy loop.
        let Some((_dir, (_, quiet), (_, shared))) = quiet_then_busy("1", "4s") else {
            return;
        };
        let (v, because) = verdict(&shared);
        assert!(v == "host" || v == "generator", "{v}: {because}");
        assert!(
            because.contains("threads waited"),
            "{because}\n{}",
            host(&shared)
        );
        let g = &host(&shared)["generator"];
        assert!(g["run_queue_wait_share"].as_f64().unwrap() >= 0.1, "{g}");
        let late = |r: &Value| host(r)["hiccups"]["over_1ms"].as_u64().unwrap();
        assert!(
            late(&shared) > late(&quiet),
            "{}\n{}",
            host(&quiet)["hiccups"],
            host(&shared)["hiccups"]
        );
    }

    #[test]
    fn a_fork_during_an_open_loop_run_is_placed_in_its_interval_with_the_servers_figure() {
        let server = RedisServer::builder()
            .arg("--enable-debug-command", "yes")
            .start();
        // A dataset large enough that copying its page tables in fork takes milliseconds.
        let populated = server.cmd(&["DEBUG", "POPULATE", "3000000"]);
        assert!(populated.contains("OK"), "{populated}");
        let (addr, port) = (server.addr(), server.port().to_string());
        // BGSAVE in the middle of a 4 s run: the server forks in its event loop, and every
        // request waits for it.
        let bgsave = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(2000));
            super::super::harness::send_command(&addr, &["BGSAVE"])
        });
        let (text, report) = super::super::harness::run_tailrate_json(&[
            "-p",
            &port,
            "-t",
            "get",
            "--rate",
            "5k",
            "--duration",
            "4s",
            "--latency-monitor",
            "1",
        ]);
        bgsave.join().unwrap().unwrap();
        let events = &report["tests"][0]["server"]["events"];
        assert!(events["forks"].as_u64().unwrap() >= 1, "{events}");
        let fork_usec = events["latest_fork_usec"].as_u64().unwrap();
        assert!(fork_usec >= 1_000, "{events}");
        let fork = events["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["event"] == "fork")
            .unwrap_or_else(|| panic!("no fork on the timeline: {events}"));
        let at = fork["at_secs"].as_f64().unwrap();
        assert!((0.5..=3.5).contains(&at), "{fork}");
        assert!(text.contains("fork at"), "{text}");
        // The threshold is set back: the server's own default, 0 (off).
        let threshold = server.cmd(&["CONFIG", "GET", "latency-monitor-threshold"]);
        assert!(
            threshold.contains('0') && !threshold.contains('1'),
            "{threshold}"
        );
        // The fork is named in the tail when its interval stands out of the run's (see
        // judge/events.rs). The save's child shares the two cores with the server and
        // tailrate, and when its CPU lengthens every interval's p99 as much as the fork,
        // nothing stands out: that the judge must not claim, and this test cannot check.
        let intervals = report["tests"][0]["intervals"].as_array().unwrap();
        let mut p99s: Vec<u64> = intervals
            .iter()
            .filter(|i| i["completed"].as_u64() > Some(0))
            .map(|i| i["p99_ns"].as_u64().unwrap())
            .collect();
        p99s.sort_unstable();
        let typical = p99s[p99s.len() / 2] as f64;
        let length_ms = fork["length_ms"].as_f64().unwrap();
        let to = at + 1.0 + length_ms / 1e3;
        let slowest = intervals
            .iter()
            .filter(|i| {
                let start = i["start_secs"].as_f64().unwrap();
                start < to && start + i["length_secs"].as_f64().unwrap() > at
            })
            .filter_map(|i| i["max_ns"].as_u64())
            .max()
            .unwrap_or(0) as f64;
        if slowest < 4.0 * typical || slowest < 0.5 * length_ms * 1e6 {
            skip(
                &this_test(),
                &format!(
                    "the fork's interval (slowest {:.2} ms) does not stand out of the run's \
                     (interval p99 {:.2} ms at the median): the host was as slow as the fork",
                    slowest / 1e6,
                    typical / 1e6
                ),
            );
            assert!(fork["in_tail"].is_null(), "{fork}");
            return;
        }
        let in_tail = fork["in_tail"]
            .as_str()
            .unwrap_or_else(|| panic!("the fork is not named in the tail: {fork}\n{text}"));
        assert!(
            in_tail.contains("fork for") && in_tail.contains("latest_fork_usec"),
            "{in_tail}"
        );
    }
}
