//! How a rate-capped closed loop holds its rate (`--contrast`, `sweep --rate-capped`).
//! It stands for the tools that cap a closed loop, so it paces as they do and times each
//! request from its send, as they do.
//!
//! **Per connection** (the default) is memtier_benchmark's `--rate-limiting`: each
//! connection may send `R/c` requests a second, granted in ticks of at most 50 a second,
//! each tick's grant spent as a closed-loop burst (the next batch when the last is
//! answered) and what a tick did not spend dropped at the next, never carried. The ticks
//! of every connection fall together, counted from the run's start: memtier arms each
//! connection's timer as it connects, all at once. So at `c` connections a burst of `c`
//! batches reaches the server each tick, and the capped loop's median grows with `c`
//! at a fixed rate: the closed loop's nature, which the contrast shows.
//!
//! **Shared** is one `governor` limiter for every connection, each batch waiting for
//! its tokens: sends spread evenly over time whatever `c`.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How a rate-capped closed loop holds its rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapPacing {
    /// Each connection at R/c, in ticks of at most 50 a second, all connections' ticks
    /// together (memtier_benchmark's --rate-limiting).
    #[default]
    Connection,
    /// One limiter shared by every connection: sends spread evenly.
    Shared,
}

/// A closed loop held to a rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateCap {
    /// Requests per second of the whole run (over every connection).
    pub per_sec: f64,
    /// How it is held.
    pub pacing: CapPacing,
}

/// Most ticks a second per connection: memtier's (it grants `ceil(r / 50)` requests a
/// tick at a per-connection rate `r`).
const TICKS_PER_SEC: f64 = 50.0;

/// Longest tick: a rate so low that its tick would be longer grants its batch that
/// often, and `Instant` arithmetic stays far from overflow.
const LONGEST_TICK: Duration = Duration::from_secs(3600);

/// One connection's ticks: how many batches the current tick still grants, and when the
/// next one comes.
#[derive(Debug, Clone)]
pub struct Ticks {
    interval: Duration,
    per_tick: u32,
    left: u32,
    next: Instant,
}

impl Ticks {
    /// Ticks for a connection allowed `per_sec` requests a second in batches of `batch`,
    /// counted from `origin` (the run's start, the same for every connection). The first
    /// tick's grant is there at once: memtier's connections send when they connect.
    pub fn new(per_sec: f64, batch: usize, origin: Instant) -> Self {
        let batches_per_sec = (per_sec / batch.max(1) as f64).max(f64::MIN_POSITIVE);
        let per_tick = (batches_per_sec / TICKS_PER_SEC)
            .ceil()
            .clamp(1.0, f64::from(u32::MAX));
        let interval = Duration::try_from_secs_f64(per_tick / batches_per_sec)
            .unwrap_or(LONGEST_TICK)
            .clamp(Duration::from_nanos(1), LONGEST_TICK);
        Ticks {
            interval,
            per_tick: per_tick as u32,
            left: per_tick as u32,
            next: origin.checked_add(interval).unwrap_or(origin),
        }
    }

    /// Takes one batch's grant at `now`: `None` when it may go now, else the instant to
    /// wait for (then ask again). A tick that has come renews the grant whole; ticks
    /// missed while a burst was answered slowly are skipped, not made up.
    pub fn take(&mut self, now: Instant) -> Option<Instant> {
        if now >= self.next {
            let behind = now.duration_since(self.next).as_nanos();
            let skipped = behind / self.interval.as_nanos().max(1);
            let ahead = u32::try_from(skipped + 1).unwrap_or(u32::MAX);
            self.next = self
                .interval
                .checked_mul(ahead)
                .and_then(|d| self.next.checked_add(d))
                .unwrap_or(now + self.interval);
            self.left = self.per_tick;
        }
        if self.left > 0 {
            self.left -= 1;
            None
        } else {
            Some(self.next)
        }
    }

    /// The time between ticks.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Batches each tick grants.
    pub fn per_tick(&self) -> u32 {
        self.per_tick
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_tick_grants_memtiers_share_at_most_fifty_times_a_second() {
        let t0 = Instant::now();
        // memtier at 5,000/s on one connection: 100 requests every 20 ms.
        let t = Ticks::new(5000.0, 1, t0);
        assert_eq!((t.per_tick(), t.interval()), (100, ms(20)));
        // At 25/s (5,000/s over 200 connections): one every 40 ms.
        let t = Ticks::new(25.0, 1, t0);
        assert_eq!((t.per_tick(), t.interval()), (1, ms(40)));
        // Batches of 10 at 1,000/s: 100 batches a second, 2 a tick, every 20 ms.
        let t = Ticks::new(1000.0, 10, t0);
        assert_eq!((t.per_tick(), t.interval()), (2, ms(20)));
    }

    #[test]
    fn a_grant_is_spent_then_waits_for_the_next_tick_and_unspent_grants_are_dropped() {
        let t0 = Instant::now();
        let mut t = Ticks::new(100.0, 1, t0); // 2 every 20 ms
        assert_eq!(t.take(t0), None);
        assert_eq!(t.take(t0 + ms(1)), None);
        assert_eq!(t.take(t0 + ms(2)), Some(t0 + ms(20)));
        // The tick renews the grant.
        assert_eq!(t.take(t0 + ms(20)), None);
        assert_eq!(t.take(t0 + ms(21)), None);
        assert_eq!(t.take(t0 + ms(22)), Some(t0 + ms(40)));
        // A burst answered slowly: the ticks at 40 and 60 ms passed unused, and the grant
        // at 75 ms is one tick's, not three.
        assert_eq!(t.take(t0 + ms(75)), None);
        assert_eq!(t.take(t0 + ms(76)), None);
        assert_eq!(t.take(t0 + ms(77)), Some(t0 + ms(80)));
    }

    #[test]
    fn extreme_rates_neither_overflow_nor_spin() {
        let t0 = Instant::now();
        let mut slow = Ticks::new(1e-300, 1, t0);
        assert_eq!(slow.interval(), LONGEST_TICK);
        assert_eq!(slow.take(t0), None);
        assert_eq!(slow.take(t0), Some(t0 + LONGEST_TICK));
        let fast = Ticks::new(1e300, 1, t0);
        assert_eq!(fast.per_tick(), u32::MAX);
        assert!(fast.interval() >= Duration::from_nanos(1));
    }
}
