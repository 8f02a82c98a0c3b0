//! A sweep's CSV files: `sweep.csv`, one row per measurement, metric and percentile, in
//! the order of [`by_kind_and_rate`]; and `steps.csv`, one row per step and objective,
//! with the pooled share over the bound that decided it.

use std::fmt::Write as _;

use crate::report::Latency;
use crate::report::Percentile::{self, P50, P90, P95, P99, P99_9, P99_99};
use crate::report::sweep::{Exceedance, StepCheck, StepSummary, SweepReport, by_kind_and_rate};
use crate::stats::confidence::Ci95;

/// The CSV header: one row per measurement, metric and percentile. `repeat` is the
/// run's index among its rate's repeats, `ci95_*` its own interval of the percentile
/// (empty where none, and the high end empty where unbounded), `slo_verdict` its rate's
/// verdict over every run there; the bottleneck stays the last column.
pub const CSV_HEADER: &str = r#""kind","target_rps","connections","achieved_rps","throughput_rps","slo_met","metric","percentile","latency_ms","valid","repeat","ci95_low_ms","ci95_high_ms","slo_verdict","bottleneck""#;

/// The percentiles of a CSV row, with the accessor of each and its interval.
type Pick = fn(&Latency) -> f64;
type PickCi = fn(&Latency) -> Option<Ci95>;
const CSV_PERCENTILES: [(&str, Pick, PickCi); 9] = [
    ("min", |l| l.min_ns as f64, |_| None),
    ("p50", |l| value(l, P50), |l| l.at(P50).ci95),
    ("p90", |l| value(l, P90), |l| l.at(P90).ci95),
    ("p95", |l| value(l, P95), |l| l.at(P95).ci95),
    ("p99", |l| value(l, P99), |l| l.at(P99).ci95),
    ("p99.9", |l| value(l, P99_9), |l| l.at(P99_9).ci95),
    ("p99.99", |l| value(l, P99_99), |l| l.at(P99_99).ci95),
    ("max", |l| l.max_ns as f64, |_| None),
    ("mean", |l| l.mean_ns, |_| None),
];

/// The value of `p` in `l`, nanoseconds.
fn value(l: &Latency, p: Percentile) -> f64 {
    l.at(p).value_ns as f64
}

/// The whole CSV file for `report`.
pub fn csv(report: &SweepReport) -> String {
    let mut out = String::new();
    out.push_str(CSV_HEADER);
    out.push('\n');
    for run in by_kind_and_rate(&report.runs) {
        let target = run
            .target_rate_per_sec
            .map(|t| format!("{t:.0}"))
            .unwrap_or_default();
        let slo = run
            .slo
            .as_ref()
            .map(|v| v.met.to_string())
            .unwrap_or_default();
        let bottleneck = run
            .report
            .bottleneck
            .as_ref()
            .map_or("", |b| b.verdict.name());
        let step_verdict = report
            .steps
            .iter()
            .filter(|_| run.kind.is_open_loop())
            .find(|s| Some(s.target_rate_per_sec) == run.target_rate_per_sec)
            .and_then(|s| s.slo.as_ref())
            .map_or("", |v| v.verdict.name());
        for (metric, latency) in &run.report.latency {
            for (name, value, ci) in CSV_PERCENTILES {
                let (low, high) = match ci(latency) {
                    Some(Ci95(low, high)) => (
                        format!("{:.6}", low as f64 / 1e6),
                        high.map(|h| format!("{:.6}", h as f64 / 1e6))
                            .unwrap_or_default(),
                    ),
                    None => (String::new(), String::new()),
                };
                let _ = writeln!(
                    out,
                    "\"{}\",\"{target}\",\"{}\",\"{:.1}\",\"{:.1}\",\"{slo}\",\"{metric}\",\"{name}\",\"{:.6}\",\"{}\",\"{}\",\"{low}\",\"{high}\",\"{step_verdict}\",\"{bottleneck}\"",
                    run.kind.name(),
                    run.connections,
                    run.report.achieved_rate_per_sec,
                    run.report.throughput_per_sec,
                    value(latency) / 1e6,
                    run.report.valid,
                    run.repeat
                );
            }
        }
    }
    out
}

/// The header of `steps.csv`: one row per open-loop step and objective. `share_over` is
/// E, the replies over the objective's bound pooled over the step's runs, with the
/// bounds of the decision (`share_over_low`, `share_over_high`) and what the objective
/// allows (`share_allowed`, `1 - Q` for `pQ`); empty where a step kept no windows.
pub const STEPS_CSV_HEADER: &str = r#""target_rps","runs","invalid_runs","achieved_rps","slo","latency_ms","ci95_low_ms","ci95_high_ms","share_over","share_over_low","share_over_high","share_allowed","replies","over","visits","verdict","step_verdict","bottleneck""#;

/// The whole `steps.csv` for `report`: empty but for its header without `--slo`.
pub fn steps_csv(report: &SweepReport) -> String {
    let mut out = String::new();
    out.push_str(STEPS_CSV_HEADER);
    out.push('\n');
    for step in &report.steps {
        let Some(verdict) = &step.slo else { continue };
        for check in &verdict.checks {
            out.push_str(&step_row(
                step,
                check,
                verdict.invalid_runs,
                verdict.verdict.name(),
            ));
        }
    }
    out
}

/// One step's row for one objective.
fn step_row(step: &StepSummary, check: &StepCheck, invalid: usize, step_verdict: &str) -> String {
    let ms = |ns: u64| format!("{:.6}", ns as f64 / 1e6);
    let (low, high) = match check.summary.ci95_ns {
        Some(Ci95(low, high)) => (ms(low), high.map(ms).unwrap_or_default()),
        None => (String::new(), String::new()),
    };
    let e = check.exceedance;
    // Each of E's figures, empty where the step kept no windows.
    let of = |f: fn(Exceedance) -> String| e.map(f).unwrap_or_default();
    format!(
        "\"{:.0}\",\"{}\",\"{invalid}\",\"{:.1}\",\"{}\",\"{}\",\"{low}\",\"{high}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{step_verdict}\",\"{}\"\n",
        step.target_rate_per_sec,
        step.runs,
        step.achieved_rate_per_sec,
        check.slo,
        ms(check.summary.value_ns),
        of(|e| format!("{:.6}", e.fraction)),
        of(|e| format!("{:.6}", e.low)),
        of(|e| format!("{:.6}", e.high)),
        of(|e| format!("{:.6}", e.limit)),
        of(|e| e.replies.to_string()),
        of(|e| e.over.to_string()),
        of(|e| e.visits.to_string()),
        check.verdict.name(),
        step.bottleneck.map_or("", |b| b.name()),
    )
}
