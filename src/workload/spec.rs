//! [`WorkloadSpec`]: the workload flags as `config.rs` hands them over (the custom
//! command typed after the flags among them), and the bound on one request's size they
//! give before anything is built.

use super::keys::{KeyDist, KeyFormat};
use super::mix::Mix;
use super::suite::select_tests;
use super::values::ValueSizes;

/// A custom command typed after the flags (redis-benchmark's spelling).
#[derive(Debug, Clone)]
pub struct CustomCommand {
    /// Printed name: the words joined by spaces.
    pub name: String,
    /// The typed arguments (placeholders allowed).
    pub argv: Vec<Vec<u8>>,
    /// `-x`'s last argument, sent as read: it is data, never searched for placeholders.
    pub stdin_arg: Option<Vec<u8>>,
}

/// The workload flags, parsed and checked by `config.rs`.
#[derive(Debug, Clone)]
pub struct WorkloadSpec {
    /// `-t`.
    pub tests: Option<String>,
    /// The custom command typed after the flags.
    pub custom: Option<CustomCommand>,
    /// `--ratio`, `--read-ratio` or `--command`.
    pub mix: Option<Mix>,
    /// The keyspace size, when `-r` or `--keyspace` was given.
    pub keyspace: Option<u64>,
    /// The key pattern over the keyspace (one key when none was given).
    pub keys: KeyDist,
    /// How `__key__` is spelled.
    pub key_format: KeyFormat,
    /// `-d`, `--data-size-range` or `--data-size-list`.
    pub sizes: ValueSizes,
    /// `--script-load` scripts.
    pub scripts: Vec<String>,
}

impl WorkloadSpec {
    /// The most bytes one request of this workload can take, known before it is built
    /// (building makes the values, up to 512 MiB each): every argument with its framing,
    /// each value at the largest size and each `__key__` at the key format's width. An
    /// upper bound on what a built template writes (a unit test checks it against them).
    pub fn most_request_bytes(&self) -> u64 {
        let value = self.sizes.max() as u64;
        let key = (self.key_format.prefix.len() + self.key_format.width) as u64;
        // `$`, up to 20 digits of length and two CRLFs around each argument; the array's
        // header alike.
        const FRAMING: u64 = 25;
        let word = |w: &[u8]| {
            let data = occurrences(w, b"__data__").saturating_mul(value);
            let keys = occurrences(w, b"__key__").saturating_mul(key);
            (w.len() as u64 + FRAMING)
                .saturating_add(data)
                .saturating_add(keys)
        };
        let sum = |words: &mut dyn Iterator<Item = u64>| {
            words.fold(FRAMING, |total, w| total.saturating_add(w))
        };
        if let Some(mix) = &self.mix {
            mix.commands()
                .iter()
                .map(|(words, _)| sum(&mut words.iter().map(|w| word(w))))
                .max()
                .unwrap_or(0)
        } else if let Some(custom) = &self.custom {
            let typed = custom.argv.iter().map(|w| word(w));
            let stdin = custom.stdin_arg.iter().map(|a| a.len() as u64 + FRAMING);
            sum(&mut typed.chain(stdin))
        } else {
            let Ok(tests) = select_tests(self.tests.as_deref()) else {
                return 0;
            };
            tests
                .iter()
                .map(|t| {
                    sum(&mut t.argv.iter().map(|a| match *a {
                        "$DATA" => value + FRAMING,
                        other => word(other.as_bytes()),
                    }))
                })
                .max()
                .unwrap_or(0)
        }
    }
}

/// How many times `needle` occurs in `hay` (overlaps counted: an upper bound).
fn occurrences(hay: &[u8], needle: &[u8]) -> u64 {
    hay.windows(needle.len()).filter(|w| *w == needle).count() as u64
}
