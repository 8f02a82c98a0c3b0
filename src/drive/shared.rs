//! What every thread of one run shares: the request to stop ([`Cancel`], `cancel.rs`),
//! the count of closed-loop requests left to claim, the rate cap's limiter, spare interval
//! recorders, and the start of the measured window, the instant every thread's interval
//! clock counts from.
//! Everything here is `Sync`; what one thread's tasks share lives in `ctx`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::cancel::Cancel;
use super::cap::{CapPacing, RateCap};
use super::plan::{Mode, Plan, Stop};
use crate::record::Recorder;

/// How long a rate cap's unused allowance keeps: the largest burst after a late wake-up.
pub const RATE_CAP_BURST: Duration = Duration::from_millis(20);

/// State shared by every thread of one run.
pub(crate) struct Shared {
    /// Closed loop with `-n`: requests not yet claimed.
    pub remaining: AtomicU64,
    /// Set by Ctrl+C, exit-on-error, or a fatal connection failure.
    pub cancel: Cancel,
    /// Why the run stopped early, first reason wins.
    pub stop_reason: std::sync::Mutex<Option<String>>,
    /// Closed loop held to a rate by one limiter (`--cap-pacing shared`): every batch
    /// waits for it first.
    pub limiter: Option<governor::DefaultDirectRateLimiter>,
    /// Emptied interval recorders, handed back for the threads' next intervals.
    pub spares: std::sync::Mutex<Vec<Recorder>>,
    /// Earlier than any request of the run: what [`Shared::window_start`] counts from.
    epoch: Instant,
    /// The measured window's start, in nanoseconds after `epoch` (`u64::MAX`: not yet).
    window_start_ns: AtomicU64,
}

impl Shared {
    /// The shared state of a run of `plan`, stopped by `cancel`.
    pub(crate) fn new(plan: &Plan, cancel: &Cancel) -> Self {
        Shared {
            remaining: AtomicU64::new(match plan.stop {
                Stop::Requests(n) => n,
                Stop::After(_) => u64::MAX,
            }),
            cancel: cancel.clone(),
            stop_reason: std::sync::Mutex::new(None),
            limiter: shared_limiter(plan),
            spares: std::sync::Mutex::new(Vec::new()),
            epoch: Instant::now(),
            window_start_ns: AtomicU64::new(u64::MAX),
        }
    }

    /// An instant before any request of the run, the same for every thread: what a
    /// rate-capped loop's ticks count from.
    pub fn epoch(&self) -> Instant {
        self.epoch
    }

    /// Offers `at` as the measured window's start; the earliest offer is the start.
    ///
    /// An open loop's window starts at the end of warm-up, which every thread computes
    /// alike; a closed loop's at the run's first send, which each thread offers when it
    /// first writes. A thread reads the start when its interval clock needs it (its first
    /// reply, each interval's end), well after the other threads' first writes: each
    /// writes right after its clock read, so only a thread preempted between the two
    /// could still move the start earlier, and then by that preemption.
    pub(crate) fn offer_window_start(&self, at: Instant) {
        let ns = crate::record::nanos(at.saturating_duration_since(self.epoch));
        self.window_start_ns.fetch_min(ns, Ordering::Relaxed);
    }

    /// The measured window's start, once one was offered.
    pub(crate) fn window_start(&self) -> Option<Instant> {
        match self.window_start_ns.load(Ordering::Relaxed) {
            u64::MAX => None,
            ns => Some(self.epoch + Duration::from_nanos(ns)),
        }
    }

    /// Why the run stopped early, if it did: the first reason given, or an interrupt.
    pub(crate) fn stopped_early(&self) -> Option<String> {
        self.stop_reason
            .lock()
            .ok()
            .and_then(|s| s.clone())
            .or_else(|| {
                self.cancel
                    .is_cancelled()
                    .then(|| "interrupted".to_string())
            })
    }

    /// Asks every thread to stop, keeping `reason` unless an earlier one was given.
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
    /// recorder's histogram counts are zeroed memory the kernel maps page by page on first
    /// touch, every interval; emptying a used one clears only the histograms that hold
    /// anything, which a closed loop feels (see bench/).
    pub(crate) fn give_back(&self, mut record: Recorder, keep: usize) {
        if self.spares.lock().is_ok_and(|spares| spares.len() >= keep) {
            return;
        }
        record.reset();
        if let Ok(mut spares) = self.spares.lock() {
            spares.push(record);
        }
    }
}

/// The one limiter of a closed loop held to a rate with `--cap-pacing shared`.
fn shared_limiter(plan: &Plan) -> Option<governor::DefaultDirectRateLimiter> {
    let Mode::Closed {
        pipeline,
        rate_cap:
            Some(RateCap {
                per_sec: rate,
                pacing: CapPacing::Shared,
            }),
        ..
    } = plan.mode
    else {
        return None;
    };
    if rate.is_nan() || rate <= 0.0 {
        return None;
    }
    // tokio's timer wakes on a 1 ms wheel, and on a busy host a waiting connection wakes
    // late by more: tokens gather for RATE_CAP_BURST, so that a wake-up up to that late
    // still sends what the cap allowed and the average holds (a burst of about one tick
    // is not enough: each late wake-up then loses sends the cap allowed, and the rate
    // falls short).
    let burst = (rate * RATE_CAP_BURST.as_secs_f64())
        .ceil()
        .max(f64::from(pipeline.max(1)))
        .min(f64::from(u32::MAX)) as u32;
    let burst = std::num::NonZeroU32::new(burst).unwrap_or(std::num::NonZeroU32::MIN);
    governor::Quota::with_period(Duration::from_secs_f64(1.0 / rate))
        .map(|q| governor::RateLimiter::direct(q.allow_burst(burst)))
        .inspect(|limiter| {
            // It starts full: spend the allowance, or the run's first RATE_CAP_BURST sends
            // one burst over the cap.
            let _ = limiter.check_n(burst);
        })
}
