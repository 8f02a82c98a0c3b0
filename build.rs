//! Build script: records the git revision the binary was built from, when it is built
//! from a checkout, for `tailrate --version`.

use std::process::Command;

fn main() {
    let version = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(rev) => format!("{} ({rev})", env!("CARGO_PKG_VERSION")),
        None => env!("CARGO_PKG_VERSION").to_string(),
    };
    println!("cargo:rustc-env=TAILRATE_VERSION={version}");
    // A commit moves the branch HEAD points at; a checkout changes HEAD itself. Their
    // paths come from git, so a worktree (whose .git is a file) is watched too.
    println!("cargo:rerun-if-changed=build.rs");
    let mut watched = vec!["HEAD".to_string()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

/// The trimmed output of `git ARGS`, or `None` outside a checkout or without git.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}
