//! The open loop's answer, first under the test's name: the response time from each
//! request's intended send at the headline percentiles with their 95% intervals, the
//! service time and the generator's lag beside it, the rates sent and answered (each
//! named), whether the run is valid and what held it back, and the `--slo` objectives'
//! verdicts. redis-benchmark's blocks and tailrate's detail follow it; a closed loop
//! keeps redis-benchmark's layout, with only its objectives (if asked for) above it.

use std::io::{self, Write};

use super::tables::interval_text;
use crate::export::ms;
use crate::record::Metric;
use crate::report::{Latency, Percentile, TestReport};
use crate::text::printable;

/// The percentiles the answer leads with.
const HEADLINE: [Percentile; 3] = [Percentile::P50, Percentile::P99, Percentile::P99_9];

/// The answer block of an open-loop `test`; nothing for a closed loop.
pub(super) fn lines(out: &mut dyn Write, test: &TestReport, precision: usize) -> io::Result<()> {
    let Some(target) = test.target_rate_per_sec else {
        return Ok(());
    };
    writeln!(
        out,
        "  open loop at {target:.0} req/s; response time from each request's intended send (msec, 95% intervals):"
    )?;
    writeln!(out, "    {}", headline(test.response(), precision))?;
    let p99 =
        |metric: Metric| super::ms_of(test.latency.get(&metric), |l| l.p99_ns as f64, precision);
    writeln!(
        out,
        "    beside it: service p99 {} (from the write to the reply), lag p99 {} (how late the generator sent)",
        p99(Metric::Service),
        p99(Metric::Lag)
    )?;
    writeln!(
        out,
        "  rates: {:.1} requests/s sent (achieved, against the {target:.1}/s target), {:.1} replies/s (throughput)",
        test.achieved_rate_per_sec, test.throughput_per_sec
    )?;
    if let Some(offered) = test.offered_rate_per_sec {
        writeln!(out, "  {}", offered_text(offered, target))?;
    }
    if test.valid {
        writeln!(
            out,
            "  valid: no self-check failed (the checks are listed at the end)"
        )?;
    } else {
        writeln!(
            out,
            "  INVALID: {}; what each failure means is under self-checks at the end",
            test.why_invalid()
        )?;
    }
    super::bottleneck_line(out, test)?;
    if let Some(why) = &test.stopped_early {
        writeln!(out, "  stopped early: {}", printable(why))?;
    }
    if let Some(slo) = &test.slo {
        crate::export::objective_text::lines(out, slo)?;
    }
    writeln!(out)
}

/// What the schedule's own draw offered against the target: a Poisson schedule's count
/// over the window is itself random, so runs at one rate and seed all send the same
/// number, off the target by the draw's chance. The direction is the sign alone, so the
/// line's words are the same whichever way a draw falls.
pub(crate) fn offered_text(offered: f64, target: f64) -> String {
    let excess = if target > 0.0 {
        (offered / target - 1.0) * 100.0
    } else {
        0.0
    };
    format!(
        "offered {offered:.1}/s by the schedule ({excess:+.2}% against the {target:.1}/s target: \
         the arrival draw's own chance, not the generator's)"
    )
}

/// One headline percentile as the answer shows it.
pub(crate) struct HeadlineValue {
    /// `p99`.
    pub label: String,
    /// Its value in msec.
    pub value_ms: String,
    /// Its 95% interval in msec (`[0.205, 0.385]`), empty when the report has none.
    pub interval_ms: String,
}

/// The headline percentiles of `latency` (those `--percentiles` chose, else p50, p99,
/// p99.9), each with its interval; `None` when it holds no reply.
pub(crate) fn headline_values(
    latency: Option<&Latency>,
    precision: usize,
) -> Option<Vec<HeadlineValue>> {
    let l = latency.filter(|l| l.count > 0)?;
    if !l.chosen.is_empty() {
        return Some(
            l.reported()
                .into_iter()
                .map(|r| HeadlineValue {
                    label: r.label,
                    value_ms: ms(r.value_ns as f64, precision),
                    interval_ms: r
                        .ci95_ns
                        .map_or_else(String::new, |c| c.show(|ns| ms(ns as f64, precision))),
                })
                .collect(),
        );
    }
    Some(
        HEADLINE
            .iter()
            .map(|&p| HeadlineValue {
                label: p.label().to_string(),
                value_ms: ms(l.at(p).value_ns as f64, precision),
                interval_ms: interval_text(l, p, precision),
            })
            .collect(),
    )
}

/// `p50 0.273 [0.205, 0.385]   p99 ...`, or `n/a` for a test with no replies.
fn headline(latency: Option<&Latency>, precision: usize) -> String {
    let Some(values) = headline_values(latency, precision) else {
        return "n/a: no replies".to_string();
    };
    values
        .iter()
        .map(|v| match v.interval_ms.as_str() {
            "" => format!("{} {}", v.label, v.value_ms),
            i => format!("{} {} {i}", v.label, v.value_ms),
        })
        .collect::<Vec<_>>()
        .join("   ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offered_rate_reads_as_the_draws_signed_excess_in_the_same_words_either_way() {
        assert_eq!(
            offered_text(72_733.0, 72_624.0),
            "offered 72733.0/s by the schedule (+0.15% against the 72624.0/s target: the \
             arrival draw's own chance, not the generator's)"
        );
        assert_eq!(
            offered_text(990.0, 1000.0),
            "offered 990.0/s by the schedule (-1.00% against the 1000.0/s target: the arrival \
             draw's own chance, not the generator's)"
        );
        // A draw exactly on the target reads +0.00%, never -0.00%.
        assert!(offered_text(1000.0, 1000.0).contains("(+0.00% against"));
    }
}
