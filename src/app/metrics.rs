//! `--metrics-listen`: the live Prometheus page, served while a run, a sweep or a live
//! comparison goes on. [`Metrics::serve`] binds before any load (a port in use is an
//! error naming the flag); `measure` feeds the model from each report interval it merges
//! and from each test's end ([`Scope`]); [`Metrics::linger`] keeps the page up after the
//! last test for a final scrape. The page itself is `export::metrics`'s.
//!
//! The HTTP side is a few lines of HTTP/1.1 by hand on one std thread: one path, one
//! method, one scraper at a time, a body rendered per request and the connection closed
//! after it. A framework would bring a runtime and dozens of crates for that, and a
//! thread apart from the generator's keeps a slow scraper from ever delaying a send.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};

use crate::config::MetricsConfig;
use crate::drive::Cancel;
use crate::export::metrics::{CONTENT_TYPE, Exposition, render};
use crate::record::{Recorder, Timing};
use crate::report::TestReport;

/// How long a scraper may take to send its request or read the page: a stuck one holds
/// the only serving thread no longer than this.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of a request read: a scrape's request line and headers are a few hundred bytes.
const MAX_REQUEST: usize = 16 * 1024;

/// The live page and the thread that serves it; stops serving when dropped.
pub struct Metrics {
    page: Arc<Mutex<Exposition>>,
    /// Where it listens (the port as bound).
    addr: SocketAddr,
    linger: Duration,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Where one test's figures go on the page: the page, and the labels of the test's
/// series after `run` (`test`, and `step`, `target_rate` or `side`).
pub struct Scope<'m> {
    /// The page.
    pub metrics: &'m Metrics,
    /// The test's labels.
    pub labels: Vec<(String, String)>,
}

impl Metrics {
    /// Listens on `config.listen` and serves the page from a thread of its own.
    pub fn serve(config: &MetricsConfig) -> Result<Metrics> {
        let listener = TcpListener::bind(config.listen).map_err(|e| {
            let why = if e.kind() == std::io::ErrorKind::AddrInUse {
                "the port is in use: give a free one".to_string()
            } else {
                format!("cannot listen there: {e}")
            };
            anyhow::anyhow!("--metrics-listen {}: {why}", config.listen)
        })?;
        let addr = listener
            .local_addr()
            .context("--metrics-listen: the address bound")?;
        let run = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        let page = Arc::new(Mutex::new(Exposition::new(run)));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (page, stop) = (page.clone(), stop.clone());
            std::thread::Builder::new()
                .name("tailrate-metrics".into())
                .spawn(move || serve_loop(&listener, &page, &stop))
                .context("--metrics-listen: starting the thread that serves the page")?
        };
        Ok(Metrics {
            page,
            addr,
            linger: config.linger,
            stop,
            thread: Some(thread),
        })
    }

    /// The address the page is served on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn page(&self) -> MutexGuard<'_, Exposition> {
        // A panic elsewhere while holding it leaves figures that are still counts.
        self.page.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A test of `commands` starts under `labels`; returns its index for the calls below.
    pub(crate) fn start(
        &self,
        labels: Vec<(String, String)>,
        commands: &[String],
        timing: Timing,
        target_rate_per_sec: Option<f64>,
    ) -> usize {
        self.page()
            .start(labels, commands, timing, target_rate_per_sec)
    }

    /// A report interval of test `index` ended (see [`Exposition::interval`]).
    pub(crate) fn interval(
        &self,
        index: usize,
        length: Duration,
        record: &Recorder,
        commands: &[String],
        timing: Timing,
        backlog: u64,
    ) {
        self.page()
            .interval(index, length, record, commands, timing, backlog);
    }

    /// Test `index` ended as `report` says.
    pub(crate) fn end(&self, index: usize, report: &TestReport) {
        self.page().end(index, report);
    }

    /// After the last test: keeps serving for `--metrics-linger` (Ctrl+C ends the wait),
    /// then stops.
    pub fn linger(self, cancel: &Cancel) {
        let end = Instant::now() + self.linger;
        while !cancel.is_cancelled() {
            let Some(left) = end.checked_duration_since(Instant::now()) else {
                break;
            };
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
    }
}

impl Drop for Metrics {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The thread waits in accept: a connection of our own wakes it to see `stop`.
        let wake = match self.addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        let woke = TcpStream::connect_timeout(&SocketAddr::new(wake, self.addr.port()), IO_TIMEOUT);
        if let (Ok(_), Some(thread)) = (woke, self.thread.take()) {
            let _ = thread.join();
        }
    }
}

/// Answers one connection at a time until `stop`.
fn serve_loop(listener: &TcpListener, page: &Mutex<Exposition>, stop: &AtomicBool) {
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        if let Ok(mut stream) = stream {
            // A scraper that went away is its own business; the next one is served.
            let _ = answer(&mut stream, page);
        }
    }
}

/// Reads one request and answers it: the page for `GET /metrics`, 404 or 405 otherwise.
fn answer(stream: &mut TcpStream, page: &Mutex<Exposition>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut request = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < MAX_REQUEST {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        request.extend_from_slice(&chunk[..n]);
    }
    let line = request.split(|&b| b == b'\n').next().unwrap_or_default();
    let mut words = line.split(|&b| b == b' ');
    let (method, target) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    let path = target.split(|&b| b == b'?').next().unwrap_or_default();
    let (status, content_type, body) = match (method, path) {
        (b"GET", b"/metrics") => {
            // Copied out under the lock, rendered after it: the collector that feeds the
            // page waits only for the copy.
            let snapshot = page.lock().unwrap_or_else(PoisonError::into_inner).clone();
            ("200 OK", CONTENT_TYPE, render(&snapshot))
        }
        (b"GET", _) => ("404 Not Found", "text/plain", b"see /metrics\n".to_vec()),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            b"GET /metrics\n".to_vec(),
        ),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(&body)?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn the_page_is_served_on_get_metrics_and_a_second_bind_of_the_port_is_refused() {
        let config = MetricsConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            linger: Duration::ZERO,
        };
        let metrics = Metrics::serve(&config).unwrap();
        let names = ["get".to_string()];
        metrics.start(
            vec![("test".into(), "GET".into())],
            &names,
            Timing::Closed,
            None,
        );
        let page = get(metrics.addr(), "/metrics");
        assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
        assert!(page.contains("text/plain; version=0.0.4"), "{page}");
        assert!(page.contains("tailrate_running{run="), "{page}");
        assert!(get(metrics.addr(), "/").starts_with("HTTP/1.1 404"));
        let taken = MetricsConfig {
            listen: metrics.addr(),
            linger: Duration::ZERO,
        };
        let e = Metrics::serve(&taken).err().unwrap().to_string();
        assert!(
            e.contains("--metrics-listen") && e.contains("in use"),
            "{e}"
        );
        metrics.linger(&Cancel::new());
    }
}
