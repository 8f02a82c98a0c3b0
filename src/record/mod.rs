//! Recording: one HdrHistogram per command and metric, and the counts every request
//! ends in. A [`Recorder`] belongs to one thread for one interval; intervals and
//! threads are added together exactly (histograms add losslessly).
//!
//! Values are `u64` nanoseconds from 1 ns to 1 h at 3 significant digits; nothing is
//! clamped at 3 s, and coordinated omission is never "corrected" here: open-loop
//! values already start at the intended time.

mod bounds;
mod counts;
mod histograms;
mod recorder;

pub use bounds::{HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS, new_histogram};
pub use counts::Counts;
pub use histograms::{Histograms, Metric, Timing, nanos};
pub use recorder::{
    CommandRecord, MAX_ERROR_KINDS, NodeRecord, OTHER_ERRORS, Recorder, ReplyTimes,
};
