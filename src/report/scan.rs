//! A report's JSON walked once as it is read, keeping nothing but the path it is at: every
//! number is checked as [`plausible::beyond_any_run`](super::plausible) says, and a list
//! longer than any run writes (`response_windows.windows`, `intervals`) is refused at the
//! first item past its bound. So a hostile file is refused in memory of the order of its
//! nesting depth, before a tree or a typed report of it is built; [`TopKeys`] then tells
//! the kind of report apart by its top-level fields without building the rest.

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::latency::ResponseWindows;
use super::plausible;

/// The most intervals a test of a run has: a run lasts at most 30 days
/// (`--duration`), and a closed-loop run's intervals are 250 ms, the shortest.
pub const MOST_INTERVALS: usize = 30 * 86_400 * 4;

/// The top-level fields of a report that tell its kind (a run's or a merge's `tests`, a
/// sweep's `runs`, a comparison's `groups` and `method`, a tune report's `trials`), read
/// without building the rest.
#[derive(Debug, Default, Deserialize)]
pub struct TopKeys {
    /// The layout version, when it is a number.
    pub schema_version: Option<serde_json::Value>,
    /// A run's or a merge's tests.
    pub tests: Option<IgnoredAny>,
    /// A sweep's runs.
    pub runs: Option<IgnoredAny>,
    /// A comparison's groups.
    pub groups: Option<IgnoredAny>,
    /// A comparison's method.
    pub method: Option<IgnoredAny>,
    /// A tune report's trials.
    pub trials: Option<IgnoredAny>,
}

impl TopKeys {
    /// The top-level fields of the JSON in `bytes`: none when it is JSON but not an object.
    pub fn of(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        // A derived struct would read an array's items as its fields, in order.
        if !bytes.trim_ascii_start().starts_with(b"{") {
            return serde_json::from_slice::<IgnoredAny>(bytes).map(|_| Self::default());
        }
        serde_json::from_slice(bytes)
    }

    /// `schema_version` as a whole number.
    pub fn version(&self) -> Option<u64> {
        self.schema_version.as_ref().and_then(|v| v.as_u64())
    }
}

/// Why the report in `bytes` holds a number or a list no run writes, naming where (as
/// `tests[0].generator_cpu[1].wall_secs`), or why it is not JSON; `Ok` when it holds none.
pub fn beyond_any_run(bytes: &[u8]) -> Result<(), String> {
    let mut path = String::new();
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let walked = Walk {
        path: &mut path,
        key: "",
        found: &mut found,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    match (found, walked) {
        (Some(why), _) => Err(why),
        (None, Err(e)) => Err(super::not_json(&e)),
        (None, Ok(())) => Ok(()),
    }
}

/// The walk at `path`, inside the field `key` (an array's items are inside its key).
struct Walk<'a> {
    path: &'a mut String,
    key: &'a str,
    found: &'a mut Option<String>,
}

impl Walk<'_> {
    fn refuse<E: de::Error>(self, why: String) -> E {
        *self.found = Some(why);
        E::custom("refused")
    }

    fn number<E: de::Error>(self, v: f64, is: String) -> Result<(), E> {
        if self.key == "seed" || self.key.ends_with("_seed") {
            return Ok(());
        }
        match plausible::beyond(self.path, self.key, v, &is) {
            Some(why) => Err(self.refuse(why)),
            None => Ok(()),
        }
    }

    /// The most items the list at `key` may hold, and what they are.
    fn most(&self) -> Option<(usize, &'static str)> {
        match self.key {
            "windows" if self.path.ends_with("response_windows.windows") => {
                Some((ResponseWindows::MOST, "windows"))
            }
            "intervals" => Some((MOST_INTERVALS, "intervals")),
            _ => None,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a report's JSON")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.number(v as f64, v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.number(v as f64, v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.number(v, plausible::shown(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let most = self.most();
        let mut i = 0usize;
        loop {
            let at = self.path.len();
            self.path.push_str(&format!("[{i}]"));
            let item = Walk {
                path: &mut *self.path,
                key: self.key,
                found: &mut *self.found,
            };
            let more = seq.next_element_seed(item)?;
            self.path.truncate(at);
            if more.is_none() {
                return Ok(());
            }
            i += 1;
            if let Some((most, what)) = most
                && i > most
            {
                let why = format!(
                    "{} holds over {most} {what}: a run writes at most {most}",
                    self.path
                );
                return Err(self.refuse(why));
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let at = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(&key);
            map.next_value_seed(Walk {
                path: &mut *self.path,
                key: &key,
                found: &mut *self.found,
            })?;
            self.path.truncate(at);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_list_past_what_a_run_writes_is_refused_at_its_first_item_over() {
        let item = serde_json::json!({"count": 1});
        let windows = vec![item; ResponseWindows::MOST + 1];
        let v = serde_json::json!({"tests": [{"response_windows": {"windows": windows}}]});
        let why = beyond_any_run(&serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert_eq!(
            why,
            "tests[0].response_windows.windows holds over 240 windows: a run writes at most 240"
        );
        // A list of that name elsewhere is not a report's windows.
        let v = serde_json::json!({"other": {"windows": vec![0; 300]}});
        assert_eq!(beyond_any_run(&serde_json::to_vec(&v).unwrap()), Ok(()));
        let e = beyond_any_run(b"{\"tests\": [1,").unwrap_err();
        assert!(e.starts_with("ends before its JSON does"), "{e}");
    }

    #[test]
    fn top_keys_tell_the_kind_and_json_that_is_no_object_has_none() {
        let keys = TopKeys::of(b"{\"schema_version\": 3, \"runs\": [1, {}]}").unwrap();
        assert!(keys.runs.is_some() && keys.tests.is_none());
        assert_eq!(keys.version(), Some(3));
        let keys = TopKeys::of(b"[1, 2, 3, 4, 5, 6]").unwrap();
        assert!(keys.runs.is_none() && keys.version().is_none());
        assert!(TopKeys::of(b"not json").is_err());
    }
}
