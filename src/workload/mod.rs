//! What is sent: the default test suite, custom commands, and the per-request writing
//! of a command into a connection's buffer with fresh random fields.
//!
//! A command is encoded once into a [`Template`]; each request copies the template and
//! overwrites its 12-digit `__rand_int__` fields in place, so the hot path allocates
//! nothing. The connection that carries the bytes is `net`'s business.

mod suite;
mod template;

use std::time::{SystemTime, UNIX_EPOCH};

use crate::cli::RunArgs;
pub use suite::{DEFAULT_TESTS, select_tests};
pub use template::{RAND_INT_WIDTH, Template};

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
}

/// One named test: the commands it sends and their weights.
#[derive(Debug, Clone)]
pub struct Test {
    /// Name as printed (`SET`, `LRANGE_100 (first 100 elements)`).
    pub name: String,
    /// Commands of this test; most tests have one.
    pub commands: Vec<Template>,
}

impl Test {
    /// The command the next request sends (an index into `commands`).
    #[inline]
    pub fn pick(&self, sampler: &mut Sampler) -> usize {
        if self.commands.len() <= 1 {
            return 0;
        }
        // Tests with several commands take them in turn.
        let i = sampler.turn % self.commands.len();
        sampler.turn = sampler.turn.wrapping_add(1);
        i
    }

    /// Appends one request of command `command` to `buf`, drawing its random fields from `sampler`.
    #[inline]
    pub fn write(&self, command: usize, buf: &mut bytes::BytesMut, sampler: &mut Sampler) {
        self.commands[command].write(buf, || sampler.key_index());
    }
}

/// Per-thread source of every per-request random choice (seeded, so runs repeat).
#[derive(Debug, Clone)]
pub struct Sampler {
    rng: rand_pcg::Pcg64Mcg,
    keyspace: Option<u64>,
    turn: usize,
}

impl Sampler {
    /// A sampler for `workload`, seeded with `seed`.
    pub fn new(workload: &Workload, seed: u64) -> Self {
        use rand::SeedableRng;
        Sampler { rng: rand_pcg::Pcg64Mcg::seed_from_u64(seed), keyspace: workload.keyspace, turn: 0 }
    }

    /// A random key index below the keyspace (`-r`).
    #[inline]
    pub fn key_index(&mut self) -> u64 {
        use rand::Rng;
        match self.keyspace {
            Some(n) => self.rng.random_range(0..n),
            None => 0,
        }
    }
}

/// The tests of a run, in order, with what every request needs to be written.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Tests in the order they run.
    pub tests: Vec<Test>,
    /// Keyspace for `__rand_int__` (`-r`); `None` leaves the placeholder as typed.
    pub keyspace: Option<u64>,
    /// Value size in bytes (`-d`).
    pub data_size: usize,
}

impl Workload {
    /// Builds the workload from the typed arguments.
    pub fn from_args(args: &RunArgs, stdin_arg: Option<Vec<u8>>, seed: u64) -> Result<Self, WorkloadError> {
        let data = value_bytes(args.data_size, seed);
        let tests = if args.command.is_empty() {
            let selected = select_tests(args.tests.as_deref())?;
            selected.iter().map(|spec| spec.build(&data, args.keyspace.is_some())).collect()
        } else {
            let mut argv: Vec<Vec<u8>> = args.command.iter().map(|a| a.as_bytes().to_vec()).collect();
            if let Some(last) = stdin_arg {
                argv.push(last);
            }
            if argv.is_empty() {
                return Err(WorkloadError::EmptyCommand);
            }
            let name = args.command.join(" ");
            let refs: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
            vec![Test { name, commands: vec![Template::command(&refs, args.keyspace.is_some())] }]
        };
        Ok(Workload { tests, keyspace: args.keyspace, data_size: args.data_size })
    }
}

/// A seed from the wall clock, for runs without `--seed` (printed so a run can be repeated).
pub fn fresh_seed() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0x5eed)
}

/// The value written by SET/LPUSH/...: `size` printable bytes from a seeded generator.
pub fn value_bytes(size: usize, seed: u64) -> Vec<u8> {
    use rand::{Rng, SeedableRng};
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed ^ 0xda7a);
    (0..size).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())]).collect()
}
