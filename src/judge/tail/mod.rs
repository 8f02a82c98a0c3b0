//! The tail's attribution (DESIGN §8): the replies over a bound, an objective's or the
//! reported p99, each given to what made it slow, with shares. The bottleneck verdict
//! names the cause that carries the most (`super::bottleneck`), a sweep's step the
//! cause most of its runs named, and `compare`'s host note each side's host share.
//!
//! A reply's response time is at least its on-time response (`received - handled`, its
//! queue wait and service time), which is at least its service time. So in each 50 ms
//! batch, counted from the three histograms (never per request): the replies over the
//! bound whose on-time response is not over it, the generator's lateness put over; of
//! the others, those whose service time is not, the queue wait did; the rest, the
//! service time. Each part is then given a cause:
//!
//! - the lateness: the generator's, or the host's when the generator's threads waited
//!   for a CPU through it (half its length at least, in waits longer than an idle
//!   core's wake-up);
//! - the server's side (queue wait and service), each reply over the stretch from its
//!   handling to its reply. The queue wait's share, while the batch's service time was
//!   fast (its p99 under half the bound), is the client's queue, however long: the
//!   connections were too few for the rate. The rest: a long stretch ([`STALL_MIN_NS`],
//!   and ten times the floor) is a server stall when the server itself says so: it was
//!   off its CPU and not runnable through a batch of it, or its slow log or latency
//!   monitor holds an event that long there. Otherwise the host's, when the server or
//!   the generator waited for a CPU for half the stretch in waits longer than an idle
//!   core's wake-up (the generator's when another task's: see `placed`), the
//!   hypervisor stole as much, or an idle thread woke that late (every thread of the
//!   machine stalled). Otherwise a long stretch is a stall too when
//!   the server did not work through it (under [`BUSY_SHARE`] of it on a CPU: it ran and
//!   answered nothing, as with paused clients), and its execution and queueing when it
//!   did; a shorter one is its execution and queueing, or the network and kernel where
//!   the server executed fast with most of its core idle ([`NETWORK_CPU`]).
//!
//! Without batches (a merged report, an old one) the run's whole histograms give each
//! part's count (a reply whose parts only added up over the bound is left unattributed),
//! without the host's figures or stalls placed in time. The tail sits at the floor when
//! the response time at the bound's percentile is under [`FLOOR_FACTOR`] times the
//! floor: the service time's p10, or its quietest batch's median when lower (what load
//! cannot raise; the median rises with it).

mod floor;
mod placed;
mod stalls;
mod tally;
#[cfg(test)]
mod tests;
pub mod words;

use hdrhistogram::Histogram;

use super::checks::Objective;
use crate::record::Metric;
use crate::report::TestReport;
use crate::report::host::{HostBatches, HostReport, TailInWaits};
use crate::report::tail::{Cause, TailCauses};
use crate::stats::confidence::Batch;
use crate::stats::over::{count_over, share_over};
use placed::{host_part, span, worked};
use tally::Tally;

