//! The man pages, tailrate(1) and one per subcommand (tailrate-sweep(1), ...), from the
//! same clap definitions as `--help`. clap_mangen renders the name, description, option
//! and version sections; the synopsis, the subcommands, EXIT STATUS and SEE ALSO are
//! written here: its synopsis lists every flag without its value (`[-h ] [-p ]`), and its
//! subcommand list names pages it does not write.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap_mangen::Man;

/// `tailrate man`: the pages are rendered here.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  tailrate man | man -l -
  tailrate man sweep | man -l -
  tailrate man --out /usr/local/share/man/man1

Guide: docs/install.md")]
pub struct ManArgs {
    /// The subcommand whose page to print (tailrate-sweep(1), ...); tailrate(1) without.
    #[arg(value_name = "SUBCOMMAND", value_parser = MAN_PAGES)]
    pub page: Option<String>,
    /// Write every page into this folder (tailrate.1, tailrate-sweep.1, ...) instead.
    #[arg(long, value_name = "DIR", conflicts_with = "page")]
    pub out: Option<PathBuf>,
}

/// The subcommands with a page of their own (a test keeps it in step with [`super::Command`]).
pub const MAN_PAGES: [&str; 9] = [
    "sweep",
    "replay",
    "plot",
    "compare",
    "tune",
    "merge",
    "report",
    "completions",
    "man",
];

/// The page names `tailrate man PAGE` takes: the subcommands that have one.
pub fn pages(root: &clap::Command) -> Vec<String> {
    root.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name().to_owned())
        .collect()
}

/// Renders tailrate(1), or tailrate-`page`(1) for a subcommand; `None` when `page` names
/// no subcommand.
pub fn render(
    root: clap::Command,
    page: Option<&str>,
    w: &mut dyn Write,
) -> Option<io::Result<()>> {
    let mut root = root.disable_help_subcommand(true);
    root.build();
    let others = pages(&root);
    let result = match page {
        None => render_page(&root, None, &others, w),
        Some(name) => {
            let sub = root.find_subcommand(name)?.clone();
            render_page(&sub, Some(name), &others, w)
        }
    };
    Some(result)
}

/// Writes every page into `dir` (made if missing) as `tailrate.1`, `tailrate-sweep.1`, ...; returns the
/// paths written.
pub fn write_all(root: clap::Command, dir: &Path) -> io::Result<Vec<PathBuf>> {
    let names = pages(&root);
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for page in std::iter::once(None).chain(names.iter().map(|n| Some(n.as_str()))) {
        let path = dir.join(format!("{}.1", title(page).to_lowercase()));
        let mut bytes = Vec::new();
        if let Some(result) = render(root.clone(), page, &mut bytes) {
            result?;
            std::fs::write(&path, bytes)?;
            written.push(path);
        }
    }
    Ok(written)
}

/// `TAILRATE` or `TAILRATE-SWEEP`.
fn title(page: Option<&str>) -> String {
    match page {
        None => "TAILRATE".to_owned(),
        Some(name) => format!("TAILRATE-{}", name.to_uppercase()),
    }
}

