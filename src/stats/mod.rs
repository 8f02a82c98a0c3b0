//! Pure numbers, no report types: intervals on percentiles from HDR counts and batch
//! means, the interval of a difference between two of them, the statistics that pool
//! runs and decide an objective on them, and the capacity estimated from every rate's runs
//! with its landmarks. Each statistic exists once, here (one median, one monotone fit, one
//! bootstrap), with its error rate tested on simulated data beside it.

pub mod bootstrap;
pub mod capacity;
pub mod confidence;
pub mod exceedance;
pub mod isotonic;
pub mod landmarks;
pub mod median;
pub mod mover;
pub mod over;
pub mod pooled;
