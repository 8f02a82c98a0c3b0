//! The driver: one loop per connection, configured by data, for closed and open loop.
//!
//! [`run`] spreads connections over OS threads, each a single-threaded tokio runtime.
//! In closed loop a connection claims up to `-P` requests, writes them in one batch and
//! waits for every reply. In open loop a scheduler task per thread turns the schedule
//! into arrivals with computed intended times and hands them to connections with room
//! (or to a bounded backlog); connections write what they were given in one batch and
//! take replies in order. With `--workers`, logical clients share each closed-loop
//! connection and their requests are batched by the policy in `batch`. Recording happens in the connection loop, into the thread's
//! interval [`Recorder`], which a tick task hands to the caller
//! once per interval.

mod batch;
mod conn;
mod dispatch;
mod inflight;
pub mod plan;
mod route;
pub mod schedule;
mod thread;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

pub use plan::{Mode, Plan, Stop, Workers};
pub use schedule::{ArrivalProcess, Pacing};

use crate::net::NetError;
use crate::net::cluster::ClusterMap;
use crate::record::Recorder;
use crate::workload::{Sampler, Test};

/// A request to stop, shared by whoever may ask (Ctrl+C, an error reply) and the run.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A new, untriggered cancel flag.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks the run to stop; what was measured is kept.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether stopping was asked.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// One interval's records from one thread.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Thread that recorded it.
    pub thread: usize,
    /// Start, as an offset from the run's start.
    pub start: Duration,
    /// Length.
    pub length: Duration,
    /// What was recorded in it.
    pub record: Recorder,
    /// Requests waiting client-side for a connection at the interval's end (open loop).
    pub backlog: usize,
}

/// What a run measured, merged over threads.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// Every interval added together.
    pub record: Recorder,
    /// Wall-clock time at the start (for logs).
    pub started_at: SystemTime,
    /// Measured window: closed loop from start to the last reply; open loop from the end of warm-up to the end of the schedule.
    pub measured: Duration,
    /// Requests written but not answered when the run ended.
    pub in_flight_at_end: u64,
    /// Achieved send rate over the measured window (requests written per second).
    pub achieved_rate_per_sec: f64,
    /// Successful replies per second: over the measured window in closed loop; in open
    /// loop over the window stretched to the last send or reply, whichever came later.
    pub throughput_per_sec: f64,
    /// Measured sends per window, per thread (open loop; the Poisson check).
    pub send_counts: Vec<thread::SendCounts>,
    /// CPU seconds each generator thread used, against its wall time.
    pub thread_cpu: Vec<ThreadCpu>,
    /// The run ended because of this (exit-on-error, a connection given up, Ctrl+C).
    pub stopped_early: Option<String>,
}

/// CPU used by one generator thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThreadCpu {
    /// User plus system CPU seconds.
    pub cpu_secs: f64,
    /// Of those, seconds spent spinning while nothing else had work (spin pacing).
    pub idle_spin_secs: f64,
    /// Wall seconds the thread ran the workload.
    pub wall_secs: f64,
}

/// Errors that stop a run before it measures anything.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// A connection could not be opened at the start.
    #[error(transparent)]
    Connect(#[from] NetError),
    /// The tokio runtime or a thread could not start.
    #[error("could not start generator thread: {0}")]
    Runtime(std::io::Error),
}

/// State shared by every thread of one run.
pub(crate) struct Shared {
    /// Closed loop with `-n`: requests not yet claimed.
    pub remaining: AtomicU64,
    /// Set by Ctrl+C, exit-on-error, or a fatal connection failure.
    pub cancel: Cancel,
    /// Why the run stopped early, first reason wins.
    pub stop_reason: std::sync::Mutex<Option<String>>,
    /// Closed loop held to a rate: every batch waits for this limiter first.
    pub limiter: Option<governor::DefaultDirectRateLimiter>,
    /// Emptied interval recorders, handed back for the threads' next intervals.
    pub spares: std::sync::Mutex<Vec<Recorder>>,
}

