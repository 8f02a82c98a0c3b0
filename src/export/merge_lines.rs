//! The line `tailrate merge` ends with: how many shards it added, where the merged files
//! went, and the first merged test that is not valid.

use std::io::{self, Write};
use std::path::Path;

use crate::report::RunReport;

/// `merged 3 of 4 shards (partial) into out: report.json, merged.hlog; INVALID: ...`:
/// `merged` went into `out_dir` as the files `wrote`.
pub fn merged(
    out: &mut dyn Write,
    merged: &RunReport,
    out_dir: &Path,
    wrote: &[String],
) -> io::Result<()> {
    let summary = merged.merge.as_ref();
    writeln!(
        out,
        "merged {} of {} shards{} into {}: {}{}",
        summary.map_or(0, |m| m.parts.len()),
        summary.map_or(0, |m| m.shards),
        if summary.is_some_and(|m| m.partial) {
            " (partial)"
        } else {
            ""
        },
        out_dir.display(),
        wrote.join(", "),
        match merged.tests.iter().find(|t| !t.valid) {
            Some(t) => format!("; INVALID: {}", t.why_invalid()),
            None => String::new(),
        }
    )
}
