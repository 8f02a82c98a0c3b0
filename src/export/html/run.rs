//! The page of a run (and of a merged run, which is a run report with its shards): per
//! test, its answer first (the headline percentiles with their intervals, validity and
//! bottleneck, as the text's answer computes them), then the percentile table, its
//! objectives, counts, self-checks, the server's view and the host; then the heatmap of
//! every test, a merge's shards, and the command line, versions and settings.

use super::markup::{
    Cell, badge, esc, facts, fields, inline_svg, pre, pre_wrapped, section, table,
};
use super::page;
use crate::export::run_text::{self, headline_values, offered_text};
use crate::export::{ms, plot};
use crate::record::Metric;
use crate::report::verdict::Verdict;
use crate::report::{Latency, Percentile, RunReport, TestReport};

/// Decimal places of milliseconds on the page (the text's default).
const PRECISION: usize = 3;

/// The metrics of the percentile table, by label.
const METRICS: [(&str, Metric); 4] = [
    ("response", Metric::Response),
    ("service", Metric::Service),
    ("lag", Metric::Lag),
    ("queue wait", Metric::QueueWait),
];

/// The page of `report`: a run, or a merge of shards.
pub fn render(report: &RunReport) -> String {
    let mut body = String::new();
    if let Some(replay) = &report.settings.replay {
        body.push_str(&pre(run_text::replay_text(replay).trim()));
    }
    let mut contents: Vec<(String, String)> = Vec::new();
    for (i, test) in report.tests.iter().enumerate() {
        let id = format!("test-{}", i + 1);
        body.push_str(&section(&id, &test_title(test), &test_body(test)));
        contents.push((id, test_title(test)));
    }
    if report.tests.is_empty() {
        body.push_str("<p>No test ran (the run was interrupted before its first).</p>");
    }
    body.push_str(&section(
        "plots",
        "Response time over the run",
        &heatmap(report),
    ));
    contents.push(("plots".into(), "plots".into()));
    let extra = extras(report);
    if !extra.is_empty() {
        body.push_str(&section("summaries", "Repeats and contrasts", &extra));
        contents.push(("summaries".into(), "repeats and contrasts".into()));
    }
    if let Some(merge) = &report.merge {
        body.push_str(&section("shards", "Shards", &super::merge::shards(merge)));
        contents.push(("shards".into(), "shards".into()));
    }
    body.push_str(&page::about(&report.header, &fields(&report.settings)));
    contents.push(("about".into(), "command line and versions".into()));
    let contents: Vec<(&str, &str)> = contents
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let names: Vec<&str> = report.tests.iter().map(|t| t.name.as_str()).collect();
    let kind = if report.merge.is_some() {
        "merged run"
    } else {
        "run"
    };
    let title = format!("tailrate {kind}: {}", names.join(", "));
    let subtitle = format!(
        "{} against {}{}",
        report.header.tool,
        report.header.server.endpoint,
        started(report).map_or_else(String::new, |t| format!(", started {t}"))
    );
    page::document(&title, &subtitle, &contents, &body)
}

/// When the first test started, in UTC, when the report says.
fn started(report: &RunReport) -> Option<String> {
    utc(report.tests.first()?.started_at_unix_secs)
}

/// `secs` after the Unix epoch in UTC, to the second; `None` outside 1970 to 9999 (the
/// years RFC 3339 writes: a file may hold any number).
fn utc(secs: f64) -> Option<String> {
    /// The first second of the year 10000.
    const YEAR_10000: f64 = 253_402_300_800.0;
    if !(secs.is_finite() && secs > 0.0 && secs < YEAR_10000) {
        return None;
    }
    let at = std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs_f64(secs))?;
    Some(humantime::format_rfc3339_seconds(at).to_string())
}

/// `GET at 5000 req/s (repeat 2)`.
fn test_title(test: &TestReport) -> String {
    let mut title = test.name.clone();
    if let Some(rate) = test.target_rate_per_sec {
        title.push_str(&format!(" at {rate:.0} req/s"));
    }
    if let Some(r) = test.repeat {
        title.push_str(&format!(" (repeat {r})"));
    }
    title
}

