//! Runs whose tail the host carried: the server or the generator was runnable and
//! waiting for a CPU when the slow replies were, so what the run measured is the
//! machine's weather, not the server's capacity. The capacity's estimate counts them
//! apart. The rule reads the run's tail attribution (`judge::tail`, the same one the
//! bottleneck reads); a run whose tail was not placed in time (no batches) falls back
//! to the share of the run its threads waited for a CPU.

use super::counted::left_out_why;
use crate::report::TestReport;
use crate::report::sweep::Measurement;
use crate::report::tail::Cause;

/// A run whose tail was not placed in time, and whose server or generator threads
/// waited for a CPU this share of the run or more, was disturbed by the host: ten times
/// what a quiet two-core machine shows (about 1%), and a tenth of a run in which the
/// tail can gather.
pub const DISTURBED_SHARE: f64 = super::host::WAIT_SHARE;

/// The share of `report`'s run the server's or the generator's threads waited for a CPU
/// (the larger; 0 when not measured), when the host carried the run's tail; `None` for
/// a run the host left alone. A run whose tail sits at the floor, or whose slow replies
/// the server's stalls, its queueing or the generator carried, is not the host's
/// however long its threads waited: the waits did not set what it reports.
pub fn host_carried(report: &TestReport) -> Option<f64> {
    let most = wait_share(report);
    match report.tail.as_ref().filter(|t| t.localised) {
        Some(tail) => {
            let carried = super::tail::carried_by(tail)?;
            (carried.cause == Cause::Host).then_some(most.unwrap_or(0.0))
        }
        None => most.filter(|&share| share >= DISTURBED_SHARE),
    }
}

/// How many of the counted runs of `group` (every run at one rate) the host carried,
/// while they are under half of them: the evidence the weather ate, which a sweep
/// measures again before its next look, so that the estimate (which leaves them out) has
/// the runs a quiet host would have given it. Where the host carried half the runs or
/// more, that is the host under this load, not a passing shower: more runs would fare
/// no better, and none are owed.
pub fn weather_ate(group: &[&Measurement]) -> usize {
    let counted: Vec<&TestReport> = group
        .iter()
        .map(|m| &m.report)
        .filter(|r| left_out_why(r).is_none())
        .collect();
    let carried = counted.iter().filter(|r| host_carried(r).is_some()).count();
    if carried * 2 < counted.len() {
        carried
    } else {
        0
    }
}

/// The share of `report`'s run the hypervisor took from the CPUs (summed over them, as
/// `/proc/stat` counts steal); `None` when not measured.
pub fn steal_share(report: &TestReport) -> Option<f64> {
    let steal_ms = report.host.as_ref()?.steal_ms?;
    let run_ms = report.measured_secs * 1e3;
    (run_ms > 0.0).then(|| steal_ms / run_ms)
}

/// The larger share of the run the server's or the generator's threads waited for a
/// CPU; `None` when neither was measured.
fn wait_share(report: &TestReport) -> Option<f64> {
    let host = report.host.as_ref()?;
    [host.server.as_ref(), host.generator.as_ref()]
        .into_iter()
        .flatten()
        .map(|w| w.run_queue_wait_share)
        .filter(|s| s.is_finite())
        .reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::host::{HostReport, TaskWaits};
    use crate::report::tail::{TailCause, TailCauses};

    fn with_waits(server: f64, generator: f64) -> TestReport {
        let mut m = crate::judge::fixtures::run(1000.0, 100_000, None, 1.0);
        let waits = |share: f64| TaskWaits {
            run_queue_wait_share: share,
            ..TaskWaits::default()
        };
        m.report.host = Some(HostReport {
            server: Some(waits(server)),
            generator: Some(waits(generator)),
            ..HostReport::default()
        });
        m.report
    }

    /// A tail over 1 ms at `level_ns` against a 0.1 ms floor, placed in time, carried by
    /// `cause` (90%) and the server (10%).
    fn tail(cause: Cause, level_ns: u64) -> TailCauses {
        let part = |cause, replies| TailCause {
            cause,
            replies,
            share: replies as f64 / 100.0,
        };
        TailCauses {
            over_ns: 1_000_000,
            bound: "p99".into(),
            replies: 100,
            level_ns,
            floor_ns: 100_000,
            causes: vec![part(cause, 90), part(Cause::Server, 10)],
            localised: true,
            ..TailCauses::default()
        }
    }

    #[test]
    fn runs_the_host_carried_are_owed_again_while_they_are_under_half_of_a_rates() {
        let quiet = || crate::judge::fixtures::run(1000.0, 100_000, None, 1.0);
        let stormy = || {
            let mut m = quiet();
            m.report = with_waits(0.03, 0.01);
            m.report.tail = Some(tail(Cause::Host, 5_000_000));
            m
        };
        let runs = |n_quiet: usize, n_stormy: usize| -> Vec<Measurement> {
            (0..n_quiet)
                .map(|_| quiet())
                .chain((0..n_stormy).map(|_| stormy()))
                .collect()
        };
        let ate = |runs: &[Measurement]| weather_ate(&runs.iter().collect::<Vec<_>>());
        assert_eq!(ate(&runs(4, 0)), 0);
        assert_eq!(ate(&runs(3, 1)), 1);
        assert_eq!(ate(&runs(5, 2)), 2);
        // Half or more: the host under this load, not weather.
        assert_eq!(ate(&runs(2, 2)), 0);
        assert_eq!(ate(&runs(0, 4)), 0);
        // A run left out for another reason is not counted either way.
        let mut short = runs(3, 1);
        short[0] = crate::judge::fixtures::run(1000.0, 100_000, None, 0.5);
        assert_eq!(ate(&short), 1);
    }

    #[test]
    fn without_a_placed_tail_a_run_whose_threads_waited_a_tenth_of_it_is_the_hosts() {
        assert_eq!(host_carried(&with_waits(0.01, 0.02)), None);
        assert_eq!(host_carried(&with_waits(0.45, 0.01)), Some(0.45));
        assert_eq!(host_carried(&with_waits(0.0, 0.2)), Some(0.2));
        // Not measured: not the host's, and not said to be.
        let mut quiet = with_waits(0.0, 0.0);
        quiet.host = None;
        assert_eq!(host_carried(&quiet), None);
    }

    #[test]
    fn with_a_placed_tail_the_run_is_the_hosts_exactly_when_the_host_carried_it() {
        // Short waits, but in the batches of the slow replies: the host's.
        let mut run = with_waits(0.03, 0.01);
        run.tail = Some(tail(Cause::Host, 5_000_000));
        assert_eq!(host_carried(&run), Some(0.03));
        // Long waits, but the server's stalls carried the tail: the server's.
        let mut run = with_waits(0.4, 0.01);
        run.tail = Some(tail(Cause::ServerStall, 5_000_000));
        assert_eq!(host_carried(&run), None);
        // Long waits, but the tail sits at the floor: nothing it reports moved.
        let mut run = with_waits(0.4, 0.01);
        run.tail = Some(tail(Cause::Host, 500_000));
        assert_eq!(host_carried(&run), None);
    }
}
