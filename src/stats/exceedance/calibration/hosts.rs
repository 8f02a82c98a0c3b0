//! The simulated hosts of the calibration, window-level so that thousands of sequential
//! decisions take seconds: a visit is 2 s of an open loop cut in four windows of 0.5 s.
//!
//! Host stalls arrive as a Poisson process, short ones often and long ones rarely, with
//! lognormal lengths; a request that arrives during a stall waits out the rest of it, so it
//! is slower than the bound when it arrives more than the bound (less its calm service
//! time) before the stall ends. A small calm fraction is slow on its own. The stall rate is
//! scaled so that the mean E of the host's stalls is the one a cell asks for, computed in
//! closed form. Between visits the stall rate is multiplied by the host's weather: a
//! lognormal of mean 1, or mixed weather (a level that drifts from visit to visit, and some
//! visits in heavy weather). On top of that, a server may stall rarely and long: in a
//! share of visits, one stall puts a lognormal share of the visit's replies over the bound,
//! inside one window (fitted to a sweep on this project's machine, where 3 of 16 visits at
//! 72.6k/s each held one 62-74 ms stall that put 5.1-5.5% of the visit over 1 ms).

use std::f64::consts::SQRT_2;

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal, Poisson, StandardNormal};
use rand_pcg::Pcg64Mcg;
use statrs::function::erf::erfc;

use super::super::Window;

/// The objective simulated: p99 <= T, so E <= 1%.
pub(super) const LIMIT: f64 = 0.01;
/// Length of a window, s.
const WINDOW_SECS: f64 = 0.5;
/// Windows in a visit of 2 s.
pub(super) const WINDOWS_PER_VISIT: usize = 4;

/// One kind of host stall: a Poisson process in time with lognormal lengths.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stalls {
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

/// A host's stalls: its two kinds, the wait in a stall that makes a request slower than the
/// bound, and the fraction slower than it outside stalls.
#[derive(Debug, Clone, Copy)]
pub(super) struct Host {
    pub(super) name: &'static str,
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

/// The host fitted to this machine's 1-s exceedances (mean 0.63%, SD 0.36 points, skew 2.2
/// at its own rates): many short stalls and a rare long one, a bound of 1 ms with 40 us of
/// calm service.
pub(super) const DATA: Host = Host {
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
pub(super) const WHOLE: Host = Host {
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

/// How the host's stall rate changes between visits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Weather {
    /// Each visit's rate multiplied by a lognormal of mean 1 and this CV.
    Lognormal(f64),
    /// Mixed: a lognormal level of this CV whose logarithm carries `correlation` from one
    /// visit to the next (the base level moves), and a `heavy` share of visits at `factor`
    /// times it; scaled to a mean of 1.
    Mixed {
        cv: f64,
        correlation: f64,
        heavy: f64,
        factor: f64,
    },
}

/// The mixed weather fitted to the 65.3k/s visits of a sweep on this project's machine
/// (visit E median 0.70%, mean 0.95%, CV 0.76): a level of CV 0.3 that carries 0.3 of
/// itself to the next visit, and one visit in five at three times the stall rate.
pub(super) const MIXED: Weather = Weather::Mixed {
    cv: 0.3,
    correlation: 0.3,
    heavy: 0.2,
    factor: 3.0,
};

/// A rare large server stall: in `per_visit` of the visits, one stall puts a lognormal
/// share (median `median`, log-SD `sigma`) of the visit's replies over the bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct ServerStall {
    pub(super) per_visit: f64,
    median: f64,
    sigma: f64,
}

impl ServerStall {
    /// The stall fitted to a sweep on this project's machine, in `per_visit` of the visits.
    pub(super) const fn fitted(per_visit: f64) -> Self {
        ServerStall {
            per_visit,
            median: 0.047,
            sigma: 0.3,
        }
    }

    /// Its mean share of E.
    fn mean(&self) -> f64 {
        self.per_visit * self.median * (self.sigma * self.sigma / 2.0).exp()
    }
}

/// One simulated host: its stalls at a given E, its weather, the rate of the open loop,
/// and a rare large server stall if any.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cell {
    pub(super) host: Host,
    pub(super) weather: Weather,
    /// Requests per second of the open loop.
    pub(super) rate_per_sec: f64,
    /// E from the host's stalls and calm tail.
    pub(super) base: f64,
    pub(super) server_stall: Option<ServerStall>,
}

impl Cell {
    /// A cell of `host` in `weather` whose whole E is `times_limit` of the limit.
    pub(super) fn at(host: Host, weather: Weather, rate_per_sec: f64, times_limit: f64) -> Self {
        Cell {
            host,
            weather,
            rate_per_sec,
            base: times_limit * LIMIT,
            server_stall: None,
        }
    }

