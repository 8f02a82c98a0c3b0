//! The command line as reports keep it: every form of a typed password replaced by `***`.

use std::ffi::OsStr;

/// The command line with passwords replaced by `***`: `-a PW`, `-aPW`, a password inside
/// a run of short flags (`-qaPW`), and the password of a `-u` URI or of any word that is
/// a URI with credentials. A word that is not UTF-8 (a binary key, a file name) is kept
/// with U+FFFD for each byte that is not.
pub fn redact<S: AsRef<OsStr>>(argv: &[S]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut hide_next = false;
    for arg in argv {
        let arg = arg.as_ref().to_string_lossy();
        let arg = arg.as_ref();
        if hide_next {
            out.push("***".to_string());
            hide_next = false;
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
    out
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
}
