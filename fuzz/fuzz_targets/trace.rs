//! Fuzzes the trace reader (`workload::trace`): any bytes, read as each format and with
//! the format detected, both stopping at the first bad line and skipping bad lines. None
//! may panic or hang; a trace is read or refused, and every record has a command.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tailrate::workload::trace::{TraceFormat, TraceReader};

fuzz_target!(|data: &[u8]| {
    let formats = [
        None,
        Some(TraceFormat::Monitor),
        Some(TraceFormat::JsonLines),
        Some(TraceFormat::Csv),
    ];
    for format in formats {
        for skip_bad_lines in [false, true] {
            let Ok(mut reader) = TraceReader::new(data, format, skip_bad_lines) else {
                continue;
            };
            while let Ok(Some(record)) = reader.next_record() {
                assert!(!record.args.is_empty() && record.line >= 1);
            }
            let _ = (
                reader.bad_lines(),
                reader.first_bad().map(ToString::to_string),
                reader.lines_read(),
            );
        }
    }
});
