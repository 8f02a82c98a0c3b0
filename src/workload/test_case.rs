//! [`Test`]: one named test's commands, how each request picks one, and the writing of
//! a request into a connection's buffer (a test of one fixed request keeps copies of it
//! to write whole batches from); and [`Sampler`], the generator thread's source of every
//! per-request random choice, which those writes draw from.

use std::sync::Arc;

use bytes::Bytes;

use super::keys::{KeyDist, SeqCursor, Walk};
use super::mix::cumulative;
use super::template::{Fill, Template};
use super::values::{self, ValueSizes};

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
    pub(super) repeated: Option<Repeated>,
}

/// Copies of one fixed request, back to back.
#[derive(Debug, Clone)]
pub(super) struct Repeated {
    pub(super) bytes: Arc<[u8]>,
    /// Bytes of one copy.
    pub(super) one: usize,
}

impl Repeated {
    /// Most copies kept: a batch of up to 64 (`-P 16`, `-P 64`) is one slice of them.
    const MOST: usize = 64;
    /// Most bytes kept, whatever the request's size: large values get fewer copies (a
    /// 1 MB `SET` one), not 64 MB.
    pub(super) const MOST_BYTES: usize = 256 * 1024;

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

    pub(super) fn copies(&self) -> usize {
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
            pick: Pick::Weighted(cumulative(weights)),
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
    pub(super) rng: rand_pcg::Pcg64Mcg,
    keys: KeyDist,
    walk: Walk,
    sizes: ValueSizes,
    values: Bytes,
    turn: usize,
}

impl Sampler {
    /// A sampler of keys from `keys`, value sizes from `sizes` and value bytes from
    /// `values`, seeded with `seed` ([`Sampler::new`] gives it a built workload's).
    pub(super) fn of(keys: KeyDist, sizes: ValueSizes, values: Bytes, seed: u64) -> Self {
        use rand::SeedableRng;
        Sampler {
            rng: rand_pcg::Pcg64Mcg::seed_from_u64(seed),
            keys,
            walk: Walk::default(),
            sizes,
            values,
            turn: 0,
        }
    }

    /// A key index from the key pattern (`cursor` is the test's, for `sequential`).
    #[inline]
    pub fn key_index(&mut self, cursor: &SeqCursor) -> u64 {
        self.keys.draw(&mut self.rng, &mut self.walk, cursor)
    }
}
