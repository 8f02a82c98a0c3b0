//! How many recorded values lie over a bound: the count an objective `pQ <= T` is
//! decided on (`pQ <= T` holds exactly when at most `1 - Q` of the values are over `T`),
//! and what the bottleneck's attribution of a tail counts.

use hdrhistogram::Histogram;

/// Values of `h` over `bound_ns` (those at or under it to the histogram's resolution
/// are not).
pub fn count_over(h: &Histogram<u64>, bound_ns: u64) -> u64 {
    h.len().saturating_sub(h.count_between(0, bound_ns))
}

/// The share of `h`'s values over `bound_ns`; `None` for an empty histogram.
pub fn share_over(h: &Histogram<u64>, bound_ns: u64) -> Option<f64> {
    (!h.is_empty()).then(|| count_over(h, bound_ns) as f64 / h.len() as f64)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn values_over_a_bound_are_counted_and_those_at_it_are_not() {
        let mut h = crate::record::new_histogram();
        for v in [10_000u64, 20_000, 1_000_000, 1_000_000, 3_000_000] {
            h.record(v).unwrap();
        }
        assert_eq!(count_over(&h, 1_000_000), 1);
        assert_eq!(count_over(&h, 999_000), 3);
        assert_eq!(share_over(&h, 15_000), Some(0.8));
        assert_eq!(share_over(&crate::record::new_histogram(), 1), None);
    }
}
