//! A latency distribution as reports keep it: summary percentiles in nanoseconds, each
//! with its 95% confidence interval, and the histogram itself, encoded in HdrHistogram's
//! compressed V2 format.

use std::collections::BTreeMap;

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

use crate::stats::confidence::{self, Batch, Ci95, Estimate};

/// The percentiles every report gives, each with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Percentile {
    /// 50th.
    P50,
    /// 90th.
    P90,
    /// 95th.
    P95,
    /// 99th.
    P99,
    /// 99.9th.
    P99_9,
    /// 99.99th.
    P99_99,
}

impl Percentile {
    /// All of them, in order.
    pub const ALL: [Percentile; 6] = [
        Percentile::P50,
        Percentile::P90,
        Percentile::P95,
        Percentile::P99,
        Percentile::P99_9,
        Percentile::P99_99,
    ];

    /// The quantile, 0.99 for p99.
    pub fn quantile(self) -> f64 {
        match self {
            Percentile::P50 => 0.50,
            Percentile::P90 => 0.90,
            Percentile::P95 => 0.95,
            Percentile::P99 => 0.99,
            Percentile::P99_9 => 0.999,
            Percentile::P99_99 => 0.9999,
        }
    }

    /// As printed: `p99.9`.
    pub fn label(self) -> &'static str {
        match self {
            Percentile::P50 => "p50",
            Percentile::P90 => "p90",
            Percentile::P95 => "p95",
            Percentile::P99 => "p99",
            Percentile::P99_9 => "p99.9",
            Percentile::P99_99 => "p99.99",
        }
    }

    /// As in JSON keys and CSV headers: `p99_9`.
    pub fn key(self) -> &'static str {
        match self {
            Percentile::P50 => "p50",
            Percentile::P90 => "p90",
            Percentile::P95 => "p95",
            Percentile::P99 => "p99",
            Percentile::P99_9 => "p99_9",
            Percentile::P99_99 => "p99_99",
        }
    }
}

/// What a distribution's intervals rest on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Confidence {
    /// `batch means over N batches of 50 ms`, or `binomial (too few batches to measure
    /// their spread)`.
    pub method: String,
    /// Non-empty batches the spread was measured from.
    pub batches: usize,
    /// Samples above each percentile (`k`), by key (`p99_9`).
    pub beyond: BTreeMap<String, u64>,
    /// How much wider than for independent samples each interval was made (the design
    /// effect, 1 for none), by key.
    pub design_effect: BTreeMap<String, f64>,
    /// The degrees of freedom each design effect above 1 rests on, by key: what a
    /// comparison needs to widen the interval further at a higher confidence. Absent in
    /// reports written before it was kept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub freedom: BTreeMap<String, f64>,
}

/// A latency distribution: summary values in nanoseconds and the histogram itself.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    /// Values recorded.
    pub count: u64,
    /// Smallest.
    pub min_ns: u64,
    /// Mean.
    pub mean_ns: f64,
    /// 50th percentile.
    pub p50_ns: u64,
    /// Its 95% confidence interval, `[low, high]` (`high` null when unbounded); absent
    /// in reports written before intervals were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ci95_ns: Option<Ci95>,
    /// 90th.
    pub p90_ns: u64,
    /// Its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90_ci95_ns: Option<Ci95>,
    /// 95th.
    pub p95_ns: u64,
    /// Its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ci95_ns: Option<Ci95>,
    /// 99th.
    pub p99_ns: u64,
    /// Its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ci95_ns: Option<Ci95>,
    /// 99.9th.
    pub p99_9_ns: u64,
    /// Its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_9_ci95_ns: Option<Ci95>,
    /// 99.99th.
    pub p99_99_ns: u64,
    /// Its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_99_ci95_ns: Option<Ci95>,
    /// Largest.
    pub max_ns: u64,
    /// What the intervals rest on; absent with the intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// The percentiles `--percentiles` chose, each with its interval (the text reports
    /// these instead of the fixed ones above, which stay for every other reader).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chosen: Vec<super::chosen::ChosenPercentile>,
    /// The histogram, HdrHistogram V2 compressed (deflate) encoding, base64.
    pub hdr_v2_base64: String,
}

