//! Text from outside tailrate (a server's error replies, the OS's reasons) made safe to
//! print: control characters escaped, so what a server sent cannot move the cursor,
//! recolour the terminal or ring its bell. Every layer that puts such text into a
//! message, an error or a report uses it; it sits at the bottom so that `net/`, `drive/`
//! and `report/` alike may.

/// `text` with control characters escaped (`\u{1b}`, `\n`), so what a server sent cannot
/// move the cursor or recolour the terminal. Printable text is returned unchanged, and
/// escaping twice changes nothing more (a backslash is not a control character).
pub fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars().map(escaped).collect()
}

/// At most `max_chars` characters of `text`, [`printable`]: a server's words shortened
/// for a one-line message.
pub fn printable_prefix(text: &str, max_chars: usize) -> String {
    text.chars().take(max_chars).map(escaped).collect()
}

/// One character as printed: itself, or its escape when it is a control character.
fn escaped(c: char) -> String {
    if c.is_control() {
        c.escape_default().to_string()
    } else {
        c.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_from_a_server_are_printed_escaped() {
        assert_eq!(printable("ERR"), "ERR");
        assert_eq!(printable("\u{1b}[31mERR"), "\\u{1b}[31mERR");
        assert_eq!(printable("a\rb\nc\u{7}"), "a\\rb\\nc\\u{7}");
        assert_eq!(printable("ÉRR"), "ÉRR");
        let once = printable("\u{1b}[31m");
        assert_eq!(printable(&once), once);
    }

    #[test]
    fn a_prefix_is_cut_in_characters_then_escaped() {
        assert_eq!(printable_prefix("ÉRR \u{1b}x", 5), "ÉRR \\u{1b}");
        assert_eq!(printable_prefix("ok", 200), "ok");
    }
}
