//! The search of `tailrate tune`, pure: the ladders of settings ([`Space`]), the
//! coarse-to-fine coordinate [`climb`] over them, and ranking by mean throughput. It
//! measures nothing itself: the caller's closure runs each trial.

use std::time::Duration;

use crate::drive::Workers;

/// Smallest relative throughput gain the climb moves for: below it, run-to-run noise.
pub const MIN_GAIN: f64 = 0.03;
/// Batch sizes tried (`--pipeline-size`).
const SIZES: [usize; 11] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
/// Delays tried (`--pipeline-delay`), in microseconds.
const DELAYS_US: [u64; 8] = [0, 10, 25, 50, 100, 250, 500, 1000];
/// Climb steps in ladder positions, coarse to fine.
const STEPS: [usize; 3] = [4, 2, 1];
/// Workers per connection at the start of the climb.
const START_WORKERS_PER_CONNECTION: usize = 16;

/// The three ladders the climb moves on.
#[derive(Debug, Clone, PartialEq)]
pub struct Space {
    /// Worker counts, increasing (factors of about sqrt 2 from the connection count).
    pub workers: Vec<usize>,
    /// Batch sizes, increasing.
    pub sizes: Vec<usize>,
    /// Delays, increasing.
    pub delays: Vec<Duration>,
}

/// A setting of the search: positions on the ladders of a [`Space`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    /// Position on the workers ladder.
    pub workers: usize,
    /// Position on the batch-size ladder.
    pub size: usize,
    /// Position on the delay ladder.
    pub delay: usize,
}

impl Space {
    /// The ladders for `connections` connections and at most `max_workers` workers.
    pub fn new(connections: usize, max_workers: usize) -> Self {
        let connections = connections.max(1);
        let mut workers: Vec<usize> = Vec::new();
        for half_doublings in 0..128 {
            let w =
                (connections as f64 * 2f64.powf(f64::from(half_doublings) / 2.0)).round() as usize;
            if w > max_workers.max(connections) {
                break;
            }
            if workers.last() != Some(&w) {
                workers.push(w);
            }
        }
        Space {
            workers,
            sizes: SIZES.to_vec(),
            delays: DELAYS_US
                .iter()
                .map(|&us| Duration::from_micros(us))
                .collect(),
        }
    }

    /// Where the climb starts: about 16 workers per connection, the largest batch, no delay.
    pub fn start(&self) -> Point {
        let first = self.workers.first().copied().unwrap_or(1);
        let target = first * START_WORKERS_PER_CONNECTION;
        let workers = self.workers.iter().rposition(|&w| w <= target).unwrap_or(0);
        Point {
            workers,
            size: self.sizes.len() - 1,
            delay: 0,
        }
    }

    /// The `--workers` settings of `p`.
    pub fn settings(&self, p: Point) -> Workers {
        Workers {
            count: self.workers[p.workers],
            pipeline_size: self.sizes[p.size],
            pipeline_delay: self.delays[p.delay],
        }
    }

    /// `p` moved `by` positions along `dim`, if that stays on the ladder.
    fn shifted(&self, p: Point, dim: usize, by: isize) -> Option<Point> {
        let (position, len) = match dim {
            0 => (p.workers, self.workers.len()),
            1 => (p.size, self.sizes.len()),
            _ => (p.delay, self.delays.len()),
        };
        let moved = position.checked_add_signed(by).filter(|&m| m < len)?;
        Some(match dim {
            0 => Point {
                workers: moved,
                ..p
            },
            1 => Point { size: moved, ..p },
            _ => Point { delay: moved, ..p },
        })
    }
}

/// The coarse-to-fine coordinate climb: from [`Space::start`], along workers, batch size
/// and delay in turn, it keeps moving in a direction while each step raises the
/// throughput by more than [`MIN_GAIN`]. When a pass over the three moves nowhere, the
/// current setting is measured once more and that run is what the neighbours must beat
/// (one lucky run, or one from a quieter moment of the machine, must not block every
/// move); if still nothing moves, the step gets finer (`STEPS`). `measure` runs one
/// trial; other settings are measured once, at most `max_trials` trials run. Returns
/// every trial in order.
pub fn climb<E>(
    space: &Space,
    max_trials: usize,
    mut measure: impl FnMut(Point) -> Result<f64, E>,
) -> Result<Vec<(Point, f64)>, E> {
    let mut tried: Vec<(Point, f64)> = Vec::new();
    // Runs `p` once more; `None` when the trial budget is spent.
    let mut run = |p: Point, tried: &mut Vec<(Point, f64)>| -> Result<Option<f64>, E> {
        if tried.len() >= max_trials {
            return Ok(None);
        }
        let t = measure(p)?;
        tried.push((p, t));
        Ok(Some(t))
    };
    let mut at = space.start();
    let Some(mut best) = run(at, &mut tried)? else {
        return Ok(tried);
    };
    for step in STEPS {
        let mut remeasured = false;
        loop {
            let mut moved = false;
            for dim in 0..3 {
                for direction in [1, -1] {
                    let mut went = false;
                    while let Some(next) = space.shifted(at, dim, direction * step as isize) {
                        let t = match mean_of(&tried, next) {
                            Some(t) => t,
                            None => match run(next, &mut tried)? {
                                Some(t) => t,
                                None => return Ok(tried),
                            },
                        };
                        if t <= best * (1.0 + MIN_GAIN) {
                            break;
                        }
                        (at, best, went) = (next, t, true);
                    }
                    moved |= went;
                    if went {
                        break;
                    }
                }
            }
            if moved {
                remeasured = false;
            } else if remeasured {
                break;
            } else {
                let Some(t) = run(at, &mut tried)? else {
                    return Ok(tried);
                };
                (best, remeasured) = (t, true);
            }
        }
    }
    Ok(tried)
}

