//! The host's part in a tail: which slow replies fell in batches where the host made a
//! thread wait, and the `host` bottleneck when those waits explain the tail while the
//! server executed fast and the generator kept its schedule.
//!
//! A thread waits for a CPU for one of two reasons: another task holds it, or the CPU
//! was idle and had to wake. Both count in `run_delay`. On a machine that is not
//! shared the waits are wake-ups, a few µs per run on a CPU at most; a CPU that another
//! task holds makes a thread wait its slice, and the mean per run rises past
//! [`WAKE_UP_US`]. A part of the host waited materially when its waits fill at least
//! the tail's share of the test (1%, the replies past the p99) and are more than
//! wake-ups; the generator's threads, which spin on a core of their own, when they
//! waited [`WAIT_SHARE`] of the test. A batch is one with a host wait when a part
//! waited there at least half the slow replies' bound, in waits longer than wake-ups.
//! An idle thread's hiccups are reported beside, not judged on: they rise with any busy
//! thread, the generator's own spinning included.

use crate::report::TestReport;
use crate::report::host::{HostBatches, HostReport, TailInWaits};
use crate::report::verdict::{Bottleneck, Judgement};
use crate::stats::confidence::Batch;

/// The longest mean wait per run on a CPU that an idle CPU's wake-up explains, µs
/// (measured on this project's 2-core VMs: 0.3-3 µs on a quiet machine, per batch
/// rarely past 15 µs at low rates; 13-39 µs with a busy process on the server's core).
pub const WAKE_UP_US: f64 = 8.0;

/// The share of the test the server's waits must fill to hold the tail: the replies
/// past the p99 are 1% of them.
pub const TAIL_WAIT_SHARE: f64 = 0.01;

/// The share of the test the generator's threads must wait for a CPU for the wait to be
/// another task's: a spinning thread also yields its core to tailrate's own collector.
pub const WAIT_SHARE: f64 = 0.1;

/// The share of the slow replies that must fall in batches with the host's waits for
/// the host to be what the tail waited on.
pub const TAIL_SHARE: f64 = 0.5;

/// One tick of `/proc/stat`'s steal, µs.
const STEAL_TICK_US: u64 = 10_000;

/// How much the slow replies must gather in those batches: their share against the
/// share of batches with a wait. Waits that the slow replies do not follow explain
/// nothing.
pub const GATHERING: f64 = 1.5;

/// The slow replies of a test (over its response p99, `over_ns`) against the batches of
/// `host` with a wait of the host's; `None` without slow replies or batches.
pub fn tail_in_waits(host: &HostReport, response: &[Batch], over_ns: u64) -> Option<TailInWaits> {
    let b = &host.batches;
    let batches = response.len();
    let mut tail = TailInWaits {
        over_ns,
        batches: batches as u64,
        ..TailInWaits::default()
    };
    let mut by_part: Vec<(&str, u64)> = Vec::new();
    let mut without = Batch::default();
    for (i, batch) in response.iter().enumerate() {
        let slow = batch.len() - batch.at_most(over_ns);
        tail.slow_replies += slow;
        let parts = waiting_parts(b, i, over_ns);
        if parts.is_empty() {
            without.add(batch);
        } else {
            tail.waiting_batches += 1;
            tail.waiting.push(u32::try_from(i).unwrap_or(u32::MAX));
            tail.in_waiting_batches += slow;
            for part in parts {
                match by_part.iter_mut().find(|(p, _)| *p == part) {
                    Some((_, n)) => *n += 1,
                    None => by_part.push((part, 1)),
                }
            }
        }
    }
    // The parts named are those that waited in a quarter of the waiting batches at least,
    // the most frequent first.
    by_part.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    tail.parts = by_part
        .iter()
        .filter(|&&(_, n)| 4 * n >= tail.waiting_batches)
        .map(|(p, _)| p.to_string())
        .collect();
    tail.p99_without_waits_ns = without.quantile(0.99);
    (tail.slow_replies > 0).then_some(tail)
}

