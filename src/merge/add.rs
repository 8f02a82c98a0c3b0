//! Adding shards' reports into the report of their whole plan: every histogram added
//! (never a percentile averaged) and every percentile and interval derived again from
//! the sums, the counts added (so the accounting identity holds or fails on the sums),
//! the self-checks combined (a check failed by any shard fails the merge and names the
//! shard), and each shard's own figures kept beside the sums. Pure: the files are read
//! and written by the caller.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::hlog::LogInterval;
use super::{MergeError, ShardInput};
use crate::export::hlog::{HlogWriter, sanitize};
use crate::report::merged::{MergeSummary, ShardPart, ShardTest};
use crate::report::verdict::{Check, Verdict};
use crate::report::{
    CommandReport, Counts, IntervalSummary, Latency, LayoutChangeReport, RunReport, Settings,
    TestReport,
};
use crate::stats::confidence::{Batch, MIN_GROUPS};

/// The settings that make two reports shards of one plan: everything but what a shard
/// has its own share of (connections, threads, requests, the rate) and its index.
fn plan_of(report: &RunReport) -> BTreeMap<String, serde_json::Value> {
    let mut settings = match serde_json::to_value(&report.settings) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    for own in ["clients", "threads", "requests", "target_rate_per_sec"] {
        settings.remove(own);
    }
    let mut plan: BTreeMap<String, serde_json::Value> = settings.into_iter().collect();
    if let Some(serde_json::Value::Object(shard)) = plan.remove("shard") {
        for (k, v) in shard.into_iter().filter(|(k, _)| k != "index") {
            plan.insert(format!("shard.{k}"), v);
        }
    }
    // The whole plan's rate: each shard targets its K-th of it.
    let count = report.settings.shard.map_or(1, |s| s.count);
    if let Some(rate) = report.settings.target_rate_per_sec {
        plan.insert(
            "rate of the whole plan".into(),
            serde_json::json!(format!("{:.6}", rate * f64::from(count))),
        );
    }
    plan.insert("seed".into(), serde_json::json!(report.header.seed));
    let names: Vec<&str> = report.tests.iter().map(|t| t.name.as_str()).collect();
    plan.insert("tests".into(), serde_json::json!(names));
    plan
}

