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
            let data = spec
                .sizes
                .is_fixed()
                .then(|| value_bytes(spec.sizes.max(), seed));
            selected
                .iter()
                .map(|t| t.build(data.as_deref(), randomize))
                .collect()
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
            values: values::value_buffer(spec.sizes.max(), seed),
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
pub fn value_bytes(size: usize, seed: u64) -> Vec<u8> {
    use rand::{Rng, SeedableRng};
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed ^ 0xda7a);
    (0..size)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())])
        .collect()
}

/// Goodness-of-fit helpers for the distribution tests of this module's files.
#[cfg(test)]
pub(crate) mod stats {
    /// Pearson's chi-square statistic of `observed` counts against `probabilities`, with
    /// neighbouring bins merged until each expects at least 5, and its degrees of freedom.
    pub fn chi_square(observed: &[u64], probabilities: &[f64]) -> (f64, usize) {
        let total: u64 = observed.iter().sum();
        let (mut stat, mut bins) = (0.0, 0usize);
        let (mut o_acc, mut e_acc) = (0.0, 0.0);
        for (&o, &p) in observed.iter().zip(probabilities) {
            o_acc += o as f64;
            e_acc += p * total as f64;
            if e_acc >= 5.0 {
                stat += (o_acc - e_acc).powi(2) / e_acc;
                bins += 1;
                (o_acc, e_acc) = (0.0, 0.0);
            }
        }
        if e_acc > 0.0 {
            stat += (o_acc - e_acc).powi(2) / e_acc;
            bins += 1;
        }
        (stat, bins.saturating_sub(1).max(1))
    }

    /// The chi-square value exceeded with probability 0.001 (Wilson-Hilferty approximation).
    pub fn critical_0_001(df: usize) -> f64 {
        let k = df as f64;
        let z = 3.090_232;
        k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
    }

