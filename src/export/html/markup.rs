//! The pieces every page is made of: text escaped for HTML, tables whose cells say
//! whether they hold words or numbers, badges for verdicts, preformatted blocks, lists of
//! facts, and plots inlined as SVG. Which pieces a page has, and in what order, is the
//! page's (`run`, `sweep`, `compare`).

use serde::Serialize;

use crate::text::printable;

/// `text` safe inside an element or a quoted attribute: control characters escaped as the
/// text reports escape them, then `&`, `<`, `>`, `"` and `'` as entities, so a server's
/// reply or a command line cannot open a tag or end an attribute.
pub(super) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in printable(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One cell of a table.
pub(super) enum Cell {
    /// Words, escaped and left-aligned.
    Text(String),
    /// A number (or a number with its interval), escaped and right-aligned.
    Num(String),
    /// Markup already made of escaped parts (a badge).
    Html(String),
    /// Markup of escaped parts that reads as a number (a value and its interval).
    NumHtml(String),
}

/// A table in a box of its own that scrolls sideways when the screen is narrower than
/// the table, so a phone scrolls the table, not the page.
pub(super) fn table(header: &[String], rows: &[Vec<Cell>]) -> String {
    let mut html = String::from("<div class=\"scroll\"><table><thead><tr>");
    for h in header {
        html.push_str(&format!("<th>{}</th>", esc(h)));
    }
    html.push_str("</tr></thead><tbody>");
    for row in rows {
        html.push_str("<tr>");
        for cell in row {
            html.push_str(&match cell {
                // A long text keeps a readable width: on a phone the table scrolls
                // rather than squeezing it into a column a word wide.
                Cell::Text(t) if t.chars().count() > 40 => {
                    format!("<td class=\"wide\">{}</td>", esc(t))
                }
                Cell::Text(t) => format!("<td>{}</td>", esc(t)),
                Cell::Num(t) => format!("<td class=\"n\">{}</td>", esc(t)),
                Cell::Html(h) => format!("<td>{h}</td>"),
                Cell::NumHtml(h) => format!("<td class=\"n\">{h}</td>"),
            });
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table></div>");
    html
}

/// A verdict as a coloured word: green for a pass, red for a failure, amber for what is
/// undecided, grey otherwise.
pub(super) fn badge(word: &str) -> String {
    let class = match word.to_ascii_lowercase().as_str() {
        "pass" | "valid" | "met" | "b faster" | "confirmed" => "good",
        "fail" | "invalid" | "missed" | "b slower" => "bad",
        "uncertain" | "cannot tell" | "undecided" | "partial" | "interrupted" => "warn",
        _ => "neutral",
    };
    format!("<span class=\"badge {class}\">{}</span>", esc(word))
}

/// Text as the terminal shows it (a section of the text report), in a box that scrolls:
/// each line escaped on its own, so its line breaks stay breaks.
pub(super) fn pre(text: &str) -> String {
    let lines: Vec<String> = text.trim_end().lines().map(esc).collect();
    format!("<pre>{}</pre>", lines.join("\n"))
}

/// Preformatted text whose long lines wrap inside its box (a host's or server's facts:
/// lines of prose and paths, not columns), so it never runs wider than the page.
pub(super) fn pre_wrapped(text: &str) -> String {
    pre(text).replacen("<pre>", "<pre class=\"wrap\">", 1)
}

/// A section with its heading; its `id` is what the page's contents link to.
pub(super) fn section(id: &str, title: &str, inner: &str) -> String {
    format!(
        "<section id=\"{id}\"><h2>{}</h2>{inner}</section>",
        esc(title)
    )
}

/// Facts as a list of names and values, both escaped.
pub(super) fn facts(pairs: &[(String, String)]) -> String {
    let mut html = String::from("<dl class=\"facts\">");
    for (name, value) in pairs {
        html.push_str(&format!("<dt>{}</dt><dd>{}</dd>", esc(name), esc(value)));
    }
    html.push_str("</dl>");
    html
}

/// Every field of a settings record that has a value, as `(name, value)`: the record's
/// own JSON names, so the page says what the JSON says.
pub(super) fn fields(record: &impl Serialize) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Object(map)) = serde_json::to_value(record) else {
        return Vec::new();
    };
    map.into_iter()
        .filter_map(|(key, value)| {
            let shown = match value {
                serde_json::Value::Null => return None,
                serde_json::Value::String(s) => s,
                serde_json::Value::Array(a) if a.is_empty() => return None,
                other => other.to_string(),
            };
            Some((key.replace('_', " "), shown))
        })
        .collect()
}

/// A chart drawn by [`crate::export::plot`], inlined: its size attributes and namespace
/// dropped (inline SVG needs no namespace, and the page must name no other host), its
/// `viewBox` kept so it scales to the width it is given.
pub(super) fn inline_svg(svg: &str, label: &str) -> String {
    let svg = svg.trim_start();
    let svg = match svg.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or(rest, |(_, after)| after),
        None => svg,
    }
    .trim_start();
    let (open, rest) = match (svg.find("<svg"), svg.find('>')) {
        (Some(0), Some(end)) => (&svg[..end], &svg[end + 1..]),
        // Not an SVG document as plotters writes one: shown as text rather than trusted.
        _ => return pre(svg),
    };
    let view_box = attribute(open, "viewBox").unwrap_or("0 0 900 580");
    format!(
        "<figure class=\"plot\"><svg viewBox=\"{}\" role=\"img\" aria-label=\"{}\" \
         preserveAspectRatio=\"xMidYMid meet\">{rest}</figure>",
        esc(view_box),
        esc(label)
    )
}

/// The value of `name="..."` in an opening tag.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// A command line as a shell would take it back: words with spaces or quotes in single
/// quotes (the page shows what was typed; it is escaped by the caller). The first word,
/// the program, is shown as recorded (`tailrate merge` records itself so).
pub(super) fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let plain = i == 0
                || !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./:=,%@+".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_is_escaped_and_control_characters_shown() {
        assert_eq!(
            esc("<script>alert('x&y\")</script>\u{1b}[2J"),
            "&lt;script&gt;alert(&#39;x&amp;y&quot;)&lt;/script&gt;\\u{1b}[2J"
        );
    }

    #[test]
    fn an_inlined_chart_keeps_its_view_box_and_names_no_namespace() {
        let svg = "<svg width=\"900\" height=\"580\" viewBox=\"0 0 900 580\" \
                   xmlns=\"http://www.w3.org/2000/svg\">\n<rect/></svg>\n";
        let html = inline_svg(svg, "a <chart>");
        assert!(html.contains("<svg viewBox=\"0 0 900 580\""), "{html}");
        assert!(html.contains("aria-label=\"a &lt;chart&gt;\""), "{html}");
        assert!(!html.contains("http"), "{html}");
        assert!(html.ends_with("<rect/></svg>\n</figure>"), "{html}");
    }

    #[test]
    fn a_command_line_is_quoted_where_a_shell_would_split_it() {
        let words = ["tailrate", "SET", "k", "a b", "it's", ""].map(String::from);
        assert_eq!(shell_words(&words), "tailrate SET k 'a b' 'it'\\''s' ''");
    }
}
