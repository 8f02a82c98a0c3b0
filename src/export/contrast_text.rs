//! `--contrast`'s table: a row per loop, a column per percentile, each closed loop's
//! percentiles as a fraction of the open loop's, and what each loop stands for.

use std::io::{self, Write};

use crate::report::contrast::{Contrast, HEADS};

impl Contrast {
    /// The table: a row per loop, a column per percentile, and each closed loop's
    /// percentiles as a fraction of the open loop's.
    pub fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "====== {}: open and closed loop at {:.0} requests per second, {} connections ======",
            self.test, self.rate_per_sec, self.connections
        )?;
        write!(out, "  {:<20} {:>12}", "loop", "achieved/s")?;
        for h in HEADS {
            write!(out, " {:>10}", format!("{h} ms"))?;
        }
        writeln!(out)?;
        for l in &self.loops {
            write!(out, "  {:<20} {:>12.0}", l.kind, l.achieved_rate_per_sec)?;
            for v in l.response_ms {
                write!(out, " {v:>10.3}")?;
            }
            writeln!(
                out,
                "{}",
                if l.valid {
                    ""
                } else {
                    "  (INVALID: see its report)"
                }
            )?;
        }
        if let Some(open) = self.loops.first() {
            for l in &self.loops[1..] {
                write!(out, "  {:<20} {:>12}", format!("{} / open", l.kind), "")?;
                for (v, o) in l.response_ms.iter().zip(open.response_ms) {
                    if o > 0.0 {
                        write!(out, " {:>10}", format!("{:.2}x", v / o))?;
                    } else {
                        write!(out, " {:>10}", "-")?;
                    }
                }
                writeln!(out)?;
            }
        }
        for l in &self.loops {
            writeln!(out, "  {}: {}", l.kind, l.stands_for)?;
        }
        writeln!(out)
    }
}