    /// Panics unless `observed` fits `probabilities` at the 0.1% level.
    pub fn assert_fits(observed: &[u64], probabilities: &[f64], what: &str) {
        let (stat, df) = chi_square(observed, probabilities);
        let critical = critical_0_001(df);
        assert!(
            stat < critical,
            "{what}: chi-square {stat:.1} with {df} degrees of freedom exceeds {critical:.1}"
        );
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::stats::assert_fits;
    use super::*;
    use crate::cli::Args;
    use crate::config::RunConfig;
    use crate::resp::{Limits, Reply, parse};
    use bytes::BytesMut;
    use clap::Parser;

    fn workload(argv: &[&str]) -> Workload {
        let mut full = vec!["tailrate", "--seed", "1"];
        full.extend_from_slice(argv);
        RunConfig::from_args(&Args::try_parse_from(full).unwrap().run, None)
            .unwrap()
            .plan
            .workload
    }

    /// Writes `n` requests of `test` and returns each as its arguments.
    fn requests(w: &Workload, n: usize, seed: u64) -> Vec<(usize, Vec<Vec<u8>>)> {
        let test = &w.tests[0];
        let mut sampler = Sampler::new(w, seed);
        let limits = Limits::default();
        (0..n)
            .map(|_| {
                let command = test.pick(&mut sampler);
                let mut buf = BytesMut::new();
                test.write(command, &mut buf, &mut sampler);
                let (reply, used) = parse(&buf, &limits).unwrap().unwrap();
                assert_eq!(used, buf.len(), "one whole RESP frame per request");
                let Reply::Array(items) = reply else {
                    panic!("not an array")
                };
                (
                    command,
                    items
                        .iter()
                        .map(|i| i.as_bytes().unwrap().to_vec())
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn a_fixed_batch_is_what_writing_each_request_writes() {
        for (argv, fixed) in [
            (&["-t", "get"][..], true),
            (&["-t", "ping_mbulk"][..], true),
            (&["-t", "ping_inline"][..], true),
            (&["-t", "get", "-r", "1000"][..], false),
            (&["-t", "set"][..], true),
            (&["-t", "set", "--data-size-range", "1-100"][..], false),
            (&["-t", "set", "-d", "100000"][..], true),
            (
                &[
                    "--command",
                    "GET a",
                    "--command",
                    "GET b",
                    "--command-weights",
                    "1,1",
                ][..],
                false,
            ),
        ] {
            let w = workload(argv);
            let test = &w.tests[0];
            if let Some(r) = &test.repeated {
                assert!(
                    r.bytes.len() <= Repeated::MOST_BYTES.max(r.one),
                    "{argv:?}: {} bytes of copies",
                    r.bytes.len()
                );
            }
            for n in [0, 1, 16, 64, 65, 200] {
                let mut batch = BytesMut::from(&b"before"[..]);
                assert_eq!(test.write_fixed(n, &mut batch), fixed, "{argv:?}");
                let prepared = test.fixed_batch(n);
                let copies = test.repeated.as_ref().map_or(0, Repeated::copies);
                assert_eq!(
                    prepared.is_some(),
                    fixed && n <= copies,
                    "{argv:?}, {n} requests"
                );
                if !fixed {
                    assert_eq!(&batch[..], b"before", "{argv:?}: nothing written");
                    continue;
                }
                if let Some(prepared) = prepared {
                    assert_eq!(
                        prepared,
                        &batch[b"before".len()..],
                        "{argv:?}, {n} requests"
                    );
                }
                let mut sampler = Sampler::new(&w, 7);
                let mut each = BytesMut::from(&b"before"[..]);
                for _ in 0..n {
                    let command = test.pick(&mut sampler);
                    test.write(command, &mut each, &mut sampler);
                }
                assert_eq!(batch, each, "{argv:?}, {n} requests");
            }
        }
    }

    #[test]
    fn weighted_picks_follow_their_weights() {
        let w = workload(&[
            "--command",
            "GET a",
            "--command",
            "GET b",
            "--command",
            "SET c d",
            "--command-weights",
            "1,10,3",
        ]);
        let test = &w.tests[0];
        let names: Vec<&str> = test.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["get", "get_2", "set"],
            "repeated names are told apart"
        );
        let mut sampler = Sampler::new(&w, 9);
        let mut counts = [0u64; 3];
        for _ in 0..140_000 {
            counts[test.pick(&mut sampler)] += 1;
        }
        assert_fits(
            &counts,
            &[1.0 / 14.0, 10.0 / 14.0, 3.0 / 14.0],
            "weighted pick",
        );
        assert_eq!(test.shares(), [1.0 / 14.0, 10.0 / 14.0, 3.0 / 14.0]);
    }

    #[test]
    fn a_ratio_mix_is_one_test_of_set_and_get() {
        let w = workload(&["--ratio", "1:10", "--keyspace", "100"]);
        assert_eq!(w.tests.len(), 1);
        assert_eq!(w.tests[0].name, "MIX (SET:GET 1:10)");
        let reqs = requests(&w, 2000, 3);
        for (command, args) in &reqs {
            let name = &w.tests[0].commands[*command].name;
            match name.as_str() {
                "set" => assert_eq!(
                    (args.len(), args[0].as_slice(), args[2].len()),
                    (3, &b"SET"[..], 3)
                ),
                "get" => assert_eq!((args.len(), args[0].as_slice()), (2, &b"GET"[..])),
                other => panic!("unexpected command {other}"),
            }
            assert!(
                args[1].starts_with(b"key:") && args[1].len() == 6,
                "{:?}",
                String::from_utf8_lossy(&args[1])
            );
        }
        let sets = reqs.iter().filter(|(c, _)| *c == 0).count();
        assert!(
            (120..250).contains(&sets),
            "{sets} SETs in 2000 requests at 1:10"
        );
    }

    #[test]
    fn read_ratio_one_sends_only_gets() {
        let w = workload(&["--read-ratio", "1"]);
        let names: Vec<&str> = w.tests[0]
            .commands
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["get"]);
    }

    #[test]
    fn keys_have_the_key_size_and_values_only_the_listed_sizes() {
        let w = workload(&[
            "--ratio",
            "1:1",
            "--keyspace",
            "1000",
            "--key-size",
            "32",
            "--data-size-list",
            "1:1,1000:1,70000:1",
        ]);
        let mut sizes = std::collections::BTreeSet::new();
        for (_, args) in requests(&w, 3000, 4) {
            assert_eq!(args[1].len(), 32);
            assert!(args[1].starts_with(b"key:0000000000000000000000000"));
            if let Some(value) = args.get(2) {
                sizes.insert(value.len());
            }
        }
        assert_eq!(sizes.into_iter().collect::<Vec<_>>(), [1, 1000, 70_000]);
    }

    #[test]
    fn the_default_tests_draw_their_keys_from_the_key_pattern() {
        let w = workload(&["-t", "get", "--keyspace", "1000", "--key-pattern", "zipf"]);
        let reqs = requests(&w, 20_000, 5);
        let hottest = reqs
            .iter()
            .filter(|(_, a)| a[1] == b"key:000000000000")
            .count();
        // Zipf s=1 over 1000 keys: the hottest key has 1/H(1000) = 13.4% of requests.
        assert!(
            (2400..3000).contains(&hottest),
            "{hottest} of 20000 on key 0"
        );
    }

    #[test]
    fn the_default_tests_vary_value_sizes_with_a_size_range() {
        let w = workload(&["-t", "set", "--data-size-range", "1-5", "-r", "10"]);
        let sizes: std::collections::BTreeSet<usize> = requests(&w, 500, 6)
            .iter()
            .map(|(_, a)| a[2].len())
            .collect();
        assert_eq!(sizes.into_iter().collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn custom_commands_take_placeholders_and_eval_scripts() {
        let w = workload(&[
            "--keyspace",
            "10",
            "--command",
            r#"EVAL "return redis.call('GET', KEYS[1])" 1 __key__"#,
        ]);
        let (_, args) = &requests(&w, 1, 7)[0];
        assert_eq!(args[1], b"return redis.call('GET', KEYS[1])");
        assert_eq!(w.tests[0].commands[0].name, "eval");
        let w = workload(&[
            "--script-load",
            "return 1",
            "--command",
            "EVALSHA __sha_1__ 0",
        ]);
        assert_eq!(
            requests(&w, 1, 7)[0].1[1],
            b"e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        );
        assert_eq!(
            w.setup,
            [vec![
                b"SCRIPT".to_vec(),
                b"LOAD".to_vec(),
                b"return 1".to_vec()
            ]]
        );
    }

    #[test]
    fn the_stdin_argument_is_sent_as_read() {
        let args =
            Args::try_parse_from(["tailrate", "-x", "-r", "10", "SET", "k:__rand_int__"]).unwrap();
        let w = RunConfig::from_args(&args.run, Some(b"__nosuch__ and __rand_int__".to_vec()))
            .unwrap()
            .plan
            .workload;
        let (_, argv) = &requests(&w, 1, 1)[0];
        assert_eq!(argv[1].len(), 14, "typed arguments take placeholders");
        assert_eq!(
            argv[2], b"__nosuch__ and __rand_int__",
            "the stdin argument is data"
        );
    }

    #[test]
    fn sequential_keys_are_shared_by_a_tests_threads() {
        let w = workload(&[
            "--command",
            "GET __key__",
            "--keyspace",
            "50",
            "--key-pattern",
            "sequential",
        ]);
        let test = w.tests[0].clone();
        let (mut a, mut b) = (Sampler::new(&w, 1), Sampler::new(&w, 2));
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..50 {
            let (sampler, t) = if i % 3 == 0 {
                (&mut a, &test)
            } else {
                (&mut b, &w.tests[0])
            };
            let mut buf = BytesMut::new();
            t.write(0, &mut buf, sampler);
            assert!(
                seen.insert(buf.to_vec()),
                "a key sent twice within one pass"
            );
        }
    }

    #[test]
    fn one_command_tests_pick_without_drawing() {
        let w = workload(&["-t", "get", "-r", "10"]);
        let mut sampler = Sampler::new(&w, 1);
        let before = sampler.clone();
        assert_eq!(w.tests[0].pick(&mut sampler), 0);
        assert_eq!(
            format!("{:?}", sampler.rng),
            format!("{:?}", before.rng),
            "no random draw for a one-command test"
        );
    }
}
