//! Runs whose tail the host carried: the server or the generator waited for a CPU for a
//! material share of the run, so what the run measured is the machine's weather, not
//! the server's capacity. The capacity's estimate counts them apart. The rule reads the
//! report's host section (run-queue waits over the run); a finer per-run attribution of
//! the tail can replace [`host_carried`] without its callers changing.

use crate::report::TestReport;

/// A run whose server or generator threads waited for a CPU this share of the run or
/// more was disturbed by the host: ten times what a quiet two-core machine shows (about
/// 1%), and a tenth of a run in which the tail can gather.
pub const DISTURBED_SHARE: f64 = super::host::WAIT_SHARE;

/// The share of `report`'s run the server's or the generator's threads waited for a CPU
/// (the larger), when it is [`DISTURBED_SHARE`] or more; `None` for a run the host left
/// alone or whose waits were not measured.
pub fn host_carried(report: &TestReport) -> Option<f64> {
    let host = report.host.as_ref()?;
    let waits = [host.server, host.generator];
    let most = waits
        .iter()
        .flatten()
        .map(|w| w.run_queue_wait_share)
        .filter(|s| s.is_finite())
        .reduce(f64::max)?;
    (most >= DISTURBED_SHARE).then_some(most)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::host::{HostReport, TaskWaits};

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

    #[test]
    fn a_run_whose_server_or_generator_waited_a_tenth_of_it_for_a_cpu_is_the_hosts() {
        assert_eq!(host_carried(&with_waits(0.01, 0.02)), None);
        assert_eq!(host_carried(&with_waits(0.45, 0.01)), Some(0.45));
        assert_eq!(host_carried(&with_waits(0.0, 0.2)), Some(0.2));
        // Not measured: not the host's, and not said to be.
        let mut quiet = with_waits(0.0, 0.0);
        quiet.host = None;
        assert_eq!(host_carried(&quiet), None);
    }
}
