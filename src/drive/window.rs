//! The measured window as one thread sees it: the times of the thread's first and last
//! write and its last reply that the window is measured from.

use std::cell::Cell;
use std::hint::cold_path;
use std::sync::Arc;
use std::time::Instant;

use super::shared::Shared;

/// The latest of some times, once there was one.
#[derive(Debug, Default)]
pub(crate) struct Latest(Cell<Option<Instant>>);

impl Latest {
    /// Records `at` as the latest.
    #[inline]
    pub(crate) fn set(&self, at: Instant) {
        self.0.set(Some(at));
    }
    /// The latest, if any.
    pub(crate) fn get(&self) -> Option<Instant> {
        self.0.get()
    }
}

/// When this thread first and last wrote measured requests. A closed loop's measured
/// window starts at the run's first send: the first write offers its time.
pub(crate) struct SendTimes {
    first: Cell<Option<Instant>>,
    last: Latest,
    /// Closed loop: where the first write's time is offered as the window's start.
    offer_to: Option<Arc<Shared>>,
}

impl SendTimes {
    /// No write yet; a closed loop's first will be offered to `offer_to`.
    pub(crate) fn new(offer_to: Option<Arc<Shared>>) -> Self {
        SendTimes {
            first: Cell::new(None),
            last: Latest::default(),
            offer_to,
        }
    }

    /// A write of measured requests at `at` (the write's own clock read).
    #[inline]
    pub(crate) fn set(&self, at: Instant) {
        if self.first.get().is_none() {
            cold_path();
            self.first.set(Some(at));
            if let Some(shared) = &self.offer_to {
                shared.offer_window_start(at);
            }
        }
        self.last.set(at);
    }

    /// The last write's time, if any.
    pub(crate) fn last(&self) -> Option<Instant> {
        self.last.get()
    }
}
