//! The server's own view of a test: what it counted and timed, read from `INFO
//! commandstats`, `INFO cpu` and `LATENCY HISTOGRAM` before and after the test, and the
//! difference of the two readings.
//!
//! Every counter read here is cumulative since the server started, so two readings
//! subtract exactly to what happened between them, whatever else the server did before.
//! What a server does not answer (a proxy, a user without `INFO` or `LATENCY`, Redis
//! before 7) is a fact missing, said in words in `missing`, never an error.
//!
//! Parsing lives here, pure; taking the readings over a connection is `app::server_view`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::resp::Reply;

/// One reading of the server's counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// `INFO commandstats`, by lower-case command name (`get`, `config|get`).
    pub commands: Option<BTreeMap<String, CommandCounters>>,
    /// `used_cpu_sys + used_cpu_user` (the server process, all its threads).
    pub cpu_secs: Option<f64>,
    /// `LATENCY HISTOGRAM`, by lower-case command name: cumulative counts of calls that
    /// took at most each bucket's bound, in microseconds, ascending.
    pub latency: Option<BTreeMap<String, Vec<(u64, u64)>>>,
    /// Facts this reading lacks, and why ("LATENCY HISTOGRAM: unknown command").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// `run_id` of each node read (`INFO server`), where asked: a shard's first reading
    /// asks, so that the merge adds only readings of the same server processes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_ids: Vec<String>,
}

impl Reading {
    /// The reading of `commands` alone (tailrate's names), the rest of commandstats and
    /// of the histograms left out: what a shard keeps.
    pub fn of_commands(&self, commands: &[String]) -> Reading {
        fn only<V: Clone>(map: &BTreeMap<String, V>, keys: &[String]) -> BTreeMap<String, V> {
            map.iter()
                .filter(|(k, _)| keys.contains(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        }
        let keys: Vec<String> = commands.iter().map(|c| server_name(c)).collect();
        Reading {
            commands: self.commands.as_ref().map(|m| only(m, &keys)),
            latency: self.latency.as_ref().map(|m| only(m, &keys)),
            ..self.clone()
        }
    }
}

/// A command's counters in `INFO commandstats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandCounters {
    /// Calls executed.
    pub calls: u64,
    /// Microseconds spent executing them.
    pub usec: u64,
    /// Calls refused before execution (arity, ACL, OOM); Redis 7 and later.
    pub rejected_calls: u64,
}

/// The server's view of one test: the difference of the readings before and after it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerView {
    /// Seconds between the two readings (the test, warm-up and drain included).
    pub span_secs: f64,
    /// Per command the test sent, in the test's order.
    pub commands: Vec<ServerCommand>,
    /// Server CPU seconds between the readings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_secs: Option<f64>,
    /// `cpu_secs / span_secs`: 1.0 is one core kept busy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_utilisation: Option<f64>,
    /// Facts the server did not give, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The two readings themselves, kept by a shard: its server also counts the other
    /// shards' requests, so only the merge can take the view of the whole plan, from the
    /// earliest reading before and the latest after of all the shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<Box<KeptReadings>>,
}

impl ServerView {
    /// Microseconds the server spent executing the test's commands: each command's mean
    /// execution time times its calls, over the commands that reported one.
    pub fn exec_usec_total(&self) -> f64 {
        self.commands
            .iter()
            .filter_map(|c| Some(c.mean_exec_usec? * c.calls as f64))
            .sum()
    }
}

/// A shard's readings before and after its test, of its commands alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptReadings {
    /// When the reading before was taken, in Unix seconds (the shards' common clock).
    pub before_unix_secs: f64,
    /// When the reading after was taken.
    pub after_unix_secs: f64,
    /// The reading before.
    pub before: Reading,
    /// The reading after.
    pub after: Reading,
}

/// What the server counted and timed of one command during a test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCommand {
    /// The command, as tailrate names it (`GET`).
    pub command: String,
    /// Calls the server executed, plus those it rejected.
    pub calls: u64,
    /// Requests of it tailrate wrote, warm-up included.
    pub sent_by_tailrate: u64,
    /// Mean execution time in microseconds (`usec` over `calls`), exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_exec_usec: Option<f64>,
    /// Execution-time percentiles from the server's histogram, in microseconds: the upper
    /// bound of the bucket each falls in (the server's buckets double from 1 µs: 1, 2,
    /// 4, ..., 528, 1056, 2113), so `p50 <= 4 µs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exec_usec_at_most: Option<ExecPercentiles>,
}

