//! A plain run under way ([`Session`]): each test in turn, each `--repeat` and each loop
//! of `--contrast`, exported as it ends; the repeats' summaries and the contrast; the
//! objectives' verdicts that decide the exit; and the closing write.

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;

use super::{Status, contrast_loops, measure, metrics};
use crate::config::RunConfig;
use crate::drive::Cancel;
use crate::export::hlog::HlogWriter;
use crate::export::outputs::Outputs;
use crate::export::run_lines;
use crate::net::cluster::ClusterMap;
use crate::report::RunReport;

/// A plain run under way: what it measures with, the report so far, and where each test's
/// report goes as it ends.
pub(super) struct Session<'c, 'a> {
    pub(super) config: &'c RunConfig,
    pub(super) cluster: Option<Arc<ClusterMap>>,
    pub(super) cancel: &'c Cancel,
    pub(super) stderr: &'a mut dyn Write,
    pub(super) stderr_is_terminal: bool,
    /// The live Prometheus page, if served.
    pub(super) metrics: Option<&'a metrics::Metrics>,
    /// `--hdr-log`, written as intervals end.
    pub(super) hlog: Option<HlogWriter<'a>>,
    /// When the run began: the log counts each test's intervals from it.
    pub(super) run_start: Instant,
    pub(super) report: RunReport,
    pub(super) outputs: Outputs<'a>,
}

impl Session<'_, '_> {
    /// Every test in order (over and over with `-l`), until one stops the run or Ctrl+C
    /// comes; returns how the run ended.
    pub(super) fn run_tests(&mut self) -> Result<Status> {
        let mut status = Status::Completed;
        loop {
            for index in 0..self.config.plan.workload.tests.len() {
                // Ctrl+C between two tests (a looping run's only way to end) ends the run
                // as interrupted, as it does during a test.
                if self.cancel.is_cancelled() {
                    return Ok(Status::Interrupted);
                }
                if let Some(end) = self.test(index, &mut status)? {
                    return Ok(end);
                }
            }
            if !self.config.loop_forever {
                return Ok(status);
            }
        }
    }

    /// Test `index`: each repeat of the test, and with --contrast of its two closed loops
    /// after it, each exported as it ends; then the repeats' summaries and the contrast.
    /// Marks `status` failed when no request of a run got a reply other than an error or
    /// its server could not be reached at its end, and invalid under `--strict` when a
    /// check fails; returns how the run ends when a measurement stopped early.
    fn test(&mut self, index: usize, status: &mut Status) -> Result<Option<Status>> {
        let config = self.config;
        let loops = if config.contrast {
            contrast_loops(config)
        } else {
            vec![(None, config.clone())]
        };
        let first = self.report.tests.len();
        let repeats = config.repeat.max(1);
        let runs = (1..=repeats).flat_map(|r| loops.iter().map(move |l| (r, l)));
        for (repeat, (kind, loop_config)) in runs {
            let repeat = (repeats > 1).then_some(repeat);
            let stopped_early = self.measure_once(loop_config, index, kind.as_deref(), repeat)?;
            let last = self.report.tests.last();
            // The first test that got nothing names the failure; a failed check under
            // --strict is the lesser one.
            if let Some(reason) = last.and_then(run_lines::nothing_succeeded) {
                if !matches!(status, Status::NothingSucceeded(_)) {
                    *status = Status::NothingSucceeded(reason);
                }
            } else if let Some(reason) = last.and_then(run_lines::server_lost) {
                if !matches!(status, Status::NothingSucceeded(_) | Status::Failed(_)) {
                    *status = Status::Failed(reason);
                }
            } else if let Some(reason) = last
                .filter(|_| repeats == 1)
                .and_then(|t| objective_missed(t, config.strict))
            {
                if matches!(status, Status::Completed | Status::Invalid) {
                    *status = Status::ObjectiveMissed(reason);
                }
            } else if config.strict
                && last.is_some_and(|t| !t.valid)
                && *status == Status::Completed
            {
                *status = Status::Invalid;
            }
            if let Some(reason) = stopped_early {
                return Ok(Some(if reason == "interrupted" {
                    Status::Interrupted
                } else {
                    Status::Failed(reason)
                }));
            }
        }
        self.summarise(index, first, loops.len());
        // With repeats, the objectives are decided on all of them pooled, not run by run.
        let pooled = self.report.repeats.last().filter(|_| repeats > 1);
        if let Some(reason) = pooled.and_then(|s| pooled_objective_missed(s, config.strict))
            && matches!(status, Status::Completed | Status::Invalid)
        {
            *status = Status::ObjectiveMissed(reason);
        }
        Ok(None)
    }

