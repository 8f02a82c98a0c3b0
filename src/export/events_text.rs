//! What happened to the server during a test, in words: a cluster's layout changing and a
//! time it could not be reached. The events themselves are `report::events`' models.

use crate::report::{LayoutChangeReport, OutageReport};

/// One line: `layout changed at 2.03 s: 127.0.0.1:7634 took over 5461 slots from
/// 127.0.0.1:7631`.
pub fn layout_change(change: &LayoutChangeReport) -> String {
    let from = match &change.from {
        Some(from) => format!(" from {from}"),
        None => " that no master served".into(),
    };
    format!(
        "layout changed at {:.2} s: {} took over {} slot{}{}",
        change.at_secs,
        change.to,
        change.slots,
        if change.slots == 1 { "" } else { "s" },
        from
    )
}

/// "1.28 s from 1.19 s (at least 0.81 s: a connect still failed then; could not
/// connect to ...: Connection refused)", or "... from 1.19 s to the end (...)".
pub fn outage(outage: &OutageReport) -> String {
    format!(
        "{:.2} s from {:.2} s{} (at least {:.2} s: a connect still failed then; {})",
        outage.length_secs,
        outage.start_secs,
        if outage.until_end { " to the end" } else { "" },
        outage.at_least_secs,
        outage.cause
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_change_reads_as_one_line_naming_both_masters() {
        let change = LayoutChangeReport {
            at_secs: 2.031,
            from: Some("127.0.0.1:7631".into()),
            to: "127.0.0.1:7634".into(),
            slots: 5461,
        };
        assert_eq!(
            layout_change(&change),
            "layout changed at 2.03 s: 127.0.0.1:7634 took over 5461 slots from 127.0.0.1:7631"
        );
        let unowned = LayoutChangeReport {
            from: None,
            slots: 1,
            ..change
        };
        assert_eq!(
            layout_change(&unowned),
            "layout changed at 2.03 s: 127.0.0.1:7634 took over 1 slot that no master served"
        );
    }
}
