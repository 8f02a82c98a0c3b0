//! The bounds every latency histogram of the project shares, and the empty histogram
//! they make. Both the hand-written [`Counts`](super::Counts) and the HdrHistogram
//! sets of `histograms.rs` are laid out by these numbers, so they live apart from both.

use hdrhistogram::Histogram;

/// Lowest recordable value in nanoseconds.
pub const LOWEST_NS: u64 = 1;
/// Highest recordable value in nanoseconds (one hour); larger values saturate.
pub const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits kept.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// A new empty latency histogram with the project's bounds.
pub fn new_histogram() -> Histogram<u64> {
    // The bounds are constants that HdrHistogram accepts; failure here is a programming error.
    #[expect(clippy::expect_used, reason = "constant, valid bounds")]
    Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
        .expect("valid histogram bounds")
}
