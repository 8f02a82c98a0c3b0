//! `--slo`: the response-time objectives, one parser for a run's (each test judged
//! against them) and a sweep's (the capacity searched for).

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;

/// A service-level objective on the response time: `percentile <= bound`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// As typed, e.g. `p99<=1ms`.
    pub text: String,
    /// Percentile, e.g. 99.9.
    pub percentile: f64,
    /// Bound in nanoseconds.
    pub bound_ns: u64,
}

impl Slo {
    /// The percentile as a quantile in 0..1.
    pub fn quantile(&self) -> f64 {
        self.percentile / 100.0
    }

    /// `p99.9` for a percentile of 99.9.
    pub fn percentile_label(&self) -> String {
        format!("p{}", self.percentile)
    }
}

/// Parses every `--slo` given, refusing two bounds on one percentile: the text would
/// show two verdicts on one figure, and the reader could not tell which bound failed.
pub fn parse_slos(texts: &[String]) -> Result<Vec<Slo>, ConfigError> {
    let mut slos: Vec<Slo> = Vec::with_capacity(texts.len());
    for text in texts {
        let slo = parse_slo(text)?;
        if let Some(first) = slos.iter().find(|s| s.percentile == slo.percentile) {
            return Err(ConfigError::invalid(
                "--slo",
                format!(
                    "'{}' and '{}' both bound the {}: give one bound per percentile (the \
                     lower one holds both)",
                    first.text,
                    slo.text,
                    slo.percentile_label()
                ),
            ));
        }
        slos.push(slo);
    }
    Ok(slos)
}

/// Parses `p99<=1ms`, `p99.9<=500us`, `p50<=2.5ms`, `p99.99<=1s` (units ns, us, ms, s).
pub fn parse_slo(text: &str) -> Result<Slo, ConfigError> {
    const FLAG: &str = "--slo";
    let example = "write e.g. 'p99<=1ms' or 'p99.9<=500us'";
    let trimmed = text.trim();
    // `p99<=1ms,p99.9<=5ms`: one flag holds one objective, as each is judged alone.
    if trimmed.contains(',') {
        let each: Vec<String> = trimmed
            .split(',')
            .map(|part| format!("--slo '{}'", part.trim()))
            .collect();
        return Err(ConfigError::invalid(
            FLAG,
            format!(
                "'{text}' holds more than one objective: give --slo once per objective, e.g. {}",
                each.join(" ")
            ),
        ));
    }
    let Some((left, right)) = trimmed.split_once("<=") else {
        let why = if trimmed.contains('<') {
            format!("'{text}' uses '<'; an objective is an upper bound with '<=': {example}")
        } else {
            format!("'{text}' has no '<=': {example}")
        };
        return Err(ConfigError::invalid(FLAG, why));
    };
    let number = left.trim().strip_prefix('p').ok_or_else(|| {
        ConfigError::invalid(
            FLAG,
            format!("'{left}' is not a percentile like p99: {example}"),
        )
    })?;
    let percentile: f64 = number.parse().map_err(|_| {
        ConfigError::invalid(
            FLAG,
            format!("'{left}' is not a percentile like p99 or p99.9"),
        )
    })?;
    if !(percentile.is_finite() && percentile > 0.0 && percentile < 100.0) {
        return Err(ConfigError::invalid(
            FLAG,
            format!("percentile '{left}' is out of range: use p50 .. p99.999 (above 0, below 100)"),
        ));
    }
    let right = right.trim();
    let split = right
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(right.len());
    let (amount, unit) = right.split_at(split);
    let amount: f64 = amount.parse().map_err(|_| {
        ConfigError::invalid(
            FLAG,
            format!("'{right}' is not a latency like 1ms or 500us"),
        )
    })?;
    let ns_per_unit = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "" => {
            return Err(ConfigError::invalid(
                FLAG,
                format!("'{right}' has no unit: use ns, us, ms or s"),
            ));
        }
        other => {
            return Err(ConfigError::invalid(
                FLAG,
                format!("unknown unit '{other}' in '{right}': use ns, us, ms or s"),
            ));
        }
    };
    let bound_ns = amount * ns_per_unit;
    if !(1.0..3.6e12).contains(&bound_ns) {
        return Err(ConfigError::invalid(
            FLAG,
            format!("'{right}' is out of range: between 1ns and 1h"),
        ));
    }
    Ok(Slo {
        text: trimmed.to_string(),
        percentile,
        bound_ns: bound_ns.round() as u64,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn slos_parse_percentile_and_bound() {
        let s = parse_slo("p99<=1ms").unwrap();
        assert_eq!((s.percentile, s.bound_ns), (99.0, 1_000_000));
        let s = parse_slo(" p99.9 <= 500us ").unwrap();
        assert_eq!(
            (s.percentile, s.bound_ns, s.percentile_label().as_str()),
            (99.9, 500_000, "p99.9")
        );
        assert_eq!(parse_slo("p50<=2.5ms").unwrap().bound_ns, 2_500_000);
        assert_eq!(parse_slo("p99.999<=1s").unwrap().bound_ns, 1_000_000_000);
        assert_eq!(parse_slo("p90<=800ns").unwrap().bound_ns, 800);
    }

    #[test]
    fn bad_slos_are_refused_naming_the_flag() {
        for (bad, says) in [
            ("p99<1ms", "'<='"),
            ("p101<=1ms", "out of range"),
            ("p99<=fast", "not a latency"),
            ("p99<=1", "no unit"),
            ("p99<=1h", "unknown unit"),
            ("99<=1ms", "percentile"),
            ("p100<=1ms", "out of range"),
            ("p99", "no '<='"),
            ("p99<=1ms,p99.9<=5ms", "--slo 'p99<=1ms' --slo 'p99.9<=5ms'"),
        ] {
            let e = parse_slo(bad).unwrap_err().to_string();
            assert!(e.contains("--slo") && e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn two_bounds_on_one_percentile_are_refused_and_other_percentiles_kept() {
        let texts = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let e = parse_slos(&texts(&["p99<=1ms", "p99.9<=5ms", "p99<=2ms"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--slo") && e.contains("'p99<=1ms' and 'p99<=2ms' both bound the p99"),
            "{e}"
        );
        let kept = parse_slos(&texts(&["p99<=1ms", "p99.9<=5ms"])).unwrap();
        assert_eq!(kept.len(), 2);
    }
}
