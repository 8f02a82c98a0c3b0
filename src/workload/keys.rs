//! Which key a request uses: a distribution over key indices `0..N` (`--key-pattern`
//! over `--keyspace`, or `-r`), and the fixed-width text an index becomes.
//!
//! The mapping from a distribution's sample to a key index, per pattern:
//! - **uniform**: `random_range(0..N)`; every index has probability `1/N`.
//! - **sequential**: positions `0, 1, 2, ...` taken from one cursor shared by every
//!   generator thread of a test; position `p` is index `p mod N`. A thread claims the
//!   next block of [`sequential_block`] positions at once (one atomic add per block) and
//!   walks it in order, so threads never send the same position twice and each pass
//!   over the keyspace visits every index once. With one thread the walk is exactly
//!   `0, 1, ..., N-1, 0, ...`. At the end of a run the unused rest of each thread's
//!   last block is skipped.
//! - **zipf**: rank `r` in `1..=N` drawn with probability `r^-s / H(N,s)` by
//!   `rand_distr::Zipf` (rejection-inversion, no table); index = `r - 1`, so index 0
//!   is the hottest key, index 1 the next, and so on (not scrambled: the hot keys are
//!   the low indices, which makes the skew easy to check on the server).
//! - **gaussian**: `x ~ Normal(N/2, N/6)` (memtier's default: the keyspace midpoint and a
//!   sixth of its width), **rejected and redrawn** when outside `[0, N)` (about 0.27% of
//!   draws; clamping would pile that mass on the two edge keys), index = `floor(x)`.
//!   So `P(k) = (Phi((k+1-mu)/sigma) - Phi((k-mu)/sigma)) / (Phi((N-mu)/sigma) - Phi(-mu/sigma))`.
//!
//! The text of a key is what the placeholders make of an index: `__rand_int__` becomes
//! the index as 12 zero-padded digits (redis-benchmark's field), `__key__` becomes
//! `--key-prefix` followed by the index zero-padded to a fixed width (the digits of
//! `N - 1`, or what `--key-size` leaves after the prefix). Fixed widths let a request be
//! patched in place.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::Rng;
use rand_distr::{Distribution, StandardNormal, Zipf};

/// How keys are drawn from the keyspace (see `workload/keys.rs` for the exact mapping).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum KeyPattern {
    /// Every key equally likely.
    Uniform,
    /// Keys in order, threads sharing one walk.
    Sequential,
    /// Key of rank r (index r-1) with weight 1/r^s (--zipf-exponent).
    Zipf,
    /// Normal around the middle of the keyspace (sd = keyspace/6), redrawn outside it.
    Gaussian,
}

/// The default `--key-prefix`.
pub const DEFAULT_KEY_PREFIX: &str = "key:";
/// Largest keyspace: `__rand_int__` has 12 digits.
pub const MAX_KEYSPACE: u64 = 1_000_000_000_000;

/// A key distribution over indices `0..len`.
#[derive(Debug, Clone, Copy)]
pub struct KeyDist {
    /// Number of keys (`N`); 1 when no keyspace was given (every key is index 0).
    pub len: u64,
    /// How indices are drawn.
    pub shape: Shape,
}

/// How a [`KeyDist`] draws an index.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// Every index equally likely.
    Uniform,
    /// In order, from a cursor shared by the test's threads.
    Sequential,
    /// Rank `r` with weight `r^-s`; index `r - 1`.
    Zipf {
        /// The exponent `s` (> 0).
        exponent: f64,
        /// The sampler for ranks `1..=len`.
        zipf: Zipf<f64>,
    },
    /// Normal around the midpoint, redrawn outside `[0, len)`.
    Gaussian {
        /// Mean: `len / 2`.
        mean: f64,
        /// Standard deviation: `len / 6`.
        std_dev: f64,
    },
}

/// Why a key distribution cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyDistError {
    /// No keys.
    Empty,
    /// More keys than 12 digits can name.
    TooLarge,
    /// A zipf exponent that is not a finite number above zero.
    BadExponent,
}

