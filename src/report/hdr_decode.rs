//! Reading a histogram back from a file someone else may have written: the V2 form
//! (compressed or not, base64 in reports and .hlog lines) checked before the
//! hdrhistogram crate allocates for it. Its deserializer believes the header: a 60-byte
//! string that claims a 4 GB payload gets 4 GB, bounds of 1..2^62 at five digits get tens
//! of megabytes of counts (zeroed: about 90 ms of CPU each), and counts that add past
//! 2^64 wrap. Here the bounds and precision must be the ones every run writes (1 ns to
//! 1 h at 3 digits, `record::bounds`), the claimed sizes are checked against what those
//! bounds can hold and the bytes there are, the inflated payload is capped, and the total
//! count must be one a run could have recorded. Reports and `.hlog` lines are read
//! through here alike.

use std::io::Read;

use base64::Engine;
use hdrhistogram::Histogram;

use crate::record::{HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS};

/// The V2 cookie (word size 8), uncompressed and compressed, as the crate writes them.
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// The V2 header after the cookie: payload length, normalizing offset, digits, lowest,
/// highest, integer-to-double ratio.
const V2_HEADER: usize = 4 + 4 + 4 + 4 + 8 + 8 + 8;
/// Most significant digits a histogram may claim (the crate's own limit).
const MOST_DIGITS: u32 = 5;
/// Most bytes a count takes in the payload (LEB128 of a zig-zagged i64).
const MOST_BYTES_PER_COUNT: u64 = 9;
/// Most values a histogram read back may hold: a million years of a million requests a
/// second is 3e19; 2^53 (9e15) is beyond any run and keeps every sum of a few of them,
/// and every rank a percentile's interval computes, exact in an f64.
pub const MOST_VALUES: u64 = 1 << 53;

/// The histogram `text` (base64 of its V2 form) holds, or why it cannot be read.
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("not base64 ({e})"))?;
    let inner = match cookie(&bytes) {
        Some(V2_COOKIE) => bytes,
        Some(V2_COMPRESSED_COOKIE) => inflate(&bytes)?,
        _ => return Err("not an HdrHistogram V2 histogram (its cookie)".into()),
    };
    check_header(&inner)?;
    let h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut inner.as_slice())
        .map_err(|e| format!("does not decode ({e:?})"))?;
    let mut total: u64 = 0;
    for v in h.iter_recorded() {
        total = total
            .checked_add(v.count_at_value())
            .filter(|t| *t <= MOST_VALUES)
            .ok_or_else(|| {
                format!("holds more than {MOST_VALUES} values: no run records so many")
            })?;
    }
    Ok(h)
}

