//! The command line as reports keep it: every form of a typed password replaced by `***`.

use std::ffi::OsStr;

/// The command line with passwords replaced by `***`: `-a PW`, `-aPW`, a password inside
/// a run of short flags (`-qaPW`), and the password of a `-u` URI or of any word that is
/// a URI with credentials. A word that is not UTF-8 (a binary key, a file name) is kept
/// with U+FFFD for each byte that is not.
pub fn redact<S: AsRef<OsStr>>(argv: &[S]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(argv.len());
    let mut hide_next = false;
    for arg in argv {
        let arg = arg.as_ref().to_string_lossy();
        let arg = arg.as_ref();
        if hide_next {
            out.push("***".to_string());
            hide_next = false;
            continue;
        }
        // A command given to `--command` is one word: its secrets hidden inside it.
        if out.last().is_some_and(|l| l == "--command") {
            out.push(command_text(&words_of(arg)));
            continue;
        }
        if let Some(command) = arg.strip_prefix("--command=") {
            out.push(format!("--command={}", command_text(&words_of(command))));
            continue;
        }
        match password_in_short_flags(arg) {
            Some(ShortFlags::ValueFollows) => {
                hide_next = true;
                out.push(arg.to_string());
            }
            Some(ShortFlags::ValueAt(at)) => out.push(format!("{}***", &arg[..at])),
            None => out.push(redact_uri(arg)),
        }
    }
    // A command typed as the last words (`tailrate -n 10 AUTH pw`).
    hide_command_secrets(&mut out);
    out
}

/// The words of a `--command` as the workload splits them (quotes as redis-cli's), or at
/// spaces when they do not parse (the workload refuses those before any report).
fn words_of(command: &str) -> Vec<String> {
    match crate::workload::split_words(command.as_bytes()) {
        Ok(words) => words
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect(),
        Err(_) => command.split_whitespace().map(str::to_owned).collect(),
    }
}

/// A command's words as reports name it (the test's name, the command line): joined by
/// spaces, with the secrets of `AUTH`, `HELLO ... AUTH`, `MIGRATE ... AUTH`/`AUTH2`,
/// `CONFIG SET requirepass|masterauth` and `ACL SETUSER ... >password` as `***`.
pub fn command_text<S: AsRef<str>>(words: &[S]) -> String {
    let mut words: Vec<String> = words.iter().map(|w| w.as_ref().to_owned()).collect();
    hide_command_secrets(&mut words);
    words.join(" ")
}

/// Replaces the secrets among `words` (a command, or a command line ending in one) by
/// `***`: the user and password after `AUTH` (two in `HELLO`, after `AUTH2`, and after an
/// `AUTH` command of its own; one in `MIGRATE` and elsewhere; none after a flag, whose
/// value it is), the value of `CONFIG SET requirepass|masterauth`, and ACL rules that set
/// a password (`>pw`, `#hash`).
fn hide_command_secrets(words: &mut [String]) {
    let is = |w: &str, name: &str| w.eq_ignore_ascii_case(name);
    let hello = words.iter().any(|w| is(w, "HELLO"));
    let mut i = 0;
    while i < words.len() {
        // `AUTH` as a flag's value (`--key-prefix auth`) hides nothing.
        let hidden = if is(&words[i], "AUTH") && !(i > 0 && words[i - 1].starts_with('-')) {
            let rest = words.len() - i - 1;
            if hello {
                2
            } else if words.iter().any(|w| is(w, "MIGRATE")) {
                1
            } else if words[i + 1..].iter().all(|w| !w.starts_with('-')) {
                // A command of its own (`AUTH pw`, `AUTH user pw`) ends the words.
                rest.min(2)
            } else {
                1
            }
        } else if is(&words[i], "AUTH2") {
            2
        } else if (is(&words[i], "requirepass") || is(&words[i], "masterauth"))
            && i > 0
            && is(&words[i - 1], "SET")
        {
            1
        } else {
            if words[i].len() > 1
                && (words[i].starts_with('>') || words[i].starts_with('#'))
                && words.iter().any(|w| is(w, "SETUSER"))
            {
                words[i] = format!("{}***", &words[i][..1]);
            }
            0
        };
        for w in words.iter_mut().skip(i + 1).take(hidden) {
            *w = "***".to_string();
        }
        i += 1 + hidden;
    }
}

/// Where `-a`'s value is in a run of short flags.
enum ShortFlags {
    /// The run ends with `a`: the password is the next word.
    ValueFollows,
    /// The password starts at this byte of the word.
    ValueAt(usize),
}

/// Reads `word` as clap does when it is a run of short flags (`-qa`, `-qaPW`, `-c5`): each
/// letter is a flag until one that takes a value, whose value is the rest of the word.
/// `Some` when that flag is `-a`.
fn password_in_short_flags(word: &str) -> Option<ShortFlags> {
    use clap::CommandFactory;
    let letters = word
        .strip_prefix('-')
        .filter(|rest| !rest.starts_with('-'))?;
    let command = crate::cli::Args::command();
    for (i, c) in letters.char_indices() {
        let arg = command.get_arguments().find(|a| a.get_short() == Some(c))?;
        if arg.get_action().takes_values() {
            if c != 'a' {
                return None;
            }
            let at = 1 + i + c.len_utf8();
            return Some(if at == word.len() {
                ShortFlags::ValueFollows
            } else {
                ShortFlags::ValueAt(at)
            });
        }
    }
    None
}