impl Latency {
    /// Summarises and encodes `h`, each percentile with its 95% interval from `h` and
    /// `batches` (the same samples cut in time order, see [`confidence`]).
    pub fn of(h: &Histogram<u64>, batches: &[Batch]) -> Self {
        let mut latency = Latency::without_intervals(h);
        if h.is_empty() {
            return latency;
        }
        let mut beyond = BTreeMap::new();
        let mut design_effect = BTreeMap::new();
        let mut freedom = BTreeMap::new();
        for p in Percentile::ALL {
            if let Some(e) = confidence::estimate(h, batches, p.quantile()) {
                *latency.ci95_mut(p) = Some(e.ci95);
                beyond.insert(p.key().to_string(), e.beyond);
                design_effect.insert(p.key().to_string(), e.design_effect);
                if let Some(f) = e.freedom {
                    freedom.insert(p.key().to_string(), f);
                }
            }
        }
        let used = batches.iter().filter(|b| !b.is_empty()).count();
        latency.confidence = Some(Confidence {
            method: if used >= confidence::MIN_GROUPS {
                format!(
                    "batch means over {used} batches of {} ms",
                    confidence::BATCH.as_millis()
                )
            } else {
                format!(
                    "binomial only ({used} batches of {} ms, too few to measure their spread)",
                    confidence::BATCH.as_millis()
                )
            },
            batches: used,
            beyond,
            design_effect,
            freedom,
        });
        latency.monotone_intervals();
        latency
    }

    /// The intervals of the fixed percentiles made monotone in the percentile
    /// ([`confidence::monotone`]).
    fn monotone_intervals(&mut self) {
        let mut cis = Percentile::ALL.map(|p| self.ci95(p));
        let values = Percentile::ALL.map(|p| self.value(p));
        confidence::monotone(&mut cis, &values);
        for (p, ci) in Percentile::ALL.into_iter().zip(cis) {
            *self.ci95_mut(p) = ci;
        }
    }

    /// `h`, the histograms of `parts` added, summarised with each percentile's interval
    /// widened by the largest design effect any part measured there (with that part's
    /// degrees of freedom): pooling runs whose batches are not kept never claims more
    /// than the least certain of them knew. `method` says how.
    pub fn pooled(h: &Histogram<u64>, parts: &[&Latency], method: String) -> Self {
        let mut latency = Latency::of(h, &[]);
        let Some(kept) = latency.confidence.as_mut() else {
            return latency;
        };
        for p in Percentile::ALL {
            let key = p.key();
            let widest = parts
                .iter()
                .filter_map(|l| {
                    let c = l.confidence.as_ref()?;
                    Some((
                        c.design_effect.get(key).copied()?,
                        c.freedom.get(key).copied(),
                    ))
                })
                .max_by(|x, y| x.0.total_cmp(&y.0));
            if let Some((design_effect, freedom)) = widest {
                kept.design_effect.insert(key.to_string(), design_effect);
                match freedom {
                    Some(f) => kept.freedom.insert(key.to_string(), f),
                    None => kept.freedom.remove(key),
                };
            }
        }
        kept.method = method;
        for p in Percentile::ALL {
            let interval = latency.interval_at(h, p, confidence::CONFIDENCE);
            *latency.ci95_mut(p) = interval;
        }
        latency.monotone_intervals();
        latency
    }

    /// The percentile `p` with its interval.
    pub fn at(&self, p: Percentile) -> Estimate {
        Estimate {
            value_ns: self.value(p),
            ci95: self.ci95(p),
        }
    }

    fn value(&self, p: Percentile) -> u64 {
        match p {
            Percentile::P50 => self.p50_ns,
            Percentile::P90 => self.p90_ns,
            Percentile::P95 => self.p95_ns,
            Percentile::P99 => self.p99_ns,
            Percentile::P99_9 => self.p99_9_ns,
            Percentile::P99_99 => self.p99_99_ns,
        }
    }

    fn ci95(&self, p: Percentile) -> Option<Ci95> {
        match p {
            Percentile::P50 => self.p50_ci95_ns,
            Percentile::P90 => self.p90_ci95_ns,
            Percentile::P95 => self.p95_ci95_ns,
            Percentile::P99 => self.p99_ci95_ns,
            Percentile::P99_9 => self.p99_9_ci95_ns,
            Percentile::P99_99 => self.p99_99_ci95_ns,
        }
    }

    fn ci95_mut(&mut self, p: Percentile) -> &mut Option<Ci95> {
        match p {
            Percentile::P50 => &mut self.p50_ci95_ns,
            Percentile::P90 => &mut self.p90_ci95_ns,
            Percentile::P95 => &mut self.p95_ci95_ns,
            Percentile::P99 => &mut self.p99_ci95_ns,
            Percentile::P99_9 => &mut self.p99_9_ci95_ns,
            Percentile::P99_99 => &mut self.p99_99_ci95_ns,
        }
    }

    /// Samples above `p` (`k`), when the report says.
    pub fn beyond(&self, p: Percentile) -> Option<u64> {
        self.confidence.as_ref()?.beyond.get(p.key()).copied()
    }

