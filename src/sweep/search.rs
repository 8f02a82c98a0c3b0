//! The sweep's decisions, as pure functions of measured numbers: whether a step meets
//! the SLOs, whether the server is past saturation, and the bisection between the last
//! passing and the first failing rate. Measuring is `sweep`'s business.

use crate::config::sweep::Slo;
use crate::report::TestReport;
pub use crate::report::sweep::{SATURATION_FRACTION, achieved_fraction};
use crate::report::sweep::{SloCheck, SloVerdict};

/// Largest shortfall of the achieved rate against the planned rate for a step to be valid.
pub const SEND_TOLERANCE: f64 = crate::report::checks::RATE_TOLERANCE;

/// Judges `report` against `slos`: met when every objective holds on the response time
/// and the step is valid: the achieved rate is within [`SEND_TOLERANCE`] of the rate
/// the schedule planned (see [`achieved_fraction`]) and nothing went unsent.
pub fn judge(report: &TestReport, slos: &[Slo]) -> SloVerdict {
    let c = &report.counts;
    let valid =
        achieved_fraction(report) >= 1.0 - SEND_TOLERANCE && c.not_sent == 0 && c.completed > 0;
    let histogram = report
        .response()
        .and_then(|l| l.histogram())
        .filter(|h| !h.is_empty());
    let checks: Vec<SloCheck> = slos
        .iter()
        .map(|slo| {
            let measured_ns = histogram
                .as_ref()
                .map(|h| h.value_at_quantile(slo.quantile()));
            SloCheck {
                slo: slo.text.clone(),
                measured_ns,
                met: measured_ns.is_some_and(|v| v <= slo.bound_ns),
            }
        })
        .collect();
    SloVerdict {
        met: valid && checks.iter().all(|c| c.met),
        valid,
        checks,
    }
}

/// Whether a step says nothing either way about the objectives: they held, but its
/// sends fell short of the schedule by more than [`SEND_TOLERANCE`] without the server
/// being past saturation (a generator stall on a busy host). Such a step neither passes
/// nor bounds the capacity.
pub fn inconclusive(report: &TestReport, verdict: &SloVerdict) -> bool {
    !verdict.met
        && verdict.checks.iter().all(|c| c.met)
        && report.counts.not_sent == 0
        && report.counts.completed > 0
        && achieved_fraction(report) >= SATURATION_FRACTION
}

/// Why the sweep should stop after a step at `target` that achieved the fraction
/// `achieved` of its planned rate (see [`achieved_fraction`]) with a response-time p99
/// of `p99_ns`; `None` to go on.
pub fn saturation(
    target: f64,
    achieved: f64,
    p99_ns: u64,
    stop_at_ns: Option<u64>,
) -> Option<String> {
    if achieved < SATURATION_FRACTION {
        return Some(format!(
            "past saturation: at {target:.0} req/s the generator achieved only {:.1}% of the planned rate (under {:.0}%)",
            100.0 * achieved,
            100.0 * SATURATION_FRACTION
        ));
    }
    match stop_at_ns {
        Some(limit) if p99_ns > limit => Some(format!(
            "past saturation: response p99 {:.3} ms at {target:.0} req/s is above --stop-at {:.3} ms",
            p99_ns as f64 / 1e6,
            limit as f64 / 1e6
        )),
        _ => None,
    }
}

/// Where the coarse steps leave the search: below the lowest failing rate, between it
/// and the highest passing rate under it. A step that failed bounds the capacity even
/// when a higher one passed: the capacity is a rate that held, and that one did not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bracket {
    /// The lowest rate failed.
    NonePassed {
        /// The lowest rate.
        lowest: f64,
    },
    /// No rate failed: the capacity is at least `highest`.
    AllPassed {
        /// The highest passing rate.
        highest: f64,
    },
    /// `fail` is the lowest failing rate, `pass` the highest passing rate below it.
    Between {
        /// Highest passing rate.
        pass: f64,
        /// Lowest failing rate.
        fail: f64,
    },
}

