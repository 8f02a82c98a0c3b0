//! The SLO search of a sweep, after its coarse steps, spending visits where the answer
//! is: each rate it asks about is measured until its pooled test decides it (visits added
//! up to the test's next look, to a cap); the highest rate first, then the lowest (halved
//! while it does not pass), then a bisection on log(rate) between the highest pass and the
//! lowest rate above it that did not pass, and last a confirmation of the capacity on
//! fresh visits only, interleaved with visits to the rate above it so both see the same
//! weather (the bisection resumes below a capacity that did not hold). The result is
//! written after every rate, so an interrupted search still leaves one. The decisions
//! are `judge`'s; the order of rates is [`super::search`]'s.

use super::{Sweeper, search};
use crate::app::Halt;
use crate::export::sweep_lines::Line;
use crate::judge::capacity::Finding;
use crate::report::sweep::{Kind, Measurement, SloResult, SpeedCapacity, Verdict};
use crate::stats::exceedance;

/// How many times the search halves the lowest rate when it did not pass: down to an
/// eighth of it, a few more points rather than a sweep of its own.
pub const HALVINGS: usize = 3;
/// Most rates the bisection decides: enough for a factor of 20 to 10% and then some.
pub const MOST_BISECTIONS: usize = 8;
/// Most uncertain rates above the capacity the search decides to bring the band's top
/// down.
const NARROWINGS: usize = 2;
/// The test's last look, where a rate the capacity hangs on stops being measured.
const LAST_LOOK: usize = exceedance::LAST_LOOK;
/// The last look for a rate measured only to narrow the band: one that sits near the
/// bound stays undecided at every look, and its visits there (a third of the main job's
/// time when two did) would only move the band's top, not the capacity. It comes before
/// the first look that may pass: such a rate is measured to fail or not at all.
const NARROWING_LOOK: usize = exceedance::LOOKS[1].visits;
/// Most runs at one rate beyond the test's last look, for runs left out as invalid.
const SPARE_RUNS: usize = 4;
/// Most times the search bisects again below a capacity that did not pass on fresh runs:
/// a rate at the service limit can stay undecided, and the answer is then under it.
const FALLBACKS: usize = 2;

