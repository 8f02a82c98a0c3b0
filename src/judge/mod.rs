//! Every verdict, pure: the self-checks of a run and the bottleneck. Each reads a
//! finished run's outcome or report and returns the verdict types of `report::verdict`;
//! nothing here prints or measures.

pub mod bottleneck;
pub mod checks;
