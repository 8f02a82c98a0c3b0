//! The steady-state check: whether an open loop's generator kept pace through the
//! measured window. A Mann-Kendall trend on the batches' median response, both ways (a
//! backlog that grew, one the run started in and drained), and the same medians of the
//! on-time response (`received - handled`: the server's service and the queue wait behind
//! its connections, without the generator's lateness) to tell whose backlog it was. The
//! server's backlog is what clients offered that load would see, and leaves the run
//! valid; a move the on-time response did not share is the generator's lateness.

use super::lag::short_time;
use crate::report::verdict::{Check, Measure, STEADY_STATE, Verdict};
use crate::stats::confidence::Batch;

/// The least change, last quarter's median response over the first's or the first's over
/// the last's, that the steady-state check calls a backlog that grew or drained.
pub const BACKLOG_GROWTH: f64 = 2.0;
/// Mann-Kendall |z| a trend must exceed (two-sided p < 0.001).
pub const TREND_Z: f64 = 3.29;
/// Fewest non-empty batches the steady-state check judges from.
pub const STEADY_MIN_BATCHES: usize = 8;
/// The largest share of a backlog's move in the batch median response that the
/// generator's lateness may carry (the rest is the on-time response's) for the backlog
/// to be the server's.
pub const GENERATOR_SHARE: f64 = 0.5;

/// How the detail of a backlog the server grew begins ([`server_backlog_grew`] reads it).
const SERVER_GREW: &str = "the server's backlog grew";
/// How the meaning of a growth whose owner could not be told begins (as every growth's
/// did before on-time batches were recorded).
const UNTOLD_GREW: &str = "response time grew through the run";

