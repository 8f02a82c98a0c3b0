//! Landmarks of a sweep's tail against the offered rate, from the runs at each rate: the
//! floor (the pooled percentile at the lowest rate, with a run-bootstrap interval), the
//! knee (the lowest rate whose pooled percentile's interval lies wholly above the floor's),
//! and the server's open-loop maximum (where its replies per second stop rising with the
//! offered rate). The capacity itself is [`super::capacity`]'s; saturation as the runs see
//! it (replies no longer following the schedule) is the judge's.
//!
//! The intervals are the run bootstrap's ([`super::bootstrap`]), 95% two-sided: an interval
//! from the exceedance test at a pass's level, on four runs, is too wide to place a knee
//! (on a sweep of Dec 6 it put the knee at 191k/s where the pooled p99 had doubled by 47k).

use super::bootstrap::{self, RESAMPLES, Resampler};
use super::confidence::Batch;
use super::median::median_f64;

/// Two-sided level of a landmark's interval.
pub const TAIL_LEVEL: f64 = 0.95;

/// A pooled percentile over runs, with its run-bootstrap interval, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tail {
    /// The percentile of every run's replies together (to a coarse bucket's resolution).
    pub value_ns: u64,
    /// The interval's low end.
    pub low_ns: u64,
    /// The interval's high end.
    pub high_ns: u64,
    /// Runs pooled.
    pub runs: usize,
}

/// The runs at one rate, each as its response windows.
#[derive(Debug, Clone, PartialEq)]
pub struct RateTail<'a> {
    /// Offered rate, requests per second.
    pub rate_per_sec: f64,
    /// Each run's windows (coarse batches).
    pub runs: Vec<&'a [Batch]>,
}

/// The floor and the knee of a sweep's tail, with the tail at every rate they rest on.
#[derive(Debug, Clone, PartialEq)]
pub struct FloorAndKnee {
    /// The lowest rate with a reply, and its tail.
    pub floor: Option<(f64, Tail)>,
    /// The lowest rate above the floor whose tail's interval lies wholly above the
    /// floor's; `None` when none does.
    pub knee_per_sec: Option<f64>,
    /// Each rate's tail, by rate.
    pub tails: Vec<(f64, Tail)>,
}

