//! The bottleneck a tail's attribution names, in words: the cause that carries the most
//! replies over the bound, its share and its figure (the stalls and their lengths, who
//! waited for a CPU and how long, the lag's p99), and the other causes' shares.

use super::{at_floor, leading};
use crate::record::Metric;
use crate::report::TestReport;
use crate::report::tail::{Cause, Stall, TailCauses};
use crate::report::verdict::Bottleneck;

/// The share a cause must carry to be listed beside the leading one.
const LISTED: f64 = 0.05;

/// What held `test`'s tail, and why in words; `None` where the tail names nothing: no
/// reply over its bound, or it sits at the floor (the bottleneck is then `none`, with
/// [`floor`]'s words).
pub fn named(test: &TestReport, tail: &TailCauses) -> Option<(Bottleneck, String)> {
    if tail.replies == 0 || at_floor(tail) {
        return None;
    }
    let lead = leading(tail)?;
    let over = format!(
        "{:.0}% of the replies over {}",
        lead.share * 100.0,
        bound_words(tail)
    );
    let (verdict, said) = match lead.cause {
        Cause::ServerStall => (Bottleneck::Server, stalls(&tail.stalls, &over)),
        Cause::Server => (Bottleneck::Server, server(test, &over)),
        Cause::Host => (Bottleneck::Host, host(test, tail, &over)),
        Cause::Generator => (Bottleneck::Generator, generator(test, &over)),
        Cause::ClientQueue => (
            Bottleneck::ClientQueue,
            format!(
                "waiting for a free connection carries {over} while the server answered fast; raise -c or --max-inflight"
            ),
        ),
        Cause::NetworkKernel => (Bottleneck::NetworkKernel, network(test, &over)),
        Cause::Unattributed => return None,
    };
    let others: Vec<String> = tail
        .causes
        .iter()
        .filter(|c| c.cause != lead.cause && c.share >= LISTED)
        .map(|c| format!("{} {:.0}%", c.cause.name(), c.share * 100.0))
        .collect();
    let others = if others.is_empty() {
        String::new()
    } else {
        format!(" (besides: {})", others.join(", "))
    };
    Some((verdict, format!("{said}{others}")))
}

/// Why nothing held the tail: no reply over its bound, or the tail at the floor.
pub fn floor(tail: &TailCauses) -> String {
    if tail.replies == 0 {
        return format!("no reply over {}", bound_words(tail));
    }
    format!(
        "the tail sits at the floor: the response {} {}, {:.1} times the floor ({}, the service time's p10 or its quietest batch's median)",
        if tail.bound.starts_with('p') && !tail.bound.contains("<=") {
            tail.bound.clone()
        } else {
            "at the objective's percentile".into()
        },
        ms(tail.level_ns),
        tail.level_ns as f64 / tail.floor_ns.max(1) as f64,
        ms(tail.floor_ns)
    )
}

/// "1.000 ms (p99<=1ms)" or "the p99, 183.5 ms".
fn bound_words(tail: &TailCauses) -> String {
    if tail.bound.contains("<=") {
        format!("{} ({})", ms(tail.over_ns), tail.bound)
    } else {
        format!("the {}, {}", tail.bound, ms(tail.over_ns))
    }
}

/// "3 stalls of 183-201 ms carry 96% of the replies over ...: DEBUG 200.1 ms (slowlog)
/// ...; the server was off its CPU and not runnable through them".
fn stalls(stalls: &[Stall], over: &str) -> String {
    let (lo, hi) = stalls.iter().fold((f64::MAX, 0.0f64), |(lo, hi), s| {
        (lo.min(s.length_ms), hi.max(s.length_ms))
    });
    let n = stalls.len();
    let lengths = if n == 0 {
        String::new()
    } else if (hi - lo) < 1.0 {
        format!(" of {hi:.0} ms")
    } else {
        format!(" of {lo:.0}-{hi:.0} ms")
    };
    let what = match n {
        0 => "stalls".to_string(),
        1 => format!("1 stall{lengths}"),
        _ => format!("{n} stalls{lengths}"),
    };
    let verb = if n == 1 { "carries" } else { "carry" };
    let events: Vec<&str> = stalls
        .iter()
        .flat_map(|s| s.events.iter().map(String::as_str))
        .take(3)
        .collect();
    let record = if events.is_empty() {
        String::new()
    } else {
        let named = stalls.iter().filter(|s| !s.events.is_empty()).count();
        format!(
            "; the server's own record: {}{}",
            events.join(", "),
            if named > events.len() {
                format!(" and {} more", named - events.len())
            } else {
                String::new()
            }
        )
    };
    let off = stalls.iter().filter(|s| s.off_cpu == Some(true)).count();
    let on = stalls.iter().filter(|s| s.off_cpu == Some(false)).count();
    let how = match (off, on) {
        (0, 0) => String::new(),
        (_, 0) => "; the server was off its CPU and not runnable through them".into(),
        (0, _) => {
            "; the server ran through them but answered nothing (clients paused or blocked)".into()
        }
        (off, _) => format!("; the server was off its CPU and not runnable through {off} of them"),
    };
    format!("{what} {verb} {over}{record}{how}")
}