/// Adds `shards` (sorted by index) into one report and, when they came with logs, the
/// merged log's text.
pub fn merge_reports(
    shards: &[ShardInput],
    partial: bool,
) -> Result<(RunReport, Option<Vec<u8>>), MergeError> {
    let refuse = |why: String| Err(MergeError::Refused(why));
    let Some(first) = shards.first() else {
        return Err(MergeError::NoReports);
    };
    let count = first.report.settings.shard.map_or(1, |s| s.count);
    let plan = plan_of(&first.report);
    for s in &shards[1..] {
        let other = plan_of(&s.report);
        if other != plan {
            let differs = plan
                .keys()
                .chain(other.keys())
                .find(|k| plan.get(*k) != other.get(*k))
                .cloned()
                .unwrap_or_default();
            return refuse(format!(
                "{} and {} are not shards of one plan: their {differs} differs ({} against {})",
                first.path.display(),
                s.path.display(),
                plan.get(&differs)
                    .map_or("none".into(), ToString::to_string),
                other
                    .get(&differs)
                    .map_or("none".into(), ToString::to_string),
            ));
        }
    }
    let index_of = |s: &ShardInput| s.report.settings.shard.map_or(0, |s| s.index);
    for pair in shards.windows(2) {
        if index_of(&pair[0]) == index_of(&pair[1]) {
            return refuse(format!(
                "{} and {} are both shard {} of {count}: give each shard once",
                pair[0].path.display(),
                pair[1].path.display(),
                index_of(&pair[0])
            ));
        }
    }
    let present: Vec<u32> = shards.iter().map(index_of).collect();
    let missing: Vec<u32> = (0..count).filter(|i| !present.contains(i)).collect();
    if !missing.is_empty() && !partial {
        return refuse(format!(
            "shard{} {} of {count} missing: give every shard's report, or --partial for a result marked partial",
            if missing.len() == 1 { "" } else { "s" },
            list(&missing)
        ));
    }
    for s in shards {
        if let Some(log) = &s.log
            && log.seed.is_some_and(|seed| seed != s.report.header.seed)
        {
            return refuse(format!(
                "{}: a log of seed {}, beside {} of seed {}",
                log.path.display(),
                log.seed.unwrap_or_default(),
                s.path.display(),
                s.report.header.seed
            ));
        }
    }
    let logs_given = shards.iter().all(|s| s.log.is_some());
    let clock = logs_given.then(|| Clock::of(shards)).flatten();

    let mut tests = Vec::with_capacity(first.report.tests.len());
    for (t, first_test) in first.report.tests.iter().enumerate() {
        let parts: Vec<&TestReport> = shards.iter().map(|s| &s.report.tests[t]).collect();
        let tag = sanitize(&first_test.name);
        if let Some(clock) = &clock {
            for s in shards {
                exact(s, &s.report.tests[t], &tag)?;
            }
            tests.push(merge_test(
                &parts,
                &present,
                &missing,
                Some((clock, shards, &tag)),
            ));
        } else {
            tests.push(merge_test(&parts, &present, &missing, None));
        }
    }
    let log = clock
        .as_ref()
        .map(|clock| merged_log(clock, shards, &first.report, count));
    let mut settings: Settings = first.report.settings.clone();
    let all = |f: fn(&Settings) -> Option<u64>| -> Option<u64> {
        shards.iter().map(|s| f(&s.report.settings)).sum()
    };
    settings.clients = shards.iter().map(|s| s.report.settings.clients).sum();
    settings.threads = shards.iter().map(|s| s.report.settings.threads).sum();
    settings.requests = all(|s| s.requests);
    settings.target_rate_per_sec = shards
        .iter()
        .map(|s| s.report.settings.target_rate_per_sec)
        .sum();
    settings.shard = None;
    let mut header = first.report.header.clone();
    header.command_line = std::iter::once("tailrate merge".to_string())
        .chain(shards.iter().map(|s| s.path.display().to_string()))
        .collect();
    let report = RunReport {
        header,
        settings,
        tests,
        contrasts: Vec::new(),
        repeats: Vec::new(),
        merge: Some(MergeSummary {
            shards: count,
            partial: !missing.is_empty(),
            missing,
            parts: shards
                .iter()
                .map(|s| ShardPart {
                    index: index_of(s),
                    report: s.path.display().to_string(),
                    log: s.log.as_ref().map(|l| l.path.display().to_string()),
                    tests: s
                        .report
                        .tests
                        .iter()
                        .map(|t| ShardTest {
                            name: t.name.clone(),
                            counts: t.counts.clone(),
                            achieved_rate_per_sec: t.achieved_rate_per_sec,
                            start_skew_ns: t.start_skew_ns,
                            response_p50_ns: t.response().map_or(0, |l| l.p50_ns),
                            response_p99_ns: t.response().map_or(0, |l| l.p99_ns),
                            valid: t.valid,
                        })
                        .collect(),
                })
                .collect(),
        }),
    };
    Ok((report, log))
}

