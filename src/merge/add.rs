//! Adding shards' reports into the report of their whole plan: every histogram added
//! (never a percentile averaged) and every percentile and interval derived again from
//! the sums, the counts added (so the accounting identity holds or fails on the sums),
//! and each shard's own figures kept beside the sums. Pure: the files are read and
//! written by the caller. Which shards may be added is `plan.rs`'s, the logs' shared
//! clock `clock.rs`'s, and the merged test's self-checks `checks.rs`'s.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::checks::{Judged, merged_checks};
use super::clock::{Clock, exact, merged_log, series};
use super::error::MergeError;
use super::input::ShardInput;
use super::plan::{self, Shards, index_of};
use crate::export::hlog::sanitize;
use crate::record::Metric;
use crate::report::merged::{MergeSummary, ShardPart, ShardTest};
use crate::report::verdict::Verdict;
use crate::report::{
    CommandReport, Counts, Header, IntervalSummary, Latency, LayoutChangeReport, ResponseWindows,
    RunReport, Settings, TestReport,
};
use crate::stats::confidence::{Batch, MIN_GROUPS};

/// The shards' logs of one test, for its intervals: their clock, the shards, and the
/// test's tag in them.
type TestLogs<'a> = (&'a Clock, &'a [ShardInput], &'a str);

/// Adds `shards` (sorted by index) into one report and, when they came with logs, the
/// merged log's text.
pub fn merge_reports(
    shards: &[ShardInput],
    partial: bool,
) -> Result<(RunReport, Option<Vec<u8>>), MergeError> {
    let which = plan::check(shards, partial)?;
    let Some(first) = shards.first() else {
        return Err(MergeError::NoReports);
    };
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
            tests.push(merge_test(&parts, &which, Some((clock, shards, &tag))));
        } else {
            tests.push(merge_test(&parts, &which, None));
        }
    }
    let log = clock
        .as_ref()
        .map(|clock| merged_log(clock, shards, &first.report, which.count));
    let report = RunReport {
        header: merged_header(shards, &first.report.header),
        settings: merged_settings(shards, &first.report.settings),
        tests,
        contrasts: Vec::new(),
        repeats: Vec::new(),
        merge: Some(merge_summary(shards, which)),
    };
    Ok((report, log))
}

/// The first shard's header, with the merge's own command line.
fn merged_header(shards: &[ShardInput], first: &Header) -> Header {
    let mut header = first.clone();
    header.command_line = std::iter::once("tailrate merge".to_string())
        .chain(shards.iter().map(|s| s.path.display().to_string()))
        .collect();
    header
}

/// The first shard's settings, with what each shard has a share of added and no shard.
fn merged_settings(shards: &[ShardInput], first: &Settings) -> Settings {
    let mut settings: Settings = first.clone();
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
    settings
}