fn cookie(bytes: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// The uncompressed V2 form inside a compressed one, inflated no further than the
/// largest payload any valid header allows.
fn inflate(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let len = u32_at(bytes, 4).ok_or("cut short in its header")? as usize;
    let compressed = bytes.get(8..8usize.saturating_add(len)).ok_or_else(|| {
        format!(
            "claims {len} compressed bytes, has {}",
            bytes.len().saturating_sub(8)
        )
    })?;
    let cap = V2_HEADER as u64 + most_payload(LOWEST_NS, HIGHEST_NS, u32::from(SIGNIFICANT_DIGITS));
    let mut inner = Vec::new();
    flate2::read::ZlibDecoder::new(compressed)
        .take(cap + 1)
        .read_to_end(&mut inner)
        .map_err(|e| format!("does not inflate ({e})"))?;
    if inner.len() as u64 > cap {
        return Err(format!(
            "inflates past {cap} bytes: no histogram is so large"
        ));
    }
    Ok(inner)
}

/// Checks an uncompressed V2 form's header against its bytes and its bounds.
fn check_header(bytes: &[u8]) -> Result<(), String> {
    let short = || "cut short in its header".to_string();
    let payload = u64::from(u32_at(bytes, 4).ok_or_else(short)?);
    let digits = u32_at(bytes, 12).ok_or_else(short)?;
    let low = u64_at(bytes, 16).ok_or_else(short)?;
    let high = u64_at(bytes, 24).ok_or_else(short)?;
    if !(1..=MOST_DIGITS).contains(&digits) || low == 0 || high < low.saturating_mul(2) {
        return Err(format!(
            "bounds {low}..{high} at {digits} significant digits are not a histogram's"
        ));
    }
    if (low, high, digits) != (LOWEST_NS, HIGHEST_NS, u32::from(SIGNIFICANT_DIGITS)) {
        return Err(format!(
            "bounds {low}..{high} at {digits} significant digits are not what a run writes \
             ({LOWEST_NS}..{HIGHEST_NS} ns at {SIGNIFICANT_DIGITS})"
        ));
    }
    let there = bytes.len().saturating_sub(V2_HEADER) as u64;
    if payload > there {
        return Err(format!("claims a payload of {payload} bytes, has {there}"));
    }
    let most = most_payload(low, high, digits);
    if payload > most {
        return Err(format!(
            "claims a payload of {payload} bytes, more than its bounds can hold ({most})"
        ));
    }
    Ok(())
}

/// The most payload bytes a histogram of these bounds can need: every count slot at the
/// longest encoding. The slots are HdrHistogram's: sub-buckets of 2^ceil(log2(2 x
/// 10^digits)), buckets until one holds `high`.
fn most_payload(low: u64, high: u64, digits: u32) -> u64 {
    let sub_buckets = (2 * 10u64.pow(digits.min(MOST_DIGITS))).next_power_of_two();
    let unit = 63 - low.max(1).leading_zeros();
    let mut smallest_untrackable = u128::from(sub_buckets) << unit;
    let mut buckets: u64 = 1;
    while smallest_untrackable <= u128::from(high) {
        smallest_untrackable <<= 1;
        buckets += 1;
    }
    (buckets + 1) * (sub_buckets / 2) * MOST_BYTES_PER_COUNT
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer, V2Serializer};

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn a_histogram_round_trips_compressed_and_not() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for v in [1_000u64, 20_000, 3_000_000, 999_999_999] {
            h.record_n(v, 7).unwrap();
        }
        let mut plain = Vec::new();
        V2Serializer::new().serialize(&h, &mut plain).unwrap();
        let mut packed = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h, &mut packed)
            .unwrap();
        for bytes in [plain, packed] {
            let back = decode(&b64(&bytes)).unwrap();
            assert_eq!(back.len(), 28);
            assert_eq!(back.max(), h.max());
        }
    }

    /// An uncompressed V2 header claiming `payload` bytes, with `bounds` and `digits`.
    fn header(payload: u32, digits: u32, bounds: (u64, u64)) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(V2_COOKIE.to_be_bytes());
        b.extend(payload.to_be_bytes());
        b.extend(0u32.to_be_bytes());
        b.extend(digits.to_be_bytes());
        b.extend(bounds.0.to_be_bytes());
        b.extend(bounds.1.to_be_bytes());
        b.extend(1.0f64.to_be_bytes());
        b
    }

    #[test]
    fn a_header_claiming_more_than_is_there_or_than_its_bounds_hold_is_refused() {
        // 4 GB claimed in 60 bytes: refused before any allocation.
        let e = decode(&b64(&header(u32::MAX, 3, (1, 3_600_000_000_000)))).unwrap_err();
        assert!(e.contains("claims a payload"), "{e}");
        // The same claim inside a compressed form.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut z, &header(u32::MAX, 3, (1, 3_600_000_000_000))).unwrap();
        let inner = z.finish().unwrap();
        let mut packed = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        packed.extend((inner.len() as u32).to_be_bytes());
        packed.extend(&inner);
        assert!(
            decode(&b64(&packed))
                .unwrap_err()
                .contains("claims a payload")
        );
        // A compressed length past the end.
        packed[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(
            decode(&b64(&packed))
                .unwrap_err()
                .contains("compressed bytes")
        );
        // Bounds no histogram has.
        assert!(
            decode(&b64(&header(0, 9, (1, 100))))
                .unwrap_err()
                .contains("bounds")
        );
        assert!(
            decode(&b64(&header(0, 3, (0, 100))))
                .unwrap_err()
                .contains("bounds")
        );
        assert!(decode("AAAA").is_err());
        assert!(decode("not base64!").is_err());
    }

    #[test]
    fn bounds_or_precision_no_run_writes_are_refused_before_any_counts_are_made() {
        // One count at the lowest value: a byte of payload.
        let with = |digits: u32, bounds: (u64, u64)| {
            let mut b = header(1, digits, bounds);
            b.push(2);
            decode(&b64(&b))
        };
        assert_eq!(with(3, (1, 3_600_000_000_000)).unwrap().len(), 1);
        for (digits, bounds) in [
            (5, (1, 1u64 << 62)),
            (3, (1, 1u64 << 62)),
            (5, (1, 3_600_000_000_000)),
            (2, (1, 3_600_000_000_000)),
            (3, (1000, 3_600_000_000_000)),
        ] {
            let e = with(digits, bounds).unwrap_err();
            assert!(e.contains("not what a run writes"), "{e}");
        }
    }

    #[test]
    fn counts_past_what_a_run_records_are_refused_not_wrapped() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        h.record_n(1000, 1 << 62).unwrap();
        h.record_n(2000, 1 << 62).unwrap();
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h, &mut bytes)
            .unwrap();
        let e = decode(&b64(&bytes)).unwrap_err();
        assert!(e.contains("more than"), "{e}");
    }

    #[test]
    fn the_payload_bound_counts_the_slots_the_crate_allocates() {
        for (low, high, digits) in [
            (1, 3_600_000_000_000u64, 3u32),
            (1, u64::MAX, 5),
            (1000, 1 << 40, 2),
            (1, 2, 1),
        ] {
            let h = Histogram::<u64>::new_with_bounds(low, high, digits as u8).unwrap();
            let slots = most_payload(low, high, digits) / MOST_BYTES_PER_COUNT;
            assert_eq!(
                slots,
                h.distinct_values() as u64,
                "{low}..{high} at {digits}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// Any damage to a histogram's bytes (a flipped byte anywhere, a cut) is an
        /// answer or a refusal: no panic, and no allocation beyond the caps above.
        #[test]
        fn damaged_histograms_decode_or_are_refused(
            compressed in proptest::prelude::any::<bool>(),
            flips in proptest::collection::vec((0usize..4096, proptest::prelude::any::<u8>()), 0..6),
            cut in 0usize..4096,
        ) {
            let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
            for v in [1_000u64, 50_000, 7_000_000] {
                h.record_n(v, 3).unwrap();
            }
            let mut bytes = Vec::new();
            if compressed {
                V2DeflateSerializer::new().serialize(&h, &mut bytes).unwrap();
            } else {
                V2Serializer::new().serialize(&h, &mut bytes).unwrap();
            }
            let len = bytes.len();
            for (at, byte) in flips {
                bytes[at % len] = byte;
            }
            bytes.truncate(cut % (len + 1));
            if let Ok(back) = decode(&b64(&bytes)) {
                proptest::prop_assert!(back.len() <= MOST_VALUES);
            }
        }
    }
}
