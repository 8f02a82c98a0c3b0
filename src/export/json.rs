//! JSON: any report as pretty JSON, to a file or to standard output. When a report is
//! written (after every step, or once at the end) is [`super::outputs`]'s; how each
//! target is written (atomically, or directly) is [`crate::output`]'s.

use std::io::{self, Write};

use crate::output;

/// `value` as pretty JSON with a final newline.
pub fn to_bytes(value: &impl serde::Serialize) -> io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Writes `value` as JSON to `path`, or to `stdout` when `path` is `-`; the error names
/// `flag` and the path.
pub fn write(
    flag: &str,
    path: &std::path::Path,
    value: &impl serde::Serialize,
    stdout: &mut dyn Write,
) -> io::Result<()> {
    let written = to_bytes(value).and_then(|bytes| {
        if output::is_stdout(path) {
            stdout.write_all(&bytes)?;
            stdout.flush()
        } else {
            output::write_file(path, &bytes)
        }
    });
    written.map_err(|e| {
        let place = if output::is_stdout(path) {
            "standard output: ".to_string()
        } else {
            String::new()
        };
        io::Error::new(e.kind(), format!("{flag} {place}{e}"))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_file_is_rewritten_whole_and_only_the_target_remains() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let mut out = Vec::new();
        write("--json", &path, &serde_json::json!({"a": 1}), &mut out).unwrap();
        write("--json", &path, &serde_json::json!({"a": 2}), &mut out).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["a"], 2);
        assert!(out.is_empty());
    }

    #[test]
    fn a_dash_writes_to_the_given_stdout_and_a_failure_names_flag_and_path() {
        let mut out = Vec::new();
        write(
            "--json",
            "-".as_ref(),
            &serde_json::json!({"a": 1}),
            &mut out,
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["a"], 1);
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone/r.json");
        let e = write("--json", &gone, &1, &mut out)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--json ") && e.contains("gone/r.json"), "{e}");
    }
}