/// The parts of the host that made a thread wait in batch `i`, against slow replies
/// over `over_ns`.
fn waiting_parts(b: &HostBatches, i: usize, over_ns: u64) -> Vec<&'static str> {
    let long_us = (over_ns / 2_000).max(1);
    let at = |v: &[u64]| v.get(i).copied().unwrap_or(0);
    let mut parts = Vec::new();
    let server = at(&b.server_wait_us);
    if server >= long_us && server as f64 >= WAKE_UP_US * at(&b.server_runs).max(1) as f64 {
        parts.push("server");
    }
    if at(&b.generator_wait_us) as f64 >= (long_us as f64).max(WAIT_SHARE * b.batch_ms * 1e3) {
        parts.push("generator");
    }
    // The kernel counts steal in 10 ms ticks over every CPU: one tick in a batch is
    // rounding, two are a hypervisor taking a CPU.
    if at(&b.steal_us) >= long_us.max(2 * STEAL_TICK_US) {
        parts.push("steal");
    }
    parts
}

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

/// The `host` verdict: the slow replies gather in batches where the host made the
/// server or the generator wait (or stole their CPU), while the server's execution is
/// short against them. `None` when the host's figures do not explain the tail.
pub fn verdict(test: &TestReport, execution_p99_us: Option<u64>) -> Option<Judgement> {
    let host = test.host.as_ref()?;
    let tail = host.tail.as_ref()?;
    // The server's own execution must be well under the slow replies' bound.
    let fast = execution_p99_us.is_some_and(|e| e * 1_000 * 4 <= tail.over_ns);
    let material = material_parts(host);
    let gathered =
        tail.share() >= TAIL_SHARE && tail.share() >= GATHERING * tail.batch_share().min(0.6);
    // Waits through the whole test hold the tail where most slow replies fell among
    // them; waits in a few batches, where the slow replies gathered there and the p99
    // of the other batches falls out of the p99's interval.
    let pervasive = !material.is_empty() && tail.share() >= TAIL_SHARE;
    if !fast || !(pervasive || (gathered && moved(test, tail))) {
        return None;
    }
    Some(Judgement {
        verdict: Bottleneck::Host,
        because: because(host, tail, &material),
        server_busy: None,
    })
}

