//! The machine's own scheduling noise, as an open-loop arrival would see it: a thread
//! spins on the clock for the given seconds and keeps every gap between two reads over
//! 1 us (the time it was off the CPU: preempted, interrupted, or its vCPU descheduled).
//! A request due at a random instant inside a gap of length g waits up to g for the
//! thread to come back, so P(delay > x) = sum(max(g - x, 0)) / run time. Prints that
//! distribution's p50/p99/p99.9 as `key=value` words for bench/open.
//!
//! Built by `rustc -O` in bench/open (no crate needed); a separate program so
//! it measures the platform, not tailrate.
//!
//! Usage: hiccup SECONDS

use std::time::{Duration, Instant};

fn main() {
    let seconds: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let run = Duration::from_secs_f64(seconds);
    let threshold = Duration::from_micros(1);
    let mut gaps_ns: Vec<u64> = Vec::with_capacity(1 << 20);
    let start = Instant::now();
    let mut prev = start;
    loop {
        let now = Instant::now();
        let gap = now - prev;
        if gap > threshold {
            gaps_ns.push(gap.as_nanos() as u64);
        }
        prev = now;
        if now - start >= run {
            break;
        }
    }
    let total_ns = (prev - start).as_nanos() as f64;
    gaps_ns.sort_unstable();
    let away_ns: f64 = gaps_ns.iter().map(|&g| g as f64).sum();
    // P(delay > x) for a uniformly random instant.
    let tail = |x: f64| gaps_ns.iter().map(|&g| (g as f64 - x).max(0.0)).sum::<f64>() / total_ns;
    // The delay d with P(delay > d) = q, by bisection (tail falls as x grows).
    let quantile = |q: f64| {
        if tail(0.0) <= q {
            return 0.0;
        }
        let (mut lo, mut hi) = (0.0, *gaps_ns.last().unwrap_or(&0) as f64);
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            if tail(mid) > q { lo = mid } else { hi = mid }
        }
        hi
    };
    println!(
        "seconds={:.1} gaps_over_1us={} away_pct={:.3} p50_us={:.1} p99_us={:.1} p99_9_us={:.1} over_20us_pct={:.3} max_gap_us={:.1}",
        total_ns / 1e9,
        gaps_ns.len(),
        100.0 * away_ns / total_ns,
        quantile(0.5) / 1e3,
        quantile(0.01) / 1e3,
        quantile(0.001) / 1e3,
        100.0 * tail(20_000.0),
        *gaps_ns.last().unwrap_or(&0) as f64 / 1e3,
    );
}
