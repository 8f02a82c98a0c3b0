//! The words of a verdict's reasons: why a step's (or a run's) verdict on its objectives
//! is what it is, why runs were left out of a step, and why two sweeps' capacities
//! compare as they do, said from the figures the models keep (`report::sweep::steps`,
//! `report::compare`). Every text says them through `Display`, and the JSON
//! writes the same words in the reasons' place (their `Serialize` is here), so the JSON
//! reads as it always has and a report read back says the same.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::report::compare::CapacityWhy;
use crate::report::sweep::Verdict;
use crate::report::sweep::steps::{LeftOut, LeftOutWhy, ObjectiveWhy, StepWhy, Wanting};

impl fmt::Display for StepWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepWhy::NoRunCarried {
                short,
                runs,
                saturation,
            } => write!(
                f,
                "no run carried the rate ({short} of {runs} under {:.0}% of the schedule or with requests unsent)",
                100.0 * saturation
            ),
            StepWhy::GeneratorLimited { behind, runs } => write!(
                f,
                "limited by the generator: {behind} of {runs} runs fell behind their schedule or failed a self-check"
            ),
            StepWhy::NoRunCounted { invalid, runs } => write!(
                f,
                "no run counted: {invalid} of {runs} did not keep their schedule or failed a check the server's numbers need"
            ),
            StepWhy::Objectives(each) => {
                for (i, o) in each.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{o}")?;
                }
                Ok(())
            }
            StepWhy::Text(text) => f.write_str(text),
        }
    }
}

/// One objective's decision in a clause: `0.61% over 1.000 ms [0.40%, 0.90%] under 1.00%
/// (p99 0.950 ms over 16 runs [0.910, 0.990])`, and what an uncertain one still wants.
impl fmt::Display for ObjectiveWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
        let runs = match self.runs {
            1 => "in one run".to_string(),
            n => format!("over {n} runs"),
        };
        let value = format!(
            "{} {} ms {runs}{}",
            self.percentile,
            ms(self.value_ns),
            self.ci95_ns
                .map_or_else(String::new, |i| format!(" {}", i.show(ms)))
        );
        let Some(e) = &self.exceedance else {
            return write!(f, "{value}; no response windows to decide on");
        };
        let relation = match self.verdict {
            Verdict::Pass => "under",
            Verdict::Fail => "over",
            Verdict::Uncertain => "not yet decided against",
        };
        write!(
            f,
            "{:.2}% over {} ms [{:.2}%, {:.2}%] {relation} {:.2}% ({value})",
            100.0 * e.fraction,
            ms(self.bound_ns),
            100.0 * e.low,
            100.0 * e.high,
            100.0 * e.limit
        )?;
        match self.wanting {
            Some(Wanting::DecisionRuns { have, need }) => {
                write!(f, ", {have} of the {need} runs a decision needs")
            }
            Some(Wanting::PassRuns { have, need }) => {
                write!(f, ", {have} of the {need} runs a pass needs")
            }
            Some(Wanting::Replies { need }) => {
                write!(f, ", {need} replies with none over the bound pass it")
            }
            None => Ok(()),
        }
    }
}

impl fmt::Display for LeftOutWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeftOutWhy::BeforeConfirmation => {
                f.write_str("measured before the confirmation's fresh runs")
            }
            LeftOutWhy::NotCarried => f.write_str(
                "did not carry the rate (under half the schedule, requests unsent or no reply)",
            ),
            LeftOutWhy::Short { tolerance } => {
                write!(f, "short of the schedule by over {:.0}%", 100.0 * tolerance)
            }
            LeftOutWhy::Failed { check } => write!(f, "failed {check}"),
            LeftOutWhy::Text(text) => f.write_str(text),
        }
    }
}

/// The JSON writes a step's reason as its words.
impl Serialize for StepWhy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The JSON writes why runs were left out as its words.
impl Serialize for LeftOutWhy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for CapacityWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapacityWhy::NotComparable { a, b } => write!(f, "A searched {a}, B {b}"),
            CapacityWhy::BLower { b_failed, a_passed } => write!(
                f,
                "B failed at {b_failed:.0} req/s where A passed at {a_passed:.0} req/s"
            ),
            CapacityWhy::BHigher { b_passed, a_failed } => write!(
                f,
                "B passed at {b_passed:.0} req/s where A failed at {a_failed:.0} req/s"
            ),
            CapacityWhy::BandsMeet => f.write_str("the bands meet"),
            CapacityWhy::Text(text) => f.write_str(text),
        }
    }
}