/// The floor and knee of the `quantile` over `rates` (any order), the intervals from
/// resamples drawn from `seed`. A rate of one run borrows the spread of single runs from
/// the rates with more (its interval is its value when none has).
pub fn floor_and_knee(rates: &[RateTail<'_>], quantile: f64, seed: u64) -> FloorAndKnee {
    let mut prepared: Vec<(f64, Pooled)> = rates
        .iter()
        .filter(|r| r.rate_per_sec.is_finite())
        .filter_map(|r| Some((r.rate_per_sec, Pooled::of(&r.runs)?)))
        .collect();
    prepared.sort_by(|a, b| a.0.total_cmp(&b.0));
    let run_logs: Vec<Vec<f64>> = prepared
        .iter()
        .map(|(_, p)| {
            (0..p.totals.len())
                .map(|j| log(p.quantile(&[j], quantile)))
                .collect()
        })
        .collect();
    let borrowed = bootstrap::pooled_log_spread(run_logs.iter().map(Vec::as_slice));
    let mut resampler = Resampler::new(seed);
    let tails: Vec<(f64, Tail)> = prepared
        .iter()
        .filter_map(|(rate, p)| Some((*rate, p.tail(quantile, borrowed, &mut resampler)?)))
        .collect();
    let floor = tails.first().copied();
    let knee_per_sec = floor.and_then(|(_, f)| {
        tails
            .iter()
            .skip(1)
            .find(|(_, t)| t.low_ns > f.high_ns)
            .map(|&(rate, _)| rate)
    });
    FloorAndKnee {
        floor,
        knee_per_sec,
        tails,
    }
}

/// The `quantile` over `runs` (each its windows) with its run-bootstrap interval, from
/// resamples drawn from `seed`; `None` without a reply. A single run has no interval of
/// its own: its ends are its value.
pub fn pooled_tail(runs: &[&[Batch]], quantile: f64, seed: u64) -> Option<Tail> {
    Pooled::of(runs)?.tail(quantile, None, &mut Resampler::new(seed))
}

/// The runs of one rate, ready to be resampled: each run's count at or under every value
/// any of them holds.
struct Pooled {
    /// Every bucket value a run holds, increasing.
    values: Vec<u64>,
    /// Per run, its replies at or under each of `values`.
    at_most: Vec<Vec<u64>>,
    /// Per run, its replies.
    totals: Vec<u64>,
}

impl Pooled {
    /// `None` when no run holds a reply; runs without replies are left out.
    fn of(runs: &[&[Batch]]) -> Option<Self> {
        let merged: Vec<Batch> = runs
            .iter()
            .map(|windows| {
                let mut run = Batch::default();
                windows.iter().for_each(|w| run.add(w));
                run
            })
            .filter(|run| !run.is_empty())
            .collect();
        let mut values: Vec<u64> = merged.iter().flat_map(Batch::values).collect();
        values.sort_unstable();
        values.dedup();
        if values.is_empty() {
            return None;
        }
        let at_most = merged
            .iter()
            .map(|run| values.iter().map(|&v| run.at_most(v)).collect())
            .collect();
        Some(Pooled {
            totals: merged.iter().map(Batch::len).collect(),
            values,
            at_most,
        })
    }

    /// The `quantile` of the runs at `picked` (indices, repeats counted) together: the
    /// lowest value at or under which its rank falls, as [`Batch::quantile`] reads one.
    fn quantile(&self, picked: &[usize], quantile: f64) -> u64 {
        let total = picked
            .iter()
            .fold(0u64, |a, &j| a.saturating_add(self.totals[j]));
        let rank = ((quantile * total as f64).ceil() as u64).clamp(1, total.max(1));
        let below = |g: usize| {
            picked
                .iter()
                .fold(0u64, |a, &j| a.saturating_add(self.at_most[j][g]))
                < rank
        };
        // The first value whose count reaches the rank, by bisection: counts only rise.
        let (mut first, mut past) = (0, self.values.len());
        while first < past {
            let middle = first + (past - first) / 2;
            if below(middle) {
                first = middle + 1;
            } else {
                past = middle;
            }
        }
        self.values[first.min(self.values.len() - 1)]
    }

    /// The tail with its interval (see [`pooled_tail`]); `borrowed` for a single run.
    fn tail(
        &self,
        quantile: f64,
        borrowed: Option<f64>,
        resampler: &mut Resampler,
    ) -> Option<Tail> {
        let k = self.totals.len();
        let all: Vec<usize> = (0..k).collect();
        let value_ns = self.quantile(&all, quantile);
        let point = log(value_ns);
        let mut scratch = Vec::new();
        let mut draws: Vec<f64> = (0..RESAMPLES)
            .map(|_| {
                resampler.log_value(
                    k,
                    point,
                    borrowed,
                    |picked| log(self.quantile(picked, quantile)),
                    &mut scratch,
                )
            })
            .collect();
        draws.sort_by(f64::total_cmp);
        let tail = (1.0 - TAIL_LEVEL) / 2.0;
        let end = |p: f64| bootstrap::percentile(&draws, p).map(|l| l.exp().round() as u64);
        Some(Tail {
            value_ns,
            low_ns: end(tail)?.min(value_ns),
            high_ns: end(1.0 - tail)?.max(value_ns),
            runs: k,
        })
    }
}

/// The log of a value in ns, a value of 0 taken as 1.
fn log(value_ns: u64) -> f64 {
    (value_ns.max(1) as f64).ln()
}

/// The replies per second of each run at one offered rate.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RateReplies {
    /// Offered rate, requests per second.
    pub offered_per_sec: f64,
    /// Each run's replies per second.
    pub replies_per_sec: Vec<f64>,
}

/// The most replies per second the server gave an open loop: the highest of the rates'
/// median replies per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plateau {
    /// The highest median of replies per second over the offered rates.
    pub replies_per_sec: f64,
    /// The offered rate that got it.
    pub at_offered_per_sec: f64,
    /// Whether it is the server's maximum rather than the highest rate's: a higher
    /// offered rate got no more, or this one got under [`FOLLOWING`] of what it offered.
    pub reached: bool,
}

/// Replies per second under this share of the offered rate no longer follow it.
pub const FOLLOWING: f64 = 0.95;

