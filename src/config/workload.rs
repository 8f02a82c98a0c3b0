//! The workload flags: `-t`, a custom command, `-r`, `-d`, key patterns and mixes, into a
//! checked [`WorkloadSpec`]. A custom command's words and `--key-prefix` are taken as the
//! bytes typed (keys and values need not be UTF-8), shown with U+FFFD where they are not.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use super::ConfigError;
use crate::cli::{RunArgs, WorkloadArgs};
use crate::workload::{
    self, CustomCommand, KeyDist, KeyDistError, KeyFormat, KeyPattern, Mix, ValueSizes,
    WorkloadSpec,
};

/// Largest `--zipf-exponent`.
const MAX_ZIPF_EXPONENT: f64 = 100.0;

/// Subcommands a mistyped first word may have meant.
const SUBCOMMANDS: [&str; 5] = ["sweep", "plot", "tune", "completions", "man"];

/// Refuses a custom command that is a mistyped subcommand (`swep --rates 10k`) or that
/// carries one of tailrate's own flags after it (`SET k v -q`): both would otherwise be
/// sent to the server as a command.
fn check_custom_command(words: &[OsString]) -> Result<(), ConfigError> {
    let words: Vec<String> = words
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let Some(first) = words.first() else {
        return Ok(());
    };
    // Redis takes commands in any case; a lower-case word near a subcommand's name is
    // far more often a mistyped subcommand than a command.
    let lower_case = first.chars().all(|c| c.is_ascii_lowercase());
    if let Some(meant) = SUBCOMMANDS.iter().find(|s| {
        let most = if s.len() <= 4 { 1 } else { 2 };
        lower_case && strsim::levenshtein(first, s) <= most
    }) {
        return Err(ConfigError::invalid(
            "COMMAND",
            format!(
                "'{first}' would be sent to the server as a command; did you mean `tailrate \
                 {meant}`? (a subcommand comes first: `tailrate {meant} -p PORT ...`; to send '{first}' to the server as \
                 a command, give it in upper case)"
            ),
        ));
    }
    // `--rate 10 k`: the shell split a number from its unit, and the unit became a command.
    if ["k", "K", "M", "G", "s", "ms", "us", "m"].contains(&first.as_str()) {
        return Err(ConfigError::invalid(
            "COMMAND",
            format!(
                "'{first}' would be sent to the server as a command: a unit after a space? \
                 write a number and its unit together (--rate 10k, --duration 2s)"
            ),
        ));
    }
    if let Some(flag) = words[1..].iter().find(|w| is_own_flag(w)) {
        return Err(ConfigError::invalid(
            "COMMAND",
            format!(
                "{flag} comes after the custom command '{first}', so it would be sent as one of \
                 its arguments; give tailrate's flags before the command"
            ),
        ));
    }
    Ok(())
}

/// Whether `word` is one of tailrate's own flags (`-q`, `--json`, `--json=x`), not a
/// negative number or another argument a command may take.
fn is_own_flag(word: &str) -> bool {
    use clap::CommandFactory;
    let command = crate::cli::Args::command();
    if let Some(long) = word.strip_prefix("--") {
        let name = long.split('=').next().unwrap_or(long);
        return !name.is_empty() && command.get_arguments().any(|a| a.get_long() == Some(name));
    }
    let mut chars = word.chars();
    match (chars.next(), chars.next(), chars.next()) {
        (Some('-'), Some(c), None) if !c.is_ascii_digit() => {
            command.get_arguments().any(|a| a.get_short() == Some(c))
        }
        _ => false,
    }
}

/// Most `--command` entries in one mix: each keeps its own histograms (about 0.8 MB), so
/// thousands would take gigabytes before the first request.
pub const MAX_MIX_COMMANDS: usize = 256;

/// Checks the workload flags (tests, custom command, mixes, keys, values) against each
/// other and parses them into what `Workload::build` needs.
pub(super) fn workload_spec(
    args: &RunArgs,
    stdin_arg: Option<Vec<u8>>,
) -> Result<WorkloadSpec, ConfigError> {
    let mix = mix_of(args)?;
    check_custom_command(&args.workload.command)?;
    let custom = (!args.workload.command.is_empty()).then(|| CustomCommand {
        name: super::redact::command_text(
            &args
                .workload
                .command
                .iter()
                .map(|w| w.to_string_lossy())
                .collect::<Vec<_>>(),
        ),
        argv: args
            .workload
            .command
            .iter()
            .map(|a| a.as_bytes().to_vec())
            .collect(),
        stdin_arg,
    });

    let (keyspace, keys) = keys_of(args)?;
    let key_format = key_format_of(args, mix.as_ref(), &keys)?;

    // Values.
    let sizes = match (
        &args.workload.data_size_range,
        &args.workload.data_size_list,
    ) {
        (Some(range), _) => ValueSizes::parse_range(range)
            .map_err(|why| ConfigError::invalid("--data-size-range", why))?,
        (None, Some(list)) => ValueSizes::parse_list(list)
            .map_err(|why| ConfigError::invalid("--data-size-list", why))?,
        (None, None) => ValueSizes::Fixed(args.workload.data_size),
    };

    Ok(WorkloadSpec {
        tests: args.workload.tests.clone(),
        custom,
        mix,
        keyspace,
        keys,
        key_format,
        sizes,
        scripts: args.workload.script_load.clone(),
    })
}