fn list(indices: &[u32]) -> String {
    indices
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The shared clock of the shards' logs: intervals are numbered by their start, in
/// whole interval lengths from the earliest, so that intervals of different shards
/// covering the same time (their starts differ by the logs' millisecond rounding and the
/// shards' start skew) get one number.
struct Clock {
    base_unix_secs: f64,
    length_secs: f64,
}

impl Clock {
    fn of(shards: &[ShardInput]) -> Option<Clock> {
        let lines = shards
            .iter()
            .filter_map(|s| s.log.as_ref())
            .flat_map(|l| &l.intervals);
        let base = lines.clone().map(|i| i.start_unix_secs).reduce(f64::min)?;
        let length = lines.map(|i| i.length_secs).reduce(f64::max)?;
        (length > 0.0).then_some(Clock {
            base_unix_secs: base,
            length_secs: length,
        })
    }

    fn number(&self, interval: &LogInterval) -> u64 {
        ((interval.start_unix_secs - self.base_unix_secs) / self.length_secs)
            .round()
            .max(0.0) as u64
    }
}

/// One series on the shared clock: by interval number, its length in seconds and the
/// shards' histograms of it added.
type Series = BTreeMap<u64, (f64, Histogram<u64>)>;

/// Every shard's intervals of series `tag` added per interval number, in order.
fn series(clock: &Clock, shards: &[ShardInput], tag: Option<&str>) -> Series {
    let mut out = Series::new();
    for log in shards.iter().filter_map(|s| s.log.as_ref()) {
        for line in log.intervals.iter().filter(|i| i.tag.as_deref() == tag) {
            let entry = out
                .entry(clock.number(line))
                .or_insert_with(|| (line.length_secs, crate::record::new_histogram()));
            entry.0 = entry.0.max(line.length_secs);
            // Both sides span 1 ns to 1 h (tailrate's bounds), so adding cannot fail.
            let _ = entry.1.add(&line.histogram);
        }
    }
    out
}

/// Refuses a log whose intervals of `tag.response` do not add up to the report's
/// response histogram, value for value: a log of another run, or a cut one.
fn exact(shard: &ShardInput, test: &TestReport, tag: &str) -> Result<(), MergeError> {
    let Some(log) = &shard.log else {
        return Ok(());
    };
    let Some(reported) = test.response().and_then(Latency::histogram) else {
        return Ok(());
    };
    let want = format!("{tag}.response");
    let mut sum = crate::record::new_histogram();
    for line in log
        .intervals
        .iter()
        .filter(|i| i.tag.as_deref() == Some(want.as_str()))
    {
        let _ = sum.add(&line.histogram);
    }
    if sum == reported {
        return Ok(());
    }
    Err(MergeError::Refused(format!(
        "{}: its intervals of {} hold {} values, {} holds {}: not the log of that report",
        log.path.display(),
        test.name,
        sum.len(),
        shard.path.display(),
        reported.len()
    )))
}

/// The histogram of `metric` added over `parts`.
fn added(parts: &[&Latency]) -> Histogram<u64> {
    let mut sum = crate::record::new_histogram();
    for part in parts {
        if let Some(h) = part.histogram() {
            let _ = sum.add(&h);
        }
    }
    sum
}

/// `total` summarised, its intervals from the per-interval histograms `batches` (the
/// shards' log intervals added), or binomial ones alone without.
fn derived(total: &Histogram<u64>, batches: &[Histogram<u64>], length_secs: f64) -> Latency {
    let batches: Vec<Batch> = batches.iter().map(Batch::of).collect();
    let mut latency = Latency::of(total, &batches);
    if let Some(confidence) = &mut latency.confidence {
        let used = batches.iter().filter(|b| !b.is_empty()).count();
        confidence.method = if used >= MIN_GROUPS {
            format!(
                "batch means over {used} intervals of {length_secs} s, each the shards' histograms added"
            )
        } else {
            format!(
                "binomial only ({used} intervals of {length_secs} s in the shards' logs, too few to measure their spread)"
            )
        };
    }
    latency
}

fn add_counts(into: &mut Counts, c: &Counts) {
    into.intended += c.intended;
    into.sent += c.sent;
    into.completed += c.completed;
    into.hits = match (into.hits, c.hits) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    into.misses = match (into.misses, c.misses) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    into.errors += c.errors;
    for (kind, n) in &c.errors_by_kind {
        *into.errors_by_kind.entry(kind.clone()).or_default() += n;
    }
    for (kind, text) in &c.error_examples {
        into.error_examples
            .entry(kind.clone())
            .or_insert_with(|| text.clone());
    }
    into.timeouts += c.timeouts;
    into.not_sent += c.not_sent;
    into.in_flight_at_end += c.in_flight_at_end;
    into.redirects += c.redirects;
}

/// One test of every shard, added.
fn merge_test(
    parts: &[&TestReport],
    present: &[u32],
    missing: &[u32],
    logs: Option<(&Clock, &[ShardInput], &str)>,
) -> TestReport {
    let first = parts[0];
    let mut counts = Counts::default();
    for p in parts {
        add_counts(&mut counts, &p.counts);
    }
    let mut latency = BTreeMap::new();
    for metric in first.latency.keys() {
        let of: Vec<&Latency> = parts.iter().filter_map(|p| p.latency.get(metric)).collect();
        let total = added(&of);
        let (batches, length) = match logs {
            Some((clock, shards, tag)) => {
                let series = series(clock, shards, Some(&format!("{tag}.{metric}")));
                (
                    series.into_values().map(|(_, h)| h).collect::<Vec<_>>(),
                    clock.length_secs,
                )
            }
            None => (Vec::new(), 0.0),
        };
        latency.insert(metric.clone(), derived(&total, &batches, length));
    }
    let commands = first
        .commands
        .iter()
        .enumerate()
        .map(|(c, command)| {
            let mut counts = Counts::default();
            let mut latency = BTreeMap::new();
            for p in parts {
                if let Some(pc) = p.commands.get(c) {
                    add_counts(&mut counts, &pc.counts);
                }
            }
            for metric in command.latency.keys() {
                let of: Vec<&Latency> = parts
                    .iter()
                    .filter_map(|p| p.commands.get(c)?.latency.get(metric))
                    .collect();
                latency.insert(metric.clone(), derived(&added(&of), &[], 0.0));
            }
            CommandReport {
                command: command.command.clone(),
                counts,
                latency,
            }
        })
        .collect();
    let intervals = match logs {
        Some((clock, shards, tag)) => {
            let start = series(clock, shards, Some(&format!("{tag}.response")));
            let origin = start.keys().next().copied().unwrap_or(0);
            start
                .into_iter()
                .map(|(n, (length_secs, h))| {
                    let q = |p: f64| {
                        if h.is_empty() {
                            0
                        } else {
                            h.value_at_quantile(p)
                        }
                    };
                    IntervalSummary {
                        start_secs: (n - origin) as f64 * clock.length_secs,
                        length_secs,
                        completed: h.len(),
                        // The logs hold successful replies only.
                        errors: 0,
                        p50_ns: q(0.5),
                        p99_ns: q(0.99),
                        max_ns: if h.is_empty() { 0 } else { h.max() },
                    }
                })
                .collect()
        }
        None => Vec::new(),
    };
    let mut checks = combined_checks(parts, present);
    let arrivals = merged_arrivals(parts);
    if let Some(a) = &arrivals {
        // The shards' sends together replace their separate verdicts: each shard's own
        // check saw only its share of the superposition.
        let together = crate::judge::checks::poisson_fit(
            &a.counts,
            std::time::Duration::from_nanos(a.window_ns),
            "the shards' sends together: ",
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
        });
    }
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
    let server = match server {
        Some(Ok(view)) => {
            if let Some(check) = crate::judge::checks::server_count(&view, &counts) {
                checks.push(check);
            }
            Some(view)
        }
        Some(Err(why)) => Some(crate::report::server::ServerView {
            missing: vec![format!("the shards' readings together: {why}")],
            ..Default::default()
        }),
        None => None,
    };
    let valid = checks.iter().all(|c| c.verdict != Verdict::Fail) && counts.not_sent == 0;
    let sum = |f: fn(&TestReport) -> f64| parts.iter().map(|p| f(p)).sum::<f64>();
    TestReport {
        name: first.name.clone(),
        target_rate_per_sec: parts.iter().map(|p| p.target_rate_per_sec).sum(),
        achieved_rate_per_sec: sum(|t| t.achieved_rate_per_sec),
        throughput_per_sec: sum(|t| t.throughput_per_sec),
        sent_bytes: parts.iter().map(|p| p.sent_bytes).sum(),
        received_bytes: parts.iter().map(|p| p.received_bytes).sum(),
        sent_bytes_per_sec: sum(|t| t.sent_bytes_per_sec),
        received_bytes_per_sec: sum(|t| t.received_bytes_per_sec),
        measured_secs: parts.iter().map(|p| p.measured_secs).fold(0.0, f64::max),
        started_at_unix_secs: parts
            .iter()
            .map(|p| p.started_at_unix_secs)
            .fold(f64::INFINITY, f64::min),
        excluded_from_latency: counts.intended.saturating_sub(counts.completed),
        counts,
        latency,
        commands,
        checks,
        valid,
        stopped_early: parts.iter().find_map(|p| p.stopped_early.clone()),
        generator_cpu: parts.iter().flat_map(|p| p.generator_cpu.clone()).collect(),
        intervals,
        nodes: Vec::new(),
        batches: None,
        reconnects: parts.iter().map(|p| p.reconnects).sum(),
        outages: parts.iter().flat_map(|p| p.outages.clone()).collect(),
        outages_left_out: parts.iter().map(|p| p.outages_left_out).sum(),
        // Each shard's server view also counted the other shards' requests: the merged
        // view is the shards' readings together.
        server,
        bottleneck: None, // judged below, from the sums
        repeat: first.repeat,
        start_skew_ns: parts.iter().filter_map(|p| p.start_skew_ns).max(),
        arrivals,
        layout_changes: layout_changes(parts),
        layout_changes_left_out: parts
            .iter()
            .map(|p| p.layout_changes_left_out)
            .max()
            .unwrap_or(0),
        layout_reads: parts.iter().map(|p| p.layout_reads).sum(),
    }
    .judged()
}

