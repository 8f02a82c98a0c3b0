//! A command's outputs, the one road from a report to every destination: its text (or
//! CSV, or `-q` lines) on standard output, its `--json` report and its `--hdr-log`, each
//! to a path or to `-`, its `--html` page and its files in `--out`. Built once from the
//! [`Destinations`] the configuration decided; each runner hands it its
//! [`Report`] after each step and at the end, and writes nothing itself.
//!
//! It decides who has standard output: an output given `-` has it to itself, and the text
//! is then left out, since anything printed beside a JSON document or an interval log
//! would break what reads it. The configuration refuses two outputs on `-` before
//! anything runs.
//!
//! How a file is written (atomically, or directly when it is a device or a FIFO) is
//! [`crate::output`]'s; what is written is the renders' (`text`, `json`, `html`,
//! `out_dir`, `hlog`).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};

use super::Exporter;
use super::hlog::HlogWriter;
use super::report::Report;
use super::{html, json, out_dir, text};
use crate::config::Destinations;
use crate::output;
use crate::report::{RunReport, TestReport};

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
    to: Destinations,
    /// A run's text as its tests end: the form asked for, when the text is shown.
    exporter: Option<Box<dyn Exporter>>,
    /// A run's tests were shown as they ended: its end shows only its closing sections.
    streamed: bool,
    /// `--out` was made.
    out_made: bool,
    /// Where text goes when it has no standard output.
    discarded: io::Sink,
}

impl<'a> Outputs<'a> {
    /// The outputs `to` names, with the text on `stdout` (at most one of `--json` and
    /// `--hdr-log` is `-`, as the configuration checked).
    pub fn new(stdout: &'a mut dyn Write, to: &Destinations) -> Self {
        let on_stdout = |path: &Option<PathBuf>| path.as_deref().is_some_and(output::is_stdout);
        let holder = if on_stdout(&to.json) {
            Holder::Json
        } else if on_stdout(&to.hdr_log) {
            Holder::HdrLog
        } else {
            Holder::Text
        };
        let exporter = (holder == Holder::Text).then(|| text::run_exporter(to.text, to.precision));
        Outputs {
            stdout: Some(stdout),
            holder,
            to: to.clone(),
            exporter,
            streamed: false,
            out_made: false,
            discarded: io::sink(),
        }
    }

    /// Whether the text is shown: no output was given `-`.
    pub fn shows_text(&self) -> bool {
        self.holder == Holder::Text
    }

    /// Where a command's own lines go: standard output, or nowhere when an output given
    /// `-` has it.
    pub fn text(&mut self) -> &mut dyn Write {
        match self.stdout.as_deref_mut() {
            Some(stdout) if self.holder == Holder::Text => stdout,
            _ => &mut self.discarded,
        }
    }

    /// A run's test ended: its text in the form asked for, and `--json` rewritten when it
    /// is a file (so an interruption loses nothing already measured).
    pub fn test_done(&mut self, report: &RunReport, test: &TestReport) -> Result<()> {
        self.streamed = true;
        if let Some(mut exporter) = self.exporter.take() {
            let shown = exporter.test_done(self.text(), report, test);
            self.exporter = Some(exporter);
            shown.context("writing results")?;
        }
        self.save_json_so_far(report)?;
        self.text().flush().ok();
        Ok(())
    }

    /// The whole text of `report` in the form asked for, on standard output (unless an
    /// output given `-` has it).
    pub fn print(&mut self, report: Report<'_>) -> Result<()> {
        if !self.shows_text() {
            return Ok(());
        }
        let bytes = text::render(report, self.to.text, self.to.precision)?;
        let out = self.text();
        out.write_all(&bytes).context("writing results")?;
        out.flush().ok();
        Ok(())
    }

    /// The command's end (or interruption): its text (only a run's closing sections when
    /// its tests were shown as they ended), then every file ([`Outputs::save`]). Returns
    /// the names written in `--out`.
    pub fn end(&mut self, report: Report<'_>) -> Result<Vec<String>> {
        match (report, self.exporter.take()) {
            (Report::Run(run), Some(mut exporter)) if self.streamed => {
                let shown = exporter.run_done(self.text(), run);
                self.exporter = Some(exporter);
                shown.context("writing results")?;
            }
            (_, exporter) => {
                self.exporter = exporter;
                self.print(report)?;
            }
        }
        self.save(report)
    }

    /// Writes `report` to every file destination: `--json` (or standard output for
    /// `-`), the files of `--out` (made now when missing) and `--html`. Returns the names
    /// written in `--out`.
    pub fn save(&mut self, report: Report<'_>) -> Result<Vec<String>> {
        self.save_json(report)?;
        let (files, page) = match report {
            Report::Sweep {
                report: sweep,
                said,
            } if self.to.out.is_some() => {
                let (files, saved) = out_dir::sweep(sweep, said)?;
                let page = self.page(Report::Sweep {
                    report: &saved,
                    said,
                })?;
                (files, page)
            }
            _ => {
                let files = match self.to.out {
                    Some(_) => out_dir::render(report)?,
                    None => Vec::new(),
                };
                (files, self.page(report)?)
            }
        };
        let mut names = Vec::with_capacity(files.len());
        if let Some(dir) = self.out_dir()? {
            for file in files {
                output::write_file(&dir.join(&file.name), &file.bytes)
                    .with_context(|| format!("writing {} into --out", file.name))?;
                names.push(file.name);
            }
        }
        if let (Some(path), Some(page)) = (&self.to.html, page) {
            output::write_file(path, page.as_bytes())
                .with_context(|| format!("writing --html {}", path.display()))?;
        }
        Ok(names)
    }

