//! The latency-vs-rate chart read as a reader sees it, on real sweeps edited to plant a
//! case: an overlay's capacity labels inside the plot (off the legend) and each sweep's
//! objective in its own colour, the floor's label clear of the markers, and each rate's
//! verdict symbol and the saturation shading the ones the steps' table and the text say.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tailrate::export::plot;

use super::harness::{RedisServer, assert_success, read_json, run_tailrate};
use super::sweep::short_sweep;

/// One SVG element: its name, its attributes, and its text (for `<text>`).
struct Element {
    name: String,
    attrs: HashMap<String, String>,
    text: String,
}

impl Element {
    fn num(&self, key: &str) -> f64 {
        self.attrs
            .get(key)
            .and_then(|v| v.trim_end_matches("px").parse().ok())
            .unwrap_or_else(|| panic!("<{}> has no number {key}: {:?}", self.name, self.attrs))
    }

    fn attr(&self, key: &str) -> &str {
        self.attrs.get(key).map_or("", String::as_str)
    }

    /// A `<text>`'s box (left, top, right, bottom), its width estimated generously at
    /// 0.6 of its font size a character.
    fn text_box(&self) -> (f64, f64, f64, f64) {
        let size = self.num("font-size");
        let width = 0.6 * size * self.text.chars().count() as f64;
        let (x, y) = (self.num("x"), self.num("y"));
        let left = match self.attr("text-anchor") {
            "end" => x - width,
            "middle" => x - width / 2.0,
            _ => x,
        };
        let top = match self.attr("dy") {
            "0.76em" => y,
            "0.5ex" => y - size / 2.0,
            _ => y - size,
        };
        (left, top, left + width, top + size)
    }
}

/// Every element of `svg`, in order.
fn elements(svg: &str) -> Vec<Element> {
    svg.split('<')
        .skip(1)
        .filter(|chunk| !chunk.starts_with('/') && !chunk.starts_with('?'))
        .map(|chunk| {
            let (tag, body) = chunk.split_once('>').unwrap();
            let tag = tag.trim_end_matches('/');
            let (name, mut rest) = tag.split_once(' ').unwrap_or((tag, ""));
            let mut attrs = HashMap::new();
            while let Some((key, tail)) = rest.split_once("=\"") {
                let (value, tail) = tail.split_once('"').unwrap();
                attrs.insert(key.trim().to_string(), value.to_string());
                rest = tail;
            }
            Element {
                name: name.to_string(),
                attrs,
                text: body.trim().to_string(),
            }
        })
        .collect()
}

/// The left edge of the legend panel: its heading is drawn 8 px inside it.
fn legend_left(all: &[Element]) -> f64 {
    let heading = all
        .iter()
        .find(|e| e.name == "text" && e.text == "response time")
        .expect("no legend heading");
    heading.num("x") - 8.0
}

