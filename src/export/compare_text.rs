//! The comparison as a table for people: two sweeps' capacities first, when both
//! searched one; then per matched test and metric, one line per
//! percentile with A, B, the difference in ms and %, its 95% interval and the verdict;
//! then the tally, the `--fail-if-slower` outcome and the notes. Reads only the
//! [`Comparison`] model; JSON is the same model, serialized.

use std::io::{self, Write};

use super::ms;
use crate::report::compare::{Comparison, Group, Row, Verdict};

/// Writes `comparison` as text, latencies in ms with `precision` decimals.
pub fn write(out: &mut dyn Write, comparison: &Comparison, precision: usize) -> io::Result<()> {
    let c = comparison;
    for (name, side) in [("A", &c.a), ("B", &c.b)] {
        let mut about = vec![side.kind.clone()];
        about.extend(side.tool.clone());
        about.extend(side.server_version.as_ref().map(|v| format!("server {v}")));
        about.extend(side.seed.map(|s| format!("seed {s}")));
        writeln!(out, "{name}: {} ({})", side.source, about.join(", "))?;
    }
    if let Some(live) = &c.live {
        writeln!(out, "{}", live_line(live))?;
    }
    if let Some(cap) = &c.capacity {
        writeln!(out, "{}", capacity_line(cap))?;
    }
    for group in &c.groups {
        writeln!(out)?;
        write_group(out, group, precision)?;
    }
    writeln!(out)?;
    writeln!(out, "{}", tally(c))?;
    writeln!(
        out,
        "intervals of B-A: {:.0}% for all {} with a verdict together (each {}%, by MOVER from \
         the sides' intervals at that confidence)",
        c.confidence * 100.0,
        c.family_rows,
        trim_float((c.row_confidence * 1e5).floor() / 1e3)
    )?;
    if c.count(Verdict::Equivalent) > 0 {
        writeln!(
            out,
            "equivalent within {}%: the whole interval of B-A lies inside that share of A's \
             value either side of zero (two one-sided tests; --margin sets the share)",
            trim_float(
                c.margin_pct
                    .unwrap_or(100.0 * crate::report::compare::DEFAULT_MARGIN)
            )
        )?;
    }
    if c.count(Verdict::CannotTell) > 0 {
        writeln!(
            out,
            "cannot tell: the interval of B-A holds zero but reaches past the margin, or is \
             open at the end that would decide (a side's interval has no upper end: fewer \
             than 10 samples beyond the percentile, or batches so unlike each other that it \
             reaches past the largest sample); measure longer, at a higher rate, or on a \
             quieter host"
        )?;
    }
    if let Some(pct) = c.fail_if_slower_pct {
        let breaches = c.breaches();
        if breaches.is_empty() {
            writeln!(
                out,
                "--fail-if-slower {}%: passed (B is nowhere slower by more than that at 95% confidence)",
                trim_float(pct)
            )?;
        } else {
            writeln!(
                out,
                "--fail-if-slower {}%: B is slower by more than that at 95% confidence at:",
                trim_float(pct)
            )?;
            for b in &breaches {
                writeln!(out, "  {b}")?;
            }
        }
    }
    for (side, names) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        if !names.is_empty() {
            writeln!(out, "only in {side}, not compared: {}", names.join(", "))?;
        }
    }
    for note in &c.notes {
        writeln!(out, "note: {note}")?;
    }
    Ok(())
}

/// The columns of a group's table, in the order of [`cells`].
pub(crate) const HEADER: [&str; 8] = [
    "percentile",
    "A",
    "B",
    "B-A",
    "B-A %",
    "95% CI of B-A",
    "95% CI, %",
    "verdict",
];

fn write_group(out: &mut dyn Write, g: &Group, precision: usize) -> io::Result<()> {
    writeln!(
        out,
        "{}: {}, ms (A {} requests timed, B {} requests timed)",
        g.name(),
        metric_words(&g.metric),
        g.a_count,
        g.b_count
    )?;
    if g.a_intervals == g.b_intervals {
        writeln!(out, "  intervals: {}", g.a_intervals)?;
    } else {
        writeln!(out, "  intervals: A {}; B {}", g.a_intervals, g.b_intervals)?;
    }
    let header = HEADER.map(String::from);
    let mut lines = vec![header];
    lines.extend(g.rows.iter().map(|r| cells(r, precision)));
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for line in &lines {
        let mut text = String::new();
        for (i, (cell, width)) in line.iter().zip(&widths).enumerate() {
            // Numbers right-aligned, words (the percentile, intervals, verdict) left.
            let left = matches!(i, 0 | 5 | 6 | 7);
            text.push_str("  ");
            if left {
                text.push_str(&format!("{cell:<width$}"));
            } else {
                text.push_str(&format!("{cell:>width$}"));
            }
        }
        writeln!(out, "{}", text.trim_end())?;
    }
    Ok(())
}

/// `live: 10 rounds of 1 s per side at 5000 req/s, in turns (AB BA AB BA ...)`.
pub(crate) fn live_line(live: &crate::report::compare::Duet) -> String {
    format!(
        "live: {} rounds of {} s per side at {:.0} req/s, in turns ({}){}",
        live.rounds,
        trim_float(live.round_secs),
        live.rate_per_sec,
        abbreviate(&live.orders),
        if live.interrupted {
            ", interrupted"
        } else {
            ""
        }
    )
}