    /// The interval of `p` at `confidence` from `h`, this latency's histogram decoded,
    /// and the design effect kept for `p` (none: the plain binomial interval). At 95% it
    /// is the reported interval; a comparison testing many percentiles at once asks for
    /// more per percentile.
    pub fn interval_at(&self, h: &Histogram<u64>, p: Percentile, confidence: f64) -> Option<Ci95> {
        let kept = self.confidence.as_ref();
        let design_effect = kept
            .and_then(|c| c.design_effect.get(p.key()).copied())
            .unwrap_or(1.0);
        let freedom = kept.and_then(|c| c.freedom.get(p.key()).copied());
        confidence::interval(
            h,
            p.quantile(),
            confidence::design_effect_at(design_effect, freedom, confidence),
            confidence,
        )
    }

    /// Summarises and encodes `h`, with no intervals.
    pub fn without_intervals(h: &Histogram<u64>) -> Self {
        let q = |p: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(p)
            }
        };
        Latency {
            count: h.len(),
            min_ns: if h.is_empty() { 0 } else { h.min() },
            mean_ns: if h.is_empty() { 0.0 } else { h.mean() },
            p50_ns: q(0.50),
            p50_ci95_ns: None,
            p90_ns: q(0.90),
            p90_ci95_ns: None,
            p95_ns: q(0.95),
            p95_ci95_ns: None,
            p99_ns: q(0.99),
            p99_ci95_ns: None,
            p99_9_ns: q(0.999),
            p99_9_ci95_ns: None,
            p99_99_ns: q(0.9999),
            p99_99_ci95_ns: None,
            max_ns: if h.is_empty() { 0 } else { h.max() },
            confidence: None,
            chosen: Vec::new(),
            hdr_v2_base64: encode_histogram(h),
        }
    }

    /// Decodes the embedded histogram.
    pub fn histogram(&self) -> Option<Histogram<u64>> {
        decode_histogram(&self.hdr_v2_base64)
    }
}

/// Encodes a histogram as base64 of its V2 compressed form (what .hlog files hold).
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut bytes) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(bytes),
        Err(_) => String::new(),
    }
}

/// Decodes [`encode_histogram`]'s output.
///
/// Checked before it is believed (see [`super::hdr_decode`]): `None` for a histogram a
/// file claims but could not hold.
pub fn decode_histogram(text: &str) -> Option<Histogram<u64>> {
    super::hdr_decode::decode(text).ok()
}

/// A test's response times in consecutive windows of [`ResponseWindows::WINDOW`] (longer
/// for long runs, so a report keeps at most [`ResponseWindows::MOST`]), each as a coarse
/// histogram: enough to count the replies over any bound in every window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ResponseWindows {
    /// Length of each window, seconds.
    pub window_secs: f64,
    /// The windows in time order.
    pub windows: Vec<Batch>,
}

impl ResponseWindows {
    /// Batches in a window: half a second, short enough that a run of 2 s has four, long
    /// enough that a window holds a stall whole.
    pub const WINDOW: usize = 10;
    /// Most windows a report keeps: a run longer than two minutes gets longer windows.
    pub const MOST: usize = 240;

    /// The windows of `batches` (each [`BATCH`](crate::stats::confidence::BATCH) long,
    /// in time order); `None` without a reply.
    pub fn of(batches: &[Batch]) -> Option<Self> {
        let mut per_window = Self::WINDOW;
        while batches.len().div_ceil(per_window) > Self::MOST {
            per_window *= 2;
        }
        let windows: Vec<Batch> = batches
            .chunks(per_window)
            .map(|chunk| {
                let mut window = Batch::default();
                for b in chunk {
                    window.add(b);
                }
                window
            })
            .collect();
        windows
            .iter()
            .any(|w| !w.is_empty())
            .then(|| ResponseWindows {
                window_secs: (crate::stats::confidence::BATCH * per_window as u32).as_secs_f64(),
                windows,
            })
    }
}

/// One row of a percentile table: what the text report lists for a latency.
#[derive(Debug, Clone, PartialEq)]
pub struct Reported {
    /// `p99.9`.
    pub label: String,
    /// The value.
    pub value_ns: u64,
    /// Its interval.
    pub ci95_ns: Option<Ci95>,
    /// Samples beyond it, when known.
    pub beyond: Option<u64>,
}

impl Latency {
    /// The percentiles to list: the chosen ones when `--percentiles` gave some, else
    /// the fixed six.
    pub fn reported(&self) -> Vec<Reported> {
        if !self.chosen.is_empty() {
            return self
                .chosen
                .iter()
                .map(|c| Reported {
                    label: c.label(),
                    value_ns: c.value_ns,
                    ci95_ns: c.ci95_ns,
                    beyond: Some(c.beyond),
                })
                .collect();
        }
        Percentile::ALL
            .iter()
            .map(|&p| Reported {
                label: p.label().to_string(),
                value_ns: self.value(p),
                ci95_ns: self.ci95(p),
                beyond: self.beyond(p),
            })
            .collect()
    }
}
