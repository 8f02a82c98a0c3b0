//! The request to stop a run ([`Cancel`]), shared by whoever may ask (Ctrl+C, an error
//! reply) and every part of the run that waits or sends.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// A request to stop, shared by whoever may ask (Ctrl+C, an error reply) and the run.
///
/// It has two steps: [`Cancel::cancel`] stops sending and gives the replies in flight a
/// short grace to arrive; [`Cancel::hurry`] (a second Ctrl+C) skips that grace. Either way
/// what was measured is kept and written. A task that waits on something slow (a connect,
/// a handshake) awaits [`Cancel::cancelled`] beside it.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<CancelState>);

#[derive(Debug, Default)]
struct CancelState {
    /// 0: running; [`STOP`]: stop sending; [`HURRY`]: and do not wait for replies.
    level: AtomicU8,
    /// Woken at every step up, for [`Cancel::cancelled`].
    changed: tokio::sync::Notify,
}

/// [`CancelState::level`] once stopping was asked.
const STOP: u8 = 1;
/// [`CancelState::level`] once hurrying was asked too.
const HURRY: u8 = 2;

impl Cancel {
    /// A new, untriggered cancel flag.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks the run to stop; what was measured is kept.
    pub fn cancel(&self) {
        self.raise(STOP);
    }
    /// Asks the run to stop without waiting for the replies still in flight; what was
    /// measured is kept and written all the same.
    pub fn hurry(&self) {
        self.raise(HURRY);
    }
    /// Whether stopping was asked.
    pub fn is_cancelled(&self) -> bool {
        self.0.level.load(Ordering::Relaxed) >= STOP
    }
    /// Whether hurrying was asked: no grace for replies in flight.
    pub fn is_hurried(&self) -> bool {
        self.0.level.load(Ordering::Relaxed) >= HURRY
    }
    /// Completes once stopping was asked (at once if it was already): race a slow wait
    /// against it so that Ctrl+C ends the wait.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.0.changed.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the check, so a cancel between the two still wakes it.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }

    /// Runs `work` until it completes or stopping is asked; `None` when stopping came
    /// first.
    pub async fn or_cancelled<F: Future>(&self, work: F) -> Option<F::Output> {
        tokio::select! {
            // Stopping first: work that could also complete at once is not started anew.
            biased;
            () = self.cancelled() => None,
            out = work => Some(out),
        }
    }

    fn raise(&self, level: u8) {
        self.0.level.fetch_max(level, Ordering::SeqCst);
        self.0.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn a_cancel_steps_up_from_stop_to_hurry_and_never_down() {
        let cancel = Cancel::new();
        assert!(!cancel.is_cancelled() && !cancel.is_hurried());
        cancel.hurry();
        cancel.cancel();
        assert!(cancel.is_cancelled() && cancel.is_hurried());
        let other = Cancel::new();
        other.cancel();
        assert!(other.is_cancelled() && !other.is_hurried());
    }

    #[test]
    fn a_wait_raced_against_a_cancel_ends_when_another_thread_cancels() {
        let cancel = Cancel::new();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let from_afar = cancel.clone();
        let signaller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            from_afar.cancel();
        });
        let started = Instant::now();
        let waited = runtime.block_on(cancel.or_cancelled(std::future::pending::<()>()));
        assert_eq!(waited, None);
        assert!(started.elapsed() < Duration::from_secs(5));
        let _ = signaller.join();
        // Once cancelled, work is not started at all, even work that is ready.
        assert_eq!(runtime.block_on(cancel.or_cancelled(async { 1 })), None);
        assert_eq!(
            runtime.block_on(Cancel::new().or_cancelled(async { 1 })),
            Some(1)
        );
    }
}
