//! The SLO search of a sweep, after its coarse steps: rates below the lowest while none
//! passed, the bisection from the capacity the steps show to the next rate that did not
//! pass (an uncertain point measured once more), the re-measurement of the capacity, and
//! the result with its band, written after every point so an interrupted search still
//! leaves one. The decisions are [`super::search`]'s.

use super::{CONFIRM_TRIES, REMEASURE_UNCERTAIN, Sweeper, search};
use crate::app::{Campaign, Halt};
use crate::export::sweep_lines::Line;
use crate::judge::capacity::Finding;
use crate::report::sweep::{Kind, SloResult, Verdict};

/// How many times the search halves the lowest rate when no rate passed: down to an
/// eighth of it, a few more points rather than a sweep of its own.
pub const HALVINGS: usize = 3;

impl Sweeper<'_> {
    /// Measures `rate` `--repeat` more times for `kind` (a search point or a
    /// re-measurement) and returns the verdict of every run there together.
    fn measure_point(&mut self, kind: Kind, rate: f64) -> Result<Verdict, Halt> {
        let label = match kind {
            Kind::Confirm => "re-measure",
            _ => "search",
        };
        let done = self
            .report
            .runs
            .iter()
            .filter(|m| m.kind == kind && m.target_rate_per_sec == Some(rate))
            .count();
        let repeat = self.plan.repeat;
        for run in done..done + repeat {
            let m = self.measure(kind, Some(rate), self.base.plan.connections, run)?;
            self.say(&Line::Search {
                label,
                rate_per_sec: rate,
                run: (run, done + repeat),
                measurement: &m,
            })?;
        }
        let step = self
            .report
            .steps
            .iter()
            .find(|s| s.target_rate_per_sec == rate)
            .and_then(|s| Some((s.runs, s.slo.as_ref()?.verdict, s.slo.as_ref()?.why.clone())));
        let Some((runs, verdict, why)) = step else {
            return Ok(Verdict::Uncertain);
        };
        if runs > 1 {
            self.say(&Line::RateVerdict {
                rate_per_sec: rate,
                runs,
                verdict: verdict.name(),
                why: &why,
            })?;
        }
        Ok(verdict)
    }

    /// The capacity as the steps measured so far say.
    fn finding(&self) -> Option<Finding> {
        crate::judge::capacity::capacity(&crate::judge::capacity::points(&self.report.steps))
    }

    /// Writes the SLO result for what was measured so far, so an interrupted search
    /// still leaves one.
    fn record_slo(&mut self, searched: Option<f64>, confirmed: bool) -> Result<(), Halt> {
        if let Some(result) = self.slo_result(searched, confirmed) {
            self.report.slo = Some(result);
            self.save_report()?;
        }
        Ok(())
    }

    /// The SLO result the steps measured so far give; `None` before any was judged.
    pub(super) fn slo_result(&self, searched: Option<f64>, confirmed: bool) -> Option<SloResult> {
        let found = self.finding()?;
        let objectives = self
            .plan
            .slos
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" and ");
        Some(SloResult {
            slos: self.plan.slos.clone(),
            capacity_per_sec: found.capacity,
            capacity_band_per_sec: Some(found.band),
            limited_by: Some(found.limited_by),
            uncertain_per_sec: found.uncertain.clone(),
            searched_per_sec: searched,
            first_failing_per_sec: found.first_failing,
            confirmed,
            summary: crate::export::sweep_text::summary(&objectives, &found, confirmed),
        })
    }

    /// Halves the lowest rate while none passed ([`HALVINGS`] times at most), bisects
    /// from the capacity up to the next rate that did not pass, re-measuring uncertain
    /// points, then re-measures the capacity until one holds.
    pub(super) fn search(&mut self) -> Result<(), Halt> {
        if self.finding().is_none() {
            return Ok(());
        }
        self.record_slo(None, false)?;
        for _ in 0..HALVINGS {
            let Some(rate) = self
                .finding()
                .as_ref()
                .and_then(crate::judge::capacity::below_lowest)
            else {
                break;
            };
            self.measure_point(Kind::Search, rate)?;
            self.record_slo(None, false)?;
        }
        let points = crate::judge::capacity::points(&self.report.steps);
        let mut searched = self.finding().and_then(|f| f.capacity);
        if let Some(mut bisection) = search::search_bracket(&points, self.plan.resolution) {
            while let Some(rate) = bisection.next() {
                let mut verdict = self.measure_point(Kind::Search, rate)?;
                let mut again = 0;
                while verdict == Verdict::Uncertain
                    && self.plan.repeat > 1
                    && again < REMEASURE_UNCERTAIN
                {
                    verdict = self.measure_point(Kind::Search, rate)?;
                    again += 1;
                }
                bisection.record_verdict(rate, verdict);
                self.record_slo(Some(bisection.pass), false)?;
            }
            searched = Some(bisection.pass);
        }
        // Re-measure the capacity; when it no longer passes, the next one down is tried.
        let mut confirmed = false;
        for _ in 0..CONFIRM_TRIES {
            let Some(capacity) = self.finding().and_then(|f| f.capacity) else {
                break;
            };
            if self.measure_point(Kind::Confirm, capacity)? == Verdict::Pass {
                confirmed = self.finding().and_then(|f| f.capacity) == Some(capacity);
                break;
            }
            self.record_slo(searched, false)?;
        }
        self.record_slo(searched, confirmed)?;
        self.print_steps()?;
        if let Some(result) = &self.report.slo {
            let summary = result.summary.clone();
            self.say(&Line::Said(&summary))?;
        }
        Ok(())
    }
}
