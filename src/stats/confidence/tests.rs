//! The intervals' unit tests: open upper ends, widening by batches that disagree, and
//! the coverage of the true quantile on simulated runs.

#![allow(clippy::unwrap_used)]
use super::*;
use crate::record::new_histogram;
use hdrhistogram::Histogram;
use statrs::distribution::{ContinuousCDF, Normal};

#[test]
fn few_samples_beyond_leave_the_interval_open_above() {
    let mut h = new_histogram();
    for v in 1..=1_000u64 {
        h.record(v * 1_000).unwrap();
    }
    let p50 = estimate(&h, &[], 0.5).unwrap();
    assert!(p50.ci95.high().is_some());
    assert!(p50.ci95.contains(500_000));
    let p999 = estimate(&h, &[], 0.999).unwrap();
    assert_eq!(p999.beyond, 1);
    assert_eq!(p999.ci95.high(), None);
}

#[test]
fn batches_that_disagree_widen_the_interval() {
    // Half the batches fast, half slow: far from binomial.
    let mut total = new_histogram();
    let mut batches = Vec::new();
    for i in 0..40u64 {
        let mut h = new_histogram();
        for j in 0..1_000u64 {
            h.record(if i % 2 == 0 { 100_000 } else { 200_000 } + j * 10)
                .unwrap();
        }
        total.add(&h).unwrap();
        batches.push(Batch::of(&h));
    }
    let plain = estimate(&total, &[], 0.25).unwrap();
    let widened = estimate(&total, &batches, 0.25).unwrap();
    assert!(widened.design_effect > 10.0, "{widened:?}");
    let width = |e: &QuantileEstimate| e.ci95.high().unwrap() - e.ci95.low();
    assert!(width(&widened) > 3 * width(&plain), "{plain:?} {widened:?}");
}

/// The interval's coverage on synthetic runs of a known distribution: how often the
/// 95% interval holds the true quantile, over seeded simulated runs.
mod coverage {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_distr::{Distribution, LogNormal};

    const SEED: u64 = 7;
    const RUNS: usize = 500;
    const BATCHES: usize = 50;
    const PER_BATCH: usize = 1_000;
    /// Calm replies: median 100 µs.
    const CALM: (f64, f64) = (11.512_925_465, 0.3);
    /// Replies in a stall: median 2 ms.
    const STALL: (f64, f64) = (14.508_657_738, 0.3);
    /// Share of replies inside stalls, and a stall's mean length in replies.
    const STALL_SHARE: f64 = 0.02;
    const STALL_LENGTH: f64 = 100.0;

    /// The true quantile of the marginal: calm and stall log-normals mixed by the stall share.
    fn true_quantile(q: f64, share: f64) -> f64 {
        let normal = Normal::standard();
        let cdf = |x: f64| {
            (1.0 - share) * normal.cdf((x.ln() - CALM.0) / CALM.1)
                + share * normal.cdf((x.ln() - STALL.0) / STALL.1)
        };
        let (mut lo, mut hi) = (1.0f64, 1e12f64);
        for _ in 0..200 {
            let mid = (lo * hi).sqrt();
            if cdf(mid) < q { lo = mid } else { hi = mid }
        }
        hi
    }

    /// One run: replies in time order, calm or in a stall by a two-state Markov chain
    /// started in its stationary state (`share` 0 gives independent replies).
    fn run(rng: &mut rand_pcg::Pcg64, share: f64) -> (Histogram<u64>, Vec<Batch>) {
        let calm = LogNormal::new(CALM.0, CALM.1).unwrap();
        let stall = LogNormal::new(STALL.0, STALL.1).unwrap();
        let leave_stall = 1.0 / STALL_LENGTH;
        let enter_stall = if share > 0.0 {
            leave_stall * share / (1.0 - share)
        } else {
            0.0
        };
        let mut stalled = rng.random::<f64>() < share;
        let mut total = new_histogram();
        let mut batch = new_histogram();
        let mut batches = Vec::with_capacity(BATCHES);
        for _ in 0..BATCHES {
            batch.reset();
            for _ in 0..PER_BATCH {
                stalled = if stalled {
                    rng.random::<f64>() >= leave_stall
                } else {
                    rng.random::<f64>() < enter_stall
                };
                let v = if stalled {
                    stall.sample(rng)
                } else {
                    calm.sample(rng)
                };
                batch.record(v as u64).unwrap();
            }
            total.add(&batch).unwrap();
            batches.push(Batch::of(&batch));
        }
        (total, batches)
    }

    /// Share of `RUNS` runs whose interval holds the true quantile: `(widened, plain)`.
    fn coverage(seed: u64, share: f64, q: f64) -> (f64, f64) {
        let truth = true_quantile(q, share) as u64;
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let (mut widened, mut plain) = (0, 0);
        for _ in 0..RUNS {
            let (total, batches) = run(&mut rng, share);
            widened += usize::from(estimate(&total, &batches, q).unwrap().ci95.contains(truth));
            plain += usize::from(estimate(&total, &[], q).unwrap().ci95.contains(truth));
        }
        (widened as f64 / RUNS as f64, plain as f64 / RUNS as f64)
    }

    #[test]
    fn the_interval_holds_the_true_quantile_in_about_95_percent_of_runs() {
        let mut report = Vec::new();
        let mut bad = Vec::new();
        for (data, share) in [("independent", 0.0), ("bursty", STALL_SHARE)] {
            for q in [0.5, 0.99, 0.999] {
                let (widened, plain) = coverage(SEED, share, q);
                report.push(format!(
                    "{data} p{}: {:.1}% (binomial alone {:.1}%)",
                    q * 100.0,
                    widened * 100.0,
                    plain * 100.0
                ));
                if !(0.93..=0.97).contains(&widened) {
                    bad.push(report.last().unwrap().clone());
                }
            }
        }
        println!("{}", report.join("\n"));
        assert!(
            bad.is_empty(),
            "coverage outside 93-97%: {bad:?}\nall: {report:#?}"
        );
    }
}

#[test]
fn the_normal_approximation_takes_over_from_the_binomial_without_a_step() {
    // Just under and just over the switch: the same ranks to a hundredth of a percent.
    let (a, b) = (NORMAL_FROM - 1, NORMAL_FROM + 1);
    let (la, ha) = rank_interval(a, 0.99, 1.0, 0.95);
    let (lb, hb) = rank_interval(b, 0.99, 1.0, 0.95);
    assert!((la as f64 - lb as f64).abs() < 1e-4 * a as f64, "{la} {lb}");
    assert!((ha as f64 - hb as f64).abs() < 1e-4 * a as f64, "{ha} {hb}");
    // A merged file's 2^53 values: an answer, at once.
    let n = 1u64 << 53;
    let (l, h) = rank_interval(n, 0.5, 1.0, 0.95);
    assert!(l < n / 2 && h > n / 2 && h <= n + 1);
}
