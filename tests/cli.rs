//! The command line as a shell sees it: the version, completions and the man page.

use std::io::Write;
use std::process::{Command, Stdio};

use super::harness::tailrate_bin;

fn stdout_of(args: &[&str]) -> String {
    let out = Command::new(tailrate_bin()).args(args).output().unwrap();
    assert!(out.status.success(), "tailrate {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn version_names_the_package_version_and_the_git_revision_when_built_from_a_checkout() {
    let version = stdout_of(&["--version"]);
    let expected = format!("tailrate {}", env!("CARGO_PKG_VERSION"));
    assert!(version.starts_with(&expected), "{version}");
    let in_checkout = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success());
    if let Some(rev) = in_checkout {
        let rev = String::from_utf8_lossy(&rev.stdout).trim().to_string();
        assert!(
            version.contains(&format!("({rev})")),
            "{version} lacks {rev}"
        );
    }
}

#[test]
fn bash_completion_completes_a_long_flag_from_its_first_letters() {
    let script = stdout_of(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tailrate.bash");
    std::fs::write(&path, script).unwrap();
    // What bash does on `tailrate --ra<TAB>`: call the completion function with the words.
    let probe = format!(
        "source {}; COMP_WORDS=(tailrate --ra); COMP_CWORD=1; COMP_LINE='tailrate --ra'; \
         COMP_POINT=13; _tailrate tailrate --ra tailrate; echo \"${{COMPREPLY[*]}}\"",
        path.display()
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    let words = String::from_utf8_lossy(&out.stdout);
    let words: Vec<&str> = words.split_whitespace().collect();
    assert!(words.contains(&"--rate"), "{words:?} {out:?}");
    assert!(words.iter().all(|w| w.starts_with("--ra")), "{words:?}");
}

#[test]
fn completions_exist_for_zsh_and_fish_and_unknown_shells_are_usage_errors() {
    assert!(stdout_of(&["completions", "zsh"]).contains("#compdef tailrate"));
    assert!(stdout_of(&["completions", "fish"]).contains("complete -c tailrate"));
    let out = Command::new(tailrate_bin())
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn the_man_page_renders_with_man_and_documents_the_flags() {
    let page = stdout_of(&["man"]);
    assert!(
        page.contains(".TH TAILRATE 1"),
        "{}",
        &page[..page.len().min(300)]
    );
    let mut man = Command::new("man")
        .args(["-l", "-"])
        .env("MANWIDTH", "100")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("man (Debian's man-db) renders the page");
    man.stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let out = man.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = plain(&String::from_utf8_lossy(&out.stdout));
    for needle in ["NAME", "SYNOPSIS", "--rate", "--max-inflight", "sweep"] {
        assert!(text.contains(needle), "the rendered page lacks {needle}");
    }
}

/// Terminal text without the overstrikes (`N\x08N` for bold) that man prints into a pipe.
fn plain(text: &str) -> String {
    let mut out: Vec<char> = Vec::with_capacity(text.len());
    for c in text.chars() {
        if c == '\u{8}' {
            out.pop();
        } else {
            out.push(c);
        }
    }
    out.into_iter().collect()
}

/// Runs tailrate with `args` against a port nothing listens on and returns its exit code
/// and standard error.
fn usage_of(args: &[&str]) -> (Option<i32>, String) {
    let port = super::harness::free_port().to_string();
    // The port goes after a subcommand (which must come first) and before a custom command.
    let at = usize::from(["sweep", "tune"].contains(&args[0]));
    let mut argv = args.to_vec();
    argv.splice(at..at, ["-p", port.as_str()]);
    let out = Command::new(tailrate_bin()).args(&argv).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn usage_errors_keep_the_flag_the_suggestion_and_the_allowed_values() {
    let cases: [(&[&str], &[&str]); 8] = [
        (&["sweep"], &["--rates"]),
        (
            &["--duratoin", "1s"],
            &["--duratoin", "similar argument", "--duration"],
        ),
        (&["--arrival", "foo"], &["--arrival", "constant, poisson"]),
        (&["-c", "-1"], &["-c <CLIENTS>", "-1"]),
        (&["-n", "-5"], &["-n <REQUESTS>"]),
        (&["--duration", "-1s"], &["--duration", "-1s"]),
        (&["--rate", "-3"], &["--rate", "-3"]),
        (
            &["sweep", "--rates", "1k", "--settle", "-1s"],
            &["--settle"],
        ),
    ];
    for (args, needles) in cases {
        let (code, stderr) = usage_of(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        for needle in needles {
            assert!(stderr.contains(needle), "{args:?}: {stderr} lacks {needle}");
        }
    }
}

#[test]
fn a_mistyped_subcommand_or_a_flag_after_the_command_is_a_usage_error_with_a_hint() {
    let (code, stderr) = usage_of(&["swep", "--rates", "10k"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("tailrate sweep"), "{stderr}");
    let (code, stderr) = usage_of(&["-n", "1000", "SET", "k", "v", "-q"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("-q comes after the custom command"),
        "{stderr}"
    );
    // Negative numbers and upper-case words are a command's own arguments: they get as far
    // as connecting (to a port nothing listens on: exit 1).
    for args in [
        &["-n", "10", "ZADD", "k", "-3", "m"][..],
        &["-n", "10", "SWEP"][..],
    ] {
        let (code, stderr) = usage_of(args);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("connecting"), "{args:?}: {stderr}");
    }
}

/// Count flags read numbers one way: spaces trimmed, suffixes taken, and a message that
/// says what was expected rather than the integer parser's "invalid digit".
#[test]
fn seed_workers_and_pipeline_size_read_counts_as_every_count_flag_does() {
    for args in [
        &["-t", "get", "-n", "10", "--seed", "abc"][..],
        &["-t", "get", "-n", "10", "--workers", "x"],
        &[
            "-t",
            "get",
            "-n",
            "10",
            "--workers",
            "8",
            "--pipeline-size",
            "-1",
        ],
    ] {
        let (code, stderr) = usage_of(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("invalid digit"), "{args:?}: {stderr}");
        assert!(
            stderr.contains("expected a") || stderr.contains("is not a number"),
            "{args:?}: {stderr}"
        );
    }
    // ' 5' is a count: accepted (the run then finds no server: exit 1, not usage).
    for args in [
        &["-t", "get", "-n", "10", "--seed", " 5"][..],
        &[
            "-t",
            "get",
            "-n",
            "10",
            "-c",
            "2",
            "--workers",
            " 8",
            "--pipeline-size",
            " 4",
        ],
    ] {
        let (code, stderr) = usage_of(args);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
    }
}

/// Each common mistake's message names its fix.
#[test]
fn common_mistakes_are_answered_with_the_fix() {
    let cases: [(&[&str], Option<i32>, &str); 6] = [
        (&["-h"], Some(2), "help is --help"),
        (&["-t", "gte", "-n", "10"], Some(2), "did you mean get?"),
        (
            &["--rate", "10", "k", "--duration", "1s"],
            Some(2),
            "write a number and its unit together",
        ),
        (
            &["sweep", "--rates", "1k", "--contrast"],
            Some(2),
            "--rate-capped and --closed-loop-points",
        ),
        (
            &["tune", "--slo", "p99<=1ms", "-t", "get"],
            Some(2),
            "tailrate sweep",
        ),
        // Nothing listens on the free port the harness picked.
        (
            &["-t", "get", "-n", "10"],
            Some(1),
            "is a server running there?",
        ),
    ];
    for (args, code, says) in cases {
        let (got, stderr) = usage_of(args);
        assert_eq!(got, code, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let out = Command::new(tailrate_bin())
        .args(["-h", "localhost:6379", "-t", "get", "-n", "10"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("-h takes a host alone"), "{stderr}");
}
