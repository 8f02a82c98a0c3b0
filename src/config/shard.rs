//! Which shard of one plan this process runs (`--shard I/K`, or the index an engine put
//! in the environment) and when its schedule starts (`--start-at`): the checks and the
//! parsing, with the environment and the clock passed in so they are pure.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::ConfigError;
use crate::cli::RunArgs;
use crate::drive::{MAX_SHARDS, Shard};

/// Kubernetes sets this in every pod of an Indexed Job: the pod's index from 0.
pub const K8S_INDEX: &str = "JOB_COMPLETION_INDEX";
/// `srun` sets this in every task: the task's rank from 0.
pub const SLURM_INDEX: &str = "SLURM_PROCID";
/// `srun` sets this in every task: the tasks of the step.
pub const SLURM_COUNT: &str = "SLURM_NTASKS";

/// The shard `args` and the environment (`env` looks a variable up) say this process
/// runs; [`Shard::WHOLE`] when neither says anything. `--shard` wins over the
/// environment; `--shards` gives the count to a Kubernetes index, and must agree with
/// whatever else gives one.
pub fn shard_of(
    args: &RunArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Shard, ConfigError> {
    if let Some(text) = &args.scale_out.shard {
        let shard = parse_shard(text).map_err(|why| ConfigError::invalid("--shard", why))?;
        if let Some(k) = args.scale_out.shards
            && k != shard.count
        {
            return Err(ConfigError::Conflict {
                a: "--shard",
                b: "--shards",
                why: "they give different shard counts; give one of them",
            });
        }
        return Ok(shard);
    }
    let number = |name: &str| -> Result<Option<u32>, ConfigError> {
        let Some(value) = env(name) else {
            return Ok(None);
        };
        value.trim().parse::<u32>().map(Some).map_err(|_| {
            ConfigError::invalid(
                if args.scale_out.shards.is_some() {
                    "--shards"
                } else {
                    "--shard"
                },
                format!("{name}={value:?} in the environment is not a shard index or count"),
            )
        })
    };
    if let (Some(count), Some(index)) = (args.scale_out.shards, number(K8S_INDEX)?) {
        return checked(index, count, "--shards", K8S_INDEX);
    }
    if let (Some(index), Some(count)) = (number(SLURM_INDEX)?, number(SLURM_COUNT)?) {
        if let Some(k) = args.scale_out.shards
            && k != count
        {
            return Err(ConfigError::invalid(
                "--shards",
                format!("--shards {k} but {SLURM_COUNT}={count}: srun starts one shard a task"),
            ));
        }
        return checked(index, count, "--shard", SLURM_INDEX);
    }
    if args.scale_out.shards.is_some() {
        return Err(ConfigError::invalid(
            "--shards",
            format!(
                "no shard index: give --shard I/K, or run in a Kubernetes Indexed Job \
                 ({K8S_INDEX}) or under srun ({SLURM_INDEX})"
            ),
        ));
    }
    Ok(Shard::WHOLE)
}

/// Index `index` of `count`, each in range; `source` names where the index came from.
fn checked(index: u32, count: u32, flag: &'static str, source: &str) -> Result<Shard, ConfigError> {
    if count == 0 || count > MAX_SHARDS {
        return Err(ConfigError::invalid(
            flag,
            format!("{count} shards: give 1 to {MAX_SHARDS}"),
        ));
    }
    if index >= count {
        return Err(ConfigError::invalid(
            flag,
            format!(
                "{source} is {index}, not below the {count} shards (indices are 0 to {})",
                count - 1
            ),
        ));
    }
    Ok(Shard { index, count })
}

/// `I/K`: shard `I` (from 0) of `K`.
pub fn parse_shard(text: &str) -> Result<Shard, String> {
    let (i, k) = text
        .split_once('/')
        .ok_or_else(|| format!("'{text}' is not I/K (shard I of K, from 0: `0/4`)"))?;
    let parse = |part: &str, what: &str| {
        part.trim()
            .parse::<u32>()
            .map_err(|_| format!("'{text}': {what} '{part}' is not a whole number"))
    };
    let (index, count) = (parse(i, "the index")?, parse(k, "the count")?);
    if count == 0 || count > MAX_SHARDS {
        return Err(format!("'{text}': the count must be 1 to {MAX_SHARDS}"));
    }
    if index >= count {
        return Err(format!(
            "'{text}': the index counts from 0, so it must be below {count}"
        ));
    }
    Ok(Shard { index, count })
}

/// The instant `--start-at` names, read against `now`: RFC 3339, Unix seconds (with a
/// fraction), or `+D`, the next whole multiple of the duration `D` of the Unix clock
/// after `now` (`+30s`: the next :00 or :30), which processes started within `D` of each
/// other most often agree on without talking.
pub fn parse_start_at(text: &str, now: SystemTime) -> Result<SystemTime, String> {
    let text = text.trim();
    if let Some(step) = text.strip_prefix('+') {
        let step = humantime::parse_duration(step)
            .map_err(|e| format!("'+{step}': {e} (`+30s`: the next whole 30 s)"))?;
        if step < Duration::from_secs(1) || step > Duration::from_secs(24 * 3600) {
            return Err(format!(
                "'+{}': the boundary must be 1s to 24h",
                humantime::format_duration(step)
            ));
        }
        let since = now
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let step_ns = step.as_nanos();
        let next = (since / step_ns + 1) * step_ns;
        return Ok(UNIX_EPOCH + Duration::from_nanos(u64::try_from(next).unwrap_or(u64::MAX)));
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let secs: f64 = text
            .parse()
            .map_err(|_| format!("'{text}' is not Unix seconds"))?;
        if !(0.0..=1e11).contains(&secs) {
            return Err(format!("'{text}' is not a time in Unix seconds"));
        }
        return Ok(UNIX_EPOCH + Duration::from_secs_f64(secs));
    }
    parse_timestamp(text).ok_or_else(|| {
        format!(
            "'{text}' is not a time (give RFC 3339 `2026-12-02T06:00:00Z` or \
             `2026-12-02T11:00:00+05:00`, Unix seconds, or `+30s`)"
        )
    })
}

/// An RFC 3339 timestamp, with its offset applied, read through [`time`]'s parser.
/// Three spellings people type or paste are taken as well: a space for the `T`, no offset
/// (UTC, as `Z`), and a comma before the fraction (`date -Ins`, ISO 8601).
fn parse_timestamp(text: &str) -> Option<SystemTime> {
    use time::OffsetDateTime;
    use time::format_description::well_known::Rfc3339;
    // The date and time part is fixed width: `YYYY-MM-DDTHH:MM:SS`.
    const DATE_TIME: usize = "2026-12-02T06:00:00".len();
    if !text.is_ascii() || text.len() < DATE_TIME {
        return None;
    }
    let mut normal = text.as_bytes().to_vec();
    // The parser takes any byte between the date and the time; people write these.
    match normal[10] {
        b'T' | b't' | b' ' => normal[10] = b'T',
        _ => return None,
    }
    if normal.get(DATE_TIME) == Some(&b',') {
        normal[DATE_TIME] = b'.';
    }
    let fraction_end = DATE_TIME
        + match normal.get(DATE_TIME) {
            Some(b'.') => {
                1 + normal[DATE_TIME + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count()
            }
            _ => 0,
        };
    if fraction_end == normal.len() {
        normal.push(b'Z');
    }
    let normal = String::from_utf8(normal).ok()?;
    OffsetDateTime::parse(&normal, &Rfc3339)
        .ok()
        .map(SystemTime::from)
}

/// `--start-at` checked against `now`: an instant already past is refused here, where
/// it is a usage error; one that passes while connecting is the driver's to refuse. An
/// instant more than a day ahead is taken for a typing error.
pub fn start_at_of(args: &RunArgs, now: SystemTime) -> Result<Option<SystemTime>, ConfigError> {
    let Some(text) = &args.scale_out.start_at else {
        return Ok(None);
    };
    let at = parse_start_at(text, now).map_err(|why| ConfigError::invalid("--start-at", why))?;
    match at.duration_since(now) {
        Err(past) if past.duration() > crate::drive::MAX_START_LATENESS => {
            Err(ConfigError::invalid(
                "--start-at",
                format!(
                    "'{text}' was {} ago: give a time ahead (`+30s`)",
                    humantime::format_duration(Duration::from_secs(past.duration().as_secs()))
                ),
            ))
        }
        Ok(ahead) if ahead > Duration::from_secs(24 * 3600) => Err(ConfigError::invalid(
            "--start-at",
            format!("'{text}' is more than a day ahead"),
        )),
        _ => Ok(Some(at)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> RunArgs {
        let mut argv = vec!["tailrate"];
        argv.extend_from_slice(extra);
        crate::cli::Args::try_parse_from(argv).unwrap().run
    }

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn the_flag_gives_index_and_count() {
        let none = env_of(&[]);
        assert_eq!(
            shard_of(&args(&["--shard", "1/4"]), &none).unwrap(),
            Shard { index: 1, count: 4 }
        );
        assert_eq!(shard_of(&args(&[]), &none).unwrap(), Shard::WHOLE);
        for bad in ["4/4", "1", "a/2", "0/0", "-1/2"] {
            let e = shard_of(&args(&["--shard", bad]), &none).unwrap_err();
            assert!(e.to_string().contains("--shard"), "{bad}: {e}");
        }
        let e = shard_of(&args(&["--shard", "0/2", "--shards", "3"]), &none).unwrap_err();
        assert!(e.to_string().contains("--shards"), "{e}");
    }

    #[test]
    fn kubernetes_gives_the_index_and_shards_the_count() {
        let k8s = env_of(&[(K8S_INDEX, "2")]);
        assert_eq!(
            shard_of(&args(&["--shards", "3"]), &k8s).unwrap(),
            Shard { index: 2, count: 3 }
        );
        let e = shard_of(&args(&["--shards", "2"]), &k8s).unwrap_err();
        assert!(e.to_string().contains(K8S_INDEX), "{e}");
        // The index alone shards nothing: a Job of one pod is one generator.
        assert_eq!(shard_of(&args(&[]), &k8s).unwrap(), Shard::WHOLE);
        let e = shard_of(&args(&["--shards", "2"]), &env_of(&[])).unwrap_err();
        assert!(e.to_string().contains("--shards"), "{e}");
    }

    #[test]
    fn srun_gives_both_and_the_flag_wins() {
        let slurm = env_of(&[(SLURM_INDEX, "1"), (SLURM_COUNT, "2")]);
        assert_eq!(
            shard_of(&args(&[]), &slurm).unwrap(),
            Shard { index: 1, count: 2 }
        );
        assert_eq!(
            shard_of(&args(&["--shard", "0/1"]), &slurm).unwrap(),
            Shard::WHOLE
        );
        assert!(shard_of(&args(&["--shards", "3"]), &slurm).is_err());
    }

    #[test]
    fn shares_deal_round_robin_and_add_up() {
        for total in [0u64, 1, 7, 100] {
            for count in 1..6 {
                let sum: u64 = (0..count)
                    .map(|index| Shard { index, count }.share_of(total))
                    .sum();
                assert_eq!(sum, total);
            }
        }
        assert_eq!(Shard { index: 1, count: 2 }.stream(3), 7);
        assert_eq!(Shard::WHOLE.stream(3), 3);
    }

    #[test]
    fn start_times_read_in_three_spellings() {
        let now = UNIX_EPOCH + Duration::from_millis(1_796_191_212_345);
        let at = |t| parse_start_at(t, now).unwrap();
        assert_eq!(at("+30s"), UNIX_EPOCH + Duration::from_secs(1_796_191_230));
        assert_eq!(at("+1m"), UNIX_EPOCH + Duration::from_secs(1_796_191_260));
        assert_eq!(
            at("1796191300"),
            UNIX_EPOCH + Duration::from_secs(1_796_191_300)
        );
        assert_eq!(
            at("1796191300.5"),
            UNIX_EPOCH + Duration::from_millis(1_796_191_300_500)
        );
        assert_eq!(
            at("2026-12-02T06:00:00Z"),
            UNIX_EPOCH + Duration::from_secs(1_796_191_200)
        );
        for bad in ["+0s", "+x", "tomorrow", "", "1e99"] {
            assert!(parse_start_at(bad, now).is_err(), "{bad}");
        }
    }

    /// An offset moves the instant: `+05:00` is five hours before the same wall time in
    /// UTC, with or without a fraction, and `date -Ins`'s comma reads as the point.
    #[test]
    fn start_times_keep_their_utc_offset() {
        let now = UNIX_EPOCH + Duration::from_secs(1_796_191_200);
        let at = |t| parse_start_at(t, now).unwrap_or_else(|e| panic!("{t}: {e}"));
        let utc = UNIX_EPOCH + Duration::from_secs(1_796_416_266);
        let five_hours = Duration::from_secs(5 * 3600);
        let micros = Duration::from_micros(846_757);
        assert_eq!(at("2026-12-04T20:31:06Z"), utc);
        assert_eq!(at("2026-12-04T20:31:06+05:00"), utc - five_hours);
        assert_eq!(
            at("2026-12-04T20:31:06.846757+05:00"),
            utc - five_hours + micros
        );
        assert_eq!(
            at("2026-12-04T20:31:06,846757000+05:00"),
            utc - five_hours + micros
        );
        assert_eq!(
            at("2026-12-04T20:31:06.5-01:30"),
            utc + Duration::from_secs(5400) + Duration::from_millis(500)
        );
        assert_eq!(at("2026-12-04T20:31:06.846757+00:00"), utc + micros);
        // The spellings read before offsets were: a space, no offset (UTC), a fraction.
        assert_eq!(at("2026-12-04 20:31:06"), utc);
        assert_eq!(at("2026-12-04T20:31:06"), utc);
        assert_eq!(
            at("2026-12-04T20:31:06.25"),
            utc + Duration::from_millis(250)
        );
        assert_eq!(
            at("2026-12-04T20:31:06.25Z"),
            utc + Duration::from_millis(250)
        );
    }

    #[test]
    fn a_start_time_that_is_not_one_is_refused_naming_the_flag() {
        let now = SystemTime::now();
        for bad in [
            "2026-12-04T20:31:06+5",
            "2026-12-04T25:31:06Z",
            "2026-13-04T20:31:06Z",
            "2026-12-04T20:31:06.Z",
            "2026-12-04T20:31:06+05:00junk",
            "2026-12-04X20:31:06Z",
            "2026-12-04T20:31:06\u{e9}",
            "next tuesday",
        ] {
            assert!(parse_start_at(bad, now).is_err(), "{bad}");
            let e = start_at_of(&args(&["--start-at", bad]), now).unwrap_err();
            assert!(e.to_string().contains("--start-at"), "{bad}: {e}");
            assert_eq!(e.exit_code(), 2, "{bad}: {e}");
        }
    }

    #[test]
    fn a_start_in_the_past_or_far_ahead_is_refused() {
        let now = SystemTime::now();
        let past = args(&["--start-at", "1000000000"]);
        let e = start_at_of(&past, now).unwrap_err();
        assert!(e.to_string().contains("--start-at"), "{e}");
        assert!(
            start_at_of(&args(&["--start-at", "+30s"]), now)
                .unwrap()
                .is_some()
        );
        let far = (now.duration_since(UNIX_EPOCH).unwrap().as_secs() + 200_000).to_string();
        assert!(start_at_of(&args(&["--start-at", &far]), now).is_err());
    }
}