fn render_page(
    cmd: &clap::Command,
    page: Option<&str>,
    others: &[String],
    w: &mut dyn Write,
) -> io::Result<()> {
    let man = Man::new(cmd.clone())
        .title(title(page))
        .section("1")
        .source(format!("tailrate {}", env!("TAILRATE_VERSION")));
    man.render_title(w)?;
    if page.is_some() {
        // The subcommand's NAME line would read `sweep`; a page is named as it is called.
        writeln!(w, ".SH NAME")?;
        let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
        writeln!(
            w,
            "tailrate\\-{} \\- {}",
            escape(page.unwrap_or("")),
            escape(&about)
        )?;
    } else {
        man.render_name_section(w)?;
    }
    writeln!(w, ".SH SYNOPSIS")?;
    match page {
        None => {
            writeln!(
                w,
                "\\fBtailrate\\fR [\\fIOPTIONS\\fR] [\\fICOMMAND\\fR [\\fIARG\\fR...]]"
            )?;
            writeln!(w, ".br")?;
            writeln!(w, "\\fBtailrate\\fR \\fISUBCOMMAND\\fR [\\fIOPTIONS\\fR]")?;
        }
        Some(name) => {
            let operands: String = cmd
                .get_positionals()
                .map(|a| {
                    let value = a
                        .get_value_names()
                        .map(|v| v.join(" "))
                        .unwrap_or_else(|| a.get_id().to_string());
                    format!(" \\fI{}\\fR", escape(&value))
                })
                .collect();
            writeln!(
                w,
                "\\fBtailrate {}\\fR [\\fIOPTIONS\\fR]{operands}",
                escape(name)
            )?;
        }
    }
    man.render_description_section(w)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(w)?;
    }
    if page.is_none() {
        writeln!(w, ".SH SUBCOMMANDS")?;
        for sub in cmd
            .get_subcommands()
            .filter(|s| others.iter().any(|o| o == s.get_name()))
        {
            writeln!(w, ".TP")?;
            writeln!(w, "\\fBtailrate {}\\fR", escape(sub.get_name()))?;
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            writeln!(w, "{}", escape(&about))?;
        }
    }
    if cmd.get_after_help().is_some() || cmd.get_after_long_help().is_some() {
        man.render_extra_section(w)?;
    }
    writeln!(w, ".SH \"EXIT STATUS\"")?;
    for (code, meaning) in EXIT_STATUS {
        writeln!(w, ".TP\n{code}\n{}", escape(meaning))?;
    }
    writeln!(w, ".SH \"SEE ALSO\"")?;
    let see: Vec<String> = match page {
        None => others
            .iter()
            .map(|o| format!("tailrate\\-{}(1)", escape(o)))
            .collect(),
        Some(_) => vec!["tailrate(1)".to_owned()],
    };
    writeln!(w, "{}", see.join(", "))?;
    writeln!(
        w,
        ".PP\n\\fBtailrate man\\fR \\fISUBCOMMAND\\fR prints a subcommand's page; \\fBtailrate man \\-\\-out\\fR \\fIDIR\\fR writes them all. Guides: the docs/ folder of the source."
    )?;
    // A subcommand carries no version of its own: the program's.
    match cmd.get_version() {
        Some(_) => man.render_version_section(w),
        None => writeln!(w, ".SH VERSION\nv{}", escape(env!("TAILRATE_VERSION"))),
    }
}

/// What each exit status means, for every subcommand.
const EXIT_STATUS: [(&str, &str); 4] = [
    (
        "0",
        "The run, sweep or comparison finished and nothing below applies.",
    ),
    (
        "1",
        "A measured answer that fails: an objective (--slo) missed, a comparison's threshold (--fail-if-slower) crossed, every request of a test failed, a test whose server could not be reached at its end (a sweep: at every rate), a self-check failed with --strict, or an error while measuring (a server that cannot be reached, a file that cannot be written).",
    ),
    (
        "2",
        "Bad input: a flag, its value or a file refused before any load, with a message naming it.",
    ),
    (
        "130",
        "Interrupted (SIGINT, SIGTERM or SIGHUP); what was measured is still written.",
    ),
];

/// Escapes text for roff: backslashes, and a leading dot or quote that would read as a
/// request.
fn escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('-', "\\-");
    match escaped.chars().next() {
        Some('.' | '\'') => format!("\\&{escaped}"),
        _ => escaped,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use clap::CommandFactory;

    fn page(name: Option<&str>) -> String {
        let mut out = Vec::new();
        render(crate::cli::Args::command(), name, &mut out)
            .unwrap()
            .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_page_named_in_see_also_exists_and_each_has_a_synopsis_and_exit_status() {
        let root = page(None);
        assert!(root.contains(".TH TAILRATE 1"), "{root}");
        assert!(
            !root.contains("[\\fB\\-h \\fR]"),
            "valueless synopsis:\n{root}"
        );
        assert!(root.contains(".SH \"EXIT STATUS\""));
        let names = pages(&crate::cli::Args::command());
        assert_eq!(names, crate::cli::MAN_PAGES, "MAN_PAGES is out of step");
        for name in &names {
            let reference = format!("tailrate\\-{}(1)", name.replace('-', "\\-"));
            assert!(root.contains(&reference), "{reference} not in SEE ALSO");
            let sub = page(Some(name));
            let title = format!(".TH TAILRATE-{} 1", name.to_uppercase());
            assert!(sub.contains(&title), "{title} not in\n{sub}");
            assert!(sub.contains(&format!("\\fBtailrate {name}\\fR")), "{sub}");
            assert!(sub.contains(".SH \"EXIT STATUS\"") && sub.contains("tailrate(1)"));
        }
        let mut sink = Vec::new();
        assert!(render(crate::cli::Args::command(), Some("nope"), &mut sink).is_none());
    }
}
