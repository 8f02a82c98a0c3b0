//! The page of a comparison: the tally of verdicts first (and two sweeps' capacities, and
//! the `--fail-if-slower` outcome), then the two sides, one table per compared test and
//! metric with the text table's cells, what did not match, the notes, and the command
//! line when it is known (a comparison's JSON does not keep it).

use super::markup::{Cell, badge, esc, facts, section, shell_words, table};
use super::page;
use crate::export::compare_text::{self, HEADER};
use crate::report::compare::{Comparison, Group, Verdict};

/// Decimal places of milliseconds on the page (the text's default).
const PRECISION: usize = 3;

/// The page of `c`; `command_line` is the one that made it, when known.
pub fn render(c: &Comparison, command_line: Option<&[String]>) -> String {
    let mut body = answer(c);
    body.push_str(&section("sides", "A and B", &sides(c)));
    let mut groups = String::new();
    for g in &c.groups {
        groups.push_str(&group(g));
    }
    if c.groups.is_empty() {
        groups.push_str("<p>Nothing was compared.</p>");
    }
    body.push_str(&section("percentiles", "Percentile by percentile", &groups));
    body.push_str(&section("notes", "Notes", &notes(c)));
    body.push_str(&about(c, command_line));
    let contents = [
        ("answer", "verdicts"),
        ("sides", "A and B"),
        ("percentiles", "percentiles"),
        ("notes", "notes"),
        ("about", "command line and versions"),
    ];
    let title = format!("tailrate compare: {} vs {}", c.a.source, c.b.source);
    let subtitle = format!(
        "{}; B against A, {:.0}% intervals of the differences",
        c.tool,
        c.confidence * 100.0
    );
    page::document(&title, &subtitle, &contents, &body)
}

/// The tally, two sweeps' capacities and `--fail-if-slower`'s outcome.
fn answer(c: &Comparison) -> String {
    let slower = c.count(Verdict::BSlower);
    let class = if slower > 0 { "answer bad" } else { "answer" };
    let mut html = format!(
        "<div class=\"{class}\"><p class=\"lead\">{}</p><div class=\"stats\">",
        esc(&compare_text::tally(c))
    );
    for (verdict, label) in [
        (Verdict::BSlower, "B slower"),
        (Verdict::BFaster, "B faster"),
        (Verdict::Equivalent, "equivalent"),
        (Verdict::CannotTell, "cannot tell"),
    ] {
        html.push_str(&format!(
            "<div class=\"stat\"><span class=\"label\">{}</span><span class=\"value\">{}</span></div>",
            esc(label),
            c.count(verdict)
        ));
    }
    html.push_str("</div>");
    if let Some(cap) = &c.capacity {
        html.push_str(&format!(
            "<p>{}</p>",
            esc(&compare_text::capacity_line(cap))
        ));
    }
    if let Some(pct) = c.fail_if_slower_pct {
        let breaches = c.breaches();
        let pct = compare_text::trim_float(pct);
        if breaches.is_empty() {
            html.push_str(&format!(
                "<p>{} --fail-if-slower {}%: B is nowhere slower by more than that at 95% confidence.</p>",
                badge("pass"),
                esc(&pct)
            ));
        } else {
            html.push_str(&format!(
                "<p>{} --fail-if-slower {}%: B is slower by more than that at:</p><ul>",
                badge("fail"),
                esc(&pct)
            ));
            for b in &breaches {
                html.push_str(&format!("<li>{}</li>", esc(b)));
            }
            html.push_str("</ul>");
        }
    }
    html.push_str("</div>");
    section("answer", "The answer", &html)
}

/// What each side is: its file or endpoint, tool, server version and seed.
fn sides(c: &Comparison) -> String {
    let header = ["side", "source", "kind", "tool", "server version", "seed"].map(String::from);
    let dash = || "-".to_string();
    let rows: Vec<Vec<Cell>> = [("A", &c.a), ("B", &c.b)]
        .into_iter()
        .map(|(name, s)| {
            vec![
                Cell::Text(name.into()),
                Cell::Text(s.source.clone()),
                Cell::Text(s.kind.clone()),
                Cell::Text(s.tool.clone().unwrap_or_else(dash)),
                Cell::Text(s.server_version.clone().unwrap_or_else(dash)),
                Cell::Num(s.seed.map_or_else(dash, |s| s.to_string())),
            ]
        })
        .collect();
    let mut html = table(&header, &rows);
    if let Some(live) = &c.live {
        html.push_str(&format!("<p>{}</p>", esc(&compare_text::live_line(live))));
    }
    html
}

/// One test and metric: a row per percentile, the text table's cells.
fn group(g: &Group) -> String {
    let mut html = format!(
        "<h3>{}: {}</h3><p class=\"sub\">ms; A {} requests timed, B {}; intervals: {}</p>",
        esc(&g.name()),
        esc(compare_text::metric_words(&g.metric)),
        g.a_count,
        g.b_count,
        esc(&if g.a_intervals == g.b_intervals {
            g.a_intervals.clone()
        } else {
            format!("A {}; B {}", g.a_intervals, g.b_intervals)
        })
    );
    let header = HEADER.map(String::from);
    let rows: Vec<Vec<Cell>> = g
        .rows
        .iter()
        .map(|r| {
            let [p, a, b, d, dp, ci, cip, verdict] = compare_text::cells(r, PRECISION);
            vec![
                Cell::Text(p),
                Cell::Num(a),
                Cell::Num(b),
                Cell::Num(d),
                Cell::Num(dp),
                Cell::Num(ci),
                Cell::Num(cip),
                Cell::Html(badge(&verdict)),
            ]
        })
        .collect();
    html.push_str(&table(&header, &rows));
    html
}

/// What did not match, and what the reader should know.
fn notes(c: &Comparison) -> String {
    let mut items: Vec<String> = Vec::new();
    for (side, names) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        if !names.is_empty() {
            items.push(format!(
                "only in {side}, not compared: {}",
                names.join(", ")
            ));
        }
    }
    items.push(format!(
        "intervals of B-A: {:.0}% for all {} with a verdict together (each {}%), {}",
        c.confidence * 100.0,
        c.family_rows,
        compare_text::trim_float((c.row_confidence * 1e5).floor() / 1e3),
        c.method
    ));
    items.extend(c.notes.iter().cloned());
    let list: String = items
        .iter()
        .map(|i| format!("<li>{}</li>", esc(i)))
        .collect();
    format!("<ul>{list}</ul>")
}

/// The command line (when known) and the tool.
fn about(c: &Comparison, command_line: Option<&[String]>) -> String {
    let mut html = String::new();
    match command_line {
        Some(words) if !words.is_empty() => html.push_str(&format!(
            "<h3>Command line</h3><code class=\"cmd\">{}</code>",
            esc(&shell_words(words))
        )),
        _ => html
            .push_str("<p>Made from a saved comparison, which does not keep its command line.</p>"),
    }
    let mut pairs = vec![
        ("tool".to_string(), c.tool.clone()),
        ("schema version".into(), c.schema_version.to_string()),
    ];
    for (name, side) in [("A", &c.a), ("B", &c.b)] {
        pairs.push((
            format!("{name}'s server"),
            side.server_version
                .clone()
                .unwrap_or_else(|| "version not given".into()),
        ));
    }
    html.push_str(&facts(&pairs));
    section("about", "Command line and versions", &html)
}
