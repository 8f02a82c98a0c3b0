//! Through a proxy: twemproxy (`nutcracker`) in front of two redis-servers. It answers
//! no CONFIG, INFO or SELECT (it closes the connection instead), so tailrate must run
//! without them, noting what it could not learn.
//!
//! `scripts/test` installs nutcracker (Debian package `nutcracker`). Outside CI a
//! machine without it records these tests as skipped (`harness::skip`, listed by
//! `scripts/test` after the run); in CI (`CI=true`) a missing nutcracker fails them.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{
    RedisServer, Reply, free_port, require_tool, run_tailrate, run_tailrate_json, send_command,
};

/// How long [`Nutcracker::start`] waits for the proxy to answer a GET.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// The `nutcracker` binary (Debian installs it in /usr/sbin). When it is missing, in CI
/// (`CI=true`) this panics; elsewhere it records the running test as skipped
/// ([`require_tool`]) and returns `None`, and the test returns.
fn nutcracker_bin() -> Option<PathBuf> {
    require_tool(
        "nutcracker",
        "run scripts/test (ensure_nutcracker in scripts/lib.sh) or `apt-get install -y nutcracker`",
    )
}

/// A nutcracker child process on a free 127.0.0.1 port, in front of `servers`, with its
/// config and log in a temporary directory; killed and reaped on drop.
struct Nutcracker {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Nutcracker {
    /// Starts nutcracker and waits until it answers a GET; retries on a taken port.
    fn start(bin: &PathBuf, servers: &[&RedisServer]) -> Nutcracker {
        let mut last = String::new();
        for _ in 0..5 {
            let dir = tempfile::Builder::new()
                .prefix("tailrate-nutcracker-")
                .tempdir()
                .unwrap();
            let (port, stats_port) = (free_port(), free_port());
            let members: String = servers
                .iter()
                .enumerate()
                .map(|(i, s)| format!("    - {}:1 server{i}\n", s.addr()))
                .collect();
            let conf = format!(
                "tailrate:\n  listen: 127.0.0.1:{port}\n  hash: fnv1a_64\n  distribution: ketama\n  redis: true\n  \
                 auto_eject_hosts: false\n  server_retry_timeout: 2000\n  timeout: 4000\n  servers:\n{members}"
            );
            let conf_path = dir.path().join("conf.yml");
            std::fs::write(&conf_path, conf).unwrap();
            let log = dir.path().join("nutcracker.log");
            let child = Command::new(bin)
                .arg("-c")
                .arg(&conf_path)
                .arg("-o")
                .arg(&log)
                .args(["-a", "127.0.0.1", "-s", &stats_port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot spawn {}: {e}", bin.display()));
            let mut proxy = Nutcracker { child, port, dir };
            match proxy.wait_ready() {
                Ok(()) => return proxy,
                Err(why) => last = format!("{why}\n--- nutcracker.log ---\n{}", proxy.log()),
            }
            // Dropping `proxy` stops it; a taken port is worth another try.
            if !last.contains("Address already in use") {
                break;
            }
        }
        panic!("nutcracker did not start: {last}");
    }

    /// Waits until the proxy forwards a GET and brings back the server's reply.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("nutcracker exited with {status}"));
            }
            match send_command(&self.addr(), &["GET", "tailrate:probe"]) {
                Ok(Reply::Nil) => return Ok(()),
                Ok(other) => return Err(format!("GET through nutcracker answered {other:?}")),
                Err(_) if Instant::now() < deadline => thread::sleep(Duration::from_millis(50)),
                Err(e) => return Err(format!("no answer to GET within {START_TIMEOUT:?}: {e}")),
            }
        }
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("nutcracker.log")).unwrap_or_default()
    }
}

impl Drop for Nutcracker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Calls of `command` on each server since its last stats reset.
fn calls(servers: &[&RedisServer], command: &str) -> Vec<u64> {
    servers
        .iter()
        .map(|s| s.commandstats().get(command).copied().unwrap_or(0))
        .collect()
}

/// Runs tailrate with `--json` and returns the whole report.
fn run_json(args: &[&str]) -> Value {
    run_tailrate_json(args).1
}

fn count(test: &Value, field: &str) -> u64 {
    test["counts"][field]
        .as_u64()
        .unwrap_or_else(|| panic!("counts.{field} missing in {test}"))
}

/// The report's notes say CONFIG was refused, and nothing was learned from it.
fn assert_config_refused_is_noted(report: &Value) {
    let notes = report["server"]["notes"]
        .as_array()
        .unwrap_or_else(|| panic!("no notes in {}", report["server"]));
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n.contains("refused CONFIG GET"))),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n.contains("INFO"))),
        "{notes:?}"
    );
    assert_eq!(
        (&report["server"]["save"], &report["server"]["version"]),
        (&Value::Null, &Value::Null)
    );
}

