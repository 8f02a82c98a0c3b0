//! A sweep's lines on standard output: one per run (rates, response percentiles, its
//! verdict with the interval it rests on, the bottleneck), and the table of the steps by
//! rate that ends a sweep. The numbers are [`super`]'s; printing them is this file's.

use crate::judge::summary::steps_of;
use crate::report::sweep::{Measurement, SloVerdict, SweepReport};
use crate::stats::confidence::Ci95;

impl Measurement {
    /// One line about a measurement: rates, response percentiles and the SLO verdict.
    pub fn describe(&self) -> String {
        let m = self;
        let r = &m.report;
        let mut line = format!(
            "achieved {:.0} req/s, {:.0} replies/s",
            r.achieved_rate_per_sec, r.throughput_per_sec
        );
        if let Some(l) = r.response() {
            let ms = |ns: u64| ns as f64 / 1e6;
            line.push_str(&format!(
                ", response p50 {:.3} p99 {:.3} p99.9 {:.3} max {:.3} ms",
                ms(l.p50_ns),
                ms(l.p99_ns),
                ms(l.p99_9_ns),
                ms(l.max_ns)
            ));
        }
        if let Some(v) = &m.slo {
            line.push_str(&slo_clause(v));
        }
        if let Some(b) = &r.bottleneck {
            line.push_str("; bottleneck: ");
            line.push_str(b.verdict.name());
        }
        if !r.valid {
            line.push_str("; INVALID: ");
            line.push_str(&r.why_invalid());
        }
        line
    }
}

/// The steps by rate as rows of cells, for the text table and the HTML page alike.
pub struct StepsTable {
    /// What the table holds, said above it.
    pub caption: String,
    /// The column names.
    pub header: Vec<String>,
    /// One row per rate, as many cells as `header`.
    pub rows: Vec<Vec<String>>,
    /// The leading columns that hold numbers (right-aligned); the rest are words.
    pub numeric: usize,
}

/// The steps by rate: runs, median achieved rate, and per objective (or p99 without one)
/// the median with the 95% interval decisions use, then the verdict and the bottleneck
/// most runs named; `None` when no step ran.
pub fn steps_table(report: &SweepReport) -> Option<StepsTable> {
    let steps = steps_of(report);
    if steps.is_empty() {
        return None;
    }
    // The objectives' percentiles, or p99 alone.
    let columns: Vec<(String, f64)> = if report.plan.slos.is_empty() {
        vec![("p99".to_string(), 99.0)]
    } else {
        report
            .plan
            .slos
            .iter()
            .map(|s| (s.percentile_label(), s.percentile))
            .collect()
    };
    let runs = steps.iter().map(|s| s.runs).max().unwrap_or(1);
    let caption = format!(
        "by rate ({}; ms, interval of the pooled test, runs as clusters):",
        if runs > 1 {
            "at each rate the runs its verdict counts pooled"
        } else {
            "one run each"
        }
    );
    let mut header = vec!["rate/s".to_string(), "runs".into(), "achieved/s".into()];
    for (label, _) in &columns {
        header.push(label.clone());
        header.push("95%".into());
    }
    header.extend(["SLO".to_string(), "bottleneck".into()]);
    let mut rows: Vec<Vec<String>> = Vec::new();
    for step in &steps {
        let mut row = vec![
            format!("{:.0}", step.target_rate_per_sec),
            step.runs.to_string(),
            format!("{:.0}", step.achieved_rate_per_sec),
        ];
        for (i, (_, percentile)) in columns.iter().enumerate() {
            let check = step
                .slo
                .as_ref()
                .and_then(|v| v.checks.get(i))
                .map(|c| c.summary.clone());
            let summary = check.or_else(|| {
                let key = crate::report::Percentile::ALL
                    .into_iter()
                    .find(|p| (p.quantile() * 100.0 - percentile).abs() < 1e-9)?
                    .key();
                step.response.get(key).cloned()
            });
            match summary {
                Some(s) => {
                    row.push(ms3(s.value_ns));
                    row.push(
                        interval_text(s.ci95_ns)
                            .trim_start_matches("95% ")
                            .to_string(),
                    );
                }
                None => row.extend(["-".to_string(), "-".into()]),
            }
        }
        row.push(
            step.slo
                .as_ref()
                .map_or("-", |v| v.verdict.name())
                .to_string(),
        );
        row.push(step.bottleneck.map_or("-", |b| b.name()).to_string());
        rows.push(row);
    }
    Some(StepsTable {
        caption,
        header,
        rows,
        numeric: 3 + 2 * columns.len(),
    })
}

/// Writes the steps by rate ([`steps_table`]) as a table of aligned columns.
pub fn write_steps(out: &mut dyn std::io::Write, report: &SweepReport) -> std::io::Result<()> {
    let Some(table) = steps_table(report) else {
        return Ok(());
    };
    writeln!(out, "{}", table.caption)?;
    let rows: Vec<&Vec<String>> = std::iter::once(&table.header).chain(&table.rows).collect();
    let widths: Vec<usize> = (0..table.header.len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, w))| {
                // Numbers right-aligned, words left.
                if c < table.numeric {
                    format!("{cell:>w$}")
                } else {
                    format!("{cell:<w$}")
                }
            })
            .collect();
        writeln!(out, "  {}", cells.join("  ").trim_end())?;
    }
    // The runs a step's figures and verdict leave out, by why.
    for step in &report.steps {
        let left = super::reasons::left_out_text(&step.left_out);
        if !left.is_empty() {
            writeln!(out, "  at {:.0} req/s: {left}", step.target_rate_per_sec)?;
        }
    }
    Ok(())
}

/// "; SLO pass: p99 0.412 ms (95% 0.398-0.431)" for a run's verdict, or the words of a
/// file written before verdicts had intervals.
fn slo_clause(v: &SloVerdict) -> String {
    let Some(verdict) = v.verdict else {
        return match (v.met, v.valid) {
            (true, _) => "; SLO met",
            (false, true) => "; SLO missed",
            (false, false) if v.checks.iter().all(|c| c.met) => {
                "; objectives held but sends fell short of the schedule"
            }
            (false, false) => "; SLO missed (rate not achieved or requests not sent)",
        }
        .to_string();
    };
    let checks: Vec<String> = v
        .checks
        .iter()
        .map(|c| {
            let label = c.slo.split("<=").next().unwrap_or(&c.slo).trim();
            match c.measured_ns {
                Some(ns) => format!("{label} {} ms ({})", ms3(ns), interval_text(c.ci95_ns)),
                None => format!("{label} not measured"),
            }
        })
        .collect();
    let sends = if v.valid {
        ""
    } else {
        ", sends short of the schedule"
    };
    format!("; SLO {}: {}{sends}", verdict.name(), checks.join(", "))
}

/// `95% [0.398, 0.431]`, `95% [0.398, open]`, `no interval` (milliseconds).
pub fn interval_text(ci: Option<Ci95>) -> String {
    match ci {
        Some(ci) => format!("95% {}", ci.show(ms3)),
        None => "no interval".to_string(),
    }
}

/// Nanoseconds as milliseconds with three decimals.
pub(super) fn ms3(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}
