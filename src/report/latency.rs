//! A latency distribution as reports keep it: summary percentiles in nanoseconds and
//! the histogram itself, encoded in HdrHistogram's compressed V2 format.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

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
    /// 90th.
    pub p90_ns: u64,
    /// 95th.
    pub p95_ns: u64,
    /// 99th.
    pub p99_ns: u64,
    /// 99.9th.
    pub p99_9_ns: u64,
    /// 99.99th.
    pub p99_99_ns: u64,
    /// Largest.
    pub max_ns: u64,
    /// The histogram, HdrHistogram V2 compressed (deflate) encoding, base64.
    pub hdr_v2_base64: String,
}

impl Latency {
    /// Summarises and encodes `h`.
    pub fn of(h: &Histogram<u64>) -> Self {
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
            p90_ns: q(0.90),
            p95_ns: q(0.95),
            p99_ns: q(0.99),
            p99_9_ns: q(0.999),
            p99_99_ns: q(0.9999),
            max_ns: if h.is_empty() { 0 } else { h.max() },
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
pub fn decode_histogram(text: &str) -> Option<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()
}
