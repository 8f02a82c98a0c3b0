//! Pure numbers, no report types: intervals on percentiles from HDR counts and batch
//! means, the interval of a difference between two of them, and the statistics that pool
//! runs. Each statistic exists once, here, with its error rate tested on simulated data
//! beside it.

pub mod confidence;
pub mod exceedance;
pub mod median;
pub mod mover;
pub mod over;
pub mod pooled;
