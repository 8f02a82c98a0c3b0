//! `--percentiles 50,99,99.9,99.99`: the percentiles a run reports, chosen (memtier's
//! `--print-percentiles`). Each is estimated as the fixed ones are, with its interval
//! and the samples beyond it, and kept in the report beside them; the text report's
//! tables then list these instead ([`super::Latency::reported`]).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::stats::confidence::{self, Batch, Ci95};

/// One chosen percentile.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ChosenPercentile {
    /// As typed, in percent: `99.9`.
    pub percentile: f64,
    /// Its value.
    pub value_ns: u64,
    /// Its 95% interval (absent when the samples cannot bound it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_ns: Option<Ci95>,
    /// Samples above it (`k`).
    pub beyond: u64,
}

impl ChosenPercentile {
    /// `percentile` of `h`, with its interval from `batches` (the same samples in time
    /// order); `None` for an empty histogram.
    pub fn of(h: &Histogram<u64>, batches: &[Batch], percentile: f64) -> Option<Self> {
        if h.is_empty() {
            return None;
        }
        let quantile = percentile / 100.0;
        Some(match confidence::estimate(h, batches, quantile) {
            Some(e) => ChosenPercentile {
                percentile,
                value_ns: e.value_ns,
                ci95_ns: Some(e.ci95),
                beyond: e.beyond,
            },
            None => {
                let n = h.len();
                let rank = ((quantile * n as f64).ceil() as u64).clamp(1, n);
                ChosenPercentile {
                    percentile,
                    value_ns: h.value_at_quantile(quantile),
                    ci95_ns: None,
                    beyond: n - rank,
                }
            }
        })
    }

    /// As printed: `p99.9`.
    pub fn label(&self) -> String {
        format!("p{}", self.percentile)
    }
}

/// `chosen`'s intervals made monotone in the percentile ([`confidence::monotone`]),
/// whatever order they were typed in.
pub fn make_monotone(chosen: &mut [ChosenPercentile]) {
    let mut order: Vec<usize> = (0..chosen.len()).collect();
    order.sort_by(|&a, &b| chosen[a].percentile.total_cmp(&chosen[b].percentile));
    let mut cis: Vec<Option<Ci95>> = order.iter().map(|&i| chosen[i].ci95_ns).collect();
    let values: Vec<u64> = order.iter().map(|&i| chosen[i].value_ns).collect();
    confidence::monotone(&mut cis, &values);
    for (i, ci) in order.into_iter().zip(cis) {
        chosen[i].ci95_ns = ci;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::report::Latency;

    #[test]
    fn a_chosen_percentile_is_the_fixed_estimate_at_any_quantile() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for v in 1..=10_000u64 {
            h.record(v * 1000).unwrap();
        }
        let p = ChosenPercentile::of(&h, &[], 99.95).unwrap();
        assert_eq!(p.value_ns, h.value_at_quantile(0.9995));
        assert_eq!(p.beyond, 5);
        let ci = p.ci95_ns.unwrap();
        assert!(ci.low() <= p.value_ns, "{ci:?}");
        // At the fixed ones, the same figure as the report's own estimate.
        let fixed = Latency::of(&h, &[]);
        let p99 = ChosenPercentile::of(&h, &[], 99.0).unwrap();
        assert_eq!(
            (p99.value_ns, p99.ci95_ns),
            (fixed.p99_ns, fixed.p99_ci95_ns)
        );
        assert_eq!(p99.label(), "p99");
        assert!(ChosenPercentile::of(&Histogram::<u64>::new(3).unwrap(), &[], 50.0).is_none());
    }
}
