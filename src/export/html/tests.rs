//! Unit tests of the HTML pages, on reports made here: what each page opens with, that
//! text from outside is escaped, and that nothing names another host.

#![allow(clippy::unwrap_used)]

use crate::report::{Header, RunReport, ServerFacts, Settings};

fn settings() -> Settings {
    serde_json::from_value(serde_json::json!({
        "mode": "open", "clients": 4, "threads": 1, "pipeline": null, "data_size": 3,
        "keyspace": null, "keepalive": true, "target_rate_per_sec": 1000.0,
        "arrival": null, "pacing": null, "max_inflight": null, "requests": null,
        "duration_secs": 1.0, "warmup_secs": 0.0, "batch_latency": false
    }))
    .unwrap()
}

fn report(command_line: &[&str], error_reply: &str) -> RunReport {
    let mut test = crate::judge::fixtures::run(1000.0, 800_000, None, 1.0).report;
    test.counts.errors = 1;
    test.counts.errors_by_kind.insert("ERR".into(), 1);
    test.counts
        .error_examples
        .insert("ERR".into(), error_reply.into());
    RunReport {
        header: Header::new(
            crate::report::SCHEMA_VERSION,
            command_line.iter().map(|s| s.to_string()).collect(),
            7,
            ServerFacts {
                endpoint: "127.0.0.1:6379".into(),
                version: Some("7.0.15".into()),
                ..ServerFacts::default()
            },
        ),
        settings: settings(),
        tests: vec![test],
        contrasts: Vec::new(),
        repeats: Vec::new(),
        merge: None,
    }
}

/// Whether `html` names any other host: a URL, a protocol-relative reference, an import.
fn names_a_host(html: &str) -> bool {
    let lower = html.to_ascii_lowercase();
    [
        "http://",
        "https://",
        "src=\"//",
        "href=\"//",
        "url(",
        "@import",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

#[test]
fn a_run_page_opens_with_its_answer_and_escapes_what_came_from_outside() {
    let html = super::run(&report(
        &["tailrate", "SET", "k", "<script>alert(1)</script>"],
        "ERR <b>bold</b> & \"quoted\"",
    ));
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(
        !html.contains("<script"),
        "a tag from the command line got through"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<b>bold</b>"));
    assert!(html.contains("ERR &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;"));
    let answer = html.find("class=\"answer").unwrap();
    let table = html.find("Percentiles with 95% intervals").unwrap();
    let about = html.find("id=\"about\"").unwrap();
    assert!(answer < table && table < about);
    assert!(html.contains("7.0.15") && html.contains(env!("CARGO_PKG_VERSION")));
    assert!(!names_a_host(&html), "the page names another host");
}

#[test]
fn a_merged_run_lists_its_shards() {
    let mut merged = report(&["tailrate", "merge"], "ERR");
    let test = &merged.tests[0];
    let shard = crate::report::merged::ShardTest {
        name: test.name.clone(),
        counts: test.counts.clone(),
        achieved_rate_per_sec: 500.0,
        start_skew_ns: Some(1_000),
        response_p50_ns: 100_000,
        response_p99_ns: 800_000,
        valid: true,
    };
    merged.merge = Some(crate::report::merged::MergeSummary {
        shards: 2,
        partial: true,
        missing: vec![1],
        parts: vec![crate::report::merged::ShardPart {
            index: 0,
            report: "shard-0.json".into(),
            log: None,
            tests: vec![shard],
        }],
    });
    let html = super::run(&merged);
    assert!(html.contains("tailrate merged run"));
    assert!(html.contains("1 of 2 shards merged"), "{html}");
    assert!(html.contains("shard-0.json"));
}

#[test]
fn a_run_page_says_what_the_schedule_offered_as_the_text_report_does() {
    let mut run = report(&["tailrate", "--rate", "1000"], "ERR");
    run.tests[0].target_rate_per_sec = Some(1000.0);
    run.tests[0].offered_rate_per_sec = Some(990.0);
    let html = super::run(&run);
    // The text report's line, capitalised and escaped (its apostrophe too).
    let offered = crate::export::run_text::offered_text(990.0, 1000.0);
    let line = super::markup::esc(&format!("O{}.", &offered[1..]));
    assert!(html.contains(&line), "no offered line in the page: {html}");
    assert!(html.contains("against the 1000.0/s target"), "{html}");
    assert!(
        !html.contains("planned"),
        "the page still says planned: {html}"
    );
}
