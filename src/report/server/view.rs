//! The server's view of a test from two readings (their difference), and of shards'
//! tests together from their kept readings. Pure arithmetic on cumulative counters.

use std::collections::BTreeMap;

use super::{CommandCounters, ExecPercentiles, KeptReadings, Reading, ServerCommand, ServerView};

/// The server's view of a test from its readings `before` and `after`, `span_secs`
/// apart, for the commands it sent: `(tailrate's name, requests written)`.
pub fn view(
    before: &Reading,
    after: &Reading,
    span_secs: f64,
    sent: &[(String, u64)],
) -> ServerView {
    let mut missing = before.missing.clone();
    for m in &after.missing {
        if !missing.contains(m) {
            missing.push(m.clone());
        }
    }
    // Counters that grew past what a server can do in the span (a reply that lies, or a
    // counter that wrapped) are a fact missing, not a verdict's input.
    let implausible = implausible_growth(before, after, span_secs);
    let dropped;
    let (before, after) = match implausible {
        Some(why) => {
            missing.push(why);
            dropped = (
                Reading {
                    commands: None,
                    cpu_secs: None,
                    ..before.clone()
                },
                Reading {
                    commands: None,
                    cpu_secs: None,
                    ..after.clone()
                },
            );
            (&dropped.0, &dropped.1)
        }
        None => (before, after),
    };
    // The server counts by command name: a mix's entries sharing a verb (`GET a`, `GET b`:
    // tailrate's `get` and `get_2`) are one command there, so they are counted together.
    let mut by_server_name: Vec<(String, String, u64)> = Vec::new();
    for (command, n) in sent {
        let key = server_name(command);
        match by_server_name.iter_mut().find(|(k, _, _)| *k == key) {
            Some(entry) => entry.2 = entry.2.saturating_add(*n),
            None => by_server_name.push((key, command.clone(), *n)),
        }
    }
    let commands = by_server_name
        .iter()
        .map(|(key, command, sent_by_tailrate)| {
            let key = key.clone();
            let counted = before
                .commands
                .as_ref()
                .zip(after.commands.as_ref())
                .map(|(b, a)| {
                    let (b, a) = (
                        b.get(&key).copied().unwrap_or_default(),
                        a.get(&key).copied().unwrap_or_default(),
                    );
                    let calls = a.calls.saturating_sub(b.calls);
                    let usec = a.usec.saturating_sub(b.usec);
                    (
                        calls + a.rejected_calls.saturating_sub(b.rejected_calls),
                        (calls > 0).then(|| usec as f64 / calls as f64),
                    )
                });
            let exec = before
                .latency
                .as_ref()
                .zip(after.latency.as_ref())
                .and_then(|(b, a)| {
                    let empty = Vec::new();
                    percentiles(&difference(b.get(&key).unwrap_or(&empty), a.get(&key)?))
                });
            ServerCommand {
                command: command.clone(),
                calls: counted.map_or(0, |c| c.0),
                sent_by_tailrate: *sent_by_tailrate,
                mean_exec_usec: counted.and_then(|c| c.1),
                exec_usec_at_most: exec,
            }
        })
        .collect();
    let cpu_secs = before
        .cpu_secs
        .zip(after.cpu_secs)
        .map(|(b, a)| (a - b).max(0.0));
    ServerView {
        span_secs,
        commands,
        cpu_secs,
        cpu_utilisation: cpu_secs.filter(|_| span_secs > 0.0).map(|c| c / span_secs),
        missing,
        events: None,
        kept: None,
    }
}

/// The most calls a server executes per second (Redis does a few million on one core,
/// more with I/O threads; a hundred million is past any).
const MOST_CALLS_PER_SEC: f64 = 1e8;

/// The most CPU seconds a server uses per second (its threads on 1,024 cores).
const MOST_CPU_PER_SEC: f64 = 1024.0;

