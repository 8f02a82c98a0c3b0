//! The replies over a bound counted by cause as the attribution places them, and the
//! host's part of them by batch.

use std::collections::BTreeSet;

use crate::report::host::TailInWaits;
use crate::report::tail::{Cause, TailCause};
use crate::stats::confidence::Batch;

/// The replies over the bound counted so far, by cause; the stalls' replies by batch; the
/// host's parts, and the batches where the host carried any.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// Replies over the bound, counted in the batches (0 from the whole histograms).
    pub(super) replies: u64,
    pub(super) by_cause: Vec<(Cause, f64)>,
    pub(super) host_parts: Vec<(&'static str, f64)>,
    /// `(batch, the reply's time, replies)` of the replies given to a stall.
    pub(super) stalls: Vec<(usize, u64, f64)>,
    pub(super) waiting: BTreeSet<usize>,
}

impl Tally {
    pub(super) fn add(&mut self, cause: Cause, n: f64) {
        if n <= 0.0 {
            return;
        }
        match self.by_cause.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, m)) => *m += n,
            None => self.by_cause.push((cause, n)),
        }
    }

    /// `n` replies of batch `i`: the host's when `part` waited, else `otherwise`'s.
    pub(super) fn place(&mut self, i: usize, part: Option<&'static str>, otherwise: Cause, n: f64) {
        let Some(part) = part else {
            self.add(otherwise, n);
            return;
        };
        self.add(Cause::Host, n);
        self.waiting.insert(i);
        match self.host_parts.iter_mut().find(|(p, _)| *p == part) {
            Some((_, m)) => *m += n,
            None => self.host_parts.push((part, n)),
        }
    }

    pub(super) fn stalled(&mut self, i: usize, value_ns: u64, n: f64) {
        self.add(Cause::ServerStall, n);
        self.stalls.push((i, value_ns, n));
    }

    /// The causes with their replies (rounded) and shares of `replies`, the most first.
    pub(super) fn causes(&self, replies: u64) -> Vec<TailCause> {
        let mut causes: Vec<TailCause> = self
            .by_cause
            .iter()
            .map(|&(cause, n)| TailCause {
                cause,
                replies: n.round() as u64,
                share: if replies == 0 {
                    0.0
                } else {
                    n / replies as f64
                },
            })
            .filter(|c| c.replies > 0)
            .collect();
        causes.sort_by(|a, b| b.replies.cmp(&a.replies).then(a.cause.cmp(&b.cause)));
        causes
    }

    /// The host's part by batch: the batches where it carried replies over the bound,
    /// and the p99 of the others.
    pub(super) fn in_waits(&self, over_ns: u64, response: &[Batch], replies: u64) -> TailInWaits {
        let mut without = Batch::default();
        for (i, b) in response.iter().enumerate() {
            if !self.waiting.contains(&i) {
                without.add(b);
            }
        }
        let host_replies: f64 = self
            .by_cause
            .iter()
            .filter(|(c, _)| *c == Cause::Host)
            .map(|(_, n)| n)
            .sum();
        let mut parts = self.host_parts.clone();
        parts.sort_by(|a, b| b.1.total_cmp(&a.1));
        TailInWaits {
            over_ns,
            slow_replies: replies,
            in_waiting_batches: host_replies.round() as u64,
            waiting_batches: self.waiting.len() as u64,
            batches: response.len() as u64,
            parts: parts.iter().map(|(p, _)| p.to_string()).collect(),
            waiting: self
                .waiting
                .iter()
                .map(|&i| u32::try_from(i).unwrap_or(u32::MAX))
                .collect(),
            p99_without_waits_ns: without.quantile(0.99),
        }
    }
}
