//! A sweep as `sweep.json` holds it: the model's fields in the model's order, the SLO
//! result's words put in by the exporter after its fields (`budget_ended`, `summary`),
//! since the model keeps them as data (`slo.budget`, `slo.span`). A reader of an older
//! file, which has the words but not that data, finds the words in the same keys.
//! Reading it back is `report::sweep::parse`'s, which leaves the words out.

use serde::Serialize;

use crate::report::sweep::{Measurement, PlanRecord, SloResult, StepSummary, SweepReport};
use crate::report::{Header, Settings};

use super::capacity_text;

/// `report` as pretty JSON with a final newline.
pub fn to_bytes(report: &SweepReport) -> std::io::Result<Vec<u8>> {
    super::json::to_bytes(&Json::of(report, None))
}

/// `sweep.json`'s layout, borrowed from the report: the model's, field for field, with
/// the SLO result's in `SloJson`.
#[derive(Serialize)]
pub struct Json<'a> {
    #[serde(flatten)]
    header: &'a Header,
    settings: &'a Settings,
    test: &'a str,
    plan: &'a PlanRecord,
    runs: &'a [Measurement],
    steps: &'a [StepSummary],
    slo: Option<SloJson<'a>>,
    stopped: &'a Option<String>,
    interrupted: bool,
    partial: &'a Option<Measurement>,
    complete: bool,
}

impl<'a> Json<'a> {
    /// The layout of `report`, its SLO result's words rendered; `said` is the sentence
    /// an older file saved, kept when the result cannot be said again.
    pub fn of(report: &'a SweepReport, said: Option<&str>) -> Self {
        Json {
            header: &report.header,
            settings: &report.settings,
            test: &report.test,
            plan: &report.plan,
            runs: &report.runs,
            steps: &report.steps,
            slo: report.slo.as_ref().map(|slo| SloJson {
                slo,
                budget_ended: slo.budget.as_ref().map(capacity_text::budget_ended),
                summary: capacity_text::said(report, said).unwrap_or_default(),
            }),
            stopped: &report.stopped,
            interrupted: report.interrupted,
            partial: &report.partial,
            complete: report.complete,
        }
    }
}

/// The SLO result's fields, then its words.
#[derive(Serialize)]
struct SloJson<'a> {
    #[serde(flatten)]
    slo: &'a SloResult,
    /// What `--budget` cut short, said.
    #[serde(skip_serializing_if = "Option::is_none")]
    budget_ended: Option<String>,
    /// The result in one sentence.
    summary: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::report::sweep::{BudgetEnded, Disturbed, Landmarks, Limit, SearchSpan};

    /// The layout is the model's own, field for field and in its order, with the two
    /// words after: the model's JSON is the layout's with their lines taken out, and the
    /// model read back from the layout is the model.
    #[test]
    fn the_slo_layout_is_the_models_with_its_words_after() {
        let slo = SloResult {
            slos: vec![crate::config::slo::parse_slo("p99<=1ms").unwrap()],
            capacity_per_sec: Some(2000.0),
            capacity_band_per_sec: Some((2000.0, Some(3000.0))),
            limited_by: Some(Limit::Noise),
            uncertain_per_sec: vec![2500.0],
            searched_per_sec: Some(2000.0),
            first_failing_per_sec: Some(3000.0),
            confirmed: true,
            low_load_failing_per_sec: vec![500.0],
            capacity_exceedance: None,
            landmarks: Landmarks::default(),
            estimates: Vec::new(),
            disturbed: Some(Disturbed::default()),
            budget: Some(BudgetEnded {
                budget_secs: 20.0,
                implied: false,
                deciding: None,
            }),
            visits: 12,
            visit_secs: 24.0,
            capacity_speed: None,
            span: Some(SearchSpan {
                lowest_per_sec: 500.0,
                highest_per_sec: 3000.0,
                uncertain_runs: vec![4],
                capacity_objective: None,
            }),
        };
        let json = SloJson {
            slo: &slo,
            budget_ended: slo.budget.as_ref().map(capacity_text::budget_ended),
            summary: "said".into(),
        };
        let layout = serde_json::to_string_pretty(&json).unwrap();
        assert!(layout.contains("\"budget_ended\": \"--budget 20 s ended before"));
        assert!(layout.ends_with("  \"summary\": \"said\"\n}"), "{layout}");
        let without: Vec<&str> = layout
            .lines()
            .filter(|l| !l.contains("\"budget_ended\"") && !l.contains("\"summary\""))
            .collect();
        let model = serde_json::to_string_pretty(&slo).unwrap();
        // The model's last field ends its line with a comma here, the words following.
        assert_eq!(without.join("\n").replace(",\n}", "\n}"), model, "{layout}");
        let back: SloResult = serde_json::from_str(&layout).unwrap();
        assert_eq!(back, slo);
    }
}
