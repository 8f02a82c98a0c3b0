//! Whether the reports given are shards of one plan, and which of its shards they are:
//! reports of different plans, a shard given twice, a shard missing (unless
//! `--partial`) and a log of another seed than its report's are refused.

use std::collections::BTreeMap;

use super::error::MergeError;
use super::input::ShardInput;
use crate::report::RunReport;

/// Which of the plan's shards the inputs are.
pub(super) struct Shards {
    /// How many shards the plan has.
    pub(super) count: u32,
    /// The index of each input, in order.
    pub(super) present: Vec<u32>,
    /// The indices of the plan's shards not among the inputs.
    pub(super) missing: Vec<u32>,
}

/// Refuses `shards` (sorted by index) unless they are shards of one plan, each once,
/// with none missing unless `partial`, and each log of its report's seed; says which
/// shards they are.
pub(super) fn check(shards: &[ShardInput], partial: bool) -> Result<Shards, MergeError> {
    let refuse = |why: String| Err(MergeError::Refused(why));
    let Some(first) = shards.first() else {
        return Err(MergeError::NoReports);
    };
    // A shard a file claims is checked as `--shard` is: a count of 4294967295 would
    // otherwise list that many missing shards.
    let most = crate::drive::MAX_SHARDS;
    for s in shards {
        if let Some(shard) = s.report.settings.shard
            && (shard.count == 0 || shard.count > most || shard.index >= shard.count)
        {
            return refuse(format!(
                "{}: settings.shard says shard {} of {}: the count must be 1 to {most} and the index below it",
                s.path.display(),
                shard.index,
                shard.count
            ));
        }
    }
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
    Ok(Shards {
        count,
        present,
        missing,
    })
}

/// The index of the shard an input is (0 for a run that was not sharded).
pub(super) fn index_of(s: &ShardInput) -> u32 {
    s.report.settings.shard.map_or(0, |s| s.index)
}

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

/// Shard indices as a list for a message: `0, 2, 3`.
pub(super) fn list(indices: &[u32]) -> String {
    indices
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
