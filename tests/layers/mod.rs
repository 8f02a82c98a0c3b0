//! The layer order of ARCHITECTURE.md, kept by a test: every `src/**/*.rs` is read, its
//! imports inside the crate are collected (`use` declarations, and paths in code that
//! start with `crate::`, `super::`, `self::`, a child module or a name a `use` brought
//! in; `tailrate::` in `main.rs`), each file stands on the floor of its top-level module,
//! and the test fails on an import that runs back up the floors, and on files that import
//! each other in a circle. A path is followed through `use` and `pub use` to the file
//! that defines its name, so a `mod.rs` that re-exports a child's type is not taken for
//! its home; a `pub use` ties its file to the one it names only when the file's own code
//! names it too.
//!
//! A module's `mod.rs` is its face, and the files inside the module are its parts: a part
//! may use what the face defines (its shared types, as Rust's privacy intends), and the
//! face may use and hand on what its parts define, so an import between a file and the
//! `mod.rs` of a module that holds it is no part of a circle. Every other pair of files
//! (siblings, cousins, other modules) imports one way.
//!
//! Test code is left out (a `#[cfg(test)]` item, and the files of a `#[cfg(test)]`
//! module): a unit test may build its input through a higher floor. Read as text, the
//! check cannot see: paths inside strings (`#[serde(default = "...")]`) and
//! comments (intra-doc links); names a macro builds; a method called on a value
//! (`report.response()` names no module, so an inherent `impl` of a low type in a high
//! module is invisible); modules placed by `#[path]`; a name a glob import brought into
//! a module that another file then imports from it (counted as that module's own file).

mod graph;
mod lex;
mod read;

use std::path::Path;

use read::Crate;

/// The floors, top down: a file may import from its own floor and the floors under it.
/// ARCHITECTURE.md draws the same order; change both together.
const FLOORS: &[&[&str]] = &[
    &["main"],
    &["app", "sweep", "tune", "compare", "merge", "reread"],
    &["export"],
    &["judge", "host"],
    &["report"],
    &["config"],
    &["stats", "cli"],
    &["drive"],
    &["workload"],
    &["net"],
    &[
        "resp", "record", "units", "text", "output", "input", "progress",
    ],
];

/// Every `src/**/*.rs`, with its path from the repository's root.
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let name = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .to_string();
                out.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    walk(&root.join("src"), root, &mut out);
    out.sort();
    assert!(out.len() > 100, "read only {} files of src/", out.len());
    out
}

