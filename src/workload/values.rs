//! How large each value is (`-d`, `--data-size-range`, `--data-size-list`) and where
//! its bytes come from: one buffer of seeded printable bytes made once per run, from
//! which each request takes a slice at a random offset (nothing allocated per request).

use bytes::Bytes;
use rand::Rng;

use crate::units::parse_count;

/// Largest value size accepted (Redis's default `proto-max-bulk-len`).
pub const MAX_VALUE_SIZE: usize = 512 * 1024 * 1024;
/// Extra bytes in the value buffer beyond the largest size, so slices start at varied offsets.
const SLACK: usize = 4096;

/// The size of each value.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueSizes {
    /// Every value has this size (`-d`).
    Fixed(usize),
    /// Uniform over `min..=max` (`--data-size-range`).
    Range {
        /// Smallest size.
        min: usize,
        /// Largest size.
        max: usize,
    },
    /// Weighted sizes (`--data-size-list`): `sizes[i]` with probability `weights[i] / total`.
    List {
        /// The sizes, in the order typed.
        sizes: Vec<usize>,
        /// Running sums of the weights; the last is the total.
        cumulative: Vec<u64>,
    },
}

impl ValueSizes {
    /// Parses `--data-size-range MIN-MAX` (inclusive; `k` = 1000).
    pub fn parse_range(text: &str) -> Result<Self, String> {
        let (lo, hi) = text
            .split_once('-')
            .ok_or_else(|| format!("'{text}' is not MIN-MAX, e.g. 32-1024"))?;
        let min = parse_size(lo)?;
        let max = parse_size(hi)?;
        if min > max {
            return Err(format!(
                "'{text}' is reversed: the smallest size comes first ({max}-{min})"
            ));
        }
        Ok(ValueSizes::Range { min, max })
    }

    /// Parses `--data-size-list SIZE:WEIGHT,...` (a missing weight is 1).
    pub fn parse_list(text: &str) -> Result<Self, String> {
        let mut sizes = Vec::new();
        let mut cumulative = Vec::new();
        let mut total = 0u64;
        for item in text.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(format!(
                    "'{text}' has an empty entry; write SIZE:WEIGHT,..., e.g. 32:7,1024:2,65536:1"
                ));
            }
            let (size, weight) = match item.split_once(':') {
                Some((s, w)) => (s, w),
                None => (item, "1"),
            };
            let size = parse_size(size)?;
            let weight: u64 = weight
                .trim()
                .parse()
                .ok()
                .filter(|&w| w > 0)
                .ok_or_else(|| {
                    format!("weight '{weight}' of size {size} is not a positive whole number")
                })?;
            total = total
                .checked_add(weight)
                .ok_or_else(|| "the weights add up to more than 2^64".to_string())?;
            sizes.push(size);
            cumulative.push(total);
        }
        Ok(ValueSizes::List { sizes, cumulative })
    }

    /// The largest size a value can have.
    pub fn max(&self) -> usize {
        match self {
            ValueSizes::Fixed(n) => *n,
            ValueSizes::Range { max, .. } => *max,
            ValueSizes::List { sizes, .. } => sizes.iter().copied().max().unwrap_or(0),
        }
    }

    /// True when every value has one size.
    pub fn is_fixed(&self) -> bool {
        match self {
            ValueSizes::Fixed(_) => true,
            ValueSizes::Range { min, max } => min == max,
            ValueSizes::List { sizes, .. } => sizes.windows(2).all(|w| w[0] == w[1]),
        }
    }

    /// Draws one size.
    #[inline]
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        match self {
            ValueSizes::Fixed(n) => *n,
            ValueSizes::Range { min, max } => rng.random_range(*min..=*max),
            ValueSizes::List { sizes, cumulative } => sizes[weighted_index(cumulative, rng)],
        }
    }

    /// How the sizes are described in reports: `3`, `32-1024`, `32:7,1024:2`.
    pub fn describe(&self) -> String {
        match self {
            ValueSizes::Fixed(n) => n.to_string(),
            ValueSizes::Range { min, max } => format!("{min}-{max}"),
            ValueSizes::List { sizes, cumulative } => {
                let mut previous = 0;
                let parts: Vec<String> = sizes
                    .iter()
                    .zip(cumulative)
                    .map(|(s, &c)| {
                        let w = c - previous;
                        previous = c;
                        format!("{s}:{w}")
                    })
                    .collect();
                parts.join(",")
            }
        }
    }
}

/// Draws an index with probability proportional to its weight, given running sums of the
/// weights (the last is the total): a uniform draw below the total, then a binary search.
#[inline]
pub fn weighted_index<R: Rng + ?Sized>(cumulative: &[u64], rng: &mut R) -> usize {
    let total = cumulative.last().copied().unwrap_or(1);
    let r = rng.random_range(0..total);
    cumulative.partition_point(|&c| c <= r)
}

