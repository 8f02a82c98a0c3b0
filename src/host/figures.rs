//! The meter's samples as a test's host figures: the differences of cumulative
//! counters, each placed in the batch of the measured window its interval falls in, and
//! summed over the window.

use std::time::{Duration, Instant};

use super::meter::{HICCUP_PERIOD, Sample, Series};
use super::procfs::TaskTimes;
use crate::report::host::{Hiccups, HostBatches, HostReport, TaskWaits};

/// Nanoseconds in one of `/proc/stat`'s clock ticks (`USER_HZ`, 100 on every Linux
/// build that exposes it to programs).
const TICK_NS: u64 = 10_000_000;

/// The host's figures of `series` over the measured window: `batches` batches of
/// `batch` from `origin`.
pub fn figures(series: &Series, origin: Instant, batch: Duration, batches: usize) -> HostReport {
    let mut per = HostBatches {
        batch_ms: batch.as_secs_f64() * 1e3,
        ..HostBatches::default()
    };
    let n = batches;
    let (mut gen_total, mut server_total) = (TaskTimes::default(), TaskTimes::default());
    let (mut gen_wait, mut gen_runs) = (vec![0; n], vec![0; n]);
    let (mut server_wait, mut server_runs) = (vec![0; n], vec![0; n]);
    let mut server_cpu = vec![0; n];
    let (mut steal, mut hiccup) = (vec![0; n], vec![0; n]);
    let (mut steal_ns, mut pressure_us) = (0u64, 0u64);
    for pair in series.samples.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let Some(i) = batch_of(a, b, origin, batch).filter(|&i| i < n) else {
            continue;
        };
        if let Some(d) = b.generator.zip(a.generator).map(|(b, a)| b.since(a)) {
            gen_total = gen_total.plus(d);
            gen_wait[i] += d.run_delay_ns / 1_000;
            gen_runs[i] += d.slices;
        }
        if let Some(d) = b.server.zip(a.server).map(|(b, a)| b.since(a)) {
            server_total = server_total.plus(d);
            server_wait[i] += d.run_delay_ns / 1_000;
            server_runs[i] += d.slices;
            server_cpu[i] += d.cpu_ns / 1_000;
        }
        if let Some(((b, _), (a, _))) = b.steal_ticks.zip(a.steal_ticks) {
            let ns = b.saturating_sub(a) * TICK_NS;
            steal_ns += ns;
            steal[i] += ns / 1_000;
        }
        if let Some((b, a)) = b.pressure_some_us.zip(a.pressure_some_us) {
            pressure_us += b.saturating_sub(a);
        }
        hiccup[i] = hiccup[i].max(b.hiccup_max_ns / 1_000);
    }
    let span_ns = batch.as_nanos() as f64 * n as f64;
    let first = series.samples.first();
    let mut missing = Vec::new();
    let have = |missing: &mut Vec<String>, known: bool, what: &str| {
        if !known {
            missing.push(what.to_string());
        }
        known
    };
    let generator = have(
        &mut missing,
        first.is_some_and(|s| s.generator.is_some()),
        "the generator's waits: /proc/self/task is not readable here",
    )
    .then(|| {
        per.generator_wait_us = gen_wait.clone();
        per.generator_runs = gen_runs;
        waits(gen_total, span_ns, &gen_wait)
    });
    let server = match &series.server {
        Ok(pid) if first.is_some_and(|s| s.server.is_some()) => {
            per.server_wait_us = server_wait.clone();
            per.server_runs = server_runs;
            per.server_cpu_us = server_cpu;
            Some(waits(server_total, span_ns, &server_wait))
        }
        Ok(pid) => {
            missing.push(format!(
                "the server's waits: /proc/{pid}/task is not readable"
            ));
            None
        }
        Err(_) => None,
    };
    let steal_ms = have(
        &mut missing,
        first.is_some_and(|s| s.steal_ticks.is_some()),
        "steal: /proc/stat is not readable",
    )
    .then(|| {
        per.steal_us = steal;
        steal_ns as f64 / 1e6
    });
    let cpu_pressure_ms = have(
        &mut missing,
        first.is_some_and(|s| s.pressure_some_us.is_some()),
        "CPU pressure: /proc/pressure/cpu is absent (a kernel without PSI)",
    )
    .then_some(pressure_us as f64 / 1e3);
    per.hiccup_max_us = hiccup;
    let h = &series.hiccups;
    HostReport {
        generator,
        server,
        server_unknown: series.server.as_ref().err().cloned(),
        steal_ms,
        cpu_pressure_ms,
        hiccups: (!h.is_empty()).then(|| Hiccups {
            period_ms: HICCUP_PERIOD.as_secs_f64() * 1e3,
            count: h.len(),
            p50_us: h.value_at_quantile(0.5) as f64 / 1e3,
            p99_us: h.value_at_quantile(0.99) as f64 / 1e3,
            p99_9_us: h.value_at_quantile(0.999) as f64 / 1e3,
            max_us: h.max() as f64 / 1e3,
            over_1ms: h.len() - h.count_between(0, 1_000_000),
        }),
        batches: per,
        tail: None,
        missing,
        meter_cpu_ms: series.own_cpu_ns.map(|ns| ns as f64 / 1e6),
    }
}

/// The batch that the interval between samples `a` and `b` falls in, by its middle;
/// `None` before the window.
fn batch_of(a: &Sample, b: &Sample, origin: Instant, batch: Duration) -> Option<usize> {
    let middle = a.at + b.at.saturating_duration_since(a.at) / 2;
    let since = middle.checked_duration_since(origin)?;
    usize::try_from(since.as_nanos() / batch.as_nanos().max(1)).ok()
}

/// Threads' waits over a span of `span_ns`, from their total and per-batch waits (µs).
fn waits(total: TaskTimes, span_ns: f64, per_batch_us: &[u64]) -> TaskWaits {
    TaskWaits {
        run_queue_wait_ms: total.run_delay_ns as f64 / 1e6,
        run_queue_wait_share: if span_ns > 0.0 {
            total.run_delay_ns as f64 / span_ns
        } else {
            0.0
        },
        cpu_ms: total.cpu_ns as f64 / 1e6,
        involuntary_switches: total.involuntary_switches,
        wait_per_run_us: if total.slices == 0 {
            0.0
        } else {
            total.run_delay_ns as f64 / 1e3 / total.slices as f64
        },
        most_in_a_batch_ms: per_batch_us.iter().copied().max().unwrap_or(0) as f64 / 1e3,
    }
}