/// Everything about one test, its answer first.
fn test_body(test: &TestReport) -> String {
    let mut html = answer(test);
    if let Some(slo) = &test.slo {
        html.push_str("<h3>Objectives</h3>");
        let verdict = slo.verdict.map_or("-", |v| v.name());
        html.push_str(&format!(
            "<p>{} {}</p>",
            badge(verdict),
            esc(&crate::export::objective_text::verdicts(slo))
        ));
    }
    html.push_str("<h3>Percentiles with 95% intervals (ms)</h3>");
    html.push_str(&percentile_table(test));
    html.push_str("<h3>Requests</h3>");
    html.push_str(&counts(test));
    html.push_str("<h3>Self-checks</h3>");
    html.push_str(&checks(test));
    html.push_str("<h3>The server's view</h3>");
    html.push_str(&match &test.server {
        Some(view) => pre_wrapped(&run_text::server_view_text(view)),
        None => "<p>Not read (--no-server-stats, or the server did not answer).</p>".into(),
    });
    html.push_str("<h3>The host</h3>");
    html.push_str(&match &test.host {
        Some(h) => pre_wrapped(&run_text::host_text(h)),
        None => "<p>Not measured (--no-host-stats).</p>".into(),
    });
    html
}

/// The answer: what the text report leads with, laid out as figures.
fn answer(test: &TestReport) -> String {
    let lead = match test.target_rate_per_sec {
        Some(target) => format!(
            "Open loop at {target:.0} req/s: response time from each request's intended send \
             (ms, 95% intervals)"
        ),
        None => format!(
            "Closed loop: {:.0} replies/s; response time (ms, 95% intervals)",
            test.throughput_per_sec
        ),
    };
    let class = if test.valid { "answer" } else { "answer bad" };
    let mut html = format!(
        "<div class=\"{class}\"><p class=\"lead\">{}</p>",
        esc(&lead)
    );
    match headline_values(test.response(), PRECISION) {
        Some(values) => {
            html.push_str("<div class=\"stats\">");
            for v in values {
                html.push_str(&format!(
                    "<div class=\"stat\"><span class=\"label\">{}</span>\
                     <span class=\"value\">{}</span><span class=\"unit\">ms</span>\
                     <span class=\"ci\">{}</span></div>",
                    esc(&v.label),
                    esc(&v.value_ms),
                    esc(if v.interval_ms.is_empty() {
                        "no interval"
                    } else {
                        &v.interval_ms
                    })
                ));
            }
            html.push_str("</div>");
        }
        None => html.push_str("<p>n/a: no replies</p>"),
    }
    if test.target_rate_per_sec.is_some() {
        let p99 = |metric: Metric| {
            test.latency
                .get(&metric)
                .filter(|l| l.count > 0)
                .map_or("n/a".to_string(), |l| ms(l.p99_ns as f64, PRECISION))
        };
        html.push_str(&format!(
            "<p>Beside it: service p99 {} ms (from the write to the reply), lag p99 {} ms \
             (how late the generator sent).</p>",
            esc(&p99(Metric::Service)),
            esc(&p99(Metric::Lag))
        ));
        let target = test.target_rate_per_sec.unwrap_or(0.0);
        html.push_str(&format!(
            "<p>Rates: {:.1} requests/s sent (achieved, against the {target:.1}/s target), \
             {:.1} replies/s (throughput).</p>",
            test.achieved_rate_per_sec, test.throughput_per_sec
        ));
        // The schedule's own draw, in the text report's words, so the page and the text
        // say the same of a run whose achieved rate is off its target.
        if let Some(offered) = test.offered_rate_per_sec {
            html.push_str(&format!(
                "<p>{}.</p>",
                esc(&upper_first(&offered_text(offered, target)))
            ));
        }
    }
    html.push_str(&if test.valid {
        format!("<p>{} no self-check failed.</p>", badge("valid"))
    } else {
        format!("<p>{} {}</p>", badge("invalid"), esc(&test.why_invalid()))
    });
    if let Some(b) = &test.bottleneck {
        html.push_str(&format!(
            "<p>Bottleneck: <strong>{}</strong> ({})</p>",
            esc(b.verdict.name()),
            esc(&b.because)
        ));
    }
    if let Some(why) = &test.stopped_early {
        html.push_str(&format!("<p>Stopped early: {}</p>", esc(why)));
    }
    html.push_str("</div>");
    html
}

