//! The host's lines of a run's text: who waited for a CPU and how long, steal, CPU
//! pressure, an idle thread's hiccups, and the slow replies the host's waits carried (by
//! the tail's attribution).

use std::io::{self, Write};

use crate::report::host::{HostReport, TaskWaits};
use crate::text::printable;

/// The host's figures of a test, under the server's view.
pub(super) fn host_lines(out: &mut dyn Write, host: &HostReport) -> io::Result<()> {
    let span_secs =
        host.batches.batch_ms / 1e3 * host.tail.as_ref().map_or(0, |t| t.batches) as f64;
    writeln!(
        out,
        "  host (waits for a CPU from /proc/*/schedstat, steal, CPU pressure, an idle thread's sleeps; docs/host.md):"
    )?;
    let waits = |who: &str, w: &TaskWaits| {
        format!(
            "    {who}: waited {:.1} ms for a CPU ({:.1}% of the window; {:.1} µs per run, most {:.1} ms in a batch), {} involuntary switches; ran {:.0} ms",
            w.run_queue_wait_ms,
            w.run_queue_wait_share * 100.0,
            w.wait_per_run_us,
            w.most_in_a_batch_ms,
            w.involuntary_switches,
            w.cpu_ms
        )
    };
    match (&host.server, &host.server_unknown) {
        (Some(w), _) => writeln!(out, "{}", waits("server", w))?,
        (None, Some(why)) => writeln!(out, "    server: unknown ({})", printable(why))?,
        (None, None) => {}
    }
    if let Some(w) = &host.generator {
        writeln!(out, "{}", waits("generator", w))?;
    }
    let mut machine = Vec::new();
    if let Some(steal) = host.steal_ms {
        machine.push(format!("steal {steal:.0} ms"));
    }
    if let Some(p) = host.cpu_pressure_ms {
        machine.push(format!(
            "CPU pressure {p:.0} ms (some task waiting for a CPU)"
        ));
    }
    if !machine.is_empty() {
        writeln!(out, "    machine: {}", machine.join(", "))?;
    }
    if let Some(h) = &host.hiccups {
        writeln!(
            out,
            "    hiccups ({} wake-ups from {:.0} ms sleeps, {} over 1 ms late): p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms, max {:.3} ms",
            h.count,
            h.period_ms,
            h.over_1ms,
            h.p50_us / 1e3,
            h.p99_us / 1e3,
            h.p99_9_us / 1e3,
            h.max_us / 1e3
        )?;
    }
    if let Some(t) = &host.tail {
        // Which parts waited is the bottleneck's to say, where it matters.
        writeln!(
            out,
            "    slow replies (over the tail's bound, {:.3} ms): {} of {} in the host's waits, in {} of {} batches ({span_secs:.1} s)",
            t.over_ns as f64 / 1e6,
            t.in_waiting_batches,
            t.slow_replies,
            t.waiting_batches,
            t.batches
        )?;
    }
    if let Some(ms) = host.meter_cpu_ms {
        writeln!(out, "    the meter's own CPU: {ms:.1} ms")?;
    }
    for m in &host.missing {
        writeln!(out, "    not measured: {}", printable(m))?;
    }
    Ok(())
}
