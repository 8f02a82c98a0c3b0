//! The command line as reports keep it: every form of a typed password replaced by `***`.

/// The command line with passwords replaced by `***`.
pub fn redact(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut hide_next = false;
    for arg in argv {
        if hide_next {
            out.push("***".to_string());
            hide_next = false;
        } else if arg == "-a" || arg == "-u" {
            hide_next = arg == "-a";
            out.push(arg.clone());
            if arg == "-u" {
                // The URI follows; redact it when we see it.
                hide_next = false;
            }
        } else if let Some(rest) = arg.strip_prefix("-a")
            && !rest.is_empty()
            && !arg.starts_with("--")
        {
            out.push("-a***".to_string());
        } else {
            out.push(redact_uri(arg));
        }
    }
    out
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
            "-q",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let joined = redact(&argv).join(" ");
        assert!(!joined.contains("hunter2"), "{joined}");
        assert!(joined.contains("redis://bob:***@h:1/0"), "{joined}");
    }
}
