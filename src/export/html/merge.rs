//! A merged run's own section: its shards, each with its figures before the merge, and
//! the ones missing from a partial merge. The rest of a merged report's page is a run's.

use super::markup::{Cell, badge, esc, table};
use crate::export::ms;
use crate::report::merged::MergeSummary;

/// The shards of `merge`, one row per shard and test.
pub(super) fn shards(merge: &MergeSummary) -> String {
    let mut html = format!(
        "<p>{} of {} shards merged{}.</p>",
        merge.parts.len(),
        merge.shards,
        if merge.partial {
            format!(
                " {} (missing: {})",
                badge("partial"),
                esc(&merge
                    .missing
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", "))
            )
        } else {
            String::new()
        }
    );
    let header = [
        "shard",
        "test",
        "sent/s",
        "completed",
        "p50 ms",
        "p99 ms",
        "start skew ms",
        "valid",
        "report",
        "log",
    ]
    .map(String::from);
    let mut rows = Vec::new();
    for part in &merge.parts {
        for t in &part.tests {
            rows.push(vec![
                Cell::Num(part.index.to_string()),
                Cell::Text(t.name.clone()),
                Cell::Num(format!("{:.1}", t.achieved_rate_per_sec)),
                Cell::Num(t.counts.completed.to_string()),
                Cell::Num(ms(t.response_p50_ns as f64, 3)),
                Cell::Num(ms(t.response_p99_ns as f64, 3)),
                Cell::Num(t.start_skew_ns.map_or("-".into(), |s| ms(s as f64, 3))),
                Cell::Html(badge(if t.valid { "valid" } else { "invalid" })),
                Cell::Text(part.report.clone()),
                Cell::Text(part.log.clone().unwrap_or_else(|| "-".into())),
            ]);
        }
    }
    html.push_str(&table(&header, &rows));
    html
}
