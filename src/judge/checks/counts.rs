//! The checks on counts: whether every request is accounted for (`accounting`), whether
//! most ended in errors (`error_replies`), whether every request was answered
//! (`unanswered`), and whether the server counted what tailrate sent (`server_count`). Each is `None` where it has nothing to say, so a run without a
//! fault keeps redis-benchmark's shape.

use crate::report::Counts;
use crate::report::server::{ServerView, server_name};
use crate::report::verdict::{Check, Measure, Verdict};

/// Most requests a run may lose to error replies and timeouts and still report its
/// latencies as the server's: past this the percentiles describe the few that succeeded.
pub const MOST_FAILED_FRACTION: f64 = 0.5;

/// A failed `error_replies` check when most requests ended in an error reply or a
/// timeout; `None` otherwise (a run with a few errors keeps redis-benchmark's shape).
pub fn error_replies(c: &Counts) -> Option<Check> {
    let failed = c.errors + c.timeouts;
    let ended = c.completed + failed;
    if ended == 0 || (failed as f64) <= MOST_FAILED_FRACTION * ended as f64 {
        return None;
    }
    Some(Check {
        name: "error_replies".into(),
        verdict: Verdict::Fail,
        detail: format!(
            "{failed} of {ended} requests ended in an error reply or a timeout ({:.1}%); bound: \
             at most {:.0}%",
            100.0 * failed as f64 / ended as f64,
            100.0 * MOST_FAILED_FRACTION
        ),
        meaning: "the latencies describe only the requests that succeeded; see the errors \
                  above for what the server said"
            .into(),
        measure: Measure::of(
            failed as f64 / ended as f64,
            MOST_FAILED_FRACTION,
            "fraction",
        ),
    })
}

/// How long a request still in flight at the end must have waited since it was written
/// to show that the server stopped answering: far over any reply a working server gives,
/// and under the 2 s the run waits for replies after its end. A request written just
/// before the run gave up (behind a client backlog that was still draining) is not one.
pub const STALLED_NS: u64 = 1_000_000_000;

/// A failed `unanswered` check when the server left requests unanswered: some timed
/// out, or one still in flight when the run gave up had waited [`STALLED_NS`] since it
/// was written; `None` otherwise. A run that stopped early cut its wait short on
/// purpose, so only a stall fails it: a request that had waited that long is the
/// server's, whoever ended the run (a `-n` run against a frozen server waits until
/// Ctrl+C). Unanswered requests are in the response percentiles at their age when
/// given up, so a server that stalls lengthens the tail; this check makes the stall fail
/// the run too, in either loop, where the tail alone might pass.
pub fn unanswered(c: &Counts, stopped_early: bool) -> Option<Check> {
    let stalled = c.in_flight_at_end > 0 && c.longest_unanswered_ns >= STALLED_NS;
    if !stalled && (c.timeouts == 0 || stopped_early) {
        return None;
    }
    Some(Check {
        name: "unanswered".into(),
        verdict: Verdict::Fail,
        detail: format!(
            "{} timed out and {} were still in flight when the run gave up, the oldest \
             written {:.2} s before; bound: no timeout, and nothing in flight for {:.0} s",
            c.timeouts,
            c.in_flight_at_end,
            c.longest_unanswered_ns as f64 / 1e9,
            STALLED_NS as f64 / 1e9
        ),
        meaning: "the server stopped answering some requests (it stalled, froze or lost them): \
                  they count in the percentiles at their age when given up, lower bounds of \
                  latencies that never ended"
            .into(),
        // Requests the server left unanswered: timed out, or stalled in flight.
        measure: Measure::of(
            (c.timeouts + if stalled { c.in_flight_at_end } else { 0 }) as f64,
            0.0,
            "count",
        ),
    })
}

/// A failed `accounting` check when the counts do not balance (`Counts::balanced`);
/// `None` when every request is accounted for. A gap means the driver lost or
/// double-counted requests, so no number of the test can be trusted. Balanced reports
/// get no extra check, so closed-loop output keeps redis-benchmark's shape.
pub fn accounting(c: &Counts) -> Option<Check> {
    if c.balanced() {
        return None;
    }
    let accounted = c.completed + c.errors + c.timeouts + c.not_sent + c.in_flight_at_end;
    Some(Check {
        name: "accounting".into(),
        verdict: Verdict::Fail,
        detail: format!(
            "intended {} but completed {} + errors {} + timeouts {} + not sent {} + in flight at end {} = {accounted}",
            c.intended, c.completed, c.errors, c.timeouts, c.not_sent, c.in_flight_at_end
        ),
        meaning: "requests were lost or counted twice by the generator; no number of this test can be trusted".into(),
        measure: Measure::of(accounted as f64, c.intended as f64, "count"),
    })
}

/// Commands whose scripts call other commands, each counted by the server too.
const RUN_OTHERS: [&str; 6] = [
    "eval",
    "evalsha",
    "eval_ro",
    "evalsha_ro",
    "fcall",
    "fcall_ro",
];