pub use floor::{FLOOR_FACTOR, at_floor, carried_by, leading};
/// The service time's quantile the floor is read at: low enough that a loaded host's
/// slow replies (a tenth or more of them waiting for a CPU) do not raise it.
pub const FLOOR_QUANTILE: f64 = 0.1;
/// The fewest replies a 50 ms batch needs for its median to stand for the floor.
pub const FLOOR_BATCH_REPLIES: u64 = 20;
/// The shortest stretch a stall is named for, ns: longer than the host's scheduler
/// slices (a few ms), shorter than a 50 ms batch.
pub const STALL_MIN_NS: u64 = 20_000_000;
/// A stall is also at least this many times the floor (a remote server's round trip is
/// no stall).
pub const STALL_FLOOR_FACTOR: u64 = 10;
/// The share of a long stretch the server must have spent on a CPU for the replies
/// held through it to be its work (execution and queueing), not a stall.
pub const BUSY_SHARE: f64 = 0.5;
/// The most of one core a server may use, executing fast, for the service time's tail to
/// be the network's and the kernel's rather than its queueing.
pub const NETWORK_CPU: f64 = 0.2;
/// One of `/proc/stat`'s steal ticks, µs.
const STEAL_TICK_US: u64 = 10_000;
/// The share of a run's time the hypervisor must have stolen (summed over the CPUs, as
/// `/proc/stat` counts it) for a tail the server's fast execution on an idle core cannot
/// explain to be the host's: a quiet machine here loses 0-10 ms of a 2 s run (0.5%), one
/// whose neighbours took the CPUs lost 290-1450 ms (15-70%). The kernel counts steal in
/// lumps when a tickless CPU next ticks (120 ms in one 50 ms batch, then none for ten),
/// so it cannot be placed in time as a CPU wait is: the run's share stands for it.
pub const STOLEN_SHARE: f64 = 0.05;

/// The bound a test's tail is counted over.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// ns.
    pub over_ns: u64,
    /// `p99<=1ms` (an objective) or `p99`.
    pub label: String,
    /// The bound's percentile, as a quantile: the tail's level is the response time there.
    pub quantile: f64,
}

/// The bound of `response`'s tail: of `objectives`, the one whose share over its bound
/// is the largest against what it allows (the one nearest to failing, or failed most);
/// without one, the response p99. `None` for an empty histogram.
pub fn bound(response: &Histogram<u64>, objectives: &[Objective<'_>]) -> Option<Bound> {
    if response.is_empty() {
        return None;
    }
    let worst = objectives
        .iter()
        .filter_map(|o| {
            let share = share_over(response, o.bound_ns)?;
            Some((share / (1.0 - o.quantile).max(1e-9), o))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    Some(match worst {
        Some((_, o)) => Bound {
            over_ns: o.bound_ns,
            label: o.text.to_string(),
            quantile: o.quantile,
        },
        None => Bound {
            over_ns: response.value_at_quantile(0.99),
            label: "p99".into(),
            quantile: 0.99,
        },
    })
}

/// A test's batches, 50 ms each from its measured window's start (an empty slice for a
/// time the run does not record: a closed loop's lag and on-time response; its service
/// time is its response time).
#[derive(Debug, Clone, Copy)]
pub struct Batches<'a> {
    /// Response time.
    pub response: &'a [Batch],
    /// `received - handled`: the response time had the generator handled each request on
    /// time (queue wait and service time).
    pub on_time: &'a [Batch],
    /// Service time.
    pub service: &'a [Batch],
    /// Schedule lag.
    pub lag: &'a [Batch],
}

/// The replies of `test` over `bound` attributed to their causes, placed with `batches`
/// and the test's host figures where given; with the host's part by batch (for the
/// host's section and the plots). `None` without a response time.
pub fn attribute(
    test: &TestReport,
    bound: &Bound,
    batches: Option<&Batches<'_>>,
) -> Option<(TailCauses, Option<TailInWaits>)> {
    let response = test.response()?.histogram()?;
    let floor_ns = floor(test, batches);
    let ctx = Context::of(test, bound, floor_ns);
    let tally = match batches.filter(|b| !b.response.is_empty()) {
        Some(b) => ctx.localised(b, test.host.as_ref()),
        None => ctx.whole(test),
    };
    let replies = match tally.replies {
        0 => count_over(&response, bound.over_ns),
        placed => placed,
    };
    let causes = tally.causes(replies);
    let stalls = stalls::stalls(
        &tally.stalls,
        test.host.as_ref().map(|h| &h.batches),
        test.server.as_ref().and_then(|s| s.events.as_ref()),
    );
    let mut host_parts: Vec<(String, u64)> = tally
        .host_parts
        .iter()
        .map(|(p, n)| (p.to_string(), n.round() as u64))
        .filter(|(_, n)| *n > 0)
        .collect();
    host_parts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let in_waits = batches
        .filter(|_| test.host.is_some())
        .map(|b| tally.in_waits(bound.over_ns, b.response, replies));
    Some((
        TailCauses {
            over_ns: bound.over_ns,
            bound: bound.label.clone(),
            replies,
            level_ns: response.value_at_quantile(bound.quantile),
            floor_ns,
            causes,
            stalls,
            host_parts,
            localised: batches.is_some_and(|b| !b.response.is_empty()),
        },
        in_waits,
    ))
}

/// The floor, ns: what a reply takes when nothing slows it, measured on what load
/// cannot raise. The median service time rises with the load on a busy host (4-7 ms at
/// 50k/s beside a p99 of 30-43 ms), so the floor is the lower of the service time's
/// [`FLOOR_QUANTILE`] over the run and the median of its quietest 50 ms batch (of those
/// with [`FLOOR_BATCH_REPLIES`] replies or more): a run with a quiet stretch keeps its
/// floor. The response time's stand in where no service time was recorded.
fn floor(test: &TestReport, batches: Option<&Batches<'_>>) -> u64 {
    let latency = test
        .latency
        .get(&Metric::Service)
        .filter(|l| l.count > 0)
        .or(test.response());
    let low = latency.map(|l| {
        l.histogram()
            .map_or(l.p50_ns, |h| h.value_at_quantile(FLOOR_QUANTILE))
    });
    let quietest = batches.and_then(|b| {
        let series = if b.service.is_empty() {
            b.response
        } else {
            b.service
        };
        series
            .iter()
            .filter(|x| x.len() >= FLOOR_BATCH_REPLIES)
            .filter_map(|x| x.quantile(0.5))
            .filter(|&m| m > 0)
            .min()
    });
    match (low.filter(|&v| v > 0), quietest) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b).unwrap_or(0),
    }
}

