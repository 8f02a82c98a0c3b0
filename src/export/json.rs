//! JSON files: the whole report. A file is rewritten after every test so an interruption
//! loses nothing already measured; standard output (`--json -`), a device or a FIFO get
//! the report once, when the run ends, so a reader sees one document. How each target
//! is written (atomically, or directly) is [`crate::output`]'s.

use std::io::{self, Write};
use std::path::PathBuf;

use super::Exporter;
use crate::output;
use crate::report::{RunReport, TestReport};

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

/// The `--json` exporter: rewrites a file after every test, writes a stream at the end.
pub struct JsonFile {
    /// Target path (`-`: standard output).
    pub path: PathBuf,
}

impl Exporter for JsonFile {
    fn test_done(
        &mut self,
        out: &mut dyn Write,
        report: &RunReport,
        _test: &TestReport,
    ) -> io::Result<()> {
        if output::is_file(&self.path) {
            write("--json", &self.path, report, out)?;
        }
        Ok(())
    }

    fn run_done(&mut self, out: &mut dyn Write, report: &RunReport) -> io::Result<()> {
        write("--json", &self.path, report, out)
    }
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