/// Whether the server executed what tailrate says it sent: per command, its
/// commandstats count between the readings against tailrate's writes (warm-up
/// included). Requests still in flight when the test ended may or may not have been
/// executed by the second reading, and one answered with an error may not have been
/// counted (an unknown command is in no command's count), so the count may fall short
/// by up to that many.
/// Where a script ran (a replayed `EVAL` or `FCALL`), the commands it called count under
/// their own names too, so a count may then exceed tailrate's, never fall short of it.
/// `None` where the server gave no commandstats, or when requests were redirected (a
/// cluster counts the refused first try as a rejected call, and tailrate's writes count
/// the request once).
pub fn server_count(view: &ServerView, c: &Counts) -> Option<Check> {
    let in_flight_at_end = c.in_flight_at_end;
    let slack = in_flight_at_end + c.errors;
    let scripts = view
        .commands
        .iter()
        .any(|c| c.calls > 0 && RUN_OTHERS.contains(&server_name(&c.command).as_str()));
    if c.redirects > 0
        || view.commands.is_empty()
        || view.missing.iter().any(|m| m.contains("INFO commandstats"))
    {
        return None;
    }
    let off: Vec<String> = view
        .commands
        .iter()
        .filter(|c| {
            (c.calls > c.sent_by_tailrate && !scripts) || c.calls + slack < c.sent_by_tailrate
        })
        .map(|c| {
            format!(
                "{} {} calls against {} sent",
                c.command, c.calls, c.sent_by_tailrate
            )
        })
        .collect();
    let each = view
        .commands
        .iter()
        .map(|c| format!("{} {} of {}", c.command, c.calls, c.sent_by_tailrate))
        .collect::<Vec<_>>()
        .join(", ");
    Some(Check {
        name: "server_count".into(),
        verdict: if off.is_empty() {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        detail: format!(
            "calls the server counted (INFO commandstats) against requests tailrate wrote, warm-up included: {each}; bound: {}short by at most the {in_flight_at_end} in flight at the end and the {} error replies",
            if scripts {
                "more (the scripts tailrate sent call commands of their own), or "
            } else {
                "equal, or "
            },
            c.errors
        ),
        meaning: format!(
            "the server did not execute what tailrate sent ({}): another client ran the same command meanwhile, the server restarted or reset its statistics, or a proxy between changed the requests; the server's figures beside this run are not this run's",
            off.join("; ")
        ),
        measure: None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn counts_that_do_not_balance_fail_the_accounting() {
        let c = Counts {
            intended: 10,
            sent: 10,
            completed: 7,
            errors: 1,
            timeouts: 1,
            not_sent: 0,
            in_flight_at_end: 1,
            ..Default::default()
        };
        assert_eq!(accounting(&c), None);
        let lost = Counts { completed: 6, ..c };
        let check = accounting(&lost).unwrap_or_else(|| panic!("9 of 10 accounted for must fail"));
        assert_eq!(
            (check.name.as_str(), check.verdict),
            ("accounting", Verdict::Fail)
        );
        assert!(
            check.detail.contains("intended 10") && check.detail.ends_with("= 9"),
            "{}",
            check.detail
        );
    }

    #[test]
    fn a_stall_or_a_timeout_fails_unanswered_and_a_request_written_at_the_end_does_not() {
        let answered = Counts {
            intended: 100,
            sent: 100,
            completed: 100,
            ..Default::default()
        };
        assert_eq!(unanswered(&answered, false), None);
        // Written 10 ms before the run gave up (a client backlog still draining).
        let late = Counts {
            completed: 99,
            in_flight_at_end: 1,
            longest_unanswered_ns: 10_000_000,
            ..answered.clone()
        };
        assert_eq!(unanswered(&late, false), None);
        let frozen = Counts {
            longest_unanswered_ns: STALLED_NS,
            ..late.clone()
        };
        let check = unanswered(&frozen, false).unwrap();
        assert_eq!(
            (check.name.as_str(), check.verdict),
            ("unanswered", Verdict::Fail)
        );
        assert!(check.detail.contains("1.00 s"), "{}", check.detail);
        let timed_out = Counts {
            completed: 99,
            timeouts: 1,
            ..answered
        };
        assert!(unanswered(&timed_out, false).is_some());
        // An interrupted run cut its wait for replies short on purpose: a request written
        // just before is not the server's fault, one that had waited a second is.
        assert_eq!(unanswered(&late, true), None);
        assert!(unanswered(&frozen, true).is_some());
    }

    #[test]
    fn a_script_s_own_calls_above_tailrate_s_count_pass_and_a_shortfall_still_fails() {
        let command = |name: &str, calls, sent| crate::report::server::ServerCommand {
            command: name.into(),
            calls,
            sent_by_tailrate: sent,
            ..Default::default()
        };
        let view = |commands| ServerView {
            commands,
            ..Default::default()
        };
        let c = Counts::default();
        let verdict = |v: &ServerView| server_count(v, &c).map(|check| check.verdict);
        // GET run directly 100 times, and 40 more times by the scripts.
        let scripted = view(vec![command("get", 140, 100), command("eval", 40, 40)]);
        assert_eq!(verdict(&scripted), Some(Verdict::Pass));
        let no_script = view(vec![command("get", 140, 100), command("set", 40, 40)]);
        assert_eq!(verdict(&no_script), Some(Verdict::Fail));
        let short = view(vec![command("get", 90, 100), command("evalsha", 40, 40)]);
        assert_eq!(verdict(&short), Some(Verdict::Fail));
    }
}
