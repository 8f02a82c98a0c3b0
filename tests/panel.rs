//! The verdicts against planted causes: a real redis-server pinned to core 0, tailrate
//! to core 1 (`taskset`), each cause planted in short open-loop runs repeated three
//! times and decided right every time. A quiet run is valid and blamed on neither the
//! server nor the generator; a server frozen periodically (`DEBUG SLEEP` from a side
//! connection, `SIGSTOP`/`SIGCONT`) is valid with the server's stall named; a busy loop
//! on the server's core is the host; one on the generator's core makes the run invalid,
//! blamed on the generator or the host; a server killed before the end exits 1. A quiet
//! baseline that is not quiet (a busy machine) is run again, then skipped visibly.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use super::harness::{RedisServer, find_in_path, send_command, skip, tailrate_bin, this_test};

/// Runs of each planted cause; every one must be decided right.
const RUNS: usize = 3;

/// A busy loop pinned to `core`, killed on drop.
struct Busy(Child);

impl Busy {
    fn on(taskset: &Path, core: &str) -> Busy {
        let child = Command::new(taskset)
            .args(["-c", core, "sh", "-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        Busy(child)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Something done to the server every `every` from a thread until dropped: freezing it
/// with `DEBUG SLEEP` or `SIGSTOP`/`SIGCONT`.
struct Periodic {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Periodic {
    fn start(every: Duration, act: impl Fn() + Send + 'static) -> Periodic {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            // The first freeze after the run's warm-up.
            std::thread::sleep(every / 2);
            while !flag.load(Ordering::Relaxed) {
                act();
                std::thread::sleep(every);
            }
        });
        Periodic {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Periodic {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn signal(sig: &str, pid: u32) {
    let _ = Command::new("kill").args([sig, &pid.to_string()]).status();
}

/// The panel's fixtures: `taskset`, and a server on core 0 whose DEBUG command answers.
struct Panel {
    taskset: PathBuf,
    server: RedisServer,
    dir: tempfile::TempDir,
}

impl Panel {
    /// `None` (the test skipped) without `taskset` or two cores.
    fn new() -> Option<Panel> {
        let Some(taskset) = find_in_path("taskset") else {
            skip(&this_test(), "taskset (util-linux) is not installed");
            return None;
        };
        if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
            skip(
                &this_test(),
                "the panel pins the server and tailrate to two cores",
            );
            return None;
        }
        let server = RedisServer::builder()
            .arg("--enable-debug-command", "yes")
            .start();
        let pinned = Command::new(&taskset)
            .args(["-a", "-p", "-c", "0", &server.pid().to_string()])
            .output()
            .unwrap();
        assert!(pinned.status.success(), "{pinned:?}");
        Some(Panel {
            taskset,
            server,
            dir: tempfile::tempdir().unwrap(),
        })
    }

    /// An open loop of GET at `rate` for `duration`, tailrate on core 1; its exit and the
    /// report's only test.
    fn run(&self, name: &str, rate: &str, duration: &str) -> (Output, Value) {
        let json = self.dir.path().join(format!("{name}.json"));
        let out = Command::new(&self.taskset)
            .args(["-c", "1"])
            .arg(tailrate_bin())
            .args(["-p", &self.server.port().to_string(), "-t", "get"])
            .args([
                "--rate",
                rate,
                "--duration",
                duration,
                "-q",
                "--no-progress",
            ])
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        let report: Value = std::fs::read(&json)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
        (out, report["tests"][0].clone())
    }

    /// Whether the machine is quiet enough for the panel: a quiet run valid and blamed
    /// on neither side, tried twice; skips the test (visibly) when not.
    fn quiet(&self) -> bool {
        for attempt in 0..2 {
            let (_, test) = self.run(&format!("baseline-{attempt}"), "5k", "1s");
            if quiet_run(&test).is_ok() {
                return true;
            }
        }
        let (_, test) = self.run("baseline-last", "5k", "1s");
        if let Err(why) = quiet_run(&test) {
            skip(
                &this_test(),
                &format!("the machine is not quiet: a run with nothing planted read {why}"),
            );
            return false;
        }
        true
    }
}

/// The bottleneck's verdict and its words.
fn bottleneck(test: &Value) -> (&str, &str) {
    let b = &test["bottleneck"];
    (
        b["verdict"].as_str().unwrap_or("?"),
        b["because"].as_str().unwrap_or(""),
    )
}

/// Ok for a quiet run's decisions: valid, and blamed on neither the server nor the
/// generator; else what it read.
fn quiet_run(test: &Value) -> Result<(), String> {
    let (v, because) = bottleneck(test);
    if test["valid"] == true && v != "server" && v != "generator" {
        Ok(())
    } else {
        Err(format!("valid {} bottleneck {v}: {because}", test["valid"]))
    }
}

mod timing {
    use super::*;

    #[test]
    fn a_quiet_run_is_valid_and_blamed_on_neither_side() {
        let Some(panel) = Panel::new() else { return };
        if !panel.quiet() {
            return;
        }
        for i in 0..RUNS {
            let (out, test) = panel.run(&format!("quiet-{i}"), "5k", "2s");
            assert!(out.status.success(), "{out:?}");
            quiet_run(&test).unwrap_or_else(|why| panic!("run {i}: {why}\n{test}"));
        }
    }

    #[test]
    fn a_server_frozen_by_debug_sleep_is_the_server_with_its_stall_named() {
        let Some(panel) = Panel::new() else { return };
        if !panel.quiet() {
            return;
        }
        let addr = panel.server.addr();
        for i in 0..RUNS {
            let test = {
                let a = addr.clone();
                let _freezes = Periodic::start(Duration::from_millis(600), move || {
                    let _ = send_command(&a, &["DEBUG", "SLEEP", "0.15"]);
                });
                panel.run(&format!("debug-sleep-{i}"), "5k", "2s").1
            };
            stalled(&test, i);
        }
    }

    #[test]
    fn a_server_stopped_by_sigstop_is_the_server_with_its_stall_named() {
        let Some(panel) = Panel::new() else { return };
        if !panel.quiet() {
            return;
        }
        let pid = panel.server.pid();
        for i in 0..RUNS {
            let test = {
                let _freezes = Periodic::start(Duration::from_millis(600), move || {
                    signal("-STOP", pid);
                    std::thread::sleep(Duration::from_millis(150));
                    signal("-CONT", pid);
                });
                panel.run(&format!("sigstop-{i}"), "5k", "2s").1
            };
            signal("-CONT", pid);
            stalled(&test, i);
        }
    }

    #[test]
    fn a_busy_loop_on_the_servers_core_is_the_host() {
        let Some(panel) = Panel::new() else { return };
        if !panel.quiet() {
            return;
        }
        for i in 0..RUNS {
            let test = {
                let _busy = Busy::on(&panel.taskset, "0");
                panel.run(&format!("server-core-{i}"), "5k", "2s").1
            };
            let (v, because) = bottleneck(&test);
            assert_eq!(v, "host", "run {i}: {because}\n{}", test["tail"]);
        }
    }

    #[test]
    fn a_busy_loop_on_the_generators_core_makes_the_run_invalid() {
        let Some(panel) = Panel::new() else { return };
        if !panel.quiet() {
            return;
        }
        for i in 0..RUNS {
            let test = {
                let _busy = Busy::on(&panel.taskset, "1");
                panel.run(&format!("generator-core-{i}"), "5k", "2s").1
            };
            let (v, because) = bottleneck(&test);
            assert_eq!(
                test["valid"], false,
                "run {i}: {because}\n{}",
                test["checks"]
            );
            assert!(
                v == "generator" || v == "host",
                "run {i}: {v}: {because}\n{}",
                test["tail"]
            );
        }
    }

    #[test]
    fn a_server_killed_before_the_end_exits_1() {
        for i in 0..RUNS {
            let Some(mut panel) = Panel::new() else {
                return;
            };
            let pid = panel.server.pid();
            let killer = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(700));
                signal("-KILL", pid);
            });
            let (out, test) = panel.run(&format!("killed-{i}"), "5k", "2s");
            killer.join().unwrap();
            panel.server.kill();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "run {i}: {stderr}\n{test}");
        }
    }
}

/// A run whose server froze: valid, and the bottleneck the server's stalls, named with
/// their lengths.
fn stalled(test: &Value, i: usize) {
    let (v, because) = bottleneck(test);
    assert_eq!(
        test["valid"], true,
        "run {i}: {because}\n{}",
        test["checks"]
    );
    assert_eq!(v, "server", "run {i}: {because}\n{}", test["tail"]);
    assert!(because.contains("stall"), "run {i}: {because}");
    assert_eq!(
        test["tail"]["causes"][0]["cause"], "server-stall",
        "run {i}: {}",
        test["tail"]
    );
}
