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
    format!("{} {verdict} ({} ms, {interval})", check.slo, ms(value))
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
        "  objectives (--slo, on the response time: pass when the percentile's 95% interval \
         lies under the bound, fail when above it, uncertain when it holds the bound):"
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
            checks: vec![check(Verdict::Pass, Some(450_000))],
        };
        assert_eq!(quiet_clause(&slo), " (objectives: p99<=1ms pass)");
    }
}