/// "the service time carries ...: the server's execution and queueing, at 83% of one
/// core, execution p99 <= 5 µs".
fn server(test: &TestReport, over: &str) -> String {
    let mut figures = Vec::new();
    if let Some(cpu) = test.server.as_ref().and_then(|s| s.cpu_utilisation) {
        figures.push(format!("at {:.0}% of one core", cpu * 100.0));
    }
    if let Some(e) = exec_p99_us(test) {
        figures.push(format!("execution p99 <= {e} µs"));
    }
    let figures = if figures.is_empty() {
        String::new()
    } else {
        format!(", {}", figures.join(", "))
    };
    format!("the service time carries {over}: the server's execution and queueing{figures}")
}

/// The server's execution time at p99 over the test's commands, µs.
fn exec_p99_us(test: &TestReport) -> Option<u64> {
    test.server
        .as_ref()?
        .commands
        .iter()
        .filter_map(|c| Some(c.exec_usec_at_most?.p99))
        .max()
}

/// "... came while the server waited for a CPU (900 ms, 45% of the run, 120 µs per run)".
fn host(test: &TestReport, tail: &TailCauses, over: &str) -> String {
    let h = test.host.as_ref();
    let parts: Vec<String> = tail
        .host_parts
        .iter()
        .map(|(part, _)| match part.as_str() {
            "server" => match h.and_then(|h| h.server) {
                Some(w) => format!(
                    "the server waited for a CPU ({:.0} ms, {:.0}% of the run, {:.0} µs per run)",
                    w.run_queue_wait_ms,
                    w.run_queue_wait_share * 100.0,
                    w.wait_per_run_us
                ),
                None => "the server waited for a CPU".into(),
            },
            "generator" => match h.and_then(|h| h.generator) {
                Some(w) => format!(
                    "the generator's threads waited for a CPU ({:.0} ms, {:.0} µs per run)",
                    w.run_queue_wait_ms, w.wait_per_run_us
                ),
                None => "the generator's threads waited for a CPU".into(),
            },
            "steal" => format!(
                "the hypervisor stole CPU ({:.0} ms)",
                h.and_then(|h| h.steal_ms).unwrap_or(0.0)
            ),
            _ => format!(
                "the whole machine stalled (an idle thread woke up to {:.1} ms late)",
                h.and_then(|h| h.hiccups).map_or(0.0, |c| c.max_us / 1e3)
            ),
        })
        .collect();
    format!("{over} came while {}", parts.join(", or "))
}

/// "its lateness carries ... (lag p99 8.0 ms); use --pacing spin ...".
fn generator(test: &TestReport, over: &str) -> String {
    let lag = test
        .latency
        .get(&Metric::Lag)
        .map_or(String::new(), |l| format!(" (lag p99 {})", ms(l.p99_ns)));
    format!(
        "the generator's lateness carries {over}{lag}{}; use --pacing spin, add --threads, or lower the rate",
        super::super::host::generator_waits(test).unwrap_or_default()
    )
}

/// "the service time carries ... while the server executed in <= 1 µs at 5% of one
/// core: the time went between the ends".
fn network(test: &TestReport, over: &str) -> String {
    format!(
        "the service time carries {over} while the server executed in <= {} µs at {:.0}% of one core: the time went between the ends (round trips, the kernel, a proxy)",
        exec_p99_us(test).unwrap_or(0),
        test.server
            .as_ref()
            .and_then(|s| s.cpu_utilisation)
            .unwrap_or(0.0)
            * 100.0
    )
}

/// "0.120 ms", "183.5 ms".
fn ms(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms < 10.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{ms:.1} ms")
    }
}
