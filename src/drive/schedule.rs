//! Arrival schedules and pacing: when each open-loop request is intended to go, and
//! how the scheduler waits for that moment.
//!
//! A schedule is a pure, seeded sequence of offsets from the run's start: constant
//! (`offset(i) = i / rate`) or Poisson (a cumulative sum of exponential gaps). The
//! intended time of a request is always `start + offset`, never a clock read.

use std::cell::Cell;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64Mcg;

/// How arrivals are spaced in open loop.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalProcess {
    /// Equal gaps of 1/rate.
    Constant,
    /// Exponential gaps with mean 1/rate (a Poisson process), seeded by --seed.
    Poisson,
}

/// How the open-loop scheduler waits for the next intended send time.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// Sleep on tokio's timer (1 ms resolution): least CPU, coarsest timing.
    Sleep,
    /// Sleep until close, then yield-spin the last stretch.
    Hybrid,
    /// Never sleep: yield-spin the whole time (one core busy).
    Spin,
}

/// Most requests per second one thread's schedule may plan (`--rate` over `--threads`):
/// about half of what one thread can plan when it sends none of them (bench/README.md,
/// "What one thread can plan"), so that a busier host still keeps up. Above it the
/// scheduler falls behind its own plan, however fast the server.
pub const MAX_RATE_PER_THREAD: f64 = 5_000_000.0;

/// The offsets of one thread's share of an open-loop run.
#[derive(Debug, Clone)]
pub struct Schedule {
    kind: Kind,
    /// Offset of the next arrival, in nanoseconds (f64 so constant gaps do not drift by rounding).
    next_ns: f64,
}

#[derive(Debug, Clone)]
enum Kind {
    Constant { gap_ns: f64 },
    Poisson { rng: Pcg64Mcg, gaps: Exp<f64> },
}

impl Schedule {
    /// The schedule of thread `share` of `shares`, which together make `rate_per_sec`.
    ///
    /// Constant: thread `k` takes arrivals `k, k + N, k + 2N, ...` of the whole run's
    /// equally spaced sequence. Poisson: each thread is a Poisson process at `rate / N`
    /// (their superposition is a Poisson process at `rate`), seeded from `seed` and `k`.
    pub fn new(
        arrival: ArrivalProcess,
        rate_per_sec: f64,
        share: usize,
        shares: usize,
        seed: u64,
    ) -> Self {
        let shares_f = shares.max(1) as f64;
        match arrival {
            ArrivalProcess::Constant => {
                let whole_gap_ns = 1e9 / rate_per_sec;
                Schedule {
                    kind: Kind::Constant {
                        gap_ns: whole_gap_ns * shares_f,
                    },
                    next_ns: whole_gap_ns * share as f64,
                }
            }
            ArrivalProcess::Poisson => {
                let thread_rate_per_ns = rate_per_sec / shares_f / 1e9;
                // rate_per_sec is validated positive and finite, so Exp::new cannot fail.
                let gaps = Exp::new(thread_rate_per_ns)
                    .unwrap_or_else(|_| Exp::new(1.0).unwrap_or_else(|_| unreachable!()));
                let mut rng = Pcg64Mcg::seed_from_u64(
                    seed ^ (0x9e37_79b9_7f4a_7c15u64.wrapping_mul(share as u64 + 1)),
                );
                let first = gaps.sample(&mut rng);
                Schedule {
                    kind: Kind::Poisson { rng, gaps },
                    next_ns: first,
                }
            }
        }
    }

    /// Offset of the next arrival from the start, without consuming it.
    #[inline]
    pub fn peek(&self) -> Duration {
        Duration::from_nanos(self.next_ns as u64)
    }

    /// Consumes the next arrival and returns its offset.
    #[inline]
    pub fn advance(&mut self) -> Duration {
        let current = self.peek();
        self.next_ns += match &mut self.kind {
            Kind::Constant { gap_ns } => *gap_ns,
            Kind::Poisson { rng, gaps } => gaps.sample(rng),
        };
        current
    }
}

/// Lead time before a deadline at which hybrid pacing stops sleeping and starts
/// yield-spinning: tokio rounds a deadline up to its 1 ms wheel and epoll_wait
/// rounds its timeout up to 1 ms, so a wake-up can come ~2 ms after the asked instant.
const HYBRID_SPIN_LEAD: Duration = Duration::from_micros(2500);

/// Longest last stretch before a deadline that spinning waits on the clock alone (see
/// [`spin_until`]); a round measured longer (one the host interrupted) is not what a
/// round costs.
const LAST_STRETCH_MAX: Duration = Duration::from_micros(5);

