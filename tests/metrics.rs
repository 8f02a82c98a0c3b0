//! Live metrics (`--metrics-listen`, docs/metrics.md): a real Prometheus (Debian's
//! `prometheus`) scrapes a 10 s open-loop run every second, and what its query API
//! returns afterwards agrees with the run's JSON; an address other hosts can reach and a
//! port in use are refused before any load; idle and trickling clients neither keep the
//! page from a scraper nor keep the process from exiting.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::harness::{
    RedisServer, assert_success, assert_usage_error, free_port, read_json, require_tool,
    run_tailrate, stderr_of, tailrate_bin,
};

/// A Prometheus server on a free loopback port, scraping one target every second, with
/// its data in a temporary directory; killed on drop.
struct Prometheus {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts `bin` scraping `target` (`HOST:PORT`) and waits until it is ready.
    fn start(bin: &Path, target: &str) -> Prometheus {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
                 scrape_configs:\n  - job_name: tailrate\n    static_configs:\n      \
                 - targets: ['{target}']\n"
            ),
        )
        .expect("writing prometheus.yml");
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("a log file");
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("starting prometheus");
        let prometheus = Prometheus { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !prometheus
            .get("/-/ready")
            .is_some_and(|r| r.starts_with("HTTP/1.0 200") || r.starts_with("HTTP/1.1 200"))
        {
            assert!(
                Instant::now() < deadline,
                "prometheus not ready after 60 s: {}",
                prometheus.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        // Ready is not yet scraping: discovery hands the target to the scrape manager a
        // few seconds later, and a run started before that would lose its first scrapes.
        while !prometheus
            .get("/api/v1/targets")
            .is_some_and(|r| r.contains("\"scrapeUrl\""))
        {
            assert!(
                Instant::now() < deadline,
                "prometheus has no active target after 60 s: {}",
                prometheus.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        prometheus
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// The whole response to `GET path`, or `None` when nothing answers.
    fn get(&self, path: &str) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        // HTTP/1.0: the body comes whole (no chunks) and the connection closes after it.
        write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut out = String::new();
        s.read_to_string(&mut out).ok()?;
        Some(out)
    }

    /// The single value of the instant query `promql`; panics when it has not one.
    fn query(&self, promql: &str) -> f64 {
        let encoded: String = promql
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect();
        let response = self
            .get(&format!("/api/v1/query?query={encoded}"))
            .expect("prometheus answers");
        let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
        let json: serde_json::Value = serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("{promql}: not JSON ({e}): {response}"));
        let result = &json["data"]["result"];
        assert_eq!(
            result.as_array().map(Vec::len),
            Some(1),
            "{promql}: one series expected: {json}"
        );
        result[0]["value"][1]
            .as_str()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{promql}: no value in {json}"))
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The counter or gauge `series` as Prometheus last stored it, summed over commands.
/// Over a range, because once tailrate exits the next failed scrape marks its series
/// stale and an instant selector finds nothing; a counter's greatest value is its last.
fn last(series: &str) -> String {
    format!("sum(max_over_time({series}[10m]))")
}

#[test]
fn prometheus_scraping_a_run_every_second_ends_with_the_counts_of_its_json() {
    let Some(bin) = require_tool(
        "prometheus",
        "install Debian's prometheus package (scripts/test does)",
    ) else {
        return;
    };
    let server = RedisServer::start();
    let metrics_port = free_port();
    let listen = format!("127.0.0.1:{metrics_port}");
    let prometheus = Prometheus::start(&bin, &listen);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("run.json");
    let port = server.port().to_string();
    let out = run_tailrate(&[
        "-p",
        &port,
        "--rate",
        "2000",
        "--warmup",
        "1s",
        "--duration",
        "10s",
        "-t",
        "get",
        "--no-progress",
        "--json",
        json.to_str().expect("a UTF-8 path"),
        "--metrics-listen",
        &listen,
        "--metrics-linger",
        "3s",
    ]);
    assert_success(&out);
    let report = read_json(&json);
    let test = &report["tests"][0];
    let counts = &test["counts"];
    let count = |key: &str| counts[key].as_u64().unwrap_or_else(|| panic!("no {key}"));
    // Warm-up is left out of both: the counters count the measured window, as the JSON.
    let pairs = [
        (
            last(r#"tailrate_requests_total{outcome="completed"}"#),
            count("completed"),
        ),
        (
            last(r#"tailrate_requests_total{outcome="error"}"#),
            count("errors"),
        ),
        (
            last(r#"tailrate_requests_total{outcome="timeout"}"#),
            count("timeouts"),
        ),
        (last("tailrate_requests_sent_total"), count("sent")),
        (last("tailrate_requests_intended_total"), count("intended")),
        (
            last(r#"tailrate_latency_seconds_count{metric="response"}"#),
            test["latency"]["response"]["count"]
                .as_u64()
                .expect("a count"),
        ),
    ];
    for (promql, expected) in &pairs {
        let got = prometheus.query(promql);
        eprintln!("{promql} = {got} (JSON: {expected})");
        assert_eq!(got, *expected as f64, "{promql}\n{}", prometheus.log());
    }
    assert!(
        count("completed") > 15_000,
        "a 10 s run at 2000/s: {counts}"
    );
    // Every second: about 14 scrapes of a run of 11 s and a linger of 3 s.
    let scrapes = prometheus.query(r#"count_over_time(tailrate_running{run!=""}[10m])"#);
    eprintln!("{scrapes} scrapes of the run");
    assert!(scrapes >= 10.0, "{scrapes} scrapes of the run");
    // The p99 Prometheus reads off the buckets is the report's within 10% (docs/metrics.md:
    // a bucket is at most 12.5% wide, and linear within a bucket whose tail spreads over it).
    let p99_ns = test["latency"]["response"]["p99_ns"]
        .as_u64()
        .expect("a p99") as f64;
    let scraped = prometheus.query(
        r#"histogram_quantile(0.99, sum by (le) (max_over_time(tailrate_latency_seconds_bucket{metric="response"}[10m])))"#,
    ) * 1e9;
    eprintln!("histogram_quantile(0.99) = {scraped:.0} ns (JSON p99: {p99_ns} ns)");
    assert!(
        (scraped / p99_ns - 1.0).abs() < 0.10,
        "histogram_quantile(0.99) read {scraped:.0} ns against the report's p99 of {p99_ns} ns"
    );
    let valid = prometheus.query(&last("tailrate_valid"));
    assert_eq!(valid, f64::from(u8::from(test["valid"] == true)));
    let checks = prometheus.query("count(max_over_time(tailrate_check_passed[10m]))");
    let judged = test["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["verdict"] != "skipped")
        .count();
    assert_eq!(checks, judged as f64);
}

#[test]
fn a_metrics_address_other_hosts_reach_is_refused_without_listen_any() {
    assert_usage_error(
        &[
            "--rate",
            "100",
            "--duration",
            "1s",
            "--metrics-listen",
            "0.0.0.0:9464",
        ],
        &[
            "--metrics-listen",
            "not a loopback address",
            "--metrics-listen-any",
        ],
    );
    assert_usage_error(
        &["--metrics-listen-any", "--rate", "100"],
        &["--metrics-listen"],
    );
}

#[test]
fn a_metrics_port_in_use_is_refused_before_any_load() {
    let server = RedisServer::start();
    let taken = TcpListener::bind("127.0.0.1:0").expect("a port");
    let listen = taken.local_addr().expect("its address").to_string();
    let port = server.port().to_string();
    let out = run_tailrate(&[
        "-p",
        &port,
        "--rate",
        "1000",
        "--duration",
        "2s",
        "-t",
        "get",
        "--metrics-listen",
        &listen,
    ]);
    let text = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("--metrics-listen") && text.contains("in use"),
        "{text}"
    );
    assert_eq!(server.commandstats().get("get"), None, "no GET was sent");
}

/// Starts tailrate on `server` at 1000/s for `secs` seconds with the page on `listen`
/// (no linger), its JSON at `json`; output discarded.
fn spawn_run(server: &RedisServer, listen: &str, secs: u32, json: &Path) -> Child {
    Command::new(tailrate_bin())
        .args([
            "-p",
            &server.port().to_string(),
            "--rate",
            "1000",
            "--duration",
            &format!("{secs}s"),
            "-t",
            "get",
            "--no-progress",
            "-q",
            "--json",
            json.to_str().expect("a UTF-8 path"),
            "--metrics-listen",
            listen,
            "--metrics-linger",
            "0s",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting tailrate")
}

/// One scrape as Prometheus makes it, with its 1 s timeouts: whether the page came.
fn scrape(listen: &str) -> bool {
    let Ok(addr) = listen.parse() else {
        return false;
    };
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    if write!(s, "GET /metrics HTTP/1.1\r\nHost: {listen}\r\n\r\n").is_err() {
        return false;
    }
    let mut page = String::new();
    let _ = s.read_to_string(&mut page);
    page.starts_with("HTTP/1.1 200") && page.contains("tailrate_running{")
}

/// Connections that send the start of a request and then one byte every `every`, each
/// kept until a write fails; `opener` opens one every `open_every` until `stop`.
fn trickle(
    listen: String,
    every: Duration,
    open_every: Option<Duration>,
    initial: usize,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let open = || {
            let addr = listen.parse().ok()?;
            let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
            s.write_all(b"GET /metrics HTTP/1.1\r\n").ok()?;
            Some(s)
        };
        let mut held: Vec<TcpStream> = (0..initial).filter_map(|_| open()).collect();
        let mut last_open = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            if open_every.is_some_and(|e| last_open.elapsed() >= e) {
                held.extend(open());
                last_open = Instant::now();
            }
            held.retain_mut(|s| s.write_all(b"X").is_ok());
            std::thread::sleep(every);
        }
    })
}

#[test]
fn a_trickling_metrics_client_never_holds_the_process_past_its_run() {
    let server = RedisServer::start();
    let listen = format!("127.0.0.1:{}", free_port());
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("run.json");
    let mut child = spawn_run(&server, &listen, 2, &json);
    // A new trickler every 200 ms, each a byte every 100 ms: some are mid-request when
    // the run ends, however long the server lets each live.
    let stop = Arc::new(AtomicBool::new(false));
    let tricklers = trickle(
        listen.clone(),
        Duration::from_millis(100),
        Some(Duration::from_millis(200)),
        0,
        stop.clone(),
    );
    let started = Instant::now();
    let mut written = None;
    let status = loop {
        if written.is_none() && json.exists() {
            written = Some(Instant::now());
        }
        if let Some(status) = child.try_wait().expect("waiting for tailrate") {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let exited = Instant::now();
    stop.store(true, Ordering::Relaxed);
    let _ = tricklers.join();
    let written = written.expect("the run's JSON was written");
    let past = exited - written;
    eprintln!("exit {past:?} after the JSON was written ({status:?})");
    assert!(
        status.is_some(),
        "still running 30 s after its start: killed"
    );
    assert!(
        past < Duration::from_secs(1),
        "exited {past:?} after its run's JSON was written"
    );
}

#[test]
fn five_scrapes_in_five_beside_200_idle_and_200_trickling_connections() {
    let server = RedisServer::start();
    let listen = format!("127.0.0.1:{}", free_port());
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("run.json");
    let mut child = spawn_run(&server, &listen, 10, &json);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !scrape(&listen) {
        assert!(Instant::now() < deadline, "no page within 10 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let addr = listen.parse().expect("an address");
    let idle: Vec<TcpStream> = (0..200)
        .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok())
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let slow = trickle(
        listen.clone(),
        Duration::from_millis(500),
        None,
        200,
        stop.clone(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let mut ok = 0;
    for _ in 0..5 {
        ok += u32::from(scrape(&listen));
        std::thread::sleep(Duration::from_millis(300));
    }
    eprintln!("{ok} scrapes of 5 beside {} idle connections", idle.len());
    stop.store(true, Ordering::Relaxed);
    let _ = slow.join();
    drop(idle);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(ok, 5, "scrapes answered of 5");
}