    /// A cell of the data host at 65k/s whose host stalls give `base` and whose server
    /// stalls in `per_visit` of the visits add theirs.
    pub(super) fn stalling(base: f64, per_visit: f64, weather: Weather) -> Self {
        Cell {
            host: DATA,
            weather,
            rate_per_sec: 65_000.0,
            base,
            server_stall: Some(ServerStall::fitted(per_visit)),
        }
    }

    /// The true mean E.
    pub(super) fn truth(&self) -> f64 {
        self.base + self.server_stall.map_or(0.0, |s| s.mean())
    }
}

/// The simulated windows of a cell, one visit at a time.
pub(super) struct Simulation {
    rng: Pcg64Mcg,
    cell: Cell,
    lengths: [LogNormal<f64>; 2],
    /// Stalls per window at weather 1, by kind.
    per_window: [f64; 2],
    /// Log-SD of the weather's level.
    sigma: f64,
    /// The weather's level (its logarithm) at the last visit, for mixed weather.
    level: f64,
    replies_per_window: u64,
}

impl Simulation {
    pub(super) fn new(cell: &Cell, seed: u64) -> Self {
        let host = cell.host;
        let scale = (cell.base - host.calm) / host.stall_fraction();
        let cv = match cell.weather {
            Weather::Lognormal(cv) | Weather::Mixed { cv, .. } => cv,
        };
        let lognormal = |median: f64, sigma: f64| LogNormal::new(median.ln(), sigma).ok();
        let (Some(short), Some(long)) = (
            lognormal(host.stalls[0].median_secs, host.stalls[0].sigma),
            lognormal(host.stalls[1].median_secs, host.stalls[1].sigma),
        ) else {
            panic!("a lognormal of {cell:?} has a bad shape");
        };
        let mut sim = Simulation {
            rng: Pcg64Mcg::seed_from_u64(seed),
            cell: *cell,
            lengths: [short, long],
            per_window: host.stalls.map(|s| s.per_sec * scale * WINDOW_SECS),
            sigma: (1.0 + cv * cv).ln().sqrt(),
            level: 0.0,
            replies_per_window: (cell.rate_per_sec * WINDOW_SECS).round() as u64,
        };
        sim.new_decision();
        sim
    }

    /// Starts the visits of a new decision: mixed weather's level drawn afresh.
    pub(super) fn new_decision(&mut self) {
        self.level = self.sigma * self.normal();
    }

    fn normal(&mut self) -> f64 {
        StandardNormal.sample(&mut self.rng)
    }

    /// The multiplier of the host's stall rate for the next visit.
    fn weather(&mut self) -> f64 {
        let z = self.normal();
        let half_variance = self.sigma * self.sigma / 2.0;
        match self.cell.weather {
            Weather::Lognormal(_) => (self.sigma * z - half_variance).exp(),
            Weather::Mixed {
                correlation,
                heavy,
                factor,
                ..
            } => {
                let carried = correlation * self.level;
                self.level = carried + (1.0 - correlation * correlation).sqrt() * self.sigma * z;
                let heavy_now = self.rng.random::<f64>() < heavy;
                let mean = 1.0 - heavy + heavy * factor;
                (self.level - half_variance).exp() * if heavy_now { factor } else { 1.0 } / mean
            }
        }
    }

    /// Writes the next visit's windows into `visit`.
    pub(super) fn visit(&mut self, visit: &mut [Window]) {
        let weather = self.weather();
        let (rate, calm, late) = (
            self.cell.rate_per_sec,
            self.cell.host.calm,
            self.cell.host.late_secs,
        );
        let replies = self.replies_per_window;
        for window in visit.iter_mut() {
            // Arrivals are Poisson, so the requests that arrive in the late part of every
            // stall add up to one Poisson draw of the summed late time. A stall counts in
            // the window it starts in, which keeps the mean exactly the one scaled to.
            let mut late_secs = 0.0;
            for kind in 0..2 {
                for _ in 0..poisson(&mut self.rng, self.per_window[kind] * weather) {
                    late_secs += (self.lengths[kind].sample(&mut self.rng) - late).max(0.0);
                }
            }
            let mean_over = rate * late_secs + replies as f64 * calm;
            *window = Window {
                replies,
                over: poisson(&mut self.rng, mean_over).min(replies),
            };
        }
        if let Some(stall) = self.cell.server_stall
            && self.rng.random::<f64>() < stall.per_visit
        {
            let share = (stall.median.ln() + stall.sigma * self.normal()).exp();
            let visit_replies = replies * visit.len() as u64;
            let extra = poisson(&mut self.rng, share * visit_replies as f64);
            let hit = self.rng.random_range(0..visit.len());
            visit[hit].over = (visit[hit].over + extra).min(replies);
        }
    }
}

fn poisson(rng: &mut Pcg64Mcg, mean: f64) -> u64 {
    if mean <= 0.0 {
        return 0;
    }
    Poisson::new(mean).map_or(0, |p| p.sample(rng) as u64)
}