/// Whether the host's waits moved the response p99 out of its interval: without the
/// batches that had them, the p99 falls below the interval's low end (or by a tenth,
/// without an interval); a host that waited in every batch moved it by definition.
fn moved(test: &TestReport, tail: &TailInWaits) -> bool {
    let Some(without) = tail.p99_without_waits_ns else {
        return tail.waiting_batches > 0;
    };
    let low = test
        .response()
        .and_then(|r| r.ci95(crate::report::Percentile::P99))
        .map_or(tail.over_ns as f64 * 0.9, |ci| ci.low() as f64);
    (without as f64) < low
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

/// The size of the host's part, in words: who waited how long, and the slow replies
/// among the waits.
fn because(host: &HostReport, tail: &TailInWaits, material: &[&str]) -> String {
    let span_secs = host.batches.batch_ms / 1e3 * tail.batches as f64;
    let mut named: Vec<&str> = material.to_vec();
    for part in &tail.parts {
        if !named.contains(&part.as_str()) {
            named.push(part);
        }
    }
    let mut parts = Vec::new();
    for part in named {
        let said = match part {
            "server" => host.server.map(|w| {
                format!(
                    "the server waited {:.0} ms for a CPU in {span_secs:.1} s ({:.0}%, {:.0} µs per run)",
                    w.run_queue_wait_ms,
                    w.run_queue_wait_share * 100.0,
                    w.wait_per_run_us
                )
            }),
            "generator" => host.generator.map(|w| {
                format!(
                    "the generator's threads waited {:.0} ms for a CPU ({:.0} µs per run)",
                    w.run_queue_wait_ms, w.wait_per_run_us
                )
            }),
            "steal" => host
                .steal_ms
                .map(|s| format!("the hypervisor stole {s:.0} ms of CPU")),
            _ => None,
        };
        parts.extend(said);
    }
    let without = tail.p99_without_waits_ns.map_or(String::new(), |ns| {
        format!(" (the p99 of the others: {:.2} ms)", ns as f64 / 1e6)
    });
    format!(
        "{}; {:.0}% of the replies over the p99, {:.2} ms, came in the {} of {} batches with such a wait{without}",
        parts.join(", "),
        tail.share() * 100.0,
        tail.over_ns as f64 / 1e6,
        tail.waiting_batches,
        tail.batches
    )
}

/// How much more a side's part must have waited than the other's for the hosts to
/// differ: twice as long, and by [`TAIL_WAIT_SHARE`] of the run at least.
const DIFFERENT: f64 = 2.0;

/// Whether sides `a` and `b` met different hosts: a part that waited materially on one
/// side (see [`material_parts`]) and twice as long as on the other. In words,
/// with the way out; `None` when their hosts were alike, as far as both measured.
pub fn difference(a: &HostReport, b: &HostReport) -> Option<String> {
    let share = |h: &HostReport, part: &str| match part {
        "server" => h.server.map(|w| w.run_queue_wait_share),
        "generator" => h.generator.map(|w| w.run_queue_wait_share),
        _ => None,
    };
    let mut said = Vec::new();
    for (side, this, other, other_side) in [("A", a, b, "B"), ("B", b, a, "A")] {
        for part in material_parts(this) {
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
    use crate::report::host::TaskWaits;

    /// A batch of 100 replies at 50 µs and `slow` at 3 ms.
    fn batch(slow: u64) -> Batch {
        Batch::of_buckets([(50_000, 100), (3_000_000, slow)].into_iter())
    }

    /// A host whose server waited `wait_us` in each batch over 200 runs, in `waiting` of
    /// four batches.
    fn host(waiting: &[bool], wait_us: u64, share: f64, per_run: f64) -> HostReport {
        HostReport {
            server: Some(TaskWaits {
                run_queue_wait_share: share,
                wait_per_run_us: per_run,
                ..TaskWaits::default()
            }),
            batches: HostBatches {
                batch_ms: 50.0,
                server_wait_us: waiting
                    .iter()
                    .map(|&w| if w { wait_us } else { 10 })
                    .collect(),
                server_runs: vec![200; waiting.len()],
                ..HostBatches::default()
            },
            ..HostReport::default()
        }
    }

    #[test]
    fn slow_replies_are_counted_where_the_server_waited_longer_than_wake_ups() {
        let response = [batch(0), batch(5), batch(0), batch(1)];
        // 3 ms of waits in 200 runs (15 µs a run): another task held the CPU.
        let h = host(&[false, true, false, false], 3_000, 0.015, 15.0);
        let tail = tail_in_waits(&h, &response, 1_000_000).unwrap();
        assert_eq!((tail.slow_replies, tail.in_waiting_batches), (6, 5));
        assert_eq!((tail.waiting_batches, tail.batches), (1, 4));
        assert_eq!(tail.parts, vec!["server".to_string()]);
        // The same wait over 2,000 runs (1.5 µs each) is wake-ups.
        let mut wake_ups = h.clone();
        wake_ups.batches.server_runs = vec![2_000; 4];
        let tail = tail_in_waits(&wake_ups, &response, 1_000_000).unwrap();
        assert_eq!(tail.waiting_batches, 0);
        assert_eq!(material_parts(&h), vec!["server"]);
        assert!(material_parts(&host(&[false; 4], 0, 0.015, 3.0)).is_empty());
    }

    #[test]
    fn compare_notes_a_server_that_waited_on_one_side_only() {
        let quiet = host(&[false; 4], 0, 0.004, 0.5);
        let mut busy = host(&[true; 4], 12_000, 0.26, 29.0);
        let tail = tail_in_waits(&busy, &vec![batch(2); 4], 1_000_000);
        busy.tail = tail;
        let note = difference(&quiet, &busy).unwrap();
        assert!(note.contains("B's server waited for a CPU 26.0%"), "{note}");
        assert!(note.contains("A's 0.4%"), "{note}");
        assert_eq!(difference(&quiet, &quiet), None);
    }
}
