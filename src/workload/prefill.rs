//! `--prefill`: the writes that give a run's reads something to read. Every key a test's
//! string read (`GET`, `GETEX`) can ask for, over the whole keyspace, is `SET` to a value
//! of the run's largest size before the first test, so a read benchmark times the
//! server's lookup and copy of a value, not its fastest path: the null reply of a key
//! that was never written.
//!
//! Pure: the commands only. Sending them, pipelined on one connection, is the app's.

use super::Workload;

/// Most keys `--prefill` writes: ten million `SET`s take a local server a few seconds
/// pipelined, and its memory a few hundred megabytes at small values. A larger keyspace
/// is refused, not left half written.
pub const MAX_PREFILL_KEYS: u64 = 10_000_000;

/// The `SET`s of a prefill: `keys` indices for each read command's key template.
#[derive(Debug, Clone)]
pub struct Prefill<'w> {
    workload: &'w Workload,
    /// (test, command) of each read whose keys are written; one per distinct key template.
    reads: Vec<(usize, usize)>,
    /// Key indices `0..keys`.
    keys: u64,
}

/// Why a workload cannot be prefilled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrefillError {
    /// No test reads a string value.
    #[error(
        "no test reads a key with GET or GETEX, so there is nothing to write first (the tests are {0})"
    )]
    NoReads(String),
    /// Too many keys.
    #[error(
        "{keys} keys to write, more than the {MAX_PREFILL_KEYS} it writes at most; use a smaller -r/--keyspace"
    )]
    TooMany {
        /// Keys the workload reads.
        keys: u64,
    },
}

impl<'w> Prefill<'w> {
    /// The prefill of `workload`: every key its `GET`/`GETEX` commands can read.
    pub fn of(workload: &'w Workload) -> Result<Self, PrefillError> {
        let mut reads: Vec<(usize, usize)> = Vec::new();
        let mut seen: Vec<Vec<u8>> = Vec::new();
        for (t, test) in workload.tests.iter().enumerate() {
            for (c, command) in test.commands.iter().enumerate() {
                if !matches!(command.server_name.as_str(), "get" | "getex") {
                    continue;
                }
                // Two reads of the same key template write the same keys: once is enough.
                // Index 0 and 1 tell templates apart (a template without a field gives
                // the same key for both, and is written once).
                let Some(probe) = command.key(1).map(|mut k| {
                    k.extend(command.key(0).unwrap_or_default());
                    k
                }) else {
                    continue;
                };
                if !seen.contains(&probe) {
                    seen.push(probe);
                    reads.push((t, c));
                }
            }
        }
        if reads.is_empty() {
            let names: Vec<&str> = workload.tests.iter().map(|t| t.name.as_str()).collect();
            return Err(PrefillError::NoReads(names.join(", ")));
        }
        let keys = workload.keyspace.unwrap_or(1);
        let total = keys.saturating_mul(reads.len() as u64);
        if total > MAX_PREFILL_KEYS {
            return Err(PrefillError::TooMany { keys: total });
        }
        Ok(Prefill {
            workload,
            reads,
            keys,
        })
    }

    /// How many `SET`s: keys times distinct read templates.
    pub fn len(&self) -> u64 {
        self.keys * self.reads.len() as u64
    }

    /// Whether there is nothing to write (never, for a prefill that was built).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`th `SET` (`i < len()`): key `i mod keys` of read `i / keys`, and the value,
    /// the run's largest size cut from its value buffer.
    pub fn command(&self, i: u64) -> Option<[Vec<u8>; 3]> {
        let (t, c) = *self.reads.get(usize::try_from(i / self.keys).ok()?)?;
        let key = self.workload.tests[t].commands[c].key(i % self.keys)?;
        let value = self.workload.value(self.workload.data_size).to_vec();
        Some([b"SET".to_vec(), key, value])
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::workload::tests::workload;

    fn keys(p: &Prefill) -> Vec<Vec<u8>> {
        (0..p.len())
            .map(|i| p.command(i).unwrap()[1].clone())
            .collect()
    }

    #[test]
    fn the_get_tests_keys_are_written_over_the_keyspace_with_the_value_size() {
        let w = workload(&["-t", "set,get", "-r", "3", "-d", "9"]);
        let p = Prefill::of(&w).unwrap();
        assert_eq!(
            keys(&p),
            [
                b"key:000000000000".to_vec(),
                b"key:000000000001".to_vec(),
                b"key:000000000002".to_vec()
            ]
        );
        let [verb, _, value] = p.command(2).unwrap();
        assert_eq!((verb.as_slice(), value.len()), (&b"SET"[..], 9));
        assert!(p.command(3).is_none());
    }

    #[test]
    fn a_mix_writes_each_read_templates_keys_once() {
        let w = workload(&[
            "--command",
            "GET u:__key__",
            "--command",
            "SET u:__key__ __data__",
            "--command",
            "GET u:__key__",
            "--keyspace",
            "2",
        ]);
        let p = Prefill::of(&w).unwrap();
        assert_eq!(keys(&p), [b"u:key:0".to_vec(), b"u:key:1".to_vec()]);
    }

    #[test]
    fn without_a_keyspace_the_one_key_is_written_once() {
        let w = workload(&["-t", "get"]);
        let p = Prefill::of(&w).unwrap();
        assert_eq!(keys(&p), [b"key:__rand_int__".to_vec()]);
    }

    #[test]
    fn a_workload_without_reads_or_with_too_many_keys_is_refused() {
        let w = workload(&["-t", "set,incr"]);
        assert!(matches!(Prefill::of(&w), Err(PrefillError::NoReads(_))));
        let too_many = (MAX_PREFILL_KEYS + 1).to_string();
        let w = workload(&["-t", "get", "-r", &too_many]);
        assert!(
            matches!(Prefill::of(&w), Err(PrefillError::TooMany { keys }) if keys == MAX_PREFILL_KEYS + 1)
        );
    }
}
