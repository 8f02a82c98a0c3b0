//! `--budget`: the most time a sweep spends measuring, from its first run (warm-ups,
//! settles and the server's snapshots included), and the plan it states before it
//! starts. A run starts only when it and the closed-loop points still to come fit in
//! what is left, at the wall time open-loop runs have taken so far; when the next one
//! does not, the open-loop phases end ([`Halt::Budget`]) and the sweep gives its best
//! estimate, with what more time would have bought.
//!
//! A sweep given no `--budget` is bounded all the same, at [`BOUND_OVER_PLAN`] times its
//! plan (and [`LEAST_BOUND`] at least): its runs are bounded in number, but a loaded host
//! lengthens each and leaves more rates undecided, so that a sweep planned at two minutes
//! ran past seven. The bound ends it as a budget would, said as the bound's.

use std::time::{Duration, Instant};

use super::Sweeper;
use crate::app::Halt;
use crate::config::sweep::Rates;
use crate::export::sweep_lines::{Line, Plan};
use crate::report::sweep::{BudgetDeciding, BudgetEnded, Kind};
use crate::stats::exceedance;

/// Runs the capacity search is planned at: the test's pass look at the two or three
/// rates around the capacity and its confirmation, a fail look at a few above (the
/// main job on two cores took 60-100).
pub const SEARCH_RUNS: usize = 4 * exceedance::FIRST_PASS_LOOK;
/// A sweep without `--budget` stops at this many times its plan's seconds.
pub const BOUND_OVER_PLAN: f64 = 3.0;
/// ... and never before this, so that a short plan still has room for a loaded host.
pub const LEAST_BOUND: Duration = Duration::from_secs(120);

/// What a run costs beyond its warm-up, window and settle before one was timed: the
/// server's snapshots before and after it, and the files written.
const OVERHEAD: Duration = Duration::from_millis(300);

/// Time spent and what is measured now, for `--budget`.
#[derive(Debug, Default)]
pub(super) struct Spending {
    /// When the first run started.
    pub first_run: Option<Instant>,
    /// Wall seconds the open-loop runs took, settle included, and how many.
    pub open_loop: (f64, usize),
    /// The rate being decided, and whether on fresh runs.
    pub deciding: Option<(f64, Kind)>,
    /// The most seconds the sweep measures, set with its plan.
    pub bound: Option<Bound>,
}

/// The most a sweep spends measuring: `--budget`, or the bound a plan implies without one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Bound {
    /// Seconds from the first run.
    pub secs: f64,
    /// Set by the plan, not by `--budget`.
    pub implied: bool,
}

impl Bound {
    /// `--budget` when given, else [`BOUND_OVER_PLAN`] times the plan's seconds (at
    /// least [`LEAST_BOUND`]).
    pub fn of(budget: Option<Duration>, plan_secs: f64) -> Self {
        match budget {
            Some(b) => Self {
                secs: b.as_secs_f64(),
                implied: false,
            },
            None => Self {
                secs: (BOUND_OVER_PLAN * plan_secs).max(LEAST_BOUND.as_secs_f64()),
                implied: true,
            },
        }
    }
}

