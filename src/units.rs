//! Parsing of the quantities users type: rates (`50k`, `1.5M`), durations (`30s`,
//! `250ms`), counts and lists of percentiles (`50,99,99.9`). Pure functions returning
//! messages that clap prints after the flag's name; formatting for display lives in
//! `export/`.

use std::time::Duration;

/// Parses a request rate in requests per second: `50000`, `50k`, `1.5M`, `2.5e5`.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let value = parse_scaled(text)?;
    if !value.is_finite() || value <= 0.0 {
        return Err(format!(
            "rate must be a positive number of requests per second, got '{text}'"
        ));
    }
    Ok(value)
}

/// Parses a whole count with an optional `k`/`M`/`G` suffix: `100000`, `100k`.
///
/// A plain number is read exactly (every value up to 2^64-1); one with a suffix, a
/// fraction or an exponent goes through `f64` and must come out whole and below 2^64.
pub fn parse_count(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return trimmed.parse().map_err(|_| {
            format!("'{text}' is above 18446744073709551615 (2^64-1), the largest count")
        });
    }
    let value = parse_scaled(text)?;
    // 2^64 as f64 exactly: `u64::MAX as f64` rounds up to it, so `>` would let it through.
    const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;
    if value < 0.0 || value.fract() != 0.0 {
        return Err(format!(
            "expected a whole non-negative number, got '{text}'"
        ));
    }
    if value >= TWO_TO_64 {
        return Err(format!(
            "'{text}' is above 18446744073709551615 (2^64-1), the largest count"
        ));
    }
    Ok(value as u64)
}

/// A value parser for a whole-number flag in `min..=max` (suffixes as [`parse_count`]):
/// `value_parser = count_in::<usize>(1, 100_000, "each one is a socket")`. `why` says
/// what the upper bound protects; it ends the message for a value above it.
pub fn count_in<T>(
    min: u64,
    max: u64,
    why: &'static str,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64>,
{
    move |text| {
        let value = parse_count(text)?;
        if value < min {
            return Err(format!(
                "{value} is below {min}, the least [range: {min} to {max}]"
            ));
        }
        if value > max {
            return Err(format!(
                "{value} is above {max}, the most ({why}) [range: {min} to {max}]"
            ));
        }
        T::try_from(value).map_err(|_| format!("{value} does not fit this machine's integers"))
    }
}

/// Parses a size in bytes: a count as [`parse_count`] (`4096`, `4k`), or with a unit,
/// decimal (`B`, `KB`, `MB`, `GB`, as the `k`/`M`/`G` of a count) or binary (`KiB`, `MiB`,
/// `GiB`), upper or lower case: `-d 1KB` is a thousand bytes.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    let units: [(&str, f64); 7] = [
        ("kib", 1024.0),
        ("mib", 1024.0 * 1024.0),
        ("gib", 1024.0 * 1024.0 * 1024.0),
        ("kb", 1e3),
        ("mb", 1e6),
        ("gb", 1e9),
        ("b", 1.0),
    ];
    let Some((number, per)) = units
        .iter()
        .find_map(|(unit, per)| lower.strip_suffix(unit).map(|n| (n.trim(), *per)))
    else {
        return parse_count(text).map_err(|why| {
            format!("{why}; a size is in bytes, or with a unit: 512, 4k, 4KB, 1MiB")
        });
    };
    let value: f64 = number.parse().map_err(|_| {
        format!("'{text}' is not a size: give bytes, or a number with a unit: 512, 4KB, 1MiB")
    })?;
    let bytes = value * per;
    if !bytes.is_finite() || bytes < 0.0 || bytes.fract() != 0.0 || bytes >= 1.8e19 {
        return Err(format!(
            "'{text}' is not a whole number of bytes (e.g. 512, 4KB, 1MiB)"
        ));
    }
    Ok(bytes as u64)
}

