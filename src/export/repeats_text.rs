//! `--repeat`'s section of the text report: per metric and percentile, the repeats
//! pooled, with the pooled test's interval (response time) and each repeat's own value.

use std::fmt::Write as _;

use super::ms;
use crate::report::Percentile;
use crate::report::repeats::{RepeatSummary, RepeatedPercentile};

impl RepeatSummary {
    /// The text report's section: per metric and percentile, the pooled value, its
    /// interval, and each repeat's value.
    pub fn text(&self, precision: usize) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} over {} repeats (msec): every repeat's replies pooled, the interval of the \
             pooled test (repeats as clusters; response time), and each repeat's own value",
            self.test, self.repeats,
        );
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
                let p = &r.pooled;
                let interval = p.ci95_ns.map_or_else(
                    || "-".to_string(),
                    |c| c.show(|ns| ms(ns as f64, precision)),
                );
                let each: Vec<String> = p
                    .values_ns
                    .iter()
                    .map(|&v| ms(v as f64, precision))
                    .collect();
                let _ = writeln!(
                    s,
                    "    {label:<7} {:>9}  {interval:<22} runs {}",
                    ms(p.value_ns as f64, precision),
                    each.join(" ")
                );
            }
        }
        if let Some(o) = &self.objectives {
            let _ = writeln!(
                s,
                "  objectives over the {} repeats pooled: {} ({})",
                self.repeats,
                o.verdict.name().to_uppercase(),
                o.why
            );
        }
        s
    }
}
