//! The page around every report: the document's head (its inline style sheet, a content
//! policy that lets it load nothing from anywhere), the heading, the contents, and the
//! facts every report ends with: the command line, the tool, the seed and the server.

use super::markup::{esc, facts, section, shell_words};
use crate::report::Header;

/// The style sheet, inlined in every page: screens of any width, and paper.
const STYLE: &str = include_str!("style.css");

/// A whole HTML document: `title` in the tab and as the heading, `subtitle` under it,
/// `contents` the `(id, name)` of each section linked at the top, `body` the sections.
pub(super) fn document(
    title: &str,
    subtitle: &str,
    contents: &[(&str, &str)],
    body: &str,
) -> String {
    let nav: String = contents
        .iter()
        .map(|(id, name)| format!("<a href=\"#{id}\">{}</a>", esc(name)))
        .collect();
    // The policy forbids every fetch, script and frame: the page is whole in itself, and
    // a browser that opens it makes no request.
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"generator\" content=\"tailrate {version}\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <h1>{title}</h1>\n<p class=\"sub\">{subtitle}</p>\n<nav>{nav}</nav>\n{body}\n\
         <footer>Written by {tool}. Self-contained: this file loads nothing from anywhere.\
         </footer>\n</main>\n</body>\n</html>\n",
        version = env!("CARGO_PKG_VERSION"),
        title = esc(title),
        subtitle = esc(subtitle),
        tool = esc(&format!("tailrate {}", env!("CARGO_PKG_VERSION"))),
    )
}

/// The section every report ends with: the command line as typed (passwords already
/// hidden by the report), the tool and seed, the server's facts, and `more` facts of the
/// report's own (its settings, its plan).
pub(super) fn about(header: &Header, more: &[(String, String)]) -> String {
    let mut html = String::new();
    if !header.command_line.is_empty() {
        html.push_str(&format!(
            "<h3>Command line</h3><code class=\"cmd\">{}</code>",
            esc(&shell_words(&header.command_line))
        ));
    }
    let server = &header.server;
    let mut pairs = vec![
        ("tool".to_string(), header.tool.clone()),
        ("seed".into(), header.seed.to_string()),
        ("server".into(), server.endpoint.clone()),
        (
            "server version".into(),
            server.version.clone().unwrap_or_else(|| "not given".into()),
        ),
    ];
    // An empty `save` is how the server says it takes no snapshots.
    let save = |s: String| {
        if s.is_empty() {
            "'' (no snapshots)".into()
        } else {
            s
        }
    };
    pairs.extend(server.save.clone().map(|s| ("save".into(), save(s))));
    pairs.extend(server.appendonly.clone().map(|s| ("appendonly".into(), s)));
    if !server.cluster_nodes.is_empty() {
        pairs.push(("cluster masters".into(), server.cluster_nodes.join(", ")));
    }
    pairs.extend(server.notes.iter().map(|n| ("note".to_string(), n.clone())));
    pairs.extend(more.iter().cloned());
    html.push_str("<h3>Tool, server and settings</h3>");
    html.push_str(&facts(&pairs));
    section("about", "Command line, versions and settings", &html)
}
