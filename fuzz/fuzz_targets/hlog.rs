//! Fuzzes the interval-log reader `merge::hlog::read_log` (a shard's `.hlog`, as `merge`
//! reads it) and the decoding of every interval it accepts. None may panic or hang on
//! any bytes; a log is read or refused with its line.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(log) = tailrate::merge::hlog::read_log(std::path::Path::new("fuzzed.hlog"), data) {
        for interval in &log.intervals {
            let _ = interval.histogram().len();
        }
    }
});
