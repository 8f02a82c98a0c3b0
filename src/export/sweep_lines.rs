//! The lines a sweep prints as it goes: each measurement as it ends, a rate's verdict
//! over its runs, why the steps stop, and where the files went. The sweep hands each
//! event to [`write()`]; the wording is this file's.

use std::io::{self, Write};

use crate::config::sweep::Order;
use crate::report::sweep::Measurement;

/// A sweep's plan as said before it starts: its runs and their seconds, and what
/// `--budget` keeps of them.
pub struct Plan {
    /// Open-loop steps (rates times `--repeat`).
    pub steps: usize,
    /// Runs the capacity search is expected to take (0 without objectives).
    pub search: usize,
    /// Closed-loop runs.
    pub closed: usize,
    /// Every run.
    pub runs: usize,
    /// Their expected seconds.
    pub secs: f64,
    /// `--budget` in seconds, and the runs it keeps when it is shorter than the plan.
    pub budget: Option<(f64, Option<usize>)>,
    /// Without `--budget`, the seconds the sweep stops by all the same.
    pub bound_secs: Option<f64>,
}

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
    /// The steps end early at `rate_per_sec`, and why.
    Stopping {
        /// The order the rates are visited in.
        order: Order,
        /// Runs at each rate (`--repeat`).
        repeat: usize,
        /// The rate whose runs saturated the server.
        rate_per_sec: f64,
        /// Why.
        why: &'a str,
    },
    /// No step saturated the server: a rate `factor` times the highest is added.
    Beyond {
        /// The rate added.
        rate_per_sec: f64,
        /// Its multiple of the highest rate before it.
        factor: f64,
    },
    /// What the sweep plans to run, before it starts.
    Plan(&'a Plan),
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
        /// The run it interrupted.
        during: &'a Measurement,
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

/// `plan: 20 steps, the capacity search (about 64 runs) and 3 closed loops: about
/// 87 runs, 218 s`, with what `--budget` keeps of it.
fn plan_words(plan: &Plan) -> String {
    let mut text = format!("plan: {} steps", plan.steps);
    if plan.search > 0 {
        text.push_str(&format!(
            ", the capacity search (about {} runs)",
            plan.search
        ));
    }
    if plan.closed > 0 {
        text.push_str(&format!(
            " and {} closed loop{}",
            plan.closed,
            if plan.closed == 1 { "" } else { "s" }
        ));
    }
    text.push_str(&format!(": about {} runs, {:.0} s", plan.runs, plan.secs));
    match plan.budget {
        Some((b, Some(kept))) => {
            text.push_str(&format!(
                "; --budget {b:.0} s keeps it to about {kept} runs"
            ));
        }
        Some((b, None)) => text.push_str(&format!(", within --budget {b:.0} s")),
        None => {}
    }
    if let Some(bound) = plan.bound_secs {
        text.push_str(&format!(
            "; it stops by {bound:.0} s all the same (--budget sets the bound)"
        ));
    }
    text
}

/// What the steps do when a rate's runs saturated the server: in ascending order the
/// steps stop (after the rate's other runs); shuffled, the rates above it are skipped.
fn stopping(order: Order, repeat: usize, rate_per_sec: f64) -> String {
    match (order, repeat) {
        (Order::Ascending, 1) => "stopping the steps".to_string(),
        (Order::Ascending, _) => "stopping the steps after this rate's runs".into(),
        (Order::Shuffle, _) => format!("skipping the rates above {rate_per_sec:.0} req/s"),
    }
}

/// "the step run at 20000 req/s", "the closed_loop run with 10 connections".
fn run_words(m: &Measurement) -> String {
    let kind = m.kind.name();
    match m.target_rate_per_sec {
        Some(r) => format!("the {kind} run at {r:.0} req/s"),
        None => format!("the {kind} run with {} connections", m.connections),
    }
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
        Line::Stopping {
            order,
            repeat,
            rate_per_sec,
            why,
        } => writeln!(out, "{}: {why}", stopping(*order, *repeat, *rate_per_sec)),
        Line::Beyond {
            rate_per_sec,
            factor,
        } => writeln!(
            out,
            "no step saturated the server: adding {rate_per_sec:.0} req/s ({factor}x the highest)"
        ),
        Line::Plan(plan) => writeln!(out, "{}", plan_words(plan)),
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
            "interrupted during {}; its partial results are in {file} under \"partial\"",
            run_words(during)
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
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_run_is_labelled_only_when_its_rate_has_several() {
        assert_eq!(run_label((0, 1)), "");
        assert_eq!(run_label((1, 3)), ", run 2/3");
        assert_eq!(left(Some(142.6)), " [143 s of the budget left]");
        assert_eq!(left(None), "");
    }

    fn said(line: &Line<'_>) -> String {
        let mut out = Vec::new();
        write(&mut out, line).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_plan_says_its_runs_and_what_the_budget_keeps() {
        let mut plan = Plan {
            steps: 20,
            search: 64,
            closed: 3,
            runs: 87,
            secs: 218.4,
            budget: None,
            bound_secs: None,
        };
        assert_eq!(
            said(&Line::Plan(&plan)),
            "plan: 20 steps, the capacity search (about 64 runs) and 3 closed loops: about \
             87 runs, 218 s\n"
        );
        (plan.search, plan.closed, plan.budget) = (0, 1, Some((300.0, None)));
        assert_eq!(
            said(&Line::Plan(&plan)),
            "plan: 20 steps and 1 closed loop: about 87 runs, 218 s, within --budget 300 s\n"
        );
        plan.budget = Some((60.0, Some(12)));
        assert!(said(&Line::Plan(&plan)).ends_with("; --budget 60 s keeps it to about 12 runs\n"));
        (plan.budget, plan.bound_secs) = (None, Some(655.2));
        assert!(
            said(&Line::Plan(&plan))
                .ends_with("218 s; it stops by 655 s all the same (--budget sets the bound)\n")
        );
    }

    #[test]
    fn stopping_says_what_the_order_does_with_the_rates_left() {
        let stopping = |order, repeat| {
            said(&Line::Stopping {
                order,
                repeat,
                rate_per_sec: 3000.0,
                why: "past saturation",
            })
        };
        assert_eq!(
            stopping(Order::Ascending, 1),
            "stopping the steps: past saturation\n"
        );
        assert_eq!(
            stopping(Order::Ascending, 3),
            "stopping the steps after this rate's runs: past saturation\n"
        );
        assert_eq!(
            stopping(Order::Shuffle, 1),
            "skipping the rates above 3000 req/s: past saturation\n"
        );
        assert_eq!(
            said(&Line::Beyond {
                rate_per_sec: 4500.0,
                factor: 1.5
            }),
            "no step saturated the server: adding 4500 req/s (1.5x the highest)\n"
        );
    }
}
