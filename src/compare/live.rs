//! The duet: two servers measured in short turns at the same open-loop rate, so that
//! whatever the host does meanwhile (another build, a thermal step, a noisy neighbour)
//! falls on both sides alike instead of on whichever ran second.
//!
//! Round r runs every test on A then B when r is even, B then A when odd (AB BA AB ...),
//! each turn one [`app::measure`] of `--round-duration`. Both sides of a round share its
//! seed (the base seed plus r): the same arrival times and keys, so what differs between
//! them is the server. Each side's turns merge exactly (their histograms added), and each
//! turn's histogram is one batch of the batch-means estimate of
//! [`crate::stats::confidence`]: the spread between a side's rounds, drift included,
//! widens its intervals. That spread is measured at every batch length that leaves ten
//! groups, so the default 10 rounds give one (on 9 degrees of freedom) and 20 give two.
//! Only whole rounds are merged, so Ctrl+C leaves both sides with the same rounds.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;

use crate::app::{self, Status};
use crate::config::RunConfig;
use crate::config::compare::LiveConfig;
use crate::drive::Cancel;
use crate::export::{duet_lines, run_lines};
use crate::judge::compare;
use crate::net::cluster::ClusterMap;
use crate::record::Metric;
use crate::report::compare::{Comparison, Duet, Entry, Options, Side};
use crate::report::{Latency, TestReport};
use crate::stats::confidence::{self, Batch};

use super::InputError;

/// What the duet gives: the comparison of its whole rounds (none if no round finished),
/// and how it ended.
pub(super) struct Outcome {
    /// A against B over every whole round.
    pub comparison: Option<Comparison>,
    /// Completed, interrupted, or failed (a lost server, `--exit-on-error`).
    pub status: Status,
}

/// A test's index, its command (`None`: the whole test), and the metric.
type Key = (usize, Option<String>, Metric);

/// One side's turns so far: per [`Key`], the sum of the histograms and each turn's batch;
/// and why any turn was invalid, by test.
#[derive(Default)]
struct Merged {
    latency: BTreeMap<Key, (Histogram<u64>, Vec<Batch>)>,
    invalid: BTreeMap<usize, Vec<String>>,
}

impl Merged {
    /// Adds one turn of test `index`.
    fn add(&mut self, index: usize, report: &TestReport) -> Result<()> {
        let commands = report
            .commands
            .iter()
            .map(|c| (Some(c.command.clone()), &c.latency));
        for (command, latency) in std::iter::once((None, &report.latency)).chain(commands) {
            for (metric, l) in latency {
                let h = l
                    .histogram()
                    .with_context(|| format!("decoding the {metric} histogram of a turn"))?;
                let (total, batches) = self
                    .latency
                    .entry((index, command.clone(), *metric))
                    .or_insert_with(|| (crate::record::new_histogram(), Vec::new()));
                total.add(&h).context("adding a turn's histogram")?;
                batches.push(Batch::of(&h));
            }
        }
        if !report.valid {
            self.invalid
                .entry(index)
                .or_default()
                .push(report.why_invalid());
        }
        Ok(())
    }

    /// Takes `turn`'s results in, once its round is whole.
    fn absorb(&mut self, turn: Merged) -> Result<()> {
        for (key, (h, batches)) in turn.latency {
            let (total, all) = self
                .latency
                .entry(key)
                .or_insert_with(|| (crate::record::new_histogram(), Vec::new()));
            total.add(&h).context("adding a round's histogram")?;
            all.extend(batches);
        }
        for (index, why) in turn.invalid {
            self.invalid.entry(index).or_default().extend(why);
        }
        Ok(())
    }

