//! Every verdict, pure: the self-checks of a run, the bottleneck, a comparison's rows,
//! the SLO verdicts of a sweep's runs and steps, the capacity read from them, and two
//! sweeps' capacities against each other. Each
//! reads a finished run's outcome or report (or two sides' latencies) and returns the
//! verdict types of `report`; nothing here prints or measures.

pub mod bottleneck;
pub mod capacities;
pub mod capacity;
pub mod checks;
pub mod compare;
pub mod events;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod host;
pub mod slo;
pub mod tail;
