//! What is sent: the default test suite, custom commands and mixes, key and value
//! distributions, and the per-request writing of a command into a connection's buffer.
//!
//! A command is encoded once into a [`Template`]; each request copies the template,
//! patches its key fields in place and writes values as slices of one precomputed
//! buffer, so the hot path allocates nothing. Every per-request random choice (which
//! command of a mix, which key, which value size) comes from the generator thread's
//! [`Sampler`]. Validation of the flags is `config.rs`'s (it builds a
//! [`WorkloadSpec`]); the connection that carries the bytes is `net`'s business.

mod keys;
mod mix;
mod sha1;
mod suite;
mod template;
mod values;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;

pub use keys::{
    DEFAULT_KEY_PREFIX, KeyDist, KeyDistError, KeyFormat, KeyPattern, MAX_KEYSPACE, SeqCursor,
    Shape, Walk, sequential_block,
};
pub use mix::{Mix, check_read_ratio, parse_ratio, parse_weights, split_words};
pub use sha1::sha1_hex;
pub use suite::{DEFAULT_TESTS, TestSpec, select_tests};
pub use template::{Fill, Placeholders, RAND_INT_WIDTH, Template, Token};
pub use values::{MAX_VALUE_SIZE, ValueSizes};

/// Errors in the description of what to send.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// `-t` named no known test.
    #[error(
        "invalid value for -t: no known test in '{0}' (tests: ping, set, get, incr, lpush, rpush, lpop, rpop, sadd, hset, spop, zadd, zpopmin, lrange, lrange_100, lrange_300, lrange_500, lrange_600, mset, xadd)"
    )]
    NoTests(String),
    /// A custom command was empty.
    #[error("the custom command is empty")]
    EmptyCommand,
    /// A command of a mix or a custom command is wrong (an unknown placeholder, ...).
    #[error("invalid value for {flag}: {why}")]
    Invalid {
        /// The flag (or `COMMAND` for the trailing custom command).
        flag: &'static str,
        /// What is wrong and what is accepted.
        why: String,
    },
}

/// How a test picks the command of each request.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pick {
    /// In turn (tests whose commands have equal shares by construction).
    Turn,
    /// By weight: running sums of the weights, the last being the total.
    Weighted(Vec<u64>),
}

/// One named test: the commands it sends and how each request picks one.
#[derive(Debug, Clone)]
pub struct Test {
    /// Name as printed (`SET`, `LRANGE_100 (first 100 elements)`, `MIX (SET:GET 1:10)`).
    pub name: String,
    /// Commands of this test; most tests have one. Mixes give each a distinct name.
    pub commands: Vec<Template>,
    pick: Pick,
    /// The sequential key walk's position, shared by the test's threads (their clones).
    cursor: SeqCursor,
    /// A test that sends one fixed request: copies of it back to back, for
    /// [`Test::fixed_batch`] and [`Test::write_fixed`].
    repeated: Option<Repeated>,
}

/// Copies of one fixed request, back to back.
#[derive(Debug, Clone)]
struct Repeated {
    bytes: Arc<[u8]>,
    /// Bytes of one copy.
    one: usize,
}

impl Repeated {
    /// Most copies kept: a batch of up to 64 (`-P 16`, `-P 64`) is one slice of them.
    const MOST: usize = 64;
    /// Most bytes kept, whatever the request's size: large values get fewer copies (a
    /// 1 MB `SET` one), not 64 MB.
    const MOST_BYTES: usize = 256 * 1024;

    fn of(one: &[u8]) -> Option<Self> {
        if one.is_empty() {
            return None;
        }
        let copies = (Self::MOST_BYTES / one.len()).clamp(1, Self::MOST);
        Some(Repeated {
            bytes: one.repeat(copies).into(),
            one: one.len(),
        })
    }

    fn copies(&self) -> usize {
        self.bytes.len() / self.one
    }
}

