//! `--repeat`'s section of the text report: per metric and percentile, the median of
//! the repeats with both its intervals and the one quoted.

use std::fmt::Write as _;

use super::ms;
use crate::report::Percentile;
use crate::report::repeats::{RepeatSummary, RepeatedPercentile};
use crate::stats::confidence::Ci95;

impl RepeatSummary {
    /// The text report's section: per metric and percentile, the median, both intervals,
    /// and the quoted one.
    pub fn text(&self, precision: usize) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} over {} repeats (msec): median, {:.0}% interval from the repeats' spread, \
             95% interval within one run; the wider is quoted",
            self.test,
            self.repeats,
            100.0 * self.across_confidence
        );
        let show = |ci: Option<Ci95>| {
            ci.map_or_else(
                || "-".to_string(),
                |c| c.show(|ns| ms(ns as f64, precision)),
            )
        };
        let order = ["response", "service", "lag", "queue_wait"];
        let mut metrics: Vec<(&String, &Vec<RepeatedPercentile>)> = self.metrics.iter().collect();
        metrics.sort_by_key(|(m, _)| order.iter().position(|o| o == m).unwrap_or(order.len()));
        for (metric, rows) in metrics {
            let _ = writeln!(s, "  {metric}:");
            for r in rows {
                let label = Percentile::ALL
                    .iter()
                    .find(|p| p.key() == r.percentile)
                    .map_or(r.percentile.as_str(), |p| p.label());
                let _ = writeln!(
                    s,
                    "    {label:<7} {:>9}  across {:<22} within {:<22} quoted {}",
                    ms(r.median_ns as f64, precision),
                    show(Some(r.across_ci95_ns)),
                    show(r.within_ci95_ns),
                    show(Some(r.ci95_ns))
                );
            }
        }
        s
    }
}
