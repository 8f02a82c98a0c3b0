//! `--metrics-listen`: the live Prometheus page, served while a run, a sweep or a live
//! comparison goes on. [`Metrics::serve`] binds before any load (a port in use is an
//! error naming the flag); `measure` feeds the model from each report interval it merges
//! and from each test's end ([`Scope`]); [`Metrics::linger`] keeps the page up after the
//! last test for a final scrape. The page itself is `export::metrics`'s.
//!
//! The HTTP side is hyper's HTTP/1.1 server on a tokio runtime of its own, on a thread
//! apart from the generator's, so a slow scraper never delays a send. A client must not be
//! able to keep the page from the scraper, nor the process from exiting: each connection
//! gets one answer and is closed, a request head must come within `HEAD_TIMEOUT` and the
//! whole exchange within `REQUEST_DEADLINE`, at most `MAX_CONNECTIONS` are served at
//! once (a new one past that pushes out the oldest that has not sent a request yet, so
//! idle or trickling clients cannot fill the slots), and at exit the connections are
//! dropped, not waited for.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{ALLOW, CONTENT_TYPE as CONTENT_TYPE_HEADER};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use crate::config::MetricsConfig;
use crate::drive::Cancel;
use crate::export::metrics::{CONTENT_TYPE, Exposition, render};
use crate::record::{Recorder, Timing};
use crate::report::TestReport;

/// How long a client may take to send a request's head, from its connection: a scraper
/// sends it at once.
const HEAD_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one connection may last, its request and the page together.
const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// Most connections served at once. Prometheus scrapes over one; a few more are people.
const MAX_CONNECTIONS: usize = 64;
/// The most of a request head read (hyper's least): a scrape's is a few hundred bytes.
const MAX_HEAD: usize = 8 * 1024;
/// How long dropping [`Metrics`] waits for its thread to let go of the port.
const STOP_WAIT: Duration = Duration::from_secs(1);

/// The live page and the thread that serves it; stops serving when dropped.
pub struct Metrics {
    page: Arc<Mutex<Exposition>>,
    /// Where it listens (the port as bound).
    addr: SocketAddr,
    linger: Duration,
    /// Tells the serving thread to stop.
    stop: Option<oneshot::Sender<()>>,
    /// Hears from the serving thread once it stopped.
    stopped: mpsc::Receiver<()>,
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
        listener
            .set_nonblocking(true)
            .context("--metrics-listen: the listening socket")?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("--metrics-listen: the runtime that serves the page")?;
        let run = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        let page = Arc::new(Mutex::new(Exposition::new(run)));
        let (stop, stop_heard) = oneshot::channel();
        let (done, stopped) = mpsc::channel();
        {
            let page = page.clone();
            std::thread::Builder::new()
                .name("tailrate-metrics".into())
                .spawn(move || {
                    runtime.block_on(serve_loop(listener, page, stop_heard));
                    // Dropping the runtime drops every connection still open, unanswered.
                    drop(runtime);
                    let _ = done.send(());
                })
                .context("--metrics-listen: starting the thread that serves the page")?;
        }
        Ok(Metrics {
            page,
            addr,
            linger: config.linger,
            stop: Some(stop),
            stopped,
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
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // The thread stops at once (its connections are dropped, not waited for); were it
        // held up anyway, the process goes on without it.
        let _ = self.stopped.recv_timeout(STOP_WAIT);
    }
}

/// A connection being served: how to end it, and whether it sent a request yet.
struct Open {
    task: AbortHandle,
    asked: Arc<AtomicBool>,
}

/// Accepts connections until `stop`, each served on a task of its own.
async fn serve_loop(
    listener: TcpListener,
    page: Arc<Mutex<Exposition>>,
    mut stop: oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    // In the order accepted, so the first that has not asked is the oldest.
    let mut open: VecDeque<Open> = VecDeque::new();
    loop {
        let stream = tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors, or the like: try again shortly, not at once.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        open.retain(|c| !c.task.is_finished());
        if open.len() >= MAX_CONNECTIONS {
            // The oldest that never asked makes room; when every one is being answered,
            // the newcomer is turned away.
            match open.iter().position(|c| !c.asked.load(Ordering::Relaxed)) {
                Some(i) => {
                    if let Some(idle) = open.remove(i) {
                        idle.task.abort();
                    }
                }
                None => continue,
            }
        }
        let asked = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(connection(stream, page.clone(), asked.clone()));
        open.push_back(Open {
            task: task.abort_handle(),
            asked,
        });
    }
}

/// Serves one connection: one request, answered, then closed; within the deadline.
async fn connection(
    stream: tokio::net::TcpStream,
    page: Arc<Mutex<Exposition>>,
    asked: Arc<AtomicBool>,
) {
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        asked.store(true, Ordering::Relaxed);
        let response = answer(&request, &page);
        async move { Ok::<_, Infallible>(response) }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .keep_alive(false)
        .max_buf_size(MAX_HEAD);
    let served = http.serve_connection(TokioIo::new(stream), service);
    // A client gone, slow or malformed is its own business; the next one is served.
    let _ = tokio::time::timeout(REQUEST_DEADLINE, served).await;
}

/// The answer to `request`: the page for `GET /metrics`, 404 or 405 otherwise.
fn answer(request: &Request<Incoming>, page: &Mutex<Exposition>) -> Response<Full<Bytes>> {
    let (status, content_type, body) = match (request.method(), request.uri().path()) {
        (&Method::GET, "/metrics") => {
            // Copied out under the lock, rendered after it: the collector that feeds the
            // page waits only for the copy.
            let snapshot = page.lock().unwrap_or_else(PoisonError::into_inner).clone();
            (StatusCode::OK, CONTENT_TYPE, render(&snapshot))
        }
        (&Method::GET, _) => (
            StatusCode::NOT_FOUND,
            "text/plain",
            b"see /metrics\n".to_vec(),
        ),
        _ => (
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            b"GET /metrics\n".to_vec(),
        ),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE_HEADER,
        hyper::header::HeaderValue::from_static(content_type),
    );
    if status == StatusCode::METHOD_NOT_ALLOWED {
        headers.insert(ALLOW, hyper::header::HeaderValue::from_static("GET"));
    }
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

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
        let mut post = TcpStream::connect(metrics.addr()).unwrap();
        write!(
            post,
            "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        post.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("allow: get"),
            "{answer}"
        );
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