/// What the attribution reads of a test, once.
struct Context {
    over_ns: u64,
    /// The shortest stretch called a stall, ns.
    stall_ns: u64,
    /// The server executed fast with most of its core idle: the service time's tail is
    /// the network's and the kernel's.
    network: bool,
    /// The hypervisor took [`STOLEN_SHARE`] of the run: what the network and the kernel
    /// would carry is the host's.
    stolen: bool,
    /// The server's median times on a CPU in a batch.
    typical_runs: Option<u64>,
    /// The server's own record of its stalls: `(from, to, length)`, seconds in the window
    /// (it stamps whole seconds: each began in the second after `from`).
    events: Vec<(f64, f64, f64)>,
}

impl Context {
    fn of(test: &TestReport, bound: &Bound, floor_ns: u64) -> Self {
        let network = test.server.as_ref().is_some_and(|s| {
            let exec_p99_us = s
                .commands
                .iter()
                .filter_map(|c| Some(c.exec_usec_at_most?.p99))
                .max();
            s.cpu_utilisation.is_some_and(|c| c < NETWORK_CPU)
                && exec_p99_us.is_some_and(|e| e * 1_000 * 10 <= bound.over_ns)
        });
        let stolen = test
            .host
            .as_ref()
            .and_then(|h| h.steal_ms)
            .is_some_and(|ms| {
                let run_ms = test.measured_secs * 1e3;
                run_ms > 0.0
                    && ms >= 2.0 * STEAL_TICK_US as f64 / 1e3
                    && ms >= STOLEN_SHARE * run_ms
            });
        let typical_runs = test.host.as_ref().and_then(|h| {
            let mut runs = h.batches.server_runs.clone();
            runs.sort_unstable();
            runs.get(runs.len() / 2).copied()
        });
        let events = test
            .server
            .as_ref()
            .and_then(|s| s.events.as_ref())
            .map_or_else(Vec::new, |e| {
                e.events
                    .iter()
                    .map(|e| {
                        (
                            e.at_secs,
                            e.at_secs + 1.0 + e.length_ms / 1e3,
                            e.length_ms / 1e3,
                        )
                    })
                    .collect()
            });
        Context {
            over_ns: bound.over_ns,
            stall_ns: STALL_MIN_NS.max(STALL_FLOOR_FACTOR.saturating_mul(floor_ns)),
            network,
            stolen,
            typical_runs,
            events,
        }
    }

