//! `--budget`: the most time a sweep spends measuring, from its first run (warm-ups,
//! settles and the server's snapshots included), and the plan it states before it
//! starts. A run starts only when it and the closed-loop points still to come fit in
//! what is left, at the wall time open-loop runs have taken so far; when the next one
//! does not, the open-loop phases end ([`Halt::Budget`]) and the sweep gives its best
//! estimate, with what more time would have bought.

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

    /// Seconds of `--budget` left, when one was given.
    pub(super) fn budget_left(&self) -> Option<f64> {
        let budget = self.plan.budget?.as_secs_f64();
        let spent = self
            .spending
            .first_run
            .map_or(0.0, |t| t.elapsed().as_secs_f64());
        Some(budget - spent)
    }

    /// Refuses an open-loop run that, with the closed-loop points still to come, would
    /// not fit in what is left of `--budget`.
    pub(super) fn check_budget(&self, kind: Kind) -> Result<(), Halt> {
        match self.budget_left() {
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
        }))?;
        Ok(())
    }

    /// What more time would have bought when `--budget` ended the search: the runs the
    /// rate being decided needed to reach its next look.
    pub(super) fn budget_ended(&self) -> BudgetEnded {
        let budget_secs = self.plan.budget.map_or(0.0, |b| b.as_secs_f64());
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
            budget_secs,
            deciding,
        }
    }

    /// Ends the open-loop phases when `--budget` is spent: the result of the runs so far,
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
