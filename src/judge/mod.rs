//! Every verdict, pure: the self-checks of a run, the bottleneck, and a comparison's
//! rows. Each reads a finished run's outcome or report (or two sides' latencies) and
//! returns the verdict types of `report`; nothing here prints or measures.

pub mod bottleneck;
pub mod checks;
pub mod compare;
