//! Parsing of the quantities users type: rates (`50k`, `1.5M`), durations (`30s`,
//! `250ms`) and counts. Pure functions returning messages that clap prints after the
//! flag's name; formatting for display lives in `report/`.

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
pub fn parse_count(text: &str) -> Result<u64, String> {
    let value = parse_scaled(text)?;
    if value < 0.0 || value.fract() != 0.0 || value > u64::MAX as f64 {
        return Err(format!(
            "expected a whole non-negative number, got '{text}'"
        ));
    }
    Ok(value as u64)
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

/// Parses `123`, `1.5k`, `2M`, `3G` (decimal multipliers) into a float.
fn parse_scaled(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let (number, multiplier) = match trimmed.chars().last() {
        Some('k' | 'K') => (&trimmed[..trimmed.len() - 1], 1e3),
        Some('m' | 'M') => (&trimmed[..trimmed.len() - 1], 1e6),
        Some('g' | 'G') => (&trimmed[..trimmed.len() - 1], 1e9),
        _ => (trimmed, 1.0),
    };
    let value: f64 = number
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
}