impl Sweeper<'_> {
    /// Measures `rate` (as `kind`) until its step is decided: visits up to the pooled
    /// test's next look, again while undecided, until the look `last_look` (one of
    /// [`exceedance::LOOKS`]), or until most of its runs are the generator's. Returns
    /// the step's verdict.
    fn decide(&mut self, kind: Kind, rate: f64, last_look: usize) -> Result<Verdict, Halt> {
        self.spending.deciding = Some((rate, kind));
        loop {
            let (verdict, valid, runs, generator_limited) = self.state(rate, |_| true);
            if verdict != Verdict::Uncertain && runs > 0 {
                return Ok(verdict);
            }
            // The generator, not the server, decides what more runs would show.
            if generator_limited && runs >= exceedance::FIRST_LOOK {
                return Ok(verdict);
            }
            let Some(look) = exceedance::next_look(valid).filter(|&l| l <= last_look) else {
                return Ok(verdict);
            };
            let cap = last_look + SPARE_RUNS;
            let more = (look - valid).min(cap.saturating_sub(runs));
            if more == 0 {
                return Ok(verdict);
            }
            // Shuffled with one visit to each rate around the capacity: weather in the
            // round does not line up with one rate, and the runs near the crossing that
            // the estimate needs come at no extra round.
            let others = if more > 1 {
                self.neighbours(rate)
            } else {
                Vec::new()
            };
            let seed = super::search::run_seed(self.base.plan.seed, self.report.runs.len());
            let mut i = 0;
            for r in super::search::block(rate, more, &others, seed) {
                if r == rate {
                    self.visit(kind, rate, (runs + i, runs + more))?;
                    i += 1;
                } else {
                    let done = self.state(r, |_| true).2;
                    self.visit(Kind::Search, r, (done, done + 1))?;
                }
            }
            self.say_verdict(rate, |_| true)?;
        }
    }

    /// The rates around the capacity already measured, other than `rate`: the highest
    /// pass and the lowest rate above it that did not pass.
    fn neighbours(&self, rate: f64) -> Vec<f64> {
        let points = crate::judge::capacity::points(&self.report.steps);
        let Some(pass) = self.finding().and_then(|f| f.capacity) else {
            return Vec::new();
        };
        let above = points
            .iter()
            .filter(|p| p.rate > pass && p.verdict != Verdict::Pass)
            .map(|p| p.rate)
            .reduce(f64::min);
        std::iter::once(pass)
            .chain(above)
            .filter(|&r| r != rate)
            .collect()
    }

    /// One visit at `rate`, reported as `run` of its rate's runs.
    fn visit(&mut self, kind: Kind, rate: f64, run: (usize, usize)) -> Result<Measurement, Halt> {
        let label = match kind {
            Kind::Confirm => "confirm",
            _ => "search",
        };
        let m = self.measure(kind, Some(rate), self.base.plan.connections, run.0)?;
        self.say(&Line::Search {
            label,
            rate_per_sec: rate,
            run,
            measurement: &m,
            left_secs: self.budget_left(),
        })?;
        Ok(m)
    }

    /// The verdict at `rate` over its runs that `keep` keeps, with how many of them are
    /// valid visits, how many there are, and whether the generator limited them.
    pub(super) fn state(
        &self,
        rate: f64,
        keep: impl Fn(&Measurement) -> bool,
    ) -> (Verdict, usize, usize, bool) {
        let group = self.runs_at(rate, keep);
        if group.is_empty() {
            return (Verdict::Uncertain, 0, 0, false);
        }
        let v = crate::judge::slo::judge_step(
            &group,
            &self.plan.slos,
            crate::stats::exceedance::Clusters::Runs,
        );
        // Runs the host's weather ate count as not yet measured: the next look waits
        // for as many more.
        let owed = crate::judge::weather::weather_ate(&group);
        (
            v.verdict,
            (group.len() - v.invalid_runs).saturating_sub(owed),
            group.len(),
            v.generator_limited,
        )
    }

    /// Prints the verdict at `rate` over the runs `keep` keeps.
    fn say_verdict(&mut self, rate: f64, keep: impl Fn(&Measurement) -> bool) -> Result<(), Halt> {
        let group = self.runs_at(rate, keep);
        let v = crate::judge::slo::judge_step(
            &group,
            &self.plan.slos,
            crate::stats::exceedance::Clusters::Runs,
        );
        let runs = group.len();
        self.say(&Line::RateVerdict {
            rate_per_sec: rate,
            runs,
            verdict: v.verdict.name(),
            why: &v.why,
        })?;
        Ok(())
    }

    /// The open-loop runs at `rate` that `keep` keeps, in the order run.
    fn runs_at(&self, rate: f64, keep: impl Fn(&Measurement) -> bool) -> Vec<&Measurement> {
        self.report
            .runs
            .iter()
            .filter(|m| m.kind.is_open_loop() && m.target_rate_per_sec == Some(rate) && keep(m))
            .collect()
    }

    /// The capacity as the steps measured so far say.
    pub(super) fn finding(&self) -> Option<Finding> {
        crate::judge::capacity::capacity(&crate::judge::capacity::points(&self.report.steps))
    }

    /// Writes the SLO result for what was measured so far, so an interrupted search
    /// still leaves one.
    pub(super) fn record_slo(
        &mut self,
        searched: Option<f64>,
        confirmed: bool,
    ) -> Result<(), Halt> {
        if let Some(result) = self.slo_result(searched, confirmed) {
            self.report.slo = Some(result);
            self.save_now()?;
        }
        Ok(())
    }

    /// The SLO result the steps measured so far give; `None` before any was judged.
    pub(super) fn slo_result(&self, searched: Option<f64>, confirmed: bool) -> Option<SloResult> {
        let found = self.finding()?;
        let open: Vec<&Measurement> = self
            .report
            .runs
            .iter()
            .filter(|m| m.kind.is_open_loop())
            .collect();
        let visit_secs: f64 = open.iter().map(|m| m.report.measured_secs).sum();
        let landmarks = crate::judge::landmarks::landmarks(
            &self.report.steps,
            &self.report.runs,
            &self.plan.slos,
            self.base.plan.seed,
        );
        let capacity_speed = self
            .report
            .settings
            .replay
            .as_ref()
            .and_then(|r| r.recorded_rate_per_sec)
            .map(|recorded| SpeedCapacity::of(recorded, found.capacity, found.band));
        let (estimates, disturbed) = crate::judge::estimate::estimates(
            &self.report.runs,
            &self.plan.slos,
            self.base.plan.seed,
        );
        Some(SloResult {
            capacity_speed,
            slos: self.plan.slos.clone(),
            capacity_per_sec: found.capacity,
            capacity_band_per_sec: Some(found.band),
            limited_by: Some(found.limited_by),
            uncertain_per_sec: found.uncertain.clone(),
            searched_per_sec: searched,
            first_failing_per_sec: found.first_failing,
            confirmed,
            low_load_failing_per_sec: found.low_load_failing.clone(),
            capacity_exceedance: found.at_capacity,
            landmarks,
            estimates,
            disturbed,
            budget: self.budget_ended.clone(),
            visits: open.len(),
            visit_secs,
            span: Some(found.span()),
        })
    }

    /// The search (see the module doc).
    pub(super) fn search(&mut self) -> Result<(), Halt> {
        if self.finding().is_none() {
            return Ok(());
        }
        self.record_slo(None, false)?;
        let (lowest, highest) = match self.finding() {
            Some(f) => (f.lowest, f.highest),
            None => return Ok(()),
        };
        let mut exhausted: Vec<f64> = vec![highest];
        self.decide(Kind::Search, highest, LAST_LOOK)?;
        self.record_slo(None, false)?;
        if self.finding().and_then(|f| f.capacity) != Some(highest) {
            exhausted.push(lowest);
            self.decide(Kind::Search, lowest, LAST_LOOK)?;
            self.record_slo(None, false)?;
            for _ in 0..HALVINGS {
                let Some(rate) = self
                    .finding()
                    .as_ref()
                    .and_then(crate::judge::capacity::below_lowest)
                else {
                    break;
                };
                self.decide(Kind::Search, rate, LAST_LOOK)?;
                self.record_slo(None, false)?;
            }
        }
        let (searched, confirmed) = self.bisect_and_confirm(&mut exhausted)?;
        self.record_slo(searched, confirmed)?;
        self.print_steps()?;
        if let Some(said) = crate::export::capacity_text::sentence(&self.report) {
            self.say(&Line::Said(&said))?;
        }
        Ok(())
    }

    /// Bisects to the capacity (see [`Self::bisect`]) and confirms it on fresh visits
    /// only (the search kept the rates whose visits happened to be calm). When they do
    /// not pass, the rate is set aside and the search bisects again below it, between the
    /// capacity the pooled runs then give and the rates above, at most [`FALLBACKS`]
    /// times: a rate at the server's limit can stay undecided however long it is
    /// measured, and the answer is then the highest rate under it that holds, to the
    /// resolution, not the coarse step below. Returns the rate the search last named and
    /// whether the capacity the finding now names passed on fresh visits alone.
    fn bisect_and_confirm(
        &mut self,
        exhausted: &mut Vec<f64>,
    ) -> Result<(Option<f64>, bool), Halt> {
        let mut searched = None;
        let mut tried: Vec<f64> = Vec::new();
        while tried.len() <= FALLBACKS {
            self.bisect(exhausted)?;
            let Some(found) = self.finding() else {
                break;
            };
            let Some(capacity) = found.capacity else {
                break;
            };
            searched = Some(capacity);
            if tried.contains(&capacity) {
                break;
            }
            tried.push(capacity);
            exhausted.push(capacity);
            // Fresh runs pooled with the search's may move the capacity even when they
            // pass: then the rate it moved to is searched and confirmed in turn.
            let passed = self.confirm_at(capacity, found.band.1)?;
            if passed && self.finding().and_then(|f| f.capacity) == Some(capacity) {
                return Ok((searched, true));
            }
        }
        Ok((searched, false))
    }

    /// Bisects on log(rate) between the highest pass and the lowest rate above it that
    /// did not pass, deciding each rate it asks about, to the resolution; then decides
    /// the uncertain rates under the band's top, lowest first, at most [`NARROWINGS`]:
    /// a coarse step's two runs rarely decide even a rate far past the capacity, and
    /// one more look often does, bringing the band's top down to it.
    fn bisect(&mut self, exhausted: &mut Vec<f64>) -> Result<(), Halt> {
        let mut narrowed = 0;
        for _ in 0..MOST_BISECTIONS + NARROWINGS {
            let points = crate::judge::capacity::points(&self.report.steps);
            let (rate, last_look) =
                match search::next_probe(&points, self.plan.resolution, exhausted) {
                    Some(search::Probe::Bisect(rate)) => (rate, LAST_LOOK),
                    Some(search::Probe::Narrow(rate)) if narrowed < NARROWINGS => {
                        narrowed += 1;
                        (rate, NARROWING_LOOK)
                    }
                    _ => break,
                };
            // Decided or measured to its cap: either way not asked again.
            self.decide(Kind::Search, rate, last_look)?;
            exhausted.push(rate);
            self.record_slo(self.finding().and_then(|f| f.capacity), false)?;
        }
        Ok(())
    }

    /// Measures `capacity` on fresh visits, with one visit to `above` (the lowest
    /// failing rate above it) amid each round of them; whether the fresh visits alone
    /// pass.
    fn confirm_at(&mut self, capacity: f64, above: Option<f64>) -> Result<bool, Halt> {
        let fresh = |m: &Measurement| m.kind == Kind::Confirm;
        self.spending.deciding = Some((capacity, Kind::Confirm));
        loop {
            let (verdict, valid, runs, generator_limited) = self.state(capacity, fresh);
            if runs > 0 && verdict != Verdict::Uncertain {
                self.say_verdict(capacity, fresh)?;
                return Ok(verdict == Verdict::Pass);
            }
            let Some(look) = exceedance::next_look(valid) else {
                return Ok(false);
            };
            if runs >= LAST_LOOK + SPARE_RUNS || (generator_limited && valid + SPARE_RUNS <= runs) {
                return Ok(false);
            }
            let round = look - valid;
            for i in 0..round {
                self.visit(Kind::Confirm, capacity, (runs + i, runs + round))?;
                // One visit above per round, amid its visits: both rates see the same
                // weather, for a fraction of the cost of pairing every visit (a rate
                // at the server's limit can take the test's every look).
                // Counted with the rate's search runs: only the capacity's own
                // verdict rests on its fresh runs alone.
                if let Some(rate) = above.filter(|_| i == round / 2) {
                    let done = self.state(rate, |_| true).2;
                    self.visit(Kind::Search, rate, (done, done + 1))?;
                }
            }
            if runs + look - valid > 0 {
                self.say_verdict(capacity, fresh)?;
            }
        }
    }
}
