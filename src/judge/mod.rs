//! Every verdict and rule, pure: the self-checks of a run, the bottleneck, a
//! comparison's rows, the SLO verdicts of a sweep's runs and steps and of `--repeat`'s
//! runs pooled, the saturation rule, the capacity read from them, and two sweeps'
//! capacities against each other; and the summaries of runs pooled (`summary`) that the
//! verdicts read. Each reads a finished run's outcome or report (or two sides'
//! latencies) and returns the models of `report`; nothing here prints or measures.

pub mod bottleneck;
pub mod capacities;
pub mod capacity;
pub mod checks;
pub mod compare;
pub mod counted;
pub mod estimate;
pub mod events;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod host;
pub mod landmarks;
pub mod saturation;
pub mod slo;
pub mod summary;
pub mod tail;
pub mod weather;
