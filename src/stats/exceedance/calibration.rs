//! The exceedance test's real error rates, measured by simulation: [`decide`] run as a
//! sweep runs it (one visit at a time, a decision at each look, stopping at the first
//! verdict or the last look) on hosts whose stalls make exceedances bursty and whose
//! weather changes between visits. [`ALPHA_PER_LOOK`] and [`LOOKS`] are what make the
//! asserted rates hold; the table the test prints is the one in `bench/README.md`.
//!
//! The model is window-level, so that thousands of sequential decisions take seconds: a
//! visit is 2 s of an open loop at 10k req/s, four windows of 0.5 s with 5000 replies
//! each. Host stalls arrive as a Poisson process, short ones often and long ones rarely,
//! with lognormal lengths; a request that arrives during a stall waits out the rest of it,
//! so it is slower than the bound when it arrives more than the bound (less its calm
//! service time) before the stall ends. A small calm fraction is slow on its own,
//! independently. Between visits the stall rate is multiplied by a lognormal of mean 1
//! (the host's weather). The stall rate is scaled so that the true mean E is the one a
//! cell asks for, computed in closed form.

use std::f64::consts::SQRT_2;

use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal, Poisson};
use rand_pcg::Pcg64Mcg;
use statrs::function::erf::erfc;

use super::*;

/// The objective simulated: p99 <= T, so E <= 1%.
const LIMIT: f64 = 0.01;
/// Requests per second of the open loop.
const RATE_PER_SEC: f64 = 10_000.0;
/// Length of a window, s.
const WINDOW_SECS: f64 = 0.5;
/// Windows in a visit of 2 s.
const WINDOWS_PER_VISIT: usize = 4;
/// Replies in a window: the rate over the window.
const REPLIES_PER_WINDOW: u64 = 5_000;
/// Seeded sequential decisions per cell.
const DECISIONS: usize = 8_000;
/// The seed of the first cell; each cell adds its index, so cells are independent.
const SEED: u64 = 0x5eed_e0ce;
/// Visits the naive bound looks at, once.
const NAIVE_VISITS: usize = 4;
/// The naive bound's one-sided level: a nominal 95%.
const NAIVE_ALPHA: f64 = 0.05;

/// One kind of host stall: a Poisson process in time with lognormal lengths.
#[derive(Debug, Clone, Copy)]
struct Stalls {
    per_sec: f64,
    median_secs: f64,
    sigma: f64,
}

impl Stalls {
    /// The mean time, per stall, during which an arriving request waits longer than
    /// `late_secs`: E[(L - late)+] of the lognormal length L.
    fn mean_late_secs(&self, late_secs: f64) -> f64 {
        let (mu, s) = (self.median_secs.ln(), self.sigma);
        let mean = (mu + s * s / 2.0).exp();
        if late_secs <= 0.0 {
            return mean;
        }
        let a = (late_secs.ln() - mu) / s;
        mean * upper_normal(a - s) - late_secs * upper_normal(a)
    }
}

/// P(Z > z) of a standard normal.
fn upper_normal(z: f64) -> f64 {
    0.5 * erfc(z / SQRT_2)
}

/// A host: its two kinds of stall, the wait in a stall that makes a request slower than
/// the bound, and the fraction slower than it outside stalls.
#[derive(Debug, Clone, Copy)]
struct Host {
    name: &'static str,
    stalls: [Stalls; 2],
    late_secs: f64,
    calm: f64,
}

impl Host {
    /// E from the stalls alone, at their rates as written.
    fn stall_fraction(&self) -> f64 {
        self.stalls
            .iter()
            .map(|s| s.per_sec * s.mean_late_secs(self.late_secs))
            .sum()
    }
}

/// The host the research fitted to this machine's 1-s exceedances (mean 0.63%, SD 0.36
/// points, skew 2.2 at its own rates): many short stalls and a rare long one, a bound of
/// 1 ms with 40 us of calm service.
const DATA: Host = Host {
    name: "data",
    stalls: [
        Stalls {
            per_sec: 16.0,
            median_secs: 1.25e-3,
            sigma: 0.25,
        },
        Stalls {
            per_sec: 0.25,
            median_secs: 3e-3,
            sigma: 0.8,
        },
    ],
    late_secs: 0.96e-3,
    calm: 1e-4,
};

/// Harsher tails: short stalls as spread as the long ones, and every request that arrives
/// during a stall slow, so a few long stalls carry more of E.
const WHOLE: Host = Host {
    name: "whole",
    stalls: [
        Stalls {
            per_sec: 16.0,
            median_secs: 1.25e-3,
            sigma: 0.8,
        },
        Stalls {
            per_sec: 0.25,
            median_secs: 3e-3,
            sigma: 0.8,
        },
    ],
    late_secs: 0.0,
    calm: 1e-4,
};

