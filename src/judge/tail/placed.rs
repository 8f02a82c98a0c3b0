//! Where a slow reply waited: the batches its stretch spans, the part of the host that
//! made it wait there, and whether the server worked through it.

use super::{BUSY_SHARE, STEAL_TICK_US};
use crate::judge::checks::WAKE_UP_US;
use crate::judge::host::WAIT_SHARE;
use crate::report::host::HostBatches;

/// The batches a reply of `value_ns` received in batch `i` may have waited through: back
/// to the one its stretch may have begun in (a stretch shorter than a batch may straddle
/// two).
pub(super) fn span(i: usize, value_ns: u64) -> std::ops::Range<usize> {
    let batch_ns = crate::record::nanos(crate::drive::BATCH).max(1);
    let back = usize::try_from(value_ns.div_ceil(batch_ns)).unwrap_or(usize::MAX);
    i.saturating_sub(back)..i + 1
}

/// The batches a reply's stretch spans, read for the host's part in it.
struct Stretch<'a> {
    h: &'a HostBatches,
    range: std::ops::Range<usize>,
}

impl<'a> Stretch<'a> {
    fn of(h: &'a HostBatches, i: usize, value_ns: u64) -> Self {
        Stretch {
            h,
            range: span(i, value_ns),
        }
    }

    /// `v` summed over the stretch's batches (0 where the batches were not measured).
    fn sum(&self, v: &[u64]) -> u64 {
        v.get(self.range.clone()).map_or(0, |s| s.iter().sum())
    }

    /// Whether threads of `wait` and `runs` waited for a CPU through the stretch: at
    /// least `at_least_us`, in waits longer than an idle core's wake-up on average.
    fn waited(&self, wait: &[u64], runs: &[u64], at_least_us: u64) -> bool {
        let (w, r) = (self.sum(wait), self.sum(runs));
        w > 0 && w >= at_least_us && w as f64 >= WAKE_UP_US * r.max(1) as f64
    }

    /// The stretch's length in µs.
    fn span_us(&self) -> f64 {
        self.range.len() as f64 * self.h.batch_ms * 1e3
    }
}

/// The part of the host that made a reply of `value_ns`, received in batch `i`, wait:
/// a wait for a CPU as long as half the reply's time in the batches it waited through,
/// in waits longer than an idle core's wake-up. `server_side`: the server's waits count
/// (a queue wait or a service time); the generator's always do (it reads the replies and
/// keeps the schedule), when they are another task's: a pinned generator also hands its
/// core to tailrate's own collector and host meter, tens of µs at a time, about 2% of
/// every batch, so its waits count when they fill [`WAIT_SHARE`] of the stretch's
/// batches or a typical one is half the reply. Steal, and an idle thread as late (the
/// whole machine stalled), count for long ones.
pub(super) fn host_part(
    h: &HostBatches,
    i: usize,
    value_ns: u64,
    server_side: bool,
    stall_ns: u64,
) -> Option<&'static str> {
    let half_us = value_ns / 2_000;
    let stretch = Stretch::of(h, i, value_ns);
    if server_side && stretch.waited(&h.server_wait_us, &h.server_runs, half_us) {
        return Some("server");
    }
    let (w, r) = (
        stretch.sum(&h.generator_wait_us),
        stretch.sum(&h.generator_runs),
    );
    let another_task = w as f64 >= WAIT_SHARE * stretch.span_us() || w >= half_us * r.max(1);
    if another_task && stretch.waited(&h.generator_wait_us, &h.generator_runs, half_us) {
        return Some("generator");
    }
    if stretch.sum(&h.steal_us) >= half_us.max(2 * STEAL_TICK_US) {
        return Some("steal");
    }
    let late = h
        .hiccup_max_us
        .get(stretch.range)
        .and_then(|s| s.iter().copied().max())
        .unwrap_or(0);
    (value_ns >= stall_ns && late >= half_us).then_some("machine")
}

/// Whether the server waited for a CPU through the stretch a reply of `value_ns`,
/// received in batch `i`, waited: in waits longer than an idle core's wake-up on
/// average, and for a tenth of the stretch at least. Less than [`host_part`] asks (half
/// the stretch), for a tail the server's own execution cannot explain: a core another
/// task keeps busy also delays the kernel's work for the server (its wake-ups, its
/// packets) where the server's own wait does not show it.
pub(super) fn contended(h: &HostBatches, i: usize, value_ns: u64) -> bool {
    Stretch::of(h, i, value_ns).waited(&h.server_wait_us, &h.server_runs, value_ns / 10_000)
}

/// Whether the server worked through the stretch a reply of `value_ns` received in
/// batch `i` waited: on a CPU for [`BUSY_SHARE`] of the batches it may have waited
/// through at least.
pub(super) fn worked(h: &HostBatches, i: usize, value_ns: u64) -> bool {
    let stretch = Stretch::of(h, i, value_ns);
    if h.server_cpu_us.get(stretch.range.clone()).is_none() {
        return false;
    }
    let span_us = stretch.span_us();
    span_us > 0.0 && stretch.sum(&h.server_cpu_us) as f64 >= BUSY_SHARE * span_us
}
