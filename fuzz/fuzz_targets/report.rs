//! Fuzzes the report readers: `report::compare::parse` (a run's `--json` report or a
//! sweep's `sweep.json`, as `compare`, `plot` and `merge` read them), then each side's
//! entries, a comparison of the report with itself and, for a sweep, its plots. None
//! may panic or hang on any bytes; a file is read or refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tailrate::judge::compare;
use tailrate::report::compare::{Metrics, Options, Report};

fuzz_target!(|data: &[u8]| {
    let Ok(report) = tailrate::report::compare::parse(data) else { return };
    let entries = report.entries();
    let options = Options { metrics: Metrics::All, fail_if_slower: Some(0.05) };
    let _ = compare::compare((report.side("A".into()), &entries), (report.side("B".into()), &entries), &options);
    if let Report::Sweep(sweep) = &report {
        let _ = tailrate::export::plot::render_sweep(sweep, None);
    }
});
