//! Reading a typed argument into [`Token`]s: its placeholders (`__rand_int__`,
//! `__key__`, `__data__`, `__sha_N__`) found and checked, the rest kept as literal
//! bytes. What the tokens become on the wire is `mod.rs`'s.

use super::super::keys::KeyFormat;

/// The placeholder replaced by a random key index when a keyspace is given.
pub const RAND_INT: &[u8] = b"__rand_int__";
/// Digits a replaced `__rand_int__` has (redis-benchmark's zero-padded width).
pub const RAND_INT_WIDTH: usize = 12;

/// One piece of an argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// Bytes sent as they are.
    Lit(Vec<u8>),
    /// A key index, zero-padded to this many digits.
    Digits(usize),
    /// A value from the value sizes and buffer.
    Data,
}

/// What the placeholders of a typed command stand for.
#[derive(Debug, Clone)]
pub struct Placeholders {
    /// A keyspace was given: `__rand_int__` is a 12-digit field (else sent as typed).
    pub randomize: bool,
    /// How `__key__` is spelled.
    pub key: KeyFormat,
    /// SHA1 (hex) of each `--script-load`, in order: `__sha_1__`, `__sha_2__`, ...
    pub shas: Vec<String>,
}

impl Placeholders {
    /// Reads one typed argument into tokens; errs naming an unknown placeholder.
    pub fn tokens(&self, arg: &[u8]) -> Result<Vec<Token>, String> {
        let mut out = Vec::new();
        let mut lit = Vec::new();
        let mut i = 0;
        while i < arg.len() {
            if let Some((word, end)) = placeholder_at(arg, i) {
                let token = match word {
                    b"rand_int" if self.randomize => vec![Token::Digits(RAND_INT_WIDTH)],
                    b"rand_int" => vec![Token::Lit(RAND_INT.to_vec())],
                    b"key" => vec![
                        Token::Lit(self.key.prefix.clone()),
                        Token::Digits(self.key.width),
                    ],
                    b"data" => vec![Token::Data],
                    _ => vec![Token::Lit(self.sha(word)?.into_bytes())],
                };
                if !lit.is_empty() {
                    out.push(Token::Lit(std::mem::take(&mut lit)));
                }
                out.extend(token);
                i = end;
            } else {
                lit.push(arg[i]);
                i += 1;
            }
        }
        if !lit.is_empty() || out.is_empty() {
            out.push(Token::Lit(lit));
        }
        // Merge neighbouring literals (a key's prefix after typed text).
        out.dedup_by(|next, prev| match (prev, next) {
            (Token::Lit(p), Token::Lit(n)) => {
                p.extend_from_slice(n);
                true
            }
            _ => false,
        });
        if out.iter().filter(|t| **t == Token::Data).count() > 1 {
            return Err(format!(
                "'{}' has more than one __data__; give each value its own argument",
                String::from_utf8_lossy(arg)
            ));
        }
        Ok(out)
    }

    fn sha(&self, word: &[u8]) -> Result<String, String> {
        let name = String::from_utf8_lossy(word);
        let n = name
            .strip_prefix("sha_")
            .and_then(|n| n.parse::<usize>().ok());
        match n {
            Some(n) if n >= 1 && n <= self.shas.len() => Ok(self.shas[n - 1].clone()),
            Some(n) => Err(format!(
                "__{name}__ needs at least {n} --script-load (got {})",
                self.shas.len()
            )),
            None => Err(format!(
                "unknown placeholder __{name}__ (known: __key__, __data__, __rand_int__, __sha_N__)"
            )),
        }
    }
}

/// The placeholder `__word__` starting at `i`, if any: the word (letters, digits and
/// single inner underscores) and the index just past it.
fn placeholder_at(arg: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if !arg[i..].starts_with(b"__") {
        return None;
    }
    let start = i + 2;
    let close = arg[start..].windows(2).position(|w| w == b"__")? + start;
    let word = &arg[start..close];
    let valid = !word.is_empty()
        && word.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_')
        && !word.starts_with(b"_")
        && !word.ends_with(b"_");
    valid.then_some((word, close + 2))
}

/// Splits `arg` on `__rand_int__` only (the default suite's arguments): a 12-digit field
/// with `randomize`, else the placeholder as typed.
pub fn rand_int_tokens(arg: &[u8], randomize: bool) -> Vec<Token> {
    let mut out = Vec::new();
    let mut rest = arg;
    while let Some(at) = rest.windows(RAND_INT.len()).position(|w| w == RAND_INT) {
        if !randomize {
            break;
        }
        if at > 0 {
            out.push(Token::Lit(rest[..at].to_vec()));
        }
        out.push(Token::Digits(RAND_INT_WIDTH));
        rest = &rest[at + RAND_INT.len()..];
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(Token::Lit(rest.to_vec()));
    }
    out
}
