//! The median of a few plain numbers: tune's runs of one setting, a step's achieved rates,
//! the runs at one rate a chart draws its line through.
//! Latency percentiles over runs are pooled instead ([`super::pooled`]): a median of the
//! runs' values would hide the run that stalled.

/// The median of `values` (the mean of the middle two for an even count; 0 for none).
pub fn median_f64(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median_f64(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_f64(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median_f64(&[]), 0.0);
    }
}