/// Writes each of `reports` as `NAME.json` in `dir`, plots them together into `dir/out`
/// and returns the latency-vs-rate chart.
fn plotted(dir: &Path, reports: &[(&str, &Value)]) -> String {
    let mut args: Vec<String> = vec!["plot".into()];
    for (name, report) in reports {
        let path: PathBuf = dir.join(format!("{name}.json"));
        std::fs::write(&path, serde_json::to_vec(report).unwrap()).unwrap();
        args.push(path.to_str().unwrap().into());
    }
    let out = dir.join("out");
    args.extend(["--out".into(), out.to_str().unwrap().into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_success(&run_tailrate(&args));
    std::fs::read_to_string(out.join(plot::LATENCY_VS_RATE)).unwrap()
}

#[test]
fn an_overlays_capacity_labels_stay_off_the_legend_and_each_sweeps_objective_has_its_colour() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    short_sweep(&server, dir.path());
    // A capacity at the lower of the two rates, in the chart's left half, with a band to
    // the higher and what limited it: a label about as long as a real sweep's.
    let mut report = read_json(&dir.path().join("sweep.json"));
    report["slo"]["capacity_per_sec"] = json!(2000.0);
    report["slo"]["capacity_band_per_sec"] = json!([2000.0, 4000.0]);
    report["slo"]["limited_by"] = json!("generator");
    let svg = plotted(
        dir.path(),
        &[
            ("before-the-upgrade", &report),
            ("after-the-upgrade", &report),
        ],
    );
    let all = elements(&svg);
    let legend = legend_left(&all);
    let labels: Vec<&Element> = all
        .iter()
        .filter(|e| e.name == "text" && e.text.contains("capacity") && e.num("x") < legend)
        .collect();
    assert!(
        labels.len() >= 2,
        "{:?}",
        labels.iter().map(|e| &e.text).collect::<Vec<_>>()
    );
    for label in &labels {
        let (left, _, right, _) = label.text_box();
        assert!(
            left >= 0.0 && right <= legend,
            "{:?} spans {left:.0}..{right:.0} px, the legend starts at {legend} px",
            label.text
        );
    }
    for (a, b) in labels.iter().zip(labels.iter().skip(1)) {
        let (a, b) = (a.text_box(), b.text_box());
        assert!(
            a.3 <= b.1 || b.3 <= a.1 || a.2 <= b.0 || b.2 <= a.0,
            "{a:?} {b:?}"
        );
    }
    // Both sweeps hold the same objective: two dashed lines at its height, each in its
    // sweep's colour, named in the legend with the sweep's label.
    let texts: Vec<&str> = all.iter().map(|e| e.text.as_str()).collect();
    for label in ["before-the-upgrade", "after-the-upgrade"] {
        let entry = format!("{label} SLO p99.9 ≤ 100 ms");
        assert!(texts.contains(&entry.as_str()), "no {entry:?} in {texts:?}");
    }
    let slo_y = horizontal_dash_rows(&all, legend);
    let colors: Vec<&String> = slo_y.values().flatten().collect();
    assert!(
        slo_y.values().any(|c| c.len() >= 2),
        "the objective lines share one colour: {slo_y:?}"
    );
    assert!(colors.len() >= 2, "{slo_y:?}");
}

/// The colours of the dashes (short horizontal strokes, 2 px wide) along each row of the
/// plot, by row: an objective's dashed line is a row of them.
fn horizontal_dash_rows(all: &[Element], legend: f64) -> HashMap<i64, Vec<String>> {
    let mut rows: HashMap<i64, Vec<String>> = HashMap::new();
    let mut counts: HashMap<(i64, String), usize> = HashMap::new();
    for e in all
        .iter()
        .filter(|e| e.name == "polyline" || e.name == "line")
    {
        if e.attr("stroke-width") != "2" {
            continue;
        }
        let points: Vec<(f64, f64)> = if e.name == "line" {
            vec![(e.num("x1"), e.num("y1")), (e.num("x2"), e.num("y2"))]
        } else {
            e.attr("points")
                .split_whitespace()
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect()
        };
        let [(x1, y1), (x2, y2)] = points[..] else {
            continue;
        };
        if y1 == y2 && (x2 - x1).abs() <= 12.0 && x1.max(x2) < legend {
            *counts
                .entry((y1 as i64, e.attr("stroke").to_string()))
                .or_default() += 1;
        }
    }
    // A dashed line across the plot is tens of dashes; a marker's stroke is one or two.
    for ((y, color), n) in counts {
        if n >= 10 {
            rows.entry(y).or_default().push(color);
        }
    }
    rows
}

#[test]
fn the_floors_label_covers_no_marker() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    short_sweep(&server, dir.path());
    let mut report = read_json(&dir.path().join("sweep.json"));
    // The floor at the lowest rate, and a run just above that rate whose percentiles
    // all sit a little over the floor: its markers where the label used to go.
    let lowest = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "step" && r["target_rate_per_sec"] == json!(2000.0))
        .unwrap()
        .clone();
    let floor_ns = lowest["report"]["latency"]["response"]["p99_9_ns"]
        .as_u64()
        .unwrap();
    report["slo"]["landmarks"]["floor"] =
        json!({"rate_per_sec": 2000.0, "value_ns": floor_ns, "exceedance": null});
    let mut near = lowest;
    near["target_rate_per_sec"] = json!(2150.0);
    near["report"]["target_rate_per_sec"] = json!(2150.0);
    let above = (floor_ns as f64 * 1.2) as u64;
    for key in [
        "p50_ns",
        "p90_ns",
        "p99_ns",
        "p99_9_ns",
        "p99_99_ns",
        "max_ns",
    ] {
        near["report"]["latency"]["response"][key] = json!(above);
    }
    report["runs"].as_array_mut().unwrap().push(near);
    let svg = plotted(dir.path(), &[("sweep", &report)]);
    let all = elements(&svg);
    let label = all
        .iter()
        .find(|e| e.name == "text" && e.text.starts_with("floor "))
        .expect("no floor label");
    let (left, top, right, bottom) = label.text_box();
    let legend = legend_left(&all);
    let markers: Vec<&Element> = all
        .iter()
        .filter(|e| e.name == "circle" && e.num("cx") < legend)
        // The floor's own ring (6 px, gray, unfilled) is what the label names.
        .filter(|e| !(e.num("r") == 6.0 && e.attr("fill") == "none"))
        .collect();
    assert!(markers.len() > 6, "{} markers", markers.len());
    for m in markers {
        let (cx, cy, r) = (m.num("cx"), m.num("cy"), m.num("r"));
        let apart = cx + r <= left || cx - r >= right || cy + r <= top || cy - r >= bottom;
        assert!(
            apart,
            "{:?} ({left:.0},{top:.0})-({right:.0},{bottom:.0}) covers the marker at ({cx},{cy}) r {r}",
            label.text
        );
    }
}

