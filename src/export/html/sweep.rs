//! The page of a sweep: the capacity line first (the capacity with its band, whether it
//! was confirmed, what limited the band, and the sentence the sweep printed), then the
//! steps by rate with their intervals, verdicts and bottlenecks (the text table's
//! cells), the plots the sweep drew (the heatmap among them), every run, the self-checks
//! that failed, the server's and the host's view of each run, and the command line,
//! versions and plan.

use super::markup::{Cell, badge, esc, fields, inline_svg, section, table};
use super::page;
use crate::export::ms;
use crate::export::plot::Chart;
use crate::export::sweep_text::steps_table;
use crate::report::sweep::{Measurement, SweepReport};
use crate::report::verdict::{Check, Verdict};

/// The page of `report`, with `charts` (what [`crate::export::plot::render_sweep`] drew
/// from it) inlined; `said` is the result's sentence an older `sweep.json` saved (see
/// [`crate::export::report::Report::Sweep`]).
pub fn render(report: &SweepReport, charts: &[Chart], said: Option<&str>) -> String {
    let mut body = answer(report, said);
    body.push_str(&section("steps", "Steps by rate", &steps(report)));
    body.push_str(&section("plots", "Plots", &plots(charts)));
    body.push_str(&section("runs", "Every run", &runs(report)));
    body.push_str(&section("checks", "Self-checks", &checks(report)));
    body.push_str(&section(
        "server",
        "The server's and the host's view of each run",
        &views(report),
    ));
    let mut more = fields(&report.plan);
    more.extend(fields(&report.settings));
    body.push_str(&page::about(&report.header, &more));
    let contents = [
        ("answer", "capacity"),
        ("steps", "steps"),
        ("plots", "plots"),
        ("runs", "runs"),
        ("checks", "self-checks"),
        ("server", "server and host"),
        ("about", "command line and versions"),
    ];
    let title = format!("tailrate sweep: {}", report.test);
    let subtitle = format!(
        "{} against {}, rates {}",
        report.header.tool, report.header.server.endpoint, report.plan.rates
    );
    page::document(&title, &subtitle, &contents, &body)
}

/// The capacity at the objectives with its band, or what a sweep without objectives
/// found; and whether the sweep ended as planned.
fn answer(report: &SweepReport, said: Option<&str>) -> String {
    let mut html = String::new();
    match &report.slo {
        Some(slo) => {
            let objectives: Vec<&str> = slo.slos.iter().map(|s| s.text.as_str()).collect();
            // A band open above makes the capacity a floor: said so in the figure itself.
            let open_above = matches!(slo.capacity_band_per_sec, Some((_, None)));
            let capacity = match slo.capacity_per_sec {
                Some(c) if open_above => format!("at least {c:.0}"),
                Some(c) => format!("{c:.0}"),
                None => "none passed".to_string(),
            };
            let band = match slo.capacity_band_per_sec {
                Some((low, Some(high))) => format!("{low:.0} to {high:.0}"),
                Some((low, None)) => format!("{low:.0} to open"),
                None => "-".into(),
            };
            let bad = slo.capacity_per_sec.is_none();
            // The estimate leads; the rate the runs showed to hold and its band follow.
            let estimate = slo
                .estimates
                .iter()
                .find(|e| e.binding)
                .map_or_else(String::new, |e| {
                    stat(
                        &format!("estimated capacity at {}", e.slo),
                        &crate::export::capacity_text::estimate_figure(e),
                        "",
                    )
                });
            html.push_str(&format!(
                "<div class=\"answer{}\"><p class=\"lead\">Capacity at {}</p>\
                 <div class=\"stats\">{estimate}{}{}{}</div>",
                if bad { " bad" } else { "" },
                esc(&objectives.join(", ")),
                stat("held at", &capacity, "req/s"),
                stat("band", &band, "req/s"),
                stat("limited by", slo.limited_by.map_or("-", |l| l.name()), ""),
            ));
            html.push_str(&format!(
                "<p>{}</p><p class=\"sentence\">{}</p>",
                if slo.confirmed {
                    format!("{} on fresh runs", badge("confirmed"))
                } else if slo.capacity_per_sec.is_some() {
                    format!("{} not confirmed on fresh runs", badge("uncertain"))
                } else {
                    badge("fail")
                },
                esc(&crate::export::capacity_text::said(report, said).unwrap_or_default())
            ));
        }
        None => html.push_str(
            "<div class=\"answer\"><p class=\"lead\">No objective was given (--slo), so no \
             capacity was searched: the steps below say what each rate did.</p>",
        ),
    }
    let invalid = report.runs.iter().filter(|m| !m.report.valid).count();
    html.push_str(&if invalid == 0 {
        format!(
            "<p>{} all {} runs passed their self-checks.</p>",
            badge("valid"),
            report.runs.len()
        )
    } else {
        format!(
            "<p>{} {invalid} of {} runs failed a self-check: their numbers are suspect as \
             <a href=\"#checks\">the self-checks</a> say.</p>",
            badge("invalid"),
            report.runs.len()
        )
    });
    let ended = if report.interrupted {
        format!("{} before the plan ended", badge("interrupted"))
    } else if report.complete {
        "Every planned run ran.".to_string()
    } else {
        format!("{} still running when written", badge("partial"))
    };
    html.push_str(&format!("<p>{ended}</p>"));
    if let Some(why) = &report.stopped {
        html.push_str(&format!("<p>Steps stopped early: {}</p>", esc(why)));
    }
    html.push_str("</div>");
    section("answer", "The answer", &html)
}