/// Which shards were merged, and each shard's own figures beside the sums.
fn merge_summary(shards: &[ShardInput], which: Shards) -> MergeSummary {
    MergeSummary {
        shards: which.count,
        partial: !which.missing.is_empty(),
        missing: which.missing,
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
    }
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

/// `total` summarised, its intervals from the per-interval `batches` (the shards' log
/// intervals added), or binomial ones alone without.
fn derived(total: &Histogram<u64>, batches: &[Batch], length_secs: f64) -> Latency {
    let mut latency = Latency::of(total, batches);
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
    into.unanswered_counted += c.unanswered_counted;
    into.longest_unanswered_ns = into.longest_unanswered_ns.max(c.longest_unanswered_ns);
    into.redirects += c.redirects;
}

/// One test of every shard (`parts`, of the shards `which`), added.
fn merge_test(parts: &[&TestReport], which: &Shards, logs: Option<TestLogs<'_>>) -> TestReport {
    let first = parts[0];
    let mut counts = Counts::default();
    for p in parts {
        add_counts(&mut counts, &p.counts);
    }
    let latency = merged_latency(parts, logs);
    let commands = merged_commands(parts);
    let intervals = logs.map_or_else(Vec::new, merged_intervals);
    let Judged {
        checks,
        server,
        arrivals,
    } = merged_checks(parts, which, &counts);
    let valid = checks.iter().all(|c| c.verdict != Verdict::Fail) && counts.not_sent == 0;
    let sum = |f: fn(&TestReport) -> f64| parts.iter().map(|p| f(p)).sum::<f64>();
    TestReport {
        name: first.name.clone(),
        target_rate_per_sec: parts.iter().map(|p| p.target_rate_per_sec).sum(),
        achieved_rate_per_sec: sum(|t| t.achieved_rate_per_sec),
        offered_rate_per_sec: parts.iter().map(|p| p.offered_rate_per_sec).sum(),
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
        excluded_from_latency: counts.excluded_from_latency(),
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
        tail: None,
        slo: None,
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
        response_windows: merged_windows(parts),
        // Each shard's host is its own machine's: their waits do not add up to one host.
        host: None,
    }
    .judged()
}

/// The shards' response windows added window by window (the shards start together); none
/// unless every shard kept windows of one length.
fn merged_windows(parts: &[&TestReport]) -> Option<ResponseWindows> {
    let all: Vec<&ResponseWindows> = parts
        .iter()
        .map(|p| p.response_windows.as_ref())
        .collect::<Option<_>>()?;
    let first = *all.first()?;
    if all.iter().any(|w| w.window_secs != first.window_secs) {
        return None;
    }
    let mut windows: Vec<Batch> = Vec::new();
    for w in &all {
        if windows.len() < w.windows.len() {
            windows.resize_with(w.windows.len(), Batch::default);
        }
        for (into, b) in windows.iter_mut().zip(&w.windows) {
            into.add(b);
        }
    }
    Some(ResponseWindows {
        window_secs: first.window_secs,
        windows,
    })
}

/// Each metric's histograms added over `parts`, its intervals from the shards' logs of
/// it (binomial ones alone without logs).
fn merged_latency(parts: &[&TestReport], logs: Option<TestLogs<'_>>) -> BTreeMap<Metric, Latency> {
    let mut latency = BTreeMap::new();
    for metric in parts[0].latency.keys() {
        let of: Vec<&Latency> = parts.iter().filter_map(|p| p.latency.get(metric)).collect();
        let total = added(&of);
        let (batches, length) = match logs {
            Some((clock, shards, tag)) => {
                let mut batches = Vec::new();
                series(
                    clock,
                    shards,
                    Some(&format!("{tag}.{metric}")),
                    |_, _, h| {
                        batches.push(Batch::of(&h));
                    },
                );
                (batches, clock.length_secs)
            }
            None => (Vec::new(), 0.0),
        };
        latency.insert(*metric, derived(&total, &batches, length));
    }
    latency
}

/// Each command's counts and histograms added over `parts` (no logs: binomial
/// intervals).
fn merged_commands(parts: &[&TestReport]) -> Vec<CommandReport> {
    parts[0]
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
                latency.insert(*metric, derived(&added(&of), &[], 0.0));
            }
            CommandReport {
                command: command.command.clone(),
                counts,
                latency,
            }
        })
        .collect()
}

/// The test's latency over time: per interval number of the shared clock, the shards'
/// response histograms added.
fn merged_intervals((clock, shards, tag): TestLogs<'_>) -> Vec<IntervalSummary> {
    let mut out = Vec::new();
    let mut origin = None;
    series(
        clock,
        shards,
        Some(&format!("{tag}.response")),
        |n, length_secs, h| {
            let origin = *origin.get_or_insert(n);
            let q = |p: f64| {
                if h.is_empty() {
                    0
                } else {
                    h.value_at_quantile(p)
                }
            };
            out.push(IntervalSummary {
                start_secs: (n - origin) as f64 * clock.length_secs,
                length_secs,
                completed: h.len(),
                // The logs hold successful replies only.
                errors: 0,
                p50_ns: q(0.5),
                p99_ns: q(0.99),
                max_ns: if h.is_empty() { 0 } else { h.max() },
            });
        },
    );
    out
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