    /// The page of `report`, when `--html` asks for one.
    fn page(&self, report: Report<'_>) -> Result<Option<String>> {
        match &self.to.html {
            Some(_) => html::render(report),
            None => Ok(None),
        }
    }

    /// `--out`, made now when missing; `None` when the command has none.
    fn out_dir(&mut self) -> Result<Option<PathBuf>> {
        let Some(dir) = self.to.out.clone() else {
            return Ok(None);
        };
        if !self.out_made {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("creating --out {}", dir.display()))?;
            self.out_made = true;
        }
        Ok(Some(dir))
    }

    /// Saves the report so far after a step (a test, a trial): a file is rewritten whole
    /// so that an interruption loses nothing already measured; a stream (`-`, a device, a
    /// FIFO) waits for [`Outputs::save`], so its reader sees one document.
    pub fn save_json_so_far(&mut self, report: &impl serde::Serialize) -> Result<()> {
        match &self.to.json {
            Some(path) if output::is_file(path) => self.write_json(report),
            _ => Ok(()),
        }
    }

    /// Writes the whole report to `--json`, if given.
    fn save_json(&mut self, report: Report<'_>) -> Result<()> {
        match report {
            Report::Run(r) | Report::Merged { report: r, .. } => self.write_json(r),
            Report::Sweep { report, said } => {
                self.write_json(&super::sweep_json::Json::of(report, said))
            }
            Report::Compare { comparison, .. } => self.write_json(comparison),
            Report::Tune(t) => self.write_json(t),
            Report::Charts(_) => Ok(()),
        }
    }

    fn write_json(&mut self, report: &impl serde::Serialize) -> Result<()> {
        let Some(path) = self.to.json.clone() else {
            return Ok(());
        };
        let stdout: &mut dyn Write = match self.stdout.as_deref_mut() {
            Some(stdout) if self.holder == Holder::Json => stdout,
            _ => &mut self.discarded,
        };
        json::write("--json", &path, report, stdout).context("writing results")
    }

    /// Opens `--hdr-log`, if given, and writes its header: a file created at its path, or
    /// standard output, which the log then holds until it is dropped. `comment` is its
    /// first line; interval times count from `started`.
    pub fn open_hdr_log(
        &mut self,
        started: SystemTime,
        comment: &str,
    ) -> Result<Option<HlogWriter<'a>>> {
        let Some(path) = self.to.hdr_log.clone() else {
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
                HlogWriter::create(&path, started, comment)
                    .with_context(|| format!("creating --hdr-log file {}", path.display()))?
            }
        };
        Ok(Some(log))
    }

    /// Creates the interval log `name` in `--out` (a sweep's run), its header written.
    pub fn create_out_log(
        &mut self,
        name: &str,
        started: SystemTime,
        comment: &str,
    ) -> Result<HlogWriter<'static>> {
        let dir = self.out_dir()?.unwrap_or_default();
        let path: &Path = &dir.join(name);
        HlogWriter::create(path, started, comment)
            .with_context(|| format!("creating {} in --out", path.display()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn to(json: Option<&str>, hdr_log: Option<&str>) -> Destinations {
        Destinations {
            json: json.map(PathBuf::from),
            hdr_log: hdr_log.map(PathBuf::from),
            ..Destinations::default()
        }
    }

    #[test]
    fn text_has_standard_output_unless_an_output_is_given_a_dash() {
        let mut out = Vec::new();
        let mut outputs = Outputs::new(&mut out, &to(Some("x.json"), None));
        assert!(outputs.shows_text());
        write!(outputs.text(), "shown").unwrap();
        drop(outputs);
        assert_eq!(out, b"shown");

        let mut out = Vec::new();
        let mut outputs = Outputs::new(&mut out, &to(Some("-"), None));
        assert!(!outputs.shows_text());
        write!(outputs.text(), "hidden").unwrap();
        outputs.save_json_so_far(&1).unwrap();
        outputs.write_json(&serde_json::json!({"a": 1})).unwrap();
        drop(outputs);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["a"], 1);
    }

    #[test]
    fn a_dash_log_takes_standard_output_and_a_json_file_is_rewritten_as_it_goes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let mut out = Vec::new();
        let mut outputs = Outputs::new(&mut out, &to(path.to_str(), Some("-")));
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

    #[test]
    fn out_files_go_into_a_folder_made_on_the_first_save_and_are_named_back() {
        let dir = tempfile::tempdir().unwrap();
        let out_dir = dir.path().join("made/now");
        let chart = crate::export::plot::Chart {
            file_name: "a.svg".into(),
            svg: "<svg/>".into(),
        };
        let mut sink = Vec::new();
        let destinations = Destinations {
            out: Some(out_dir.clone()),
            ..Destinations::default()
        };
        let mut outputs = Outputs::new(&mut sink, &destinations);
        let names = outputs
            .save(Report::Charts(std::slice::from_ref(&chart)))
            .unwrap();
        assert_eq!(names, ["a.svg"]);
        assert_eq!(std::fs::read(out_dir.join("a.svg")).unwrap(), b"<svg/>\n");
        drop(outputs);
        assert!(sink.is_empty());
    }
}