/// One figure of the answer.
fn stat(label: &str, value: &str, unit: &str) -> String {
    format!(
        "<div class=\"stat\"><span class=\"label\">{}</span><span class=\"value\">{}</span>\
         <span class=\"unit\">{}</span></div>",
        esc(label),
        esc(value),
        esc(unit)
    )
}

/// The text's table of the steps by rate, its verdicts as badges.
fn steps(report: &SweepReport) -> String {
    let Some(t) = steps_table(report) else {
        return "<p>No open-loop step finished.</p>".into();
    };
    let verdict_column = t.header.len().saturating_sub(2);
    let rows: Vec<Vec<Cell>> = t
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .map(|(i, cell)| match i {
                    i if i < t.numeric => Cell::Num(cell.clone()),
                    i if i == verdict_column && cell != "-" => Cell::Html(badge(cell)),
                    _ => Cell::Text(cell.clone()),
                })
                .collect()
        })
        .collect();
    // The text's narrow "95%" column reads better as what it is.
    let header: Vec<String> = t
        .header
        .iter()
        .map(|h| match h.as_str() {
            "95%" => "95% interval".to_string(),
            other => other.to_string(),
        })
        .collect();
    format!(
        "<p class=\"sub\">{}</p>{}",
        esc(t.caption.trim_end_matches(':')),
        table(&header, &rows)
    )
}

/// Every chart, inlined, named by what it shows.
fn plots(charts: &[Chart]) -> String {
    charts
        .iter()
        .map(|c| {
            let name = c.file_name.trim_end_matches(".svg").replace('-', " ");
            let mut html = inline_svg(&c.svg, &name);
            // The caption goes inside the figure, before its end.
            if let Some(at) = html.rfind("</figure>") {
                html.insert_str(
                    at,
                    &format!(
                        "<figcaption>{} ({})</figcaption>",
                        esc(&name),
                        esc(&c.file_name)
                    ),
                );
            }
            html
        })
        .collect()
}

/// `step`, `search`...: the run's kind and rate or connections.
fn what(m: &Measurement) -> String {
    match m.target_rate_per_sec {
        Some(r) => format!("{} at {r:.0}/s", m.kind.name()),
        None => format!("{} with {} connections", m.kind.name(), m.connections),
    }
}

/// Every run in order, with its percentiles, verdict, bottleneck and validity.
fn runs(report: &SweepReport) -> String {
    let header = [
        "run",
        "repeat",
        "achieved/s",
        "replies/s",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "SLO (this run alone)",
        "bottleneck",
        "valid",
    ]
    .map(String::from);
    let rows: Vec<Vec<Cell>> = report
        .runs
        .iter()
        .map(|m| {
            let r = &m.report;
            let l = r.response().filter(|l| l.count > 0);
            let at = |f: fn(&crate::report::Latency) -> u64| {
                l.map_or("n/a".to_string(), |l| ms(f(l) as f64, 3))
            };
            let slo = m.slo.as_ref().and_then(|s| s.verdict).map(|v| v.name());
            vec![
                Cell::Text(what(m)),
                Cell::Num(m.repeat.saturating_add(1).to_string()),
                Cell::Num(format!("{:.0}", r.achieved_rate_per_sec)),
                Cell::Num(format!("{:.0}", r.throughput_per_sec)),
                Cell::Num(at(|l| l.p50_ns)),
                Cell::Num(at(|l| l.p99_ns)),
                Cell::Num(at(|l| l.p99_9_ns)),
                Cell::Num(at(|l| l.max_ns)),
                slo.map_or(Cell::Text("-".into()), |v| Cell::Html(badge(v))),
                Cell::Text(
                    r.bottleneck
                        .as_ref()
                        .map_or("-", |b| b.verdict.name())
                        .to_string(),
                ),
                Cell::Html(badge(if r.valid { "valid" } else { "invalid" })),
            ]
        })
        .collect();
    format!(
        "<details open><summary>{} runs</summary>{}</details>",
        report.runs.len(),
        table(&header, &rows)
    )
}