/// A value parser for a size flag in bytes in `min..=max` (units as [`parse_bytes`]);
/// `why` says what the upper bound protects.
pub fn bytes_in<T>(
    min: u64,
    max: u64,
    why: &'static str,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64>,
{
    move |text| {
        let value = parse_bytes(text)?;
        if value < min {
            return Err(format!(
                "{value} bytes is below {min}, the least [range: {min} to {max} bytes]"
            ));
        }
        if value > max {
            return Err(format!(
                "'{}' is {value} bytes, above {max}, the most ({why}) [range: {min} to {max} bytes]",
                text.trim()
            ));
        }
        T::try_from(value).map_err(|_| format!("{value} does not fit this machine's integers"))
    }
}

/// A value parser for a duration flag (units required, as [`parse_duration`]; `zero_ok`
/// also takes a bare `0`, as [`parse_delay`]) from `min` to `max`; `why` says what the upper
/// bound protects.
pub fn duration_in(
    min: Duration,
    max: Duration,
    zero_ok: bool,
    why: &'static str,
) -> impl Fn(&str) -> Result<Duration, String> + Clone + Send + Sync + 'static {
    move |text| {
        let value = if zero_ok {
            parse_delay(text)?
        } else {
            parse_duration(text)?
        };
        let range = format!(
            "[range: {} to {}]",
            humantime::format_duration(min),
            humantime::format_duration(max)
        );
        if value < min {
            return Err(format!(
                "'{}' is shorter than {}, the least {range}",
                text.trim(),
                humantime::format_duration(min)
            ));
        }
        if value > max {
            return Err(format!(
                "'{}' is longer than {}, the most ({why}) {range}",
                text.trim(),
                humantime::format_duration(max)
            ));
        }
        Ok(value)
    }
}

/// A value parser for a rate flag (as [`parse_rate`]: above zero, finite) of at most
/// `max_per_sec`; `why` says what the upper bound protects.
pub fn rate_up_to(
    max_per_sec: f64,
    why: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |text| {
        let value = parse_rate(text)?;
        if value > max_per_sec {
            return Err(format!(
                "'{}' per second is above {max_per_sec}, the most ({why})",
                text.trim()
            ));
        }
        Ok(value)
    }
}

/// Parses a duration that must carry units: `30s`, `250ms`, `2m`, `1m30s`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(format!(
            "'{text}' has no unit: write e.g. '{trimmed}s' or '{trimmed}ms'"
        ));
    }
    humantime::parse_duration(trimmed)
        .map_err(|e| format!("'{text}' is not a duration ({e}); write e.g. '30s' or '250ms'"))
}

/// Parses a delay: a duration with units (`50us`, `1ms`), or a bare `0` for none.
pub fn parse_delay(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.chars().all(|c| c == '0' || c == '.') && trimmed.contains('0')
    {
        return Ok(Duration::ZERO);
    }
    parse_duration(text).map_err(|e| e.replace("'30s' or '250ms'", "'50us', '1ms' or 0"))
}

/// Most percentiles `--percentiles` takes: a table row each.
pub const MAX_PERCENTILES: usize = 32;

/// `--percentiles` as read: in percent, sorted, without repeats. One value to clap, not
/// many (a `Vec` would be taken as a repeatable flag).
#[derive(Debug, Clone, PartialEq)]
pub struct PercentileList(pub Vec<f64>);

/// Reads `--percentiles`: numbers in percent, each above 0 and at most 100, returned
/// sorted without repeats.
pub fn parse_percentiles(text: &str) -> Result<PercentileList, String> {
    let mut list = Vec::new();
    for item in text.split(',').map(str::trim) {
        let p: f64 = item.parse().map_err(|_| {
            format!("`{item}` is not a number: give percentiles in percent, e.g. 50,99,99.9")
        })?;
        if !(p > 0.0 && p <= 100.0) {
            return Err(format!(
                "{item} is not a percentile: each is above 0 and at most 100"
            ));
        }
        list.push(p);
    }
    list.sort_by(f64::total_cmp);
    list.dedup();
    if list.len() > MAX_PERCENTILES {
        return Err(format!(
            "{} percentiles, more than {MAX_PERCENTILES}",
            list.len()
        ));
    }
    Ok(PercentileList(list))
}

