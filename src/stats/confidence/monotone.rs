//! Percentile intervals made monotone in the percentile. A percentile never falls as the
//! percentile rises, so each interval's ends bound its neighbours too: p99.9 <= h means
//! p99 <= h, and p99 >= l means p99.9 >= l. Each interval, estimated on its own, can
//! disagree with that (an open p99 beside a bounded p99.9, or a p99.9 whose low end sits
//! under p99's), so every report takes, at each percentile, the lowest upper end of that
//! percentile and every higher one and the highest lower end of that percentile and every
//! lower one. The ends are then non-decreasing in the percentile by construction. Each end
//! kept is one of the intervals' own ends, a bound at that interval's level: a narrowed
//! interval misses only when the interval its end came from misses.

use super::Ci95;

/// `intervals`, ordered by increasing percentile (an absent one skipped), made monotone:
/// each upper end the least of its own and every later one's, each lower end the greatest
/// of its own and every earlier one's. `values` (the percentiles themselves, same order)
/// keep each end on its side of its own value.
pub fn monotone(intervals: &mut [Option<Ci95>], values: &[u64]) {
    let mut upper: Option<u64> = None;
    for (ci, value) in intervals.iter_mut().zip(values).rev() {
        let Some(c) = ci.as_mut() else { continue };
        upper = match (c.1, upper) {
            (Some(own), Some(later)) => Some(own.min(later)),
            (own, later) => own.or(later),
        };
        c.1 = upper.map(|h| h.max(*value));
    }
    let mut lower = 0;
    for (ci, value) in intervals.iter_mut().zip(values) {
        let Some(c) = ci.as_mut() else { continue };
        lower = lower.max(c.0);
        c.0 = lower.min(*value);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Whether the present intervals' ends never fall as the percentile rises.
    pub(crate) fn is_monotone(intervals: &[Option<Ci95>]) -> bool {
        let present: Vec<Ci95> = intervals.iter().flatten().copied().collect();
        present.windows(2).all(|w| {
            w[0].0 <= w[1].0
                && match (w[0].1, w[1].1) {
                    (Some(a), Some(b)) => a <= b,
                    (None, Some(_)) => false,
                    _ => true,
                }
        })
    }

    #[test]
    fn an_open_end_takes_a_higher_percentiles_upper_end_and_a_low_end_rises() {
        // The case a report showed: p99 29.016 [11.182, open] beside p99.9 30.704
        // [30.573, 30.851].
        let mut cis = [Some(Ci95(11_182, None)), Some(Ci95(30_573, Some(30_851)))];
        monotone(&mut cis, &[29_016, 30_704]);
        assert_eq!(
            cis,
            [
                Some(Ci95(11_182, Some(30_851))),
                Some(Ci95(30_573, Some(30_851)))
            ]
        );
        // A later low end under an earlier one is raised to it, never past its own value.
        let mut cis = [
            Some(Ci95(500, Some(900))),
            None,
            Some(Ci95(400, Some(2000))),
        ];
        monotone(&mut cis, &[600, 0, 700]);
        assert_eq!(
            cis,
            [
                Some(Ci95(500, Some(900))),
                None,
                Some(Ci95(500, Some(2000)))
            ]
        );
    }

    /// Property: on many random sets of intervals around increasing values, the result
    /// is monotone, still holds each value, and never widens an interval.
    #[test]
    fn random_intervals_come_out_monotone_holding_their_values_and_no_wider() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..20_000 {
            let len = 1 + next(7) as usize;
            let mut values: Vec<u64> = (0..len).map(|_| next(10_000)).collect();
            values.sort_unstable();
            let before: Vec<Option<Ci95>> = values
                .iter()
                .map(|&v| {
                    (next(8) != 0).then(|| {
                        let low = v.saturating_sub(next(5_000));
                        let high = (next(4) != 0).then(|| v + next(5_000));
                        Ci95(low, high)
                    })
                })
                .collect();
            let mut after = before.clone();
            monotone(&mut after, &values);
            assert!(is_monotone(&after), "{before:?} -> {after:?}");
            for ((b, a), v) in before.iter().zip(&after).zip(&values) {
                let (Some(b), Some(a)) = (b, a) else {
                    assert_eq!(b.is_some(), a.is_some());
                    continue;
                };
                assert!(a.contains(*v), "{a:?} lost {v}");
                assert!(a.0 >= b.0, "{b:?} -> {a:?}");
                assert!(b.1.is_none() || a.1.is_some_and(|h| h <= b.1.unwrap()));
            }
        }
    }
}
