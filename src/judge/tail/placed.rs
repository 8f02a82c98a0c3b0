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
    let range = span(i, value_ns);
    let sum = |v: &[u64]| v.get(range.clone()).map_or(0, |s| s.iter().sum::<u64>());
    let waited = |wait: &[u64], runs: &[u64]| {
        let (w, r) = (sum(wait), sum(runs));
        w > 0 && w >= half_us && w as f64 >= WAKE_UP_US * r.max(1) as f64
    };
    if server_side && waited(&h.server_wait_us, &h.server_runs) {
        return Some("server");
    }
    let span_us = range.len() as f64 * h.batch_ms * 1e3;
    let (w, r) = (sum(&h.generator_wait_us), sum(&h.generator_runs));
    let another_task = w as f64 >= WAIT_SHARE * span_us || w >= half_us * r.max(1);
    if waited(&h.generator_wait_us, &h.generator_runs) && another_task {
        return Some("generator");
    }
    if sum(&h.steal_us) >= half_us.max(2 * STEAL_TICK_US) {
        return Some("steal");
    }
    let late = h
        .hiccup_max_us
        .get(range)
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
    let range = span(i, value_ns);
    let sum = |v: &[u64]| v.get(range.clone()).map_or(0, |s| s.iter().sum::<u64>());
    let (w, r) = (sum(&h.server_wait_us), sum(&h.server_runs));
    w > 0 && w >= value_ns / 10_000 && w as f64 >= WAKE_UP_US * r.max(1) as f64
}

/// Whether the server worked through the stretch a reply of `value_ns` received in
/// batch `i` waited: on a CPU for [`BUSY_SHARE`] of the batches it may have waited
/// through at least.
pub(super) fn worked(h: &HostBatches, i: usize, value_ns: u64) -> bool {
    let range = span(i, value_ns);
    let Some(cpu) = h.server_cpu_us.get(range.clone()) else {
        return false;
    };
    let span_us = range.len() as f64 * h.batch_ms * 1e3;
    span_us > 0.0 && cpu.iter().sum::<u64>() as f64 >= BUSY_SHARE * span_us
}
