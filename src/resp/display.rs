//! How a [`Reply`] prints: one short line in the style of redis-cli, so a reply
//! can be quoted in an error message without flooding the terminal.

use std::fmt;

use super::Reply;

/// Longest string payload shown by `Display` before it is cut.
const SHOW_BYTES: usize = 64;
/// Most elements of one aggregate shown by `Display`.
const SHOW_ELEMENTS: usize = 8;
/// Deepest aggregate shown by `Display`; below it, `[...]`.
const SHOW_DEPTH: usize = 4;

impl fmt::Display for Reply {
    /// Renders like redis-cli, on one line and shortened, so it fits in an error message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        show(self, f, 0)
    }
}

/// Writes `reply` at nesting `depth`; bounded in depth and width so output stays short.
fn show(reply: &Reply, f: &mut fmt::Formatter<'_>, depth: usize) -> fmt::Result {
    match reply {
        Reply::Simple(s) => show_text(s.as_bytes(), f, false),
        Reply::Error(m) | Reply::BulkError(m) => {
            f.write_str("(error) ")?;
            show_text(m.as_bytes(), f, false)
        }
        Reply::Integer(n) => write!(f, "(integer) {n}"),
        Reply::Bulk(b) | Reply::Verbatim { text: b, .. } => show_text(b, f, true),
        Reply::Null => f.write_str("(nil)"),
        Reply::Double(d) => write!(f, "(double) {d}"),
        Reply::Boolean(b) => write!(f, "({b})"),
        Reply::BigNumber(n) => write!(f, "(big number) {n}"),
        Reply::Array(items) => show_list(items.iter(), items.len(), "", f, depth),
        Reply::Set(items) => show_list(items.iter(), items.len(), "(set) ", f, depth),
        Reply::Push(items) => show_list(items.iter(), items.len(), "(push) ", f, depth),
        Reply::Map(pairs) => {
            if depth >= SHOW_DEPTH {
                return f.write_str("{...}");
            }
            f.write_str("{")?;
            for (i, (key, value)) in pairs.iter().take(SHOW_ELEMENTS).enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                show(key, f, depth + 1)?;
                f.write_str(" => ")?;
                show(value, f, depth + 1)?;
            }
            show_more(pairs.len(), f)?;
            f.write_str("}")
        }
    }
}

/// Writes an aggregate as `prefix[a, b, ...]`.
fn show_list<'a>(
    items: impl Iterator<Item = &'a Reply>,
    len: usize,
    prefix: &str,
    f: &mut fmt::Formatter<'_>,
    depth: usize,
) -> fmt::Result {
    f.write_str(prefix)?;
    if len == 0 {
        return f.write_str("(empty array)");
    }
    if depth >= SHOW_DEPTH {
        return f.write_str("[...]");
    }
    f.write_str("[")?;
    for (i, item) in items.take(SHOW_ELEMENTS).enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        show(item, f, depth + 1)?;
    }
    show_more(len, f)?;
    f.write_str("]")
}

/// Notes how many elements were left out, if any.
fn show_more(len: usize, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if len > SHOW_ELEMENTS {
        write!(f, ", ... ({} more)", len - SHOW_ELEMENTS)?;
    }
    Ok(())
}

/// Writes bytes escaped like redis-cli (`\n`, `\xNN`), quoted if `quoted`, cut at `SHOW_BYTES`.
fn show_text(bytes: &[u8], f: &mut fmt::Formatter<'_>, quoted: bool) -> fmt::Result {
    if quoted {
        f.write_str("\"")?;
    }
    for &byte in bytes.get(..SHOW_BYTES).unwrap_or(bytes) {
        match byte {
            b'"' | b'\\' if quoted => write!(f, "\\{}", char::from(byte))?,
            b'\n' => f.write_str("\\n")?,
            b'\r' => f.write_str("\\r")?,
            b'\t' => f.write_str("\\t")?,
            b' '..=b'~' => write!(f, "{}", char::from(byte))?,
            _ => write!(f, "\\x{byte:02x}")?,
        }
    }
    if quoted {
        f.write_str("\"")?;
    }
    if bytes.len() > SHOW_BYTES {
        write!(f, "... ({} bytes)", bytes.len())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Reply {
        Reply::Bulk(s.as_bytes().to_vec())
    }

    fn simple(s: &str) -> Reply {
        Reply::Simple(s.to_owned())
    }

    #[test]
    fn display_renders_like_redis_cli_on_one_short_line() {
        assert_eq!(
            Reply::Error("ERR unknown command 'FOO'".into()).to_string(),
            "(error) ERR unknown command 'FOO'"
        );
        assert_eq!(simple("OK").to_string(), "OK");
        assert_eq!(Reply::Integer(5).to_string(), "(integer) 5");
        assert_eq!(Reply::Null.to_string(), "(nil)");
        assert_eq!(bulk("a\nb\"").to_string(), "\"a\\nb\\\"\"");
        assert_eq!(Reply::Array(vec![]).to_string(), "(empty array)");
        assert_eq!(
            Reply::Array(vec![bulk("a"), Reply::Integer(1)]).to_string(),
            "[\"a\", (integer) 1]"
        );
        assert_eq!(
            Reply::Map(vec![(simple("k"), Reply::Boolean(true))]).to_string(),
            "{k => (true)}"
        );
        let long = Reply::Bulk(vec![b'x'; 1000]).to_string();
        assert!(long.len() < 100 && long.ends_with("(1000 bytes)"));
        let wide = Reply::Array(vec![Reply::Null; 100]).to_string();
        assert!(wide.ends_with(", ... (92 more)]"));
        let mut deep = Reply::Null;
        for _ in 0..100 {
            deep = Reply::Array(vec![deep]);
        }
        assert_eq!(deep.to_string(), "[[[[[...]]]]]");
    }
}
