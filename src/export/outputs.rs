//! A command's outputs: its text (or CSV) on standard output, its `--json` report and its
//! `--hdr-log`, each to a path or to `-`, and its `--html` page (always a file). The one place that decides who has standard
//! output: an output given `-` has it to itself, and the text is then left out, since
//! anything printed beside a JSON document or an interval log would break what reads it.
//! The configuration refuses two outputs on `-` before anything runs.
//!
//! How a file is written (atomically, or directly when it is a device or a FIFO) is
//! [`crate::output`]'s; what is written is the other exporters'.

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::{Context, Result};

use super::hlog::HlogWriter;
use super::json;
use crate::output;

/// Who has standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holder {
    /// The text report (or the CSV, or a command's lines).
    Text,
    /// `--json -`: the report, written once at the end.
    Json,
    /// `--hdr-log -`: the interval log, streamed during the run.
    HdrLog,
}

/// Where a command's outputs go, and standard output's one owner.
pub struct Outputs<'a> {
    /// Standard output, until `--hdr-log -` takes it for the log.
    stdout: Option<&'a mut dyn Write>,
    holder: Holder,
    /// `--json`: a path, or `-`.
    json: Option<PathBuf>,
    /// `--hdr-log`: a path, or `-`.
    hdr_log: Option<PathBuf>,
    /// `--html`: a file (the configuration refused `-`).
    html: Option<PathBuf>,
    /// Where text goes when it has no standard output.
    discarded: io::Sink,
}

impl<'a> Outputs<'a> {
    /// The outputs of a command that writes `json` and `hdr_log` (each a path or `-`; at
    /// most one `-`, as the configuration checked) and its text on `stdout`.
    pub fn new(stdout: &'a mut dyn Write, json: Option<PathBuf>, hdr_log: Option<PathBuf>) -> Self {
        let on_stdout = |path: &Option<PathBuf>| path.as_deref().is_some_and(output::is_stdout);
        let holder = if on_stdout(&json) {
            Holder::Json
        } else if on_stdout(&hdr_log) {
            Holder::HdrLog
        } else {
            Holder::Text
        };
        Outputs {
            stdout: Some(stdout),
            holder,
            json,
            hdr_log,
            html: None,
            discarded: io::sink(),
        }
    }

    /// The same outputs with `--html` written to `html` when given.
    pub fn with_html(mut self, html: Option<PathBuf>) -> Self {
        self.html = html;
        self
    }

    /// Writes the page `render` makes to `--html`, if given (`render` runs only then), in
    /// one atomic replacement.
    pub fn save_html(&self, render: impl FnOnce() -> Result<String>) -> Result<()> {
        let Some(path) = &self.html else {
            return Ok(());
        };
        let page = render()?;
        output::write_file(path, page.as_bytes())
            .with_context(|| format!("writing --html {}", path.display()))
    }

    /// Whether the text is shown: no output was given `-`.
    pub fn shows_text(&self) -> bool {
        self.holder == Holder::Text
    }

    /// Where the text goes: standard output, or nowhere when an output given `-` has it.
    pub fn text(&mut self) -> &mut dyn Write {
        match self.stdout.as_deref_mut() {
            Some(stdout) if self.holder == Holder::Text => stdout,
            _ => &mut self.discarded,
        }
    }

    /// Saves the report so far after a step (a test, a trial): a file is rewritten whole
    /// so that an interruption loses nothing already measured; a stream (`-`, a device, a
    /// FIFO) waits for [`Outputs::save_json`], so its reader sees one document.
    pub fn save_json_so_far(&mut self, report: &impl serde::Serialize) -> Result<()> {
        match &self.json {
            Some(path) if output::is_file(path) => self.save_json(report),
            _ => Ok(()),
        }
    }

    /// Writes the whole report to `--json`, if given.
    pub fn save_json(&mut self, report: &impl serde::Serialize) -> Result<()> {
        let Some(path) = &self.json else {
            return Ok(());
        };
        let stdout: &mut dyn Write = match self.stdout.as_deref_mut() {
            Some(stdout) if self.holder == Holder::Json => stdout,
            _ => &mut self.discarded,
        };
        json::write("--json", path, report, stdout).context("writing results")
    }

    /// Opens `--hdr-log`, if given, and writes its header: a file created at its path, or
    /// standard output, which the log then holds until it is dropped. `comment` is its
    /// first line; interval times count from `started`.
    pub fn open_hdr_log(
        &mut self,
        started: SystemTime,
        comment: &str,
    ) -> Result<Option<HlogWriter<'a>>> {
        let Some(path) = self.hdr_log.as_deref() else {
            return Ok(None);
        };
        let log = match self.stdout.take() {
            Some(stdout) if self.holder == Holder::HdrLog => {
                let name = "standard output".to_string();
                HlogWriter::to_writer(Box::new(stdout), name, started, comment)
                    .context("writing --hdr-log")?
            }
            stdout => {
                self.stdout = stdout;
                HlogWriter::create(path, started, comment)
                    .with_context(|| format!("creating --hdr-log file {}", path.display()))?
            }
        };
        Ok(Some(log))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn text_has_standard_output_unless_an_output_is_given_a_dash() {
        let mut out = Vec::new();
        let mut outputs = Outputs::new(&mut out, Some("x.json".into()), None);
        assert!(outputs.shows_text());
        write!(outputs.text(), "shown").unwrap();
        drop(outputs);
        assert_eq!(out, b"shown");

        let mut out = Vec::new();
        let mut outputs = Outputs::new(&mut out, Some("-".into()), None);
        assert!(!outputs.shows_text());
        write!(outputs.text(), "hidden").unwrap();
        outputs.save_json_so_far(&1).unwrap();
        outputs.save_json(&serde_json::json!({"a": 1})).unwrap();
        drop(outputs);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["a"], 1);
    }

    #[test]
    fn a_dash_log_takes_standard_output_and_a_json_file_is_rewritten_as_it_goes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let mut out = Vec::new();
        let mut outputs = Outputs::new(&mut out, Some(path.clone()), Some("-".into()));
        let log = outputs.open_hdr_log(SystemTime::UNIX_EPOCH, "c").unwrap();
        write!(outputs.text(), "hidden").unwrap();
        outputs
            .save_json_so_far(&serde_json::json!({"a": 2}))
            .unwrap();
        drop(log);
        drop(outputs);
        assert!(String::from_utf8(out).unwrap().starts_with("#c\n"));
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["a"], 2);
    }
}