#[test]
fn each_rates_symbol_and_the_saturation_shading_are_what_the_table_and_text_say() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    short_sweep(&server, dir.path());
    let mut report = read_json(&dir.path().join("sweep.json"));
    // The higher rate: no run carried it (fail, in the table) while most runs were the
    // generator's and its objective's check was undecided, as at 250k-370k/s in a real
    // sweep. Every run's server saturated by its own clock from the lowest rate on, but
    // the saturation the text names is the higher rate.
    let steps = report["steps"].as_array_mut().unwrap();
    let last = steps.last_mut().unwrap();
    last["slo"]["verdict"] = json!("fail");
    last["slo"]["generator_limited"] = json!(true);
    last["slo"]["checks"][0]["verdict"] = json!("uncertain");
    for run in report["runs"].as_array_mut().unwrap() {
        if run["report"]["bottleneck"].is_object() {
            run["report"]["bottleneck"]["server_busy"] = json!(1.0);
        }
    }
    let highest =
        report["steps"].as_array().unwrap().last().unwrap()["target_rate_per_sec"].clone();
    report["slo"]["landmarks"]["saturation_per_sec"] = highest;
    let table: Vec<String> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["slo"]["verdict"].as_str().unwrap().to_string())
        .collect();
    let svg = plotted(dir.path(), &[("sweep", &report)]);
    let all = elements(&svg);
    let legend = legend_left(&all);
    let inside = |e: &&Element| {
        let x = e.attrs.get("x").or(e.attrs.get("cx")).or(e.attrs.get("x1"));
        x.and_then(|x| x.parse::<f64>().ok())
            .is_some_and(|x| x < legend)
    };
    // The verdict symbols on the objective's line: green circles (pass), gray squares
    // (uncertain), red crosses (fail, two strokes each).
    let count =
        |pred: &dyn Fn(&Element) -> bool| all.iter().filter(inside).filter(|e| pred(e)).count();
    let drawn = [
        count(&|e| e.name == "circle" && e.attr("fill") == "#00823C" && e.num("r") == 4.0),
        count(&|e| {
            e.name == "rect" && e.attr("fill") == "#828282" && (7.0..=9.0).contains(&e.num("width"))
        }),
        count(&|e| e.name == "line" && e.attr("stroke") == "#C81E1E") / 2,
    ];
    let said = ["pass", "uncertain", "fail"].map(|v| table.iter().filter(|t| *t == v).count());
    assert_eq!(
        drawn, said,
        "symbols (pass, uncertain, fail) against the table's {table:?}"
    );
    // The shading starts at the saturation the text names, where the fail symbol is.
    let shade: Vec<&Element> = all
        .iter()
        .filter(|e| e.name == "rect" && e.attr("fill") == "#FCEAEA")
        .collect();
    assert_eq!(shade.len(), 1, "one shaded span");
    let cross = all
        .iter()
        .filter(inside)
        .find(|e| e.name == "line" && e.attr("stroke") == "#C81E1E")
        .expect("no fail symbol");
    let at = (cross.num("x1") + cross.num("x2")) / 2.0;
    assert!(
        (shade[0].num("x") - at).abs() <= 1.0,
        "shading from {} px, the highest rate at {at} px",
        shade[0].num("x")
    );
    assert!(
        all.iter()
            .any(|e| e.name == "text" && e.text == "saturation")
    );
    // With no saturation in the text, none on the chart, whatever the server's clock said.
    report["slo"]["landmarks"]["saturation_per_sec"] = Value::Null;
    let svg = plotted(dir.path(), &[("sweep", &report)]);
    assert!(!svg.contains("#FCEAEA"), "shaded with no saturation named");
}
