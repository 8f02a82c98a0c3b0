//! The sweep's search, as pure functions: the order the coarse steps are visited in, and
//! the bisection between the capacity and the next rate that did not pass. The verdicts it
//! searches on are `judge::slo`'s and the capacity `judge::capacity`'s.

use rand::RngCore;
use rand::SeedableRng;

use crate::config::sweep::Order;
use crate::judge::capacity::{Point, capacity};
use crate::report::sweep::Verdict;

/// Added to the run's seed for the order of the steps, so it is a stream of its own.
const ORDER_STREAM: u64 = 0x5eed_0f5e_e90d_e500;

/// The coarse steps' visits in order, as `(index into the rates, repeat)`: ascending,
/// each rate's repeats one after another; or every pair in a random permutation drawn
/// from `seed`, so a rate's repeats fall at different times and a drift of the host
/// spreads over every rate instead of lining up with load.
pub fn visit_order(rates: usize, repeat: usize, order: Order, seed: u64) -> Vec<(usize, usize)> {
    let mut visits: Vec<(usize, usize)> = (0..rates)
        .flat_map(|i| (0..repeat).map(move |r| (i, r)))
        .collect();
    if order == Order::Shuffle {
        // Fisher-Yates on the generator's raw output, so the permutation of a seed does
        // not change with the `rand` crate's sampling code.
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed.wrapping_add(ORDER_STREAM));
        for i in (1..visits.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            visits.swap(i, j);
        }
        // Each rate's repeats numbered in the order they now run.
        let mut seen = vec![0; rates];
        for v in &mut visits {
            v.1 = seen[v.0];
            seen[v.0] += 1;
        }
    }
    visits
}

/// Where a bisection to `resolution` can narrow the band: from the capacity up to the
/// lowest rate above it measured (failing or uncertain); `None` without a capacity or a
/// rate above it.
pub fn search_bracket(points: &[Point], resolution: f64) -> Option<Bisection> {
    let found = capacity(points)?;
    let pass = found.capacity?;
    let above = points
        .iter()
        .filter(|p| p.rate > pass)
        .map(|p| p.rate)
        .reduce(f64::min)?;
    Some(Bisection {
        pass,
        fail: above,
        resolution,
    })
}

/// Bisection between a passing rate and a rate above it that did not pass, to a
/// resolution relative to the rate. It narrows on confident verdicts: a pass raises
/// `pass`; a fail or an uncertain verdict lowers `fail` (the search then looks for the
/// highest rate that passes under it, and the band says what was uncertain).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bisection {
    /// Highest rate known to pass.
    pub pass: f64,
    /// Lowest rate above it not known to pass.
    pub fail: f64,
    /// Stop when `fail - pass <= resolution * pass`.
    pub resolution: f64,
}

impl Bisection {
    /// The next rate to try (a whole number of requests per second), or `None` when done.
    pub fn next(&self) -> Option<f64> {
        if self.fail - self.pass <= self.resolution * self.pass {
            return None;
        }
        let mid = ((self.pass + self.fail) / 2.0).round();
        // Rounding may land on a bound when they are a request per second apart.
        (mid > self.pass && mid < self.fail).then_some(mid)
    }

    /// Records whether `rate` met the objectives.
    pub fn record(&mut self, rate: f64, met: bool) {
        if met {
            self.pass = self.pass.max(rate);
        } else {
            self.fail = self.fail.min(rate);
        }
    }

    /// Records the verdict at `rate`: only a pass counts as meeting.
    pub fn record_verdict(&mut self, rate: f64, verdict: Verdict) {
        self.record(rate, verdict == Verdict::Pass);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::judge::fixtures::*;
    use Verdict::{Fail, Pass, Uncertain};

    #[test]
    fn the_bisection_narrows_from_the_capacity_to_the_next_rate_that_did_not_pass() {
        let points = [
            point(1000.0, Pass),
            point(2000.0, Pass),
            point(3000.0, Uncertain),
            point(4000.0, Fail),
        ];
        let b = search_bracket(&points, 0.02).unwrap();
        assert_eq!((b.pass, b.fail), (2000.0, 3000.0));
        assert_eq!(
            search_bracket(&[point(1.0, Uncertain), point(2.0, Fail)], 0.02),
            None
        );
        assert_eq!(search_bracket(&[point(1.0, Pass)], 0.02), None);
        let mut b = b;
        b.record_verdict(2500.0, Uncertain);
        assert_eq!(b.fail, 2500.0);
        b.record_verdict(2250.0, Pass);
        assert_eq!(b.pass, 2250.0);
    }

    #[test]
    fn ascending_visits_each_rate_in_turn_and_shuffle_is_a_seeded_permutation() {
        assert_eq!(
            visit_order(3, 2, Order::Ascending, 7),
            vec![(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
        );
        let a = visit_order(10, 3, Order::Shuffle, 7);
        assert_eq!(a, visit_order(10, 3, Order::Shuffle, 7), "not repeatable");
        assert_ne!(
            a,
            visit_order(10, 3, Order::Shuffle, 8),
            "the seed is not used"
        );
        assert_ne!(a, visit_order(10, 3, Order::Ascending, 7));
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            visit_order(10, 3, Order::Ascending, 7),
            "not a permutation"
        );
        // Each rate's repeats are numbered in the order they run.
        for rate in 0..10 {
            let repeats: Vec<usize> = a.iter().filter(|v| v.0 == rate).map(|v| v.1).collect();
            assert_eq!(repeats, vec![0, 1, 2]);
        }
        // Every rate comes first about as often over seeds: no position is favoured.
        let mut first = [0usize; 4];
        for seed in 0..4000 {
            first[visit_order(4, 1, Order::Shuffle, seed)[0].0] += 1;
        }
        assert!(first.iter().all(|n| (850..1150).contains(n)), "{first:?}");
    }

    #[test]
    fn bisection_finds_the_boundary_to_the_resolution() {
        for boundary in [1234.0, 50_000.0, 77_777.0, 149_999.0] {
            let met = |rate: f64| rate <= boundary;
            let mut b = Bisection {
                pass: 1000.0,
                fail: 150_000.0,
                resolution: 0.02,
            };
            let mut tries = 0;
            while let Some(rate) = b.next() {
                b.record(rate, met(rate));
                tries += 1;
                assert!(tries < 40);
            }
            assert!(b.pass <= boundary && boundary < b.fail, "{boundary}: {b:?}");
            assert!(b.fail - b.pass <= 0.02 * b.pass, "{boundary}: {b:?}");
            // Each try halves the interval; it starts 149k wide and ends under 2% of 1000.
            let bound = ((150_000.0 - 1000.0) / (0.02 * 1000.0f64)).log2().ceil() as usize;
            assert!(tries <= bound, "{tries} tries, bound {bound}");
        }
    }

    #[test]
    fn bisection_stops_when_the_bounds_are_adjacent() {
        let mut b = Bisection {
            pass: 10.0,
            fail: 11.0,
            resolution: 1e-6,
        };
        assert_eq!(b.next(), None);
        b = Bisection {
            pass: 10.0,
            fail: 12.0,
            resolution: 1e-6,
        };
        assert_eq!(b.next(), Some(11.0));
    }
}