/// Upper bounds of the server's execution time at the report's percentiles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecPercentiles {
    /// 50th percentile's bucket bound, µs.
    pub p50: u64,
    /// 90th.
    pub p90: u64,
    /// 99th.
    pub p99: u64,
    /// 99.9th.
    pub p99_9: u64,
}

/// Parses `INFO commandstats`: `cmdstat_get:calls=3,usec=9,usec_per_call=3.00,...` lines.
pub fn parse_commandstats(text: &str) -> BTreeMap<String, CommandCounters> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((name, fields)) = line
            .trim()
            .strip_prefix("cmdstat_")
            .and_then(|l| l.split_once(':'))
        else {
            continue;
        };
        let mut counters = CommandCounters::default();
        for field in fields.split(',') {
            let Some((key, value)) = field.split_once('=') else {
                continue;
            };
            let value = value.parse().unwrap_or(0);
            match key {
                "calls" => counters.calls = value,
                "usec" => counters.usec = value,
                "rejected_calls" => counters.rejected_calls = value,
                _ => {}
            }
        }
        out.insert(name.to_ascii_lowercase(), counters);
    }
    out
}

/// Parses `INFO server` for the process's `run_id` (random at each start, so two
/// readings with one run_id are of one server process that never restarted between).
pub fn parse_run_id(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("run_id:"))
        .map(|id| id.trim().to_string())
        .filter(|id| !id.is_empty())
}

/// Parses `INFO cpu` for the process's CPU seconds (system plus user, children excluded).
pub fn parse_cpu_secs(text: &str) -> Option<f64> {
    let field = |key: &str| {
        text.lines().find_map(|l| {
            l.trim()
                .strip_prefix(key)?
                .strip_prefix(':')?
                .parse::<f64>()
                .ok()
        })
    };
    Some(field("used_cpu_sys")? + field("used_cpu_user")?)
}

/// Parses `LATENCY HISTOGRAM`'s reply: per command, `calls` and `histogram_usec` (a flat
/// array or map of bucket bound and cumulative count), in RESP2 or RESP3 form.
pub fn parse_latency_histogram(reply: &Reply) -> Option<BTreeMap<String, Vec<(u64, u64)>>> {
    let mut out = BTreeMap::new();
    for (name, body) in pairs(reply)? {
        let name = name.as_str()?.to_ascii_lowercase();
        let mut buckets = Vec::new();
        for (key, value) in pairs(body)? {
            if key.as_str() == Some("histogram_usec") {
                for (bound, count) in pairs(value)? {
                    buckets.push((
                        bound.as_int()?.try_into().ok()?,
                        count.as_int()?.try_into().ok()?,
                    ));
                }
            }
        }
        buckets.sort_unstable();
        out.insert(name, buckets);
    }
    Some(out)
}