fn parse_size(text: &str) -> Result<usize, String> {
    let n = parse_count(text.trim())?;
    if n > MAX_VALUE_SIZE as u64 {
        return Err(format!(
            "size {n} is above {MAX_VALUE_SIZE} bytes (Redis's proto-max-bulk-len)"
        ));
    }
    Ok(n as usize)
}

/// The buffer every value is a slice of: `largest + SLACK` seeded printable bytes.
pub fn value_buffer(largest: usize, seed: u64) -> Bytes {
    Bytes::from(value_bytes(largest + SLACK, seed))
}

/// A value of `len` bytes from `buffer` at a random offset.
#[inline]
pub fn value_slice<'a, R: Rng + ?Sized>(buffer: &'a [u8], len: usize, rng: &mut R) -> &'a [u8] {
    let start = rng.random_range(0..=buffer.len() - len);
    &buffer[start..start + len]
}

/// The value written by SET/LPUSH/...: `size` printable bytes from a seeded generator.
/// A shorter value is a prefix of a longer one of the same seed.
pub fn value_bytes(size: usize, seed: u64) -> Vec<u8> {
    use rand::{RngCore, SeedableRng};
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed ^ 0xda7a);
    let mut out = Vec::with_capacity(size);
    // Eight characters per draw, each byte scaled onto the alphabet (multiply-shift): a
    // value of up to 512 MiB takes one draw per eight bytes, not one per byte. Some
    // characters come up 5/4 as often as others, which does not matter to filler.
    while out.len() < size {
        let word = rng.next_u64().to_le_bytes();
        let take = (size - out.len()).min(word.len());
        out.extend(
            word[..take]
                .iter()
                .map(|&b| ALPHABET[(usize::from(b) * ALPHABET.len()) >> 8]),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn ranges_parse_and_refuse_reversed_or_malformed_input() {
        assert_eq!(
            ValueSizes::parse_range("32-1024").unwrap(),
            ValueSizes::Range { min: 32, max: 1024 }
        );
        assert_eq!(
            ValueSizes::parse_range("1k-64k").unwrap(),
            ValueSizes::Range {
                min: 1000,
                max: 64_000
            }
        );
        assert!(
            ValueSizes::parse_range("1024-32")
                .unwrap_err()
                .contains("reversed")
        );
        assert!(ValueSizes::parse_range("32").is_err());
        assert!(ValueSizes::parse_range("a-b").is_err());
        assert!(
            ValueSizes::parse_range("1-1000000000")
                .unwrap_err()
                .contains("proto-max-bulk-len")
        );
    }

    #[test]
    fn lists_parse_weights_and_refuse_zero_or_garbage() {
        let l = ValueSizes::parse_list("32:7,1024:2,65536:1").unwrap();
        assert_eq!(
            l,
            ValueSizes::List {
                sizes: vec![32, 1024, 65536],
                cumulative: vec![7, 9, 10]
            }
        );
        assert_eq!(l.max(), 65536);
        assert_eq!(l.describe(), "32:7,1024:2,65536:1");
        assert_eq!(
            ValueSizes::parse_list("10,20").unwrap(),
            ValueSizes::List {
                sizes: vec![10, 20],
                cumulative: vec![1, 2]
            }
        );
        assert!(
            ValueSizes::parse_list("32:0")
                .unwrap_err()
                .contains("positive")
        );
        assert!(ValueSizes::parse_list("32:x").is_err());
        assert!(ValueSizes::parse_list("32:1,,64:1").is_err());
    }

    #[test]
    fn list_sizes_follow_their_weights() {
        let l = ValueSizes::parse_list("32:7,1024:2,65536:1").unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let mut counts = [0u64; 3];
        let draws = 100_000;
        for _ in 0..draws {
            match l.draw(&mut rng) {
                32 => counts[0] += 1,
                1024 => counts[1] += 1,
                65536 => counts[2] += 1,
                other => panic!("size {other} is not listed"),
            }
        }
        for (c, p) in counts.iter().zip([0.7, 0.2, 0.1]) {
            let expected = p * draws as f64;
            let sd = (draws as f64 * p * (1.0 - p)).sqrt();
            assert!((*c as f64 - expected).abs() < 5.0 * sd, "{counts:?}");
        }
    }

    #[test]
    fn range_sizes_cover_both_ends_and_stay_inside() {
        let r = ValueSizes::Range { min: 3, max: 6 };
        let mut rng = Pcg64Mcg::seed_from_u64(6);
        let mut seen = [false; 4];
        for _ in 0..1000 {
            let s = r.draw(&mut rng);
            assert!((3..=6).contains(&s));
            seen[s - 3] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn slices_fit_the_buffer_at_the_largest_size() {
        let buffer = value_buffer(100, 1);
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        for len in [0, 1, 100] {
            for _ in 0..1000 {
                assert_eq!(value_slice(&buffer, len, &mut rng).len(), len);
            }
        }
    }
}