#[test]
fn closed_and_open_loop_runs_through_twemproxy_complete_without_config_or_info() {
    let Some(bin) = nutcracker_bin() else { return };
    let (a, b) = (RedisServer::start(), RedisServer::start());
    let servers = [&a, &b];
    let proxy = Nutcracker::start(&bin, &servers);
    let port = proxy.port.to_string();

    // Closed loop: exactly -n of each, spread over both servers by key.
    servers.iter().for_each(|s| s.reset_stats());
    let report = run_json(&[
        "-p", &port, "-t", "set,get", "-n", "2000", "-r", "1000", "-q",
    ]);
    assert_config_refused_is_noted(&report);
    // The server's own counters cannot be read through the proxy: the report says so,
    // and has no count check it could not make.
    for test in report["tests"].as_array().unwrap() {
        let missing = test["server"]["missing"].to_string();
        assert!(
            missing.contains("INFO commandstats") && missing.contains("LATENCY HISTOGRAM"),
            "{}",
            test["server"]
        );
        assert!(
            crate::harness::find_check(test, "server_count").is_none(),
            "{}",
            test["checks"]
        );
        // Nor can its process be found: the host's server figures are unknown, not zero.
        let host = &test["host"];
        assert!(host["server"].is_null(), "{host}");
        assert!(
            host["server_unknown"]
                .as_str()
                .is_some_and(|w| w.contains("process_id")),
            "{host}"
        );
        assert!(host["generator"].is_object(), "{host}");
    }
    for (test, command) in report["tests"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["set", "get"])
    {
        assert_eq!(
            (count(test, "completed"), count(test, "errors")),
            (2000, 0),
            "{command}: {}",
            test["counts"]
        );
        let per_server = calls(&servers, command);
        assert_eq!(
            per_server.iter().sum::<u64>(),
            2000,
            "{command} calls per server: {per_server:?}"
        );
        assert!(
            per_server.iter().all(|&n| n > 0),
            "both servers get keys: {command} {per_server:?}"
        );
    }

    // Open loop at 1000/s for a second.
    servers.iter().for_each(|s| s.reset_stats());
    let report = run_json(&[
        "-p",
        &port,
        "--rate",
        "1000",
        "--seed",
        "1",
        "--duration",
        "1s",
        "-t",
        "get",
        "-r",
        "1000",
        "-c",
        "4",
    ]);
    assert_config_refused_is_noted(&report);
    let test = &report["tests"][0];
    let (intended, completed) = (count(test, "intended"), count(test, "completed"));
    assert!((900..=1100).contains(&intended), "intended {intended}");
    assert_eq!(
        (
            count(test, "errors"),
            count(test, "timeouts"),
            count(test, "not_sent")
        ),
        (0, 0, 0),
        "{}",
        test["counts"]
    );
    assert_eq!(
        intended,
        completed + count(test, "in_flight_at_end"),
        "{}",
        test["counts"]
    );
    let per_server = calls(&servers, "get");
    let served: u64 = per_server.iter().sum();
    assert!(
        served >= completed && served <= count(test, "sent"),
        "servers saw {per_server:?} GETs, tailrate completed {completed}"
    );
    assert!(
        per_server.iter().all(|&n| n > 0),
        "both servers get keys: {per_server:?}"
    );
}

#[test]
fn a_proxy_that_refuses_the_handshake_fails_with_a_clear_message() {
    let Some(bin) = nutcracker_bin() else { return };
    let server = RedisServer::start();
    let proxy = Nutcracker::start(&bin, &[&server]);
    // SELECT is part of the handshake the user asked for: its refusal is fatal.
    let out = run_tailrate(&[
        "-p",
        &proxy.port.to_string(),
        "--dbnum",
        "1",
        "-n",
        "10",
        "-t",
        "get",
    ]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&proxy.addr()) && text.contains("closed the connection"),
        "{text}"
    );
}

#[test]
fn a_server_that_refuses_config_with_an_error_is_noted_not_fatal() {
    // Renamed away, CONFIG gets "ERR unknown command" (the harness needs only PING and INFO).
    let server = RedisServer::builder()
        .arg("--rename-command", "CONFIG")
        .args([""])
        .start();
    let report = run_json(&[
        "-p",
        &server.port().to_string(),
        "-t",
        "get",
        "-n",
        "500",
        "-q",
    ]);
    let notes = report["server"]["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .is_some_and(|n| n.contains("refused CONFIG GET save") && n.contains("ERR"))),
        "{notes:?}"
    );
    assert!(
        report["server"]["version"]
            .as_str()
            .is_some_and(|v| v.starts_with(char::is_numeric)),
        "INFO still answers"
    );
    assert_eq!(count(&report["tests"][0], "completed"), 500);
    assert_eq!(server.commandstats().get("get"), Some(&500));
}
