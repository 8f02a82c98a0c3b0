//! How a run's `--slo` objectives read: one clause per objective for the exit message
//! and the `-q` line, and the lines of the full text report.

use std::io::{self, Write};

use crate::report::sweep::{SloCheck, SloVerdict, Verdict};
use crate::stats::confidence::OPEN;

/// `p99<=1ms pass (p99 0.412 ms, 95% interval [0.380, 0.450] ms)`, one objective.
fn clause(check: &SloCheck) -> String {
    let verdict = check.verdict.unwrap_or(Verdict::Uncertain).name();
    let Some(value) = check.measured_ns else {
        return format!("{} {verdict} (no reply)", check.slo);
    };
    let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
    let interval = check.ci95_ns.map_or_else(
        || "no interval".to_string(),
        |c| {
            let high = c.high().map_or_else(|| OPEN.to_string(), ms);
            format!("95% interval [{}, {high}] ms", ms(c.low()))
        },
    );
    let share = check.exceedance.map_or_else(String::new, |e| {
        format!(
            ", {:.2}% over the bound [{:.2}%, {:.2}%] against {:.2}% allowed",
            100.0 * e.fraction,
            100.0 * e.low,
            100.0 * e.high,
            100.0 * e.limit
        )
    });
    format!(
        "{} {verdict} ({} ms, {interval}{share})",
        check.slo,
        ms(value)
    )
}

/// Every objective's clause, joined: for the exit message.
pub fn verdicts(slo: &SloVerdict) -> String {
    slo.checks.iter().map(clause).collect::<Vec<_>>().join("; ")
}

/// ` (objectives: p99<=1ms pass)`, for the `-q` line.
pub fn quiet_clause(slo: &SloVerdict) -> String {
    let each: Vec<String> = slo
        .checks
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c.slo,
                c.verdict.unwrap_or(Verdict::Uncertain).name()
            )
        })
        .collect();
    format!(" (objectives: {})", each.join(", "))
}

/// The full report's lines: what the verdicts rest on, then each objective.
pub fn lines(out: &mut dyn Write, slo: &SloVerdict) -> io::Result<()> {
    writeln!(
        out,
        "  objectives (--slo, on the response time, by the rule of a sweep's step: pass when \
         the share of replies over the bound is shown under the share the percentile allows, \
         the run's 50 ms windows as clusters; fail when shown over it; uncertain otherwise):"
    )?;
    for check in &slo.checks {
        writeln!(out, "    {}", clause(check))?;
    }
    if !slo.valid {
        writeln!(
            out,
            "    the run did not carry its rate (requests unsent or a short schedule): a pass \
             there is no pass"
        )?;
    }
    if let Some(why) = slo
        .why
        .as_ref()
        .filter(|_| slo.verdict != Some(Verdict::Pass))
    {
        writeln!(out, "    why: {why}")?;
    }
    if slo.verdict == Some(Verdict::Uncertain) {
        writeln!(
            out,
            "    undecided: measure longer (--duration) for a narrower interval; --strict \
             exits 1 on it"
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::stats::confidence::Ci95;

    fn check(verdict: Verdict, high: Option<u64>) -> SloCheck {
        SloCheck {
            slo: "p99<=1ms".into(),
            measured_ns: Some(412_000),
            ci95_ns: Some(Ci95(380_000, high)),
            met: true,
            verdict: Some(verdict),
            exceedance: None,
        }
    }

    #[test]
    fn each_objective_reads_with_its_value_and_interval() {
        assert_eq!(
            clause(&check(Verdict::Pass, Some(450_000))),
            "p99<=1ms pass (0.412 ms, 95% interval [0.380, 0.450] ms)"
        );
        assert_eq!(
            clause(&check(Verdict::Uncertain, None)),
            format!("p99<=1ms uncertain (0.412 ms, 95% interval [0.380, {OPEN}] ms)")
        );
        let slo = SloVerdict {
            met: true,
            valid: true,
            verdict: Some(Verdict::Pass),
            why: None,
            checks: vec![check(Verdict::Pass, Some(450_000))],
        };
        assert_eq!(quiet_clause(&slo), " (objectives: p99<=1ms pass)");
    }
}
