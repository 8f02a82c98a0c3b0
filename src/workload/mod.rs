//! What is sent: the default test suite, custom commands and mixes, key and value
//! distributions, and the per-request writing of a command into a connection's buffer.
//!
//! A command is encoded once into a [`Template`]; each request copies the template,
//! patches its key fields in place and writes values as slices of one precomputed
//! buffer, so the hot path allocates nothing. Every per-request random choice (which
//! command of a mix, which key, which value size) comes from the generator thread's
//! [`Sampler`]. Validation of the flags is `config.rs`'s (it builds a
//! [`WorkloadSpec`]); the connection that carries the bytes is `net`'s business.
//!
//! Here [`Workload::build`] turns the spec (`spec.rs`) into the run's tests; a [`Test`]
//! and the [`Sampler`] it draws from (`test_case.rs`) write each request.

mod error;
mod keys;
mod mix;
mod prefill;
pub mod replay;
mod sha1;
mod spec;
mod suite;
mod template;
mod test_case;
pub mod trace;
mod values;

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;

pub use error::WorkloadError;
pub use keys::{
    DEFAULT_KEY_PREFIX, KeyDist, KeyDistError, KeyFormat, KeyPattern, MAX_KEYSPACE, SeqCursor,
    Shape, Walk, sequential_block,
};
pub use mix::{Mix, check_read_ratio, parse_ratio, parse_weights, split_words};
pub use prefill::{MAX_PREFILL_KEYS, Prefill, PrefillError};
pub use sha1::sha1_hex;
pub use spec::{CustomCommand, WorkloadSpec};
pub use suite::{DEFAULT_TESTS, TestSpec, select_tests};
pub use template::{Fill, Placeholders, RAND_INT_WIDTH, Template, Token};
pub use test_case::{Sampler, Test};
pub use values::{MAX_VALUE_SIZE, ValueSizes, value_bytes};

/// The tests of a run, in order, with what every request needs to be written.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Tests in the order they run.
    pub tests: Vec<Test>,
    /// Keyspace for `__rand_int__` and `__key__` (`-r` or `--keyspace`); `None` leaves
    /// `__rand_int__` as typed and makes every `__key__` index 0.
    pub keyspace: Option<u64>,
    /// Value size in bytes (`-d`); with a size range or list, the largest size.
    pub data_size: usize,
    /// The key pattern.
    pub keys: KeyDist,
    /// How `__key__` is spelled.
    pub key_format: KeyFormat,
    /// Value sizes.
    pub sizes: ValueSizes,
    /// Commands to send once, on one connection, before the first test (`SCRIPT LOAD`).
    pub setup: Vec<Vec<Vec<u8>>>,
    /// Every value is a slice of this.
    values: Bytes,
}

impl Workload {
    /// The first `len` bytes of the value buffer (at most the run's largest value size):
    /// what a prefill writes.
    pub fn value(&self, len: usize) -> &[u8] {
        &self.values[..len.min(self.values.len())]
    }

    /// The most bytes one request of any test can take, as built.
    #[cfg(test)]
    pub(crate) fn most_request_bytes(&self) -> u64 {
        let largest_value = self.sizes.max();
        self.tests
            .iter()
            .flat_map(|t| &t.commands)
            .map(|c| c.most_bytes(largest_value))
            .max()
            .unwrap_or(0)
    }

    /// Builds the tests that `spec` describes; `seed` makes the value bytes.
    pub fn build(spec: WorkloadSpec, seed: u64) -> Result<Self, WorkloadError> {
        let randomize = spec.keyspace.is_some();
        let shas: Vec<String> = spec
            .scripts
            .iter()
            .map(|s| sha1_hex(s.as_bytes()))
            .collect();
        let placeholders = Placeholders {
            randomize,
            key: spec.key_format.clone(),
            shas,
        };
        // Every value is a slice of this buffer; the default tests' fixed value is its start.
        let values = values::value_buffer(spec.sizes.max(), seed);
        let tests = if let Some(mix) = &spec.mix {
            vec![build_mix(mix, &placeholders)?]
        } else if let Some(CustomCommand {
            name,
            argv,
            stdin_arg,
        }) = &spec.custom
        {
            if argv.is_empty() && stdin_arg.is_none() {
                return Err(WorkloadError::EmptyCommand);
            }
            let mut tokens = argv
                .iter()
                .map(|arg| placeholders.tokens(arg))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|why| WorkloadError::Invalid {
                    flag: "COMMAND",
                    why,
                })?;
            tokens.extend(stdin_arg.iter().map(|arg| vec![Token::Lit(arg.clone())]));
            vec![Test::single(name.clone(), Template::build(&tokens))]
        } else {
            let selected = select_tests(spec.tests.as_deref())?;
            let data = spec.sizes.is_fixed().then(|| &values[..spec.sizes.max()]);
            selected.iter().map(|t| t.build(data, randomize)).collect()
        };
        let setup = spec
            .scripts
            .iter()
            .map(|s| vec![b"SCRIPT".to_vec(), b"LOAD".to_vec(), s.as_bytes().to_vec()])
            .collect();
        Ok(Workload {
            tests,
            keyspace: spec.keyspace,
            data_size: spec.sizes.max(),
            keys: spec.keys,
            key_format: spec.key_format,
            values,
            sizes: spec.sizes,
            setup,
        })
    }
}

impl Sampler {
    /// A sampler for `workload`, seeded with `seed` (made once per generator thread and test).
    pub fn new(workload: &Workload, seed: u64) -> Self {
        Sampler::of(
            workload.keys,
            workload.sizes.clone(),
            workload.values.clone(),
            seed,
        )
    }
}

/// One test of weighted commands; commands of zero weight are left out, and repeated
/// names get `_2`, `_3`, ... so each command has its own line in every report.
fn build_mix(mix: &Mix, placeholders: &Placeholders) -> Result<Test, WorkloadError> {
    let flag = mix.flag();
    let mut templates: Vec<Template> = Vec::new();
    let mut weights = Vec::new();
    for (words, weight) in mix.commands() {
        if words.is_empty() {
            return Err(WorkloadError::Invalid {
                flag,
                why: "a command is empty".into(),
            });
        }
        if weight == 0 {
            continue;
        }
        let tokens = words
            .iter()
            .map(|w| placeholders.tokens(w))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|why| WorkloadError::Invalid { flag, why })?;
        let mut template = Template::build(&tokens);
        let base = template.name.clone();
        let mut n = 1;
        while templates.iter().any(|t| t.name == template.name) {
            n += 1;
            template.name = format!("{base}_{n}");
        }
        templates.push(template);
        weights.push(weight);
    }
    Ok(Test::weighted(mix.name(), templates, &weights))
}

/// A seed from the wall clock, for runs without `--seed` (printed so a run can be repeated).
pub fn fresh_seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x5eed)
}

/// Goodness-of-fit helpers for the distribution tests of this module's files.
#[cfg(test)]
pub(crate) mod stats;

#[cfg(test)]
mod tests;