/// The plateau of `rates` (any order); `None` without a run.
pub fn open_loop_max(rates: &[RateReplies]) -> Option<Plateau> {
    let medians: Vec<(f64, f64)> = rates
        .iter()
        .filter(|r| !r.replies_per_sec.is_empty() && r.offered_per_sec.is_finite())
        .map(|r| (r.offered_per_sec, median_f64(&r.replies_per_sec)))
        .filter(|m| m.1.is_finite())
        .collect();
    let &(at, most) = medians.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(Plateau {
        replies_per_sec: most,
        at_offered_per_sec: at,
        reached: medians.iter().any(|m| m.0 > at) || most < FOLLOWING * at,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A run of four windows whose replies are `calm_us` except `slow` of every 1000 at
    /// `slow_us`.
    fn run(calm_us: u64, slow_per_mille: u64, slow_us: u64) -> Vec<Batch> {
        (0..4)
            .map(|_| {
                let mut h = crate::record::new_histogram();
                h.record_n(calm_us * 1000, 1000 - slow_per_mille).unwrap();
                if slow_per_mille > 0 {
                    h.record_n(slow_us * 1000, slow_per_mille).unwrap();
                }
                Batch::of(&h)
            })
            .collect()
    }

    #[test]
    fn the_pooled_tail_is_the_pooled_percentile_and_its_interval_spans_the_runs() {
        let runs = [run(100, 5, 900), run(100, 20, 1_200), run(100, 12, 1_000)];
        let refs: Vec<&[Batch]> = runs.iter().map(Vec::as_slice).collect();
        let t = pooled_tail(&refs, 0.99, 1).unwrap();
        // 37 of 3000 slow: the p99 among them; the runs alone give 100 us to 1.2 ms.
        let mut all = Batch::default();
        runs.iter().flatten().for_each(|b| all.add(b));
        assert_eq!(t.value_ns, all.quantile(0.99).unwrap());
        assert!(t.low_ns < t.value_ns && t.value_ns <= t.high_ns, "{t:?}");
        // Resamples of the calmest run alone give 100 us, of the slowest 1.2 ms.
        assert!(t.low_ns <= 100_000 && t.high_ns >= 1_150_000, "{t:?}");
        assert_eq!(t.runs, 3);
        // One run: no spread of its own.
        let one = pooled_tail(&refs[..1], 0.99, 1).unwrap();
        assert_eq!((one.low_ns, one.high_ns), (one.value_ns, one.value_ns));
        assert_eq!(pooled_tail(&[], 0.99, 1), None);
        assert_eq!(pooled_tail(&[&[Batch::default()][..]], 0.99, 1), None);
    }

    #[test]
    fn the_knee_is_the_first_rate_whose_interval_clears_the_floors() {
        let quiet: Vec<Vec<Batch>> = (0..4).map(|i| run(100, 5 + i, 300)).collect();
        let rising: Vec<Vec<Batch>> = (0..4).map(|i| run(100, 8 + i, 320)).collect();
        let risen: Vec<Vec<Batch>> = (0..4).map(|i| run(100, 15 + i, 900)).collect();
        fn refs(runs: &[Vec<Batch>]) -> Vec<&[Batch]> {
            runs.iter().map(Vec::as_slice).collect()
        }
        let rates = [
            RateTail {
                rate_per_sec: 30_000.0,
                runs: refs(&risen),
            },
            RateTail {
                rate_per_sec: 1_000.0,
                runs: refs(&quiet),
            },
            RateTail {
                rate_per_sec: 10_000.0,
                runs: refs(&rising),
            },
        ];
        let f = floor_and_knee(&rates, 0.99, 2);
        let (floor_rate, floor) = f.floor.unwrap();
        assert_eq!(floor_rate, 1_000.0);
        assert!((99_000..=101_000).contains(&floor.low_ns), "{floor:?}");
        // 10k's p99 sits in the floor's interval; 30k's interval is wholly above it.
        assert_eq!(f.knee_per_sec, Some(30_000.0), "{:?}", f.tails);
        assert_eq!(f.tails.len(), 3);
        // Nothing rises: no knee.
        let flat = floor_and_knee(&rates[1..], 0.99, 2);
        assert_eq!(flat.knee_per_sec, None, "{:?}", flat.tails);
        assert_eq!(floor_and_knee(&[], 0.99, 2).floor, None);
    }

    #[test]
    fn the_open_loop_maximum_is_the_plateau_of_replies_over_offered_rates() {
        let rate = |offered: f64, replies: &[f64]| RateReplies {
            offered_per_sec: offered,
            replies_per_sec: replies.to_vec(),
        };
        // The Dec 6 sweep: 191k kept up, 251k and 310k got 203-215k.
        let rates = [
            rate(132_044.0, &[132_000.0, 132_100.0]),
            rate(191_464.0, &[191_000.0, 187_600.0, 191_400.0]),
            rate(250_884.0, &[202_000.0, 204_500.0]),
            rate(310_304.0, &[208_000.0, 215_000.0]),
        ];
        let p = open_loop_max(&rates).unwrap();
        assert_eq!(
            (p.replies_per_sec, p.at_offered_per_sec),
            (211_500.0, 310_304.0)
        );
        assert!(p.reached, "310k got under 95% of what it offered");
        // Every rate kept up: the highest rate's, not the server's.
        let p = open_loop_max(&rates[..2]).unwrap();
        assert_eq!((p.at_offered_per_sec, p.reached), (191_464.0, false));
        assert_eq!(open_loop_max(&[]), None);
        assert_eq!(open_loop_max(&[rate(1.0, &[])]), None);
    }
}
