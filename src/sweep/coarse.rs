//! A sweep's open-loop phases in order, and its coarse steps: each of `--rates`
//! `--repeat` times in `--order`, a rate-capped closed loop beside each rate's first run, the rates above one past saturation skipped,
//! and, for rates given as fractions of the closed-loop maximum, steps added above the
//! highest until one saturates.

use super::{Sweeper, search};
use crate::app::Halt;
use crate::config::sweep::{Order, Rates};
use crate::export::sweep_lines::Line;
use crate::report::sweep::Kind;

/// Most steps a sweep adds above the highest of `--rates` given as fractions of the
/// closed-loop maximum while no step saturated: that maximum only places the steps, and
/// how far past it an open loop carries varies between hosts and runs (with 50
/// connections on one generator core it read from 60% to 100% of what 10 reached), so
/// the sweep goes on until it sees where the server stops keeping the schedule.
pub const SATURATION_PROBES: usize = 2;
/// Each added step is this many times the last.
pub const BEYOND: f64 = 1.5;
impl Sweeper<'_> {
    /// The coarse steps in `--order`, each `--repeat` times, and a rate-capped closed
    /// loop beside each rate's first run; rates above one past saturation are skipped.
    pub(super) fn coarse_steps(&mut self, rates: &[f64]) -> Result<(), Halt> {
        let connections = self.base.plan.connections;
        let repeat = self.plan.repeat;
        let visits = search::visit_order(rates.len(), repeat, self.plan.order, self.base.plan.seed);
        let total = visits.len();
        // The lowest rate seen past saturation: no rate above it is visited. A rate is
        // past it once most of its runs were, so one stall of a noisy host (a p99 over
        // --stop-at at a low rate) does not end the sweep.
        let mut ceiling: Option<f64> = None;
        let mut saturated_runs = vec![0usize; rates.len()];
        for (k, &(i, run)) in visits.iter().enumerate() {
            let rate = rates[i];
            if ceiling.is_some_and(|c| rate > c) {
                continue;
            }
            let m = self.measure(Kind::Step, Some(rate), connections, run)?;
            self.say(&Line::Step {
                index: k + 1,
                total,
                rate_per_sec: rate,
                run: (run, repeat),
                measurement: &m,
                left_secs: self.budget_left(),
            })?;
            let p99 = m.report.response().map_or(0, |l| l.p99_ns);
            let saturated = crate::judge::saturation::saturation(
                rate,
                (
                    crate::judge::saturation::achieved_fraction(&m.report),
                    crate::judge::saturation::replies_fraction(&m.report),
                ),
                p99,
                self.report.plan.stop_at_ns,
            );
            if self.plan.rate_capped && run == 0 {
                let capped = self.measure(Kind::RateCapped, Some(rate), connections, 0)?;
                self.say(&Line::RateCapped {
                    rate_per_sec: rate,
                    measurement: &capped,
                })?;
            }
            let Some(why) = saturated else { continue };
            saturated_runs[i] += 1;
            if !crate::judge::saturation::past_saturation(saturated_runs[i], repeat)
                || ceiling.is_some_and(|c| c <= rate)
            {
                continue;
            }
            ceiling = Some(rate);
            self.past_saturation = true;
            if visits[k + 1..].iter().any(|&(j, _)| rates[j] > rate) {
                self.say(&Line::Stopping {
                    order: self.plan.order,
                    repeat,
                    rate_per_sec: rate,
                    why: &why,
                })?;
                self.report.stopped = Some(why);
                self.save_now()?;
            }
        }
        Ok(())
    }

    /// Steps above the highest of `rates`, each [`BEYOND`] times the last, at most
    /// [`SATURATION_PROBES`], while no step saturated (see [`SATURATION_PROBES`]).
    pub(super) fn reach_saturation(&mut self, rates: &[f64]) -> Result<(), Halt> {
        let Some(mut top) = rates.iter().copied().reduce(f64::max) else {
            return Ok(());
        };
        for _ in 0..SATURATION_PROBES {
            if self.past_saturation
                || self
                    .report
                    .steps
                    .iter()
                    .any(crate::judge::saturation::saturated)
            {
                break;
            }
            top = (top * BEYOND).round();
            self.say(&Line::Beyond {
                rate_per_sec: top,
                factor: BEYOND,
            })?;
            self.report.plan.rates_per_sec.push(top);
            self.coarse_steps(&[top])?;
        }
        Ok(())
    }
}

impl Sweeper<'_> {
    /// The open-loop phases: the closed-loop maximum that places fractional rates, the
    /// coarse steps, steps up to saturation, and the capacity search.
    pub(super) fn open_loop_phases(&mut self) -> Result<(), Halt> {
        let rates: Vec<f64> = match self.plan.rates.clone() {
            Rates::Absolute(v) => v,
            Rates::OfClosedLoopMax(fractions) => {
                let connections = self.base.plan.connections;
                let max = self.measure(Kind::ClosedLoopMax, None, connections, 0)?;
                let throughput = max.report.throughput_per_sec;
                self.say(&Line::ClosedLoopMax {
                    connections,
                    throughput_per_sec: throughput,
                })?;
                if throughput < 1.0 {
                    return Err(Halt::Failed(format!(
                        "the closed-loop run completed {throughput:.1} req/s; no rates to sweep"
                    )));
                }
                let rates: Vec<f64> = fractions
                    .iter()
                    .map(|f| (f * throughput).round().max(1.0))
                    .collect();
                self.report.plan.rates_per_sec = rates.clone();
                rates
            }
        };
        self.coarse_steps(&rates)?;
        if matches!(self.plan.rates, Rates::OfClosedLoopMax(_)) {
            self.reach_saturation(&rates)?;
        }
        if !self.plan.slos.is_empty() {
            self.search()?;
        } else if self.plan.repeat > 1 || self.plan.order == Order::Shuffle {
            self.print_steps()?;
        }
        Ok(())
    }
}