/// One cell: a host, its weather between visits (the CV of the stall-rate multiplier) and
/// the true E as a multiple of the limit.
#[derive(Debug, Clone, Copy)]
struct Cell {
    host: Host,
    weather_cv: f64,
    times_limit: f64,
}

/// What a cell's decisions came to.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    holds: usize,
    broken: usize,
    /// Visits made over every decision.
    visits: usize,
    /// Passes of the naive bound (Clopper-Pearson on the counts of the first visits).
    naive_holds: usize,
}

impl Tally {
    fn rate(count: usize) -> f64 {
        count as f64 / DECISIONS as f64
    }
}

/// The simulated windows of a cell.
struct Simulation {
    rng: Pcg64Mcg,
    weather: LogNormal<f64>,
    lengths: [LogNormal<f64>; 2],
    /// Stalls per window at weather 1, by kind.
    per_window: [f64; 2],
    host: Host,
}

impl Simulation {
    fn new(cell: &Cell, seed: u64) -> Self {
        let host = cell.host;
        let scale = (cell.times_limit * LIMIT - host.calm) / host.stall_fraction();
        let sigma = (1.0 + cell.weather_cv.powi(2)).ln().sqrt();
        let lognormal = |mu: f64, sigma: f64| LogNormal::new(mu, sigma).ok();
        let (Some(weather), Some(short), Some(long)) = (
            lognormal(-sigma * sigma / 2.0, sigma),
            lognormal(host.stalls[0].median_secs.ln(), host.stalls[0].sigma),
            lognormal(host.stalls[1].median_secs.ln(), host.stalls[1].sigma),
        ) else {
            panic!("a lognormal of {cell:?} has a bad shape");
        };
        Simulation {
            rng: Pcg64Mcg::seed_from_u64(seed),
            weather,
            lengths: [short, long],
            per_window: host.stalls.map(|s| s.per_sec * scale * WINDOW_SECS),
            host,
        }
    }

    /// Writes the next visit's windows into `visit`.
    fn visit(&mut self, visit: &mut [Window]) {
        let weather = self.weather.sample(&mut self.rng);
        for window in visit {
            // Arrivals are Poisson, so the requests that arrive in the late part of every
            // stall add up to one Poisson draw of the summed late time. A stall counts in
            // the window it starts in, which keeps the mean exactly the one scaled to.
            let mut late_secs = 0.0;
            for (per_window, length) in self.per_window.iter().zip(&self.lengths) {
                for _ in 0..poisson(&mut self.rng, per_window * weather) {
                    late_secs += (length.sample(&mut self.rng) - self.host.late_secs).max(0.0);
                }
            }
            let mean_over = RATE_PER_SEC * late_secs + REPLIES_PER_WINDOW as f64 * self.host.calm;
            *window = Window {
                replies: REPLIES_PER_WINDOW,
                over: poisson(&mut self.rng, mean_over).min(REPLIES_PER_WINDOW),
            };
        }
    }
}

fn poisson(rng: &mut Pcg64Mcg, mean: f64) -> u64 {
    if mean <= 0.0 {
        return 0;
    }
    Poisson::new(mean).map_or(0, |p| p.sample(rng) as u64)
}

/// Runs a cell's decisions sequentially with `looks` and `alpha`, and the naive bound
/// on the same visits.
fn run(cell: &Cell, looks: &[usize], alpha: f64, seed: u64) -> Tally {
    let mut sim = Simulation::new(cell, seed);
    let cap = looks.iter().copied().max().unwrap_or(0).max(NAIVE_VISITS);
    let mut visits = vec![vec![Window::default(); WINDOWS_PER_VISIT]; cap];
    let mut tally = Tally::default();
    for _ in 0..DECISIONS {
        let mut decided = false;
        for seen in 1..=cap {
            sim.visit(&mut visits[seen - 1]);
            if seen == NAIVE_VISITS {
                let (replies, over) = visits[..seen]
                    .iter()
                    .flatten()
                    .fold((0, 0), |a, w| (a.0 + w.replies, a.1 + w.over));
                if upper_clopper_pearson(over, replies, NAIVE_ALPHA) <= LIMIT {
                    tally.naive_holds += 1;
                }
            }
            if !decided && looks.contains(&seen) {
                let decision = decide_with(&visits[..seen], LIMIT, looks, alpha).0;
                decided = decision != Decision::Undecided || Some(&seen) == looks.last();
                match decision {
                    Decision::Holds => tally.holds += 1,
                    Decision::Broken => tally.broken += 1,
                    Decision::Undecided => {}
                }
                if decided {
                    tally.visits += seen;
                }
            }
            if decided && seen >= NAIVE_VISITS {
                break;
            }
        }
    }
    tally
}