/// Whether an open loop's generator kept pace through the run, judged on the batch
/// medians of the `response` time and of the `on_time` response (empty where no lag was
/// recorded), each a batch of the run in time order.
///
/// The response moved when the last quarter's median of batch medians is at least
/// [`BACKLOG_GROWTH`] times the first's, either way, *and* the medians trend
/// (Mann-Kendall |z| over [`TREND_Z`]): a trend alone is what a slow drift of a busy host
/// shows, and a stall in the last quarter raises a few batches, not the quarter's median.
///
/// A move is a backlog, on its way up (the rate is past what keeps pace) or down (the run
/// started in one and drained it). When the on-time response carries at least
/// `1 - GENERATOR_SHARE` of the move (its own first-to-last change over the response's),
/// the backlog is the server's: queue wait behind connections it had not freed, its
/// stalls, its saturation. The open loop measured what clients offered that load would
/// see, so the check passes and says so. It fails when the generator's lateness carries
/// more ([`GENERATOR_SHARE`]): the generator fell further behind its schedule through
/// the run (or caught up), and every percentile depends on how long the run was. Without
/// on-time batches it cannot tell whose backlog it was, fails any move, and says so.
pub fn steady_state(response: &[Batch], on_time: &[Batch]) -> Check {
    let name = STEADY_STATE.to_string();
    let Some(resp) = Trend::of(response) else {
        return Check {
            name,
            verdict: Verdict::Skipped,
            detail: format!(
                "{} batches with replies; needs {STEADY_MIN_BATCHES}",
                medians(response).len()
            ),
            meaning: String::new(),
            measure: None,
        };
    };
    let figures = format!(
        "batch median response {} in the first quarter, {} in the last ({:.2}x), trend z = \
         {:+.2} over {} batches of {} ms",
        short_time(resp.first as u64),
        short_time(resp.last as u64),
        resp.growth(),
        resp.z,
        resp.batches,
        crate::drive::BATCH.as_millis()
    );
    let bound = format!(
        "bound: a move of {BACKLOG_GROWTH:.0}x either way with |z| > {TREND_Z} fails when the \
         generator's lateness carries over {:.0}% of it",
        100.0 * GENERATOR_SHARE
    );
    let on = Trend::of(on_time);
    let on_figures = on.as_ref().map(|o| {
        format!(
            "on time {} to {} ({:.2}x, z = {:+.2})",
            short_time(o.first as u64),
            short_time(o.last as u64),
            o.growth(),
            o.z
        )
    });
    let Some(way) = resp.moved() else {
        let on_figures = on_figures.map_or_else(String::new, |f| format!("; {f}"));
        return Check {
            name,
            verdict: Verdict::Pass,
            detail: format!("{figures}{on_figures}; {bound}"),
            meaning: way_meaning(Way::Grew, whose_without(on.is_some())).to_string(),
            measure: Measure::of(resp.change(), BACKLOG_GROWTH, "ratio"),
        };
    };
    let (Some(on), Some(on_figures)) = (on, on_figures) else {
        let lead = match way {
            Way::Grew => "a backlog grew",
            Way::Drained => "a backlog drained",
        };
        return Check {
            name,
            verdict: Verdict::Fail,
            detail: format!(
                "{lead}, whose it cannot tell (no on-time response was recorded): {figures}; \
                 bound: a move of {BACKLOG_GROWTH:.0}x either way with |z| > {TREND_Z}"
            ),
            meaning: way_meaning(way, Whose::Unknown).to_string(),
            measure: Measure::of(resp.change(), BACKLOG_GROWTH, "ratio"),
        };
    };
    let generator = resp.generator_share(&on);
    let whose = if generator > GENERATOR_SHARE {
        Whose::Generator
    } else {
        Whose::Server
    };
    let carried = format!(
        "{on_figures}, the generator's lateness {:.0}% of the move",
        100.0 * generator.clamp(0.0, 1.0)
    );
    let detail = match (whose, way) {
        (Whose::Server, Way::Grew) => format!(
            "{SERVER_GREW}: {figures}; {carried}; the server is past its capacity at this \
             rate (or the host slowed it), and the figures hold for a run this long"
        ),
        (Whose::Server, Way::Drained) => format!(
            "the server's backlog drained: {figures}; {carried}; the run started in a backlog \
             the server worked off (a stall at its start, or a warm-up it had not absorbed), \
             and the figures hold for a window that held this much of the drain"
        ),
        (_, Way::Grew) => format!("the generator fell behind: {figures}; {carried}; {bound}"),
        (_, Way::Drained) => format!("the generator caught up: {figures}; {carried}; {bound}"),
    };
    Check {
        name,
        verdict: if whose == Whose::Server {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        detail,
        meaning: way_meaning(way, Whose::Generator).to_string(),
        measure: Measure::of(generator, GENERATOR_SHARE, "fraction"),
    }
}

/// Whether `check`, a steady-state check, found a backlog that grew and was not the
/// generator's lateness: the server past its capacity (or, without on-time batches, a
/// growth it could not give an owner, as every growth was before they were recorded).
/// A sweep counts such runs toward a rate's saturation.
pub fn server_backlog_grew(check: &Check) -> bool {
    check.name == STEADY_STATE
        && (check.detail.contains(SERVER_GREW)
            || (check.verdict == Verdict::Fail && check.meaning.contains(UNTOLD_GREW)))
}

/// Which way a series moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// Up: a backlog that built.
    Grew,
    /// Down: a backlog the run started in and worked off.
    Drained,
}

/// Whose backlog a move was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Whose {
    /// The on-time response carried it: queue wait and service.
    Server,
    /// The generator's lateness carried it.
    Generator,
    /// No on-time batches to tell by.
    Unknown,
}

/// Whose a move would be held to be: the generator's where on-time batches tell it apart.
fn whose_without(on_time: bool) -> Whose {
    if on_time {
        Whose::Generator
    } else {
        Whose::Unknown
    }
}

