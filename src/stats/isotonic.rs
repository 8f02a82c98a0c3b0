//! The one monotone fit: weighted least squares under an order constraint, by the
//! pool-adjacent-violators algorithm, and the valley fit built from it (falling, then
//! rising) for a tail that is high at low load (an idle core that wakes slowly on a virtual
//! machine), falls to a floor, and rises with load. Pure numbers on slices; what is fitted,
//! and on which scale, is the caller's.

/// The non-decreasing sequence nearest to `values` in weighted least squares (`weights`
/// positive, one per value): runs of values that fall are pooled into their weighted mean
/// until none falls. Empty for empty input; a weight that is not positive counts as a tiny
/// one, so a value without weight still gets a fitted value.
pub fn increasing(values: &[f64], weights: &[f64]) -> Vec<f64> {
    // Blocks of pooled values: (weighted mean, weight, how many values).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(values.len());
    for (&value, &weight) in values.iter().zip(weights) {
        let weight = if weight > 0.0 {
            weight
        } else {
            f64::MIN_POSITIVE
        };
        blocks.push((value, weight, 1));
        while let [.., before, last] = blocks.as_slice()
            && before.0 > last.0
        {
            let (last, before) = (*last, *before);
            blocks.pop();
            let total = before.1 + last.1;
            if let Some(merged) = blocks.last_mut() {
                *merged = (
                    (before.0 * before.1 + last.0 * last.1) / total,
                    total,
                    before.2 + last.2,
                );
            }
        }
    }
    blocks
        .iter()
        .flat_map(|&(mean, _, count)| std::iter::repeat_n(mean, count))
        .collect()
}

/// A valley fit: the fitted values, and the index of the lowest (the first of them, where
/// the falling part ends).
#[derive(Debug, Clone, PartialEq)]
pub struct Valley {
    /// One fitted value per value: non-increasing up to `bottom`, non-decreasing from it.
    pub fitted: Vec<f64>,
    /// Where the fit is lowest.
    pub bottom: usize,
}

/// The falling-then-rising sequence nearest to `values` in weighted least squares: over
/// every split, a non-increasing fit before it and a non-decreasing one from it, the split
/// with the least weighted squared error (the first of equals, so that data already rising
/// give a fit with no falling part). `None` for empty input.
pub fn valley(values: &[f64], weights: &[f64]) -> Option<Valley> {
    let n = values.len().min(weights.len());
    if n == 0 {
        return None;
    }
    let error = |fitted: &[f64]| -> f64 {
        (0..n)
            .map(|i| weights[i].max(0.0) * (values[i] - fitted[i]).powi(2))
            .sum()
    };
    let mut best: Option<(f64, Vec<f64>)> = None;
    for split in 0..n {
        let falling: Vec<f64> = values[..split].iter().map(|v| -v).collect();
        let mut fitted: Vec<f64> = increasing(&falling, &weights[..split])
            .into_iter()
            .map(|v| -v)
            .collect();
        fitted.extend(increasing(&values[split..n], &weights[split..n]));
        let e = error(&fitted);
        // Relative slack, so that rounding does not prefer a later split fitting the same.
        if best
            .as_ref()
            .is_none_or(|(least, _)| e < *least - 1e-12 * least.abs().max(1e-300))
        {
            best = Some((e, fitted));
        }
    }
    let (_, fitted) = best?;
    let bottom = (0..n).fold(0, |low, i| if fitted[i] < fitted[low] { i } else { low });
    Some(Valley { fitted, bottom })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn increasing_pools_falling_runs_into_their_weighted_mean() {
        assert_eq!(increasing(&[1.0, 2.0, 3.0], &[1.0; 3]), vec![1.0, 2.0, 3.0]);
        // 3 then 1 with weights 1 and 3: pooled at 1.5.
        assert_eq!(
            increasing(&[0.0, 3.0, 1.0, 4.0], &[1.0, 1.0, 3.0, 1.0]),
            vec![0.0, 1.5, 1.5, 4.0]
        );
        // A fall that reaches back over several blocks: 3 and 0 pool at 1.5, under the 2
        // before them, so the three pool at 5/3, over the 1 before.
        let third = 5.0 / 3.0;
        assert_eq!(
            increasing(&[1.0, 2.0, 3.0, 0.0], &[1.0; 4]),
            vec![1.0, third, third, third]
        );
        assert!(increasing(&[], &[]).is_empty());
        // No weight: still one fitted value per value.
        assert_eq!(increasing(&[2.0, 1.0], &[0.0, 1.0]).len(), 2);
    }

    #[test]
    fn the_valley_fit_falls_to_its_bottom_then_rises_and_prefers_no_fall() {
        let v = valley(&[5.0, 3.0, 1.0, 2.0, 4.0], &[1.0; 5]).unwrap();
        assert_eq!(
            (v.fitted.clone(), v.bottom),
            (vec![5.0, 3.0, 1.0, 2.0, 4.0], 2)
        );
        // Rising data: no falling part.
        let v = valley(&[1.0, 2.0, 3.0], &[1.0; 3]).unwrap();
        assert_eq!((v.fitted, v.bottom), (vec![1.0, 2.0, 3.0], 0));
        // A dip in the rise is pooled, not taken for a valley of its own.
        let v = valley(&[1.0, 3.0, 2.0, 4.0], &[1.0; 4]).unwrap();
        assert_eq!(v.fitted, vec![1.0, 2.5, 2.5, 4.0]);
        assert_eq!(valley(&[], &[]), None);
        let v = valley(&[7.0], &[1.0]).unwrap();
        assert_eq!((v.fitted, v.bottom), (vec![7.0], 0));
    }
}
