//! One line of a JSON-lines trace to a [`TraceRecord`]:
//! `{"time": 12.5, "client": "c1", "db": 0, "args": ["SET", "k", "v"]}`.
//!
//! `time` (seconds, at least 0) and `args` (a non-empty array of strings, sent as their
//! UTF-8 bytes) are required; `client` (a string or an integer) and `db` are optional, and
//! other keys are ignored so a trace may carry notes of its own. Strings without escapes
//! are borrowed from the line, so each is copied once, into the record's reused buffers.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Visitor};

use super::{TraceRecord, fill_args, seconds_to_us};

/// The object on one line, borrowing from it where it can.
#[derive(Deserialize)]
struct Line<'a> {
    time: f64,
    #[serde(borrow, default)]
    client: Option<Client<'a>>,
    #[serde(default)]
    db: Option<u32>,
    #[serde(borrow)]
    args: Vec<Text<'a>>,
}

/// A string, borrowed from the line unless it has escapes (serde's own `Cow` always
/// copies).
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Takes a string, borrowing it when it can.
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// A client named by a string or a number.
enum Client<'a> {
    Name(Cow<'a, str>),
    Number(i128),
}

impl<'de: 'a, 'a> Deserialize<'de> for Client<'a> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Takes a string (borrowed when it has no escapes) or an integer.
        struct ClientVisitor;
        impl<'de> Visitor<'de> for ClientVisitor {
            type Value = Client<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Client::Name(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Client::Name(Cow::Owned(v.to_owned())))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Client::Number(i128::from(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Client::Number(i128::from(v)))
            }
        }
        deserializer.deserialize_any(ClientVisitor)
    }
}

/// Parses `line` (without its line ending) into `record`, reusing its buffers.
pub(super) fn parse_line(
    line: &[u8],
    record: &mut TraceRecord,
    spare: &mut Vec<Vec<u8>>,
) -> Result<(), String> {
    let parsed: Line = serde_json::from_slice(line).map_err(|e| {
        // serde_json ends its message with "at line 1 column N"; the reader names the line.
        let message = e.to_string();
        let what = message
            .rsplit_once(" at line ")
            .map_or(&*message, |(m, _)| m);
        format!(
            "expected an object with \"time\" and \"args\": {what} (column {})",
            e.column()
        )
    })?;
    record.at_us = seconds_to_us(parsed.time).ok_or_else(|| {
        format!(
            "\"time\" {} is not a number of seconds (finite and at least 0)",
            parsed.time
        )
    })?;
    if parsed.args.is_empty() {
        return Err("\"args\" is empty; it needs the command at least".into());
    }
    record.db = parsed.db;
    record.client.clear();
    match parsed.client {
        None => {}
        Some(Client::Name(name)) => record.client.extend_from_slice(name.as_bytes()),
        Some(Client::Number(n)) => {
            use std::io::Write;
            // Writing into a Vec cannot fail.
            let _ = write!(record.client, "{n}");
        }
    }
    fill_args(record, spare, parsed.args.iter().map(|a| a.0.as_bytes()));
    Ok(())
}