/// The keys: `-r N` is `--keyspace N` with uniform keys; `--key-pattern` and
/// `--zipf-exponent` shape them. Returns the keyspace as typed and the distribution.
fn keys_of(args: &RunArgs) -> Result<(Option<u64>, KeyDist), ConfigError> {
    if args.workload.keyspace.is_some() && args.workload.keyspace_size.is_some() {
        return Err(ConfigError::Conflict {
            a: "-r",
            b: "--keyspace",
            why: "-r N is --keyspace N with uniform keys; give one of them",
        });
    }
    if args.workload.keyspace.is_some()
        && args
            .workload
            .key_pattern
            .is_some_and(|p| p != KeyPattern::Uniform)
    {
        return Err(ConfigError::Conflict {
            a: "-r",
            b: "--key-pattern",
            why: "-r N means uniform keys below N; write --keyspace N --key-pattern ... instead",
        });
    }
    if args.workload.keyspace_size == Some(0) {
        return Err(ConfigError::invalid("--keyspace", "need at least one key"));
    }
    let keyspace = args.workload.keyspace.or(args.workload.keyspace_size);
    let size_flag = if args.workload.keyspace.is_some() {
        "-r"
    } else {
        "--keyspace"
    };
    let pattern = args.workload.key_pattern.unwrap_or(KeyPattern::Uniform);
    if args.workload.key_pattern.is_some() && keyspace.is_none() {
        return Err(ConfigError::invalid(
            "--key-pattern",
            "needs a keyspace to draw from: add --keyspace N",
        ));
    }
    if args.workload.zipf_exponent.is_some() && pattern != KeyPattern::Zipf {
        return Err(ConfigError::invalid(
            "--zipf-exponent",
            "applies only to --key-pattern zipf",
        ));
    }
    let exponent = args.workload.zipf_exponent.unwrap_or(1.0);
    // Past s = 100 the second key's weight is 2^-100 of the first's: every request goes to
    // one key whatever the exponent, and the sampler's powers only lose precision.
    if exponent > MAX_ZIPF_EXPONENT {
        return Err(ConfigError::invalid(
            "--zipf-exponent",
            format!("{exponent} is above {MAX_ZIPF_EXPONENT}, the most [range: above 0 to 100]"),
        ));
    }
    let keys = match keyspace {
        None => KeyDist::single(),
        Some(n) => KeyDist::new(pattern, n, exponent).map_err(|e| match e {
            KeyDistError::BadExponent => ConfigError::invalid(
                "--zipf-exponent",
                format!(
                    "{exponent} is not a number above 0 (1.0 is classic Zipf) [range: above 0 to 100]"
                ),
            ),
            KeyDistError::Empty => ConfigError::invalid(size_flag, "need at least one key"),
            KeyDistError::TooLarge => ConfigError::invalid(
                size_flag,
                format!(
                    "{n} keys is more than 12 digits can name (at most {})",
                    workload::MAX_KEYSPACE
                ),
            ),
        })?,
    };
    Ok((keyspace, keys))
}

/// `--key-prefix` and `--key-size` shape `__key__`: refused where no command has one,
/// and checked to hold the digits of every key.
fn key_format_of(
    args: &RunArgs,
    mix: Option<&Mix>,
    keys: &KeyDist,
) -> Result<KeyFormat, ConfigError> {
    let key_flag = if args.workload.key_size.is_some() {
        Some("--key-size")
    } else {
        args.workload.key_prefix.as_ref().map(|_| "--key-prefix")
    };
    if let Some(flag) = key_flag {
        let typed_key = match &mix {
            Some(Mix::Custom { commands, .. }) => {
                commands.iter().flatten().any(|w| has_key_placeholder(w))
            }
            Some(_) => true,
            None => args
                .workload
                .command
                .iter()
                .any(|w| has_key_placeholder(w.as_bytes())),
        };
        if !typed_key {
            return Err(ConfigError::invalid(
                flag,
                "applies to __key__ in --ratio, --read-ratio, --command or a custom command; the default tests' keys are key:__rand_int__",
            ));
        }
    }
    let prefix = args
        .workload
        .key_prefix
        .as_deref()
        .map_or(workload::DEFAULT_KEY_PREFIX.as_bytes(), OsStrExt::as_bytes);
    let key_size = args
        .workload
        .key_size
        .map(|k| usize::try_from(k).unwrap_or(usize::MAX));
    KeyFormat::new(prefix, keys.len, key_size).map_err(|needed| {
        ConfigError::invalid(
            "--key-size",
            format!(
                "{} bytes cannot hold the prefix '{}' and the {} digits of {} keys: give at least {needed}",
                key_size.unwrap_or(0),
                String::from_utf8_lossy(prefix),
                needed - prefix.len(),
                keys.len
            ),
        )
    })
}