/// `capacity at p99<=1ms: A 4000 req/s (band 4000..5000), B ...: B higher, why`.
pub(crate) fn capacity_line(cap: &crate::report::compare::CapacityComparison) -> String {
    let side = |capacity: Option<f64>, (low, high): (f64, Option<f64>)| {
        let top = high.map_or_else(|| "open".to_string(), |h| format!("{h:.0}"));
        match capacity {
            Some(r) => format!("{r:.0} req/s (band {low:.0}..{top})"),
            None => format!("none passed (band 0..{top})"),
        }
    };
    let verdict = match cap.verdict.as_str() {
        "b_higher" => "B higher",
        "b_lower" => "B lower",
        "cannot_tell" => "cannot tell",
        _ => "not comparable",
    };
    format!(
        "capacity at {}: A {}, B {}: {verdict}, {}",
        cap.objectives,
        side(cap.a_per_sec, cap.a_band_per_sec),
        side(cap.b_per_sec, cap.b_band_per_sec),
        cap.why
    )
}

/// `B slower at 1, faster at 0, equivalent within 5% at 4, cannot tell at 2 of 7
/// percentiles`, or `same file: A and B are one report (the same path)`.
pub(crate) fn tally(c: &Comparison) -> String {
    if let Some(why) = &c.same_file {
        return format!("same file: A and B are one report ({why}), nothing compared");
    }
    let older = c.count(Verdict::NoDifference);
    format!(
        "B slower at {}, faster at {}, equivalent within {}% at {}, {}cannot tell at {} of {} percentiles",
        c.count(Verdict::BSlower),
        c.count(Verdict::BFaster),
        trim_float(
            c.margin_pct
                .unwrap_or(100.0 * crate::report::compare::DEFAULT_MARGIN)
        ),
        c.count(Verdict::Equivalent),
        if older > 0 {
            format!("no difference (an older file's word) at {older}, ")
        } else {
            String::new()
        },
        c.count(Verdict::CannotTell),
        c.rows().count(),
    )
}

/// One row's cells as the table shows them: the percentile, A, B, B-A in ms and %, its
/// interval in ms and %, and the verdict (the HTML page shows the same cells).
pub(crate) fn cells(r: &Row, precision: usize) -> [String; 8] {
    let signed_ms = |ns: f64| {
        let s = ms(ns, precision);
        if s.starts_with('-') {
            s
        } else {
            format!("+{s}")
        }
    };
    let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:+.1}%"));
    // An open end reads as infinite: `[+2541.1, inf)` is "at least 2541 ms slower".
    let end = |v: Option<String>, open: &str| v.unwrap_or_else(|| open.to_string());
    let (ci_ms, ci_pct) = match (r.difference_ci95_ns, r.difference_ci95_pct) {
        (Some([l, h]), pcts) => (
            format!(
                "[{}, {}]",
                end(l.map(|l| signed_ms(l as f64)), "-inf"),
                end(h.map(|h| signed_ms(h as f64)), "inf")
            ),
            pcts.map_or("-".to_string(), |[l, h]| {
                format!(
                    "[{}, {}]",
                    end(l.map(|l| format!("{l:+.1}%")), "-inf"),
                    end(h.map(|h| format!("{h:+.1}%")), "inf")
                )
            }),
        ),
        (None, _) => (crate::stats::confidence::OPEN.to_string(), String::new()),
    };
    [
        r.label().to_string(),
        ms(r.a_ns as f64, precision),
        ms(r.b_ns as f64, precision),
        signed_ms(r.difference_ns as f64),
        pct(r.difference_pct),
        ci_ms,
        ci_pct,
        r.verdict.label().to_string(),
    ]
}

/// The metric as the run reports name it.
pub(crate) fn metric_words(metric: &str) -> &str {
    match metric {
        "response" => "response time",
        "service" => "service time",
        "lag" => "schedule lag",
        "queue_wait" => "queue wait",
        other => other,
    }
}

/// `AB BA AB BA ...` for a long list.
pub(crate) fn abbreviate(orders: &[String]) -> String {
    const SHOWN: usize = 4;
    let mut text = orders
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    if orders.len() > SHOWN {
        text.push_str(" ...");
    }
    text
}

/// `5`, `2.5`: a number as typed, without trailing zeros.
pub(crate) fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl Comparison {
    /// The rows where B is slower than `--fail-if-slower` allows, each in one sentence.
    pub fn breaches(&self) -> Vec<String> {
        self.rows()
            .filter(|(_, r)| r.slower_than_allowed)
            .map(|(g, r)| {
                let low_pct = r.difference_ci95_pct.and_then(|i| i[0]).unwrap_or(0.0);
                format!(
                    "{} {} {}: at least {low_pct:+.1}% (A {} ms, B {} ms)",
                    g.name(),
                    g.metric,
                    r.label(),
                    ms(r.a_ns as f64, 3),
                    ms(r.b_ns as f64, 3)
                )
            })
            .collect()
    }
}