    /// Whether the server itself says it stalled through the stretch of a reply of
    /// `value_ns` received in batch `i`: it was off its CPU and not runnable through a
    /// batch of it (under [`stalls::OFF_CPU_RUNS`] of its usual runs, and waiting for a
    /// CPU under a tenth of the batch), or its own record (the slow log, the latency
    /// monitor) holds an event that long there. Such a stall is the server's even where
    /// the host also made a thread wait.
    fn server_says_stalled(&self, h: Option<&HostBatches>, i: usize, value_ns: u64) -> bool {
        let batch_s = crate::drive::BATCH.as_secs_f64();
        let (to, from) = (
            (i as f64 + 1.0) * batch_s,
            i as f64 * batch_s - value_ns as f64 / 1e9,
        );
        let recorded = self.events.iter().any(|&(at, until, length)| {
            at <= to && until >= from && length >= 0.5 * value_ns as f64 / 1e9
        });
        let off = h.zip(self.typical_runs).is_some_and(|(h, typical)| {
            let range = span(i, value_ns);
            // The batch the replies came in is the server's catching up: not in it.
            let before = range.start..range.end.saturating_sub(1).max(range.start);
            before.clone().any(|k| {
                let runs = h.server_runs.get(k).copied().unwrap_or(u64::MAX);
                let wait = h.server_wait_us.get(k).copied().unwrap_or(0);
                runs as f64 <= (stalls::OFF_CPU_RUNS * typical as f64).max(1.0)
                    && (wait as f64) < 0.1 * h.batch_ms * 1e3
            })
        });
        recorded || off
    }

    /// Each batch's replies over the bound, by part and cause. Every request's response
    /// time is at least its on-time response (`received - handled`), which is at least
    /// its service time; so of a batch's replies over the bound, those whose on-time
    /// response is not over it the lateness put over (the generator's part), those whose
    /// service time is not the queue wait did, and the rest the service time: counted
    /// exactly from the three histograms, the parts add up to the replies.
    fn localised(&self, b: &Batches<'_>, host: Option<&HostReport>) -> Tally {
        let hb = host.map(|h| &h.batches);
        let mut tally = Tally::default();
        let over = |m: &[Batch], i: usize| m.get(i).map(|x| x.len() - x.at_most(self.over_ns));
        for (i, response) in b.response.iter().enumerate() {
            let slow = response.len() - response.at_most(self.over_ns);
            if slow == 0 {
                continue;
            }
            tally.replies += slow;
            let on_time = over(b.on_time, i).unwrap_or(slow).min(slow);
            let service = over(b.service, i).unwrap_or(on_time).min(on_time);
            if slow > on_time {
                // The generator's part: the stretch is its longest lateness in the batch.
                let lateness = b
                    .lag
                    .get(i)
                    .and_then(|l| l.quantile(1.0))
                    .unwrap_or(self.over_ns);
                let part = hb.and_then(|h| host_part(h, i, lateness, false, self.stall_ns));
                tally.place(i, part, Cause::Generator, (slow - on_time) as f64);
            }
            if on_time == 0 {
                continue;
            }
            // The server's side, each reply by its on-time response: the stretch from its
            // handling to its reply.
            let stretches: Vec<(u64, u64)> = match b.on_time.get(i) {
                Some(t) => t.over(self.over_ns).collect(),
                None => response.over(self.over_ns).collect(),
            };
            let queued = (on_time - service) as f64 / on_time as f64;
            let service_fast = b
                .service
                .get(i)
                .and_then(|s| s.quantile(0.99))
                .is_some_and(|p| p < self.over_ns / 2);
            let scale =
                on_time as f64 / stretches.iter().map(|&(_, n)| n).sum::<u64>().max(1) as f64;
            for (v, n) in stretches {
                let n = n as f64 * scale;
                // Waiting for a connection while the server answered fast is the client's
                // queue, however long the wait.
                let (queue, n) = if service_fast {
                    (n * queued, n * (1.0 - queued))
                } else {
                    (0.0, n)
                };
                tally.add(Cause::ClientQueue, queue);
                if n <= 0.0 {
                    continue;
                }
                let long = v >= self.stall_ns;
                let part = hb.and_then(|h| host_part(h, i, v, true, self.stall_ns));
                if long && self.server_says_stalled(hb, i, v) {
                    tally.stalled(i, v, n);
                } else if part.is_some() {
                    tally.place(i, part, Cause::Host, n);
                } else if long && !hb.is_some_and(|h| worked(h, i, v)) {
                    tally.stalled(i, v, n);
                } else if self.network && hb.is_some_and(|h| placed::contended(h, i, v)) {
                    // "Neither end busy" does not hold where the server waited for its
                    // core: another task held the core it answers from.
                    tally.place(i, Some("server"), Cause::Host, n);
                } else if self.network && self.stolen {
                    // Nor where the hypervisor took the CPUs both ends run on.
                    tally.place(i, Some("steal"), Cause::Host, n);
                } else {
                    tally.add(self.server_side(), n);
                }
            }
        }
        tally
    }

