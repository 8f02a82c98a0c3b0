//! The sweep's search, as pure functions: the order the coarse steps are visited in, and
//! the next rate the capacity search decides (to narrow the capacity, then the band's top). The verdicts it
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

/// Added to the run's seed for the seeds of its open-loop runs.
const RUN_STREAM: u64 = 0x5eed_0f0e_a0c4_0000;

/// The seed of a sweep's `index`th run (from 0) under the sweep's `seed`: splitmix64 of
/// the two, so neighbouring runs get unrelated seeds and one seed gives the same sweep.
pub fn run_seed(seed: u64, index: usize) -> u64 {
    let mut z = seed
        .wrapping_add(RUN_STREAM)
        .wrapping_add((index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A round of the search's visits: `runs` at `rate` and one at each of `others` (the
/// rates around the capacity already measured), in an order drawn from `seed`, so that
/// the host's weather during the round falls on every rate in it rather than on one.
pub fn block(rate: f64, runs: usize, others: &[f64], seed: u64) -> Vec<f64> {
    let mut visits: Vec<f64> = std::iter::repeat_n(rate, runs)
        .chain(others.iter().copied().filter(|&o| o != rate))
        .collect();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed.wrapping_add(ORDER_STREAM));
    for i in (1..visits.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        visits.swap(i, j);
    }
    visits
}

/// A rate the capacity search asks about, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Probe {
    /// A rate that narrows the capacity's low end: the uncertain rate above it, or the
    /// geometric middle of it and that rate.
    Bisect(f64),
    /// A rate that narrows the band's high end once the capacity is found to the
    /// resolution: an uncertain rate under the lowest failing one, measured on a step's
    /// few runs only.
    Narrow(f64),
}

/// The next rate the capacity search should decide, or `None` when the band is as
/// narrow as the runs can make it: the lowest rate above the capacity that did not pass,
/// while it is uncertain and not yet `exhausted` (measured to its last look), else the
/// geometric middle of the capacity and that rate (the bisection is on log(rate):
/// capacities span decades) until they are `resolution` (relative) apart; then the
/// uncertain rates above, under the lowest failing one, lowest first, each decided once:
/// a rate far past the capacity fails on few runs and brings the band's top down to it.
pub fn next_probe(points: &[Point], resolution: f64, exhausted: &[f64]) -> Option<Probe> {
    let found = capacity(points)?;
    let pass = found.capacity?;
    let above = points
        .iter()
        .filter(|p| p.rate > pass && p.verdict != Verdict::Pass)
        .min_by(|a, b| a.rate.total_cmp(&b.rate))?;
    if above.verdict == Verdict::Uncertain && !exhausted.contains(&above.rate) {
        return Some(Probe::Bisect(above.rate));
    }
    if above.rate > pass * (1.0 + resolution) {
        let middle = (pass * above.rate).sqrt().round();
        // Rounding may land on a bound when they are a request per second apart.
        if middle > pass && middle < above.rate {
            return Some(Probe::Bisect(middle));
        }
    }
    let top = found.band.1.unwrap_or(f64::INFINITY);
    points
        .iter()
        .filter(|p| p.rate > pass && p.rate < top && p.verdict == Verdict::Uncertain)
        .filter(|p| !exhausted.contains(&p.rate))
        .min_by(|a, b| a.rate.total_cmp(&b.rate))
        .map(|p| Probe::Narrow(p.rate))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::judge::fixtures::*;
    use Verdict::{Fail, Pass, Uncertain};

    #[test]
    fn the_search_decides_the_rate_above_the_capacity_then_bisects_on_log_rate() {
        let points = [
            point(1000.0, Pass),
            point(2000.0, Pass),
            point(8000.0, Uncertain),
            point(16000.0, Fail),
        ];
        // The uncertain rate above the capacity is decided first...
        assert_eq!(next_probe(&points, 0.1, &[]), Some(Probe::Bisect(8000.0)));
        // ...and once measured to its last look, the middle on log(rate).
        assert_eq!(
            next_probe(&points, 0.1, &[8000.0]),
            Some(Probe::Bisect(4000.0))
        );
        assert_eq!(
            next_probe(&[point(1.0, Uncertain), point(2.0, Fail)], 0.1, &[]),
            None
        );
        assert_eq!(next_probe(&[point(1.0, Pass)], 0.1, &[]), None);
        // Within the resolution: done.
        assert_eq!(
            next_probe(&[point(1000.0, Pass), point(1090.0, Fail)], 0.1, &[]),
            None
        );
    }

    #[test]
    fn once_the_capacity_is_found_the_uncertain_rates_under_the_band_top_are_decided() {
        let points = [
            point(1000.0, Pass),
            point(1050.0, Uncertain),
            point(2000.0, Uncertain),
            point(3000.0, Uncertain),
            point(4000.0, Fail),
            point(5000.0, Uncertain),
        ];
        // The capacity to the resolution, 1050 measured out: the band's top next,
        // lowest first, never above the failing rate.
        let narrow = |exhausted: &[f64]| next_probe(&points, 0.1, exhausted);
        assert_eq!(narrow(&[1050.0]), Some(Probe::Narrow(2000.0)));
        assert_eq!(narrow(&[1050.0, 2000.0]), Some(Probe::Narrow(3000.0)));
        assert_eq!(narrow(&[1050.0, 2000.0, 3000.0]), None);
        // With nothing failing above, every uncertain rate is a candidate.
        assert_eq!(
            next_probe(
                &[
                    point(1.0, Pass),
                    point(1.05, Uncertain),
                    point(9.0, Uncertain)
                ],
                0.1,
                &[1.05]
            ),
            Some(Probe::Narrow(9.0))
        );
    }

    #[test]
    fn bisection_on_log_rate_finds_the_boundary_to_the_resolution() {
        for boundary in [1234.0, 50_000.0, 77_777.0, 149_999.0] {
            let mut points = vec![point(1000.0, Pass), point(150_000.0, Fail)];
            let mut tries = 0;
            while let Some(Probe::Bisect(rate)) = next_probe(&points, 0.02, &[]) {
                points.push(point(rate, if rate <= boundary { Pass } else { Fail }));
                tries += 1;
                assert!(tries < 40);
            }
            let found = capacity(&points).unwrap();
            let (pass, fail) = (found.capacity.unwrap(), found.band.1.unwrap());
            assert!(
                pass <= boundary && boundary < fail,
                "{boundary}: {pass} {fail}"
            );
            assert!(fail <= pass * 1.02 + 1.0, "{boundary}: {pass} {fail}");
            // Each try halves log(fail / pass): from a factor of 150 to 2%.
            let bound = ((150.0f64).ln() / (1.02f64).ln()).log2().ceil() as usize + 1;
            assert!(tries <= bound, "{tries} tries, bound {bound}");
        }
    }

    #[test]
    fn a_round_of_the_search_mixes_its_rate_with_the_rates_around_it() {
        let b = block(5000.0, 4, &[4000.0, 6000.0, 5000.0], 1);
        assert_eq!(b.len(), 6);
        assert_eq!(b.iter().filter(|&&r| r == 5000.0).count(), 4);
        assert_eq!(b.iter().filter(|&&r| r == 4000.0).count(), 1);
        // The neighbours' place changes with the seed: not always first or last.
        let places: std::collections::BTreeSet<usize> = (0..50)
            .map(|seed| {
                block(5000.0, 4, &[4000.0], seed)
                    .iter()
                    .position(|&r| r == 4000.0)
                    .unwrap()
            })
            .collect();
        assert_eq!(places.len(), 5, "{places:?}");
        assert_eq!(block(1.0, 2, &[], 3), vec![1.0, 1.0]);
    }

    #[test]
    fn every_run_of_a_sweep_gets_its_own_seed_and_one_seed_the_same_runs() {
        let seeds: Vec<u64> = (0..1000).map(|i| run_seed(7, i)).collect();
        let mut distinct = seeds.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), seeds.len(), "two runs share a seed");
        assert!(!seeds.contains(&7), "a run reuses the sweep's own seed");
        assert_eq!(seeds, (0..1000).map(|i| run_seed(7, i)).collect::<Vec<_>>());
        assert_ne!(run_seed(7, 0), run_seed(8, 0));
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
}