impl KeyDist {
    /// The distribution `pattern` over `len` keys; `exponent` is zipf's `s`.
    pub fn new(pattern: KeyPattern, len: u64, exponent: f64) -> Result<Self, KeyDistError> {
        if len == 0 {
            return Err(KeyDistError::Empty);
        }
        if len > MAX_KEYSPACE {
            return Err(KeyDistError::TooLarge);
        }
        let shape = match pattern {
            KeyPattern::Uniform => Shape::Uniform,
            KeyPattern::Sequential => Shape::Sequential,
            KeyPattern::Zipf => {
                if !(exponent.is_finite() && exponent > 0.0) {
                    return Err(KeyDistError::BadExponent);
                }
                let zipf =
                    Zipf::new(len as f64, exponent).map_err(|_| KeyDistError::BadExponent)?;
                Shape::Zipf { exponent, zipf }
            }
            KeyPattern::Gaussian => Shape::Gaussian {
                mean: len as f64 / 2.0,
                std_dev: len as f64 / 6.0,
            },
        };
        Ok(KeyDist { len, shape })
    }

    /// One key: index 0 always (no keyspace given).
    pub fn single() -> Self {
        KeyDist {
            len: 1,
            shape: Shape::Uniform,
        }
    }

    /// Draws one index in `0..len`. `walk` is this thread's sequential block and
    /// `cursor` the test's shared position (used by `sequential` only).
    #[inline]
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R, walk: &mut Walk, cursor: &SeqCursor) -> u64 {
        let n = self.len;
        match self.shape {
            Shape::Uniform if n == 1 => 0,
            Shape::Uniform => rng.random_range(0..n),
            Shape::Sequential => {
                if walk.next == walk.end {
                    let block = sequential_block(n);
                    walk.next = cursor.0.fetch_add(block, Ordering::Relaxed);
                    walk.end = walk.next.wrapping_add(block);
                }
                let position = walk.next;
                walk.next = walk.next.wrapping_add(1);
                position % n
            }
            Shape::Zipf { zipf, .. } => {
                // Samples are whole numbers in 1..=n; the clamp guards float rounding at the top.
                let rank = zipf.sample(rng) as u64;
                rank.clamp(1, n) - 1
            }
            Shape::Gaussian { mean, std_dev } => loop {
                let z: f64 = StandardNormal.sample(rng);
                let x = mean + std_dev * z;
                if x >= 0.0 && x < n as f64 {
                    return (x as u64).min(n - 1);
                }
            },
        }
    }

    /// How the distribution is described in reports: `zipf(s=1) over 1000000 keys`.
    pub fn describe(&self) -> String {
        match self.shape {
            Shape::Uniform => format!("uniform over {} keys", self.len),
            Shape::Sequential => format!("sequential over {} keys", self.len),
            Shape::Zipf { exponent, .. } => format!("zipf(s={exponent}) over {} keys", self.len),
            Shape::Gaussian { mean, std_dev } => {
                format!("gaussian(mean={mean}, sd={std_dev}) over {} keys", self.len)
            }
        }
    }
}

/// Positions a sequential walk claims at once: one atomic add per block, small enough
/// that several threads still spread over a small keyspace (1 below 2048 keys).
pub fn sequential_block(len: u64) -> u64 {
    (len / 1024).clamp(1, 1024)
}

/// A test's shared position of the sequential walk (shared by its threads' clones).
#[derive(Debug, Clone, Default)]
pub struct SeqCursor(Arc<AtomicU64>);

/// One thread's claimed block of sequential positions: `next..end`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Walk {
    next: u64,
    end: u64,
}

/// How `__key__` is spelled: a prefix and the index in a fixed number of digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFormat {
    /// `--key-prefix`.
    pub prefix: Vec<u8>,
    /// Digits of the index.
    pub width: usize,
}

impl KeyFormat {
    /// The format for `len` keys: `prefix` then the index in just enough digits, or
    /// padded so the whole key is `key_size` bytes. Errs with the smallest size that fits.
    pub fn new(prefix: &[u8], len: u64, key_size: Option<usize>) -> Result<Self, usize> {
        let needed = digits(len.saturating_sub(1));
        let width = match key_size {
            None => needed,
            Some(size) if size >= prefix.len() + needed => size - prefix.len(),
            Some(_) => return Err(prefix.len() + needed),
        };
        Ok(KeyFormat {
            prefix: prefix.to_vec(),
            width,
        })
    }

