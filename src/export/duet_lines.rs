//! `compare --live`'s lines on standard error: each turn of the duet as it ends (when
//! progress is shown), and a duet that ended before a whole round.

use std::io::{self, Write};

use super::ms;
use crate::report::TestReport;

/// Turn `round` of `rounds` on `side` (`A` or `B`) ended with `report`.
pub fn turn(
    out: &mut dyn Write,
    round: usize,
    rounds: usize,
    side: &str,
    report: &TestReport,
) -> io::Result<()> {
    writeln!(out, "round {round}/{rounds} {side}: {}", describe(report))
}

/// No round ran on both sides: there is nothing to compare.
pub fn no_whole_round(out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "compare --live: no whole round to compare")
}

/// One turn in a line: the test, the rate achieved, the response time's p50 and p99.
fn describe(report: &TestReport) -> String {
    let mut line = format!(
        "{} achieved {:.0} req/s",
        report.name, report.achieved_rate_per_sec
    );
    if let Some(r) = report.response() {
        line.push_str(&format!(
            ", response p50 {} p99 {} ms",
            ms(r.p50_ns as f64, 3),
            ms(r.p99_ns as f64, 3)
        ));
    }
    if !report.valid {
        line.push_str("; INVALID: ");
        line.push_str(&report.why_invalid());
    }
    line
}