impl Sweeper<'_> {
    /// What one open-loop run costs: the mean of those so far, or the plan's.
    fn run_secs(&self) -> f64 {
        match self.spending.open_loop {
            (secs, n) if n > 0 => secs / n as f64,
            _ => {
                (self.plan.warmup + self.plan.duration + self.plan.settle + OVERHEAD).as_secs_f64()
            }
        }
    }

    /// What the closed-loop points after the open-loop phases cost.
    fn reserve_secs(&self) -> f64 {
        let one = (self.plan.duration + self.plan.settle + OVERHEAD).as_secs_f64();
        one * self.plan.closed_loop_points.len() as f64
    }

    /// Seconds left of the sweep's bound, once its plan set one.
    fn bound_left(&self) -> Option<f64> {
        let bound = self.spending.bound?.secs;
        let spent = self
            .spending
            .first_run
            .map_or(0.0, |t| t.elapsed().as_secs_f64());
        Some(bound - spent)
    }

    /// Seconds of `--budget` left, when one was given: the progress line's. An implied
    /// bound is not shown there, since a sweep that keeps its plan never nears it.
    pub(super) fn budget_left(&self) -> Option<f64> {
        self.plan.budget?;
        self.bound_left()
    }

    /// Refuses an open-loop run that, with the closed-loop points still to come, would
    /// not fit in what is left of the sweep's bound.
    pub(super) fn check_budget(&self, kind: Kind) -> Result<(), Halt> {
        match self.bound_left() {
            Some(left) if kind.is_open_loop() && left < self.run_secs() + self.reserve_secs() => {
                Err(Halt::Budget)
            }
            _ => Ok(()),
        }
    }

    /// Notes that a run of `kind` took `wall` from before its settle to its end.
    pub(super) fn spent(&mut self, kind: Kind, started: Instant) {
        if kind.is_open_loop() {
            self.spending.open_loop.0 += started.elapsed().as_secs_f64();
            self.spending.open_loop.1 += 1;
        }
    }

    /// Says the plan before the first run: its steps, search and closed loops, their runs
    /// and seconds, and what `--budget` keeps of them.
    pub(super) fn say_plan(&mut self) -> Result<(), Halt> {
        let rates = match &self.plan.rates {
            Rates::Absolute(v) => v.len(),
            Rates::OfClosedLoopMax(f) => f.len(),
        };
        let steps = rates * self.plan.repeat;
        let search = if self.plan.slos.is_empty() {
            0
        } else {
            SEARCH_RUNS
        };
        let closed = self.plan.closed_loop_points.len()
            + usize::from(matches!(self.plan.rates, Rates::OfClosedLoopMax(_)))
            + if self.plan.rate_capped { rates } else { 0 };
        let runs = steps + search + closed;
        let secs = self.run_secs() * (steps + search) as f64
            + closed as f64 * (self.plan.duration + self.plan.settle + OVERHEAD).as_secs_f64();
        self.spending.bound = Some(Bound::of(self.plan.budget, secs));
        let bound_secs = self.spending.bound.filter(|b| b.implied).map(|b| b.secs);
        let budget = self.plan.budget.map(|budget| {
            let b = budget.as_secs_f64();
            let kept = (b < secs).then(|| {
                let fit = ((b - self.reserve_secs()) / self.run_secs()).max(0.0) as usize;
                fit + self.plan.closed_loop_points.len()
            });
            (b, kept)
        });
        self.say(&Line::Plan(&Plan {
            steps,
            search,
            closed,
            runs,
            secs,
            budget,
            bound_secs,
        }))?;
        Ok(())
    }

    /// What more time would have bought when the sweep's bound ended the search: the runs
    /// the rate being decided needed to reach its next look.
    pub(super) fn budget_ended(&self) -> BudgetEnded {
        let bound = self
            .spending
            .bound
            .unwrap_or(Bound::of(self.plan.budget, 0.0));
        let deciding = self.spending.deciding.map(|(rate, kind)| {
            let fresh = kind == Kind::Confirm;
            let (_, valid, _, _) = self.state(rate, |m| !fresh || m.kind == Kind::Confirm);
            let look = exceedance::next_look(valid).unwrap_or(valid + 1);
            let more = look.saturating_sub(valid).max(1);
            BudgetDeciding {
                rate_per_sec: rate,
                confirming: fresh,
                runs: valid,
                more_runs: more,
                more_secs: more as f64 * self.run_secs(),
            }
        });
        BudgetEnded {
            budget_secs: bound.secs,
            implied: bound.implied,
            deciding,
        }
    }

    /// Ends the open-loop phases when the sweep's bound is spent: the result of the runs so far,
    /// said with what more time would buy.
    pub(super) fn end_of_budget(&mut self) -> Result<(), Halt> {
        let ended = self.budget_ended();
        let words = crate::export::capacity_text::budget_ended(&ended);
        self.say(&Line::Said(&words))?;
        self.budget_ended = Some(ended);
        if self.plan.slos.is_empty() {
            return self.print_steps();
        }
        let searched = self.finding().and_then(|f| f.capacity);
        self.record_slo(searched, false)?;
        self.print_steps()?;
        if let Some(said) = crate::export::capacity_text::sentence(&self.report) {
            self.say(&Line::Said(&said))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_without_a_budget_is_bounded_by_its_plan() {
        let given = Bound::of(Some(Duration::from_secs(60)), 500.0);
        assert_eq!((given.secs, given.implied), (60.0, false));
        let long = Bound::of(None, 121.0);
        assert_eq!((long.secs, long.implied), (363.0, true));
        let short = Bound::of(None, 20.0);
        assert_eq!((short.secs, short.implied), (120.0, true));
    }
}
