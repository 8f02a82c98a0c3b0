//! The default test suite: the names, commands and order of redis-benchmark 7, and
//! its `-t` selection rules (`ping` picks both pings, `lrange` every LRANGE test and
//! the LPUSH that fills their list).

use super::error::WorkloadError;
use super::template::Template;
use super::template::{RAND_INT_WIDTH, Token, rand_int_tokens};
use super::test_case::Test;

/// How a default test's command is made from the value bytes.
#[derive(Debug, Clone, Copy)]
pub struct TestSpec {
    /// Printed name.
    pub name: &'static str,
    /// Lower-case names that select it with `-t`.
    pub selectors: &'static [&'static str],
    /// The command, `$DATA` standing for the value and `$SCORE` for ZADD's score.
    pub argv: &'static [&'static str],
    /// Sent inline rather than as a RESP array.
    pub inline: bool,
}

impl TestSpec {
    /// Builds the test; `randomize` is true when a keyspace was given (`__rand_int__`
    /// then draws from the key pattern); `data` is the value, or `None` when value sizes
    /// vary (then `$DATA` is drawn per request).
    pub fn build(&self, data: Option<&[u8]>, randomize: bool) -> Test {
        let template = if self.inline {
            Template::inline(self.argv.join(" ").as_bytes())
        } else {
            let argv: Vec<Vec<Token>> = self
                .argv
                .iter()
                .map(|arg| match (*arg, data) {
                    ("$DATA", Some(data)) => vec![Token::Lit(data.to_vec())],
                    ("$DATA", None) => vec![Token::Data],
                    // redis-benchmark scores ZADD members randomly only with -r.
                    ("$SCORE", _) if randomize => vec![Token::Digits(RAND_INT_WIDTH)],
                    ("$SCORE", _) => vec![Token::Lit(b"0".to_vec())],
                    (other, _) => rand_int_tokens(other.as_bytes(), randomize),
                })
                .collect();
            Template::build(&argv)
        };
        Test::single(self.name.to_string(), template)
    }
}

const MSET_ARGV: &[&str] = &[
    "MSET",
    "key:__rand_int__",
    "$DATA",
    "key:__rand_int__",
    "$DATA",
    "key:__rand_int__",
    "$DATA",
    "key:__rand_int__",
    "$DATA",
    "key:__rand_int__",
    "$DATA",
    "key:__rand_int__",
    "$DATA",
    "key:__rand_int__",
    "$DATA",
    "key:__rand_int__",
    "$DATA",
    "key:__rand_int__",
    "$DATA",
    "key:__rand_int__",
    "$DATA",
];

const LRANGE: &[&str] = &[
    "lrange",
    "lrange_100",
    "lrange_300",
    "lrange_500",
    "lrange_600",
];