impl Test {
    /// A test of one command.
    pub fn single(name: String, template: Template) -> Self {
        let repeated = template.fixed_bytes().and_then(Repeated::of);
        Test {
            name,
            commands: vec![template],
            pick: Pick::Turn,
            cursor: SeqCursor::default(),
            repeated,
        }
    }

    /// A test whose requests pick `commands[i]` with probability `weights[i] / sum`.
    pub fn weighted(name: String, commands: Vec<Template>, weights: &[u64]) -> Self {
        Test {
            name,
            commands,
            pick: Pick::Weighted(mix::cumulative(weights)),
            cursor: SeqCursor::default(),
            repeated: None,
        }
    }

    /// The command the next request sends (an index into `commands`).
    #[inline]
    pub fn pick(&self, sampler: &mut Sampler) -> usize {
        if self.commands.len() <= 1 {
            return 0;
        }
        match &self.pick {
            Pick::Weighted(cumulative) => values::weighted_index(cumulative, &mut sampler.rng),
            Pick::Turn => {
                let i = sampler.turn % self.commands.len();
                sampler.turn = sampler.turn.wrapping_add(1);
                i
            }
        }
    }

    /// The bytes of `n` requests of a test that sends one fixed request (one command,
    /// nothing drawn per request: `GET key:__rand_int__` without `-r`), as a slice of the
    /// test's prepared copies: a closed-loop batch is written from them as they are,
    /// without a copy into the connection's buffer (a copy into cache lines gone cold since
    /// the connection's last batch; see bench/). `None` for any other test, and for more
    /// than the copies held ([`write_fixed`](Self::write_fixed) then).
    #[inline]
    pub fn fixed_batch(&self, n: usize) -> Option<&[u8]> {
        let r = self.repeated.as_ref()?;
        r.bytes.get(..n.checked_mul(r.one)?)
    }

    /// Appends `n` requests of a test that sends one fixed request (one command, nothing
    /// drawn per request: `GET key:__rand_int__` without `-r`) and returns true; writes
    /// nothing and returns false for any other test. The bytes are what `n` rounds of
    /// [`pick`](Self::pick) and [`write`](Self::write) write, in one copy per slice of the
    /// prepared copies instead of one per request (a closed-loop batch's encoding, on the
    /// hot path, for batches larger than [`fixed_batch`](Self::fixed_batch) gives).
    #[inline]
    pub fn write_fixed(&self, n: usize, buf: &mut bytes::BytesMut) -> bool {
        let Some(r) = &self.repeated else {
            return false;
        };
        let mut left = n;
        while left > 0 {
            let k = left.min(r.copies());
            buf.extend_from_slice(&r.bytes[..k * r.one]);
            left -= k;
        }
        true
    }

    /// Appends one request of command `command` to `buf`, drawing its keys and values from
    /// `sampler`.
    #[inline]
    pub fn write(&self, command: usize, buf: &mut bytes::BytesMut, sampler: &mut Sampler) {
        self.commands[command].write(
            buf,
            &mut Draw {
                sampler,
                cursor: &self.cursor,
                key: None,
            },
        );
    }

    /// The key index a routed request uses for every key field (cluster mode draws it
    /// before the request is written, to know where to send it).
    #[inline]
    pub fn draw_key(&self, sampler: &mut Sampler) -> u64 {
        sampler.key_index(&self.cursor)
    }

    /// The cluster hash slot of command `command` with key index `key`; `None` without a key.
    #[inline]
    pub fn slot(&self, command: usize, key: u64) -> Option<u16> {
        self.commands[command].slot(key)
    }

    /// Appends one request of `command` whose every key field is `key` (a routed request:
    /// one slot, so a multi-key command stays on one cluster node); values are drawn.
    #[inline]
    pub fn write_keyed(
        &self,
        command: usize,
        buf: &mut bytes::BytesMut,
        sampler: &mut Sampler,
        key: u64,
    ) {
        self.commands[command].write(
            buf,
            &mut Draw {
                sampler,
                cursor: &self.cursor,
                key: Some(key),
            },
        );
    }

