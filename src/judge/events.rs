//! What the server's own events did to a test's tail: an event is named when an
//! interval it falls in stands out of the run's (its slowest reply [`STANDS_OUT`] times
//! the run's typical interval p99, and as long as half the event at least).

use crate::report::IntervalSummary;
use crate::report::server::events::ServerEvents;

/// How many times the run's median interval p99 an interval's slowest reply must be to
/// stand out.
pub const STANDS_OUT: f64 = 4.0;

/// Fills each event's `in_tail` where an interval holding it stands out of `intervals`.
pub fn attribute(events: &mut ServerEvents, intervals: &[IntervalSummary]) {
    let mut p99s: Vec<u64> = intervals
        .iter()
        .filter(|i| i.completed > 0)
        .map(|i| i.p99_ns)
        .collect();
    p99s.sort_unstable();
    let Some(&typical) = p99s.get(p99s.len() / 2) else {
        return;
    };
    let latest_fork_usec = events.latest_fork_usec;
    for e in &mut events.events {
        // The server stamps whole seconds: the event began within the second after
        // `at_secs`, and lasted `length_ms`.
        let (from, to) = (e.at_secs, e.at_secs + 1.0 + e.length_ms / 1e3);
        let held = intervals
            .iter()
            .filter(|iv| iv.start_secs < to && iv.start_secs + iv.length_secs > from)
            .max_by_key(|iv| iv.max_ns);
        let Some(iv) = held else { continue };
        let (max_ms, p99_ms) = (iv.max_ns as f64 / 1e6, iv.p99_ns as f64 / 1e6);
        if iv.max_ns as f64 >= STANDS_OUT * typical as f64 && max_ms >= 0.5 * e.length_ms {
            let figure = match (e.event.as_str(), latest_fork_usec) {
                ("fork", Some(us)) => format!(
                    "{:.1} ms by the latency monitor, {:.1} ms by latest_fork_usec",
                    e.length_ms,
                    us as f64 / 1e3
                ),
                _ => format!("{:.1} ms by the server's {}", e.length_ms, e.source),
            };
            e.in_tail = Some(format!(
                "the slowest reply {max_ms:.2} ms and p99 {p99_ms:.2} ms in the interval from {:.0} s (the run's intervals: p99 {:.2} ms at the median): {} for {figure}",
                iv.start_secs,
                typical as f64 / 1e6,
                e.event,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::report::server::events::ServerEvent;

    fn interval(start_secs: f64, p99_ms: f64, max_ms: f64) -> IntervalSummary {
        IntervalSummary {
            start_secs,
            length_secs: 1.0,
            completed: 1000,
            errors: 0,
            p50_ns: 50_000,
            p99_ns: (p99_ms * 1e6) as u64,
            max_ns: (max_ms * 1e6) as u64,
        }
    }

    #[test]
    fn an_event_is_named_where_its_interval_stands_out_and_not_elsewhere() {
        let intervals = [
            interval(0.0, 0.4, 0.9),
            interval(1.0, 0.4, 0.8),
            interval(2.0, 9.0, 33.0),
            interval(3.0, 0.5, 1.0),
        ];
        let event = |at_secs: f64, length_ms: f64| ServerEvent {
            source: "latency monitor".into(),
            event: "fork".into(),
            at_secs,
            length_ms,
            in_tail: None,
        };
        let mut events = ServerEvents {
            forks: Some(1),
            latest_fork_usec: Some(31_000),
            events: vec![event(2.3, 31.0), event(0.2, 2.0)],
            ..ServerEvents::default()
        };
        attribute(&mut events, &intervals);
        let named = events.events[0].in_tail.as_deref().unwrap();
        assert!(
            named.contains("33.00 ms") && named.contains("fork for 31.0 ms"),
            "{named}"
        );
        assert!(named.contains("31.0 ms by latest_fork_usec"), "{named}");
        // In a calm interval an event is listed, not blamed.
        assert_eq!(events.events[1].in_tail, None);
    }
}