/// `text` with its first letter a capital: a line of the text report opening a paragraph.
fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// Each percentile of each metric with its interval, and the replies beyond it.
fn percentile_table(test: &TestReport) -> String {
    let columns: Vec<(&str, &Latency)> = METRICS
        .iter()
        .filter_map(|&(label, metric)| Some((label, test.latency.get(&metric)?)))
        .collect();
    let Some((_, first)) = columns.first() else {
        return "<p>No latency was recorded.</p>".into();
    };
    let mut header = vec!["percentile".to_string()];
    header.extend(columns.iter().map(|(label, _)| label.to_string()));
    header.push("k (beyond)".into());
    let rows: Vec<Vec<Cell>> = Percentile::ALL
        .iter()
        .map(|&p| {
            let mut row = vec![Cell::Text(p.label().into())];
            for (_, l) in &columns {
                row.push(Cell::NumHtml(value_with_interval(l, p)));
            }
            row.push(Cell::Num(
                first.beyond(p).map_or("-".into(), |k| k.to_string()),
            ));
            row
        })
        .collect();
    let method = first.confidence.as_ref().map_or(String::new(), |c| {
        format!("<p class=\"sub\">{}</p>", esc(&c.method))
    });
    format!("{}{method}", table(&header, &rows))
}

/// `0.273 [0.205, 0.385]`, the interval in grey; `n/a` with no replies.
fn value_with_interval(l: &Latency, p: Percentile) -> String {
    if l.count == 0 {
        return "n/a".into();
    }
    let value = ms(l.at(p).value_ns as f64, PRECISION);
    let interval = run_text::interval_text(l, p, PRECISION);
    format!(
        "{} <span class=\"ci\">{}</span>",
        esc(&value),
        esc(&interval)
    )
}

/// How every request ended, and the traffic (the server's error replies among it).
fn counts(test: &TestReport) -> String {
    let c = &test.counts;
    let pairs: Vec<(String, String)> = [
        (
            "measured",
            format!("{:.2} s (warm-up excluded)", test.measured_secs),
        ),
        ("intended", c.intended.to_string()),
        ("sent", c.sent.to_string()),
        ("completed", c.completed.to_string()),
        ("errors", c.errors.to_string()),
        ("timeouts", c.timeouts.to_string()),
        ("not sent", c.not_sent.to_string()),
        ("in flight at end", c.in_flight_at_end.to_string()),
        (
            "sent per second",
            format!("{:.1}", test.achieved_rate_per_sec),
        ),
        (
            "replies per second",
            format!("{:.1}", test.throughput_per_sec),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    format!("{}{}", facts(&pairs), pre(&run_text::traffic_text(test)))
}

/// Every self-check with its verdict; what a failure means beside it.
fn checks(test: &TestReport) -> String {
    if test.checks.is_empty() {
        return "<p>No self-checks were run on this test.</p>".into();
    }
    let header = ["verdict", "check", "what it saw", "what a failure means"].map(String::from);
    let rows: Vec<Vec<Cell>> = test
        .checks
        .iter()
        .map(|c| {
            let verdict = match c.verdict {
                Verdict::Pass => "pass",
                Verdict::Fail => "fail",
                Verdict::Skipped => "cannot check",
            };
            let meaning = if c.verdict == Verdict::Fail {
                c.meaning.clone()
            } else {
                String::new()
            };
            vec![
                Cell::Html(badge(verdict)),
                Cell::Text(c.name.clone()),
                Cell::Text(c.detail.clone()),
                Cell::Text(meaning),
            ]
        })
        .collect();
    table(&header, &rows)
}

/// The response-time heatmap of every test, or why it is missing.
fn heatmap(report: &RunReport) -> String {
    match plot::render_run(report, None) {
        Ok(charts) => charts
            .iter()
            .map(|c| inline_svg(&c.svg, "Response-time heatmap of the run"))
            .collect(),
        Err(e) => format!(
            "<p>The heatmap could not be drawn: {}</p>",
            esc(&e.to_string())
        ),
    }
}

/// `--repeat`'s summaries and `--contrast`'s tables, as the text prints them.
fn extras(report: &RunReport) -> String {
    let mut text = String::new();
    for summary in &report.repeats {
        text.push_str(&summary.text(PRECISION));
        text.push('\n');
    }
    for contrast in &report.contrasts {
        let mut out = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = contrast.write_text(&mut out);
        text.push_str(&String::from_utf8_lossy(&out));
    }
    if text.is_empty() {
        String::new()
    } else {
        pre(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_time_is_written_in_utc_and_one_no_calendar_writes_is_left_out() {
        assert_eq!(
            utc(1_796_485_198.9).as_deref(),
            Some("2026-12-05T15:39:58Z")
        );
        for secs in [0.0, -5.0, 1e308, f64::NAN, f64::INFINITY, 253_402_300_800.0] {
            assert_eq!(utc(secs), None, "{secs}");
        }
    }
}