#[test]
fn no_import_runs_back_up_the_floors_of_architecture_md() {
    let found = Crate::read(&sources()).arrows_back_up();
    assert!(
        found.is_empty(),
        "{} arrow(s) back up:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn no_files_of_src_import_each_other_in_a_circle() {
    let found = Crate::read(&sources()).circles();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The reader on a planted tree: what it must find, and what it must not take for an
/// import.
#[test]
fn the_check_finds_a_planted_arrow_back_up_and_a_planted_circle() {
    let tree = |files: &[(&str, &str)]| -> Crate {
        let sources: Vec<(String, String)> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        Crate::read(&sources)
    };
    let clean = [
        (
            "src/lib.rs",
            "pub mod export; pub mod report; pub mod stats;",
        ),
        (
            "src/report/mod.rs",
            "//! Not `crate::export::x` in a comment.\nmod run;\nmod sweep;\n\
             pub use run::Run;\npub use sweep::Step;\nuse crate::stats::pooled;\n\
             const S: &str = \"crate::export::y\";\nfn f() -> char { '\"' }\n\
             #[cfg(test)]\npub(crate) mod fixtures;",
        ),
        (
            "src/report/run.rs",
            "pub struct Run;\n#[cfg(test)]\nmod tests {\n    use crate::export::g;\n}",
        ),
        (
            "src/report/sweep.rs",
            "use super::Run;\npub struct Step(Run);",
        ),
        ("src/stats/mod.rs", "pub mod pooled;"),
        ("src/stats/pooled.rs", "pub fn p() {}"),
        (
            "src/export/mod.rs",
            "use crate::report::Step;\nfn g() { crate::stats::pooled::p(); }",
        ),
        (
            "src/main.rs",
            "use tailrate::export;\nfn main() { tailrate::report::Run; }",
        ),
        ("src/report/fixtures.rs", "use crate::export::g;"),
    ];
    let krate = tree(&clean);
    assert_eq!(krate.arrows_back_up(), Vec::<String>::new());
    // The re-exports in report/mod.rs are followed to run.rs and sweep.rs, so the
    // imports of report::Run and report::Step draw no circle through mod.rs.
    assert_eq!(krate.circles(), Vec::<String>::new());
    let at = |path: &str| krate.files.iter().position(|f| f.path == path).unwrap();
    let edges = krate.edges();
    assert!(edges.contains_key(&(at("src/export/mod.rs"), at("src/report/sweep.rs"))));
    assert!(edges.contains_key(&(at("src/report/sweep.rs"), at("src/report/run.rs"))));
    assert!(edges.contains_key(&(at("src/main.rs"), at("src/report/run.rs"))));

    let mut planted = clean.to_vec();
    planted[3].1 = "use super::Run;\npub struct Step(Run);\nfn h() { super::super::export::g(); }";
    let up = tree(&planted).arrows_back_up();
    assert_eq!(
        up,
        [
            "src/report/sweep.rs:3: report (floor 5 from the top) imports crate::export::g, \
          and export stands above it (floor 3)"
        ]
    );
    let circles = tree(&planted).circles();
    assert_eq!(circles.len(), 1, "{circles:?}");
    for tie in [
        "src/export/mod.rs:1 -> src/report/sweep.rs (crate::report::Step)",
        "src/report/sweep.rs:3 -> src/export/mod.rs (crate::export::g)",
    ] {
        assert!(circles[0].contains(tie), "{}", circles[0]);
    }
    assert!(
        circles[0].starts_with("a circle of 2 files:"),
        "{}",
        circles[0]
    );
    planted.push(("src/gadget.rs", "use crate::units::x;"));
    let strays = tree(&planted).arrows_back_up();
    assert!(
        strays.contains(&"src/gadget.rs: module gadget stands on no floor".to_string()),
        "{strays:?}"
    );
}

/// The calls that write a file, or make a folder for one.
const WRITES: &[&str] = &[
    "write_file(",
    "fs::write(",
    "File::create(",
    "HlogWriter::create(",
    "create_dir_all(",
    "OpenOptions::new(",
];

/// Files that may write one: `output.rs` (how a file is replaced), `export/` (the
/// outputs and the interval log's writer), `config/` (a folder checked to take files
/// before anything runs) and `cli/man.rs` (`tailrate man --out`, pages of the help, no
/// report).
fn may_write(file: &str) -> bool {
    file == "src/output.rs"
        || file.starts_with("src/export/")
        || file.starts_with("src/config/")
        || file == "src/cli/man.rs"
}

/// `file:line: code` of every call in `sources` that writes a file outside the files that
/// may; test code (a `tests.rs`, and from the first `#[cfg(test)]` on) and comments left
/// out.
fn writes_outside_the_outputs(sources: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    let checked = sources
        .iter()
        .filter(|(f, _)| !may_write(f) && !f.ends_with("/tests.rs"));
    for (file, text) in checked {
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            let line = line.trim();
            if !line.starts_with("//") && WRITES.iter().any(|w| line.contains(w)) {
                found.push(format!("{file}:{}: {line}", n + 1));
            }
        }
    }
    found
}

/// No runner (run, sweep, tune, compare, merge, plot, `tailrate report`) encodes or writes
/// a file itself: each hands its report to `export::outputs::Outputs`.
#[test]
fn no_runner_writes_a_file_itself_and_a_planted_write_is_found() {
    let found = writes_outside_the_outputs(&sources());
    assert!(
        found.is_empty(),
        "written outside export/:\n{}",
        found.join("\n")
    );
    let planted = [
        (
            "src/sweep/mod.rs".to_string(),
            "fn f() {\n    // output::write_file(p, b) in a comment\n    crate::output::write_file(p, b)?;\n}\n#[cfg(test)]\nmod tests { fn g() { std::fs::write(p, b); } }".to_string(),
        ),
        (
            "src/export/outputs.rs".to_string(),
            "fn f() { output::write_file(p, b)?; }".to_string(),
        ),
    ];
    assert_eq!(
        writes_outside_the_outputs(&planted),
        ["src/sweep/mod.rs:3: crate::output::write_file(p, b)?;"]
    );
}