/// Every cell of the table, each in its own thread, with its seed.
fn table(cells: &[Cell], looks: &[usize], alpha: f64) -> Vec<Tally> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = cells
            .iter()
            .enumerate()
            .map(|(i, cell)| scope.spawn(move || run(cell, looks, alpha, SEED + i as u64)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

fn cells(hosts: &[Host], times_limit: &[f64]) -> Vec<Cell> {
    let mut cells = Vec::new();
    for &host in hosts {
        for weather_cv in [0.3, 0.6] {
            for &times_limit in times_limit {
                cells.push(Cell {
                    host,
                    weather_cv,
                    times_limit,
                });
            }
        }
    }
    cells
}

fn print(cells: &[Cell], tallies: &[Tally], looks: &[usize], alpha: f64) {
    eprintln!(
        "exceedance test, looks {looks:?} visits of 2 s, alpha {alpha} per look, limit {LIMIT}, \
         {DECISIONS} decisions per cell"
    );
    eprintln!(
        "| host | weather CV | true E / limit | P(holds) | P(broken) | mean visits | \
         naive CP 95% at {NAIVE_VISITS} visits: P(holds) |"
    );
    eprintln!("|---|---|---|---|---|---|---|");
    for (cell, t) in cells.iter().zip(tallies) {
        eprintln!(
            "| {} | {} | {} | {:.3} | {:.3} | {:.1} | {:.3} |",
            cell.host.name,
            cell.weather_cv,
            cell.times_limit,
            Tally::rate(t.holds),
            Tally::rate(t.broken),
            t.visits as f64 / DECISIONS as f64,
            Tally::rate(t.naive_holds),
        );
    }
}

#[test]
fn the_sequential_test_passes_a_boundary_objective_rarely_and_a_met_one_mostly() {
    let cells = cells(&[DATA, WHOLE], &[0.6, 0.8, 1.0, 2.0]);
    let tallies = table(&cells, &LOOKS, ALPHA_PER_LOOK);
    print(&cells, &tallies, &LOOKS, ALPHA_PER_LOOK);
    for (cell, t) in cells.iter().zip(&tallies) {
        let (holds, broken) = (Tally::rate(t.holds), Tally::rate(t.broken));
        let at = format!("{cell:?}: holds {holds}, broken {broken}");
        let calm_weather = cell.weather_cv <= 0.3;
        if cell.times_limit < 0.7 {
            // Sixteen visits cannot tell 0.6% from 1% that often when the harsher host's
            // weather is strong as well: there the floor only guards against a test that
            // stopped passing anything.
            let least = if calm_weather || cell.host.name == DATA.name {
                0.80
            } else {
                0.65
            };
            assert!(holds >= least, "too little power at {at}");
            assert!(broken <= 0.01, "broken though met at {at}");
        } else if cell.times_limit == 1.0 {
            let most = if calm_weather { 0.05 } else { 0.10 };
            assert!(
                holds <= most,
                "passes a boundary objective too often at {at}"
            );
            assert!(
                broken <= 0.05,
                "breaks a boundary objective too often at {at}"
            );
            assert!(
                Tally::rate(t.naive_holds) > 2.0 * holds,
                "the naive bound should pass the boundary far more often at {at}"
            );
        } else if cell.times_limit >= 2.0 {
            assert!(holds <= 0.01, "passes a broken objective at {at}");
        }
    }
}

#[test]
fn the_simulated_hosts_have_the_mean_they_are_scaled_to() {
    for (i, host) in [DATA, WHOLE].into_iter().enumerate() {
        let cell = Cell {
            host,
            weather_cv: 0.6,
            times_limit: 1.0,
        };
        let mut sim = Simulation::new(&cell, SEED ^ i as u64);
        let mut visit = [Window::default(); WINDOWS_PER_VISIT];
        let (mut replies, mut over) = (0u64, 0u64);
        for _ in 0..20_000 {
            sim.visit(&mut visit);
            replies += visit.iter().map(|w| w.replies).sum::<u64>();
            over += visit.iter().map(|w| w.over).sum::<u64>();
        }
        let fraction = over as f64 / replies as f64;
        assert!(
            (fraction / LIMIT - 1.0).abs() < 0.03,
            "{}: {fraction}",
            host.name
        );
    }
}

/// The table for other looks and levels: how [`LOOKS`] and [`ALPHA_PER_LOOK`] were chosen.
/// `cargo nextest run --run-ignored only -E 'test(/other_looks/)' --no-capture`
#[test]
#[ignore = "a search over plans, not a check"]
fn other_looks_and_levels() {
    let cells = cells(&[DATA, WHOLE], &[0.6, 1.0]);
    for looks in [[4, 8, 16], [6, 11, 16], [8, 12, 16]] {
        for alpha in [0.004, 0.005, 0.0055, 0.006, 0.0075] {
            print(&cells, &table(&cells, &looks, alpha), &looks, alpha);
        }
    }
}