    /// Bytes of one key.
    pub fn key_len(&self) -> usize {
        self.prefix.len() + self.width
    }
}

/// Decimal digits of `n` (at least 1).
pub fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::stats::{assert_fits, chi_square, critical_0_001};
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    fn counts(dist: &KeyDist, draws: usize, seed: u64) -> Vec<u64> {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let (mut walk, cursor) = (Walk::default(), SeqCursor::default());
        let mut counts = vec![0u64; dist.len as usize];
        for _ in 0..draws {
            let i = dist.draw(&mut rng, &mut walk, &cursor);
            assert!(i < dist.len, "index {i} out of 0..{}", dist.len);
            counts[i as usize] += 1;
        }
        counts
    }

    /// The standard normal CDF (erfc by Numerical Recipes' Chebyshev fit, |error| < 1.2e-7).
    fn phi(x: f64) -> f64 {
        let z = x.abs() / std::f64::consts::SQRT_2;
        let t = 1.0 / (1.0 + 0.5 * z);
        let poly = -z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77))))))));
        let erfc = t * poly.exp();
        if x >= 0.0 {
            1.0 - 0.5 * erfc
        } else {
            0.5 * erfc
        }
    }

    fn zipf_pmf(n: u64, s: f64) -> Vec<f64> {
        let weights: Vec<f64> = (1..=n).map(|r| (r as f64).powf(-s)).collect();
        let h: f64 = weights.iter().sum();
        weights.into_iter().map(|w| w / h).collect()
    }

    fn gaussian_pmf(n: u64) -> Vec<f64> {
        let (mu, sigma) = (n as f64 / 2.0, n as f64 / 6.0);
        let cdf = |x: f64| phi((x - mu) / sigma);
        let mass = cdf(n as f64) - cdf(0.0);
        (0..n)
            .map(|k| (cdf(k as f64 + 1.0) - cdf(k as f64)) / mass)
            .collect()
    }

    #[test]
    fn every_pattern_reaches_every_index_and_none_out_of_range() {
        for pattern in [
            KeyPattern::Uniform,
            KeyPattern::Sequential,
            KeyPattern::Zipf,
            KeyPattern::Gaussian,
        ] {
            for n in [1u64, 2, 7, 50] {
                // Zipf at s = 1 over 50 keys gives the last key 1/(50 H) = 0.45%: 200k draws
                // reach it.
                let c = counts(&KeyDist::new(pattern, n, 1.0).unwrap(), 200_000, 3);
                assert!(
                    c.iter().all(|&x| x > 0),
                    "{pattern:?} over {n}: an index never drawn: {c:?}"
                );
            }
        }
    }

    #[test]
    fn uniform_frequencies_pass_chi_square() {
        let n = 1000;
        let c = counts(
            &KeyDist::new(KeyPattern::Uniform, n, 1.0).unwrap(),
            1_000_000,
            11,
        );
        assert_fits(&c, &vec![1.0 / n as f64; n as usize], "uniform");
    }

    #[test]
    fn zipf_frequencies_pass_chi_square_for_several_exponents() {
        for s in [0.5, 1.0, 1.5] {
            let n = 1000;
            let c = counts(
                &KeyDist::new(KeyPattern::Zipf, n, s).unwrap(),
                1_000_000,
                12,
            );
            assert_fits(&c, &zipf_pmf(n, s), &format!("zipf s={s}"));
            assert!(
                c[0] > c[1] && c[1] > c[9],
                "index 0 is the hottest: {:?}",
                &c[..10]
            );
        }
    }

    #[test]
    fn gaussian_frequencies_pass_chi_square_against_the_truncated_normal() {
        for n in [60u64, 1000] {
            let c = counts(
                &KeyDist::new(KeyPattern::Gaussian, n, 1.0).unwrap(),
                1_000_000,
                13,
            );
            assert_fits(&c, &gaussian_pmf(n), &format!("gaussian over {n}"));
        }
    }

    #[test]
    fn the_chi_square_check_catches_a_wrong_distribution() {
        // Guard against a test that cannot fail: uniform draws are not zipf.
        let c = counts(
            &KeyDist::new(KeyPattern::Uniform, 1000, 1.0).unwrap(),
            100_000,
            14,
        );
        let (stat, df) = chi_square(&c, &zipf_pmf(1000, 1.0));
        assert!(stat > critical_0_001(df));
    }

    #[test]
    fn zipf_at_exponent_one_over_a_million_keys_gives_the_hottest_key_its_share() {
        let n = 1_000_000u64;
        let h: f64 = (1..=n).map(|r| 1.0 / r as f64).sum();
        let expected = 1.0 / h; // about 6.95%
        let draws = 1_000_000;
        let c0 = {
            let dist = KeyDist::new(KeyPattern::Zipf, n, 1.0).unwrap();
            let mut rng = Pcg64Mcg::seed_from_u64(15);
            let (mut walk, cursor) = (Walk::default(), SeqCursor::default());
            (0..draws)
                .filter(|_| dist.draw(&mut rng, &mut walk, &cursor) == 0)
                .count()
        };
        let share = c0 as f64 / draws as f64;
        assert!(
            (share / expected - 1.0).abs() < 0.05,
            "hottest key share {share:.5}, theory 1/H = {expected:.5}"
        );
    }

    #[test]
    fn sequential_walks_in_order_on_one_thread() {
        let dist = KeyDist::new(KeyPattern::Sequential, 5, 1.0).unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let (mut walk, cursor) = (Walk::default(), SeqCursor::default());
        let got: Vec<u64> = (0..12)
            .map(|_| dist.draw(&mut rng, &mut walk, &cursor))
            .collect();
        assert_eq!(got, [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]);
    }

    #[test]
    fn sequential_threads_share_one_cursor_and_never_duplicate_within_a_pass() {
        for n in [100u64, 1_000_000] {
            let dist = KeyDist::new(KeyPattern::Sequential, n, 1.0).unwrap();
            let cursor = SeqCursor::default();
            let mut walks = [Walk::default(); 3];
            let mut rng = Pcg64Mcg::seed_from_u64(1);
            let mut seen = vec![0u32; n as usize];
            // Interleave three "threads" unevenly until exactly one pass is claimed.
            let block = sequential_block(n);
            let blocks = n / block;
            let mut drawn = 0;
            while drawn < blocks * block {
                let t = (drawn as usize / 7) % 3;
                for _ in 0..block {
                    seen[dist.draw(&mut rng, &mut walks[t], &cursor) as usize] += 1;
                }
                drawn += block;
            }
            assert!(
                seen[..(blocks * block) as usize].iter().all(|&s| s == 1),
                "each index once over {n} keys"
            );
        }
    }

    #[test]
    fn key_format_pads_to_the_key_size_and_refuses_too_small_sizes() {
        assert_eq!(KeyFormat::new(b"key:", 1000, None).unwrap().width, 3);
        assert_eq!(KeyFormat::new(b"key:", 1001, None).unwrap().width, 4);
        assert_eq!(KeyFormat::new(b"key:", 1, None).unwrap().width, 1);
        let f = KeyFormat::new(b"key:", 1000, Some(32)).unwrap();
        assert_eq!((f.width, f.key_len()), (28, 32));
        assert_eq!(KeyFormat::new(b"key:", 1_000_000, Some(9)), Err(10));
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert_eq!(
            KeyDist::new(KeyPattern::Zipf, 10, 0.0).unwrap_err(),
            KeyDistError::BadExponent
        );
        assert_eq!(
            KeyDist::new(KeyPattern::Zipf, 10, -1.0).unwrap_err(),
            KeyDistError::BadExponent
        );
        assert_eq!(
            KeyDist::new(KeyPattern::Zipf, 10, f64::NAN).unwrap_err(),
            KeyDistError::BadExponent
        );
        assert_eq!(
            KeyDist::new(KeyPattern::Uniform, 0, 1.0).unwrap_err(),
            KeyDistError::Empty
        );
        assert_eq!(
            KeyDist::new(KeyPattern::Uniform, MAX_KEYSPACE + 1, 1.0).unwrap_err(),
            KeyDistError::TooLarge
        );
    }
}