/// The self-checks that failed: one row per check with the runs it failed in and what
/// its first failure means, then (folded) every failure run by run; or that none did.
fn checks(report: &SweepReport) -> String {
    let failures: Vec<(&Measurement, &Check)> = report
        .runs
        .iter()
        .flat_map(|m| {
            m.report
                .checks
                .iter()
                .filter(|c| c.verdict == Verdict::Fail)
                .map(move |c| (m, c))
        })
        .collect();
    if failures.is_empty() {
        let checked = report
            .runs
            .iter()
            .map(|m| m.report.checks.len())
            .sum::<usize>();
        return format!(
            "<p>{} every one of the {checked} self-checks of the {} runs passed or did not apply.</p>",
            badge("pass"),
            report.runs.len()
        );
    }
    // Checks in the order they first failed.
    let mut names: Vec<&str> = Vec::new();
    for (_, c) in &failures {
        if !names.contains(&c.name.as_str()) {
            names.push(&c.name);
        }
    }
    let header = ["check", "failed in", "runs", "what its first failure means"].map(String::from);
    let rows: Vec<Vec<Cell>> = names
        .iter()
        .map(|name| {
            let of_name: Vec<&(&Measurement, &Check)> =
                failures.iter().filter(|(_, c)| c.name == *name).collect();
            let mut runs: Vec<String> = Vec::new();
            for (m, _) in &of_name {
                let w = what(m);
                if !runs.contains(&w) {
                    runs.push(w);
                }
            }
            vec![
                Cell::Text(name.to_string()),
                Cell::Num(format!("{} of {} runs", of_name.len(), report.runs.len())),
                Cell::Text(runs.join(", ")),
                Cell::Text(of_name[0].1.meaning.clone()),
            ]
        })
        .collect();
    let detail_header = ["run", "check", "what it saw", "what it means"].map(String::from);
    let detail: Vec<Vec<Cell>> = failures
        .iter()
        .map(|(m, c)| {
            vec![
                Cell::Text(what(m)),
                Cell::Text(c.name.clone()),
                Cell::Text(c.detail.clone()),
                Cell::Text(c.meaning.clone()),
            ]
        })
        .collect();
    format!(
        "{}<details><summary>every failure, run by run ({})</summary>{}</details>",
        table(&header, &rows),
        failures.len(),
        table(&detail_header, &detail)
    )
}

/// Per run: the server's count and CPU, and the host's waits for a CPU.
fn views(report: &SweepReport) -> String {
    let header = [
        "run",
        "server calls",
        "sent",
        "exec mean µs",
        "server CPU",
        "generator waits",
        "server waits",
        "steal ms",
    ]
    .map(String::from);
    let share = |s: f64| format!("{:.1}%", 100.0 * s);
    let rows: Vec<Vec<Cell>> = report
        .runs
        .iter()
        .map(|m| {
            let view = m.report.server.as_ref();
            let command = view.and_then(|v| v.commands.first());
            let host = m.report.host.as_ref();
            let dash = || "-".to_string();
            vec![
                Cell::Text(what(m)),
                Cell::Num(command.map_or_else(dash, |c| c.calls.to_string())),
                Cell::Num(command.map_or_else(dash, |c| c.sent_by_tailrate.to_string())),
                Cell::Num(
                    command
                        .and_then(|c| c.mean_exec_usec)
                        .map_or_else(dash, |u| format!("{u:.2}")),
                ),
                Cell::Num(
                    view.and_then(|v| v.cpu_utilisation)
                        .map_or_else(dash, |u| format!("{:.0}% of a core", 100.0 * u)),
                ),
                Cell::Num(
                    host.and_then(|h| h.generator.as_ref())
                        .map_or_else(dash, |w| share(w.run_queue_wait_share)),
                ),
                Cell::Num(
                    host.and_then(|h| h.server.as_ref())
                        .map_or_else(dash, |w| share(w.run_queue_wait_share)),
                ),
                Cell::Num(
                    host.and_then(|h| h.steal_ms)
                        .map_or_else(dash, |s| format!("{s:.0}")),
                ),
            ]
        })
        .collect();
    format!(
        "<p class=\"sub\">Server: INFO commandstats and INFO cpu read around each run; \
         waits: the share of the run each spent waiting for a CPU (docs/host.md).</p>\
         <details open><summary>{} runs</summary>{}</details>",
        report.runs.len(),
        table(&header, &rows)
    )
}