/// Parses `123`, `1.5k`, `2M`, `3G` (decimal multipliers) into a float.
fn parse_scaled(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let (number, multiplier) = match trimmed.chars().last() {
        Some('k' | 'K') => (&trimmed[..trimmed.len() - 1], 1e3),
        Some('m' | 'M') => (&trimmed[..trimmed.len() - 1], 1e6),
        Some('g' | 'G') => (&trimmed[..trimmed.len() - 1], 1e9),
        _ => (trimmed, 1.0),
    };
    // `10 k` (quoted) reads as 10k: the space is typography, not a mistake.
    let value: f64 = number
        .trim_end()
        .parse()
        .map_err(|_| format!("'{text}' is not a number (examples: 50000, 50k, 1.5M)"))?;
    if !value.is_finite() {
        return Err(format!("'{text}' is not a finite number"));
    }
    Ok(value * multiplier)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rates_accept_suffixes() {
        assert_eq!(parse_rate("50000").unwrap(), 50_000.0);
        assert_eq!(parse_rate("50k").unwrap(), 50_000.0);
        assert_eq!(parse_rate("1.5M").unwrap(), 1_500_000.0);
    }

    #[test]
    fn rates_refuse_zero_negative_and_garbage() {
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("-5").is_err());
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("").is_err());
    }

    #[test]
    fn sizes_take_bytes_or_a_unit_and_say_so_when_neither() {
        assert_eq!(parse_bytes("512").unwrap(), 512);
        assert_eq!(parse_bytes("4k").unwrap(), 4000);
        assert_eq!(parse_bytes("4KB").unwrap(), 4000);
        assert_eq!(parse_bytes("1 MiB").unwrap(), 1 << 20);
        assert_eq!(parse_bytes("64b").unwrap(), 64);
        assert_eq!(parse_bytes("1GB").unwrap(), 1_000_000_000);
        let e = parse_bytes("lots").unwrap_err();
        assert!(e.contains("bytes") && e.contains("1MiB"), "{e}");
        let e = parse_bytes("1.5B").unwrap_err();
        assert!(e.contains("whole number of bytes"), "{e}");
        let big = bytes_in::<usize>(0, 512 << 20, "a server refuses more")("1GB").unwrap_err();
        assert!(big.contains("1000000000 bytes, above 536870912"), "{big}");
    }

    #[test]
    fn durations_need_units() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("30").unwrap_err().contains("no unit"));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn delays_take_units_or_a_bare_zero() {
        assert_eq!(parse_delay("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_delay("50us").unwrap(), Duration::from_micros(50));
        assert_eq!(parse_delay("1ms").unwrap(), Duration::from_millis(1));
        assert!(parse_delay("5").unwrap_err().contains("no unit"));
        assert!(parse_delay("soon").unwrap_err().contains("'50us'"));
    }

    #[test]
    fn counts_are_whole() {
        assert_eq!(parse_count("100k").unwrap(), 100_000);
        assert!(parse_count("1.5").is_err());
    }

    #[test]
    fn counts_are_exact_up_to_2_to_the_64_and_refused_above() {
        assert_eq!(parse_count("18446744073709551615").unwrap(), u64::MAX);
        assert_eq!(
            parse_count("9007199254740993").unwrap(),
            9_007_199_254_740_993
        );
        for above in [
            "18446744073709551616",
            "18446744073709551617",
            "1.8446744073709552e19",
            "18446744073709552k",
            "1e30",
            "99999999999999999999999",
        ] {
            let err = parse_count(above).unwrap_err();
            assert!(err.contains("2^64"), "{above}: {err}");
        }
        for bad in ["-1", "nan", "inf", "-inf", "", "1e400"] {
            assert!(parse_count(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ranged_counts_name_both_bounds_and_say_why_above() {
        let parse = count_in::<u32>(1, 10, "because");
        assert_eq!(parse("10").unwrap(), 10);
        assert!(parse("0").unwrap_err().contains("[range: 1 to 10]"));
        let above = parse("11").unwrap_err();
        assert!(
            above.contains("because") && above.contains("[range: 1 to 10]"),
            "{above}"
        );
        let narrow = count_in::<u8>(0, 1000, "wide");
        assert!(narrow("300").unwrap_err().contains("does not fit"));
    }

    #[test]
    fn ranged_durations_refuse_what_overflows_a_clock() {
        let parse = duration_in(
            Duration::from_millis(1),
            Duration::from_secs(3600),
            false,
            "an hour",
        );
        assert_eq!(parse("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse("1h 1ns").unwrap_err().contains("an hour"));
        assert!(
            parse("18446744073709551615s")
                .unwrap_err()
                .contains("longer")
        );
        assert!(parse("999us").unwrap_err().contains("shorter"));
        assert!(parse("0").is_err());
        let delay = duration_in(Duration::ZERO, Duration::from_secs(1), true, "a second");
        assert_eq!(delay("0").unwrap(), Duration::ZERO);
    }

    #[test]
    fn ranged_rates_refuse_above_the_most() {
        let parse = rate_up_to(1e6, "planning");
        assert_eq!(parse("1M").unwrap(), 1e6);
        assert!(parse("1.5M").unwrap_err().contains("planning"));
        assert!(parse("nan").is_err() && parse("inf").is_err() && parse("0").is_err());
    }

    #[test]
    fn a_percentile_list_is_read_sorted_and_bad_entries_are_named() {
        assert_eq!(
            parse_percentiles("99.9, 50,99,50").unwrap().0,
            [50.0, 99.0, 99.9]
        );
        assert_eq!(parse_percentiles("100").unwrap().0, [100.0]);
        for bad in ["0", "101", "-5", "p99", "", "NaN"] {
            assert!(parse_percentiles(bad).is_err(), "{bad}");
        }
        let many = (1..=33)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        assert!(
            parse_percentiles(&many)
                .unwrap_err()
                .contains("more than 32")
        );
    }
}
