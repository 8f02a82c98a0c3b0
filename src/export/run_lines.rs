//! The lines a command writes to standard error beside its report: what the server's
//! probe noted, which test a command of many runs measures, `-I`'s idle connections, and
//! why a run in which nothing succeeded failed.

use std::io::{self, Write};
use std::time::Duration;

use crate::report::TestReport;
use crate::text::printable;

/// Ctrl+C came while connecting to `endpoint`.
pub fn interrupted_while_connecting(out: &mut dyn Write, endpoint: &str) -> io::Result<()> {
    writeln!(
        out,
        "note: interrupted while connecting to {endpoint}: nothing was measured"
    )
}

/// What the probe of the server noted (a refused CONFIG, a cluster's layout).
pub fn notes(out: &mut dyn Write, notes: &[String]) -> io::Result<()> {
    for note in notes {
        writeln!(out, "note: {note}")?;
    }
    Ok(())
}

/// No `-t` chose the test a command of many runs measures: it takes `test`, the first of
/// the default tests (`doing` is what it does with it: "sweeping", "tuning").
pub fn first_test_taken(out: &mut dyn Write, doing: &str, test: &str) -> io::Result<()> {
    writeln!(
        out,
        "note: no -t given: {doing} {test}, the first default test (choose one with -t, or \
         give a custom command)"
    )
}

/// `-I` begins: `connections` to open, held for `how_long` (`None`: until Ctrl+C).
pub fn idle_start(
    out: &mut dyn Write,
    connections: usize,
    how_long: Option<Duration>,
) -> io::Result<()> {
    match how_long {
        Some(d) => writeln!(
            out,
            "Creating {connections} idle connections and waiting {} (Ctrl+C to end sooner)",
            humantime::format_duration(d)
        ),
        None => writeln!(
            out,
            "Creating {connections} idle connections and waiting forever (Ctrl+C when done)"
        ),
    }
}

/// `-I`'s connections are open.
pub fn idle_open(out: &mut dyn Write, clients: usize) -> io::Result<()> {
    writeln!(out, "clients: {clients}")
}

/// Why a test ends its run as failed when its server could not be reached at its end:
/// every time after the outage measured the reconnects ([`TestReport::lost_server`]);
/// `None` when it could.
pub fn server_lost(test: &TestReport) -> Option<String> {
    let outage = test.lost_server()?;
    Some(printable(&format!(
        "the server of {} could not be reached at the end of the test: an outage of {}",
        test.name,
        super::events_text::outage(outage)
    )))
}

/// Why `test` failed when none of its requests got a reply other than an error, as one
/// line (the most frequent error's first text as an example); `None` when one did, or when
/// it had no request to send.
pub fn nothing_succeeded(test: &TestReport) -> Option<String> {
    let c = &test.counts;
    if c.completed > 0 || c.intended == 0 {
        return None;
    }
    let mut ends = Vec::new();
    if c.errors > 0 {
        let most = c.errors_by_kind.iter().max_by_key(|(_, n)| **n);
        match most.and_then(|(kind, _)| c.error_examples.get(kind)) {
            Some(first) => ends.push(format!("{} ended in an error (e.g. {})", c.errors, first)),
            None => ends.push(format!("{} ended in an error", c.errors)),
        }
    }
    for (n, how) in [
        (c.timeouts, "timed out"),
        (c.not_sent, "were not sent"),
        (c.in_flight_at_end, "were unanswered at the end"),
    ] {
        if n > 0 {
            ends.push(format!("{n} {how}"));
        }
    }
    Some(printable(&format!(
        "no request of {} got a reply other than an error: of {} intended, {}",
        test.name,
        c.intended,
        ends.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn idle_lines_say_how_long_they_wait() {
        let mut out = Vec::new();
        idle_start(&mut out, 3, Some(Duration::from_secs(2))).unwrap();
        idle_start(&mut out, 3, None).unwrap();
        idle_open(&mut out, 3).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Creating 3 idle connections and waiting 2s (Ctrl+C to end sooner)\n\
             Creating 3 idle connections and waiting forever (Ctrl+C when done)\n\
             clients: 3\n"
        );
    }
}