    /// Measures test `index` once as `loop_config` says (`kind` names a contrast's closed
    /// loop; `repeat` is its place among `--repeat`'s), adds it to the report and exports
    /// it; returns why it stopped early, if it did.
    fn measure_once(
        &mut self,
        loop_config: &RunConfig,
        index: usize,
        kind: Option<&str>,
        repeat: Option<u32>,
    ) -> Result<Option<String>> {
        let test_offset = self.run_start.elapsed();
        let name = &loop_config.plan.workload.tests[index].name;
        let live = self.metrics.map(|metrics| metrics::Scope {
            metrics,
            labels: vec![(
                "test".to_string(),
                kind.map_or_else(|| name.clone(), |kind| format!("{name} ({kind})")),
            )],
        });
        let (mut test_report, stopped_early) = measure(
            loop_config,
            self.cluster.as_ref(),
            index,
            self.cancel,
            &mut *self.stderr,
            self.stderr_is_terminal,
            self.hlog.as_mut(),
            test_offset,
            live,
        )?;
        if let Some(kind) = kind {
            test_report.name = format!("{} ({kind})", test_report.name);
        } else if !loop_config.slos.is_empty() {
            // The objectives are the test's own: a contrast's closed loops are beside it.
            test_report.slo = Some(crate::judge::slo::judge(&test_report, &loop_config.slos));
        }
        if repeat.is_some() {
            test_report.repeat = repeat;
        }
        self.report.tests.push(test_report);
        let (report, test) = (
            &self.report,
            &self.report.tests[self.report.tests.len() - 1],
        );
        self.outputs.test_done(report, test)?;
        Ok(stopped_early)
    }

    /// After test `index`, whose runs begin at `first` in the report, `loops` to a repeat:
    /// each loop's repeats, summarised; the contrast of the first repeat's loops.
    fn summarise(&mut self, index: usize, first: usize, loops: usize) {
        let config = self.config;
        let report = &mut self.report;
        if config.repeat.max(1) > 1 {
            for l in 0..loops {
                let runs: Vec<&crate::report::TestReport> = report.tests[first..]
                    .iter()
                    .skip(l)
                    .step_by(loops)
                    .collect();
                let mut summary = crate::judge::summary::repeats(&runs);
                // The objectives are the test's own loop's, the first (see measure_once).
                if let Some(s) = summary.as_mut().filter(|_| l == 0) {
                    s.objectives = crate::judge::slo::judge_repeats(&runs, &config.slos);
                }
                report.repeats.extend(summary);
            }
        }
        if let ([open, capped, closed, ..], Some(rate)) =
            (&report.tests[first..], config.plan.own_rate_per_sec())
            && config.contrast
        {
            let contrast = crate::report::contrast::Contrast::of(
                &config.plan.workload.tests[index].name,
                rate,
                config.plan.connections,
                config.cap_pacing,
                [open, capped, closed],
            );
            report.contrasts.push(contrast);
        }
    }

    /// The run's end (or interruption): the closing sections, the whole `--json`, and
    /// the `--html` page.
    pub(super) fn finish(&mut self) -> Result<()> {
        self.outputs
            .end(crate::export::report::Report::Run(&self.report))?;
        Ok(())
    }
}

/// Why `test` ends the run with exit 1 under its objectives: one failed, or (`strict`)
/// one was left undecided; `None` when they passed or there are none.
fn objective_missed(test: &crate::report::TestReport, strict: bool) -> Option<String> {
    use crate::report::sweep::Verdict;
    let slo = test.slo.as_ref()?;
    let verdict = slo.verdict?;
    let judged = crate::export::objective_text::verdicts(slo);
    match verdict {
        Verdict::Fail => Some(format!("{} failed its objectives: {judged}", test.name)),
        Verdict::Uncertain if strict => Some(format!(
            "{} left its objectives undecided and --strict was given: {judged}",
            test.name
        )),
        _ => None,
    }
}

/// Why the repeats `summary` pooled end the run with exit 1 under their objectives (see
/// [`objective_missed`]).
fn pooled_objective_missed(
    summary: &crate::report::repeats::RepeatSummary,
    strict: bool,
) -> Option<String> {
    use crate::report::sweep::Verdict;
    let judged = summary.objectives.as_ref()?;
    let what = format!(
        "{} over its {} repeats pooled",
        summary.test, summary.repeats
    );
    match judged.verdict {
        Verdict::Fail => Some(format!("{what} failed its objectives: {}", judged.why)),
        Verdict::Uncertain if strict => Some(format!(
            "{what} left its objectives undecided and --strict was given: {}",
            judged.why
        )),
        _ => None,
    }
}
