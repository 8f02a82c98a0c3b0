//! The live `/metrics` page (`--metrics-listen`): [`render`] turns the [`Exposition`]
//! model into the Prometheus text exposition format (version 0.0.4), through
//! prometheus-client's encoder, which owns the format's escaping, number spelling and
//! histogram layout. Which metrics there are, their labels and buckets: docs/metrics.md.

pub mod model;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

pub use model::{BUCKETS_NS, Exposition, FixedHistogram, OUTCOMES, TestSeries};

/// The `Content-Type` of what [`render`] writes.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// The page for `exposition`, in the Prometheus text format.
pub fn render(exposition: &Exposition) -> Vec<u8> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Page(exposition.clone())));
    let mut text = String::new();
    // Writing into a String fails only if a metric's own encoding does, which ours do not.
    if prometheus_client::encoding::prometheus_text::encode(&mut text, &registry).is_err() {
        text.clear();
    }
    text.into_bytes()
}

/// The model as a prometheus-client collector: encoded afresh at each render.
#[derive(Debug)]
struct Page(Exposition);

/// The labels of a series: `run`, the test's scope, then the series' own.
fn labels<'a>(
    run: &'a str,
    test: &'a TestSeries,
    own: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut all = vec![("run", run)];
    all.extend(test.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    all.extend_from_slice(own);
    all
}

/// Nanoseconds as seconds, the unit Prometheus's conventions ask for.
fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

impl Page {
    /// One family of gauges, a sample per test that `value` gives one for.
    fn gauges(
        &self,
        encoder: &mut DescriptorEncoder<'_>,
        name: &str,
        help: &str,
        value: impl Fn(&TestSeries) -> Option<f64>,
    ) -> std::fmt::Result {
        let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
        for test in &self.0.tests {
            if let Some(v) = value(test) {
                let set = labels(&self.0.run, test, &[]);
                metric.encode_family(&set)?.encode_gauge(&v)?;
            }
        }
        Ok(())
    }

    /// The counters: requests intended, sent, and by outcome.
    fn counters(&self, encoder: &mut DescriptorEncoder<'_>) -> std::fmt::Result {
        self.command_counter(
            encoder,
            "tailrate_requests_intended",
            "Requests the schedule produced (open loop) or the driver started (closed loop), in the measured window.",
            |c| c.intended,
        )?;
        self.command_counter(
            encoder,
            "tailrate_requests_sent",
            "Requests written to a socket, in the measured window.",
            |c| c.sent,
        )?;
        let run = self.0.run.as_str();
        let mut ended = encoder.encode_descriptor(
            "tailrate_requests",
            "Requests by how they ended (completed, error, timeout, not_sent), in the measured window.",
            None,
            MetricType::Counter,
        )?;
        for test in &self.0.tests {
            for c in &test.commands {
                for (outcome, n) in OUTCOMES.iter().zip(c.outcomes) {
                    let set = labels(run, test, &[("command", &c.command), ("outcome", outcome)]);
                    ended
                        .encode_family(&set)?
                        .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
                }
            }
        }
        Ok(())
    }

    /// One counter family `name` with a series per test and command, of `value`.
    fn command_counter(
        &self,
        encoder: &mut DescriptorEncoder<'_>,
        name: &str,
        help: &str,
        value: impl Fn(&model::CommandSeries) -> u64,
    ) -> std::fmt::Result {
        let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
        for test in &self.0.tests {
            for c in &test.commands {
                let set = labels(&self.0.run, test, &[("command", &c.command)]);
                family
                    .encode_family(&set)?
                    .encode_counter::<NoLabelSet, _, u64>(&value(c), None)?;
            }
        }
        Ok(())
    }

    /// The latency histograms, per command and metric.
    fn histograms(&self, encoder: &mut DescriptorEncoder<'_>) -> std::fmt::Result {
        let mut latency = encoder.encode_descriptor(
            "tailrate_latency",
            "Latency of each request by metric (response, service, lag, queue_wait), in fixed buckets from the run's HdrHistograms.",
            Some(&Unit::Seconds),
            MetricType::Histogram,
        )?;
        for test in &self.0.tests {
            for c in &test.commands {
                for (metric, h) in &c.latency {
                    let set = labels(
                        &self.0.run,
                        test,
                        &[("command", &c.command), ("metric", metric.name())],
                    );
                    let buckets: Vec<(f64, u64)> = BUCKETS_NS
                        .iter()
                        .map(|&b| secs(b))
                        .chain([f64::INFINITY])
                        .zip(h.buckets)
                        .collect();
                    let sum = h.sum_ns as f64 / 1e9;
                    latency
                        .encode_family(&set)?
                        .encode_histogram::<NoLabelSet>(sum, h.count, &buckets, None)?;
                }
            }
        }
        Ok(())
    }