/// The mean throughput of the runs of `p` in `tried`.
fn mean_of(tried: &[(Point, f64)], p: Point) -> Option<f64> {
    let (n, sum) = tried
        .iter()
        .filter(|(q, _)| *q == p)
        .fold((0usize, 0.0), |(n, sum), (_, t)| (n + 1, sum + t));
    (n > 0).then(|| sum / n as f64)
}

/// Every setting of `tried` once, with the mean of its runs, best first.
pub(super) fn ranked(tried: &[(Point, f64)]) -> Vec<(Point, f64)> {
    let mut out: Vec<(Point, f64)> = Vec::new();
    for &(p, _) in tried {
        if !out.iter().any(|(q, _)| *q == p) {
            out.push((p, mean_of(tried, p).unwrap_or(0.0)));
        }
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_workers_ladder_starts_at_the_connections_and_stops_at_the_maximum() {
        let space = Space::new(4, 100);
        assert_eq!(space.workers, [4, 6, 8, 11, 16, 23, 32, 45, 64, 91]);
        assert_eq!(space.settings(space.start()).count, 64);
        assert_eq!(Space::new(1, 1).workers, [1]);
        assert_eq!(
            Space::new(50, 10).workers,
            [50],
            "never below the connections"
        );
    }

    /// A smooth landscape with one peak at (workers 256, size 64, delay 0).
    fn peaked(space: &Space, p: Point) -> f64 {
        let w = space.settings(p);
        let dist = |x: f64, at: f64| (x.log2() - at.log2()).abs();
        1e6 / (1.0
            + dist(w.count as f64, 256.0)
            + 0.5 * dist(w.pipeline_size as f64, 64.0)
            + w.pipeline_delay.as_secs_f64() * 1e4)
    }

    #[test]
    fn the_climb_finds_the_peak_of_a_smooth_landscape_in_few_trials() {
        let space = Space::new(1, 4096);
        let tried = climb::<()>(&space, 60, |p| Ok(peaked(&space, p))).unwrap();
        let best = tried.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
        let w = space.settings(best);
        assert_eq!(
            (w.count, w.pipeline_size, w.pipeline_delay),
            (256, 64, Duration::ZERO),
            "after {} trials",
            tried.len()
        );
        assert!(tried.len() < 40, "{} trials", tried.len());
        let settings = tried.iter().map(|(p, _)| *p).collect::<Vec<_>>();
        let repeated = settings
            .iter()
            .enumerate()
            .filter(|(i, p)| settings[..*i].contains(p))
            .count();
        assert!(
            repeated <= STEPS.len(),
            "{repeated} re-measurements: only the current setting, once per step size"
        );
    }

    #[test]
    fn a_lucky_first_run_does_not_stop_the_climb() {
        let space = Space::new(1, 4096);
        let start = space.start();
        let mut lucky = true;
        let tried = climb::<()>(&space, 60, |p| {
            let luck = if p == start && lucky { 10.0 } else { 1.0 };
            lucky &= p != start;
            Ok(peaked(&space, p) * luck)
        })
        .unwrap();
        let w = space.settings(ranked(&tried)[0].0);
        assert_eq!(
            (w.count, w.pipeline_size),
            (256, 64),
            "the climb stopped at its lucky start after {} trials",
            tried.len()
        );
        assert_eq!(
            tried.iter().filter(|(p, _)| *p == start).count(),
            2,
            "the start was measured again once"
        );
    }

    #[test]
    fn the_climb_stops_at_the_trial_budget() {
        let space = Space::new(1, 4096);
        let tried = climb::<()>(&space, 5, |p| Ok(peaked(&space, p))).unwrap();
        assert_eq!(tried.len(), 5);
        let failing = climb(&space, 5, |_| Err("server gone"));
        assert_eq!(failing, Err("server gone"));
    }
}
