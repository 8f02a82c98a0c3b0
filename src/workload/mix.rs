//! Mixes: one test that sends several commands, each request picking one by weight.
//! Spelled three ways: memtier's `--ratio SET:GET`, go-redis's `--read-ratio F`, and
//! weighted custom commands (`--command ... --command-weights 1,10`). This file reads
//! those flags and splits typed commands into words; building the templates is `mod.rs`'s.

/// A mix as typed, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Mix {
    /// `--ratio SET:GET`: that many SETs per that many GETs.
    Ratio {
        /// SET weight.
        set: u64,
        /// GET weight.
        get: u64,
    },
    /// `--read-ratio F`: the fraction of requests that are GETs.
    ReadRatio(f64),
    /// `--command` entries (split into words) with their weights.
    Custom {
        /// Each command's words, as typed: keys and values need not be text.
        commands: Vec<Vec<Vec<u8>>>,
        /// Each command's weight (all 1 without `--command-weights`).
        weights: Vec<u64>,
    },
}

/// Resolution of `--read-ratio` as integer weights (parts per million).
const READ_RATIO_SCALE: u64 = 1_000_000;

impl Mix {
    /// The test's name: `MIX (SET:GET 1:10)`, `MIX (read ratio 0.8)`, `CUSTOM`.
    pub fn name(&self) -> String {
        match self {
            Mix::Ratio { set, get } => format!("MIX (SET:GET {set}:{get})"),
            Mix::ReadRatio(r) => format!("MIX (read ratio {r})"),
            Mix::Custom { .. } => "CUSTOM".to_string(),
        }
    }

    /// Each command's words and weight, in order (zero weights included).
    pub fn commands(&self) -> Vec<(Vec<Vec<u8>>, u64)> {
        let words = |typed: &[&str]| typed.iter().map(|w| w.as_bytes().to_vec()).collect();
        let set = || words(&["SET", "__key__", "__data__"]);
        let get = || words(&["GET", "__key__"]);
        match self {
            Mix::Ratio { set: s, get: g } => vec![(set(), *s), (get(), *g)],
            Mix::ReadRatio(r) => {
                let reads = (r * READ_RATIO_SCALE as f64).round() as u64;
                vec![
                    (set(), READ_RATIO_SCALE - reads.min(READ_RATIO_SCALE)),
                    (get(), reads),
                ]
            }
            Mix::Custom { commands, weights } => commands
                .iter()
                .cloned()
                .zip(weights.iter().copied())
                .collect(),
        }
    }

    /// The flag a placeholder error in this mix is blamed on.
    pub fn flag(&self) -> &'static str {
        match self {
            Mix::Ratio { .. } => "--ratio",
            Mix::ReadRatio(_) => "--read-ratio",
            Mix::Custom { .. } => "--command",
        }
    }
}

/// Parses `--ratio SET:GET` (whole numbers, not both zero): `1:10`.
pub fn parse_ratio(text: &str) -> Result<(u64, u64), String> {
    let bad =
        || format!("'{text}' is not SET:GET in whole numbers, e.g. 1:10 (one SET per ten GETs)");
    let (s, g) = text.split_once(':').ok_or_else(bad)?;
    let set: u64 = s.trim().parse().map_err(|_| bad())?;
    let get: u64 = g.trim().parse().map_err(|_| bad())?;
    if set == 0 && get == 0 {
        return Err(format!(
            "'{text}' sends nothing: at least one side must be above zero"
        ));
    }
    // The sides are weights drawn from by their sum, which must be a count too.
    if set.checked_add(get).is_none() {
        return Err(format!(
            "'{text}' adds up to more than 18446744073709551615 (2^64-1); give smaller \
             numbers in the same ratio"
        ));
    }
    Ok((set, get))
}

/// Checks `--read-ratio`: a fraction from 0 (only SETs) to 1 (only GETs).
pub fn check_read_ratio(r: f64) -> Result<f64, String> {
    if (0.0..=1.0).contains(&r) {
        Ok(r)
    } else {
        Err(format!(
            "{r} is outside 0..1 (the fraction of requests that are GETs, e.g. 0.8)"
        ))
    }
}

/// Parses `--command-weights W,W,...` for `commands` commands: positive whole numbers.
pub fn parse_weights(text: &str, commands: usize) -> Result<Vec<u64>, String> {
    let mut weights = Vec::new();
    for item in text.split(',').map(str::trim) {
        let w = item.parse::<u64>().ok().filter(|&w| w > 0);
        weights.push(w.ok_or_else(|| {
            format!("weight '{item}' is not a positive whole number (e.g. 1,10)")
        })?);
    }
    if weights.len() != commands {
        return Err(format!(
            "{} weights for {} --command entries; give one weight per command, in order",
            weights.len(),
            commands
        ));
    }
    if weights
        .iter()
        .try_fold(0u64, |acc, &w| acc.checked_add(w))
        .is_none()
    {
        return Err("the weights add up to more than 2^64".to_string());
    }
    Ok(weights)
}

/// Running sums of `weights`, for [`super::values::weighted_index`].
pub fn cumulative(weights: &[u64]) -> Vec<u64> {
    weights
        .iter()
        .scan(0u64, |acc, &w| {
            // The parsers refuse weights whose sum overflows; saturating keeps any other
            // caller from a panic.
            *acc = acc.saturating_add(w);
            Some(*acc)
        })
        .collect()
}

