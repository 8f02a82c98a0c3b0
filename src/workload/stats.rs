//! Goodness-of-fit statistics for the distribution tests of keys, values and mixes.

/// Pearson's chi-square statistic of `observed` counts against `probabilities`, with
/// neighbouring bins merged until each expects at least 5, and its degrees of freedom.
pub fn chi_square(observed: &[u64], probabilities: &[f64]) -> (f64, usize) {
    let total: u64 = observed.iter().sum();
    let (mut stat, mut bins) = (0.0, 0usize);
    let (mut o_acc, mut e_acc) = (0.0, 0.0);
    for (&o, &p) in observed.iter().zip(probabilities) {
        o_acc += o as f64;
        e_acc += p * total as f64;
        if e_acc >= 5.0 {
            stat += (o_acc - e_acc).powi(2) / e_acc;
            bins += 1;
            (o_acc, e_acc) = (0.0, 0.0);
        }
    }
    if e_acc > 0.0 {
        stat += (o_acc - e_acc).powi(2) / e_acc;
        bins += 1;
    }
    (stat, bins.saturating_sub(1).max(1))
}

/// The chi-square value exceeded with probability 0.001 (Wilson-Hilferty approximation).
pub fn critical_0_001(df: usize) -> f64 {
    let k = df as f64;
    let z = 3.090_232;
    k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
}

/// Panics unless `observed` fits `probabilities` at the 0.1% level.
pub fn assert_fits(observed: &[u64], probabilities: &[f64], what: &str) {
    let (stat, df) = chi_square(observed, probabilities);
    let critical = critical_0_001(df);
    assert!(
        stat < critical,
        "{what}: chi-square {stat:.1} with {df} degrees of freedom exceeds {critical:.1}"
    );
}
