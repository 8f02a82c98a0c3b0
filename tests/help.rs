//! The help as a user reads it from the binary: `tailrate --help` short enough to read
//! (the long explanations are in `tailrate help` and the man pages), the default of every
//! flag a run depends on in the help beside it, and every subcommand's help ending with
//! examples.

use std::process::Command;

use super::harness::tailrate_bin;

/// The most lines `tailrate --help` may print at 100 columns: about four screens, where
/// it printed 413 with every explanation inline.
const MAIN_HELP_MAX_LINES: usize = 250;

/// The help `args` prints at 100 columns (what clap assumes without a terminal).
fn help_of(args: &[&str]) -> String {
    let out = Command::new(tailrate_bin())
        .args(args)
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(out.status.success(), "tailrate {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands `tailrate --help` lists, but `help`.
fn subcommands(main_help: &str) -> Vec<String> {
    let list = main_help
        .split_once("Commands:\n")
        .map(|(_, rest)| rest)
        .expect("a Commands section");
    list.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The words of `flag`'s entry in a help: its line and the lines wrapped under it.
fn entry<'a>(help: &'a str, flag: &str) -> Option<String> {
    let mut lines = help.lines().skip_while(|l| {
        let t = l.trim_start();
        !(t == flag || t.starts_with(&format!("{flag} ")))
    });
    let first = lines.next()?;
    let mut words: Vec<&'a str> = first.split_whitespace().collect();
    // A flag starts at column 2 or 6, the lines wrapped under its help further right (a
    // wrapped line may itself start with `--`, naming another flag).
    for line in lines {
        let t = line.trim_start();
        if t.is_empty() || line.len() - t.len() <= 6 {
            break;
        }
        words.extend(t.split_whitespace());
    }
    Some(words.join(" "))
}

#[test]
fn the_main_help_stays_under_its_line_limit_and_points_to_the_long_one() {
    let help = help_of(&["--help"]);
    let lines = help.lines().count();
    assert!(
        lines <= MAIN_HELP_MAX_LINES,
        "tailrate --help prints {lines} lines; at most {MAIN_HELP_MAX_LINES}: move the \
         explanation into a second paragraph of the flag's doc (tailrate help, man)"
    );
    assert!(help.contains("tailrate help"), "{help}");
    // The long form keeps every explanation the short one leaves out.
    let long = help_of(&["help"]);
    assert!(long.lines().count() > lines, "{long}");
    assert!(
        long.contains("anyone in the path can pose as the server"),
        "--insecure's explanation is gone from the long help"
    );
}

#[test]
fn every_subcommands_help_has_an_examples_section_of_tailrate_commands() {
    let main = help_of(&["--help"]);
    let names = subcommands(&main);
    for expected in [
        "sweep", "replay", "compare", "plot", "tune", "merge", "report",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not in {names:?}"
        );
    }
    for name in std::iter::once(None).chain(names.iter().map(Some)) {
        let help = match name {
            Some(name) => help_of(&[name, "--help"]),
            None => main.clone(),
        };
        let (_, examples) = help
            .split_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("tailrate {name:?} --help has no Examples section"));
        assert!(
            examples
                .lines()
                .any(|l| l.trim_start().starts_with("tailrate ")),
            "tailrate {name:?} --help: no example command in {examples}"
        );
    }
}

#[test]
fn the_help_gives_the_default_of_every_flag_a_run_depends_on() {
    let run = help_of(&["--help"]);
    let sweep = help_of(&["sweep", "--help"]);
    let compare = help_of(&["compare", "--help"]);
    let cases: [(&str, &str, &str); 22] = [
        (&run, "-n", "[default: 100000]"),
        (&run, "--duration", "[default: 10s in the open loop"),
        (&run, "--warmup", "[default: 0s"),
        (&run, "-c", "[default: 50]"),
        (&run, "-P", "[default: 1]"),
        (&run, "-d", "[default: 3]"),
        (&run, "-t", "[default: redis-benchmark's default tests]"),
        (&run, "--threads", "[default: 1]"),
        (&run, "--rate", "[default: none, a closed loop]"),
        (&run, "--arrival", "[default: poisson]"),
        (&run, "--pacing", "[default: hybrid]"),
        (&run, "--repeat", "[default: 1]"),
        (&run, "--timeout", "[default: none"),
        (&run, "--seed", "[default: a fresh one"),
        (&run, "--precision", "[default: 3]"),
        (&run, "--percentiles", "[default: 50,90,95,99,99.9,99.99]"),
        (&run, "--key-pattern", "[default: uniform]"),
        (&sweep, "--duration", "5s a sweep step"),
        (&sweep, "--warmup", "1s before each sweep step"),
        (&sweep, "--settle", "[default: 1s]"),
        (&sweep, "--out", "[default: tailrate-out]"),
        (&compare, "--metric", "[default: response]"),
    ];
    for (help, flag, default) in cases {
        let words = entry(help, flag).unwrap_or_else(|| panic!("{flag} not in the help"));
        assert!(words.contains(default), "{flag}: {words}");
    }
}

#[test]
fn an_entry_is_its_line_and_the_lines_wrapped_under_it() {
    let help = "Options:\n  -n <N>      Requests, as\n              --count does [default: 5]\n      \
                --pipe <P>  Pipe\n";
    assert_eq!(
        entry(help, "-n").unwrap(),
        "-n <N> Requests, as --count does [default: 5]"
    );
    assert_eq!(entry(help, "--pipe").unwrap(), "--pipe <P> Pipe");
    assert_eq!(entry(help, "-x"), None);
}