/// Splits a typed command into words on white space. `"..."` groups words and knows
/// `\"`, `\\`, `\n`, `\r`, `\t`; `'...'` groups words literally; quotes may sit inside
/// a word (`a"b c"` is `ab c`), and `""` is an empty word. Bytes that are not UTF-8 (a
/// binary key or value) are kept as they are, inside their word.
pub fn split_words(text: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    /// A character of the text, or one of its bytes that is not UTF-8.
    enum Unit {
        Char(char),
        Byte(u8),
    }
    let unbalanced =
        |quote: char| format!("unbalanced {quote} in '{}'", String::from_utf8_lossy(text));
    let push = |word: &mut Vec<u8>, unit: Unit| match unit {
        Unit::Char(c) => word.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        Unit::Byte(b) => word.push(b),
    };
    let mut words = Vec::new();
    let mut word = Vec::new();
    let mut in_word = false;
    let mut units = text.utf8_chunks().flat_map(|chunk| {
        let chars = chunk.valid().chars().map(Unit::Char);
        chars.chain(chunk.invalid().iter().map(|&b| Unit::Byte(b)))
    });
    while let Some(unit) = units.next() {
        match unit {
            Unit::Char(c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            Unit::Char('"') => {
                in_word = true;
                loop {
                    match units.next() {
                        None => return Err(unbalanced('"')),
                        Some(Unit::Char('"')) => break,
                        Some(Unit::Char('\\')) => match units.next() {
                            Some(Unit::Char('n')) => word.push(b'\n'),
                            Some(Unit::Char('r')) => word.push(b'\r'),
                            Some(Unit::Char('t')) => word.push(b'\t'),
                            Some(other) => push(&mut word, other),
                            None => return Err(unbalanced('"')),
                        },
                        Some(other) => push(&mut word, other),
                    }
                }
            }
            Unit::Char('\'') => {
                in_word = true;
                loop {
                    match units.next() {
                        None => return Err(unbalanced('\'')),
                        Some(Unit::Char('\'')) => break,
                        Some(other) => push(&mut word, other),
                    }
                }
            }
            other => {
                in_word = true;
                push(&mut word, other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ratios_parse_and_refuse_garbage() {
        assert_eq!(parse_ratio("1:10").unwrap(), (1, 10));
        assert_eq!(parse_ratio("0:1").unwrap(), (0, 1));
        assert!(parse_ratio("1/10").is_err());
        assert!(parse_ratio("1:x").is_err());
        assert!(parse_ratio("-1:10").is_err());
        assert!(parse_ratio("0:0").unwrap_err().contains("nothing"));
        assert!(
            parse_ratio("18446744073709551615:1")
                .unwrap_err()
                .contains("2^64-1")
        );
        assert_eq!(
            parse_ratio("18446744073709551614:1").unwrap(),
            (u64::MAX - 1, 1)
        );
    }

    #[test]
    fn read_ratio_is_a_fraction() {
        assert!(check_read_ratio(0.0).is_ok() && check_read_ratio(1.0).is_ok());
        assert!(check_read_ratio(1.5).is_err());
        assert!(check_read_ratio(-0.1).is_err());
        assert!(check_read_ratio(f64::NAN).is_err());
    }

    #[test]
    fn read_ratio_weights_split_a_million() {
        let c = Mix::ReadRatio(0.8).commands();
        assert_eq!((&c[0].0[0][..], c[0].1), (&b"SET"[..], 200_000));
        assert_eq!((&c[1].0[0][..], c[1].1), (&b"GET"[..], 800_000));
        assert_eq!(Mix::ReadRatio(1.0).commands()[0].1, 0);
    }

    #[test]
    fn weights_must_match_the_commands_and_be_positive() {
        assert_eq!(parse_weights("1, 10", 2).unwrap(), [1, 10]);
        assert!(
            parse_weights("1,10,3", 2)
                .unwrap_err()
                .contains("3 weights for 2")
        );
        assert!(parse_weights("1,0", 2).unwrap_err().contains("'0'"));
        assert!(parse_weights("1,x", 2).unwrap_err().contains("'x'"));
        assert!(parse_weights("1,1.5", 2).is_err());
        assert!(parse_weights(&format!("{},{}", u64::MAX, 1), 2).is_err());
        assert_eq!(cumulative(&[1, 10, 3]), [1, 11, 14]);
    }

    #[test]
    fn commands_split_on_white_space_with_quotes() {
        assert_eq!(
            split("SET  __key__ __data__").unwrap(),
            ["SET", "__key__", "__data__"]
        );
        assert_eq!(
            split(r#"EVAL "return redis.call(\"GET\", KEYS[1])" 1 __key__"#).unwrap(),
            [
                "EVAL",
                r#"return redis.call("GET", KEYS[1])"#,
                "1",
                "__key__"
            ]
        );
        assert_eq!(split("SET k 'a b' \"\"").unwrap(), ["SET", "k", "a b", ""]);
        assert_eq!(split(r#"a"b c"d"#).unwrap(), ["ab cd"]);
        assert!(split("SET \"k").unwrap_err().contains("unbalanced"));
        assert!(split("   ").unwrap().is_empty());
        assert_eq!(split("a\u{3000}b").unwrap(), ["a", "b"]);
    }

    /// [`split_words`] on text, its words as text.
    fn split(text: &str) -> Result<Vec<String>, String> {
        let words = split_words(text.as_bytes())?;
        Ok(words
            .into_iter()
            .map(|w| String::from_utf8(w).unwrap())
            .collect())
    }

    #[test]
    fn bytes_that_are_not_utf8_stay_in_their_word() {
        assert_eq!(
            split_words(b"SET k\xff \"v\xfe w\" '\xc3'").unwrap(),
            [&b"SET"[..], b"k\xff", b"v\xfe w", b"\xc3"]
        );
        assert!(
            split_words(b"SET \"k\xff")
                .unwrap_err()
                .contains("unbalanced \" in 'SET \"k\u{fffd}'")
        );
    }
}