/// A spin round (or last stretch) measured longer than this was interrupted: the thread
/// was off its CPU for part of it (another task ran there). A round costs a few
/// microseconds.
const ROUND_INTERRUPTED: Duration = Duration::from_micros(50);

/// What spinning costs, kept so the CPU self-check can tell spinning from work.
#[derive(Debug, Default)]
pub struct SpinMeter {
    /// Bumped by the connection loops for every batch written or read.
    pub work: Cell<u64>,
    /// CPU time spent in spin rounds in which no other task did any work: time on a CPU
    /// only, so that a thread another task kept off its core does not count the wait as
    /// spinning.
    pub idle: Cell<Duration>,
    /// What one idle round of the runtime costs (a yield and a poll of the sockets), a
    /// moving average of the last rounds, capped at 5 µs (`LAST_STRETCH_MAX`).
    pub round: Cell<Duration>,
}

/// Waits until `deadline` the way `pacing` asks. Returns without waiting when it has passed.
pub async fn wait_until(deadline: Instant, pacing: Pacing, meter: &SpinMeter) {
    match pacing {
        Pacing::Sleep => tokio::time::sleep_until(deadline.into()).await,
        Pacing::Hybrid => {
            if let Some(early) = deadline.checked_sub(HYBRID_SPIN_LEAD)
                && early > Instant::now()
            {
                tokio::time::sleep_until(early.into()).await;
            }
            spin_until(deadline, meter).await;
        }
        Pacing::Spin => spin_until(deadline, meter).await,
    }
}

/// CPU time this thread has run (its own clock: time on a CPU only); zero where the
/// clock cannot be read.
pub(crate) fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// Yields to the runtime until `deadline`: the connection tasks keep running (each
/// yield lets the runtime poll I/O) while this task watches the clock. A round in which
/// no connection did any work is idle spinning; its time goes to `meter.idle`.
///
/// The last stretch, shorter than an idle round, is waited on the clock without
/// yielding: one more round would end past the deadline by part of a round (a poll of
/// the sockets is a system call, microseconds in a virtual machine), and that overshoot
/// is schedule lag on every request; a reply that comes meanwhile waits no longer than
/// it would for that round.
///
/// Rounds are timed on the wall clock, which also runs while another task holds the
/// core. So the thread's CPU clock is read at the start (before the deadline, in time
/// that is idle anyway) and, when a round was interrupted ([`ROUND_INTERRUPTED`]), at the
/// end: the CPU the interrupted rounds got is what the wait used beyond the
/// uninterrupted rounds, shared between idle and working rounds by their lengths. A
/// wait with no interrupted round reads the clock once: its rounds ran on the CPU.
async fn spin_until(deadline: Instant, meter: &SpinMeter) {
    let mut before = Instant::now();
    if before >= deadline {
        return;
    }
    let (cpu_start, wall_start) = (thread_cpu_time(), before);
    let mut spent = Spent::default();
    while before < deadline {
        if deadline - before <= meter.round.get() {
            let mut now = Instant::now();
            while now < deadline {
                std::hint::spin_loop();
                now = Instant::now();
            }
            // Waiting, not work: the CPU check leaves it out as it does idle rounds.
            spent.add(now - before, true);
            before = now;
            break;
        }
        let work = meter.work.get();
        tokio::task::yield_now().await;
        let now = Instant::now();
        let round = now - before;
        let idle = meter.work.get() == work;
        spent.add(round, idle);
        if idle {
            // An average over about eight rounds: one interrupted round moves it little.
            let average = (meter.round.get() * 7 + round.min(LAST_STRETCH_MAX)) / 8;
            meter.round.set(average);
        }
        before = now;
    }
    let idle = spent.idle_on_cpu(|| {
        (
            thread_cpu_time().saturating_sub(cpu_start),
            before - wall_start,
        )
    });
    meter.idle.set(meter.idle.get() + idle);
}

/// The rounds of one wait, by whether they were idle and whether they were interrupted.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Spent {
    /// Idle rounds that ran through.
    idle: Duration,
    /// Interrupted rounds, idle and working.
    idle_cut: Duration,
    work_cut: Duration,
}

impl Spent {
    fn add(&mut self, round: Duration, idle: bool) {
        match (round > ROUND_INTERRUPTED, idle) {
            (false, true) => self.idle += round,
            (false, false) => {}
            (true, true) => self.idle_cut += round,
            (true, false) => self.work_cut += round,
        }
    }