impl Shared {
    pub(crate) fn stop(&self, reason: String) {
        if let Ok(mut slot) = self.stop_reason.lock()
            && slot.is_none()
        {
            *slot = Some(reason);
        }
        self.cancel.cancel();
    }

    /// An emptied recorder from an earlier interval, if one is free.
    pub(crate) fn take_spare(&self) -> Option<Recorder> {
        self.spares.lock().ok()?.pop()
    }

    /// Empties `record` and keeps it, up to `keep` spares, for a later interval. A fresh
    /// recorder is about 1 MB of histogram counts per command, which the allocator hands
    /// back zeroed and the kernel maps page by page on first touch: one per thread per
    /// interval cost a closed loop a few percent of its CPU. Emptying one is a memset of
    /// the histograms that hold anything.
    fn give_back(&self, mut record: Recorder, keep: usize) {
        if self.spares.lock().is_ok_and(|spares| spares.len() >= keep) {
            return;
        }
        record.reset();
        if let Ok(mut spares) = self.spares.lock() {
            spares.push(record);
        }
    }
}

/// What one thread needs to know, copied from the config.
#[derive(Debug, Clone)]
pub(crate) struct ThreadPlan {
    pub index: usize,
    pub threads: usize,
    pub connections: usize,
    /// Connections over every thread (this thread's are `index`, `index + threads`, ...).
    pub all_connections: usize,
    pub mode: Mode,
    pub stop: Stop,
    pub warmup: Duration,
    pub interval: Duration,
    pub timeout: Option<Duration>,
    pub reconnect_each_request: bool,
    pub exit_on_error: bool,
    pub batch_latency: bool,
    pub seed: u64,
    /// Against a cluster: its layout at the start.
    pub cluster: Option<Arc<crate::net::cluster::ClusterMap>>,
}

/// Runs one test as `config` says; `on_interval` sees every interval as it ends.
pub fn run(
    config: &Plan,
    cluster: Option<&Arc<ClusterMap>>,
    test: &Test,
    test_index: usize,
    cancel: &Cancel,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<RunOutcome, DriveError> {
    let threads = config.threads.max(1);
    let shared = Arc::new(Shared {
        remaining: AtomicU64::new(match config.stop {
            Stop::Requests(n) => n,
            Stop::After(_) => u64::MAX,
        }),
        cancel: cancel.clone(),
        stop_reason: std::sync::Mutex::new(None),
        limiter: match config.mode {
            Mode::Closed {
                pipeline,
                rate_cap_per_sec: Some(rate),
                ..
            } if rate > 0.0 => {
                // tokio's timer wakes on a 1 ms wheel: let 2 ms of tokens gather so the
                // connections woken together at a tick can go together; the average holds.
                let burst = (rate * 0.002)
                    .ceil()
                    .max(f64::from(pipeline.max(1)))
                    .min(f64::from(u32::MAX)) as u32;
                let burst = std::num::NonZeroU32::new(burst).unwrap_or(std::num::NonZeroU32::MIN);
                governor::Quota::with_period(Duration::from_secs_f64(1.0 / rate))
                    .map(|q| governor::RateLimiter::direct(q.allow_burst(burst)))
            }
            _ => None,
        },
        spares: std::sync::Mutex::new(Vec::new()),
    });
    let interval = if config.is_open_loop() {
        Duration::from_secs(1)
    } else {
        Duration::from_millis(250)
    };
    let gate = Arc::new(thread::StartGate::new(threads));
    let (tx, rx) = mpsc::channel::<Interval>();
    let started_at = SystemTime::now();
    // The run's totals are the sum of its intervals: one recording path, added exactly.
    let mut totals = Recorder::new(test.commands.len());

    let results: Vec<Result<thread::ThreadOutcome, DriveError>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for index in 0..threads {
            let plan = ThreadPlan {
                index,
                threads,
                // Connections are dealt round-robin: thread k gets k, k+T, k+2T, ...
                connections: (config.connections + threads - 1 - index) / threads,
                all_connections: config.connections,
                mode: config.mode.clone(),
                stop: config.stop,
                warmup: config.warmup,
                interval,
                timeout: config.timeout,
                reconnect_each_request: config.reconnect_each_request,
                exit_on_error: config.exit_on_error,
                batch_latency: config.batch_latency,
                cluster: cluster.cloned(),
                seed: config.seed
                    ^ ((test_index as u64) << 32)
                    ^ (index as u64).wrapping_mul(0x2545_f491_4f6c_dd1d),
            };
            let (shared, gate, tx) = (shared.clone(), gate.clone(), tx.clone());
            let endpoint = config.endpoint.clone();
            let handshake = config.handshake.clone();
            let (connect_timeout, limits) = (config.connect_timeout, config.limits);
            let sampler = Sampler::new(&config.workload, plan.seed);
            handles.push(scope.spawn(move || {
                thread::thread_main(
                    plan,
                    test,
                    sampler,
                    endpoint,
                    handshake,
                    connect_timeout,
                    limits,
                    shared,
                    gate,
                    tx,
                )
            }));
        }
        drop(tx);
        // Every thread connects first; the run starts for all at once, or not at all.
        gate.open_when_ready();
        for item in rx.iter() {
            totals.add(&item.record);
            on_interval(&item);
            // Two per thread: one being filled, one on its way here.
            shared.give_back(item.record, 2 * threads);
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(DriveError::Runtime(std::io::Error::other(
                        "generator thread panicked",
                    )))
                })
            })
            .collect()
    });

    let mut outcomes = Vec::with_capacity(threads);
    for result in results {
        outcomes.push(result?);
    }
    Ok(merge(outcomes, totals, config, started_at, &shared))
}

