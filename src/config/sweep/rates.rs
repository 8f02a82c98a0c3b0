//! `--rates`: a range, a list, or percentages of a measured closed-loop maximum, parsed
//! into the rates a sweep steps through.

use crate::config::ConfigError;
use crate::units::parse_rate;

/// Most steps a `--rates` range may expand to.
pub const MAX_STEPS: usize = 1000;

/// The rates of a sweep: absolute requests per second, or fractions of a closed-loop maximum.
#[derive(Debug, Clone, PartialEq)]
pub enum Rates {
    /// Requests per second, increasing.
    Absolute(Vec<f64>),
    /// Fractions (1.0 = 100%) of the throughput of a closed-loop run measured first, increasing.
    OfClosedLoopMax(Vec<f64>),
}

impl Rates {
    /// The values as given (requests per second or fractions).
    pub fn values(&self) -> &[f64] {
        match self {
            Rates::Absolute(v) | Rates::OfClosedLoopMax(v) => v,
        }
    }
}

/// Parses `10k..200k:10k` (inclusive of the end when a step lands on it), `5k,10k,20k`,
/// or the same shapes in percent (`10%..120%:10%`, `50%,100%`).
pub fn parse_rates(text: &str) -> Result<Rates, ConfigError> {
    const FLAG: &str = "--rates";
    let text = text.trim();
    if text.is_empty() {
        return Err(ConfigError::invalid(
            FLAG,
            "empty; give a range like 10k..200k:10k, a list like 5k,10k,20k, or percentages like 10%..120%:10%",
        ));
    }
    let percent = text.contains('%');
    let value = |part: &str| -> Result<f64, ConfigError> {
        let part = part.trim();
        match (percent, part.strip_suffix('%')) {
            (true, Some(number)) => {
                let v: f64 = number.trim().parse().map_err(|_| {
                    ConfigError::invalid(
                        FLAG,
                        format!("'{part}' is not a percentage (example: 80%)"),
                    )
                })?;
                if !v.is_finite() || v <= 0.0 {
                    return Err(ConfigError::invalid(
                        FLAG,
                        format!("'{part}' must be a positive percentage"),
                    ));
                }
                Ok(v / 100.0)
            }
            (true, None) => Err(ConfigError::invalid(
                FLAG,
                format!("'{part}' has no '%': write every value in percent, or none"),
            )),
            (false, _) => parse_rate(part).map_err(|why| ConfigError::invalid(FLAG, why)),
        }
    };
    let values = if let Some((start, rest)) = text.split_once("..") {
        let (end, step) = rest.split_once(':').ok_or_else(|| {
            ConfigError::invalid(
                FLAG,
                format!("'{text}' has no step: write START..END:STEP, e.g. 10k..200k:10k"),
            )
        })?;
        if start.trim().is_empty() || end.trim().is_empty() || step.trim().is_empty() {
            return Err(ConfigError::invalid(
                FLAG,
                format!("'{text}' is an empty range: write START..END:STEP, e.g. 10k..200k:10k"),
            ));
        }
        let (start, end) = (value(start)?, value(end)?);
        let step = match value(step) {
            Ok(s) => s,
            Err(_) if step.trim().trim_end_matches('%').trim().parse::<f64>() == Ok(0.0) => {
                return Err(ConfigError::invalid(
                    FLAG,
                    "the step is zero; give a positive step such as :10k",
                ));
            }
            Err(e) => return Err(e),
        };
        if end < start {
            return Err(ConfigError::invalid(
                FLAG,
                format!("'{text}' is reversed: the end is below the start"),
            ));
        }
        // Each value is start + i*step (no accumulated error); the end counts when a step
        // lands on it within a part in a billion.
        let count = ((end - start) / step * (1.0 + 1e-9)).floor() + 1.0;
        if count > MAX_STEPS as f64 {
            return Err(ConfigError::invalid(
                FLAG,
                format!("'{text}' makes {count} steps; at most {MAX_STEPS}"),
            ));
        }
        (0..count as usize)
            .map(|i| start + i as f64 * step)
            .collect::<Vec<_>>()
    } else {
        // `5k-20k` reads as a range to a person and as one bad number to the parser.
        if let Some((start, end)) = text.split_once('-').filter(|(s, _)| !s.trim().is_empty()) {
            return Err(ConfigError::invalid(
                FLAG,
                format!(
                    "'{text}' is not a range here: write {0}..{1}:STEP (e.g. {0}..{1}:{0}), \
                     or list the rates as {0},{1}",
                    start.trim(),
                    end.trim()
                ),
            ));
        }
        let values = text.split(',').map(value).collect::<Result<Vec<_>, _>>()?;
        if values.windows(2).any(|w| w[1] <= w[0]) {
            return Err(ConfigError::invalid(
                FLAG,
                format!("'{text}': list the rates in increasing order, each once"),
            ));
        }
        values
    };
    Ok(if percent {
        Rates::OfClosedLoopMax(values)
    } else {
        Rates::Absolute(values)
    })
}