    /// The idle rounds' time on a CPU; `cpu_and_wall` gives the wait's CPU time and wall
    /// time, asked only when a round was interrupted.
    fn idle_on_cpu(self, cpu_and_wall: impl FnOnce() -> (Duration, Duration)) -> Duration {
        let cut = self.idle_cut + self.work_cut;
        if cut.is_zero() {
            return self.idle;
        }
        let (cpu, wall) = cpu_and_wall();
        // Rounds that ran through were on the CPU throughout; what the CPU clock counted
        // beyond them, the interrupted rounds got.
        let cpu_in_cut = cpu.saturating_sub(wall.saturating_sub(cut)).min(cut);
        self.idle + cpu_in_cut.mul_f64(self.idle_cut.as_secs_f64() / cut.as_secs_f64())
    }
}

#[cfg(test)]
/// Kolmogorov-Smirnov statistic of `samples` against the exponential with `rate`.
pub(crate) fn ks_exponential(samples: &[f64], rate: f64) -> f64 {
    let mut sorted: Vec<f64> = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in sorted.iter().enumerate() {
        let cdf = 1.0 - (-rate * x).exp();
        let below = i as f64 / n;
        let above = (i + 1) as f64 / n;
        d = d.max((cdf - below).abs()).max((above - cdf).abs());
    }
    d
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn gaps(mut s: Schedule, n: usize) -> Vec<f64> {
        let mut prev = s.advance();
        (0..n)
            .map(|_| {
                let next = s.advance();
                let gap = (next - prev).as_nanos() as f64;
                prev = next;
                gap
            })
            .collect()
    }

    #[test]
    fn idle_spinning_counts_only_the_cpu_an_interrupted_round_got() {
        let us = Duration::from_micros;
        let mut spent = Spent::default();
        // 900 µs of idle rounds and 100 µs of work that ran through.
        for _ in 0..180 {
            spent.add(us(5), true);
        }
        for _ in 0..20 {
            spent.add(us(5), false);
        }
        assert_eq!(spent.idle_on_cpu(|| unreachable!()), us(900));
        // Then an idle round of 3 ms, of which another task held the core 2.9 ms: the
        // wait's CPU clock ran 1.1 ms over its 4 ms, so that round was 100 µs on the CPU.
        spent.add(us(3_000), true);
        assert_eq!(spent.idle_on_cpu(|| (us(1_100), us(4_000))), us(1_000));
        // A clock that says more than the wall time is held to the round.
        assert_eq!(spent.idle_on_cpu(|| (us(9_000), us(4_000))), us(3_900));
    }

    #[test]
    fn constant_gaps_are_exactly_one_over_rate() {
        let g = gaps(
            Schedule::new(ArrivalProcess::Constant, 10_000.0, 0, 1, 1),
            10_000,
        );
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        assert!((mean - 100_000.0).abs() < 1.0, "mean {mean}");
        assert!(g.iter().all(|&x| (x - 100_000.0).abs() <= 1.0));
    }

    #[test]
    fn constant_shares_interleave_into_the_whole_sequence() {
        let mut a = Schedule::new(ArrivalProcess::Constant, 1000.0, 0, 2, 1);
        let mut b = Schedule::new(ArrivalProcess::Constant, 1000.0, 1, 2, 1);
        let mut all: Vec<Duration> = (0..5).flat_map(|_| [a.advance(), b.advance()]).collect();
        all.sort();
        let expected: Vec<Duration> = (0..10).map(Duration::from_millis).collect();
        assert_eq!(all, expected);
    }

    #[test]
    fn poisson_gaps_have_mean_one_over_rate_and_exponential_shape() {
        let n = 200_000;
        let g = gaps(
            Schedule::new(ArrivalProcess::Poisson, 50_000.0, 0, 1, 42),
            n,
        );
        let mean = g.iter().sum::<f64>() / n as f64;
        // Standard error of the mean of an exponential is mean/sqrt(n) = 0.22%: 1% is 4.5 sigma.
        assert!((mean / 20_000.0 - 1.0).abs() < 0.01, "mean {mean}");
        // Kolmogorov-Smirnov against Exp(rate): critical D at alpha 0.001 is 1.95/sqrt(n).
        let d = ks_exponential(&g, 1.0 / 20_000.0);
        assert!(d < 1.95 / (n as f64).sqrt(), "KS D {d}");
    }

    #[test]
    fn poisson_is_reproducible_from_the_seed() {
        let a = gaps(Schedule::new(ArrivalProcess::Poisson, 1000.0, 0, 1, 7), 100);
        let b = gaps(Schedule::new(ArrivalProcess::Poisson, 1000.0, 0, 1, 7), 100);
        let c = gaps(Schedule::new(ArrivalProcess::Poisson, 1000.0, 0, 1, 8), 100);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