    /// Each command's share of requests (1/len each when they go in turn).
    pub fn shares(&self) -> Vec<f64> {
        match &self.pick {
            Pick::Turn => vec![1.0 / self.commands.len() as f64; self.commands.len()],
            Pick::Weighted(c) => {
                let total = c.last().copied().unwrap_or(1) as f64;
                let mut previous = 0;
                c.iter()
                    .map(|&x| {
                        let share = (x - previous) as f64 / total;
                        previous = x;
                        share
                    })
                    .collect()
            }
        }
    }
}

/// The sampler and the test's cursor, as a template's source of fields.
struct Draw<'a> {
    sampler: &'a mut Sampler,
    cursor: &'a SeqCursor,
    /// A routed request's key: every key field holds it instead of a fresh draw.
    key: Option<u64>,
}

impl Fill for Draw<'_> {
    #[inline]
    fn index(&mut self) -> u64 {
        if let Some(key) = self.key {
            return key;
        }
        let s = &mut *self.sampler;
        s.keys.draw(&mut s.rng, &mut s.walk, self.cursor)
    }

    #[inline]
    fn value_len(&mut self) -> usize {
        let s = &mut *self.sampler;
        s.sizes.draw(&mut s.rng)
    }

    #[inline]
    fn value(&mut self, len: usize) -> &[u8] {
        let s = &mut *self.sampler;
        values::value_slice(&s.values, len, &mut s.rng)
    }
}

/// Per-thread source of every per-request random choice (seeded, so runs repeat).
#[derive(Debug, Clone)]
pub struct Sampler {
    rng: rand_pcg::Pcg64Mcg,
    keys: KeyDist,
    walk: Walk,
    sizes: ValueSizes,
    values: Bytes,
    turn: usize,
}

impl Sampler {
    /// A sampler for `workload`, seeded with `seed` (made once per generator thread and test).
    pub fn new(workload: &Workload, seed: u64) -> Self {
        use rand::SeedableRng;
        Sampler {
            rng: rand_pcg::Pcg64Mcg::seed_from_u64(seed),
            keys: workload.keys,
            walk: Walk::default(),
            sizes: workload.sizes.clone(),
            values: workload.values.clone(),
            turn: 0,
        }
    }

    /// A key index from the key pattern (`cursor` is the test's, for `sequential`).
    #[inline]
    pub fn key_index(&mut self, cursor: &SeqCursor) -> u64 {
        self.keys.draw(&mut self.rng, &mut self.walk, cursor)
    }
}

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
                .map(|(words, _)| sum(&mut words.iter().map(|w| word(w.as_bytes()))))
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
            .map(|w| placeholders.tokens(w.as_bytes()))
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

/// The value written by SET/LPUSH/...: `size` printable bytes from a seeded generator.
/// A shorter value is a prefix of a longer one of the same seed.
pub fn value_bytes(size: usize, seed: u64) -> Vec<u8> {
    use rand::{RngCore, SeedableRng};
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed ^ 0xda7a);
    let mut out = Vec::with_capacity(size);
    // Eight characters per draw, each byte scaled onto the alphabet (multiply-shift): a
    // value of up to 512 MiB takes one draw per eight bytes, not one per byte. Some
    // characters come up 5/4 as often as others, which does not matter to filler.
    while out.len() < size {
        let word = rng.next_u64().to_le_bytes();
        let take = (size - out.len()).min(word.len());
        out.extend(
            word[..take]
                .iter()
                .map(|&b| ALPHABET[(usize::from(b) * ALPHABET.len()) >> 8]),
        );
    }
    out
}

/// Goodness-of-fit helpers for the distribution tests of this module's files.
#[cfg(test)]
pub(crate) mod stats;

#[cfg(test)]
mod tests;