/// The JSON writes why two capacities compare as they do as its words.
impl Serialize for CapacityWhy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// `left_out` in words: `2 runs left out: 1 short of the schedule by over 1%, 1 failed
/// accounting`; empty when none was.
pub fn left_out_text(left_out: &[LeftOut]) -> String {
    let total: usize = left_out.iter().map(|l| l.runs).sum();
    if total == 0 {
        return String::new();
    }
    let each: Vec<String> = left_out
        .iter()
        .map(|l| format!("{} {}", l.runs, l.why))
        .collect();
    format!(
        "{total} run{} left out: {}",
        if total == 1 { "" } else { "s" },
        each.join(", ")
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::report::sweep::Exceedance;
    use crate::stats::confidence::Ci95;

    fn objective(verdict: Verdict, wanting: Option<Wanting>) -> ObjectiveWhy {
        ObjectiveWhy {
            percentile: "p99".into(),
            bound_ns: 1_000_000,
            value_ns: 950_000,
            ci95_ns: Some(Ci95(910_000, None)),
            runs: 8,
            exceedance: Some(Exceedance {
                fraction: 0.006,
                low: 0.004,
                high: 0.009,
                limit: 0.01,
                replies: 80_000,
                over: 480,
                visits: 8,
            }),
            verdict,
            wanting,
        }
    }

    #[test]
    fn each_reason_says_its_figures() {
        let why = StepWhy::Objectives(vec![
            objective(
                Verdict::Uncertain,
                Some(Wanting::PassRuns { have: 8, need: 16 }),
            ),
            ObjectiveWhy {
                exceedance: None,
                runs: 1,
                ci95_ns: None,
                ..objective(Verdict::Pass, None)
            },
        ]);
        assert_eq!(
            why.to_string(),
            "0.60% over 1.000 ms [0.40%, 0.90%] not yet decided against 1.00% \
             (p99 0.950 ms over 8 runs [0.910, open]), 8 of the 16 runs a pass needs; \
             p99 0.950 ms in one run; no response windows to decide on"
        );
        let carried = StepWhy::NoRunCarried {
            short: 2,
            runs: 3,
            saturation: 0.5,
        };
        assert_eq!(
            carried.to_string(),
            "no run carried the rate (2 of 3 under 50% of the schedule or with requests unsent)"
        );
        let left = [
            LeftOut {
                why: LeftOutWhy::Short { tolerance: 0.01 },
                runs: 1,
            },
            LeftOut {
                why: LeftOutWhy::Failed {
                    check: "accounting".into(),
                },
                runs: 2,
            },
        ];
        assert_eq!(
            left_out_text(&left),
            "3 runs left out: 1 short of the schedule by over 1%, 2 failed accounting"
        );
    }

    #[test]
    fn the_json_holds_the_words_and_reads_back_to_them() {
        let why = StepWhy::GeneratorLimited { behind: 3, runs: 4 };
        let json = serde_json::to_string(&why).unwrap();
        assert_eq!(
            json,
            "\"limited by the generator: 3 of 4 runs fell behind their schedule or failed a self-check\""
        );
        let back: StepWhy = serde_json::from_str(&json).unwrap();
        assert_eq!(back, StepWhy::Text(why.to_string()));
        assert_eq!(back.to_string(), why.to_string());
        let cap = CapacityWhy::BLower {
            b_failed: 4000.0,
            a_passed: 4500.4,
        };
        assert_eq!(
            serde_json::to_string(&cap).unwrap(),
            "\"B failed at 4000 req/s where A passed at 4500 req/s\""
        );
        let left = LeftOutWhy::NotCarried;
        let back: LeftOutWhy =
            serde_json::from_str(&serde_json::to_string(&left).unwrap()).unwrap();
        assert_eq!(back.to_string(), left.to_string());
    }
}
