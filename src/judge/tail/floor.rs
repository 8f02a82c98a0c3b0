//! Whether a tail sits at the floor, and which cause carries it: the rule the bottleneck
//! verdict, the tail's words and a sweep's weather read. The tail's counts are
//! `report::tail`'s model; the floor itself is measured in [`super::floor_ns`].

use crate::report::tail::{Cause, TailCause, TailCauses};

/// How many times the floor (the service time's p10, or its quietest batch's median) the
/// tail's level may be and still sit at the floor: the spread of a quiet machine's round
/// trips (a p99 of 2-6 times the median service time on a quiet 2-core machine,
/// 5k-50k/s, server and generator on their own cores; a quiet run's p10 lies close under
/// its median).
pub const FLOOR_FACTOR: f64 = 10.0;

/// Whether `tail` sits at the floor: its level under [`FLOOR_FACTOR`] times the floor.
pub fn at_floor(tail: &TailCauses) -> bool {
    tail.floor_ns > 0 && (tail.level_ns as f64) <= FLOOR_FACTOR * tail.floor_ns as f64
}

/// The cause that carries `tail`, with its share: the leading one, unless no reply was
/// over the bound or the tail sits at the floor (then nothing carried it).
pub fn carried_by(tail: &TailCauses) -> Option<&TailCause> {
    if tail.replies == 0 || at_floor(tail) {
        return None;
    }
    leading(tail)
}

/// The cause that carries the most replies of `tail`, of those a part of the path
/// carries (not [`Cause::Unattributed`]).
pub fn leading(tail: &TailCauses) -> Option<&TailCause> {
    tail.causes
        .iter()
        .filter(|c| c.cause != Cause::Unattributed && c.replies > 0)
        .max_by(|a, b| a.replies.cmp(&b.replies).then(b.cause.cmp(&a.cause)))
}
