//! What a sweep's SLO search read beside its result's figures, kept in `sweep.json` so
//! the result's sentence is said again, word for word, from a sweep read back: the rates
//! it spanned (`slo.span`) and what `--budget` cut short (`slo.budget`). The words
//! themselves are `export::capacity_text`'s.

use serde::{Deserialize, Serialize};

/// What the capacity search read beside [`super::SloResult`]'s own fields: the rates it
/// spanned, the runs behind each undecided rate, and the objective the capacity's share
/// is of.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchSpan {
    /// The lowest rate measured.
    pub lowest_per_sec: f64,
    /// The highest rate measured.
    pub highest_per_sec: f64,
    /// The runs each uncertain rate was decided on, in `uncertain_per_sec`'s order.
    #[serde(default)]
    pub uncertain_runs: Vec<usize>,
    /// The objective of `capacity_exceedance`, as an index into the objectives.
    #[serde(default)]
    pub capacity_objective: Option<usize>,
}

/// `--budget`, or the bound a sweep keeps without one, ended the search: what more time
/// would have bought.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetEnded {
    /// `--budget`, or the implied bound, seconds.
    pub budget_secs: f64,
    /// No `--budget` was given: the bound was the one a sweep's plan implies (written
    /// only when true, so a budget's record reads as before).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub implied: bool,
    /// The rate being decided when it ended; null when the search had not begun.
    #[serde(default)]
    pub deciding: Option<BudgetDeciding>,
}

/// The rate a search was deciding when `--budget` ended it, and the runs its next look
/// needed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BudgetDeciding {
    /// The rate, requests per second.
    pub rate_per_sec: f64,
    /// It was the capacity's confirmation on fresh runs, not a decision of the search.
    pub confirming: bool,
    /// The valid runs it had.
    pub runs: usize,
    /// The runs more its next look needed.
    pub more_runs: usize,
    /// The seconds those runs take.
    pub more_secs: f64,
}
