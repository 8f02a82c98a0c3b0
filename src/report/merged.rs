//! What a report of `tailrate merge` says about the shards it was added from: their
//! count, the missing ones, and each one's own figures beside the sums.

use serde::{Deserialize, Serialize};

use super::Counts;

/// What a merged report says about its shards.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MergeSummary {
    /// Shards of the plan.
    pub shards: u32,
    /// Some were missing (`--partial`): the sums are of those present.
    pub partial: bool,
    /// Indices of the missing shards.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<u32>,
    /// Each merged shard's own figures, by index.
    pub parts: Vec<ShardPart>,
}

/// One shard's part of a merge.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ShardPart {
    /// Its index.
    pub index: u32,
    /// Its report's file.
    pub report: String,
    /// Its log's file, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Its tests' figures.
    pub tests: Vec<ShardTest>,
}

/// One test of one shard, in brief.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ShardTest {
    /// Test name.
    pub name: String,
    /// Its counts.
    pub counts: Counts,
    /// Requests written per second.
    pub achieved_rate_per_sec: f64,
    /// Its start skew (`--start-at`), nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_ns: Option<i64>,
    /// Response-time p50 and p99 of this shard alone.
    pub response_p50_ns: u64,
    /// See `response_p50_ns`.
    pub response_p99_ns: u64,
    /// Whether it passed every self-check.
    pub valid: bool,
}
