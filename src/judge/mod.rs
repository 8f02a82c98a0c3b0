//! Every verdict, pure: the self-checks of a run, the bottleneck, a comparison's rows,
//! the SLO verdicts of a sweep's runs and steps, and the capacity read from them. Each
//! reads a finished run's outcome or report (or two sides' latencies) and returns the
//! verdict types of `report`; nothing here prints or measures.

pub mod bottleneck;
pub mod capacity;
pub mod checks;
pub mod compare;
pub mod events;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod host;
pub mod slo;