    /// The run's whole histograms: each part's replies over the bound, none placed in
    /// time, the host unknown.
    fn whole(&self, test: &TestReport) -> Tally {
        let mut tally = Tally::default();
        let hist = |m: Metric| test.latency.get(&m).and_then(|l| l.histogram());
        let Some(response) = hist(Metric::Response) else {
            return tally;
        };
        let slow = count_over(&response, self.over_ns);
        let over = |h: Option<Histogram<u64>>| -> Vec<(u64, u64)> {
            h.map_or_else(Vec::new, |h| {
                h.iter_recorded()
                    .filter(|v| v.value_iterated_to() > self.over_ns)
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect()
            })
        };
        let (lag, service, queue) = (
            over(hist(Metric::Lag)),
            over(hist(Metric::Service)),
            over(hist(Metric::QueueWait)),
        );
        let named: u64 = [&lag, &service, &queue]
            .iter()
            .flat_map(|v| v.iter().map(|&(_, n)| n))
            .sum();
        let scale = if named > slow {
            slow as f64 / named as f64
        } else {
            1.0
        };
        tally.add(Cause::Unattributed, slow.saturating_sub(named) as f64);
        let sum = |v: &[(u64, u64)], f: &dyn Fn(u64) -> bool| -> f64 {
            v.iter()
                .filter(|&&(at, _)| f(at))
                .map(|&(_, n)| n as f64)
                .sum::<f64>()
                * scale
        };
        let service_fast = test
            .latency
            .get(&Metric::Service)
            .is_some_and(|l| l.p99_ns < self.over_ns / 2);
        tally.add(Cause::Generator, sum(&lag, &|_| true));
        tally.add(Cause::ServerStall, sum(&service, &|v| v >= self.stall_ns));
        tally.add(self.server_side(), sum(&service, &|v| v < self.stall_ns));
        tally.add(Cause::ServerStall, sum(&queue, &|v| v >= self.stall_ns));
        tally.add(
            if service_fast {
                Cause::ClientQueue
            } else {
                self.server_side()
            },
            sum(&queue, &|v| v < self.stall_ns),
        );
        tally
    }

    /// The server's execution and queueing, or the network and kernel.
    fn server_side(&self) -> Cause {
        if self.network {
            Cause::NetworkKernel
        } else {
            Cause::Server
        }
    }
}
