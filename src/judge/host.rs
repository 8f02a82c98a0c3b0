//! The host's waits over a whole test: which parts (the server, the generator's threads,
//! the hypervisor's steal) waited for a CPU materially, the generator's waits in words,
//! and `compare`'s note when two sides met different hosts. Which slow replies the
//! host's waits carried is the tail's attribution's (`super::tail`), which this note reads.
//!
//! A thread waits for a CPU for one of two reasons: another task holds it, or the CPU
//! was idle and had to wake. Both count in `run_delay`. On a machine that is not
//! shared the waits are wake-ups, a few µs per run on a CPU at most; a CPU that another
//! task holds makes a thread wait its slice, and the mean per run rises past
//! [`WAKE_UP_US`]. A part of the host waited materially when its waits fill at least
//! the tail's share of the test (1%, the replies past the p99) and are more than
//! wake-ups; the generator's threads, which spin on a core of their own, when they
//! waited [`WAIT_SHARE`] of the test.

pub use super::checks::WAKE_UP_US;
use crate::report::TestReport;
use crate::report::host::HostReport;

/// The share of the test the server's waits must fill to hold the tail: the replies
/// past the p99 are 1% of them.
pub const TAIL_WAIT_SHARE: f64 = 0.01;

/// The share of the test the generator's threads must wait for a CPU for the wait to be
/// another task's: a spinning thread also yields its core to tailrate's own collector.
pub const WAIT_SHARE: f64 = super::checks::GENERATOR_WAIT_SHARE;

/// One tick of `/proc/stat`'s steal, µs.
const STEAL_TICK_US: u64 = 10_000;

/// The parts of the host that waited materially over the whole test (see the module's
/// doc).
pub fn material_parts(host: &HostReport) -> Vec<&'static str> {
    let span_ms = host.batches.batch_ms * host.tail.as_ref().map_or(0, |t| t.batches) as f64;
    let mut parts = Vec::new();
    if host.server.is_some_and(|w| {
        w.run_queue_wait_share >= TAIL_WAIT_SHARE && w.wait_per_run_us >= WAKE_UP_US
    }) {
        parts.push("server");
    }
    if host
        .generator
        .is_some_and(|w| w.run_queue_wait_share >= WAIT_SHARE)
    {
        parts.push("generator");
    }
    if host.steal_ms.is_some_and(|s| {
        span_ms > 0.0 && s / span_ms >= TAIL_WAIT_SHARE && s >= 2.0 * STEAL_TICK_US as f64 / 1e3
    }) {
        parts.push("steal");
    }
    parts
}

/// The generator's threads' waits for a CPU, in words, when they filled
/// [`WAIT_SHARE`] of the test: another task shared their CPU, which is why they were late.
pub fn generator_waits(test: &TestReport) -> Option<String> {
    let host = test.host.as_ref()?;
    let w = host.generator?;
    let waited = w.run_queue_wait_share >= WAIT_SHARE
        || (w.run_queue_wait_share >= TAIL_WAIT_SHARE && w.wait_per_run_us >= WAKE_UP_US);
    waited.then(|| {
        format!(
            "; its threads waited {:.0} ms for a CPU ({:.0}% of the test, {:.0} µs per run): another task shares their CPU",
            w.run_queue_wait_ms,
            w.run_queue_wait_share * 100.0,
            w.wait_per_run_us
        )
    })
}

/// How much more a side's part must have waited than the other's for the hosts to
/// differ: twice as long, and by [`TAIL_WAIT_SHARE`] of the run at least.
const DIFFERENT: f64 = 2.0;

/// The share of a side's tail the host's waits must carry (by the tail's attribution)
/// for that tail to be the host's.
pub const HOST_TAIL: f64 = 0.5;

