//! The run text's tables: the 95% intervals of every percentile, the latency of each
//! metric, and a mix's commands one row each.

use std::io::{self, Write};

use crate::export::ms;
use crate::record::Metric;
use crate::report::Reported;
use crate::report::{Latency, Percentile, TestReport};
use crate::text::printable;

/// A mix's commands, one row each: throughput, errors, hits and misses of its reads (when
/// it has any) and response-time percentiles (what memtier prints per command).
pub(super) fn command_table(
    out: &mut dyn Write,
    test: &TestReport,
    precision: usize,
) -> io::Result<()> {
    let width = test
        .commands
        .iter()
        .map(|c| c.command.len())
        .max()
        .unwrap_or(7)
        .max(7);
    let reads = test.commands.iter().any(|c| c.counts.hits.is_some());
    writeln!(out, "  per command (response time, msec):")?;
    write!(
        out,
        "    {:<width$} {:>12} {:>8}",
        "command", "requests/s", "errors"
    )?;
    if reads {
        write!(out, " {:>10} {:>10}", "hits", "misses")?;
    }
    writeln!(
        out,
        " {:>9} {:>9} {:>9} {:>9} {:>9}  p99 95% interval",
        "avg", "p50", "p99", "p99.9", "max"
    )?;
    for c in &test.commands {
        let share = if test.measured_secs > 0.0 {
            c.counts.completed as f64 / test.measured_secs
        } else {
            0.0
        };
        let r = c.latency.get(&Metric::Response);
        let get = |f: fn(&Latency) -> f64| super::ms_of(r, f, precision);
        write!(
            out,
            "    {:<width$} {:>12.2} {:>8}",
            printable(&c.command),
            share,
            c.counts.errors,
        )?;
        if reads {
            // A command that is not a read has neither.
            let shown = |n: Option<u64>| n.map_or_else(|| "-".to_string(), |n| n.to_string());
            write!(
                out,
                " {:>10} {:>10}",
                shown(c.counts.hits),
                shown(c.counts.misses)
            )?;
        }
        writeln!(
            out,
            " {:>9} {:>9} {:>9} {:>9} {:>9}  {}",
            get(|l| l.mean_ns),
            get(|l| l.p50_ns as f64),
            get(|l| l.p99_ns as f64),
            get(|l| l.p99_9_ns as f64),
            get(|l| l.max_ns as f64),
            r.map_or_else(String::new, |l| interval_text(
                l,
                Percentile::P99,
                precision
            ))
        )?;
    }
    Ok(())
}

/// `[low, high]` of `p`'s interval in msec (`open` for an unbounded high end), or nothing
/// when the report has none.
pub(crate) fn interval_text(l: &Latency, p: Percentile, precision: usize) -> String {
    l.at(p)
        .ci95
        .map_or_else(String::new, |ci| ci.show(|ns| ms(ns as f64, precision)))
}

/// Each percentile with its 95% interval, one column per `(label, metric)` the test
/// has, and the samples beyond it (`k`); what the intervals rest on above.
pub(super) fn interval_table(
    out: &mut dyn Write,
    test: &TestReport,
    precision: usize,
    metrics: &[(&str, Metric)],
) -> io::Result<()> {
    let columns: Vec<(&str, &Latency)> = metrics
        .iter()
        .filter_map(|&(label, metric)| Some((label, test.latency.get(&metric)?)))
        .filter(|(_, l)| l.confidence.is_some())
        .collect();
    let Some((_, first)) = columns.first() else {
        return Ok(());
    };
    let method = first
        .confidence
        .as_ref()
        .map_or(String::new(), |c| c.method.clone());
    writeln!(out, "  95% confidence intervals (msec; {method}):")?;
    // Each column's rows: the chosen percentiles (`--percentiles`) or the fixed ones.
    let rows: Vec<Vec<Reported>> = columns.iter().map(|(_, l)| l.reported()).collect();
    let cell = |l: &Latency, r: Option<&Reported>| {
        let Some(r) = r.filter(|_| l.count > 0) else {
            return "n/a".to_string();
        };
        let value = ms(r.value_ns as f64, precision);
        match r.ci95_ns {
            Some(ci) => format!("{value} {}", ci.show(|ns| ms(ns as f64, precision))),
            None => value,
        }
    };
    let first_rows = &rows[0];
    let width = (0..first_rows.len())
        .flat_map(|i| {
            let rows = &rows;
            columns
                .iter()
                .zip(rows)
                .map(move |((_, l), r)| cell(l, r.get(i)).len())
        })
        .chain(columns.iter().map(|(label, _)| label.len()))
        .max()
        .unwrap_or(0);
    let label_width = first_rows
        .iter()
        .map(|r| r.label.len())
        .max()
        .unwrap_or(0)
        .max(7);
    write!(out, "    {:<label_width$}", "")?;
    for (label, _) in &columns {
        write!(out, " {label:<width$}")?;
    }
    writeln!(out, " {:>9}", "k")?;
    for (i, row) in first_rows.iter().enumerate() {
        write!(out, "    {:<label_width$}", row.label)?;
        for ((_, l), r) in columns.iter().zip(&rows) {
            write!(out, " {:<width$}", cell(l, r.get(i)))?;
        }
        let k = row.beyond.unwrap_or(0);
        let note = if k < crate::stats::confidence::MIN_BEYOND {
            "  too few beyond to bound"
        } else {
            ""
        };
        writeln!(out, " {k:>9}{note}")?;
    }
    writeln!(
        out,
        "    k: replies slower than the percentile, what its interval's upper end rests on (under {} it has none)",
        crate::stats::confidence::MIN_BEYOND
    )?;
    Ok(())
}

/// One row per `(label, metric)` the test has: min, percentiles and max in msec.
pub(super) fn metric_table(
    out: &mut dyn Write,
    test: &TestReport,
    precision: usize,
    rows: &[(&str, Metric)],
) -> io::Result<()> {
    writeln!(
        out,
        "          {:<11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "metric", "min", "p50", "p90", "p99", "p99.9", "p99.99", "max"
    )?;
    for &(label, metric) in rows {
        if let Some(l) = test.latency.get(&metric) {
            let get = |f: fn(&Latency) -> f64| super::ms_of(Some(l), f, precision);
            writeln!(
                out,
                "          {:<11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                label,
                get(|l| l.min_ns as f64),
                get(|l| l.p50_ns as f64),
                get(|l| l.p90_ns as f64),
                get(|l| l.p99_ns as f64),
                get(|l| l.p99_9_ns as f64),
                get(|l| l.p99_99_ns as f64),
                get(|l| l.max_ns as f64)
            )?;
        }
    }
    Ok(())
}
