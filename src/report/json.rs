//! JSON files: the whole report, rewritten after every test so an interruption loses
//! nothing already measured. Every file is written to a temporary name beside the
//! target and renamed over it, so a reader never sees half a file.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{Exporter, RunReport, TestReport};

/// Writes `value` as pretty JSON to `path` atomically (temporary file, then rename).
pub fn write_atomically(path: &Path, value: &impl serde::Serialize) -> io::Result<()> {
    let bytes = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    write_bytes_atomically(path, &bytes)
}

/// Writes `bytes` to `path` atomically (temporary file in the same directory, then rename).
pub fn write_bytes_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.write_all(b"\n")?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// Rewrites the JSON file after every test.
pub struct JsonFile {
    /// Target path.
    pub path: PathBuf,
}

impl Exporter for JsonFile {
    fn test_done(
        &mut self,
        _out: &mut dyn Write,
        report: &RunReport,
        _test: &TestReport,
    ) -> io::Result<()> {
        write_atomically(&self.path, report)
    }

    fn run_done(&mut self, _out: &mut dyn Write, report: &RunReport) -> io::Result<()> {
        write_atomically(&self.path, report)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn atomic_write_leaves_only_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write_atomically(&path, &serde_json::json!({"a": 1})).unwrap();
        write_atomically(&path, &serde_json::json!({"a": 2})).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["a"], 2);
    }
}