/// Whether a typed word holds `__key__`.
fn has_key_placeholder(word: &[u8]) -> bool {
    word.windows(b"__key__".len()).any(|w| w == b"__key__")
}

/// The mix `--ratio`, `--read-ratio` or `--command` describe, refusing combinations.
fn mix_of(args: &RunArgs) -> Result<Option<Mix>, ConfigError> {
    let given: Vec<&'static str> = [
        (args.workload.ratio.is_some(), "--ratio"),
        (args.workload.read_ratio.is_some(), "--read-ratio"),
        (!args.workload.mix_command.is_empty(), "--command"),
    ]
    .into_iter()
    .filter_map(|(on, flag)| on.then_some(flag))
    .collect();
    if let [a, b, ..] = given[..] {
        return Err(ConfigError::Conflict {
            a,
            b,
            why: "a run has one mix: give --ratio, --read-ratio or --command entries",
        });
    }
    if args.workload.command_weights.is_some() && args.workload.mix_command.is_empty() {
        return Err(ConfigError::invalid(
            "--command-weights",
            "weighs --command entries; give them",
        ));
    }
    let Some(&flag) = given.first() else {
        return Ok(None);
    };
    if !args.workload.command.is_empty() {
        return Err(ConfigError::Conflict {
            a: flag,
            b: "a custom command after the flags",
            why: "a mix replaces the custom command; write it as --command '...'",
        });
    }
    if args.workload.tests.is_some() {
        return Err(ConfigError::Conflict {
            a: "-t",
            b: flag,
            why: "a mix replaces the default tests; give one or the other",
        });
    }
    let mix = if let Some(ratio) = &args.workload.ratio {
        let (set, get) =
            workload::parse_ratio(ratio).map_err(|why| ConfigError::invalid("--ratio", why))?;
        Mix::Ratio { set, get }
    } else if let Some(r) = args.workload.read_ratio {
        Mix::ReadRatio(
            workload::check_read_ratio(r)
                .map_err(|why| ConfigError::invalid("--read-ratio", why))?,
        )
    } else {
        if args.workload.mix_command.len() > MAX_MIX_COMMANDS {
            return Err(ConfigError::invalid(
                "--command",
                format!(
                    "{} commands; at most {MAX_MIX_COMMANDS} (each keeps its own latency histograms, \
                     about 0.8 MB): give one command a weight (--command-weights) rather than repeating it",
                    args.workload.mix_command.len()
                ),
            ));
        }
        let commands = args
            .workload
            .mix_command
            .iter()
            .map(|c| match workload::split_words(c.as_bytes()) {
                Ok(words) if words.is_empty() => {
                    Err(ConfigError::invalid("--command", "an empty command"))
                }
                Ok(words) => Ok(words),
                Err(why) => Err(ConfigError::invalid("--command", why)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let weights = match &args.workload.command_weights {
            Some(text) => workload::parse_weights(text, commands.len())
                .map_err(|why| ConfigError::invalid("--command-weights", why))?,
            None => vec![1; commands.len()],
        };
        Mix::Custom { commands, weights }
    };
    Ok(Some(mix))
}

/// Refuses a `-t` that selects several tests where `who` (`a sweep`, `tune`) measures one;
/// a custom command is one test whatever `-t` says.
pub(super) fn check_one_test(args: &WorkloadArgs, who: &str) -> Result<(), ConfigError> {
    if args.command.is_empty()
        && let Some(tests) = &args.tests
        && workload::select_tests(Some(tests.as_str()))
            .map(|t| t.len())
            .unwrap_or(1)
            > 1
    {
        return Err(ConfigError::invalid(
            "-t",
            format!(
                "'{tests}' selects more than one test; {who} measures one: give one test or a \
                 custom command"
            ),
        ));
    }
    Ok(())
}
