//! Tests of the parent module.

#![allow(clippy::unwrap_used)]

use super::*;

/// Values at every bucket's edges, both ends of the range and beyond it, and a
/// seeded spread in between.
fn values() -> Vec<u64> {
    let mut v = vec![0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 4097];
    for shift in 0..64 {
        let p = 1u64 << shift;
        v.extend([p.saturating_sub(1), p, p.saturating_add(1)]);
    }
    v.extend([HIGHEST_NS - 1, HIGHEST_NS, HIGHEST_NS + 1, u64::MAX]);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(x >> (x % 60));
    }
    v
}

#[test]
fn indices_and_values_are_hdrhistograms() {
    let h = new_histogram();
    for v in values().into_iter().filter(|&v| v <= HIGHEST_NS) {
        let i = index_for(v);
        assert!(i < LEN, "{v}");
        assert_eq!(value_for(i), h.lowest_equivalent(v), "{v}");
        assert_eq!(
            value_for(i) + width_at(i) - 1,
            h.highest_equivalent(v),
            "{v}"
        );
    }
}

#[test]
fn recording_makes_the_histogram_hdrhistogram_would() {
    let (mut counts, mut h) = (Counts::new(), new_histogram());
    for (k, v) in values().into_iter().enumerate() {
        let n = 1 + k as u64 % 3;
        counts.record_n(v, n);
        h.saturating_record_n(v, n);
    }
    let made = counts.to_histogram();
    assert_eq!(made, h);
    assert_eq!(
        (made.max(), made.min_nz(), made.mean()),
        (h.max(), h.min_nz(), h.mean())
    );
    assert_eq!(counts.len(), h.len());
    assert_eq!(counts.max(), h.max());
    for q in [0.0, 1e-9, 0.1, 0.5, 0.9, 0.99, 0.999, 0.999_99, 1.0, 1.5] {
        assert_eq!(counts.value_at_quantile(q), h.value_at_quantile(q), "{q}");
    }
    assert_eq!(Counts::new().value_at_quantile(0.5), 0);
    let recorded: Vec<(u64, u64)> = h
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    assert_eq!(counts.iter().collect::<Vec<_>>(), recorded);
}

#[test]
fn the_length_is_hdrhistograms() {
    assert_eq!(LEN, new_histogram().distinct_values());
}

#[test]
fn memory_is_held_for_the_values_seen_and_widened_a_few_times() {
    let mut counts = Counts::new();
    assert_eq!(counts.held_bytes(), 0);
    // A rare command: twenty replies from 1 ms to 50 ms hold twenty counts, not the
    // window of 6,000 that spans them.
    for k in 0..20u64 {
        counts.record_n(1_000_000 + k * 2_450_000, 1);
    }
    assert!(counts.held_bytes() <= 32 * 16, "{}", counts.held_bytes());
    assert_eq!(counts.to_histogram().len(), 20);
    // A busy one: replies from 20 µs to 2 ms, one by one and in no order: a few
    // thousand counts, widened about log(window / grain) times.
    counts.reset();
    let (mut widened, mut held) = (0, counts.held_bytes());
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        counts.record_n(20_000 + x % 1_980_000, 1);
        if counts.held_bytes() != held {
            (widened, held) = (widened + 1, counts.held_bytes());
        }
    }
    // 20 µs to 2 ms are the indices 5346 to 12193: 6848 counts.
    assert!(widened <= 12, "{widened}");
    assert!(held <= 2 * 6848 * 8, "{held} bytes for 6848 counts");
    assert!(held < LEN * 8 / 2, "{held}");
    // Emptied, it keeps its window: recording again makes nothing.
    counts.reset();
    counts.record_n(1_000_000, 1);
    assert_eq!(counts.held_bytes(), held);
}

#[test]
fn lists_and_windows_add_into_each_other_exactly() {
    // Few values (a list), many (a window), and a list that overflows into a window
    // when added to.
    let vals = values();
    let few = |from: usize| {
        let mut c = Counts::new();
        for &v in &vals[from..from + 50] {
            c.record_n(v, 2);
        }
        c
    };
    let mut many = Counts::new();
    for &v in &vals {
        many.record_n(v, 1);
    }
    let (a, b, c) = (few(0), few(3_000), few(10_000));
    assert!(a.counts.is_empty() && !a.sparse.is_empty());
    for parts in [
        vec![&a, &b],
        vec![&a, &b, &c, &a, &b, &c],
        vec![&a, &many, &b],
        vec![&many, &a],
    ] {
        let (mut sum, mut expected) = (Counts::new(), new_histogram());
        for part in parts {
            sum.add(part);
            expected.add(part.to_histogram()).unwrap();
        }
        assert_eq!(sum.to_histogram(), expected);
        assert_eq!(sum.len(), expected.len());
        assert_eq!(sum.max(), expected.max());
    }
}

#[test]
fn adding_and_resetting_keep_the_counts_exact() {
    let (mut a, mut b, mut both) = (Counts::new(), Counts::new(), new_histogram());
    for (k, v) in values().into_iter().enumerate() {
        let into = if k % 2 == 0 { &mut a } else { &mut b };
        into.record_n(v, 1);
        both.saturating_record(v);
    }
    let mut sum = Counts::new();
    sum.add(&a);
    sum.add(&Counts::new());
    sum.add(&b);
    assert_eq!(sum.to_histogram(), both);
    sum.reset();
    assert!(sum.is_empty());
    assert_eq!(sum, Counts::new());
    assert_eq!(sum.to_histogram(), new_histogram());
    sum.record_n(5, 2);
    assert_eq!(sum.iter().collect::<Vec<_>>(), [(5, 2)]);
}