/// What a failure of the check means, for a move `way` that was `whose`.
fn way_meaning(way: Way, whose: Whose) -> &'static str {
    match (way, whose) {
        (Way::Grew, Whose::Unknown) => {
            // Begins with UNTOLD_GREW.
            "response time grew through the run, and with no on-time response recorded the \
             check cannot tell the server's backlog from the generator's lateness: every \
             percentile depends on how long the run lasted, not only on the rate; measure \
             lower rates, or a longer warm-up if it settles"
        }
        (Way::Drained, Whose::Unknown) => {
            "response time fell through the run, and with no on-time response recorded the \
             check cannot tell the server's backlog from the generator's lateness: every \
             percentile depends on how much of the drain the window held; give a longer \
             --warmup, or look at what held the run at the start"
        }
        (Way::Grew, _) => {
            "the generator fell further and further behind its schedule through the run: \
             the response time grew by its own lateness, not the server's (the on-time \
             response did not grow with it), and every percentile depends on how long the \
             run lasted; lower the rate, give the generator a core of its own (taskset), \
             or add --threads"
        }
        (Way::Drained, _) => {
            "the generator started behind its schedule and caught up through the run: the \
             response time fell by its own lateness, not the server's (the on-time response \
             did not fall with it), and every percentile depends on how much of the catch-up \
             the window held; give a longer --warmup, or look at what held the generator \
             at the start (its core, --pacing)"
        }
    }
}

/// One series' batch medians: their first and last quarter's medians and their trend.
#[derive(Debug, Clone)]
struct Trend {
    first: f64,
    last: f64,
    z: f64,
    batches: usize,
}

impl Trend {
    /// The trend of `batches`' medians; `None` under [`STEADY_MIN_BATCHES`] with replies.
    fn of(batches: &[Batch]) -> Option<Self> {
        let medians = medians(batches);
        if medians.len() < STEADY_MIN_BATCHES {
            return None;
        }
        let quarter = medians.len() / 4;
        let median_of = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        Some(Trend {
            first: median_of(&medians[..quarter]),
            last: median_of(&medians[medians.len() - quarter..]),
            z: mann_kendall_z(&medians),
            batches: medians.len(),
        })
    }

    /// Last quarter over first (1 when the first is zero).
    fn growth(&self) -> f64 {
        if self.first > 0.0 {
            self.last / self.first
        } else {
            1.0
        }
    }

    /// The change either way, as a factor of at least 1.
    fn change(&self) -> f64 {
        let growth = self.growth();
        if growth > 0.0 {
            growth.max(1.0 / growth)
        } else {
            1.0
        }
    }

    /// Which way the series moved: [`BACKLOG_GROWTH`] either way with a trend.
    fn moved(&self) -> Option<Way> {
        let growth = self.growth();
        if growth >= BACKLOG_GROWTH && self.z > TREND_Z {
            Some(Way::Grew)
        } else if growth > 0.0 && 1.0 / growth >= BACKLOG_GROWTH && self.z < -TREND_Z {
            Some(Way::Drained)
        } else {
            None
        }
    }

    /// The share of this series' first-to-last move that `on_time`'s move does not carry:
    /// the generator's lateness, when this is the response and the move is large (a
    /// response time is its lateness plus its on-time response; medians do not add, but
    /// a backlog moves the whole batch). Over 1 when the on-time response moved the other
    /// way, under 0 when it moved further.
    fn generator_share(&self, on_time: &Trend) -> f64 {
        let moved = self.last - self.first;
        if moved == 0.0 {
            return 0.0;
        }
        1.0 - (on_time.last - on_time.first) / moved
    }
}

/// The medians of `batches` that hold replies, in time order.
fn medians(batches: &[Batch]) -> Vec<f64> {
    batches
        .iter()
        .filter_map(|b| b.quantile(0.5))
        .map(|v| v as f64)
        .collect()
}

/// Mann-Kendall trend statistic of `x` in order, as a normal z (continuity-corrected,
/// ties not corrected for: they only make it smaller). Written out: it is a dozen lines.
fn mann_kendall_z(x: &[f64]) -> f64 {
    let n = x.len();
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            s += match x[j].total_cmp(&x[i]) {
                std::cmp::Ordering::Greater => 1,
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
            };
        }
    }
    let n = n as f64;
    let var = n * (n - 1.0) * (2.0 * n + 5.0) / 18.0;
    if var <= 0.0 {
        return 0.0;
    }
    let s = s as f64;
    (s - s.signum()) / var.sqrt()
}

#[cfg(test)]
mod tests;