/// redis-benchmark 7's default tests, in its order.
pub const DEFAULT_TESTS: &[TestSpec] = &[
    TestSpec {
        name: "PING_INLINE",
        selectors: &["ping", "ping_inline"],
        argv: &["PING"],
        inline: true,
    },
    TestSpec {
        name: "PING_MBULK",
        selectors: &["ping", "ping_mbulk"],
        argv: &["PING"],
        inline: false,
    },
    TestSpec {
        name: "SET",
        selectors: &["set"],
        argv: &["SET", "key:__rand_int__", "$DATA"],
        inline: false,
    },
    TestSpec {
        name: "GET",
        selectors: &["get"],
        argv: &["GET", "key:__rand_int__"],
        inline: false,
    },
    TestSpec {
        name: "INCR",
        selectors: &["incr"],
        argv: &["INCR", "counter:__rand_int__"],
        inline: false,
    },
    TestSpec {
        name: "LPUSH",
        selectors: &["lpush"],
        argv: &["LPUSH", "mylist", "$DATA"],
        inline: false,
    },
    TestSpec {
        name: "RPUSH",
        selectors: &["rpush"],
        argv: &["RPUSH", "mylist", "$DATA"],
        inline: false,
    },
    TestSpec {
        name: "LPOP",
        selectors: &["lpop"],
        argv: &["LPOP", "mylist"],
        inline: false,
    },
    TestSpec {
        name: "RPOP",
        selectors: &["rpop"],
        argv: &["RPOP", "mylist"],
        inline: false,
    },
    TestSpec {
        name: "SADD",
        selectors: &["sadd"],
        argv: &["SADD", "myset", "element:__rand_int__"],
        inline: false,
    },
    TestSpec {
        name: "HSET",
        selectors: &["hset"],
        argv: &["HSET", "myhash", "element:__rand_int__", "$DATA"],
        inline: false,
    },
    TestSpec {
        name: "SPOP",
        selectors: &["spop"],
        argv: &["SPOP", "myset"],
        inline: false,
    },
    TestSpec {
        name: "ZADD",
        selectors: &["zadd"],
        argv: &["ZADD", "myzset", "$SCORE", "element:__rand_int__"],
        inline: false,
    },
    TestSpec {
        name: "ZPOPMIN",
        selectors: &["zpopmin"],
        argv: &["ZPOPMIN", "myzset"],
        inline: false,
    },
    TestSpec {
        name: "LPUSH (needed to benchmark LRANGE)",
        selectors: LRANGE,
        argv: &["LPUSH", "mylist", "$DATA"],
        inline: false,
    },
    TestSpec {
        name: "LRANGE_100 (first 100 elements)",
        selectors: &["lrange", "lrange_100"],
        argv: &["LRANGE", "mylist", "0", "99"],
        inline: false,
    },
    TestSpec {
        name: "LRANGE_300 (first 300 elements)",
        selectors: &["lrange", "lrange_300"],
        argv: &["LRANGE", "mylist", "0", "299"],
        inline: false,
    },
    TestSpec {
        name: "LRANGE_500 (first 500 elements)",
        selectors: &["lrange", "lrange_500"],
        argv: &["LRANGE", "mylist", "0", "499"],
        inline: false,
    },
    TestSpec {
        name: "LRANGE_600 (first 600 elements)",
        selectors: &["lrange", "lrange_600"],
        argv: &["LRANGE", "mylist", "0", "599"],
        inline: false,
    },
    TestSpec {
        name: "MSET (10 keys)",
        selectors: &["mset"],
        argv: MSET_ARGV,
        inline: false,
    },
    TestSpec {
        name: "XADD",
        selectors: &["xadd"],
        argv: &["XADD", "mystream", "*", "myfield", "$DATA"],
        inline: false,
    },
];

/// The tests `-t` selects (all of them without `-t`), in suite order.
pub fn select_tests(selection: Option<&str>) -> Result<Vec<TestSpec>, WorkloadError> {
    let Some(selection) = selection else {
        return Ok(DEFAULT_TESTS.to_vec());
    };
    let wanted: Vec<String> = selection
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let picked: Vec<TestSpec> = DEFAULT_TESTS
        .iter()
        .filter(|spec| {
            spec.selectors
                .iter()
                .any(|sel| wanted.iter().any(|w| w == sel))
        })
        .copied()
        .collect();
    if picked.is_empty() {
        let nearest = wanted.iter().find_map(|w| nearest_test(w));
        return Err(WorkloadError::NoTests(selection.to_string(), nearest));
    }
    Ok(picked)
}

/// The test name nearest to `typed`, when a typo away (two edits at most: `gte`, `lpsuh`).
fn nearest_test(typed: &str) -> Option<&'static str> {
    DEFAULT_TESTS
        .iter()
        .flat_map(|spec| spec.selectors.iter().copied())
        .map(|name| (strsim::damerau_levenshtein(typed, name), name))
        .filter(|&(distance, _)| distance <= 2)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn names(selection: &str) -> Vec<&'static str> {
        select_tests(Some(selection))
            .unwrap()
            .iter()
            .map(|s| s.name)
            .collect()
    }

    #[test]
    fn ping_selects_both_pings() {
        assert_eq!(names("ping"), ["PING_INLINE", "PING_MBULK"]);
    }

    #[test]
    fn lrange_brings_the_lpush_that_fills_its_list() {
        assert_eq!(
            names("lrange_300"),
            [
                "LPUSH (needed to benchmark LRANGE)",
                "LRANGE_300 (first 300 elements)"
            ]
        );
    }

    #[test]
    fn selection_keeps_suite_order_and_ignores_case() {
        assert_eq!(names("GET,set"), ["SET", "GET"]);
    }

    #[test]
    fn an_unknown_test_is_refused() {
        assert!(select_tests(Some("nosuch")).is_err());
    }

    #[test]
    fn the_suite_has_twenty_one_tests() {
        assert_eq!(DEFAULT_TESTS.len(), 21);
    }
}