/// `redis://user:secret@host` becomes `redis://user:***@host`; other text is unchanged.
pub fn redact_uri(text: &str) -> String {
    let Some(scheme_end) = text.find("://") else {
        return text.to_string();
    };
    let rest = &text[scheme_end + 3..];
    let Some(at) = rest.rfind('@') else {
        return text.to_string();
    };
    let auth = &rest[..at];
    let redacted = match auth.split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None => "***".to_string(),
    };
    format!(
        "{}{}@{}",
        &text[..scheme_end + 3],
        redacted,
        &rest[at + 1..]
    )
}

/// A usage error's `message` without a password it may quote: each word of `argv` quoted
/// as typed is quoted as [`redact`] shows it, and a value clap took from inside a run of
/// short flags that holds an `a` (`-qk1aPW`: `-k` took `1aPW`, meant as `-k1 -aPW`) is
/// shown up to that `a`, the rest as `***`.
pub fn hide_in_message<S: AsRef<OsStr>>(message: &str, argv: &[S]) -> String {
    let mut out = message.to_owned();
    for (arg, shown) in argv.iter().zip(redact(argv)) {
        let arg = arg.as_ref().to_string_lossy();
        if shown != arg {
            out = out.replace(&format!("'{arg}'"), &format!("'{shown}'"));
        }
        if !arg.starts_with('-') || arg.starts_with("--") {
            continue;
        }
        for (i, _) in arg.char_indices().skip(2) {
            let tail = &arg[i..];
            if let Some(at) = tail.find('a').filter(|at| at + 1 < tail.len()) {
                out = out.replace(&format!("'{tail}'"), &format!("'{}***'", &tail[..=at]));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_the_recorded_command_line() {
        let argv: Vec<String> = [
            "tailrate",
            "-a",
            "hunter2",
            "-u",
            "redis://bob:hunter2@h:1/0",
            "-ahunter2",
            "-qahunter2",
            "-qa",
            "hunter2",
            "-q",
            "-c5",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let joined = redact(&argv).join(" ");
        assert!(!joined.contains("hunter2"), "{joined}");
        assert!(joined.contains("redis://bob:***@h:1/0"), "{joined}");
        assert!(
            joined.contains("-qa***") && joined.contains("-qa ***"),
            "{joined}"
        );
        assert!(joined.ends_with("-q -c5"), "{joined}");
    }

    #[test]
    fn a_usage_error_never_quotes_a_password() {
        let argv = ["tailrate", "-qk1aPW"];
        let message = "invalid value '1aPW' for '-k <BOOLEAN>': invalid digit found in string";
        let hidden = hide_in_message(message, &argv);
        assert!(!hidden.contains("PW"), "{hidden}");
        assert!(hidden.contains("'1a***'"), "{hidden}");
        let argv = ["tailrate", "-a", "secret", "--rate", "x"];
        let hidden = hide_in_message("invalid value 'secret' here, 'x' there", &argv);
        assert_eq!(hidden, "invalid value '***' here, 'x' there");
        // Nothing to hide: unchanged.
        let argv = ["tailrate", "-t", "gte"];
        assert_eq!(
            hide_in_message("no test in 'gte'", &argv),
            "no test in 'gte'"
        );
    }

    #[test]
    fn a_commands_secrets_are_hidden_in_its_name_and_the_command_line() {
        assert_eq!(command_text(&["AUTH", "pw"]), "AUTH ***");
        assert_eq!(command_text(&["auth", "user", "pw"]), "auth *** ***");
        assert_eq!(
            command_text(&["HELLO", "3", "AUTH", "u", "p", "SETNAME", "n"]),
            "HELLO 3 AUTH *** *** SETNAME n"
        );
        assert_eq!(
            command_text(&["CONFIG", "SET", "requirepass", "x"]),
            "CONFIG SET requirepass ***"
        );
        assert_eq!(
            command_text(&["ACL", "SETUSER", "bob", "on", ">pw", "~*"]),
            "ACL SETUSER bob on >*** ~*"
        );
        assert_eq!(command_text(&["GET", "auth"]), "GET auth");
        assert_eq!(command_text(&["GET", "k"]), "GET k");
        let line = redact(&["tailrate", "--command", "AUTH pw", "-n", "10"]);
        assert_eq!(line, ["tailrate", "--command", "AUTH ***", "-n", "10"]);
        let line = redact(&["tailrate", "--command=AUTH pw"]);
        assert_eq!(line, ["tailrate", "--command=AUTH ***"]);
        let line = redact(&["tailrate", "-n", "10", "AUTH", "pw"]);
        assert_eq!(line, ["tailrate", "-n", "10", "AUTH", "***"]);
        // A flag's value that happens to read `auth` hides nothing after it.
        let line = redact(&["tailrate", "--key-prefix", "auth", "-n", "10", "-t", "get"]);
        assert_eq!(
            line,
            ["tailrate", "--key-prefix", "auth", "-n", "10", "-t", "get"]
        );
    }
}
