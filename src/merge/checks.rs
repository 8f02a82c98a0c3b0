//! The self-checks of a merged test: each shard's checks combined (a check failed by
//! any shard fails the merge and names the shard), the Poisson check run again on the
//! shards' sends together, a partial merge and counts that do not add up failed, and
//! the server's counts judged on every shard's requests together.

use super::plan::{Shards, list};
use crate::report::server::ServerView;
use crate::report::verdict::{Check, Verdict};
use crate::report::{ArrivalWindows, Counts, TestReport};

/// A merged test's verdicts and what they were judged on.
pub(super) struct Judged {
    /// Every check, the shards' combined and the merge's own.
    pub(super) checks: Vec<Check>,
    /// The server's readings, every shard's together.
    pub(super) server: Option<ServerView>,
    /// The shards' sends per window, added.
    pub(super) arrivals: Option<ArrivalWindows>,
}

/// The checks of one test of every shard (`parts`, of the shards `shards`), whose
/// counts added are `counts`.
pub(super) fn merged_checks(parts: &[&TestReport], shards: &Shards, counts: &Counts) -> Judged {
    let Shards {
        present, missing, ..
    } = shards;
    let mut checks = combined_checks(parts, present);
    let arrivals = merged_arrivals(parts);
    if let Some(a) = &arrivals {
        // The shards' sends together replace their separate verdicts: each shard's own
        // check saw only its share of the superposition.
        let together = crate::judge::checks::poisson_fit(
            &a.counts,
            std::time::Duration::from_nanos(a.window_ns),
            "the shards' arrivals together: ",
            None,
        );
        match checks.iter_mut().find(|c| c.name == "poisson_fit") {
            Some(c) => *c = together,
            None => checks.push(together),
        }
    }
    if !missing.is_empty() {
        checks.push(Check {
            name: "shards".into(),
            verdict: Verdict::Fail,
            detail: format!(
                "shards {} of {} merged; missing: {}",
                list(present),
                present.len() + missing.len(),
                list(missing)
            ),
            meaning: "a partial merge (--partial): its rates and counts are those of the shards present, short of the plan".into(),
            measure: None,
        });
    }
    if !counts.balanced() && checks.iter().all(|c| c.name != "accounting") {
        checks.push(Check {
            name: "accounting".into(),
            verdict: Verdict::Fail,
            detail: format!(
                "intended {} against completed, errors, timeouts, not sent and in flight {}",
                counts.intended,
                counts.completed
                    + counts.errors
                    + counts.timeouts
                    + counts.not_sent
                    + counts.in_flight_at_end
            ),
            meaning: "the shards' counts do not account for every request".into(),
            measure: None,
        });
    }
    let server = merged_server(parts, missing, counts, &mut checks);
    Judged {
        checks,
        server,
        arrivals,
    }
}

/// The server's view of every shard's requests, and its count check pushed onto
/// `checks`: not added with shards `missing`, whose requests the server counted too.
fn merged_server(
    parts: &[&TestReport],
    missing: &[u32],
    counts: &Counts,
    checks: &mut Vec<Check>,
) -> Option<ServerView> {
    // The server counted every shard's requests: judged here, on all of them together.
    let views = parts
        .iter()
        .map(|p| p.server.as_ref())
        .collect::<Option<Vec<_>>>();
    let server = views.map(|views| {
        if missing.is_empty() {
            crate::report::server::merged_view(&views)
        } else {
            Err(format!(
                "not added, since the server also counted the requests of shards {}, missing",
                list(missing)
            ))
        }
    });
    match server {
        Some(Ok(view)) => {
            if let Some(check) = crate::judge::checks::server_count(&view, counts) {
                checks.push(check);
            }
            Some(view)
        }
        Some(Err(why)) => Some(ServerView {
            missing: vec![format!("the shards' readings together: {why}")],
            ..Default::default()
        }),
        None => None,
    }
}

/// Every shard's sends per window added, window by window, over the windows all of them
/// hold; `None` unless each part has them, in windows of one length (shards of one plan
/// have equal rates per thread, so their windows match; windows that start a start skew
/// apart still add to a Poisson count, the streams being independent).
fn merged_arrivals(parts: &[&TestReport]) -> Option<ArrivalWindows> {
    let first = parts.first()?.arrivals.as_ref()?;
    let mut counts = first.counts.clone();
    for p in &parts[1..] {
        let a = p.arrivals.as_ref()?;
        if a.window_ns != first.window_ns {
            return None;
        }
        counts.truncate(a.counts.len());
        for (sum, n) in counts.iter_mut().zip(&a.counts) {
            *sum += n;
        }
    }
    Some(ArrivalWindows {
        window_ns: first.window_ns,
        counts,
    })
}

/// Each check of any shard once: failed when any shard failed it (the detail names those
/// shards and what each saw), passed when every shard that ran it passed.
fn combined_checks(parts: &[&TestReport], present: &[u32]) -> Vec<Check> {
    let mut names: Vec<&str> = Vec::new();
    for p in parts {
        for c in &p.checks {
            if !names.contains(&c.name.as_str()) {
                names.push(&c.name);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of: Vec<(u32, &Check)> = parts
                .iter()
                .zip(present)
                .filter_map(|(p, &i)| p.checks.iter().find(|c| c.name == name).map(|c| (i, c)))
                .collect();
            let failed: Vec<&(u32, &Check)> = of
                .iter()
                .filter(|(_, c)| c.verdict == Verdict::Fail)
                .collect();
            let passed = of.iter().any(|(_, c)| c.verdict == Verdict::Pass);
            let (verdict, shown) = if !failed.is_empty() {
                (Verdict::Fail, failed)
            } else {
                (
                    if passed {
                        Verdict::Pass
                    } else {
                        Verdict::Skipped
                    },
                    of.iter().collect(),
                )
            };
            let detail = shown
                .iter()
                .map(|(i, c)| format!("shard {i}: {}", c.detail))
                .collect::<Vec<_>>()
                .join("; ");
            let meaning = match verdict {
                Verdict::Fail => format!(
                    "failed in shard{} {}: {}",
                    if shown.len() == 1 { "" } else { "s" },
                    list(&shown.iter().map(|(i, _)| *i).collect::<Vec<_>>()),
                    shown[0].1.meaning
                ),
                _ => shown
                    .first()
                    .map_or_else(String::new, |(_, c)| c.meaning.clone()),
            };
            Check {
                name: name.to_string(),
                verdict,
                detail,
                meaning,
                measure: None,
            }
        })
        .collect()
}