/// Why the growth of the counters from `before` to `after` over `span_secs` cannot be
/// a server's, if it cannot.
fn implausible_growth(before: &Reading, after: &Reading, span_secs: f64) -> Option<String> {
    let room = span_secs.max(0.0) + 1.0;
    if let (Some(b), Some(a)) = (&before.commands, &after.commands) {
        for (name, c) in a {
            let calls = c.calls.saturating_sub(b.get(name).map_or(0, |b| b.calls));
            if calls as f64 > MOST_CALLS_PER_SEC * room {
                return Some(format!(
                    "INFO commandstats: {calls} calls of {name} in {span_secs:.2} s is more than a server executes"
                ));
            }
        }
    }
    if let (Some(b), Some(a)) = (before.cpu_secs, after.cpu_secs)
        && a - b > MOST_CPU_PER_SEC * room
    {
        return Some(format!(
            "INFO cpu: {:.0} CPU seconds in {span_secs:.2} s is more than a server uses",
            a - b
        ));
    }
    None
}

/// The server's view of shards' tests together, from their kept readings: the view
/// between the earliest reading before and the latest after, against everything the
/// shards wrote. Every figure read is a counter that only grows (calls, microseconds,
/// CPU seconds, each histogram bucket's cumulative count), so the smallest of the
/// shards' readings before is the earliest one's and the largest after the latest
/// one's, and the span between them holds every shard's traffic (each read before and
/// after its own); the span is timed on the shards' common clock. `Err` says why not:
/// a shard without readings (a server without INFO, `--no-server-stats`) or shards
/// that read different server processes (another `run_id`: a load-balanced address).
pub fn merged_view(shards: &[&ServerView]) -> Result<ServerView, String> {
    let kept: Vec<&KeptReadings> = shards
        .iter()
        .map(|v| v.kept.as_deref().ok_or("a shard kept no readings"))
        .collect::<Result<_, _>>()?;
    let first = kept.first().ok_or("no shard")?;
    let ids = |k: &KeptReadings| {
        let mut ids = k.before.run_ids.clone();
        ids.sort();
        ids
    };
    if ids(first).is_empty() {
        return Err("a shard's server gave no run_id (INFO server)".into());
    }
    if let Some(other) = kept.iter().find(|k| ids(k) != ids(first)) {
        return Err(format!(
            "the shards read different servers (run_id {} and {})",
            ids(first).join(","),
            ids(other).join(",")
        ));
    }
    let before = combined(kept.iter().map(|k| &k.before), u64::min, f64::min);
    let after = combined(kept.iter().map(|k| &k.after), u64::max, f64::max);
    let from = kept
        .iter()
        .map(|k| k.before_unix_secs)
        .fold(f64::INFINITY, f64::min);
    let to = kept.iter().map(|k| k.after_unix_secs).fold(0.0, f64::max);
    let sent: Vec<(String, u64)> = shards[0]
        .commands
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let of = shards.iter().filter_map(|v| v.commands.get(i));
            (c.command.clone(), of.map(|s| s.sent_by_tailrate).sum())
        })
        .collect();
    Ok(view(&before, &after, (to - from).max(0.0), &sent))
}

