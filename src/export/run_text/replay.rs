//! A replay's lines under the test's name: the trace, how it was replayed, and what of
//! it was not (left out by name, lines skipped), so that the figures below are read as
//! the trace's.

use std::io::{self, Write};

use crate::export::compare_text::trim_float;
use crate::report::ReplaySettings;
use crate::text::printable;

/// The replay's lines.
pub(super) fn lines(out: &mut dyn Write, r: &ReplaySettings) -> io::Result<()> {
    let recorded = match r.recorded_rate_per_sec {
        Some(rate) => format!(" ({rate:.1} commands/s)"),
        None => String::new(),
    };
    let clients = match r.recorded_clients {
        0 => "no recorded clients".to_string(),
        1 => "1 client".to_string(),
        n => format!("{n} clients"),
    };
    writeln!(
        out,
        "  replay of {} ({}): {} commands of {clients} over {:.3} s as recorded{recorded}, at {}x on {} connections{}",
        printable(&r.file),
        r.format,
        r.commands,
        r.recorded_span_secs,
        trim_float(r.speed),
        r.connections,
        if r.looped { ", looped" } else { "" }
    )?;
    if !r.left_out.is_empty() {
        let left: Vec<String> = r
            .left_out
            .iter()
            .map(|(name, n)| format!("{} {n}", printable(name)))
            .collect();
        writeln!(out, "  left out: {}", left.join(", "))?;
    }
    if r.bad_lines > 0 {
        writeln!(
            out,
            "  {} lines that did not parse were skipped (first: {})",
            r.bad_lines,
            printable(r.first_bad_line.as_deref().unwrap_or("?"))
        )?;
    }
    if r.out_of_order > 0 {
        writeln!(
            out,
            "  {} commands were recorded before the one before them: each was sent at the latest time so far",
            r.out_of_order
        )?;
    }
    Ok(())
}
