//! Build script: records the git revision the binary was built from, when it is built
//! from a checkout, for `tailrate --version`.

use std::process::Command;

fn main() {
    let version = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(rev) => format!("{} ({rev})", env!("CARGO_PKG_VERSION")),
        None => env!("CARGO_PKG_VERSION").to_string(),
    };
    println!("cargo:rustc-env=TAILRATE_VERSION={version}");
    // A commit moves the branch HEAD points at; a checkout changes HEAD itself.
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(head) = std::fs::read_to_string(".git/HEAD") {
        println!("cargo:rerun-if-changed=.git/HEAD");
        if let Some(branch) = head.trim().strip_prefix("ref: ") {
            println!("cargo:rerun-if-changed=.git/{branch}");
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