    /// The entries of this side: per test, its latencies over every round, each interval
    /// from the rounds as batches.
    fn entries(&self, names: &[String], rounds: usize, round: Duration) -> Vec<Entry> {
        let mut entries: Vec<Entry> = Vec::new();
        for (index, name) in names.iter().enumerate() {
            let invalid = self.invalid.get(&index).map(|why| {
                let mut reasons = why.clone();
                reasons.sort_unstable();
                reasons.dedup();
                format!(
                    "in {} of {rounds} rounds: {}",
                    why.len(),
                    reasons.join("; ")
                )
            });
            let mut entry = Entry {
                name: name.clone(),
                invalid,
                latency: BTreeMap::new(),
                commands: Vec::new(),
                // A live duet's sides take turns on the same host in the same minutes.
                host: None,
                family: String::new(),
                rate: None,
            };
            for ((i, command, metric), (total, batches)) in &self.latency {
                if *i != index {
                    continue;
                }
                let latency = merged_latency(total, batches, round);
                match command {
                    None => {
                        entry.latency.insert(*metric, latency);
                    }
                    Some(c) => match entry.commands.iter_mut().find(|(n, _)| n == c) {
                        Some((_, map)) => {
                            map.insert(*metric, latency);
                        }
                        None => entry
                            .commands
                            .push((c.clone(), BTreeMap::from([(*metric, latency)]))),
                    },
                }
            }
            if !entry.latency.is_empty() {
                entries.push(entry);
            }
        }
        entries
    }
}

/// The latency of a side over its rounds: `total`, each percentile's interval from
/// [`confidence::estimate`] with the rounds as `batches` (what `Latency::of` does), its
/// method stated in rounds rather than the stream's 50 ms batches.
fn merged_latency(total: &Histogram<u64>, batches: &[Batch], round: Duration) -> Latency {
    let mut latency = Latency::of(total, batches);
    if let Some(c) = latency.confidence.as_mut() {
        let length = humantime::format_duration(round);
        c.method = if c.batches >= confidence::MIN_GROUPS {
            format!("batch means over {} rounds of {length}", c.batches)
        } else {
            format!(
                "binomial only ({} rounds of {length}, too few to measure their spread: give \
                 --rounds {} or more)",
                c.batches,
                confidence::MIN_GROUPS
            )
        };
    }
    latency
}

/// Runs the duet and compares its sides.
pub(super) fn run(
    duet: &LiveConfig,
    options: &Options,
    cancel: &Cancel,
    stderr: &mut dyn Write,
    stderr_is_terminal: bool,
    metrics: Option<&app::metrics::Metrics>,
) -> Result<Outcome> {
    let interrupted = Outcome {
        comparison: None,
        status: Status::Interrupted,
    };
    let Some((server_a, cluster_a)) =
        app::probe(&duet.a, cancel, stderr).context("server A (--a)")?
    else {
        return Ok(interrupted);
    };
    let Some((server_b, cluster_b)) =
        app::probe(&duet.b, cancel, stderr).context("server B (--b)")?
    else {
        return Ok(interrupted);
    };
    let names: Vec<String> = duet
        .a
        .plan
        .workload
        .tests
        .iter()
        .map(|t| t.name.clone())
        .collect();
    let mut turns = Turns {
        duet,
        clusters: [cluster_a, cluster_b],
        tests: names.len(),
        cancel,
        stderr,
        stderr_is_terminal,
        metrics,
    };
    let (sides, orders, status) = turns.run()?;
    if orders.is_empty() {
        duet_lines::no_whole_round(turns.stderr)?;
        let status = match status {
            Status::Completed => Status::Failed("no round ran".into()),
            status => status,
        };
        return Ok(Outcome {
            comparison: None,
            status,
        });
    }
    let seed = duet.a.plan.seed;
    let side = |config: &RunConfig, facts: &crate::report::ServerFacts| Side {
        source: config.plan.endpoint.to_string(),
        kind: "live".into(),
        tool: None,
        server_version: facts.version.clone(),
        seed: Some(seed),
    };
    let (ea, eb) = (
        sides[0].entries(&names, orders.len(), duet.round),
        sides[1].entries(&names, orders.len(), duet.round),
    );
    let mut comparison = compare::compare(
        (side(&duet.a, &server_a), &ea),
        (side(&duet.b, &server_b), &eb),
        options,
    )
    .map_err(InputError::from)?;
    if orders.len() < confidence::MIN_GROUPS {
        comparison.notes.push(format!(
            "only {} rounds: too few to measure how rounds differ, so the intervals are \
             binomial and a drift of the host between turns can pass for a difference; \
             give --rounds {} or more",
            orders.len(),
            confidence::MIN_GROUPS
        ));
    }
    comparison.live = Some(Duet {
        rounds: orders.len(),
        round_secs: duet.round.as_secs_f64(),
        rate_per_sec: duet.a.plan.own_rate_per_sec().unwrap_or(0.0),
        orders,
        interrupted: status == Status::Interrupted,
    });
    let invalid = sides.iter().any(|s| !s.invalid.is_empty());
    let status = match status {
        Status::Completed if duet.a.strict && invalid => Status::Invalid,
        status => status,
    };
    Ok(Outcome {
        comparison: Some(comparison),
        status,
    })
}