/// Brackets the SLO boundary from coarse `(rate, met)` results in increasing rate order.
pub fn bracket(results: &[(f64, bool)]) -> Option<Bracket> {
    let first = results.first()?;
    let Some(fail) = results.iter().find(|(_, met)| !met).map(|(r, _)| *r) else {
        let highest = results.iter().map(|(r, _)| *r).fold(first.0, f64::max);
        return Some(Bracket::AllPassed { highest });
    };
    let below = results.iter().filter(|(r, met)| *met && *r < fail);
    Some(match below.map(|(r, _)| *r).reduce(f64::max) {
        Some(pass) => Bracket::Between { pass, fail },
        None => Bracket::NonePassed { lowest: first.0 },
    })
}

/// Bisection between a passing and a failing rate, to a resolution relative to the rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bisection {
    /// Highest rate known to pass.
    pub pass: f64,
    /// Lowest rate known to fail.
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

    /// Records the result at `rate`.
    pub fn record(&mut self, rate: f64, met: bool) {
        if met {
            self.pass = self.pass.max(rate);
        } else {
            self.fail = self.fail.min(rate);
        }
    }
}

/// The rates to re-measure in turn until one holds: `capacity` first, then lower rates
/// that met the SLOs every time they were measured, highest first, at most `tries`.
pub fn confirm_order(capacity: f64, measured: &[(f64, bool)], tries: usize) -> Vec<f64> {
    let mut held: Vec<f64> = measured
        .iter()
        .map(|(r, _)| *r)
        .filter(|r| *r < capacity && measured.iter().filter(|(x, _)| x == r).all(|(_, met)| *met))
        .collect();
    held.sort_by(|a, b| b.total_cmp(a));
    held.dedup();
    std::iter::once(capacity).chain(held).take(tries).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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

    #[test]
    fn the_bracket_is_the_first_failure_and_the_highest_pass_below_it() {
        assert_eq!(bracket(&[]), None);
        assert_eq!(
            bracket(&[(1.0, true), (2.0, true), (3.0, false), (4.0, false)]),
            Some(Bracket::Between {
                pass: 2.0,
                fail: 3.0
            })
        );
        // A failing low step bounds the capacity, whatever passed above it.
        assert_eq!(
            bracket(&[(1.0, false), (2.0, true), (3.0, false)]),
            Some(Bracket::NonePassed { lowest: 1.0 })
        );
        assert_eq!(
            bracket(&[(1.0, true), (2.0, false), (3.0, true)]),
            Some(Bracket::Between {
                pass: 1.0,
                fail: 2.0
            })
        );
        assert_eq!(
            bracket(&[(1.0, false), (2.0, false)]),
            Some(Bracket::NonePassed { lowest: 1.0 })
        );
        assert_eq!(
            bracket(&[(1.0, true), (2.0, true)]),
            Some(Bracket::AllPassed { highest: 2.0 })
        );
    }

    #[test]
    fn the_sweep_stops_under_95_percent_of_target_or_above_stop_at() {
        assert_eq!(saturation(100_000.0, 0.96, 1_000_000, None), None);
        assert!(
            saturation(100_000.0, 0.94, 1_000_000, None)
                .unwrap()
                .contains("94.0%")
        );
        assert_eq!(saturation(100_000.0, 1.0, 2_000_000, Some(2_000_000)), None);
        assert!(
            saturation(100_000.0, 1.0, 2_000_001, Some(2_000_000))
                .unwrap()
                .contains("--stop-at")
        );
    }

    #[test]
    fn confirmation_falls_back_to_rates_that_always_held() {
        let measured = [
            (1000.0, true),
            (1500.0, true),
            (1250.0, true),
            (1375.0, false),
            (1250.0, true),
            (1300.0, true),
            (1200.0, false),
        ];
        assert_eq!(
            confirm_order(1300.0, &measured, 3),
            vec![1300.0, 1250.0, 1000.0]
        );
        assert_eq!(confirm_order(1000.0, &measured, 3), vec![1000.0]);
    }
}