/// Whether sides `a` and `b` met different hosts: a part that waited materially on one
/// side (see [`material_parts`]) and twice as long as on the other, or a tail the host
/// carried on one side ([`HOST_TAIL`], by the tail's attribution) and not on the other.
/// In words, with the way out; `None` when their hosts were alike, as far as both
/// measured.
pub fn difference(a: &HostReport, b: &HostReport) -> Option<String> {
    let share = |h: &HostReport, part: &str| match part {
        "server" => h.server.map(|w| w.run_queue_wait_share),
        "generator" => h.generator.map(|w| w.run_queue_wait_share),
        _ => None,
    };
    let in_waits = |h: &HostReport| h.tail.as_ref().map(|t| t.share());
    let mut said = Vec::new();
    for (side, this, other, other_side) in [("A", a, b, "B"), ("B", b, a, "A")] {
        let mut parts = material_parts(this);
        // Beside another side, a server's waits are more than wake-ups also when each
        // run waited twice the other side's: a busy loop on its core can hand the CPU
        // back to a woken server within 6 µs, under a lone report's bound, over the
        // 1 µs of an idle CPU's wake-up.
        if !parts.contains(&"server")
            && let (Some(mine), Some(theirs)) = (this.server, other.server)
            && mine.run_queue_wait_share >= TAIL_WAIT_SHARE
            && mine.wait_per_run_us >= DIFFERENT * theirs.wait_per_run_us
        {
            parts.insert(0, "server");
        }
        for part in parts {
            let (Some(mine), Some(theirs)) = (share(this, part), share(other, part)) else {
                continue;
            };
            if mine >= DIFFERENT * theirs && mine - theirs >= TAIL_WAIT_SHARE {
                let who = if part == "server" {
                    "server"
                } else {
                    "generator's threads"
                };
                said.push(format!(
                    "{side}'s {who} waited for a CPU {:.1}% of the run against {other_side}'s {:.1}%",
                    mine * 100.0,
                    theirs * 100.0
                ));
            }
        }
        if let (Some(mine), Some(theirs)) = (in_waits(this), in_waits(other))
            && mine >= HOST_TAIL
            && theirs < HOST_TAIL
            && mine >= DIFFERENT * theirs
        {
            said.push(format!(
                "{side}'s tail is the host's: {:.0}% of its replies over its bound came while the host made it wait, against {:.0}% of {other_side}'s",
                mine * 100.0,
                theirs * 100.0
            ));
        }
    }
    (!said.is_empty()).then(|| {
        format!(
            "host: {}: the sides met different hosts, and the difference may be the host's; `tailrate compare --live` runs them in turns on the same host",
            said.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::report::host::{HostBatches, TailInWaits, TaskWaits};

    /// A host whose server waited `share` of the run, `per_run` µs a run, and whose tail
    /// the host carried `in_waits` of (by the attribution).
    fn host(share: f64, per_run: f64, in_waits: u64) -> HostReport {
        HostReport {
            server: Some(TaskWaits {
                run_queue_wait_share: share,
                wait_per_run_us: per_run,
                ..TaskWaits::default()
            }),
            batches: HostBatches {
                batch_ms: 50.0,
                ..HostBatches::default()
            },
            tail: Some(TailInWaits {
                over_ns: 1_000_000,
                slow_replies: 100,
                in_waiting_batches: in_waits,
                batches: 40,
                ..TailInWaits::default()
            }),
            ..HostReport::default()
        }
    }

    #[test]
    fn a_server_that_waited_only_materially_is_a_part_of_the_host() {
        assert_eq!(material_parts(&host(0.015, 15.0, 0)), vec!["server"]);
        // Wake-ups: short waits, however many.
        assert!(material_parts(&host(0.015, 3.0, 0)).is_empty());
        assert!(material_parts(&host(0.004, 30.0, 0)).is_empty());
    }

    #[test]
    fn compare_notes_a_server_whose_waits_per_run_rose_though_under_a_lone_reports_bound() {
        let quiet = host(0.001, 0.8, 0);
        let busy = host(0.029, 6.4, 0);
        let note = difference(&quiet, &busy).unwrap();
        assert!(note.contains("B's server waited for a CPU 2.9%"), "{note}");
        // Wake-ups alike on both sides, however many: no note.
        assert!(difference(&host(0.012, 3.0, 0), &host(0.02, 3.5, 0)).is_none());
    }

    #[test]
    fn compare_notes_a_server_that_waited_on_one_side_only_and_a_tail_the_host_carried() {
        let quiet = host(0.004, 0.5, 3);
        let busy = host(0.26, 29.0, 85);
        let note = difference(&quiet, &busy).unwrap();
        assert!(note.contains("B's server waited for a CPU 26.0%"), "{note}");
        assert!(note.contains("A's 0.4%"), "{note}");
        assert!(
            note.contains("B's tail is the host's: 85% of its replies"),
            "{note}"
        );
        assert_eq!(difference(&quiet, &quiet), None);
        // Alike waits, but one side's tail came in them.
        let note = difference(&host(0.004, 0.5, 2), &host(0.006, 0.5, 70)).unwrap();
        assert!(note.contains("B's tail is the host's"), "{note}");
    }
}