/// Every shard sees the same changes of a cluster's layout, each when its own read
/// showed it: each change once, at the earliest time a shard saw it.
fn layout_changes(parts: &[&TestReport]) -> Vec<LayoutChangeReport> {
    let mut changes: Vec<LayoutChangeReport> = Vec::new();
    for change in parts.iter().flat_map(|p| &p.layout_changes) {
        match changes
            .iter_mut()
            .find(|c| (&c.from, &c.to, c.slots) == (&change.from, &change.to, change.slots))
        {
            Some(seen) => seen.at_secs = seen.at_secs.min(change.at_secs),
            None => changes.push(change.clone()),
        }
    }
    changes.sort_by(|a, b| a.at_secs.total_cmp(&b.at_secs));
    changes
}

/// Every shard's sends per window added, window by window, over the windows all of them
/// hold; `None` unless each part has them, in windows of one length (shards of one plan
/// have equal rates per thread, so their windows match; windows that start a start skew
/// apart still add to a Poisson count, the streams being independent).
fn merged_arrivals(parts: &[&TestReport]) -> Option<crate::report::ArrivalWindows> {
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
    Some(crate::report::ArrivalWindows {
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
            }
        })
        .collect()
}

/// The merged log: per interval number, the untagged series then each tagged one,
/// every shard's histograms of it added.
fn merged_log(clock: &Clock, shards: &[ShardInput], first: &RunReport, count: u32) -> Vec<u8> {
    let mut tags: Vec<Option<String>> = vec![None];
    for log in shards.iter().filter_map(|s| s.log.as_ref()) {
        for line in &log.intervals {
            if !tags.contains(&line.tag) {
                tags.push(line.tag.clone());
            }
        }
    }
    let added: Vec<(Option<String>, Series)> = tags
        .into_iter()
        .map(|tag| {
            let s = series(clock, shards, tag.as_deref());
            (tag, s)
        })
        .collect();
    let mut numbers: Vec<u64> = added.iter().flat_map(|(_, s)| s.keys().copied()).collect();
    numbers.sort_unstable();
    numbers.dedup();
    let mut out = Vec::new();
    let started =
        std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(clock.base_unix_secs.max(0.0));
    let comment = format!(
        "tailrate {} seed {} merged {} of {count} shards",
        env!("CARGO_PKG_VERSION"),
        first.header.seed,
        shards.len()
    );
    {
        let sink: Box<dyn std::io::Write + '_> = Box::new(&mut out);
        let Ok(mut log) = HlogWriter::to_writer(sink, "merged log".into(), started, &comment)
        else {
            return Vec::new();
        };
        for n in numbers {
            let start = std::time::Duration::from_secs_f64(n as f64 * clock.length_secs);
            for (tag, series) in &added {
                let Some((length, h)) = series.get(&n) else {
                    continue;
                };
                let length = std::time::Duration::from_secs_f64(*length);
                // Writing into memory cannot fail.
                let _ = match tag {
                    Some(tag) => log.write(tag, start, length, h),
                    None => log.write_untagged(start, length, h),
                };
            }
        }
    }
    out
}
