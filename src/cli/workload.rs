//! The workload's flags: what is sent (the tests or a custom command, keys, values,
//! mixes, scripts) and `--prefill`. A group of its own as every subcommand that sends
//! takes it whole.

use std::ffi::OsString;

use crate::units::{bytes_in, count_in, parse_count};
use crate::workload::{KeyPattern, MAX_VALUE_SIZE};

/// What is sent: the tests or a custom command, keys, values and mixes.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Workload")]
pub struct WorkloadArgs {
    /// Only run this comma-separated list of tests [default: redis-benchmark's default
    /// tests].
    #[arg(short = 't', value_name = "TESTS", value_parser = super::test_names::TestNames, hide_possible_values = true)]
    pub tests: Option<String>,
    /// Random keys in a keyspace of this size: `__rand_int__` becomes a 12-digit number below
    /// it [default: none, one key] [range: 1 to 1000000000000].
    #[arg(short = 'r', value_parser = parse_count, value_name = "KEYSPACELEN", allow_negative_numbers = true)]
    pub keyspace: Option<u64>,
    /// Data size of SET/GET values in bytes, or with a unit (4KB, 1MiB) [range: 0 to
    /// 536870912].
    #[arg(short = 'd', default_value_t = 3, value_name = "SIZE", value_parser = bytes_in::<usize>(0, MAX_VALUE_SIZE as u64, "512 MiB, Redis's default proto-max-bulk-len: a server refuses a larger value"), conflicts_with_all = ["data_size_range", "data_size_list"], allow_negative_numbers = true)]
    pub data_size: usize,
    /// Key distribution over --keyspace for `__key__` and `__rand_int__` [default:
    /// uniform].
    ///
    /// zipf ranks keys (index 0 hottest), gaussian centres them (mean N/2, sd N/6),
    /// sequential walks them in order.
    #[arg(long = "key-pattern", value_enum, value_name = "PATTERN")]
    pub key_pattern: Option<KeyPattern>,
    /// Number of distinct keys (indices 0..N); alone it means uniform keys, like -r N
    /// [default: -r's] [range: 1 to 1000000000000].
    #[arg(long = "keyspace", value_parser = parse_count, value_name = "N", allow_negative_numbers = true)]
    pub keyspace_size: Option<u64>,
    /// Exponent s of --key-pattern zipf: the key of rank r gets weight 1/r^s [default: 1.0]
    /// [range: above 0 to 100].
    #[arg(long = "zipf-exponent", allow_hyphen_values = true, value_name = "S")]
    pub zipf_exponent: Option<f64>,
    /// Prefix of the keys `__key__` becomes [default: key:] (the default tests keep their own key names).
    #[arg(long = "key-prefix", value_name = "PREFIX", value_parser = clap::builder::OsStringValueParser::new())]
    pub key_prefix: Option<OsString>,
    /// Make every `__key__` this many bytes: the prefix, then the key index zero-padded
    /// [default: the index unpadded] [range: 1 to 536870912].
    #[arg(long = "key-size", value_parser = bytes_in::<u64>(1, MAX_VALUE_SIZE as u64, "512 MiB, the largest key Redis accepts"), value_name = "BYTES", allow_negative_numbers = true)]
    pub key_size: Option<u64>,
    /// Value sizes drawn uniformly from MIN to MAX bytes, inclusive: `32-1024`.
    #[arg(
        long = "data-size-range",
        value_name = "MIN-MAX",
        conflicts_with = "data_size_list"
    )]
    pub data_size_range: Option<String>,
    /// Value sizes drawn by weight, SIZE:WEIGHT,...: `32:7,1024:2,65536:1`.
    #[arg(long = "data-size-list", value_name = "LIST")]
    pub data_size_list: Option<String>,
    /// A SET/GET mix, memtier's spelling: `1:10` sends one `SET __key__ __data__` per ten `GET __key__`.
    #[arg(long, value_name = "SET:GET", allow_hyphen_values = true)]
    pub ratio: Option<String>,
    /// A SET/GET mix, go-redis's spelling: the fraction of requests that are GETs (`0.8`)
    /// [default: none, the tests] [range: 0 to 1].
    #[arg(
        long = "read-ratio",
        allow_hyphen_values = true,
        value_name = "FRACTION"
    )]
    pub read_ratio: Option<f64>,
    /// A command of a custom mix, repeatable: `--command 'SET __key__ __data__'`.
    ///
    /// Split on spaces ("..." groups); placeholders __key__, __data__, __rand_int__,
    /// __sha_N__.
    #[arg(long = "command", value_name = "COMMAND", value_parser = clap::builder::OsStringValueParser::new())]
    pub mix_command: Vec<OsString>,
    /// Weights of the --command entries, in order: `1,10` (default: equal).
    #[arg(long = "command-weights", value_name = "W,W,...")]
    pub command_weights: Option<String>,
    /// A Lua script to SCRIPT LOAD before the run, repeatable; `__sha_1__` in a command
    /// is its SHA1.
    ///
    /// `__sha_1__`, `__sha_2__`, ... in commands are the scripts' SHA1s, for EVALSHA.
    #[arg(long = "script-load", value_name = "SCRIPT")]
    pub script_load: Vec<String>,
    /// Largest reply accepted before the connection is dropped as a protocol error [range: 16
    /// to 4294967296].
    #[arg(long = "max-reply-bytes", value_parser = count_in::<u64>(16, 1 << 32, "a reply is buffered whole on its connection"), default_value = "536870912", value_name = "BYTES", allow_negative_numbers = true)]
    pub max_reply_bytes: u64,
    /// Before the first test, SET every key the tests read with GET, so reads find
    /// values.
    ///
    /// Over -r/--keyspace, to -d bytes: without it reads take the fast path of a
    /// missing key.
    #[arg(long)]
    pub prefill: bool,
    /// A custom command to benchmark instead of the default tests.
    #[arg(trailing_var_arg = true, value_name = "COMMAND", value_parser = clap::builder::OsStringValueParser::new())]
    pub command: Vec<OsString>,
}
