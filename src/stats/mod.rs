//! Pure numbers, no report types: intervals on percentiles from HDR counts and batch
//! means, and the statistics that pool runs. Each statistic exists once, here, with its
//! error rate tested on simulated data beside it.

pub mod confidence;
pub mod median;