fn merge(
    outcomes: Vec<thread::ThreadOutcome>,
    record: Recorder,
    config: &Plan,
    started_at: SystemTime,
    shared: &Shared,
) -> RunOutcome {
    let mut in_flight_at_end = 0;
    let mut measured = Duration::ZERO;
    let mut last_send = Duration::ZERO;
    let mut last_reply = Duration::ZERO;
    let mut thread_cpu = Vec::new();
    let mut send_counts = Vec::new();
    for o in outcomes {
        in_flight_at_end += o.in_flight_at_end;
        measured = measured.max(o.measured);
        last_send = last_send.max(o.last_send_after_measure);
        last_reply = last_reply.max(o.last_reply_after_measure);
        thread_cpu.push(o.cpu);
        send_counts.push(o.send_counts);
    }
    let total_sent: u64 = record.commands.iter().map(|c| c.sent).sum();
    // A generator that falls behind sends its last request late: stretch the window to
    // the last send so the achieved rate shows it.
    let window = if config.is_open_loop() {
        measured.max(last_send)
    } else {
        measured
    };
    let achieved_rate_per_sec = if window.is_zero() {
        0.0
    } else {
        total_sent as f64 / window.as_secs_f64()
    };
    // Replies that arrive after the schedule ended still count, over the time they took.
    let reply_window = if config.is_open_loop() {
        window.max(last_reply)
    } else {
        measured
    };
    let completed: u64 = record.commands.iter().map(|c| c.completed).sum();
    let throughput_per_sec = if reply_window.is_zero() {
        0.0
    } else {
        completed as f64 / reply_window.as_secs_f64()
    };
    let stopped_early = shared
        .stop_reason
        .lock()
        .ok()
        .and_then(|s| s.clone())
        .or_else(|| {
            shared
                .cancel
                .is_cancelled()
                .then(|| "interrupted".to_string())
        });
    RunOutcome {
        record,
        started_at,
        measured,
        in_flight_at_end,
        achieved_rate_per_sec,
        throughput_per_sec,
        send_counts,
        thread_cpu,
        stopped_early,
    }
}

/// Nanoseconds from `start` to `t` (zero if `t` is earlier).
#[inline]
pub(crate) fn since(start: Instant, t: Instant) -> u64 {
    crate::record::nanos(t.saturating_duration_since(start))
}