/// Readings of one server combined figure by figure with `pick` (the smallest or the
/// largest); a fact any of them lacks is lacking. A command or bucket a reading does not
/// list has the count it implies: none called yet, or the count of the bound under it.
fn combined<'a>(
    readings: impl Iterator<Item = &'a Reading> + Clone,
    pick: fn(u64, u64) -> u64,
    pick_secs: fn(f64, f64) -> f64,
) -> Reading {
    let all = |f: fn(&Reading) -> bool| readings.clone().all(f);
    let mut missing: Vec<String> = readings.clone().flat_map(|r| r.missing.clone()).collect();
    missing.sort();
    missing.dedup();
    // Every name any of the readings lists, in order.
    fn names<'r, V: 'r>(
        maps: impl Iterator<Item = Option<&'r BTreeMap<String, V>>>,
    ) -> std::collections::BTreeSet<&'r String> {
        maps.flatten().flat_map(BTreeMap::keys).collect()
    }
    let commands = all(|r| r.commands.is_some()).then(|| {
        names(readings.clone().map(|r| r.commands.as_ref()))
            .into_iter()
            .map(|name| {
                let of = readings.clone().map(|r| {
                    r.commands
                        .as_ref()
                        .and_then(|c| c.get(name).copied())
                        .unwrap_or_default()
                });
                let fold = |f: fn(&CommandCounters) -> u64| of.clone().map(|c| f(&c)).reduce(pick);
                let counters = CommandCounters {
                    calls: fold(|c| c.calls).unwrap_or(0),
                    usec: fold(|c| c.usec).unwrap_or(0),
                    rejected_calls: fold(|c| c.rejected_calls).unwrap_or(0),
                };
                (name.clone(), counters)
            })
            .collect()
    });
    let cpu_secs = readings
        .clone()
        .map(|r| r.cpu_secs)
        .collect::<Option<Vec<f64>>>()
        .and_then(|c| c.into_iter().reduce(pick_secs));
    let latency = all(|r| r.latency.is_some()).then(|| {
        names(readings.clone().map(|r| r.latency.as_ref()))
            .into_iter()
            .map(|name| {
                let empty = Vec::new();
                let lists: Vec<&Vec<(u64, u64)>> = readings
                    .clone()
                    .map(|r| {
                        r.latency
                            .as_ref()
                            .and_then(|l| l.get(name))
                            .unwrap_or(&empty)
                    })
                    .collect();
                let mut bounds: Vec<u64> =
                    lists.iter().flat_map(|l| l.iter().map(|b| b.0)).collect();
                bounds.sort_unstable();
                bounds.dedup();
                let buckets = bounds
                    .into_iter()
                    .map(|bound| {
                        let counts = lists.iter().map(|l| cumulative_at(l, bound));
                        (bound, counts.reduce(pick).unwrap_or(0))
                    })
                    .collect();
                (name.clone(), buckets)
            })
            .collect()
    });
    Reading {
        commands,
        cpu_secs,
        latency,
        missing,
        run_ids: readings
            .clone()
            .next()
            .map(|r| r.run_ids.clone())
            .unwrap_or_default(),
        process_ids: Vec::new(),
    }
}

/// The name commandstats and LATENCY HISTOGRAM use for a command tailrate sends:
/// lower case, the first word (a custom command's arguments are not part of it).
pub fn server_name(command: &str) -> String {
    command
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// A cumulative histogram's count at `bound`: a bound it lacks (the server lists only
/// the buckets that have calls) has the count of the highest bound under it, or zero.
fn cumulative_at(buckets: &[(u64, u64)], bound: u64) -> u64 {
    buckets
        .iter()
        .take_while(|(b, _)| *b <= bound)
        .last()
        .map_or(0, |(_, c)| *c)
}

/// Two nodes' cumulative histograms added: cumulative counts at the union of their bounds.
pub fn add_cumulative(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut bounds: Vec<u64> = a.iter().chain(b).map(|(bound, _)| *bound).collect();
    bounds.sort_unstable();
    bounds.dedup();
    bounds
        .into_iter()
        .map(|bound| (bound, cumulative_at(a, bound) + cumulative_at(b, bound)))
        .collect()
}

/// `after - before` of cumulative bucket counts, as counts per bucket.
pub(super) fn difference(before: &[(u64, u64)], after: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let cumulative: Vec<(u64, u64)> = after
        .iter()
        .map(|&(bound, count)| (bound, count.saturating_sub(cumulative_at(before, bound))))
        .collect();
    let mut previous = 0;
    cumulative
        .into_iter()
        .map(|(bound, c)| {
            let in_bucket = c.saturating_sub(previous);
            previous = previous.max(c);
            (bound, in_bucket)
        })
        .collect()
}

/// The bucket bound each of p50, p90, p99 and p99.9 falls under; `None` when no call
/// was counted.
pub(super) fn percentiles(buckets: &[(u64, u64)]) -> Option<ExecPercentiles> {
    let total: u64 = buckets.iter().map(|(_, c)| c).sum();
    if total == 0 {
        return None;
    }
    let at = |q: f64| {
        // The smallest bound with at least q of the calls at or under it.
        let need = (q * total as f64).ceil() as u64;
        let mut seen = 0;
        for &(bound, count) in buckets {
            seen += count;
            if seen >= need {
                return bound;
            }
        }
        buckets.last().map_or(0, |b| b.0)
    };
    Some(ExecPercentiles {
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        p99_9: at(0.999),
    })
}