/// The duet's rounds, and what each turn needs.
struct Turns<'d, 'e> {
    duet: &'d LiveConfig,
    /// Each side's cluster layout (`None` for one server).
    clusters: [Option<Arc<ClusterMap>>; 2],
    /// Tests in the workload (both sides run the same).
    tests: usize,
    cancel: &'d Cancel,
    stderr: &'e mut dyn Write,
    stderr_is_terminal: bool,
    /// The live Prometheus page, if served: each side's turns add to its own series.
    metrics: Option<&'d app::metrics::Metrics>,
}

impl Turns<'_, '_> {
    /// Every round, or until a turn stops early or Ctrl+C comes: each side's whole rounds
    /// merged, each round's order (`AB` or `BA`), and how the rounds ended.
    fn run(&mut self) -> Result<([Merged; 2], Vec<String>, Status)> {
        let duet = self.duet;
        // Each side's run, reseeded every round; cloned once, as a workload is large.
        let mut configs: [RunConfig; 2] = [duet.a.clone(), duet.b.clone()];
        let seed = duet.a.plan.seed;
        let mut sides = [Merged::default(), Merged::default()];
        let mut orders = Vec::new();
        for round in 0..duet.rounds {
            let order: [usize; 2] = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            let mut turns = [Merged::default(), Merged::default()];
            for index in 0..self.tests {
                for side in order {
                    if self.cancel.is_cancelled() {
                        return Ok((sides, orders, Status::Interrupted));
                    }
                    let config = &mut configs[side];
                    config.plan.seed = seed.wrapping_add(round as u64);
                    if let Err(status) = self.turn(config, side, round, index, &mut turns[side])? {
                        return Ok((sides, orders, status));
                    }
                }
            }
            let [ta, tb] = turns;
            sides[0].absorb(ta)?;
            sides[1].absorb(tb)?;
            orders.push(if order[0] == 0 { "AB" } else { "BA" }.to_string());
        }
        Ok((sides, orders, Status::Completed))
    }

    /// One turn: test `index` of `config` on `side` in `round`, shown and added to
    /// `merged`; `Err(status)` when it stopped early, the rounds ending as `status`.
    fn turn(
        &mut self,
        config: &RunConfig,
        side: usize,
        round: usize,
        index: usize,
        merged: &mut Merged,
    ) -> Result<Result<(), Status>> {
        let ended = |reason: &str| {
            Status::Failed(format!(
                "round {} on {} ({}): {reason}",
                round + 1,
                side_name(side),
                config.plan.endpoint
            ))
        };
        // A turn that cannot run (its server unreachable at the start) or whose replies
        // were all errors ends the rounds as a failure, and the whole rounds before it
        // are still compared and written. A turn that got no reply at all is measured:
        // its unanswered requests are its latencies.
        let live = self.metrics.map(|metrics| app::metrics::Scope {
            metrics,
            labels: vec![
                (
                    "test".to_string(),
                    config.plan.workload.tests[index].name.clone(),
                ),
                ("side".to_string(), side_name(side).to_lowercase()),
            ],
        });
        let measured = app::measure(
            config,
            self.clusters[side].as_ref(),
            index,
            self.cancel,
            &mut *self.stderr,
            self.stderr_is_terminal,
            None,
            Duration::ZERO,
            live,
        );
        let (report, stopped) = match measured {
            Ok(measured) => measured,
            Err(e) => return Ok(Err(ended(&format!("{e:#}")))),
        };
        match stopped.as_deref() {
            Some("interrupted") => return Ok(Err(Status::Interrupted)),
            Some(reason) => return Ok(Err(ended(reason))),
            None => {}
        }
        if let Some(reason) =
            run_lines::nothing_succeeded(&report).filter(|_| report.counts.errors > 0)
        {
            return Ok(Err(ended(&reason)));
        }
        if self.duet.a.output.progress {
            duet_lines::turn(
                self.stderr,
                round + 1,
                self.duet.rounds,
                side_name(side),
                &report,
            )?;
        }
        merged.add(index, &report).map(Ok)
    }
}

fn side_name(side: usize) -> &'static str {
    if side == 0 { "A" } else { "B" }
}
