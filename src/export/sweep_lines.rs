//! The lines a sweep prints as it goes: each measurement as it ends, a rate's verdict
//! over its runs, why the steps stop, and where the files went. The sweep hands each
//! event to [`write()`]; the wording is this file's.

use std::io::{self, Write};

use crate::report::sweep::Measurement;

/// Something a sweep has to say while it runs.
pub enum Line<'a> {
    /// The closed-loop maximum that places fractional `--rates`.
    ClosedLoopMax {
        /// Its connections.
        connections: usize,
        /// Its throughput, requests per second.
        throughput_per_sec: f64,
    },
    /// A coarse step's run, `index` of `total` visits.
    Step {
        /// 1-based place among the coarse visits.
        index: usize,
        /// Coarse visits planned.
        total: usize,
        /// Its rate, requests per second.
        rate_per_sec: f64,
        /// Which of its rate's runs (0-based) and how many there are.
        run: (usize, usize),
        /// What it measured.
        measurement: &'a Measurement,
        /// Seconds of `--budget` left, when one was given.
        left_secs: Option<f64>,
    },
    /// The rate-capped closed loop run beside a step.
    RateCapped {
        /// Its rate, requests per second.
        rate_per_sec: f64,
        /// What it measured.
        measurement: &'a Measurement,
    },
    /// The steps end early, and why.
    Stopping {
        /// What the sweep does now.
        what: String,
        /// Why.
        why: &'a str,
    },
    /// A search or re-measurement run: `label` names which.
    Search {
        /// `search` or `re-measure`.
        label: &'a str,
        /// Its rate, requests per second.
        rate_per_sec: f64,
        /// Which of its rate's runs (0-based) and how many there are.
        run: (usize, usize),
        /// What it measured.
        measurement: &'a Measurement,
        /// Seconds of `--budget` left, when one was given.
        left_secs: Option<f64>,
    },
    /// A rate's verdict over all its runs.
    RateVerdict {
        /// Its rate, requests per second.
        rate_per_sec: f64,
        /// Runs there.
        runs: usize,
        /// `pass`, `fail` or `uncertain`.
        verdict: &'a str,
        /// Why, in words.
        why: &'a crate::report::sweep::steps::StepWhy,
    },
    /// A plain closed loop at `connections`.
    ClosedLoop {
        /// Its connections.
        connections: usize,
        /// What it measured.
        measurement: &'a Measurement,
    },
    /// A sentence said whole (the capacity's).
    Said(&'a str),
    /// What an interrupted sweep had reached.
    Interrupted {
        /// What was running.
        during: &'a str,
        /// The JSON file holding its partial results.
        file: &'a str,
    },
    /// The capacity as the steps so far say, after an interruption.
    SoFar(&'a str),
    /// One file written (by `tailrate plot`).
    WroteFile(&'a std::path::Path),
    /// The files written and where.
    Wrote {
        /// The sweep's JSON and CSV files and its plots, named.
        files: &'a [&'a str],
        /// The output directory.
        out: &'a std::path::Path,
    },
}

/// Writes `line` and a newline to `out`.
pub fn write(out: &mut dyn Write, line: &Line<'_>) -> io::Result<()> {
    match line {
        Line::ClosedLoopMax {
            connections,
            throughput_per_sec,
        } => writeln!(
            out,
            "closed-loop maximum with {connections} connections: {throughput_per_sec:.0} req/s (100%)"
        ),
        Line::Step {
            index,
            total,
            rate_per_sec,
            run,
            measurement,
            left_secs,
        } => writeln!(
            out,
            "step {index}/{total}: {rate_per_sec:.0} req/s{}: {}{}",
            run_label(*run),
            measurement.describe(),
            left(*left_secs)
        ),
        Line::RateCapped {
            rate_per_sec,
            measurement,
        } => writeln!(
            out,
            "  rate-capped closed loop at {rate_per_sec:.0} req/s: {}",
            measurement.describe()
        ),
        Line::Stopping { what, why } => writeln!(out, "{what}: {why}"),
        Line::Search {
            label,
            rate_per_sec,
            run,
            measurement,
            left_secs,
        } => writeln!(
            out,
            "{label}: {rate_per_sec:.0} req/s{}: {}{}",
            run_label(*run),
            measurement.describe(),
            left(*left_secs)
        ),
        Line::RateVerdict {
            rate_per_sec,
            runs,
            verdict,
            why,
        } => writeln!(
            out,
            "  {rate_per_sec:.0} req/s over {runs} runs: {verdict} ({why})"
        ),
        Line::ClosedLoop {
            connections,
            measurement,
        } => writeln!(
            out,
            "closed loop, {connections} connections: {}",
            measurement.describe()
        ),
        Line::Said(text) => writeln!(out, "{text}"),
        Line::Interrupted { during, file } => writeln!(
            out,
            "interrupted during {during}; its partial results are in {file} under \"partial\""
        ),
        Line::SoFar(summary) => writeln!(out, "so far, {summary}"),
        Line::WroteFile(path) => writeln!(out, "wrote {}", path.display()),
        Line::Wrote { files, out: dir } => {
            let (last, first) = files.split_last().map_or((&"", &[][..]), |(l, f)| (l, f));
            writeln!(
                out,
                "wrote {}, {last} and one .hlog per run into {}",
                first.join(", "),
                dir.display()
            )
        }
    }
}

/// ` [143 s of the budget left]` with a budget; nothing without.
fn left(secs: Option<f64>) -> String {
    secs.map_or_else(String::new, |s| {
        format!(" [{:.0} s of the budget left]", s.max(0.0))
    })
}

/// `, run 2/3` when a rate has several runs; nothing for one.
fn run_label((run, of): (usize, usize)) -> String {
    if of > 1 {
        format!(", run {}/{of}", run + 1)
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_labelled_only_when_its_rate_has_several() {
        assert_eq!(run_label((0, 1)), "");
        assert_eq!(run_label((1, 3)), ", run 2/3");
        assert_eq!(left(Some(142.6)), " [143 s of the budget left]");
        assert_eq!(left(None), "");
    }
}
