//! The server's stalls among a tail's slow replies: the stretches the replies given to a
//! stall waited through, joined where they overlap, each with whether the server was off
//! its CPU through it and the server's own record of it (its slow log, its latency
//! monitor, a fork).

use crate::report::host::HostBatches;
use crate::report::server::events::ServerEvents;
use crate::report::tail::Stall;

/// A tenth of the server's usual times on a CPU in a batch: fewer through a stall, and it
/// was off its CPU and not runnable (a quiet server still runs its timer, tens of times a
/// second).
pub const OFF_CPU_RUNS: f64 = 0.1;

/// The stalls of `replies` (`(batch received in, the reply's time, replies)`), in time
/// order; with the server's runs from `host` and its `events` where known.
pub(super) fn stalls(
    replies: &[(usize, u64, f64)],
    host: Option<&HostBatches>,
    events: Option<&ServerEvents>,
) -> Vec<Stall> {
    let batch_ns = crate::record::nanos(crate::drive::BATCH).max(1) as f64;
    // Each reply's stretch, ending in the middle of the batch it was received in.
    let mut stretches: Vec<(f64, f64, u64, f64)> = replies
        .iter()
        .map(|&(i, value_ns, n)| {
            let end = (i as f64 + 0.5) * batch_ns;
            ((end - value_ns as f64).max(0.0), end, value_ns, n)
        })
        .collect();
    stretches.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut joined: Vec<(f64, f64, u64, f64)> = Vec::new();
    for s in stretches {
        match joined.last_mut() {
            Some(last) if s.0 <= last.1 => {
                last.1 = last.1.max(s.1);
                last.2 = last.2.max(s.2);
                last.3 += s.3;
            }
            _ => joined.push(s),
        }
    }
    let mut used = vec![false; events.map_or(0, |e| e.events.len())];
    joined
        .iter()
        .map(|&(start, end, longest, n)| Stall {
            start_secs: start / 1e9,
            length_ms: longest as f64 / 1e6,
            replies: n.round() as u64,
            off_cpu: host.and_then(|h| off_cpu(h, start, end, batch_ns)),
            events: events
                .map(|e| named(e, start / 1e9, end / 1e9, longest as f64 / 1e6, &mut used))
                .unwrap_or_default(),
        })
        .collect()
}

/// Whether the server was off its CPU through the batches wholly inside `start..end`
/// (ns): under [`OFF_CPU_RUNS`] of its median runs in one of them; `None` when none lies
/// wholly inside, or its runs were not measured.
fn off_cpu(h: &HostBatches, start: f64, end: f64, batch_ns: f64) -> Option<bool> {
    let mut runs = h.server_runs.clone();
    if runs.is_empty() {
        return None;
    }
    runs.sort_unstable();
    let typical = runs[runs.len() / 2] as f64;
    let (first, last) = (
        (start / batch_ns).ceil() as usize,
        (end / batch_ns) as usize,
    );
    let inside = h.server_runs.get(first..last.max(first))?;
    let fewest = *inside.iter().min()?;
    Some(fewest as f64 <= (OFF_CPU_RUNS * typical).max(1.0))
}

/// The server's own record of a stall from `from` to `to` (seconds in the window) whose
/// longest reply waited `length_ms`: the event in that stretch whose own length is
/// nearest, as `DEBUG 200.1 ms (slowlog)`. An event names one stall at most.
fn named(
    events: &ServerEvents,
    from: f64,
    to: f64,
    length_ms: f64,
    used: &mut [bool],
) -> Vec<String> {
    let candidates = events.events.iter().enumerate().filter(|(i, e)| {
        // The server stamps whole seconds: the event began in the second after `at_secs`.
        let (begins, ends) = (e.at_secs, e.at_secs + 1.0 + e.length_ms / 1e3);
        !used.get(*i).copied().unwrap_or(true)
            && begins <= to
            && ends >= from
            && e.length_ms >= 0.5 * length_ms
            && e.length_ms <= 2.0 * length_ms
    });
    let Some((i, e)) = candidates.min_by(|a, b| {
        (a.1.length_ms - length_ms)
            .abs()
            .total_cmp(&(b.1.length_ms - length_ms).abs())
    }) else {
        return Vec::new();
    };
    if let Some(u) = used.get_mut(i) {
        *u = true;
    }
    vec![format!("{} {:.1} ms ({})", e.event, e.length_ms, e.source)]
}