    /// The self-checks, a gauge per check once the test ended.
    fn checks(&self, encoder: &mut DescriptorEncoder<'_>) -> std::fmt::Result {
        let mut passed = encoder.encode_descriptor(
            "tailrate_check_passed",
            "1 when the self-check passed, 0 when it failed; set when the test ends (skipped checks are absent).",
            None,
            MetricType::Gauge,
        )?;
        for test in &self.0.tests {
            for (check, ok) in &test.checks {
                let set = labels(&self.0.run, test, &[("check", check)]);
                passed.encode_family(&set)?.encode_gauge(&u64::from(*ok))?;
            }
        }
        Ok(())
    }
}

impl Collector for Page {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> std::fmt::Result {
        self.counters(&mut encoder)?;
        self.gauges(
            &mut encoder,
            "tailrate_target_rate_requests_per_second",
            "The rate the plan asks for (open loop, or a closed loop's rate cap).",
            |t| t.target_rate_per_sec,
        )?;
        self.gauges(
            &mut encoder,
            "tailrate_achieved_rate_requests_per_second",
            "Requests written per second over the last interval.",
            |t| Some(t.achieved_rate_per_sec),
        )?;
        self.gauges(
            &mut encoder,
            "tailrate_in_flight_requests",
            "Requests written and not answered yet (at the end: those left unanswered).",
            |t| Some(t.in_flight as f64),
        )?;
        self.gauges(
            &mut encoder,
            "tailrate_backlog_requests",
            "Requests waiting client-side for a connection with room (open loop).",
            |t| Some(t.backlog as f64),
        )?;
        self.gauges(
            &mut encoder,
            "tailrate_running",
            "1 while the test is measured, 0 once it ended.",
            |t| Some(f64::from(u8::from(t.running))),
        )?;
        self.gauges(
            &mut encoder,
            "tailrate_valid",
            "1 when every self-check of the test passed, 0 when one failed; set when the test ends.",
            |t| t.valid.map(|v| f64::from(u8::from(v))),
        )?;
        self.checks(&mut encoder)?;
        self.histograms(&mut encoder)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::record::{Recorder, Timing};

    fn page() -> Exposition {
        let mut page = Exposition::new("2026-12-05T09:00:00Z".into());
        let names = ["get".to_string()];
        let labels = vec![("test".to_string(), "GET".to_string())];
        let i = page.start(labels, &names, Timing::Open, Some(2000.0));
        let mut record = Recorder::new(1);
        let rec = &mut record.commands[0];
        rec.intended = 2000;
        rec.sent = 2000;
        rec.completed = 1999;
        rec.timeouts = 1;
        rec.record_unanswered(40_000, 1999);
        page.interval(
            i,
            std::time::Duration::from_secs(1),
            &record,
            &names,
            Timing::Open,
            3,
        );
        page
    }

    #[test]
    fn the_page_has_counters_gauges_and_cumulative_buckets_with_the_runs_labels() {
        let text = String::from_utf8(render(&page())).unwrap();
        let run = r#"run="2026-12-05T09:00:00Z",test="GET""#;
        for line in [
            "# TYPE tailrate_requests_total counter".to_string(),
            format!(r#"tailrate_requests_total{{{run},command="get",outcome="completed"}} 1999"#),
            format!(r#"tailrate_requests_total{{{run},command="get",outcome="timeout"}} 1"#),
            format!(r#"tailrate_requests_sent_total{{{run},command="get"}} 2000"#),
            format!(r#"tailrate_target_rate_requests_per_second{{{run}}} 2000.0"#),
            format!(r#"tailrate_achieved_rate_requests_per_second{{{run}}} 2000.0"#),
            format!(r#"tailrate_backlog_requests{{{run}}} 3.0"#),
            format!(r#"tailrate_in_flight_requests{{{run}}} 0.0"#),
            "# TYPE tailrate_latency_seconds histogram".to_string(),
            format!(
                r#"tailrate_latency_seconds_bucket{{{run},command="get",metric="response",le="2.5e-05"}} 0"#
            ),
            format!(
                r#"tailrate_latency_seconds_bucket{{{run},command="get",metric="response",le="5e-05"}} 1999"#
            ),
            format!(
                r#"tailrate_latency_seconds_bucket{{{run},command="get",metric="response",le="+Inf"}} 1999"#
            ),
            format!(
                r#"tailrate_latency_seconds_count{{{run},command="get",metric="response"}} 1999"#
            ),
            format!(r#"tailrate_latency_seconds_count{{{run},command="get",metric="lag"}} 0"#),
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "no line {line} in:\n{text}"
            );
        }
        // No check is known before the test ends.
        assert!(!text.contains("tailrate_check_passed{"));
        assert!(!text.contains("tailrate_valid{"));
    }
}