/// A RESP3 map's pairs, or a RESP2 array read two elements at a time.
fn pairs(reply: &Reply) -> Option<Vec<(&Reply, &Reply)>> {
    match reply {
        Reply::Map(pairs) => Some(pairs.iter().map(|(k, v)| (k, v)).collect()),
        Reply::Array(items) if items.len() % 2 == 0 => {
            Some(items.chunks_exact(2).map(|p| (&p[0], &p[1])).collect())
        }
        _ => None,
    }
}

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
    let commands = sent
        .iter()
        .map(|(command, sent_by_tailrate)| {
            let key = server_name(command);
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
        kept: None,
    }
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
fn difference(before: &[(u64, u64)], after: &[(u64, u64)]) -> Vec<(u64, u64)> {
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
fn percentiles(buckets: &[(u64, u64)]) -> Option<ExecPercentiles> {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn commandstats_lines_parse_and_unknown_fields_are_ignored() {
        let text = "# Commandstats\r\ncmdstat_get:calls=2238545,usec=277292,usec_per_call=0.12,rejected_calls=3,failed_calls=0\r\ncmdstat_config|get:calls=40,usec=197\r\n";
        let stats = parse_commandstats(text);
        assert_eq!(
            stats["get"],
            CommandCounters {
                calls: 2238545,
                usec: 277292,
                rejected_calls: 3
            }
        );
        assert_eq!(stats["config|get"].calls, 40);
    }

    #[test]
    fn cpu_is_system_plus_user_without_children() {
        let text = "# CPU\r\nused_cpu_sys:15.5\r\nused_cpu_user:2.5\r\nused_cpu_sys_children:9.0\r\nused_cpu_user_children:9.0\r\n";
        assert_eq!(parse_cpu_secs(text), Some(18.0));
        assert_eq!(parse_cpu_secs("# CPU\r\n"), None);
    }

    fn histogram_reply(calls: i64, buckets: &[(i64, i64)]) -> Reply {
        let flat = buckets
            .iter()
            .flat_map(|&(b, c)| [Reply::Integer(b), Reply::Integer(c)])
            .collect();
        Reply::Array(vec![
            Reply::Bulk(b"get".to_vec()),
            Reply::Array(vec![
                Reply::Bulk(b"calls".to_vec()),
                Reply::Integer(calls),
                Reply::Bulk(b"histogram_usec".to_vec()),
                Reply::Array(flat),
            ]),
        ])
    }

    #[test]
    fn two_histogram_readings_subtract_to_the_calls_between_them() {
        let before = parse_latency_histogram(&histogram_reply(10, &[(1, 8), (2, 10)])).unwrap();
        // Since then: 90 calls at <= 1 µs, 9 at <= 2, 1 at <= 1024 (a bound new since).
        let after =
            parse_latency_histogram(&histogram_reply(110, &[(1, 98), (2, 109), (1024, 110)]))
                .unwrap();
        assert_eq!(
            difference(&before["get"], &after["get"]),
            vec![(1, 90), (2, 9), (1024, 1)]
        );
        let p = percentiles(&difference(&before["get"], &after["get"])).unwrap();
        assert_eq!((p.p50, p.p90, p.p99, p.p99_9), (1, 1, 2, 1024));
    }

    #[test]
    fn a_view_counts_calls_and_rejections_and_names_what_is_missing() {
        let reading = |calls, usec, rejected, cpu| Reading {
            commands: Some(BTreeMap::from([(
                "set".to_string(),
                CommandCounters {
                    calls,
                    usec,
                    rejected_calls: rejected,
                },
            )])),
            cpu_secs: Some(cpu),
            latency: None,
            missing: vec!["LATENCY HISTOGRAM: unknown command".into()],
            run_ids: vec!["b".into(), "a".into()],
        };
        let v = view(
            &reading(5, 50, 0, 1.0),
            &reading(105, 1050, 2, 1.5),
            2.0,
            &[("SET".into(), 102)],
        );
        assert_eq!(v.commands[0].calls, 102);
        assert_eq!(v.commands[0].mean_exec_usec, Some(10.0));
        assert_eq!(v.commands[0].exec_usec_at_most, None);
        assert_eq!((v.cpu_secs, v.cpu_utilisation), (Some(0.5), Some(0.25)));
        assert_eq!(
            v.missing,
            vec!["LATENCY HISTOGRAM: unknown command".to_string()]
        );
    }

    /// A reading of server `run_id` at `at` (Unix seconds): GET's calls and usec, the
    /// CPU, and GET's cumulative histogram.
    fn reading(run_id: &str, calls: u64, usec: u64, cpu: f64, histogram: &[(u64, u64)]) -> Reading {
        Reading {
            commands: Some(BTreeMap::from([(
                "get".to_string(),
                CommandCounters {
                    calls,
                    usec,
                    rejected_calls: 0,
                },
            )])),
            cpu_secs: Some(cpu),
            latency: Some(BTreeMap::from([("get".to_string(), histogram.to_vec())])),
            missing: Vec::new(),
            run_ids: vec![run_id.into()],
        }
    }

    /// A shard's view of `sent` GETs, with its readings kept.
    fn shard(sent: u64, at: (f64, f64), before: Reading, after: Reading) -> ServerView {
        let mut v = view(&before, &after, at.1 - at.0, &[("GET".into(), sent)]);
        v.kept = Some(Box::new(KeptReadings {
            before_unix_secs: at.0,
            after_unix_secs: at.1,
            before,
            after,
        }));
        v
    }

    #[test]
    fn shards_readings_give_the_view_from_the_earliest_before_to_the_latest_after() {
        // Shard 0 read at t=100 s and 102 s, shard 1 at 100.5 s and 103 s: the view is
        // of 100..103 s, each shard's own view counting some of the other's calls.
        let a = shard(
            80,
            (100.0, 102.0),
            reading("r1", 10, 100, 1.0, &[(1, 8), (2, 10)]),
            reading("r1", 150, 1500, 1.5, &[(1, 140), (2, 148), (4, 150)]),
        );
        let b = shard(
            80,
            (100.5, 103.0),
            reading("r1", 40, 400, 1.1, &[(1, 38), (2, 40)]),
            reading("r1", 170, 1700, 1.6, &[(1, 158), (2, 168), (4, 170)]),
        );
        let v = merged_view(&[&a, &b]).unwrap();
        let get = &v.commands[0];
        assert_eq!((get.calls, get.sent_by_tailrate), (160, 160));
        assert_eq!(get.mean_exec_usec, Some(10.0));
        // From the smallest histogram before, [(1, 8), (2, 10)], to the largest after,
        // [(1, 158), (2, 168), (4, 170)]: 150 calls at 1 µs, 8 at 2 µs, 2 at 4 µs.
        let p = get.exec_usec_at_most.unwrap();
        assert_eq!((p.p50, p.p90, p.p99, p.p99_9), (1, 1, 4, 4));
        assert_eq!(v.span_secs, 3.0);
        assert!((v.cpu_secs.unwrap() - 0.6).abs() < 1e-9, "{v:?}");
        assert!(v.missing.is_empty(), "{v:?}");
    }

    #[test]
    fn shards_that_read_different_servers_or_kept_no_readings_are_not_combined() {
        let r = |id: &str, calls| reading(id, calls, 0, 1.0, &[]);
        let a = shard(80, (0.0, 1.0), r("r1", 0), r("r1", 80));
        let other = shard(80, (0.0, 1.0), r("r2", 0), r("r2", 80));
        let why = merged_view(&[&a, &other]).unwrap_err();
        assert!(
            why.contains("different servers") && why.contains("r2"),
            "{why}"
        );
        let mut forgot = shard(80, (0.0, 1.0), r("r1", 0), r("r1", 80));
        forgot.kept = None;
        assert!(merged_view(&[&a, &forgot]).is_err());
        let anonymous = shard(80, (0.0, 1.0), r("", 0), r("", 80));
        let mut anonymous = anonymous;
        if let Some(k) = anonymous.kept.as_mut() {
            k.before.run_ids.clear();
        }
        assert!(
            merged_view(&[&anonymous, &anonymous])
                .unwrap_err()
                .contains("run_id")
        );
    }

    #[test]
    fn a_shards_reading_keeps_only_its_commands() {
        let mut r = reading("r1", 5, 50, 1.0, &[(1, 5)]);
        r.commands
            .as_mut()
            .unwrap()
            .insert("info".into(), CommandCounters::default());
        let kept = r.of_commands(&["GET".into()]);
        assert_eq!(kept.commands.unwrap().keys().collect::<Vec<_>>(), ["get"]);
        assert_eq!(kept.run_ids, ["r1"]);
    }

    #[test]
    fn a_run_id_is_read_from_info_server() {
        let text = "# Server\r\nredis_version:7.0.15\r\nrun_id:9f2c\r\ntcp_port:6379\r\n";
        assert_eq!(parse_run_id(text).as_deref(), Some("9f2c"));
        assert_eq!(parse_run_id("# Server\r\nrun_id:\r\n"), None);
    }

    #[test]
    fn nodes_histograms_add_at_the_union_of_their_bounds() {
        assert_eq!(
            add_cumulative(&[(1, 5), (4, 7)], &[(2, 3), (4, 4)]),
            vec![(1, 5), (2, 8), (4, 11)]
        );
    }

    #[test]
    fn replies_of_the_wrong_shape_are_no_histogram_not_a_panic() {
        assert_eq!(parse_latency_histogram(&Reply::Integer(3)), None);
        assert_eq!(
            parse_latency_histogram(&Reply::Array(vec![Reply::Null])),
            None
        );
        assert!(
            parse_latency_histogram(&Reply::Array(vec![]))
                .unwrap()
                .is_empty()
        );
    }
}
